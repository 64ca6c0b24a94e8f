//! The McpAgenticServer mock's fixture: provider metadata and tool declarations.

use serde_json::{Value, json};

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
