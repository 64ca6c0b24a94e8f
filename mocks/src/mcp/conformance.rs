//! The `conformance` preset of a mock MCP server: the tools, resources and prompts that the server
//! scenarios of the official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16)
//! call, answering exactly as the scenario descriptions ask.
//!
//! Results are written as JSON and read into rmcp's model types, so the wire shape is the one the
//! suite documents.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ServerNotification,
    ServerRequest, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// An empty 8 kHz mono 8-bit WAV.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text_result(text: impl Into<String>) -> Result<CallToolResult, ErrorData> {
    from_json(json!({"content": [{"type": "text", "text": text.into()}]}))
}

/// The preset's tools.
pub(super) fn tools() -> Vec<Tool> {
    let none = json!({"type": "object", "properties": {}});
    let specs = [
        (
            "test_simple_text",
            "Returns a simple text response",
            none.clone(),
        ),
        ("test_image_content", "Returns an image", none.clone()),
        ("test_audio_content", "Returns an audio clip", none.clone()),
        (
            "test_embedded_resource",
            "Returns an embedded resource",
            none.clone(),
        ),
        (
            "test_multiple_content_types",
            "Returns text, image and resource",
            none.clone(),
        ),
        (
            "test_tool_with_logging",
            "Sends three log notifications",
            none.clone(),
        ),
        (
            "test_tool_with_progress",
            "Sends three progress notifications",
            none.clone(),
        ),
        (
            "test_error_handling",
            "Always fails with isError",
            none.clone(),
        ),
        (
            "test_sampling",
            "Asks the client's LLM through sampling/createMessage",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        ),
        (
            "test_elicitation",
            "Asks the user through elicitation/create",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        ),
        (
            "test_elicitation_sep1034_defaults",
            "Elicitation with defaults (SEP-1034)",
            none.clone(),
        ),
        (
            "test_elicitation_sep1330_enums",
            "Elicitation with enum variants (SEP-1330)",
            none,
        ),
        (
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            }),
        ),
    ];
    specs
        .into_iter()
        .filter_map(|(name, description, schema)| match schema {
            Value::Object(schema) => Some(Tool::new_with_raw(
                name,
                Some(description.into()),
                Arc::new(schema),
            )),
            _ => None,
        })
        .collect()
}

/// Runs a preset tool; `None` when `name` is not one.
pub(super) async fn call_tool(
    name: &str,
    args: Option<&JsonObject>,
    ctx: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResult, ErrorData>> {
    let arg = |key: &str| {
        args.and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let image = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
    Some(match name {
        "test_simple_text" => text_result("This is a simple text response for testing."),
        "test_image_content" => from_json(json!({"content": [image]})),
        "test_audio_content" => {
            from_json(json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}))
        }
        "test_embedded_resource" => from_json(json!({"content": [{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}]})),
        "test_multiple_content_types" => from_json(json!({"content": [
            {"type": "text", "text": "Multiple content types test:"},
            image,
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
        ]})),
        "test_error_handling" => from_json(json!({"isError": true, "content": [{"type": "text",
            "text": "This tool intentionally returns an error for testing"}]})),
        "test_tool_with_logging" => logging(ctx).await,
        "test_tool_with_progress" => progress(ctx).await,
        "test_sampling" => {
            let request = json!({"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": arg("prompt")}}],
                "maxTokens": 100}});
            match ask_client(ctx, request).await {
                Ok(answer) => {
                    let text = answer
                        .pointer("/content/text")
                        .and_then(Value::as_str)
                        .map_or_else(|| answer.to_string(), str::to_owned);
                    text_result(format!("LLM response: {text}"))
                }
                Err(e) => Err(e),
            }
        }
        "test_elicitation" => {
            let request = json!({"method": "elicitation/create", "params": {
                "message": arg("message"),
                "requestedSchema": {"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}},
                    "required": ["username", "email"]}}});
            match ask_client(ctx, request).await {
                Ok(answer) => text_result(format!("User response: {answer}")),
                Err(e) => Err(e),
            }
        }
        "test_elicitation_sep1034_defaults" => {
            elicitation(ctx, "Please review and update the form fields with defaults", json!({
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                    "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}
            }))
            .await
        }
        "test_elicitation_sep1330_enums" => {
            elicitation(ctx, "Test all 5 enum schema variants", json!({
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}}
            }))
            .await
        }
        "json_schema_2020_12_tool" => text_result(format!(
            "Received: {}",
            args.map_or_else(|| "{}".to_owned(), |a| Value::Object(a.clone()).to_string())
        )),
        _ => return None,
    })
}

async fn elicitation(
    ctx: &RequestContext<RoleServer>,
    message: &str,
    properties: Value,
) -> Result<CallToolResult, ErrorData> {
    let request = json!({"method": "elicitation/create", "params": {"message": message,
        "requestedSchema": {"type": "object", "properties": properties}}});
    let answer = ask_client(ctx, request).await?;
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or(json!({}));
    text_result(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Sends a server → client request and returns the client's result as JSON.
async fn ask_client(ctx: &RequestContext<RoleServer>, request: Value) -> Result<Value, ErrorData> {
    let request: ServerRequest = from_json(request)?;
    let answer = ctx
        .peer
        .send_request(request)
        .await
        .map_err(|e| ErrorData::internal_error(format!("the client refused: {e}"), None))?;
    serde_json::to_value(answer).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

async fn logging(ctx: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
    for (i, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let note: ServerNotification = from_json(json!({"method": "notifications/message",
            "params": {"level": "info", "logger": "conformance", "data": message}}))?;
        if let Err(e) = ctx.peer.send_notification(note).await {
            tracing::debug!("log notification failed: {e}");
        }
    }
    text_result("Tool with logging executed successfully")
}

async fn progress(ctx: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
    let token = ctx.meta.get_progress_token();
    for (i, value) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(token) = &token {
            let p =
                rmcp::model::ProgressNotificationParam::new(token.clone(), value).with_total(100.0);
            if let Err(e) = ctx.peer.notify_progress(p).await {
                tracing::debug!("progress notification failed: {e}");
            }
        }
    }
    text_result("Tool with progress executed successfully")
}

/// `resources/list`.
pub(super) fn resources() -> Result<ListResourcesResult, ErrorData> {
    from_json(json!({"resources": [
        {"uri": "test://static-text", "name": "static-text",
         "description": "A static text resource", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "static-binary",
         "description": "A static binary resource (PNG)", "mimeType": "image/png"},
        {"uri": "test://watched-resource", "name": "watched-resource",
         "description": "A resource clients can subscribe to", "mimeType": "text/plain"}
    ]}))
}

/// `resources/templates/list`.
pub(super) fn resource_templates() -> Result<ListResourceTemplatesResult, ErrorData> {
    from_json(json!({"resourceTemplates": [
        {"uriTemplate": "test://template/{id}/data", "name": "template-data",
         "description": "Data for an id", "mimeType": "application/json"}
    ]}))
}

/// `resources/read`.
pub(super) fn read_resource(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let contents = if uri == "test://static-text" {
        json!({"uri": uri, "mimeType": "text/plain",
               "text": "This is the content of the static text resource."})
    } else if uri == "test://static-binary" {
        json!({"uri": uri, "mimeType": "image/png", "blob": PNG})
    } else if uri == "test://watched-resource" {
        json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."})
    } else if let Some(id) = uri
        .strip_prefix("test://template/")
        .and_then(|rest| rest.strip_suffix("/data"))
    {
        let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        json!({"uri": uri, "mimeType": "application/json", "text": text.to_string()})
    } else {
        return Err(ErrorData::resource_not_found(
            format!("resource not found: {uri}"),
            None,
        ));
    };
    from_json(json!({"contents": [contents]}))
}

/// `prompts/list`.
pub(super) fn prompts() -> Result<ListPromptsResult, ErrorData> {
    from_json(json!({"prompts": [
        {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
        {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
         "arguments": [
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true}]},
        {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource",
         "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed",
                        "required": true}]},
        {"name": "test_prompt_with_image", "description": "A prompt with an image"}
    ]}))
}

/// `prompts/get`.
pub(super) fn get_prompt(
    name: &str,
    args: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let arg = |key: &str| {
        args.and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let user_text =
        |text: String| json!({"role": "user", "content": {"type": "text", "text": text}});
    let messages = match name {
        "test_simple_prompt" => json!([user_text("This is a simple prompt for testing.".into())]),
        "test_prompt_with_arguments" => json!([user_text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        ))]),
        "test_prompt_with_embedded_resource" => json!([
            {"role": "user", "content": {"type": "resource", "resource": {"uri": arg("resourceUri"),
                "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
            user_text("Please process the embedded resource above.".into())
        ]),
        "test_prompt_with_image" => json!([
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            user_text("Please analyze the image above.".into())
        ]),
        _ => {
            return Err(ErrorData::invalid_params(
                format!("prompt not found: {name}"),
                None,
            ));
        }
    };
    from_json(json!({"messages": messages}))
}

/// `completion/complete`: a few values starting with the typed prefix.
pub(super) fn complete(value: &str) -> Result<CompleteResult, ErrorData> {
    let values: Vec<&str> = ["paris", "park", "party", "test", "testing"]
        .into_iter()
        .filter(|v| v.starts_with(value))
        .collect();
    from_json(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
}
