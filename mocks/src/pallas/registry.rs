//! The registry of the mock Pallas (seed 000 §1): `GET /.well-known/mcp/server.json`, plain
//! HTTP on its own port, listing the agents of the current phase of its schedule; and the
//! journal of every request, the registry's and every agent's.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use serde_json::{Value, json};

use super::spec::{PallasAgentSpec, RegistryPhaseSpec};
use super::{Fault, PallasShared};
use crate::common::now_rfc3339;
use crate::journal::PallasJournalEntry;
use crate::redact::redacted_header_map;

/// The registry's path.
pub const SERVER_JSON_PATH: &str = "/.well-known/mcp/server.json";

/// The `$schema` of every entry.
pub const SERVER_SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's routes: the list (journaled), the journal and its reset (not journaled).
pub(crate) fn router(shared: Arc<PallasShared>) -> Router {
    let listed = Router::new()
        .route(SERVER_JSON_PATH, get(server_json))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            journal,
        ))
        .with_state(shared.clone());
    Router::new()
        .route("/__mock/journal", get(journal_handler))
        .route("/__mock/reset", post(reset_handler))
        .with_state(shared)
        .merge(listed)
}

async fn not_found() -> StatusCode {
    StatusCode::NOT_FOUND
}

async fn journal_handler(State(shared): State<Arc<PallasShared>>) -> Response {
    axum::Json(shared.journal.snapshot()).into_response()
}

async fn reset_handler(State(shared): State<Arc<PallasShared>>) -> StatusCode {
    shared.reset();
    StatusCode::NO_CONTENT
}

/// Journals a registry request (agent absent) with the status and fault it got.
async fn journal(State(shared): State<Arc<PallasShared>>, req: Request, next: Next) -> Response {
    let ticket = shared.journal.push(PallasJournalEntry {
        time: now_rfc3339(),
        agent: None,
        method: req.method().as_str().to_owned(),
        path: req
            .uri()
            .path_and_query()
            .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned()),
        headers: redacted_header_map(req.headers()),
        jsonrpc_method: None,
        progress_token: None,
        tool: None,
        arguments: None,
        session_id: None,
        status: None,
        fault: None,
        answered_session_id: None,
        finished: None,
    });
    let resp = next.run(req).await;
    let status = resp.status().as_u16();
    let fault = resp.extensions().get::<Fault>().copied();
    shared.journal.update(ticket, |e| {
        e.status = Some(status);
        e.fault = fault.map(|f| f.as_str().to_owned());
    });
    resp
}

async fn server_json(State(shared): State<Arc<PallasShared>>) -> Response {
    let all = RegistryPhaseSpec::default();
    let phase = shared.registry.call().map_or(&all, |(_, p)| p);
    if let Some(d) = phase.latency {
        tokio::select! {
            () = tokio::time::sleep(d) => {}
            () = shared.ct.cancelled() => {}
        }
    }
    if let Some(status) = phase.status {
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (
            code,
            axum::Json(
                json!({"error": format!("mock Pallas registry answers {status} (scripted)")}),
            ),
        )
            .into_response();
        r.extensions_mut().insert(Fault::RegistryStatus);
        return r;
    }
    let listed = crate::common::lock(&shared.listed).clone();
    let keys: Vec<&String> = match listed.as_ref().or(phase.agents.as_ref()) {
        Some(listed) => listed.iter().collect(),
        None => shared.spec.agents.keys().collect(),
    };
    let servers: Vec<Value> = keys
        .into_iter()
        .filter_map(|k| {
            let spec = shared.spec.agents.get(k)?;
            let url = shared.agent_urls.get(k)?;
            Some(entry(&shared, k, spec, url))
        })
        .collect();
    axum::Json(json!({ "servers": servers })).into_response()
}

/// The `type: sse` remote `sse_remote_first` lists for an agent at `url` (its `…/mcp` made
/// `…/sse`): a URL on the agent's port that serves no MCP.
pub fn sse_remote_url(url: &str) -> String {
    url.strip_suffix("/mcp")
        .map_or_else(|| format!("{url}/sse"), |base| format!("{base}/sse"))
}

/// Seed 001's registry name: `{namespace}/{slug}`, the slug the key with `_` made `-`.
pub fn registry_name(namespace: &str, key: &str) -> String {
    format!("{namespace}/{}", key.replace('_', "-"))
}

/// Python's `str.title()`, seed 001's default title: each word's first letter upper-cased.
pub fn default_title(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut after_letter = false;
    for c in key.chars() {
        if after_letter {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        after_letter = c.is_alphabetic();
    }
    out
}

/// The description of an agent that declares none.
pub(crate) fn default_description(key: &str) -> String {
    format!("Mock Pallas agent {key}")
}

fn entry(shared: &PallasShared, key: &str, spec: &PallasAgentSpec, url: &str) -> Value {
    let mut server = json!({
        "$schema": SERVER_SCHEMA_URL,
        "name": registry_name(&shared.spec.namespace, key),
        "title": spec.title.clone().unwrap_or_else(|| default_title(key)),
        "description": spec.description.clone().unwrap_or_else(|| default_description(key)),
        "version": spec.version.clone().unwrap_or_else(|| shared.spec.version.clone()),
    });
    if let Some(obj) = server.as_object_mut() {
        if !spec.icons.is_empty() {
            obj.insert("icons".to_owned(), json!(spec.icons));
        }
        let mut remotes = Vec::new();
        if spec.sse_remote_first {
            remotes.push(json!({"type": "sse", "url": sse_remote_url(url)}));
        }
        remotes.push(json!({"type": "streamable-http", "url": url}));
        obj.insert("remotes".to_owned(), Value::Array(remotes));
        if let Some(c) = &spec.capabilities {
            obj.insert("capabilities".to_owned(), json!(c));
        }
    }
    json!({
        "server": server,
        "_meta": {
            "io.modelcontextprotocol.registry/official": {
                "status": "active",
                "updatedAt": shared.updated_at,
                "isLatest": true
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_titles_follow_seed_001() {
        assert_eq!(
            registry_name("com.example.project", "tech_research"),
            "com.example.project/tech-research"
        );
        assert_eq!(default_title("tech_research"), "Tech_Research");
        assert_eq!(default_title("jarvis"), "Jarvis");
    }
}
