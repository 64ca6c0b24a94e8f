//! The `http:` step's client: one request, the answer as step output
//! `{status, content_type, headers, body, text, events, done, elapsed_ms}` — `body` is the parsed
//! JSON (or null), `events` the `data:` payloads of an SSE answer (parsed JSON, or the text),
//! `done` whether a `data: [DONE]` event ended it, and `result_json` the first text block of a
//! JSON-RPC tool result (`body.result.content[0].text`) parsed as JSON, when it is JSON.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::scenario::HttpStep;

/// Why an `http:` step has no URL to request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoTargetUrl {
    /// Neither `url` nor an agent with an endpoint.
    #[error("the step names neither `url` nor a deployed `agent`")]
    Unnamed,
    /// The agent's endpoint is not a URL.
    #[error("agent URL `{base}`: {reason}")]
    AgentUrl {
        /// The agent's endpoint as given.
        base: String,
        /// Why it does not parse (the URL parser's message).
        reason: String,
    },
}

/// Where a step's request goes: its `url`, or `path` on the origin of `agent_url`.
pub fn target_url(step: &HttpStep, agent_url: Option<&str>) -> Result<String, NoTargetUrl> {
    if let Some(u) = &step.url {
        return Ok(u.clone());
    }
    let base = agent_url.ok_or(NoTargetUrl::Unnamed)?;
    let parsed = reqwest::Url::parse(base).map_err(|e| NoTargetUrl::AgentUrl {
        base: base.to_owned(),
        reason: e.to_string(),
    })?;
    let origin = parsed.origin().ascii_serialization();
    let path = step.path.as_deref().unwrap_or("/");
    Ok(format!("{origin}{path}"))
}

/// Parses an SSE body into its `data:` payloads; `true` when a `[DONE]` event was seen.
pub fn sse_events(text: &str) -> (Vec<Value>, bool) {
    let mut events = Vec::new();
    let mut done = false;
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let data: Vec<&str> = block
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        let payload = data.join("\n");
        if payload == "[DONE]" {
            done = true;
            continue;
        }
        events.push(serde_json::from_str(&payload).unwrap_or(Value::String(payload)));
    }
    (events, done)
}

/// The answer to an `http:` step's request.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAnswer {
    /// The URL requested.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` (empty when absent).
    pub content_type: String,
    /// Response headers (lower-case names).
    pub headers: Map<String, Value>,
    /// The body as text.
    pub text: String,
    /// Milliseconds until the body was read.
    pub elapsed_ms: f64,
}

impl HttpAnswer {
    /// The step output: `{url, status, content_type, headers, body, text, events, done,
    /// result_json, elapsed_ms}`.
    pub fn to_json(&self) -> Value {
        let (events, done) = if self.content_type.starts_with("text/event-stream") {
            sse_events(&self.text)
        } else {
            (Vec::new(), false)
        };
        let body = serde_json::from_str::<Value>(&self.text).unwrap_or(Value::Null);
        let result_json = body
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null);
        json!({
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "headers": self.headers,
            "body": body,
            "text": self.text,
            "events": events,
            "done": done,
            "result_json": result_json,
            "elapsed_ms": self.elapsed_ms,
        })
    }
}

/// Sends the request; `Err((message, timed_out))` when no answer was read.
pub async fn send(
    step: &HttpStep,
    url: &str,
    timeout: Duration,
) -> Result<HttpAnswer, (String, bool)> {
    let client = pallas_mocks::http_client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| (e.to_string(), false))?;
    let method = reqwest::Method::from_bytes(step.method.to_ascii_uppercase().as_bytes())
        .map_err(|e| (format!("method `{}`: {e}", step.method), false))?;
    let mut req = client.request(method, url);
    if let Some(j) = &step.json {
        req = req.json(j);
    }
    if let Some(b) = &step.body {
        req = req.body(b.clone());
    }
    if let Some(b) = &step.bearer {
        req = req.bearer_auth(b);
    }
    for (k, v) in &step.headers {
        req = req.header(k, v);
    }
    let t0 = Instant::now();
    let resp = req
        .send()
        .await
        .map_err(|e| (format!("{} {url}: {e}", step.method), e.is_timeout()))?;
    let status = resp.status().as_u16();
    let headers: Map<String, Value> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()),
            )
        })
        .collect();
    let content_type = headers
        .get("content-type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let text = resp
        .text()
        .await
        .map_err(|e| (format!("reading the answer of {url}: {e}"), e.is_timeout()))?;
    Ok(HttpAnswer {
        url: url.to_owned(),
        status,
        content_type,
        headers,
        text,
        elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_split_into_data_payloads_and_done() {
        let (events, done) = sse_events(
            "data: {\"type\":\"text\",\"delta\":\"hi\"}\n\ndata: plain\n\ndata: [DONE]\n\n",
        );
        assert_eq!(
            events,
            vec![json!({"type": "text", "delta": "hi"}), json!("plain")]
        );
        assert!(done);
    }

    #[test]
    fn a_path_resolves_against_the_agent_origin() {
        let step = HttpStep {
            path: Some("/api/v1/agents".into()),
            ..HttpStep::default()
        };
        let url = target_url(&step, Some("http://127.0.0.1:9/mcp/agent-x")).unwrap();
        assert_eq!(url, "http://127.0.0.1:9/api/v1/agents");
    }
}
