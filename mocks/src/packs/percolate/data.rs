//! The Percolate mock's fixture: tenants, system agent-lets, knowledge bases, the entity graph
//! and the tool and resource declarations.

use serde_json::{Value, json};

/// Defects of the Percolate mock: name → the rule it breaks.
pub(crate) const DEFECTS: &[(&str, &str)] = &[
    (
        "missing-tenant-accepted",
        "a call without tenant_id is served in the tenant acme instead of being refused",
    ),
    (
        "missing-tenant-no-details",
        "the -32600 for a missing tenant_id has no data naming the field",
    ),
    (
        "missing-field-internal-error",
        "a missing required argument gets -32603 (neither of the seed's -32600 or -32602)",
    ),
    (
        "unknown-method-invalid-request",
        "an unknown MCP method gets -32600 instead of -32601",
    ),
    (
        "knowledge-base-any",
        "a knowledge_base outside general|codebase|documents searches everything",
    ),
    ("no-trace-id", "an ask_agent result carries no trace_id"),
    (
        "missing-field-accepted",
        "a missing required argument other than tenant_id is not rejected",
    ),
    (
        "unknown-tenant-accepted",
        "an unknown tenant_id is served as an empty tenant, not -32000",
    ),
    (
        "unknown-agent-answers",
        "an unknown agent_uri is answered instead of -32001",
    ),
    (
        "limit-default-off-by-one",
        "search_knowledge_base returns 6 results by default instead of 5",
    ),
    (
        "limit-max-off-by-one",
        "search_knowledge_base returns up to 21 results instead of 20",
    ),
    (
        "count-total-matches",
        "`count` reports every match, not the results returned",
    ),
    (
        "search-ignores-tenant",
        "search_knowledge_base searches every tenant's documents",
    ),
    (
        "agents-cross-tenant",
        "user agent-lets of one tenant are visible to another",
    ),
    (
        "schema-not-validated",
        "create_agent accepts an output_schema that is not a valid JSON Schema",
    ),
    (
        "agent-uri-missing-user",
        "create_agent answers agentlet://user/<name> without the user id",
    ),
    (
        "model-override-ignored",
        "ask_agent ignores the `model` argument",
    ),
    (
        "related-ignored",
        "lookup_entity never includes related entities",
    ),
    (
        "accept-malformed-uri",
        "agentlet:// URIs with `..` segments are normalised and served",
    ),
    (
        "query-unbounded",
        "search_knowledge_base accepts queries of any length",
    ),
    (
        "rate-limit-off-by-one",
        "the 101st call in a minute is still served",
    ),
    (
        "no-concurrency-limit",
        "more than 10 concurrent calls of one tenant are served",
    ),
    (
        "text-not-json",
        "tool results are plain text, not a JSON object with `status`",
    ),
    (
        "parse-error-invalid-request",
        "a body that is not JSON gets -32600 instead of -32700",
    ),
    (
        "tools-list-no-enum",
        "tools/list declares knowledge_base as a plain string, without its enum",
    ),
    (
        "search-item-no-source",
        "search_knowledge_base result items carry no `source`",
    ),
    (
        "duplicate-agent-replaces",
        "create_agent with an existing agent_name replaces the agent-let",
    ),
    (
        "no-agentlet-template",
        "resources/templates/list does not offer agentlet://{uri}",
    ),
];

/// Tenants that exist.
pub(super) const TENANTS: &[&str] = &["acme", "globex"];
/// The model agents run on unless `model` overrides it.
pub(super) const DEFAULT_MODEL: &str = "claude-sonnet-4.5";
/// The tools, in `tools/list` order.
pub(super) const TOOL_NAMES: &[&str] = &[
    "ask_agent",
    "search_knowledge_base",
    "create_agent",
    "lookup_entity",
];

/// Required arguments of a tool besides `tenant_id`.
pub(super) fn required(tool: &str) -> &'static [&'static str] {
    match tool {
        "ask_agent" => &["agent_uri", "prompt"],
        "search_knowledge_base" => &["query"],
        "create_agent" => &["user_id", "agent_name", "description", "output_schema"],
        "lookup_entity" => &["entity_type", "query"],
        _ => &[],
    }
}

fn s(d: &str) -> Value {
    json!({"type": "string", "description": d})
}

/// `tools/list`.
pub(super) fn tools() -> Vec<Value> {
    let tenant = s("Tenant scope");
    vec![
        json!({"name": "ask_agent", "description": "Execute an agent-let with a user prompt.",
            "inputSchema": {"type": "object", "properties": {
                "agent_uri": s("Agent identifier (e.g., \"percolate-researcher\")"),
                "tenant_id": tenant, "prompt": s("User prompt for the agent"),
                "user_id": s("User identifier"), "session_id": s("Session tracking ID"),
                "model": s("Model override (e.g., \"claude-opus-4\")")},
                "required": ["agent_uri", "tenant_id", "prompt"]}}),
        json!({"name": "search_knowledge_base",
            "description": "Search REM memory using vector and fuzzy search.",
            "inputSchema": {"type": "object", "properties": {
                "query": s("Search query"), "tenant_id": tenant,
                "knowledge_base": {"type": "string", "enum": ["general", "codebase", "documents"]},
                "limit": {"type": "integer", "default": 5, "minimum": 1, "maximum": 20}},
                "required": ["query", "tenant_id"]}}),
        json!({"name": "create_agent", "description": "Create a new user-scoped agent-let.",
            "inputSchema": {"type": "object", "properties": {
                "tenant_id": tenant, "user_id": s("User creating the agent"),
                "agent_name": s("Unique agent name"), "description": s("System prompt"),
                "output_schema": {"type": "object", "description": "JSON Schema for structured output"},
                "tools": {"type": "array", "items": {"type": "string"}}},
                "required": ["tenant_id", "user_id", "agent_name", "description", "output_schema"]}}),
        json!({"name": "lookup_entity", "description": "Lookup entities in the REM graph.",
            "inputSchema": {"type": "object", "properties": {
                "entity_type": s("Entity type (carrier|service|person|etc.)"),
                "query": s("Entity name or description"), "tenant_id": tenant,
                "include_related": {"type": "boolean"}},
                "required": ["entity_type", "query", "tenant_id"]}}),
    ]
}

/// `resources/list`.
pub(super) fn resources() -> Vec<Value> {
    vec![
        json!({"uri": "system-agents://list", "name": "system-agents",
            "description": "List all system-provided agent-lets", "mimeType": "application/json"}),
        json!({"uri": "my-agents://list", "name": "my-agents",
            "description": "List user's custom agent-lets", "mimeType": "application/json"}),
    ]
}

/// `resources/templates/list`.
pub(super) fn resource_templates() -> Vec<Value> {
    vec![
        json!({"uriTemplate": "agentlet://{uri}", "name": "agentlet",
        "description": "Load specific agent-let schema", "mimeType": "application/json"}),
    ]
}

/// Every system agent-let schema.
pub(super) fn system_agents() -> Vec<Value> {
    ["percolate-researcher", "percolate-test-agent"]
        .iter()
        .filter_map(|n| system_agent(n))
        .collect()
}

/// A system agent-let by name.
pub(super) fn system_agent(name: &str) -> Option<Value> {
    let (description, tags) = match name {
        "percolate-researcher" => (
            "You research the tenant's documents and answer with sources.",
            json!(["research", "analysis"]),
        ),
        "percolate-test-agent" => ("You answer test prompts briefly.", json!(["test"])),
        _ => return None,
    };
    Some(json!({"fully_qualified_name": name, "short_name": name,
        "description": description, "tags": tags, "version": "1.0.0",
        "json_schema": {"type": "object", "properties": {
            "answer": {"type": "string"}, "confidence": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["answer"]}}))
}

/// Whether the path of an `agentlet://` URI is well formed: a system name, or `user/<id>/<name>`.
pub(super) fn well_formed(path: &str) -> bool {
    let seg = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        [name] => seg(name),
        ["user", user, name] => seg(user) && seg(name),
        _ => false,
    }
}

/// `a/b/../c` → `a/c` (what a lax server does).
pub(super) fn normalise(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

fn documents() -> Vec<(&'static str, &'static str, String)> {
    let mut docs = Vec::new();
    let kbs = ["general", "codebase", "documents"];
    for i in 1..=24 {
        docs.push((
            "acme",
            kbs[i % 3],
            format!(
                "Shipping note {i}: acme orders in zone {i} ship within {} days.",
                i % 5 + 1
            ),
        ));
    }
    docs.push((
        "acme",
        "documents",
        "Project Falcon roadmap: launch in Q3.".into(),
    ));
    docs.push((
        "acme",
        "codebase",
        "Falcon client retries shipping labels twice.".into(),
    ));
    for i in 1..=3 {
        docs.push((
            "globex",
            "general",
            format!("Shipping memo {i} for globex warehouses."),
        ));
    }
    docs.push(("globex", "documents", "Project Orion budget review.".into()));
    docs
}

/// Documents of `tenant` (every tenant when `None`) matching a word of `query`, best first.
pub(super) fn search(tenant: Option<&str>, kb: Option<&str>, query: &str) -> Vec<Value> {
    let words: Vec<String> = query
        .split_whitespace()
        .map(|w| w.to_lowercase())
        .filter(|w| w.len() > 1)
        .collect();
    let mut hits: Vec<(usize, usize, Value)> = Vec::new();
    for (i, (t, k, content)) in documents().into_iter().enumerate() {
        if tenant.is_some_and(|x| x != t) || kb.is_some_and(|x| x != k) {
            continue;
        }
        let lower = content.to_lowercase();
        let n = words.iter().filter(|w| lower.contains(w.as_str())).count();
        if n > 0 {
            hits.push((
                n,
                i,
                json!({"content": content, "source": format!("resource://doc-{}", 100 + i),
                "metadata": {"type": "pdf", "page": i % 7 + 1, "knowledge_base": k}}),
            ));
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let n = hits.len().max(1) as f64;
    hits.into_iter()
        .enumerate()
        .map(|(rank, (_, _, mut v))| {
            v["score"] = json!(((0.99 - 0.5 * rank as f64 / n) * 100.0).round() / 100.0);
            v
        })
        .collect()
}

/// An entity of `tenant` of type `ty` whose name contains `query`, with its related entities.
pub(super) fn lookup(tenant: &str, ty: &str, query: &str) -> Option<(Value, Vec<Value>)> {
    let entities = [
        (
            "acme",
            "entity-456",
            "service",
            "Express Shipping",
            json!({"sla": "next-day"}),
        ),
        (
            "acme",
            "entity-457",
            "carrier",
            "Acme Freight",
            json!({"fleet": 40}),
        ),
        (
            "acme",
            "entity-458",
            "person",
            "Jane Doe",
            json!({"role": "dispatcher"}),
        ),
        (
            "globex",
            "entity-900",
            "service",
            "Orion Express",
            json!({"sla": "two-day"}),
        ),
    ];
    let edges = [
        ("entity-456", "operated_by", "entity-457"),
        ("entity-458", "works_for", "entity-457"),
    ];
    let q = query.to_lowercase();
    let to_json = |e: &(&str, &str, &str, &str, Value)| json!({"id": e.1, "type": e.2, "name": e.3, "properties": e.4});
    let found = entities
        .iter()
        .find(|e| e.0 == tenant && e.2 == ty && e.3.to_lowercase().contains(&q))?;
    let related = edges
        .iter()
        .filter_map(|(a, rel, b)| {
            let other = if *a == found.1 {
                b
            } else if *b == found.1 {
                a
            } else {
                return None;
            };
            let e = entities.iter().find(|e| e.1 == *other)?;
            let mut v = to_json(e);
            v["relation"] = json!(rel);
            Some(v)
        })
        .collect();
    Some((to_json(found), related))
}

/// A value valid against a simple object schema: each property filled by its type.
pub(super) fn fill_schema(schema: &Value, answer: &str) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            let v = match p.get("type").and_then(Value::as_str) {
                Some("string") => json!(answer),
                Some("number") => json!(0.9),
                Some("integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("null") => Value::Null,
                _ => json!({}),
            };
            out.insert(k.clone(), v);
        }
    }
    Value::Object(out)
}

/// Whether `schema` is a valid JSON Schema (its `$schema` is ignored: an unknown meta-schema
/// must not stop the check).
pub(super) fn check_schema(schema: &Value) -> Result<(), String> {
    let mut s = schema.clone();
    if let Some(o) = s.as_object_mut() {
        o.remove("$schema");
    }
    jsonschema::meta::validate(&s).map_err(|e| e.to_string())
}
