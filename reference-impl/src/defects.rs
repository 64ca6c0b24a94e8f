//! Named defects, compiled only with the `defects` cargo feature and chosen at run time with
//! `PALLAS_DEFECTS=name,…`. Each one breaks one rule of the Pallas contract on purpose, so that
//! the conformance checks can be shown to fail when that rule is broken. See `DEFECTS.md`.

use std::sync::{Mutex, RwLock};

use crate::settings::Secret;

mod eighth;
mod fresh;
mod known;
mod misread;
mod own_agent_metrics;
mod remembered;
mod seventh;
mod sixth;
mod stream_gone;
mod transport;
mod yaml_scalar;
pub use eighth::{
    QuietAfterCancel, bearer_required, forget_unset_header_servers, has_unset_header_var,
    health_bearer, json_response_only, namespace_configured, plain_text_line, remember_health,
    remember_namespace_configured, remember_unset_header_server, unhealthy, with_health_bearer,
};
pub use fresh::{
    FreshConfiguration, created_seconds, declared_capabilities, first_token_of,
    model_database_capabilities, openai_env_base_url, openmetrics, project_name, published_bearer,
    raw_server, remember_fresh_configuration,
};
pub use known::KNOWN;
pub use misread::{all_servers, app_name, is_agent, openai_settings, remember_configuration};
pub use own_agent_metrics::own_agent_metrics_only;
pub use remembered::{
    first_progress_token, previous_bearer, tool_seconds_since_last_send, without_dotenv_key,
};
pub use seventh::{
    connect_within, default_model, has_default_model, remember_base_url, remember_default_model,
    urljoin,
};
pub use sixth::{
    no_redirect_client, raw_model, remember_raw_models, transcript, without_trailing_slash,
};
pub use stream_gone::{FatalWhenGone, fatal_when_gone, watch_stream};
pub use transport::transport_defects;
pub use yaml_scalar::{plain_version_value, remember_plain_version};

/// The environment variable holding the active defects, comma separated.
pub const ENV_VAR: &str = "PALLAS_DEFECTS";

/// `PALLAS_DEFECTS` named a defect that does not exist.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{ENV_VAR}: unknown defect `{name}`")]
#[diagnostic(code(pallas::defects::unknown), help("known defects: {known}"))]
pub struct UnknownDefect {
    /// The name as given.
    pub name: String,
    /// Every known name, comma separated.
    pub known: String,
}

static ACTIVE: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());
static FIRST_BEARER: Mutex<Option<Secret>> = Mutex::new(None);
static LAST_INBOUND: Mutex<Option<Secret>> = Mutex::new(None);

/// Whether `name` is a known defect (usable in constant context, so that [`crate::defect!`]
/// rejects a misspelt name at compile time).
pub const fn is_known(name: &str) -> bool {
    let mut i = 0;
    while i < KNOWN.len() {
        if const_eq(KNOWN[i].0, name) {
            return true;
        }
        i += 1;
    }
    false
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Parses `name,name,…` (spaces around names and empty items are ignored).
pub fn parse(spec: &str) -> Result<Vec<&'static str>, UnknownDefect> {
    let mut names = Vec::new();
    for item in spec
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
    {
        let Some((name, _)) = KNOWN.iter().find(|(name, _)| *name == item) else {
            return Err(UnknownDefect {
                name: item.to_owned(),
                known: KNOWN
                    .iter()
                    .map(|(name, _)| *name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if !names.contains(name) {
            names.push(*name);
        }
    }
    Ok(names)
}

/// Makes exactly `names` active (and forgets any bearer a defect remembered).
pub fn set(names: &[&'static str]) {
    if let Ok(mut active) = ACTIVE.write() {
        *active = names.to_vec();
    }
    if let Ok(mut first) = FIRST_BEARER.lock() {
        *first = None;
    }
    if let Ok(mut last) = LAST_INBOUND.lock() {
        *last = None;
    }
    remembered::forget();
    fresh::forget();
    eighth::forget();
}

/// Reads [`ENV_VAR`] once at startup and activates what it names; returns the active names.
pub fn init_from_env() -> Result<Vec<&'static str>, UnknownDefect> {
    let names = parse(&std::env::var(ENV_VAR).unwrap_or_default())?;
    set(&names);
    Ok(names)
}

/// Whether the defect `name` is active.
pub fn active(name: &str) -> bool {
    ACTIVE
        .read()
        .map(|active| active.contains(&name))
        .unwrap_or(false)
}

/// `reuse-first-bearer`: the first inbound bearer ever seen, whatever this request carried.
pub fn first_bearer(inbound: Option<&Secret>) -> Option<Secret> {
    let mut first = FIRST_BEARER.lock().ok()?;
    if first.is_none() {
        first.clone_from(&inbound.cloned());
    }
    first.clone()
}

/// `bearer-to-llm`: remembers the bearer of the request being answered; `probe-with-bearer`:
/// the bearer of the last message call that carried one.
pub fn remember_inbound(inbound: Option<Secret>) {
    if let Ok(mut last) = LAST_INBOUND.lock() {
        *last = inbound;
    }
}

/// `probe-with-bearer`: the bearer remembered by [`remember_inbound`].
pub fn last_inbound() -> Option<Secret> {
    LAST_INBOUND.lock().ok()?.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_known_names_parses_in_order_without_duplicates() {
        let names = parse(" log-bearer, probe-serially,,log-bearer ").unwrap();
        assert_eq!(names, vec!["log-bearer", "probe-serially"]);
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_known_ones() {
        let error = parse("log-bearer,no-such-defect").unwrap_err();
        assert_eq!(error.name, "no-such-defect");
        assert!(error.to_string().contains("no-such-defect"));
        assert!(error.known.contains("bearer-to-all-servers"));
        assert!(error.known.contains("history-empty"));
    }

    #[test]
    fn the_catalog_has_unique_names_each_known_at_compile_time() {
        assert!(KNOWN.len() >= 15);
        for (i, (name, what)) in KNOWN.iter().enumerate() {
            assert!(is_known(name));
            assert!(!what.is_empty());
            assert!(KNOWN[i + 1..].iter().all(|(other, _)| other != name));
        }
        assert!(!is_known("log-bearers"));
    }
}
