//! Recording a downstream MCP server (Streamable HTTP, JSON or SSE answers): its `initialize`
//! identity, its `tools/list`, and each tool's results by arguments.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use super::proxy::{Answer, forward, read_body, tee};
use super::{Shared, sse};
use crate::spec::{McpMockSpec, RecordedCallSpec, RecordedErrorSpec, ToolResultSpec, ToolSpec};

/// A tool as listed, with its recorded calls.
#[derive(Debug, Default)]
struct ToolRecording {
    description: Option<String>,
    input_schema: Option<Value>,
    calls: Vec<RecordedCallSpec>,
}

/// What one MCP server has recorded.
#[derive(Debug, Default)]
pub(crate) struct McpRecording {
    server_name: Option<String>,
    server_version: Option<String>,
    instructions: Option<String>,
    /// In listing order (then first-call order for tools called but never listed).
    tools: Vec<(String, ToolRecording)>,
}

impl McpRecording {
    pub(crate) fn calls(&self) -> usize {
        self.tools.iter().map(|(_, t)| t.calls.len()).sum()
    }

    fn tool(&mut self, name: &str) -> &mut ToolRecording {
        let i = match self.tools.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.tools.push((name.to_owned(), ToolRecording::default()));
                self.tools.len() - 1
            }
        };
        &mut self.tools[i].1
    }

    pub(crate) fn to_spec(&self) -> McpMockSpec {
        McpMockSpec {
            server_name: self.server_name.clone(),
            server_version: self.server_version.clone(),
            instructions: self.instructions.clone(),
            tools: self
                .tools
                .iter()
                .map(|(name, t)| ToolSpec {
                    name: name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    result: ToolResultSpec::Recorded(t.calls.clone()),
                    delay: None,
                    until_called: None,
                    progress: None,
                })
                .collect(),
            ..McpMockSpec::default()
        }
    }

    /// Records one answered JSON-RPC request.
    fn record(&mut self, method: &str, params: Option<&Value>, answer: &Value) {
        let result = answer.get("result");
        match method {
            "initialize" => {
                let Some(r) = result else { return };
                let info = |k: &str| {
                    r.pointer(&format!("/serverInfo/{k}"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                self.server_name = info("name");
                self.server_version = info("version");
                self.instructions = r
                    .get("instructions")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            "tools/list" => {
                let Some(tools) = result
                    .and_then(|r| r.get("tools"))
                    .and_then(Value::as_array)
                else {
                    return;
                };
                for t in tools {
                    let Some(name) = t.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let rec = self.tool(name);
                    rec.description = t
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    rec.input_schema = t.get("inputSchema").filter(|s| s.is_object()).cloned();
                }
            }
            "tools/call" => {
                let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
                    return;
                };
                let arguments = params
                    .and_then(|p| p.get("arguments"))
                    .filter(|a| !a.is_null())
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let error = answer.get("error").map(|e| RecordedErrorSpec {
                    code: e
                        .get("code")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok())
                        .unwrap_or(-32603),
                    message: e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    data: e.get("data").cloned(),
                });
                if result.is_none() && error.is_none() {
                    return;
                }
                let tool = self.tool(name);
                // The first answer to the same arguments is the one replayed.
                if tool.calls.iter().all(|c| c.arguments != arguments) {
                    tool.calls.push(RecordedCallSpec {
                        arguments,
                        result: result.cloned(),
                        error,
                    });
                }
            }
            _ => {}
        }
    }
}

#[derive(Clone)]
struct Ctx {
    shared: Arc<Shared>,
    name: String,
    url: String,
}

pub(crate) fn router(shared: Arc<Shared>, name: String, url: String) -> Router {
    Router::new()
        .fallback(handle)
        .with_state(Ctx { shared, name, url })
}

async fn handle(State(ctx): State<Ctx>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    if parts.uri.path().trim_end_matches('/') != "/mcp" {
        return (StatusCode::NOT_FOUND, "the recorder serves MCP at /mcp").into_response();
    }
    let body = match read_body(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    ctx.shared.note_secrets(&parts.headers);
    // The requests this POST carries that get an answer: (id, method, params).
    let requests: Vec<(Value, String, Option<Value>)> = if parts.method == http::Method::POST {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Array(a)) => a.iter().filter_map(request_of).collect(),
            Ok(v) => request_of(&v).into_iter().collect(),
            Err(_) => Vec::new(),
        }
    } else {
        Vec::new()
    };
    let url = match parts.uri.query() {
        Some(q) => format!("{}?{q}", ctx.url),
        None => ctx.url.clone(),
    };
    let resp = match forward(&ctx.shared, parts.method, &url, &parts.headers, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let keep = !requests.is_empty();
    tee(&ctx.shared.clone(), resp, keep, move |answer| {
        let messages = messages_of(&answer);
        ctx.shared.update(|rec| {
            let Some(m) = rec.mcps.get_mut(&ctx.name) else {
                return;
            };
            for (id, method, params) in &requests {
                if let Some(reply) = messages.iter().find(|msg| {
                    msg.get("id") == Some(id)
                        && (msg.get("result").is_some() || msg.get("error").is_some())
                }) {
                    m.record(method, params.as_ref(), reply);
                }
            }
        });
    })
}

fn request_of(v: &Value) -> Option<(Value, String, Option<Value>)> {
    let id = v.get("id").filter(|i| !i.is_null())?.clone();
    let method = v.get("method")?.as_str()?.to_owned();
    Some((id, method, v.get("params").cloned()))
}

/// The JSON-RPC messages of an answer: a JSON body (one message or a batch) or the data of each
/// SSE event.
fn messages_of(answer: &Answer) -> Vec<Value> {
    if answer.status != 200 {
        return Vec::new();
    }
    let Ok(text) = std::str::from_utf8(&answer.body) else {
        return Vec::new();
    };
    let values: Vec<Value> = if answer.is_sse() {
        sse::data(text)
            .iter()
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    } else {
        serde_json::from_str(text).into_iter().collect()
    };
    values
        .into_iter()
        .flat_map(|v| match v {
            Value::Array(a) => a,
            v => vec![v],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_list_and_calls_become_the_mock_spec() {
        let mut m = McpRecording::default();
        m.record(
            "initialize",
            None,
            &json!({"result": {"serverInfo": {"name": "Argos", "version": "1.2"},
                               "instructions": "be nice"}}),
        );
        m.record(
            "tools/list",
            None,
            &json!({"result": {"tools": [{"name": "search", "description": "d",
                                          "inputSchema": {"type": "object"}}]}}),
        );
        let ok = json!({"content": [{"type": "text", "text": "R1"}]});
        m.record(
            "tools/call",
            Some(&json!({"name": "search", "arguments": {"q": 1}})),
            &json!({"result": ok}),
        );
        m.record(
            "tools/call",
            Some(&json!({"name": "search", "arguments": {"q": 1}})),
            &json!({"result": {"content": []}}),
        );
        m.record(
            "tools/call",
            Some(&json!({"name": "other"})),
            &json!({"error": {"code": -32001, "message": "no"}}),
        );
        let spec = m.to_spec();
        assert_eq!(spec.server_name.as_deref(), Some("Argos"));
        assert_eq!(spec.server_version.as_deref(), Some("1.2"));
        assert_eq!(spec.instructions.as_deref(), Some("be nice"));
        assert_eq!(spec.tools.len(), 2);
        let ToolResultSpec::Recorded(calls) = &spec.tools[0].result else {
            panic!("{:?}", spec.tools[0].result);
        };
        assert_eq!(
            calls.len(),
            1,
            "the first answer to the same arguments is kept"
        );
        assert_eq!(calls[0].result.as_ref(), Some(&ok));
        let ToolResultSpec::Recorded(calls) = &spec.tools[1].result else {
            panic!("{:?}", spec.tools[1].result);
        };
        assert_eq!(calls[0].arguments, json!({}));
        assert_eq!(calls[0].error.as_ref().map(|e| e.code), Some(-32001));
    }
}
