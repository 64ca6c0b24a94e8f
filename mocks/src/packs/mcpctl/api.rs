//! mcpd's agent HTTP API: bearer → permissions, agent CRUD, threads, replay, project listing.
//! Errors use Fastify's shape `{statusCode, error, message}`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::{AgentRow, Mcpd, TOKENS, ThreadRow};
use crate::common::now_rfc3339;
use crate::packs::jsonrpc::random_id;

/// A Fastify-shaped error: `{statusCode, error, message}`.
#[derive(Debug)]
pub(super) struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.0,
            Json(json!({"statusCode": self.0.as_u16(),
                "error": self.0.canonical_reason().unwrap_or("Error"), "message": self.1})),
        )
            .into_response()
    }
}

fn fail(status: StatusCode, message: &str) -> ApiError {
    ApiError(status, message.to_owned())
}

/// A Fastify-shaped error response.
pub(super) fn error(status: StatusCode, message: &str) -> Response {
    fail(status, message).into_response()
}

/// The caller: user name and permissions.
pub(super) struct Caller {
    pub user: String,
    perms: Vec<String>,
}

impl Caller {
    /// Whether the caller holds `perm` (exactly, by `*`, or by a wildcard prefix such as
    /// `run:agents` for `run:agents:<name>`).
    pub(super) fn can(&self, m: &Mcpd, perm: &str) -> bool {
        self.perms.iter().any(|p| {
            p == "*"
                || p == perm
                || (perm.starts_with(&format!("{p}:"))
                    && !(m.defects.on("run-wildcard-ignored") && p == "run:agents"))
        })
    }

    /// `run:agents:<name>` for an agent (and the project-member defect).
    pub(super) fn can_run(&self, m: &Mcpd, agent: &AgentRow) -> bool {
        self.can(m, &format!("run:agents:{}", agent.name))
            || (m.defects.on("project-member-can-run")
                && agent
                    .project
                    .as_ref()
                    .is_some_and(|p| self.can(m, &format!("view:projects:{p}"))))
    }
}

/// The caller of a request, or 401.
pub(super) fn caller(m: &Mcpd, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| fail(StatusCode::UNAUTHORIZED, "Missing bearer token"))?;
    let (_, user, perms) = TOKENS
        .iter()
        .find(|(t, ..)| *t == token)
        .ok_or_else(|| fail(StatusCode::UNAUTHORIZED, "Invalid bearer token"))?;
    Ok(Caller {
        user: (*user).to_owned(),
        perms: perms
            .iter()
            .map(|p| p.replace("{project}", &m.project))
            .collect(),
    })
}

/// The permission a route needs: `perm`, or `alt` when the named defect is on.
fn needs(m: &Mcpd, defect: &str, perm: &'static str, alt: &'static str) -> &'static str {
    if m.defects.on(defect) { alt } else { perm }
}

fn require(m: &Mcpd, headers: &HeaderMap, perm: &str) -> Result<Caller, ApiError> {
    let c = caller(m, headers)?;
    if c.can(m, perm) {
        Ok(c)
    } else {
        Err(fail(
            StatusCode::FORBIDDEN,
            &format!("Missing permission {perm}"),
        ))
    }
}

fn find(m: &Mcpd, id_or_name: &str) -> Option<AgentRow> {
    m.store()
        .agents
        .iter()
        .find(|a| a.id == id_or_name || a.name == id_or_name)
        .cloned()
}

/// The agent named in the path, and a caller allowed to run it.
pub(super) fn runnable(
    m: &Mcpd,
    headers: &HeaderMap,
    name: &str,
) -> Result<(Caller, AgentRow), ApiError> {
    let c = caller(m, headers)?;
    let agent = find(m, name)
        .ok_or_else(|| fail(StatusCode::NOT_FOUND, &format!("Agent not found: {name}")))?;
    if !c.can_run(m, &agent) {
        return Err(fail(
            StatusCode::FORBIDDEN,
            &format!("Missing permission run:agents:{}", agent.name),
        ));
    }
    Ok((c, agent))
}

fn body_object(body: &Bytes) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(fail(StatusCode::BAD_REQUEST, "body must be a JSON object")),
        Err(e) => Err(fail(
            StatusCode::BAD_REQUEST,
            &format!("Body is not valid JSON: {e}"),
        )),
    }
}

/// `llm: qwen` or `llm: {name: qwen}` (the apply shorthand).
fn name_ref(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("name").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 63
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !n.starts_with('-')
}

fn apply_fields(a: &mut AgentRow, o: &Map<String, Value>) -> Result<(), ApiError> {
    if let Some(d) = o.get("description") {
        a.description = d.as_str().unwrap_or_default().to_owned();
    }
    if let Some(s) = o.get("systemPrompt") {
        a.system_prompt = s.as_str().unwrap_or_default().to_owned();
    }
    if o.contains_key("llm") {
        a.llm = name_ref(o.get("llm"))
            .ok_or_else(|| fail(StatusCode::BAD_REQUEST, "llm must be a name or {name}"))?;
    }
    if o.contains_key("project") {
        a.project = name_ref(o.get("project"));
    }
    if let Some(p) = o.get("defaultParams") {
        a.default_params = match p {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            _ => {
                return Err(fail(
                    StatusCode::BAD_REQUEST,
                    "defaultParams must be an object",
                ));
            }
        };
    }
    if let Some(e) = o.get("extras") {
        a.extras = e.clone();
    }
    if let Some(p) = o.get("proxyModelName") {
        a.proxy_model_name = p.as_str().map(str::to_owned);
    }
    Ok(())
}

pub(super) async fn list(State(m): State<Arc<Mcpd>>, headers: HeaderMap) -> Response {
    if let Err(r) = require(
        &m,
        &headers,
        needs(&m, "list-needs-edit", "view:agents", "edit:agents"),
    ) {
        return r.into_response();
    }
    let list: Vec<Value> = m.store().agents.iter().map(AgentRow::to_json).collect();
    Json(Value::Array(list)).into_response()
}

pub(super) async fn describe(
    State(m): State<Arc<Mcpd>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = require(&m, &headers, "view:agents") {
        return r.into_response();
    }
    match find(&m, &id) {
        Some(a) => Json(a.to_json()).into_response(),
        None => error(StatusCode::NOT_FOUND, &format!("Agent not found: {id}")),
    }
}

pub(super) async fn create(
    State(m): State<Arc<Mcpd>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let c = match require(
        &m,
        &headers,
        needs(&m, "create-with-view", "create:agents", "view:agents"),
    ) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let o = match body_object(&body) {
        Ok(o) => o,
        Err(r) => return r.into_response(),
    };
    let name = o
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !valid_name(&name) {
        return error(
            StatusCode::BAD_REQUEST,
            "name must be lower-case letters, digits and hyphens",
        );
    }
    if name_ref(o.get("llm")).is_none() {
        return error(StatusCode::BAD_REQUEST, "llm is required");
    }
    let now = now_rfc3339();
    let mut a = AgentRow {
        id: random_id(),
        name: name.clone(),
        description: String::new(),
        system_prompt: String::new(),
        llm: String::new(),
        project: None,
        default_params: Map::new(),
        extras: json!({}),
        proxy_model_name: None,
        owner: c.user,
        version: 1,
        created_at: now.clone(),
        updated_at: now,
    };
    if let Err(r) = apply_fields(&mut a, &o) {
        return r.into_response();
    }
    let mut s = m.store();
    if m.defects.on("duplicate-name-replaces") {
        s.agents.retain(|x| x.name != name);
    }
    if s.agents.iter().any(|x| x.name == name) {
        return error(
            StatusCode::CONFLICT,
            &format!("Agent already exists: {name}"),
        );
    }
    s.agents.push(a.clone());
    (StatusCode::CREATED, Json(a.to_json())).into_response()
}

pub(super) async fn update(
    State(m): State<Arc<Mcpd>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let perm = if m.defects.on("edit-with-view") {
        "view:agents"
    } else {
        "edit:agents"
    };
    if let Err(r) = require(&m, &headers, perm) {
        return r.into_response();
    }
    let o = match body_object(&body) {
        Ok(o) => o,
        Err(r) => return r.into_response(),
    };
    let mut s = m.store();
    let Some(a) = s.agents.iter_mut().find(|a| a.id == id || a.name == id) else {
        return error(StatusCode::NOT_FOUND, &format!("Agent not found: {id}"));
    };
    if let Err(r) = apply_fields(a, &o) {
        return r.into_response();
    }
    a.version += 1;
    a.updated_at = now_rfc3339();
    Json(a.to_json()).into_response()
}

pub(super) async fn remove(
    State(m): State<Arc<Mcpd>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = require(
        &m,
        &headers,
        needs(&m, "delete-with-view", "delete:agents", "view:agents"),
    ) {
        return r.into_response();
    }
    let mut s = m.store();
    let Some(pos) = s.agents.iter().position(|a| a.id == id || a.name == id) else {
        return error(StatusCode::NOT_FOUND, &format!("Agent not found: {id}"));
    };
    let agent = s.agents.remove(pos);
    if m.defects.on("delete-keeps-threads") {
        return StatusCode::NO_CONTENT.into_response();
    }
    // Cascade: threads of the agent, messages of those threads.
    let gone: Vec<String> = s
        .threads
        .iter()
        .filter(|t| t.agent_id == agent.id)
        .map(|t| t.id.clone())
        .collect();
    s.threads.retain(|t| t.agent_id != agent.id);
    s.messages.retain(|msg| !gone.contains(&msg.thread_id));
    StatusCode::NO_CONTENT.into_response()
}

pub(super) async fn create_thread(
    State(m): State<Arc<Mcpd>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (c, agent) = match runnable(&m, &headers, &name) {
        Ok(x) => x,
        Err(r) => return r.into_response(),
    };
    let title = if body.is_empty() {
        None
    } else {
        match body_object(&body) {
            Ok(o) => o.get("title").and_then(Value::as_str).map(str::to_owned),
            Err(r) => return r.into_response(),
        }
    };
    let t = new_thread(
        &m,
        &agent,
        &c.user,
        title.as_deref().unwrap_or("New thread"),
    );
    (StatusCode::CREATED, Json(t.to_json())).into_response()
}

/// Creates and stores a thread.
pub(super) fn new_thread(m: &Mcpd, agent: &AgentRow, owner: &str, title: &str) -> ThreadRow {
    let t = ThreadRow {
        id: random_id(),
        agent_id: agent.id.clone(),
        owner: owner.to_owned(),
        title: title.chars().take(80).collect(),
        last_turn_at: None,
        created_at: now_rfc3339(),
    };
    m.store().threads.push(t.clone());
    t
}

pub(super) async fn list_threads(
    State(m): State<Arc<Mcpd>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let agent = if m.defects.on("threads-without-run") {
        if let Err(r) = caller(&m, &headers) {
            return r.into_response();
        }
        match find(&m, &name) {
            Some(a) => a,
            None => return error(StatusCode::NOT_FOUND, &format!("Agent not found: {name}")),
        }
    } else {
        match runnable(&m, &headers, &name) {
            Ok((_, a)) => a,
            Err(r) => return r.into_response(),
        }
    };
    let list: Vec<Value> = m
        .store()
        .threads
        .iter()
        .filter(|t| t.agent_id == agent.id)
        .map(ThreadRow::to_json)
        .collect();
    Json(Value::Array(list)).into_response()
}

pub(super) async fn replay(
    State(m): State<Arc<Mcpd>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = require(
        &m,
        &headers,
        needs(&m, "replay-needs-edit", "view:agents", "edit:agents"),
    ) {
        return r.into_response();
    }
    let s = m.store();
    if !s.threads.iter().any(|t| t.id == id) {
        return error(StatusCode::NOT_FOUND, &format!("Thread not found: {id}"));
    }
    let mut rows: Vec<_> = s.messages.iter().filter(|r| r.thread_id == id).collect();
    rows.sort_by_key(|r| r.turn_index);
    Json(Value::Array(rows.iter().map(|r| r.to_json()).collect())).into_response()
}

pub(super) async fn project_agents(
    State(m): State<Arc<Mcpd>>,
    Path(p): Path<String>,
    headers: HeaderMap,
) -> Response {
    let perm = if m.defects.on("project-list-with-view") {
        "view:agents".to_owned()
    } else {
        format!("view:projects:{p}")
    };
    if let Err(r) = require(&m, &headers, &perm) {
        return r.into_response();
    }
    let list: Vec<Value> = m
        .store()
        .agents
        .iter()
        .filter(|a| a.project.as_deref() == Some(p.as_str()))
        .map(AgentRow::to_json)
        .collect();
    Json(Value::Array(list)).into_response()
}
