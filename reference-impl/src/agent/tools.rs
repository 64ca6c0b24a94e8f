//! The tool and prompt definitions an agent server publishes, and `send_message` argument parsing.

use std::sync::Arc;

use base64::Engine;
use rmcp::model::{JsonObject, Prompt, Tool};
use serde_json::{Value, json};

use crate::llm::Part;

/// Name of the message tool.
pub const SEND_MESSAGE: &str = "send_message";
/// Name of the health tool.
pub const GET_HEALTH: &str = "get_health";
/// Description of `get_health`, exactly as seed 000 §2 gives it.
pub const GET_HEALTH_DESCRIPTION: &str =
    "Returns the health status of this agent and its downstream dependencies.";

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// `send_message`: `message` (required) and optional base64 `images`.
pub fn send_message_tool(agent: &str) -> Tool {
    Tool::new(
        send_message_name(agent).to_owned(),
        format!("Send a message to the {agent} agent and receive its reply."),
        object(json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "Text message to the agent"},
                "images": {
                    "type": "array",
                    "description": "Base64-encoded images: [{\"data\": \"...\", \"mime_type\": \"image/png\"}]",
                    "items": if crate::defect!("images-items-untyped") { json!({}) } else { json!({
                        "type": "object",
                        "properties": {
                            "data": {"type": "string", "description": "Base64 image data"},
                            "mime_type": {"type": "string", "description": "MIME type, e.g. image/png"}
                        },
                        "required": ["data", "mime_type"]
                    }) }
                }
            },
            "required": if crate::defect!("message-tool-schema-loose") {
                json!([])
            } else if crate::defect!("images-required") {
                json!(["message", "images"])
            } else {
                json!(["message"])
            }
        })),
    )
}

/// The name the message tool of `agent` is listed and called under: `send_message`
/// (`mr-message-tool-named-after-agent`: the agent's name, as the seed's client samples call it).
pub fn send_message_name(agent: &str) -> &str {
    if crate::defect!("mr-message-tool-named-after-agent") {
        agent
    } else {
        SEND_MESSAGE
    }
}

/// `get_health`, with the exact definition of seed 000 §2 (empty object, no extra properties).
pub fn get_health_tool() -> Tool {
    // `ms-health-tool-framework-schema`: FastMCP's listing of a zero-argument function.
    let framework = crate::defect!("ms-health-tool-framework-schema");
    let description = if crate::defect!("health-description-reworded") {
        "Reports whether this agent is healthy."
    } else if framework {
        "Health check for this agent."
    } else {
        GET_HEALTH_DESCRIPTION
    };
    let tool = Tool::new(
        GET_HEALTH,
        description,
        object(if crate::defect!("health-tool-schema-open") || framework {
            json!({"type": "object", "properties": {}})
        } else if crate::defect!("health-tool-takes-argument") {
            json!({
                "type": "object",
                "properties": {"verbose": {"type": "boolean"}},
                "additionalProperties": false
            })
        } else {
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            })
        }),
    );
    // `rx-health-json-in-structured-content`: the report declared as structured output.
    if crate::defect!("rx-health-json-in-structured-content") {
        return tool.with_raw_output_schema(object(json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "degraded", "error"]},
                "timestamp": {"type": "string"},
                "message": {"type": "string"}
            },
            "required": ["status", "timestamp"]
        })));
    }
    tool
}

/// Name of the history prompt of `agent`.
pub fn history_prompt_name(agent: &str) -> String {
    if crate::defect!("cm-history-prompt-from-slug") {
        return format!("{}_history", agent.replace('_', "-"));
    }
    if crate::defect!("cm-history-prompt-lowercased") {
        return format!("{}_history", agent.to_lowercase());
    }
    format!("{agent}_history")
}

/// The `{agent}_history` prompt definition.
pub fn history_prompt(agent: &str) -> Prompt {
    Prompt::new(
        history_prompt_name(agent),
        Some(format!(
            "Conversation history of the {agent} agent, as MCP messages"
        )),
        None,
    )
}

/// Parsed `send_message` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct SendMessageArgs {
    /// The text.
    pub message: String,
    /// Images, in order (as image parts).
    pub images: Vec<Part>,
}

/// Parses and checks `send_message` arguments; the error is the text of an `isError` result.
pub fn parse_send_message(arguments: Option<&JsonObject>) -> Result<SendMessageArgs, String> {
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(unknown) = arguments
        .keys()
        .find(|key| !matches!(key.as_str(), "message" | "images"))
    {
        return Err(format!(
            "invalid arguments: unknown argument '{unknown}' (send_message takes `message` and optional `images`)"
        ));
    }
    let message = match arguments.get("message") {
        Some(Value::String(message)) => message.clone(),
        Some(_) => return Err("invalid arguments: `message` must be a string".to_owned()),
        None if crate::defect!("invalid-arguments-accepted") => String::new(),
        None => return Err("invalid arguments: missing required argument `message`".to_owned()),
    };
    let mut images = Vec::new();
    match arguments.get("images") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                let data = item.get("data").and_then(Value::as_str).ok_or_else(|| {
                    format!("invalid arguments: images[{index}].data must be a base64 string")
                })?;
                let mime_type = item.get("mime_type").and_then(Value::as_str).ok_or_else(|| {
                    format!("invalid arguments: images[{index}].mime_type must be a string such as image/png")
                })?;
                if !mime_type.starts_with("image/") {
                    return Err(format!(
                        "invalid arguments: images[{index}].mime_type '{mime_type}' is not an image type"
                    ));
                }
                // `qx-image-mime-allowlist`: a fixed allowlist of the two common formats.
                if !matches!(mime_type, "image/png" | "image/jpeg")
                    && crate::defect!("qx-image-mime-allowlist")
                {
                    return Err(format!(
                        "invalid arguments: images[{index}].mime_type '{mime_type}' is not supported (use image/png or image/jpeg)"
                    ));
                }
                if base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .is_err()
                {
                    return Err(format!(
                        "invalid arguments: images[{index}].data is not valid base64"
                    ));
                }
                let mime_type = if crate::defect!("cm-image-mime-always-png") {
                    "image/png"
                } else {
                    mime_type
                };
                images.push(Part::Image {
                    data: data.trim().to_owned(),
                    mime_type: mime_type.to_owned(),
                });
            }
        }
        Some(_) => {
            return Err(
                "invalid arguments: `images` must be a list of {data, mime_type}".to_owned(),
            );
        }
    }
    if crate::defect!("cm-image-first-only") {
        images.truncate(1);
    }
    if crate::defect!("cm-images-reversed") {
        images.reverse();
    }
    Ok(SendMessageArgs { message, images })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test arguments are objects"),
        }
    }

    #[test]
    fn get_health_has_the_exact_seed_definition() {
        let tool = serde_json::to_value(get_health_tool()).unwrap();
        assert_eq!(
            tool,
            json!({
                "name": "get_health",
                "description": "Returns the health status of this agent and its downstream dependencies.",
                "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}
            })
        );
    }

    #[test]
    fn send_message_arguments_are_checked_with_clear_errors() {
        let ok = parse_send_message(Some(&args(json!({
            "message": "hi",
            "images": [{"data": "iVBORw0KGgo=", "mime_type": "image/png"}]
        }))))
        .unwrap();
        assert_eq!(ok.message, "hi");
        assert_eq!(ok.images.len(), 1);
        let missing = parse_send_message(Some(&args(json!({})))).unwrap_err();
        assert!(missing.contains("missing required argument `message`"));
        let bad = parse_send_message(Some(&args(json!({
            "message": "x", "images": [{"data": "%%%", "mime_type": "image/png"}]
        }))))
        .unwrap_err();
        assert!(bad.contains("images[0].data is not valid base64"));
        let unknown =
            parse_send_message(Some(&args(json!({"message": "x", "extra": 1})))).unwrap_err();
        assert!(unknown.contains("unknown argument 'extra'"));
    }
}
