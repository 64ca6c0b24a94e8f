//! What the seventh set of contract mutants (`qx-…`) remembers from the configuration or needs
//! besides: the `default_model` of the configuration loaded last, which provider base URLs were
//! written with a trailing slash, a URL joined the way Python's
//! `urljoin` joins it and a connection check bounded on its own.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use crate::settings::ModelRef;

/// The `default_model` of the configuration loaded last (`None`: none configured).
static DEFAULT_MODEL: Mutex<Option<ModelRef>> = Mutex::new(None);
/// `qx-models-url-via-urljoin`: provider base URLs (trailing slash removed) written with one.
static SLASHED_BASE_URLS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// What the configuration just loaded says `default_model` is.
pub fn remember_default_model(model: Option<ModelRef>) {
    if let Ok(mut slot) = DEFAULT_MODEL.lock() {
        *slot = model;
    }
}

/// The `default_model` of the configuration loaded last.
pub fn default_model() -> Option<ModelRef> {
    DEFAULT_MODEL.lock().ok()?.clone()
}

/// Whether `fastagent.config.yaml` names a `default_model` (`qx-dotless-default-model-aborts-startup`).
pub fn has_default_model() -> bool {
    default_model().is_some()
}

/// `qx-models-url-via-urljoin`: whether the provider base URL `base_url` was written with a
/// trailing slash (`written` as configured, before the slash is removed).
pub fn remember_base_url(written: &str) {
    let trimmed = written.trim_end_matches('/').to_owned();
    if let Ok(mut slashed) = SLASHED_BASE_URLS.lock() {
        if written.ends_with('/') {
            slashed.insert(trimmed);
        } else {
            slashed.remove(&trimmed);
        }
    }
}

/// `qx-models-url-via-urljoin`: `urllib.parse.urljoin(base_url, path)` of the base URL as it was
/// written: without a trailing slash its last path segment is replaced (`…/v1` → `…/models`).
pub fn urljoin(base_url: &str, path: &str) -> String {
    let trimmed = base_url.trim_end_matches('/');
    let slashed = SLASHED_BASE_URLS
        .lock()
        .is_ok_and(|slashed| slashed.contains(trimmed));
    let base = if slashed {
        format!("{trimmed}/")
    } else {
        trimmed.to_owned()
    };
    reqwest::Url::parse(&base)
        .and_then(|url| url.join(path))
        .map_or_else(|_| format!("{trimmed}/{path}"), |url| url.to_string())
}

/// `qx-probe-timeout-connect-only`: a TCP connection to the host of `url` within `timeout` (the
/// only phase `httpx.Timeout(None, connect=3.0)` bounds).
pub async fn connect_within(url: &str, timeout: Duration) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|error| format!("invalid URL: {error}"))?;
    let host = parsed
        .host_str()
        .map(|host| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned()
        })
        .ok_or_else(|| "URL without a host".to_owned())?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| "URL without a port".to_owned())?;
    match tokio::time::timeout(
        timeout,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(_)) => Err("connection refused or failed".to_owned()),
        Err(_) => Err("connect timed out".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urljoin_replaces_the_last_segment_of_a_base_without_slash() {
        assert_eq!(
            urljoin("http://my-llm-server:8080/v1", "models"),
            "http://my-llm-server:8080/models"
        );
        assert_eq!(
            urljoin("https://api.openai.com/v1", "models"),
            "https://api.openai.com/models"
        );
        remember_base_url("http://slashed.example:8080/v1/");
        assert_eq!(
            urljoin("http://slashed.example:8080/v1", "models"),
            "http://slashed.example:8080/v1/models"
        );
    }
}
