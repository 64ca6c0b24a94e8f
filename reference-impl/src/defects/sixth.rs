//! What the sixth set of contract mutants (`px-…`) remembers from the configuration or needs
//! besides: each agent's model as written (provider prefix and options included), a client that
//! does not follow redirects and the flattening of a history into one transcript.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{PromptMessage, Role};

/// `px-capabilities-model-keeps-provider-prefix`: agent key → its model string as written.
static RAW_MODELS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// What the configuration just loaded says: each agent's model string as written
/// (`openai.my-model-name`), `${VAR}` expanded.
pub fn remember_raw_models(models: BTreeMap<String, String>) {
    if let Ok(mut slot) = RAW_MODELS.lock() {
        *slot = models;
    }
}

/// `px-capabilities-model-keeps-provider-prefix`: the model string of `agent` as written.
pub fn raw_model(agent: &str) -> Option<String> {
    RAW_MODELS.lock().ok()?.get(agent).cloned()
}

/// `px-probe-url-trailing-slash-stripped`: an httpx-like client with redirects off, so that a
/// `3xx` answer is the answer.
pub fn no_redirect_client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            crate::net::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(5))
                .no_proxy()
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// `px-probe-url-trailing-slash-stripped`: the configured URL with its trailing slashes removed
/// (`url.rstrip("/")`).
pub fn without_trailing_slash(url: &str) -> String {
    url.trim_end_matches('/').to_owned()
}

/// `px-history-prompt-one-transcript-message`: `role: text` lines, one per message.
pub fn transcript(messages: &[PromptMessage]) -> String {
    messages
        .iter()
        .map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let text = match serde_json::to_value(&message.content) {
                Ok(serde_json::Value::Object(content)) => match content.get("text") {
                    Some(serde_json::Value::String(text)) => text.clone(),
                    _ => serde_json::Value::Object(content).to_string(),
                },
                Ok(other) => other.to_string(),
                Err(_) => String::new(),
            };
            format!("{role}: {text}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_slash_is_stripped() {
        assert_eq!(
            without_trailing_slash("https://mnemosyne.example/mcp/"),
            "https://mnemosyne.example/mcp"
        );
        assert_eq!(without_trailing_slash("http://h/mcp"), "http://h/mcp");
    }
}
