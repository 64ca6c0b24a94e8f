//! Daedalus semantics from seed 000 §1–§3 as plain functions: how a registry entry is read
//! (server id, title, icon, endpoint) and how a health answer gates chat.

use std::fmt::Display;

use serde::Serialize;
use serde_json::Value;

/// The `server_id` Daedalus derives from a registry name: the segment after the last `/`
/// (the whole name when it has none).
pub fn server_id(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The display title: `title` when present and non-empty, else `name`.
pub fn display_title(server: &Value) -> String {
    server
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .or_else(|| server.get("name").and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned()
}

/// The first entry of `icons`, which is the one Daedalus shows.
pub fn first_icon(server: &Value) -> Option<&Value> {
    server.get("icons")?.as_array()?.first()
}

/// The `url` of the first `remotes[]` entry whose `type` is `streamable-http`.
pub fn streamable_http_url(server: &Value) -> Option<&str> {
    server
        .get("remotes")?
        .as_array()?
        .iter()
        .find(|r| r.get("type").and_then(Value::as_str) == Some("streamable-http"))?
        .get("url")?
        .as_str()
}

/// A `get_health` answer (seed 000 §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthReport {
    /// `ok`, `degraded` or `error` (other values are rejected by [`parse_health`]).
    pub status: String,
    /// ISO 8601 time of the check, if given.
    pub timestamp: Option<String>,
    /// Explanation; required unless `ok`.
    pub message: Option<String>,
}

/// Why a `get_health` result is not a valid health answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HealthParseError {
    /// The tool call result is marked `isError: true`.
    #[error("the get_health result is marked isError: {0}")]
    ToolError(String),
    /// Not exactly one text content block.
    #[error("expected exactly one text content block, found {0}")]
    Content(String),
    /// The text is not a JSON object.
    #[error("the text block is not a JSON object: {0}")]
    NotJson(String),
    /// `status` is missing or not one of `ok`, `degraded`, `error`.
    #[error("`status` must be \"ok\", \"degraded\" or \"error\", found {0}")]
    Status(String),
    /// `message` is missing while `status` is not `ok`.
    #[error("`message` is required when status is `{0}`")]
    MissingMessage(String),
    /// `timestamp` or `message` is present but not a string.
    #[error("`{0}` must be a string")]
    FieldType(&'static str),
}

/// Reads a `tools/call` result of `get_health`: one `text` block holding
/// `{status, timestamp?, message?}`, `message` required unless `ok`.
pub fn parse_health(call_result: &Value) -> Result<HealthReport, HealthParseError> {
    let content = call_result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let first_text = content
        .iter()
        .find_map(|c| c.get("text").and_then(Value::as_str));
    if call_result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(HealthParseError::ToolError(
            first_text.unwrap_or_default().to_owned(),
        ));
    }
    let texts: Vec<&Value> = content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .collect();
    if content.len() != 1 || texts.len() != 1 {
        let kinds: Vec<&str> = content
            .iter()
            .map(|c| c.get("type").and_then(Value::as_str).unwrap_or("?"))
            .collect();
        return Err(HealthParseError::Content(format!(
            "{} block(s) [{}]",
            content.len(),
            kinds.join(", ")
        )));
    }
    let text = texts[0].get("text").and_then(Value::as_str).unwrap_or("");
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| HealthParseError::NotJson(format!("{e} in {}", super::excerpt(text))))?;
    let Some(obj) = doc.as_object() else {
        return Err(HealthParseError::NotJson(super::excerpt(text)));
    };
    let status = match obj.get("status") {
        Some(Value::String(s)) if matches!(s.as_str(), "ok" | "degraded" | "error") => s.clone(),
        Some(other) => return Err(HealthParseError::Status(other.to_string())),
        None => return Err(HealthParseError::Status("nothing".into())),
    };
    let string_field = |key: &'static str| match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(HealthParseError::FieldType(key)),
    };
    let timestamp = string_field("timestamp")?;
    let message = string_field("message")?;
    if status != "ok" && message.as_deref().is_none_or(str::is_empty) {
        return Err(HealthParseError::MissingMessage(status));
    }
    Ok(HealthReport {
        status,
        timestamp,
        message,
    })
}

/// What Daedalus does with a message to an agent, given its cached health (seed 000 §3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ChatGate {
    /// `ok`: chat allowed.
    Allowed,
    /// `degraded`: a warning bar with this text, chat allowed.
    AllowedWithWarning(String),
    /// `error`, or the health check failed entirely: the chat endpoint answers HTTP 503.
    Blocked503(String),
}

/// Maps a health answer (or the failure to get one: connection error, timeout, invalid
/// answer) to the chat gate.
pub fn chat_gate<E: Display>(health: Result<&HealthReport, &E>) -> ChatGate {
    match health {
        Ok(report) => match report.status.as_str() {
            "ok" => ChatGate::Allowed,
            "degraded" => ChatGate::AllowedWithWarning(report.message.clone().unwrap_or_default()),
            _ => ChatGate::Blocked503(
                report
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("health status `{}`", report.status)),
            ),
        },
        Err(e) => ChatGate::Blocked503(format!("health check failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text_result(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}], "isError": false})
    }

    #[test]
    fn server_id_is_the_segment_after_the_last_slash() {
        assert_eq!(
            server_id("ca.helu.ouranos/pallas-research"),
            "pallas-research"
        );
        assert_eq!(server_id("a/b/c"), "c");
        assert_eq!(server_id("plain"), "plain");
    }

    #[test]
    fn title_falls_back_to_name_and_first_icon_and_remote_are_picked() {
        let server = json!({
            "name": "ns/agent",
            "icons": [{"src": "a.svg"}, {"src": "b.svg"}],
            "remotes": [{"type": "sse", "url": "http://x/sse"}, {"type": "streamable-http", "url": "http://x/mcp"}]
        });
        assert_eq!(display_title(&server), "ns/agent");
        assert_eq!(first_icon(&server), Some(&json!({"src": "a.svg"})));
        assert_eq!(streamable_http_url(&server), Some("http://x/mcp"));
        assert_eq!(display_title(&json!({"name": "n", "title": "T"})), "T");
    }

    #[test]
    fn degraded_health_without_message_is_rejected() {
        let err = parse_health(&text_result(r#"{"status":"degraded"}"#)).unwrap_err();
        assert_eq!(err, HealthParseError::MissingMessage("degraded".into()));
        let err = parse_health(&text_result(r#"{"status":"fine"}"#)).unwrap_err();
        assert!(matches!(err, HealthParseError::Status(_)));
    }

    #[test]
    fn health_maps_to_the_chat_gate() {
        let ok = parse_health(&text_result(
            r#"{"status":"ok","timestamp":"2026-03-12T15:42:00Z"}"#,
        ))
        .unwrap();
        assert_eq!(chat_gate::<String>(Ok(&ok)), ChatGate::Allowed);
        let degraded =
            parse_health(&text_result(r#"{"status":"degraded","message":"slow"}"#)).unwrap();
        assert_eq!(
            chat_gate::<String>(Ok(&degraded)),
            ChatGate::AllowedWithWarning("slow".into())
        );
        let error = parse_health(&text_result(r#"{"status":"error","message":"down"}"#)).unwrap();
        assert_eq!(
            chat_gate::<String>(Ok(&error)),
            ChatGate::Blocked503("down".into())
        );
        let unreachable = "connection refused".to_owned();
        assert!(
            matches!(chat_gate(Err::<&HealthReport, _>(&unreachable)), ChatGate::Blocked503(m) if m.contains("refused"))
        );
    }
}
