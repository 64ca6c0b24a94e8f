//! What passed through the proxy, written as a scenario: one step per client action (registry
//! fetch, connect, `tools/list`, `get_health`, tool calls with their arguments and progress
//! tokens, prompts, other requests, `DELETE`) and the assertions it observed (status, result
//! shape, health status, progress). Bearers become placeholders (`recorded-bearer-N`, one per
//! distinct token): a recorded token is never written.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::proxy::Recorded;

/// How the scenario is named.
#[derive(Debug, Clone)]
pub struct Naming {
    /// `id`.
    pub id: String,
    /// `title`.
    pub title: String,
    /// The message tool (a call of it with only `message` becomes a `send` step).
    pub message_tool: String,
}

/// The scenario document, as JSON (the YAML is its rendering).
pub fn scenario(recorded: &[Recorded], naming: &Naming) -> Value {
    let mut w = Writer::default();
    for r in recorded {
        match r {
            Recorded::Registry { status, body } => w.registry(*status, body.as_ref()),
            Recorded::Mcp { .. } => w.mcp(r, naming),
        }
    }
    let mut doc = Map::new();
    doc.insert("id".into(), json!(naming.id));
    doc.insert("title".into(), json!(naming.title));
    doc.insert("tags".into(), json!(["recorded"]));
    doc.insert("steps".into(), Value::Array(w.steps));
    doc.insert("checks".into(), Value::Array(w.checks));
    Value::Object(doc)
}

/// The YAML text of the scenario, with a header saying how it was made.
pub fn yaml(doc: &Value) -> Result<String, super::RecordError> {
    let body = serde_saphyr::to_string(doc).map_err(super::RecordError::Yaml)?;
    Ok(format!(
        "# Recorded by `pallas-conformance record`: the steps a client took through the proxy and\n\
         # what the bridge answered. No deployment: run it in attach mode against a running\n\
         # target that serves the same agents, e.g.\n\
         #   pallas-conformance run THIS.yaml --target PROFILE --registry-url URL\n\
         # Bearers are placeholders (recorded-bearer-N): the recorded tokens are not written.\n{body}"
    ))
}

/// `v` with `key` set to `x` when there is one.
fn with(mut v: Value, key: &str, x: &Option<Value>) -> Value {
    if let Some(x) = x {
        v[key] = x.clone();
    }
    v
}

/// A `tools/call` as a step: `health` (`get_health`), `send` (the message tool with only a
/// message), else `call` with its arguments. Returns (name prefix, action, action key).
fn tool_call(
    conn: &str,
    params: &Value,
    naming: &Naming,
    bearer: &Option<Value>,
    token: &Option<Value>,
) -> (&'static str, Value, &'static str) {
    let tool = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let args = params.get("arguments").cloned();
    let only_message = args
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|o| o.len() == 1 && o.get("message").is_some_and(Value::is_string));
    if tool == "get_health" {
        let a = with(json!({"agent": conn}), "bearer", bearer);
        ("health", with(a, "progress_token", token), "health")
    } else if tool == naming.message_tool && only_message {
        let message = args.as_ref().and_then(|a| a.get("message")).cloned();
        let a = json!({"agent": conn, "message": message});
        let a = with(with(a, "bearer", bearer), "progress_token", token);
        ("send", a, "send")
    } else {
        let a = with(json!({"agent": conn, "tool": tool}), "arguments", &args);
        let a = with(with(a, "bearer", bearer), "progress_token", token);
        ("call", a, "call")
    }
}

#[derive(Default)]
struct Writer {
    steps: Vec<Value>,
    checks: Vec<Value>,
    /// Session id → connection name.
    sessions: BTreeMap<String, String>,
    /// Connections per agent so far.
    per_agent: BTreeMap<String, usize>,
    /// Recorded bearer → placeholder.
    bearers: BTreeMap<String, String>,
    counter: BTreeMap<String, usize>,
}

impl Writer {
    fn name(&mut self, kind: &str) -> String {
        let n = self.counter.entry(kind.to_owned()).or_default();
        *n += 1;
        format!("{kind}-{n}")
    }

    fn bearer(&mut self, token: Option<&String>) -> Option<String> {
        let token = token?;
        let next = self.bearers.len() + 1;
        Some(
            self.bearers
                .entry(token.clone())
                .or_insert_with(|| format!("recorded-bearer-{next}"))
                .clone(),
        )
    }

    fn expect(&mut self, step: &str, what: &str, output: Value) {
        let mut output = output;
        output["step"] = json!(step);
        self.checks.push(json!({
            "title": format!("as recorded: `{step}` {what}"),
            "level": "MUST",
            "assert": {"output": output},
        }));
    }

    fn registry(&mut self, status: u16, body: Option<&Value>) {
        let name = self.name("registry");
        self.steps.push(json!({"name": name, "registry": {}}));
        self.expect(
            &name,
            &format!("answered HTTP {status}"),
            json!({"path": "$.status", "equals": status}),
        );
        if let Some(n) = body
            .and_then(|b| b.get("servers"))
            .and_then(Value::as_array)
            .map(Vec::len)
        {
            self.expect(
                &name,
                &format!("listed {n} server(s)"),
                json!({"path": "$.body.servers[*]", "count": {"equals": n}}),
            );
        }
    }

    fn mcp(&mut self, r: &Recorded, naming: &Naming) {
        let Recorded::Mcp {
            agent,
            method,
            request,
            bearer,
            session,
            status,
            issued_session,
            messages,
        } = r
        else {
            return;
        };
        let bearer = self.bearer(bearer.as_ref());
        let conn = session
            .as_ref()
            .and_then(|s| self.sessions.get(s).cloned())
            .unwrap_or_else(|| agent.clone());
        if method == "DELETE" {
            let name = self.name("delete");
            self.steps
                .push(json!({"name": name, "delete": {"agent": conn}}));
            return;
        }
        let Some(req) = request else {
            return;
        };
        let rpc = req
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = req.get("params").cloned().unwrap_or(Value::Null);
        let id = req.get("id");
        let token = params.pointer("/_meta/progressToken").cloned();
        let response = id.and_then(|id| {
            messages.iter().find(|m| {
                m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
            })
        });
        let progress = messages
            .iter()
            .filter(|m| m.get("method").and_then(Value::as_str) == Some("notifications/progress"))
            .count();
        let bearer_v = bearer.map(Value::String);
        let (kind, action, key) = match rpc {
            "initialize" => {
                let n = self.per_agent.entry(agent.clone()).or_default();
                *n += 1;
                let alias = if *n == 1 {
                    agent.clone()
                } else {
                    format!("{agent}-{n}")
                };
                if let Some(s) = issued_session {
                    self.sessions.insert(s.clone(), alias.clone());
                }
                let mut a = json!({"agent": agent});
                if alias != *agent {
                    a["as"] = json!(alias);
                }
                ("connect", with(a, "bearer", &bearer_v), "connect")
            }
            "notifications/initialized" => return,
            "tools/list" => ("list", json!({"agent": conn}), "list_tools"),
            "tools/call" => tool_call(&conn, &params, naming, &bearer_v, &token),
            "prompts/get"
                if params.get("name").and_then(Value::as_str)
                    == Some(&format!("{conn}_history")) =>
            {
                ("history", json!({"agent": conn}), "history")
            }
            other => {
                let mut a = json!({"agent": conn, "method": other});
                if !params.is_null() {
                    a["params"] = params.clone();
                }
                if id.is_none() {
                    a["notification"] = json!(true);
                }
                ("request", with(a, "bearer", &bearer_v), "request")
            }
        };
        let name = self.name(kind);
        self.steps.push(json!({"name": name, key: action}));
        if kind == "connect" || id.is_none() {
            return;
        }
        self.expect(
            &name,
            &format!("answered HTTP {status}"),
            json!({"path": "$.status", "equals": status}),
        );
        self.shape(&name, kind, response, progress, token.is_some());
    }

    /// Assertions on the answer's shape (not its wording: a model's text differs run to run).
    fn shape(
        &mut self,
        name: &str,
        kind: &str,
        response: Option<&Value>,
        progress: usize,
        token: bool,
    ) {
        let Some(response) = response else {
            return;
        };
        if response.get("error").is_some() {
            self.expect(
                name,
                "answered a JSON-RPC error",
                json!({"path": "$.error", "exists": true}),
            );
            return;
        }
        let result = response.get("result").unwrap_or(&Value::Null);
        match kind {
            "list" => {
                let names: Vec<&str> = result
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(|t| {
                        t.iter()
                            .filter_map(|t| t.get("name").and_then(Value::as_str))
                            .collect()
                    })
                    .unwrap_or_default();
                for tool in names {
                    self.expect(
                        name,
                        &format!("listed `{tool}`"),
                        json!({"path": format!("$.result.tools[?@.name == '{tool}']"), "count": {"equals": 1}}),
                    );
                }
            }
            "health" => {
                let status = result
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .and_then(|h| h.get("status").cloned());
                if let Some(s) = status {
                    self.expect(
                        name,
                        &format!("reported health {s}"),
                        json!({"path": "$.health.status", "equals": s}),
                    );
                }
            }
            "send" | "call" | "history" => {
                let is_error = result.get("isError").and_then(Value::as_bool);
                if let (Some(is_error), false) = (is_error, kind == "history") {
                    self.expect(
                        name,
                        &format!("answered a result with isError {is_error}"),
                        json!({"path": "$.result.isError", "equals": is_error}),
                    );
                }
                if let Some(t) = result
                    .pointer("/content/0/type")
                    .or_else(|| result.pointer("/messages/0/content/type"))
                {
                    let path = if kind == "history" {
                        "$.result.messages[0].content.type"
                    } else {
                        "$.result.content[0].type"
                    };
                    self.expect(
                        name,
                        &format!("answered {t} content first"),
                        json!({"path": path, "equals": t}),
                    );
                }
                if token && progress > 0 {
                    self.expect(
                        name,
                        "received progress notifications",
                        json!({"path": "$.progress[*]", "count": {"min": 1}}),
                    );
                    // PROG-003 needs two notifications to judge anything.
                    let checks: &[&str] = if progress >= 2 {
                        &["PROG-002", "PROG-003", "PROG-007"]
                    } else {
                        &["PROG-002", "PROG-007"]
                    };
                    for check in checks {
                        self.checks.push(json!({"check": check, "steps": [name]}));
                    }
                }
            }
            _ => {}
        }
    }
}
