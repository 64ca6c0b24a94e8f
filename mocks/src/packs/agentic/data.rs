//! The McpAgenticServer mock's fixture: defects, fixtures, provider metadata and tool
//! declarations.

use serde_json::{Value, json};

/// Defects of the McpAgenticServer mock: name → the rule it breaks.
pub(crate) const DEFECTS: &[(&str, &str)] = &[
    (
        "workers-win",
        "an agent id registered in both executors is served by the worker",
    ),
    (
        "capability-filter-ignored",
        "agents_discover ignores `capability`",
    ),
    (
        "capability-substring",
        "agents_discover matches capabilities by substring",
    ),
    (
        "status-not-ready",
        "agents_discover reports status `available` instead of `ready`",
    ),
    (
        "providers-empty-array",
        "agents without providers get `providers: []`",
    ),
    (
        "provider-capabilities-empty",
        "a provider without capabilities metadata is listed with `capabilities: {}`",
    ),
    (
        "provider-kind-missing",
        "a provider without a kind is listed without `kind: llm`",
    ),
    (
        "unknown-provider-accepted",
        "sessions_create accepts an unregistered metadata.provider",
    ),
    (
        "provider-ignored",
        "sessions_create ignores metadata.provider (the default provider answers)",
    ),
    (
        "default-agent-last",
        "without agentId the last in-process agent is used, not the first",
    ),
    ("default-agent-ignored", "defaultAgentId is ignored"),
    (
        "workers-only-fails",
        "with no in-process agents, sessions fail instead of using the workers",
    ),
    (
        "no-agents-message",
        "with no agents the error message is not 'No agents registered'",
    ),
    (
        "agent-not-found-kind",
        "an unknown agentId is a BridgeError of kind internal, not upstream",
    ),
    (
        "worker-sessions-lost",
        "session tools look only at the in-process executor",
    ),
    (
        "session-not-found-message",
        "an unknown sessionId gets 'Unknown session: …'",
    ),
    ("cancel-noop", "sessions_cancel leaves the session active"),
    (
        "delegate-ignores-capability",
        "tasks_delegate ignores `capability` and uses the default agent",
    ),
    (
        "default-provider-ignored",
        "without metadata.provider, anthropic answers instead of the default provider openai",
    ),
    (
        "routing-failure-drops-sessions",
        "a routing failure (a BridgeError) drops every open session",
    ),
];

/// Fixtures: name → what the executors hold.
pub(crate) const FIXTURES: &[(&str, &str)] = &[
    (
        "default",
        "in-process coder, shared, multi-provider-agent; workers shared, reviewer",
    ),
    (
        "workers-only",
        "no in-process agents; workers shared, reviewer",
    ),
    ("empty", "no agents at all"),
    (
        "default-agent=<id>",
        "the default fixture with defaultAgentId = <id>",
    ),
];

/// The ProviderRegistry of multi-provider agents (`local-embed` has neither kind nor capabilities).
pub(super) fn providers() -> Value {
    json!([
        {"id": "openai", "models": ["gpt-4o", "gpt-4o-mini"], "kind": "llm",
         "capabilities": {"streaming": true, "tools": true, "vision": true, "jsonMode": true},
         "displayName": "OpenAI"},
        {"id": "anthropic", "models": ["claude-sonnet-4-20250514"], "kind": "llm",
         "capabilities": {"streaming": true, "tools": true, "vision": true, "jsonMode": false},
         "displayName": "Anthropic"},
        {"id": "google-gemini", "models": ["gemini-2.0-flash"], "kind": "llm",
         "capabilities": {"streaming": false, "tools": false, "vision": true, "jsonMode": true},
         "displayName": "Google Gemini"},
        {"id": "local-embed", "models": ["mini-embed"], "displayName": "Local embeddings",
         "description": "registered without kind or capabilities"}
    ])
}

/// The input schema of a tool.
pub(super) fn tool_schema(name: &str) -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    let (props, required): (Value, Vec<&str>) = match name {
        "agents_discover" => (
            json!({"capability": s("Only agents with this capability")}),
            vec![],
        ),
        "sessions_create" => (
            json!({"agentId": s("Agent to bind the session to"),
                   "metadata": {"type": "object", "properties": {"provider": s("Provider id")}}}),
            vec![],
        ),
        "sessions_prompt" => (
            json!({"sessionId": s("Session"), "prompt": s("Prompt")}),
            vec!["sessionId", "prompt"],
        ),
        "sessions_status" | "sessions_close" | "sessions_cancel" => {
            (json!({"sessionId": s("Session")}), vec!["sessionId"])
        }
        "tasks_delegate" => (
            json!({"agentId": s("Agent"), "capability": s("Capability the agent must have"),
                   "prompt": s("The task")}),
            vec!["prompt"],
        ),
        _ => (json!({}), vec![]),
    };
    json!({"type": "object", "properties": props, "required": required})
}

/// The model a provider's requests name: the first of its `models`.
pub(super) fn provider_model(id: &str) -> Option<String> {
    providers()
        .as_array()?
        .iter()
        .find(|p| p.get("id").and_then(Value::as_str) == Some(id))?
        .pointer("/models/0")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
