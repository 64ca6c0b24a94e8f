//! A project session the way mcplocal serves it (seed 002 §Agents): one MCP endpoint per project
//! (`/projects/<project>/mcp`) whose `tools/list` holds the tools of the project's upstream MCP
//! servers (as `<server>__<tool>`) and, per agent, the agents plugin's virtual server
//! `agent-<name>` with its one tool `chat` (`agent-<name>__chat`, described by the agent's own
//! description). An upstream server literally named `agent-<x>` keeps its tools and the agent
//! `x` is not registered (§Troubleshooting, namespace collision). Calling an upstream tool is
//! forwarded to its server; calling an agent's `chat` runs the agent's chat turn.

use serde_json::{Map, Value, json};

use super::chat;
use super::{AgentRow, Mcpd};
use crate::packs::jsonrpc::{self, RpcError, code};
use crate::packs::upstream::McpClient;

/// What a tool of the session leads to.
pub(super) enum Route {
    /// An upstream server's tool: (server URL, tool name).
    Upstream(String, String),
    /// An agent's virtual `chat` tool.
    Agent(Box<AgentRow>),
    /// A tool that answers without doing anything (defect `extra-virtual-tool`).
    Inert,
}

/// The tools of the project session: (declaration, route), in `tools/list` order.
pub(super) async fn tools(m: &Mcpd) -> Vec<(Value, Route)> {
    let agents = m.store().agents.clone();
    let overriding = m.defects.on("collision-overrides-server");
    let mut out = Vec::new();
    for t in super::upstream_tools::upstream_tools(m).await {
        let shadowed = t
            .server
            .strip_prefix("agent-")
            .is_some_and(|x| agents.iter().any(|a| a.name == x));
        if overriding && shadowed {
            continue;
        }
        let mut decl = t.decl;
        if let Some(o) = decl.as_object_mut() {
            o.insert("name".into(), json!(format!("{}__{}", t.server, t.name)));
        }
        out.push((decl, Route::Upstream(t.url, t.name)));
    }
    for agent in agents {
        let server = if m.defects.on("virtual-server-unprefixed") {
            agent.name.clone()
        } else {
            format!("agent-{}", agent.name)
        };
        if m.servers.contains_key(&format!("agent-{}", agent.name)) && !overriding {
            // The collision: the upstream server keeps its name, the agent is skipped.
            continue;
        }
        let description = if m.defects.on("chat-tool-generic-description") {
            format!("Chat with agent {}", agent.name)
        } else {
            agent.description.clone()
        };
        out.push((
            json!({"name": format!("{server}__chat"), "description": description,
                "inputSchema": {"type": "object", "properties": {
                    "message": {"type": "string", "description": "What to ask the agent"},
                    "threadId": {"type": "string", "description": "Continue this thread"}},
                    "required": ["message"]}}),
            Route::Agent(Box::new(agent.clone())),
        ));
        if m.defects.on("extra-virtual-tool") {
            out.push((
                json!({"name": format!("{server}__threads"), "description": "List threads",
                    "inputSchema": {"type": "object"}}),
                Route::Inert,
            ));
        }
    }
    out
}

/// `tools/call` in the project session.
pub(super) async fn call(m: &Mcpd, params: &Value) -> Result<Value, RpcError> {
    let (name, args) = jsonrpc::tool_call(params)?;
    let listed = tools(m).await;
    let Some((_, route)) = listed
        .into_iter()
        .find(|(d, _)| d.get("name").and_then(Value::as_str) == Some(name.as_str()))
    else {
        return Err(RpcError::new(
            code::INVALID_PARAMS,
            format!("Unknown tool: {name}"),
        ));
    };
    match route {
        Route::Inert => Ok(jsonrpc::text_result("")),
        Route::Upstream(url, tool) => {
            let mut c = McpClient::connect(&m.http, &url, None)
                .await
                .map_err(|e| RpcError::new(code::INTERNAL, e))?;
            let r = c
                .request("tools/call", json!({"name": tool, "arguments": args}))
                .await;
            c.close().await;
            r.map_err(|e| RpcError::new(code::INTERNAL, e))
        }
        Route::Agent(agent) => {
            let Some(message) = args.get("message").and_then(Value::as_str) else {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    "Invalid params: message is required",
                ));
            };
            if m.defects.on("virtual-chat-echoes") {
                return Ok(jsonrpc::text_result(message));
            }
            let mut body = Map::new();
            body.insert("message".into(), json!(message));
            if let Some(t) = args.get("threadId") {
                body.insert("threadId".into(), t.clone());
            }
            let req = chat::ChatRequest::parse(&Value::Object(body))
                .map_err(|e| RpcError::new(code::INVALID_PARAMS, e))?;
            Ok(match chat::run(m, &agent, req, "mcp", None).await {
                Ok(done) => jsonrpc::text_result(&done.text),
                Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
            })
        }
    }
}
