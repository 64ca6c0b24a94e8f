//! McpAgenticServer (seed 004): `bridge_health`, `agents_discover`, the `sessions_*` tools and
//! `tasks_delegate` over an in-process and a worker executor, with the seed's resolution order,
//! default agent rules, session affinity, provider metadata and `BridgeError` kinds and messages.
//! Agents answer through an LLM, the way a deployment shows who answered: in-process agents through
//! `llm`, worker agents through `llms.worker`, a multi-provider agent through its session's
//! provider's LLM (`llms.<provider>`, the Anthropic Messages API for `anthropic`) with that
//! provider's first model.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

mod data;

pub(crate) use data::{DEFECTS, FIXTURES};
use data::{provider_model, providers, tool_schema};

use super::jsonrpc::{self, McpHandler, RpcCall, RpcError, Sessions, code};
use super::upstream::{anthropic_message, chat_completion, http_client};
use super::{Defects, PackSpec};

const TOOLS: &[&str] = &[
    "bridge_health",
    "agents_discover",
    "sessions_create",
    "sessions_prompt",
    "sessions_status",
    "sessions_close",
    "sessions_cancel",
    "tasks_delegate",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exec {
    InProcess,
    Worker,
}

#[derive(Debug, Clone)]
struct Agent {
    id: &'static str,
    capabilities: &'static [&'static str],
    providers: bool,
}

#[derive(Debug, Clone)]
struct Session {
    agent: String,
    exec: Exec,
    provider: Option<String>,
    status: &'static str,
}

struct Bridge {
    defects: Defects,
    llm: Option<String>,
    /// Per provider (`openai`, `anthropic`, `google-gemini`) and for the workers (`worker`).
    llms: BTreeMap<String, String>,
    http: reqwest::Client,
    sessions: Sessions,
    in_process: Vec<Agent>,
    workers: Vec<Agent>,
    default_agent: Option<String>,
    /// Sessions per executor.
    state: Mutex<HashMap<String, Session>>,
}

pub(crate) fn router(spec: &PackSpec, defects: Defects) -> Result<Router, String> {
    let in_process = vec![
        Agent {
            id: "coder",
            capabilities: &["code-analysis", "debugging"],
            providers: false,
        },
        Agent {
            id: "shared",
            capabilities: &["general"],
            providers: false,
        },
        Agent {
            id: "multi-provider-agent",
            capabilities: &["general"],
            providers: true,
        },
    ];
    let workers = vec![
        Agent {
            id: "shared",
            capabilities: &["general", "remote"],
            providers: false,
        },
        Agent {
            id: "reviewer",
            capabilities: &["code-review"],
            providers: false,
        },
    ];
    let fixture = spec.fixture.as_deref().unwrap_or("default");
    let (in_process, workers, default_agent) = match fixture.split_once('=') {
        Some(("default-agent", id)) => (in_process, workers, Some(id.to_owned())),
        _ => match fixture {
            "default" => (in_process, workers, None),
            "workers-only" => (Vec::new(), workers, None),
            "empty" => (Vec::new(), Vec::new(), None),
            f => return Err(format!("unknown agentic-server fixture `{f}`")),
        },
    };
    let b = Arc::new(Bridge {
        defects,
        llm: spec.llm.clone(),
        llms: spec.llms.clone(),
        http: http_client(spec.upstream_ca.as_deref()),
        sessions: Sessions::default(),
        in_process,
        workers,
        default_agent,
        state: Mutex::new(HashMap::new()),
    });
    Ok(Router::new()
        .route(
            "/mcp",
            post(mcp_post)
                .delete(mcp_delete)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .with_state(b))
}

async fn mcp_post(State(b): State<Arc<Bridge>>, headers: HeaderMap, body: Bytes) -> Response {
    jsonrpc::post(b.clone(), &b.sessions, String::new(), headers, body).await
}

async fn mcp_delete(State(b): State<Arc<Bridge>>, headers: HeaderMap) -> Response {
    jsonrpc::delete(&b.sessions, &headers).into_response()
}

/// A `BridgeError` as a tool error result.
#[derive(Debug)]
struct BridgeError {
    kind: &'static str,
    message: String,
}

impl BridgeError {
    fn config(m: impl Into<String>) -> Self {
        Self {
            kind: "config",
            message: m.into(),
        }
    }
    fn upstream(m: impl Into<String>) -> Self {
        Self {
            kind: "upstream",
            message: m.into(),
        }
    }
    fn internal(m: impl Into<String>) -> Self {
        Self {
            kind: "internal",
            message: m.into(),
        }
    }
}

impl McpHandler for Bridge {
    fn server_name(&self, scope: &str) -> Option<String> {
        scope.is_empty().then(|| "mcp-agentic-server".to_owned())
    }

    fn capabilities(&self) -> Value {
        json!({"tools": {}})
    }

    fn handle(self: Arc<Self>, call: RpcCall) -> BoxFuture<'static, Result<Value, RpcError>> {
        async move {
            match call.method.as_str() {
                "tools/list" => Ok(json!({"tools": TOOLS.iter().map(|t| json!({
                    "name": t, "description": format!("McpAgenticServer `{t}`"),
                    "inputSchema": tool_schema(t)})).collect::<Vec<_>>()})),
                "tools/call" => {
                    let (name, args) = jsonrpc::tool_call(&call.params)?;
                    if !TOOLS.contains(&name.as_str()) {
                        return Err(RpcError::new(
                            code::INVALID_PARAMS,
                            format!("Unknown tool: {name}"),
                        ));
                    }
                    Ok(match self.call_tool(&name, &args).await {
                        Ok(v) => jsonrpc::json_text_result(&v, false),
                        Err(e) => {
                            if self.defects.on("routing-failure-drops-sessions") {
                                self.state().clear();
                            }
                            jsonrpc::json_text_result(
                                &json!({"error": {"type": e.kind, "message": e.message}}),
                                true,
                            )
                        }
                    })
                }
                m => Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!("Method not found: {m}"),
                )),
            }
        }
        .boxed()
    }
}

fn arg<'a>(args: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    args.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

impl Bridge {
    fn state(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Executors in resolution order.
    fn order(&self) -> [(Exec, &Vec<Agent>); 2] {
        if self.defects.on("workers-win") {
            [
                (Exec::Worker, &self.workers),
                (Exec::InProcess, &self.in_process),
            ]
        } else {
            [
                (Exec::InProcess, &self.in_process),
                (Exec::Worker, &self.workers),
            ]
        }
    }

    fn resolve(&self, id: &str) -> Option<(Exec, &Agent)> {
        self.order()
            .into_iter()
            .find_map(|(e, list)| list.iter().find(|a| a.id == id).map(|a| (e, a)))
    }

    /// Every agent once, the winning executor's entry for an id in both.
    fn discover(&self) -> Vec<(Exec, &Agent)> {
        let mut out: Vec<(Exec, &Agent)> = Vec::new();
        for (e, list) in self.order() {
            for a in list {
                if !out.iter().any(|(_, x)| x.id == a.id) {
                    out.push((e, a));
                }
            }
        }
        out
    }

    fn info(&self, a: &Agent) -> Value {
        let status = if self.defects.on("status-not-ready") {
            "available"
        } else {
            "ready"
        };
        let mut v = json!({"id": a.id, "capabilities": a.capabilities, "status": status});
        if a.providers {
            let mut list = providers();
            if !self.defects.on("provider-kind-missing")
                && let Some(items) = list.as_array_mut()
            {
                for p in items {
                    if p.get("kind").is_none() {
                        p["kind"] = json!("llm");
                    }
                }
            }
            if self.defects.on("provider-capabilities-empty")
                && let Some(items) = list.as_array_mut()
            {
                for p in items {
                    if p.get("capabilities").is_none() {
                        p["capabilities"] = json!({});
                    }
                }
            }
            v["providers"] = list;
        } else if self.defects.on("providers-empty-array") {
            v["providers"] = json!([]);
        }
        v
    }

    /// The agent a session or task goes to when none is named.
    fn default_for(&self) -> Result<(Exec, &Agent), BridgeError> {
        if let Some(id) = &self.default_agent
            && !self.defects.on("default-agent-ignored")
        {
            return self.resolve(id).ok_or_else(|| self.not_found(id));
        }
        let first = if self.defects.on("default-agent-last") {
            self.in_process.last()
        } else {
            self.in_process.first()
        };
        if let Some(a) = first {
            return Ok((Exec::InProcess, a));
        }
        if self.defects.on("workers-only-fails") && !self.workers.is_empty() {
            return Err(BridgeError::config("No agents registered"));
        }
        self.workers
            .first()
            .map(|a| (Exec::Worker, a))
            .ok_or_else(|| {
                BridgeError::config(if self.defects.on("no-agents-message") {
                    "No agents available"
                } else {
                    "No agents registered"
                })
            })
    }

    fn not_found(&self, id: &str) -> BridgeError {
        let m = format!("Agent not found: {id}");
        if self.defects.on("agent-not-found-kind") {
            BridgeError::internal(m)
        } else {
            BridgeError::upstream(m)
        }
    }

    fn session(&self, args: &Map<String, Value>) -> Result<(String, Session), BridgeError> {
        let id = arg(args, "sessionId").unwrap_or_default().to_owned();
        let lost = |s: &Session| self.defects.on("worker-sessions-lost") && s.exec == Exec::Worker;
        match self.state().get(&id) {
            Some(s) if !lost(s) => Ok((id, s.clone())),
            _ => Err(BridgeError::upstream(
                if self.defects.on("session-not-found-message") {
                    format!("Unknown session: {id}")
                } else {
                    format!("Session not found: {id}")
                },
            )),
        }
    }

    fn create(&self, agent: Option<&str>, metadata: Option<&Value>) -> Result<Value, BridgeError> {
        let (exec, a) = match agent {
            Some(id) => self.resolve(id).ok_or_else(|| self.not_found(id))?,
            None => self.default_for()?,
        };
        let mut provider = None;
        if a.providers {
            let requested = metadata
                .and_then(|m| m.get("provider"))
                .and_then(Value::as_str);
            if let Some(p) = requested {
                let known = providers()
                    .as_array()
                    .is_some_and(|l| l.iter().any(|x| x.get("id") == Some(&json!(p))));
                if !known && !self.defects.on("unknown-provider-accepted") {
                    return Err(BridgeError::config(format!(
                        "Provider \"{p}\" is not registered in the ProviderRegistry"
                    )));
                }
            }
            provider = Some(match requested {
                Some(p) if !self.defects.on("provider-ignored") => p.to_owned(),
                None if self.defects.on("default-provider-ignored") => "anthropic".to_owned(),
                _ => "openai".to_owned(),
            });
        }
        let id = jsonrpc::random_id();
        self.state().insert(
            id.clone(),
            Session {
                agent: a.id.to_owned(),
                exec,
                provider,
                status: "active",
            },
        );
        Ok(json!({"sessionId": id, "agentId": a.id, "status": "active"}))
    }

    async fn prompt(&self, s: &Session, prompt: &str) -> Result<String, BridgeError> {
        let system = format!("You are {}.", s.agent);
        let routed = |k: &str| self.llms.get(k).or(self.llm.as_ref());
        let (base, model) = match (&s.provider, s.exec) {
            (Some(p), _) => (
                routed(p),
                provider_model(p).unwrap_or_else(|| "mock-model".to_owned()),
            ),
            (None, Exec::Worker) => (routed("worker"), "mock-model".to_owned()),
            (None, Exec::InProcess) => (self.llm.as_ref(), "mock-model".to_owned()),
        };
        let Some(base) = base else {
            return Ok(prompt.to_owned());
        };
        if s.provider.as_deref() == Some("anthropic") {
            return anthropic_message(&self.http, base, &model, &system, prompt)
                .await
                .map_err(BridgeError::upstream);
        }
        let body = json!({"model": model, "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt}]});
        Ok(chat_completion(&self.http, base, &body)
            .await
            .map_err(BridgeError::upstream)?
            .text)
    }

    async fn call_tool(&self, name: &str, args: &Map<String, Value>) -> Result<Value, BridgeError> {
        match name {
            "bridge_health" => Ok(json!({"status": "ok", "executors": {
                "inProcess": {"started": true, "agents": self.in_process.len()},
                "worker": {"started": true, "agents": self.workers.len()}}})),
            "agents_discover" => {
                let cap = arg(args, "capability");
                let list: Vec<Value> = self
                    .discover()
                    .into_iter()
                    .filter(|(_, a)| match cap {
                        None => true,
                        Some(_) if self.defects.on("capability-filter-ignored") => true,
                        Some(c) if self.defects.on("capability-substring") => {
                            a.capabilities.iter().any(|x| x.contains(c))
                        }
                        Some(c) => a.capabilities.contains(&c),
                    })
                    .map(|(_, a)| self.info(a))
                    .collect();
                Ok(Value::Array(list))
            }
            "sessions_create" => self.create(arg(args, "agentId"), args.get("metadata")),
            "sessions_prompt" => {
                let (id, s) = self.session(args)?;
                let text = self
                    .prompt(&s, arg(args, "prompt").unwrap_or_default())
                    .await?;
                Ok(json!({"sessionId": id, "agentId": s.agent, "text": text}))
            }
            "sessions_status" => {
                let (id, s) = self.session(args)?;
                Ok(json!({"sessionId": id, "agentId": s.agent, "status": s.status}))
            }
            "sessions_close" => {
                let (id, _) = self.session(args)?;
                self.state().remove(&id);
                Ok(json!({"sessionId": id, "status": "closed"}))
            }
            "sessions_cancel" => {
                let (id, _) = self.session(args)?;
                if !self.defects.on("cancel-noop")
                    && let Some(s) = self.state().get_mut(&id)
                {
                    s.status = "cancelled";
                }
                Ok(json!({"sessionId": id, "status": "cancelled"}))
            }
            _ => {
                let agent = match (arg(args, "agentId"), arg(args, "capability")) {
                    (Some(a), _) => Some(a.to_owned()),
                    (None, Some(c)) if !self.defects.on("delegate-ignores-capability") => {
                        let found = self
                            .discover()
                            .into_iter()
                            .find(|(_, a)| a.capabilities.contains(&c))
                            .map(|(_, a)| a.id.to_owned());
                        Some(found.ok_or_else(|| {
                            BridgeError::upstream(format!("Agent not found: capability {c}"))
                        })?)
                    }
                    _ => None,
                };
                let created = self.create(agent.as_deref(), None)?;
                let sid = created["sessionId"].as_str().unwrap_or_default().to_owned();
                let s = self
                    .state()
                    .get(&sid)
                    .cloned()
                    .ok_or_else(|| BridgeError::internal("Executor not started"))?;
                let text = self
                    .prompt(&s, arg(args, "prompt").unwrap_or_default())
                    .await?;
                Ok(json!({"taskId": jsonrpc::random_id(), "sessionId": sid,
                    "agentId": s.agent, "status": "completed", "result": text}))
            }
        }
    }
}
