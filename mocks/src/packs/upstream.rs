//! What the pack mocks call: an OpenAI-compatible chat-completions endpoint (the mock LLMs) and
//! downstream MCP servers (Streamable HTTP, JSON or SSE answers), over loopback.

use std::time::Duration;

use serde_json::{Value, json};

/// How long one upstream request may take.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A model answer: text, or tool calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct LlmReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
}

/// A loopback HTTP client for the packs; for HTTPS it also trusts `ca` (DER), the CA of the
/// ecosystem's HTTPS mocks.
pub(crate) fn http_client(ca: Option<&[u8]>) -> reqwest::Client {
    let mut builder = crate::http_client::builder().timeout(UPSTREAM_TIMEOUT);
    if let Some(cert) = ca.and_then(|der| reqwest::Certificate::from_der(der).ok()) {
        builder = builder.tls_certs_merge([cert]);
    }
    builder.build().unwrap_or_default()
}

/// `POST {base}/chat/completions` with `body` (non-streaming); the first choice's text or tool calls.
pub(crate) async fn chat_completion(
    http: &reqwest::Client,
    base: &str,
    body: &Value,
) -> Result<LlmReply, String> {
    let url = format!("{}/chat/completions", base.trim_end_matches('/'));
    let resp = http
        .post(&url)
        .bearer_auth("sk-pack-mock")
        .json(body)
        .send()
        .await
        .map_err(|e| format!("LLM request failed: {e}"))?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| format!("LLM answer unreadable: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "LLM answered {}: {}",
            status.as_u16(),
            excerpt(&text)
        ));
    }
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("LLM answer is not JSON: {e}"))?;
    let msg = v
        .pointer("/choices/0/message")
        .ok_or_else(|| "LLM answer has no choices[0].message".to_owned())?;
    let mut reply = LlmReply {
        text: msg
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        tool_calls: Vec::new(),
    };
    for (i, c) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args = c
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("");
        reply.tool_calls.push(ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned),
            name: c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: if args.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(args).unwrap_or_else(|_| json!({}))
            },
        });
    }
    Ok(reply)
}

/// `POST {base}/v1/messages` (the Anthropic Messages API, non-streaming) with `model`, `system`
/// and one user message; the answer's text blocks joined.
pub(crate) async fn anthropic_message(
    http: &reqwest::Client,
    base: &str,
    model: &str,
    system: &str,
    prompt: &str,
) -> Result<String, String> {
    let url = format!("{}/v1/messages", base.trim_end_matches('/'));
    let body = json!({"model": model, "max_tokens": 1024, "system": system,
        "messages": [{"role": "user", "content": prompt}]});
    let resp = http
        .post(&url)
        .header("x-api-key", "sk-pack-mock")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("LLM request failed: {e}"))?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| format!("LLM answer unreadable: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "LLM answered {}: {}",
            status.as_u16(),
            excerpt(&text)
        ));
    }
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("LLM answer is not JSON: {e}"))?;
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| "LLM answer has no content".to_owned())?;
    Ok(blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(""))
}

fn excerpt(s: &str) -> String {
    s.chars().take(200).collect()
}

/// A session with a downstream MCP server.
#[derive(Debug)]
pub(crate) struct McpClient {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    bearer: Option<String>,
    next_id: u64,
}

impl McpClient {
    /// `initialize` + `notifications/initialized`.
    pub(crate) async fn connect(
        http: &reqwest::Client,
        url: &str,
        bearer: Option<String>,
    ) -> Result<McpClient, String> {
        let mut c = McpClient {
            http: http.clone(),
            url: url.to_owned(),
            session: None,
            bearer,
            next_id: 0,
        };
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pallas-mocks-pack", "version": env!("CARGO_PKG_VERSION")}});
        let (_, session) = c
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}),
                0,
            )
            .await?;
        c.session = session;
        c.post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            u64::MAX,
        )
        .await?;
        Ok(c)
    }

    /// One request; its `result` (a JSON-RPC error becomes `Err`).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let (msg, _) = self
            .post(
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
                id,
            )
            .await?;
        let msg = msg.ok_or_else(|| format!("no answer to `{method}`"))?;
        if let Some(e) = msg.get("error") {
            return Err(format!("`{method}` failed: {e}"));
        }
        msg.get("result")
            .cloned()
            .ok_or_else(|| format!("`{method}` answer has no result"))
    }

    /// `DELETE` of the session.
    pub(crate) async fn close(self) {
        if let Some(s) = &self.session {
            let _ = self
                .http
                .delete(&self.url)
                .header("mcp-session-id", s)
                .send()
                .await;
        }
    }

    async fn post(&self, body: Value, id: u64) -> Result<(Option<Value>, Option<String>), String> {
        let mut req = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("MCP request to {} failed: {e}", self.url))?;
        let status = resp.status();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !status.is_success() {
            return Err(format!(
                "MCP server {} answered {}",
                self.url,
                status.as_u16()
            ));
        }
        if id == u64::MAX {
            return Ok((None, session));
        }
        let text = resp
            .text()
            .await
            .map_err(|e| format!("MCP answer unreadable: {e}"))?;
        let found = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m.get("id") == Some(&json!(id)))
        } else {
            serde_json::from_str(&text).ok()
        };
        Ok((found, session))
    }
}
