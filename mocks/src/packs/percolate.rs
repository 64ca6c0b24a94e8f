//! Percolate's MCP endpoint (seed 003): `POST /mcp`, JSON answers, the tools `ask_agent`,
//! `search_knowledge_base`, `create_agent` and `lookup_entity`, the resources
//! `system-agents://list`, `my-agents://list` and `agentlet://{uri}`, tenant isolation and the
//! production limits (100 calls a minute and 10 at once per tenant, 60 s per tool call).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::jsonrpc::{self, McpHandler, RpcCall, RpcError, Sessions, code};
use super::upstream::{chat_completion, http_client};
use super::{Defects, PackSpec};

mod data;

pub(crate) use data::DEFECTS;

/// Calls a tenant may make in a minute.
const RATE_PER_MINUTE: usize = 100;
/// Calls a tenant may have running at once.
const MAX_CONCURRENT: usize = 10;
/// Longest tool execution.
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest search query, in characters.
const MAX_QUERY_CHARS: usize = 1000;

const RATE_LIMITED: i64 = -32002;

struct Percolate {
    defects: Defects,
    llm: Option<String>,
    http: reqwest::Client,
    sessions: Sessions,
    state: Mutex<PercState>,
}

#[derive(Default)]
struct PercState {
    /// (tenant, user, name) → agent-let schema.
    user_agents: Vec<(String, String, String, Value)>,
    calls: HashMap<String, VecDeque<Instant>>,
    in_flight: HashMap<String, usize>,
}

impl Percolate {
    fn state(&self) -> MutexGuard<'_, PercState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(crate) fn router(spec: &PackSpec, defects: Defects) -> Router {
    let p = Arc::new(Percolate {
        defects,
        llm: spec.llm.clone(),
        http: http_client(spec.upstream_ca.as_deref()),
        sessions: Sessions::default(),
        state: Mutex::new(PercState::default()),
    });
    Router::new()
        .route(
            "/mcp",
            post(mcp_post)
                .delete(mcp_delete)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .with_state(p)
}

async fn mcp_post(State(p): State<Arc<Percolate>>, headers: HeaderMap, body: Bytes) -> Response {
    jsonrpc::post(p.clone(), &p.sessions, String::new(), headers, body).await
}

async fn mcp_delete(State(p): State<Arc<Percolate>>, headers: HeaderMap) -> Response {
    jsonrpc::delete(&p.sessions, &headers).into_response()
}

impl McpHandler for Percolate {
    fn server_name(&self, scope: &str) -> Option<String> {
        scope.is_empty().then(|| "percolate".to_owned())
    }

    fn capabilities(&self) -> Value {
        json!({"tools": {}, "resources": {}})
    }

    fn parse_error_code(&self) -> i64 {
        if self.defects.on("parse-error-invalid-request") {
            code::INVALID_REQUEST
        } else {
            code::PARSE
        }
    }

    fn handle(self: Arc<Self>, call: RpcCall) -> BoxFuture<'static, Result<Value, RpcError>> {
        async move {
            match call.method.as_str() {
                "tools/list" => {
                    let mut tools = data::tools();
                    if self.defects.on("tools-list-no-enum")
                        && let Some(p) = tools
                            .get_mut(1)
                            .and_then(|t| t.pointer_mut("/inputSchema/properties/knowledge_base"))
                    {
                        *p = json!({"type": "string"});
                    }
                    Ok(json!({"tools": tools}))
                }
                "tools/call" => self.call_tool(&call.params).await,
                "resources/list" => Ok(json!({"resources": data::resources()})),
                "resources/templates/list" => Ok(json!({"resourceTemplates":
                if self.defects.on("no-agentlet-template") {
                    Vec::new()
                } else {
                    data::resource_templates()
                }})),
                "resources/read" => self.read_resource(&call),
                "prompts/list" => Ok(json!({"prompts": []})),
                m if self.defects.on("unknown-method-invalid-request") => Err(RpcError::new(
                    code::INVALID_REQUEST,
                    format!("Invalid request: {m}"),
                )),
                m => Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!("Method not found: {m}"),
                )),
            }
        }
        .boxed()
    }
}

fn invalid_field(field: &str, reason: &str) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        format!("Invalid params: {field} {}", reason.to_lowercase()),
    )
    .with_data(json!({"field": field, "reason": reason}))
}

fn missing_field(field: &str) -> RpcError {
    missing_field_as(code::INVALID_PARAMS, field)
}

fn missing_field_as(code: i64, field: &str) -> RpcError {
    RpcError::new(code, format!("Invalid params: {field} is required"))
        .with_data(json!({"field": field, "reason": "Field required"}))
}

/// Releases a tenant's in-flight slot when dropped.
struct Slot {
    p: Arc<Percolate>,
    tenant: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut s = self.p.state();
        if let Some(n) = s.in_flight.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
        }
    }
}

impl Percolate {
    fn missing_tenant(&self) -> RpcError {
        let e = RpcError::new(code::INVALID_REQUEST, "Invalid request");
        if self.defects.on("missing-tenant-no-details") {
            e
        } else {
            e.with_data(json!({"details": "Missing tenant_id"}))
        }
    }

    fn tenant(&self, args: &Map<String, Value>) -> Result<String, RpcError> {
        let Some(t) = args.get("tenant_id").and_then(Value::as_str) else {
            if self.defects.on("missing-tenant-accepted") {
                return Ok(data::TENANTS[0].to_owned());
            }
            return Err(self.missing_tenant());
        };
        if !data::TENANTS.contains(&t) && !self.defects.on("unknown-tenant-accepted") {
            return Err(RpcError::new(-32000, "Tenant not found")
                .with_data(json!({"details": format!("Unknown tenant_id: {t}")})));
        }
        Ok(t.to_owned())
    }

    fn admit(self: &Arc<Self>, tenant: &str) -> Result<Slot, RpcError> {
        let mut s = self.state();
        let now = Instant::now();
        let limit = if self.defects.on("rate-limit-off-by-one") {
            RATE_PER_MINUTE + 1
        } else {
            RATE_PER_MINUTE
        };
        let calls = s.calls.entry(tenant.to_owned()).or_default();
        while calls
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            calls.pop_front();
        }
        if calls.len() >= limit {
            return Err(RpcError::new(RATE_LIMITED, "Rate limit exceeded").with_data(
                json!({"details": format!("{RATE_PER_MINUTE} requests per minute per tenant"), "tenant_id": tenant}),
            ));
        }
        calls.push_back(now);
        let running = s.in_flight.entry(tenant.to_owned()).or_default();
        if *running >= MAX_CONCURRENT && !self.defects.on("no-concurrency-limit") {
            return Err(RpcError::new(RATE_LIMITED, "Rate limit exceeded").with_data(
                json!({"details": format!("{MAX_CONCURRENT} concurrent requests per tenant"), "tenant_id": tenant}),
            ));
        }
        *running += 1;
        Ok(Slot {
            p: self.clone(),
            tenant: tenant.to_owned(),
        })
    }

    fn result(&self, v: &Value) -> Value {
        if self.defects.on("text-not-json") {
            let text = v
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}: {v}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            return jsonrpc::text_result(&text);
        }
        jsonrpc::json_text_result(v, false)
    }

    async fn call_tool(self: Arc<Self>, params: &Value) -> Result<Value, RpcError> {
        let (name, args) = jsonrpc::tool_call(params)?;
        if !data::TOOL_NAMES.contains(&name.as_str()) {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            ));
        }
        let tenant = self.tenant(&args)?;
        for f in data::required(&name) {
            if !args.contains_key(*f) && !self.defects.on("missing-field-accepted") {
                if self.defects.on("missing-field-internal-error") {
                    return Err(missing_field_as(code::INTERNAL, f));
                }
                return Err(missing_field(f));
            }
        }
        let _slot = self.admit(&tenant)?;
        let run = async {
            match name.as_str() {
                "ask_agent" => self.ask_agent(&tenant, &args).await,
                "search_knowledge_base" => self.search(&tenant, &args),
                "create_agent" => self.create_agent(&tenant, &args),
                _ => self.lookup_entity(&tenant, &args),
            }
        };
        match tokio::time::timeout(TOOL_TIMEOUT, run).await {
            Ok(r) => r.map(|v| self.result(&v)),
            Err(_) => Err(RpcError::new(-32003, "Timeout")
                .with_data(json!({"details": "tool execution exceeded 60s"}))),
        }
    }

    fn str_arg<'a>(args: &'a Map<String, Value>, f: &str) -> Result<&'a str, RpcError> {
        match args.get(f) {
            None => Ok(""),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(invalid_field(f, "Input should be a valid string")),
        }
    }

    /// The agent-let an `agent_uri` names, visible to `tenant`.
    fn find_agent(&self, tenant: &str, uri: &str) -> Option<Value> {
        let path = uri.strip_prefix("agentlet://").unwrap_or(uri);
        if let Some(a) = data::system_agent(path) {
            return Some(a);
        }
        let rest = path.strip_prefix("user/")?;
        let (user, name) = rest.split_once('/')?;
        let cross = self.defects.on("agents-cross-tenant");
        self.state()
            .user_agents
            .iter()
            .find(|(t, u, n, _)| (cross || t == tenant) && u == user && n == name)
            .map(|(_, _, _, s)| s.clone())
    }

    async fn ask_agent(&self, tenant: &str, args: &Map<String, Value>) -> Result<Value, RpcError> {
        let uri = Self::str_arg(args, "agent_uri")?;
        let prompt = Self::str_arg(args, "prompt")?;
        let agent = match self.find_agent(tenant, uri) {
            Some(a) => a,
            None if self.defects.on("unknown-agent-answers") => {
                json!({"fully_qualified_name": uri, "description": "", "tags": []})
            }
            None => {
                return Err(RpcError::new(-32001, "Agent not found")
                    .with_data(json!({"details": format!("Unknown agent_uri: {uri}")})));
            }
        };
        let system = agent
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // The model the answer reports; the one sent to the LLM is the same unless the defect
        // `model-override-ignored` sends the default while still reporting the override.
        let model = args
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(data::DEFAULT_MODEL)
            .to_owned();
        let sent = if self.defects.on("model-override-ignored") {
            data::DEFAULT_MODEL
        } else {
            model.as_str()
        };
        let answer = match &self.llm {
            Some(base) => {
                let body = json!({"model": sent, "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt}]});
                chat_completion(&self.http, base, &body)
                    .await
                    .map_err(|e| RpcError::new(code::INTERNAL, e))?
                    .text
            }
            None => format!("{uri} answered: {prompt}"),
        };
        let response = match agent.get("output_schema") {
            Some(schema) => data::fill_schema(schema, &answer),
            None => json!({"answer": answer, "confidence": 0.95,
                "tags": agent.get("tags").cloned().unwrap_or_else(|| json!([]))}),
        };
        let mut out = json!({"status": "success", "response": response, "model": model});
        if !self.defects.on("no-trace-id") {
            out["trace_id"] = json!(jsonrpc::random_id());
        }
        Ok(out)
    }

    fn search(&self, tenant: &str, args: &Map<String, Value>) -> Result<Value, RpcError> {
        let query = Self::str_arg(args, "query")?;
        if query.chars().count() > MAX_QUERY_CHARS && !self.defects.on("query-unbounded") {
            return Err(invalid_field(
                "query",
                &format!("String should have at most {MAX_QUERY_CHARS} characters"),
            ));
        }
        let kb = match args.get("knowledge_base") {
            None | Some(Value::Null) => None,
            Some(Value::String(k))
                if ["general", "codebase", "documents"].contains(&k.as_str()) =>
            {
                Some(k.as_str())
            }
            Some(_) if self.defects.on("knowledge-base-any") => None,
            Some(_) => {
                return Err(invalid_field(
                    "knowledge_base",
                    "Input should be 'general', 'codebase' or 'documents'",
                ));
            }
        };
        let (default, max) = (
            if self.defects.on("limit-default-off-by-one") {
                6
            } else {
                5
            },
            if self.defects.on("limit-max-off-by-one") {
                21
            } else {
                20
            },
        );
        let limit = match args.get("limit") {
            None | Some(Value::Null) => default,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => usize::try_from(n).unwrap_or(max).min(max),
                _ => {
                    return Err(invalid_field(
                        "limit",
                        "Input should be an integer greater than or equal to 1",
                    ));
                }
            },
        };
        let scope = if self.defects.on("search-ignores-tenant") {
            None
        } else {
            Some(tenant)
        };
        let matches = data::search(scope, kb, query);
        let total = matches.len();
        let mut results: Vec<Value> = matches.into_iter().take(limit).collect();
        if self.defects.on("search-item-no-source") {
            results
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(|r| {
                    r.remove("source");
                });
        }
        let count = if self.defects.on("count-total-matches") {
            total
        } else {
            results.len()
        };
        Ok(json!({"status": "success", "results": results, "count": count}))
    }

    fn create_agent(&self, tenant: &str, args: &Map<String, Value>) -> Result<Value, RpcError> {
        let user = Self::str_arg(args, "user_id")?.to_owned();
        let name = Self::str_arg(args, "agent_name")?.to_owned();
        let description = Self::str_arg(args, "description")?.to_owned();
        let ok_name = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if !ok_name(&name) {
            return Err(invalid_field(
                "agent_name",
                "String should match pattern '^[A-Za-z0-9_-]+$'",
            ));
        }
        if !ok_name(&user) {
            return Err(invalid_field(
                "user_id",
                "String should match pattern '^[A-Za-z0-9_-]+$'",
            ));
        }
        let schema = args.get("output_schema").cloned().unwrap_or(Value::Null);
        if !schema.is_object() {
            return Err(invalid_field(
                "output_schema",
                "Input should be a valid dictionary",
            ));
        }
        if !self.defects.on("schema-not-validated")
            && let Err(e) = data::check_schema(&schema)
        {
            return Err(invalid_field(
                "output_schema",
                &format!("Not a valid JSON Schema: {e}"),
            ));
        }
        let tools = match args.get("tools") {
            None | Some(Value::Null) => json!([]),
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(_) => return Err(invalid_field("tools", "Input should be a valid list")),
        };
        let fqn = format!("user/{user}/{name}");
        let mut s = self.state();
        let same = |(t, u, n, _): &(String, String, String, Value)| {
            t == tenant && *u == user && *n == name
        };
        if self.defects.on("duplicate-agent-replaces") {
            s.user_agents.retain(|a| !same(a));
        } else if s.user_agents.iter().any(same) {
            return Err(invalid_field("agent_name", "Agent name already exists"));
        }
        let agent = json!({"fully_qualified_name": fqn, "short_name": name,
            "description": description, "output_schema": schema, "tools": tools,
            "owner": user});
        s.user_agents
            .push((tenant.to_owned(), user.clone(), name.clone(), agent));
        let uri = if self.defects.on("agent-uri-missing-user") {
            format!("agentlet://user/{name}")
        } else {
            format!("agentlet://{fqn}")
        };
        Ok(json!({"status": "success", "agent_uri": uri,
            "message": "Agent created successfully"}))
    }

    fn lookup_entity(&self, tenant: &str, args: &Map<String, Value>) -> Result<Value, RpcError> {
        let ty = Self::str_arg(args, "entity_type")?;
        let query = Self::str_arg(args, "query")?;
        let related = match args.get("include_related") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(invalid_field(
                    "include_related",
                    "Input should be a valid boolean",
                ));
            }
        };
        let Some((entity, rel)) = data::lookup(tenant, ty, query) else {
            return Ok(json!({"status": "not_found", "entity": null, "related": []}));
        };
        let mut out = json!({"status": "success", "entity": entity});
        if related && !self.defects.on("related-ignored") {
            out["related"] = Value::Array(rel);
        }
        Ok(out)
    }

    fn read_resource(&self, call: &RpcCall) -> Result<Value, RpcError> {
        let uri = call
            .params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| missing_field("uri"))?;
        let tenant = call
            .params
            .pointer("/_meta/tenant_id")
            .and_then(Value::as_str)
            .or_else(|| {
                call.headers
                    .get("x-tenant-id")
                    .and_then(|v| v.to_str().ok())
            })
            .map(str::to_owned);
        let text = match uri {
            "system-agents://list" => Value::Array(data::system_agents()).to_string(),
            "my-agents://list" => {
                let tenant = tenant.ok_or_else(|| self.missing_tenant())?;
                let cross = self.defects.on("agents-cross-tenant");
                let list: Vec<Value> = self
                    .state()
                    .user_agents
                    .iter()
                    .filter(|(t, ..)| cross || *t == tenant)
                    .map(|(.., a)| a.clone())
                    .collect();
                Value::Array(list).to_string()
            }
            _ => {
                let Some(path) = uri.strip_prefix("agentlet://") else {
                    return Err(malformed(uri, "unknown resource URI"));
                };
                let path = if self.defects.on("accept-malformed-uri") {
                    data::normalise(path)
                } else {
                    if !data::well_formed(path) {
                        return Err(malformed(uri, "malformed agent-let URI"));
                    }
                    path.to_owned()
                };
                let t = tenant.unwrap_or_default();
                let agent = self.find_agent(&t, &path).ok_or_else(|| {
                    RpcError::new(-32001, "Agent not found")
                        .with_data(json!({"details": format!("Unknown agent-let: {uri}")}))
                })?;
                agent.to_string()
            }
        };
        Ok(json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}))
    }
}

fn malformed(uri: &str, reason: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {reason}"))
        .with_data(json!({"field": "uri", "reason": reason, "uri": uri}))
}
