//! What the defects of issue 21 remember between requests (the previous turn's bearer and the
//! first progress token, forgotten by [`super::set`]) or look up again (what `.env` set).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::settings::{ProviderSettings, Secret};

/// `bearer-previous-turn`: (the latest inbound bearer, the one before it).
static PREVIOUS_BEARER: Mutex<(Option<Secret>, Option<Secret>)> = Mutex::new((None, None));
/// `progress-token-stale`: the first progress token a `tools/call` carried.
static FIRST_PROGRESS_TOKEN: Mutex<Option<serde_json::Value>> = Mutex::new(None);

/// `send-duration-model-only`: per agent, its downstream seconds at its previous `send_message`.
static TOOL_SECONDS: Mutex<BTreeMap<String, f64>> = Mutex::new(BTreeMap::new());

/// Forgets everything remembered.
pub(super) fn forget() {
    if let Ok(mut seconds) = TOOL_SECONDS.lock() {
        seconds.clear();
    }
    if let Ok(mut previous) = PREVIOUS_BEARER.lock() {
        *previous = (None, None);
    }
    if let Ok(mut first) = FIRST_PROGRESS_TOKEN.lock() {
        *first = None;
    }
}

/// `progress-token-stale`: the first progress token a `tools/call` carried, for every later one.
pub fn first_progress_token(token: serde_json::Value) -> serde_json::Value {
    match FIRST_PROGRESS_TOKEN.lock() {
        Ok(mut first) => first.get_or_insert(token).clone(),
        Err(_) => token,
    }
}

/// `bearer-previous-turn`: for a request with a bearer, the bearer of the previous request that
/// carried a different one (none for the first); a request without a bearer forwards none.
pub fn previous_bearer(inbound: Option<&Secret>) -> Option<Secret> {
    let bearer = inbound?;
    let mut slot = PREVIOUS_BEARER.lock().ok()?;
    if slot.0.as_ref() != Some(bearer) {
        slot.1 = slot.0.replace(bearer.clone());
    }
    slot.1.clone()
}

/// `preflight-before-dotenv`: `settings` as a preflight that ran before `.env` was loaded sees
/// them: without the API key when the process environment sets no variable to it and the working
/// directory's `.env` does.
pub fn without_dotenv_key(settings: &ProviderSettings) -> ProviderSettings {
    let mut seen = settings.clone();
    let Some(key) = settings.api_key.as_ref().map(Secret::expose) else {
        return seen;
    };
    let in_process = std::env::vars().any(|(_, value)| value == key);
    let in_dotenv = dotenvy::from_path_iter(".env")
        .map(|entries| entries.flatten().any(|(_, value)| value == key))
        .unwrap_or(false);
    if in_dotenv && !in_process {
        seen.api_key = None;
    }
    seen
}

/// `send-duration-model-only`: how many of `agent`'s downstream seconds (`now`, a running total)
/// fell since its previous `send_message`, i.e. into the call now ending.
pub fn tool_seconds_since_last_send(agent: &str, now: f64) -> f64 {
    match TOOL_SECONDS.lock() {
        Ok(mut seen) => now - seen.insert(agent.to_owned(), now).unwrap_or(0.0),
        Err(_) => 0.0,
    }
}
