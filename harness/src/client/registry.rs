//! Fetching the registry document (`GET {registry}/.well-known/mcp/server.json`, seed 000 §1).

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::{ClientError, WireClient};

/// The well-known path of the registry document.
pub const REGISTRY_PATH: &str = "/.well-known/mcp/server.json";

/// What a registry fetch returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegistryFetch {
    /// The URL fetched.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// Response `Content-Type`.
    pub content_type: Option<String>,
    /// The body parsed as JSON, when it is JSON.
    pub body: Option<Value>,
    /// Why the body could not be read as JSON (not UTF-8, not JSON, nested too deep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// The body as text.
    pub text: String,
    /// Milliseconds until the body was read.
    pub elapsed_ms: f64,
}

impl RegistryFetch {
    /// The `servers[].server` objects, in order (empty when the body has none).
    pub fn servers(&self) -> Vec<&Value> {
        self.body
            .as_ref()
            .and_then(|b| b.get("servers"))
            .and_then(Value::as_array)
            .map(|entries| entries.iter().filter_map(|e| e.get("server")).collect())
            .unwrap_or_default()
    }
}

/// The document URL for a registry base URL (as a Daedalus user types it) or a full document
/// URL (kept as is).
pub fn registry_document_url(registry_url: &str) -> String {
    if registry_url.ends_with(REGISTRY_PATH) {
        registry_url.to_owned()
    } else {
        format!("{}{REGISTRY_PATH}", registry_url.trim_end_matches('/'))
    }
}

/// `GET`s the registry document with `Accept: application/json`, recorded under label
/// `registry`. A timeout is an error here: there is nothing partial to judge.
pub async fn fetch_registry(
    client: &WireClient,
    registry_url: &str,
) -> Result<RegistryFetch, ClientError> {
    fetch_registry_with_timeout(client, registry_url, None).await
}

/// [`fetch_registry`] with an explicit deadline.
pub async fn fetch_registry_with_timeout(
    client: &WireClient,
    registry_url: &str,
    timeout: Option<Duration>,
) -> Result<RegistryFetch, ClientError> {
    let url = registry_document_url(registry_url);
    let exchange = client
        .get_bounded(
            "registry",
            &url,
            vec![("accept".to_owned(), "application/json".to_owned())],
            timeout,
            client.limits().registry_bytes(),
        )
        .await?;
    if exchange.timed_out {
        return Err(ClientError::Timeout {
            url,
            after_ms: timeout.unwrap_or(client.default_timeout()).as_millis() as u64,
        });
    }
    let text = exchange.body_text.unwrap_or_default();
    let (body, unreadable) = if text.is_empty() {
        (None, None)
    } else {
        match super::reasons::parse_json(text.as_bytes()) {
            Ok(v) => (Some(v), None),
            Err(reason) => (None, Some(reason)),
        }
    };
    Ok(RegistryFetch {
        url,
        status: exchange.status,
        content_type: exchange.content_type,
        body,
        unreadable,
        text,
        elapsed_ms: exchange.elapsed_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_get_the_well_known_path_and_document_urls_stay() {
        assert_eq!(
            registry_document_url("http://h:1/"),
            "http://h:1/.well-known/mcp/server.json"
        );
        assert_eq!(
            registry_document_url("http://h:1/.well-known/mcp/server.json"),
            "http://h:1/.well-known/mcp/server.json"
        );
    }
}
