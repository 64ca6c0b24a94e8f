//! What the defects of issue 21 remember between requests: the previous turn's bearer and the
//! first progress token. Forgotten by [`super::set`].

use std::sync::Mutex;

use crate::settings::Secret;

/// `bearer-previous-turn`: (the latest inbound bearer, the one before it).
static PREVIOUS_BEARER: Mutex<(Option<Secret>, Option<Secret>)> = Mutex::new((None, None));
/// `progress-token-stale`: the first progress token a `tools/call` carried.
static FIRST_PROGRESS_TOKEN: Mutex<Option<serde_json::Value>> = Mutex::new(None);

/// Forgets everything remembered.
pub(super) fn forget() {
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
