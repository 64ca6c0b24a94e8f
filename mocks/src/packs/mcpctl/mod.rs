//! mcpctl agents (seed 002): mcpd's agent HTTP API — CRUD, chat (JSON or SSE), threads and their
//! replay, RBAC by bearer token — and mcplocal's project session (`/projects/<project>/mcp`,
//! see [`session`]) into which every agent is registered as the virtual server `agent-<name>`
//! with one tool `chat` whose description is the agent's description.
//!
//! Bearer tokens of the fixture: `admin-token` (everything), `viewer-token` (`view:agents`),
//! `runner-token` (`view:agents`, `run:agents:reviewer`), `wildcard-token` (`view:agents`,
//! `run:agents`), `member-token` (`view:projects:<project>`).

mod api;
mod chat;
mod session;
mod upstream_tools;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::jsonrpc::{self, McpHandler, RpcCall, RpcError, Sessions, code};
use super::upstream::http_client;
use super::{Defects, PackSpec};

/// Defects of the mcpctl mock: name → the rule it breaks.
pub(crate) const DEFECTS: &[(&str, &str)] = &[
    (
        "duplicate-name-replaces",
        "creating an agent under a taken name replaces the existing agent",
    ),
    (
        "chat-tool-generic-description",
        "the `chat` tool's description is generic, not the agent's",
    ),
    (
        "extra-virtual-tool",
        "the virtual server `agent-<name>` lists a second tool beside `chat`",
    ),
    (
        "virtual-server-unprefixed",
        "the virtual server is named `<name>`, not `agent-<name>`",
    ),
    (
        "collision-overrides-server",
        "an agent shadows a project server literally named `agent-<name>`",
    ),
    (
        "virtual-chat-echoes",
        "the virtual `chat` tool answers the message back without running the agent",
    ),
    (
        "no-accel-header",
        "the chat SSE response lacks `X-Accel-Buffering: no`",
    ),
    ("no-done", "the chat SSE stream ends without `data: [DONE]`"),
    (
        "final-before-text",
        "the `final` chunk is sent before the last `text` chunk",
    ),
    (
        "tool-result-unnamed",
        "`tool_result` chunks lack `toolName`",
    ),
    (
        "loop-cap-off-by-one",
        "the tool loop runs 13 iterations instead of 12",
    ),
    (
        "tools-not-namespaced",
        "project tools are offered to the model without the `<server>__` prefix",
    ),
    (
        "tool-call-id-dropped",
        "tool turns are persisted without `toolCallId`",
    ),
    (
        "turn-index-repeats",
        "tool turns reuse the assistant turn's `turnIndex`",
    ),
    (
        "pending-left-on-error",
        "a failed chat leaves its in-flight rows `pending`",
    ),
    (
        "params-precedence-reversed",
        "agent defaultParams win over the request",
    ),
    (
        "null-not-clearing",
        "a `null` parameter in the request does not clear the default",
    ),
    (
        "system-append-ignored",
        "`systemAppend` is not added to the system block",
    ),
    (
        "messages-merged-with-history",
        "`messages` is merged with the thread history instead of replacing it",
    ),
    (
        "allowlist-ignored",
        "`tools_allowlist` does not restrict the tools offered",
    ),
    (
        "project-member-can-run",
        "project members may chat with project agents without run:agents",
    ),
    (
        "run-wildcard-ignored",
        "`run:agents` does not grant `run:agents:<name>`",
    ),
    (
        "threads-without-run",
        "threads can be listed without `run:agents:<name>`",
    ),
    (
        "system-override-appended",
        "`systemOverride` is appended to the agent's system prompt instead of replacing it",
    ),
    (
        "edit-with-view",
        "updating an agent needs only `view:agents`",
    ),
    (
        "create-with-view",
        "creating an agent needs only `view:agents`",
    ),
    (
        "delete-with-view",
        "deleting an agent needs only `view:agents`",
    ),
    (
        "list-needs-edit",
        "listing agents needs `edit:agents`, not `view:agents`",
    ),
    (
        "replay-needs-edit",
        "replaying a thread needs `edit:agents`, not `view:agents`",
    ),
    (
        "project-list-with-view",
        "the project-scoped agent list needs `view:agents`, not `view:projects:<p>`",
    ),
    (
        "delete-keeps-threads",
        "deleting an agent keeps its threads and their messages",
    ),
    (
        "history-keeps-error-rows",
        "`error` rows are replayed to the model on the next turn",
    ),
];

/// Bearer token → (user, permissions).
const TOKENS: &[(&str, &str, &[&str])] = &[
    ("admin-token", "admin", &["*"]),
    ("viewer-token", "viewer", &["view:agents"]),
    (
        "runner-token",
        "runner",
        &["view:agents", "run:agents:reviewer"],
    ),
    ("wildcard-token", "wildcard", &["view:agents", "run:agents"]),
    ("member-token", "member", &["view:projects:{project}"]),
];

/// The tool loop's cap.
const LOOP_CAP: usize = 12;

#[derive(Debug, Clone)]
struct AgentRow {
    id: String,
    name: String,
    description: String,
    system_prompt: String,
    llm: String,
    project: Option<String>,
    default_params: Map<String, Value>,
    extras: Value,
    proxy_model_name: Option<String>,
    owner: String,
    version: u64,
    created_at: String,
    updated_at: String,
}

impl AgentRow {
    fn to_json(&self) -> Value {
        json!({"id": self.id, "name": self.name, "description": self.description,
            "systemPrompt": self.system_prompt, "llm": {"name": self.llm},
            "project": self.project.as_ref().map(|p| json!({"name": p})),
            "proxyModelName": self.proxy_model_name, "defaultParams": self.default_params,
            "extras": self.extras, "ownerId": self.owner, "version": self.version,
            "createdAt": self.created_at, "updatedAt": self.updated_at})
    }
}

#[derive(Debug, Clone)]
struct ThreadRow {
    id: String,
    agent_id: String,
    owner: String,
    title: String,
    last_turn_at: Option<String>,
    created_at: String,
}

impl ThreadRow {
    fn to_json(&self) -> Value {
        json!({"id": self.id, "agentId": self.agent_id, "ownerId": self.owner,
            "title": self.title, "lastTurnAt": self.last_turn_at,
            "createdAt": self.created_at, "updatedAt": self.last_turn_at.as_ref().unwrap_or(&self.created_at)})
    }
}

#[derive(Debug, Clone)]
struct MessageRow {
    id: String,
    thread_id: String,
    turn_index: u64,
    role: &'static str,
    content: String,
    tool_calls: Option<Value>,
    tool_call_id: Option<String>,
    status: &'static str,
    created_at: String,
}

impl MessageRow {
    fn to_json(&self) -> Value {
        json!({"id": self.id, "threadId": self.thread_id, "turnIndex": self.turn_index,
            "role": self.role, "content": self.content, "toolCalls": self.tool_calls,
            "toolCallId": self.tool_call_id, "status": self.status, "createdAt": self.created_at})
    }
}

#[derive(Debug, Default)]
struct Store {
    agents: Vec<AgentRow>,
    threads: Vec<ThreadRow>,
    messages: Vec<MessageRow>,
}

struct Mcpd {
    defects: Defects,
    llm: Option<String>,
    http: reqwest::Client,
    project: String,
    servers: BTreeMap<String, String>,
    sessions: Sessions,
    store: Mutex<Store>,
}

impl Mcpd {
    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(crate) fn router(spec: &PackSpec, defects: Defects) -> Router {
    let m = Arc::new(Mcpd {
        defects,
        llm: spec.llm.clone(),
        http: http_client(spec.upstream_ca.as_deref()),
        project: spec.project.clone().unwrap_or_else(|| "dev".to_owned()),
        servers: spec.servers.clone(),
        sessions: Sessions::default(),
        store: Mutex::new(Store::default()),
    });
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(json!({"status": "ok"})) }),
        )
        .route("/api/v1/agents", get(api::list).post(api::create))
        .route(
            "/api/v1/agents/{id}",
            get(api::describe).put(api::update).delete(api::remove),
        )
        .route("/api/v1/agents/{name}/chat", post(chat::handler))
        .route(
            "/api/v1/agents/{name}/threads",
            get(api::list_threads).post(api::create_thread),
        )
        .route("/api/v1/threads/{id}/messages", get(api::replay))
        .route("/api/v1/projects/{p}/agents", get(api::project_agents))
        .route(
            "/projects/{project}/mcp",
            post(vmcp_post)
                .delete(vmcp_delete)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .fallback(|| async { api::error(StatusCode::NOT_FOUND, "Route not found") })
        .with_state(m)
}

async fn vmcp_post(
    State(m): State<Arc<Mcpd>>,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    jsonrpc::post(m.clone(), &m.sessions, project, headers, body).await
}

async fn vmcp_delete(State(m): State<Arc<Mcpd>>, headers: HeaderMap) -> Response {
    jsonrpc::delete(&m.sessions, &headers).into_response()
}

impl McpHandler for Mcpd {
    fn server_name(&self, scope: &str) -> Option<String> {
        (scope == self.project).then(|| format!("mcplocal-{scope}"))
    }

    fn capabilities(&self) -> Value {
        json!({"tools": {}})
    }

    fn handle(self: Arc<Self>, call: RpcCall) -> BoxFuture<'static, Result<Value, RpcError>> {
        async move {
            if call.scope != self.project {
                return Err(RpcError::new(
                    code::INVALID_REQUEST,
                    format!("no project `{}` here", call.scope),
                ));
            }
            match call.method.as_str() {
                "tools/list" => {
                    let tools = session::tools(&self).await;
                    Ok(json!({"tools": tools.into_iter().map(|(d, _)| d).collect::<Vec<_>>()}))
                }
                "tools/call" => session::call(&self, &call.params).await,
                m => Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!("Method not found: {m}"),
                )),
            }
        }
        .boxed()
    }
}
