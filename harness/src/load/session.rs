//! One load session on the raw wire: `initialize`, `notifications/initialized`, `tools/call`
//! of the message tool, `DELETE`. Answers may come as JSON or as an SSE stream; either way the
//! JSON-RPC response with the request's id ends the exchange.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{MCP_ACCEPT, SseDecoder};

/// The MCP revision the sessions speak (the session era: `Mcp-Session-Id` and `DELETE`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Why one exchange failed; [`ErrorKind::as_str`] is the key of the error counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The connection could not be made.
    Connect,
    /// No answer within the call timeout.
    Timeout,
    /// The request or the response body broke off.
    Io,
    /// A non-2xx HTTP status.
    Http(u16),
    /// A JSON-RPC error response.
    JsonRpc,
    /// A tool result with `isError: true`.
    ToolError,
    /// The stream or body ended without a JSON-RPC response to the request.
    NoResponse,
    /// The body was neither JSON nor an SSE stream of JSON.
    BadBody,
    /// `initialize` answered without an `Mcp-Session-Id` (and the call needs one).
    NoSession,
}

impl ErrorKind {
    /// Stable name used in the table and the JSON output.
    pub fn as_str(&self) -> String {
        match self {
            ErrorKind::Connect => "connect".into(),
            ErrorKind::Timeout => "timeout".into(),
            ErrorKind::Io => "io".into(),
            ErrorKind::Http(code) => format!("http_{code}"),
            ErrorKind::JsonRpc => "jsonrpc_error".into(),
            ErrorKind::ToolError => "tool_error".into(),
            ErrorKind::NoResponse => "no_response".into(),
            ErrorKind::BadBody => "bad_body".into(),
            ErrorKind::NoSession => "no_session".into(),
        }
    }

    fn from_reqwest(e: &reqwest::Error) -> ErrorKind {
        if e.is_timeout() {
            ErrorKind::Timeout
        } else if e.is_connect() {
            ErrorKind::Connect
        } else {
            ErrorKind::Io
        }
    }
}

/// One MCP session against one endpoint.
#[derive(Debug)]
pub struct Session {
    http: reqwest::Client,
    url: String,
    session_id: Option<String>,
    next_id: u64,
    timeout: Duration,
}

impl Session {
    /// `initialize` then `notifications/initialized`. A server that answers without a session
    /// id (stateless) is accepted: later requests carry no session header and `close` is a no-op.
    pub async fn open(
        http: reqwest::Client,
        url: &str,
        timeout: Duration,
    ) -> Result<Session, ErrorKind> {
        let mut session = Session {
            http,
            url: url.to_owned(),
            session_id: None,
            next_id: 1,
            timeout,
        };
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "pallas-conformance-load", "version": env!("CARGO_PKG_VERSION")}
            }
        });
        let (response, headers) = session.exchange(&body, Some(0)).await?;
        if response.get("error").is_some() {
            return Err(ErrorKind::JsonRpc);
        }
        session.session_id = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.exchange(&note, None).await?;
        Ok(session)
    }

    /// Calls `tool` with `arguments` (e.g. `{"message": …}`); `Ok` only for a result without
    /// `isError`.
    pub async fn call(&mut self, tool: &str, arguments: &Value) -> Result<(), ErrorKind> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        });
        let (response, _) = self.exchange(&body, Some(id)).await?;
        if response.get("error").is_some() {
            return Err(ErrorKind::JsonRpc);
        }
        let Some(result) = response.get("result") else {
            return Err(ErrorKind::BadBody);
        };
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(ErrorKind::ToolError);
        }
        Ok(())
    }

    /// `DELETE` with the session id (nothing for a stateless server). A 405 (the server does
    /// not let clients end sessions) counts as closed.
    pub async fn close(self) -> Result<(), ErrorKind> {
        let Some(id) = &self.session_id else {
            return Ok(());
        };
        let response = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", PROTOCOL_VERSION)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| ErrorKind::from_reqwest(&e))?;
        let status = response.status();
        if status.is_success() || status.as_u16() == 405 {
            Ok(())
        } else {
            Err(ErrorKind::Http(status.as_u16()))
        }
    }

    /// POSTs one message. With `want = Some(id)`, reads the answer (JSON or SSE) until the
    /// response to `id`; with `None` (a notification), expects a 2xx and reads nothing.
    async fn exchange(
        &self,
        body: &Value,
        want: Option<u64>,
    ) -> Result<(Value, reqwest::header::HeaderMap), ErrorKind> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", MCP_ACCEPT)
            .header("content-type", "application/json")
            .timeout(self.timeout)
            .body(body.to_string());
        if let Some(id) = &self.session_id {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", PROTOCOL_VERSION);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| ErrorKind::from_reqwest(&e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ErrorKind::Http(status.as_u16()));
        }
        let headers = response.headers().clone();
        let Some(want) = want else {
            return Ok((Value::Null, headers));
        };
        let is_sse = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let bytes = response
                .bytes()
                .await
                .map_err(|e| ErrorKind::from_reqwest(&e))?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|_| ErrorKind::BadBody)?;
            return match_response(value, want)
                .map(|v| (v, headers))
                .ok_or(ErrorKind::NoResponse);
        }
        let mut decoder = SseDecoder::new();
        loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| ErrorKind::from_reqwest(&e))?;
            let Some(chunk) = chunk else {
                return Err(ErrorKind::NoResponse);
            };
            for event in decoder.push(&chunk) {
                if event.data.is_empty() {
                    continue;
                }
                let Ok(value) = serde_json::from_str::<Value>(&event.data) else {
                    return Err(ErrorKind::BadBody);
                };
                if let Some(v) = match_response(value, want) {
                    return Ok((v, headers));
                }
            }
        }
    }
}

/// The JSON-RPC response to `id` in `value` (a message or a batch).
fn match_response(value: Value, id: u64) -> Option<Value> {
    match value {
        Value::Array(items) => items.into_iter().find_map(|v| match_response(v, id)),
        v if v.get("id").and_then(Value::as_u64) == Some(id)
            && (v.get("result").is_some() || v.get("error").is_some()) =>
        {
            Some(v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_is_found_by_id_in_a_message_or_a_batch() {
        let one = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        assert!(match_response(one.clone(), 3).is_some());
        assert!(match_response(one.clone(), 4).is_none());
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        assert!(match_response(note.clone(), 3).is_none());
        assert!(match_response(json!([note, one]), 3).is_some());
    }

    #[test]
    fn error_kinds_have_stable_names() {
        assert_eq!(ErrorKind::Http(503).as_str(), "http_503");
        assert_eq!(ErrorKind::ToolError.as_str(), "tool_error");
    }
}
