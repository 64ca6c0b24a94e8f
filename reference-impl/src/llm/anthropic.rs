//! Anthropic messages and the `GET /v1/models/{model}` preflight.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    ChatMessage, Completion, CompletionEndpoint, LlmError, Part, ToolCall, TurnRequest,
    describe_reqwest_error, error_message, exchange_json, with_key,
};
use crate::metrics::TokenUsage;
use crate::settings::{Provider, ProviderSettings};

/// `{root}/v1/{path}`, accepting a base URL with or without a trailing `/v1`.
fn endpoint(base_url: &str, path: &str) -> String {
    let root = base_url.trim_end_matches('/');
    let root = root.strip_suffix("/v1").unwrap_or(root);
    format!("{root}/v1/{path}")
}

/// `{root}/v1/messages`.
pub(super) fn completion_url(base_url: &str) -> String {
    endpoint(base_url, "messages")
}

/// Whether the model takes no sampling parameters (Claude Opus 4.7).
pub(super) fn strips_sampling(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    model.contains("opus-4-7") || model.contains("opus-4.7")
}

/// Builds the messages request body.
pub(super) fn request_body(turn: &TurnRequest<'_>) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(turn.messages.len());
    for message in turn.messages {
        match message {
            ChatMessage::User(parts) => {
                let content: Vec<Value> = parts
                    .iter()
                    .map(|part| match part {
                        Part::Text(text) => json!({"type": "text", "text": text}),
                        Part::Image { data, mime_type } => json!({
                            "type": "image",
                            "source": {"type": "base64", "media_type": mime_type, "data": data},
                        }),
                    })
                    .collect();
                messages.push(json!({"role": "user", "content": content}));
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let mut content = Vec::new();
                if let Some(text) = text {
                    content.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    content.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments,
                    }));
                }
                messages.push(json!({"role": "assistant", "content": content}));
            }
            ChatMessage::ToolResults(results) => {
                let content: Vec<Value> = results
                    .iter()
                    .map(|result| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": result.id,
                            "content": result.content,
                            "is_error": result.is_error,
                        })
                    })
                    .collect();
                messages.push(json!({"role": "user", "content": content}));
            }
        }
    }
    let params = turn.params;
    let max_tokens = params
        .max_tokens
        .map(u64::from)
        .unwrap_or(turn.capabilities.max_output_tokens);
    let mut body = Map::new();
    body.insert("model".into(), turn.model.model.clone().into());
    body.insert("max_tokens".into(), json!(max_tokens));
    if !turn.instruction.is_empty() {
        body.insert("system".into(), turn.instruction.into());
    }
    body.insert("messages".into(), Value::Array(messages));
    if !turn.tools.is_empty() {
        let tools: Vec<Value> = turn
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let has_sampling =
        params.temperature.is_some() || params.top_p.is_some() || params.top_k.is_some();
    // `px-sampling-params-stripped-for-all-anthropic`: Pallas's own pass strips them for every
    // Anthropic model.
    if has_sampling
        && (strips_sampling(&turn.model.model)
            || crate::defect!("px-sampling-params-stripped-for-all-anthropic"))
    {
        tracing::warn!(
            target: "pallas::llm",
            model = %turn.model.model,
            "temperature/top_p/top_k are not supported by this model and were not sent"
        );
    } else {
        if let Some(temperature) = params.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(top_p) = params.top_p {
            body.insert("top_p".into(), json!(top_p));
        }
        if let Some(top_k) = params.top_k {
            body.insert("top_k".into(), json!(top_k));
        }
    }
    Value::Object(body)
}

/// Parses a messages response.
pub(super) fn parse_response(body: &Value) -> Result<Completion, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no content array")?;
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    texts.push(text.to_owned());
                }
            }
            Some("tool_use") => {
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or("tool_use without id")?;
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("tool_use without name")?;
                tool_calls.push(ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
                });
            }
            _ => {}
        }
    }
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    let usage = body.get("usage").map(parse_usage).unwrap_or_default();
    Ok(Completion {
        text,
        tool_calls,
        usage,
    })
}

fn parse_usage(usage: &Value) -> TokenUsage {
    let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    TokenUsage {
        input: number("input_tokens"),
        output: number("output_tokens"),
        cache_read: number("cache_read_input_tokens"),
        cache_write: number("cache_creation_input_tokens"),
        cache_hit: 0,
        reasoning: 0,
    }
}

fn request(
    builder: reqwest::RequestBuilder,
    provider: &ProviderSettings,
) -> reqwest::RequestBuilder {
    with_key(
        builder.header("anthropic-version", &provider.anthropic_version),
        Provider::Anthropic,
        provider.api_key.as_ref(),
    )
}

pub(super) async fn complete(
    http: &reqwest::Client,
    turn: &TurnRequest<'_>,
) -> Result<Completion, LlmError> {
    let (url, post) = CompletionEndpoint::post(turn.endpoint, http, || {
        completion_url(&turn.provider.base_url)
    });
    let body = request_body(turn);
    // `mr-bearer-replaces-provider-key`: the inbound bearer stands in for the API key.
    let swapped = turn
        .bearer
        .filter(|_| crate::defect!("mr-bearer-replaces-provider-key"))
        .map(|bearer| ProviderSettings {
            api_key: Some(bearer.clone()),
            ..turn.provider.clone()
        });
    let value = exchange_json(
        request(
            post.timeout(turn.provider.timeout).json(&body),
            swapped.as_ref().unwrap_or(turn.provider),
        ),
        Provider::Anthropic,
        &url,
        turn.provider.timeout,
    )
    .await?;
    parse_response(&value).map_err(|reason| LlmError::Malformed {
        provider: Provider::Anthropic,
        reason,
    })
}

/// `GET /v1/models/{model}`. `None` when healthy.
pub(super) async fn preflight(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    model: &str,
    timeout: Duration,
) -> Option<String> {
    let model = if crate::defect!("fm-model-after-last-dot") {
        model.rsplit('.').next().unwrap_or(model)
    } else {
        model
    };
    let url = if crate::defect!("anthropic-preflight-lists-models") {
        endpoint(&provider.base_url, "models")
    } else {
        endpoint(&provider.base_url, &format!("models/{model}"))
    };
    // `rx-anthropic-preflight-bearer-auth`: one preflight helper for both providers, with
    // `Authorization: Bearer`.
    let get = if crate::defect!("rx-anthropic-preflight-bearer-auth") {
        let get = http.get(&url).timeout(timeout);
        match &provider.api_key {
            Some(key) => get.bearer_auth(key.expose()),
            None => get,
        }
    } else {
        request(http.get(&url).timeout(timeout), provider)
    };
    let response = match get.send().await {
        Ok(response) => response,
        Err(error) => {
            return Some(format!(
                "{url} unreachable: {}",
                describe_reqwest_error(&error, timeout)
            ));
        }
    };
    let status = response.status().as_u16();
    match status {
        200..=299 => None,
        404 => Some(format!("model '{model}' not found")),
        401 | 403 => Some(format!("API key rejected (HTTP {status})")),
        code => {
            let body = response.text().await.unwrap_or_default();
            Some(format!("HTTP {code}: {}", error_message(&body)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{ModelCapabilities, ModelRef, RequestParams};

    #[test]
    fn opus_4_7_gets_no_sampling_parameters_and_others_do() {
        let params = RequestParams {
            temperature: Some(0.2),
            top_p: Some(0.8),
            top_k: Some(5),
            ..RequestParams::default()
        };
        let provider = ProviderSettings::new("http://127.0.0.1:1");
        let caps = ModelCapabilities::default();
        let messages = [ChatMessage::User(vec![Part::Text("hi".into())])];
        for (name, sends) in [("claude-opus-4-7", false), ("claude-sonnet-4-5", true)] {
            let model = ModelRef {
                provider: Provider::Anthropic,
                model: name.into(),
            };
            let turn = TurnRequest {
                model: &model,
                provider: &provider,
                params: &params,
                capabilities: &caps,
                instruction: "sys",
                messages: &messages,
                tools: &[],
                bearer: None,
                endpoint: None,
            };
            let body = request_body(&turn);
            assert_eq!(body.get("top_k").is_some(), sends, "{name}");
            assert_eq!(body.get("temperature").is_some(), sends, "{name}");
            assert_eq!(body["max_tokens"], json!(16384));
            assert_eq!(body["system"], "sys");
        }
    }

    #[test]
    fn endpoint_accepts_roots_with_and_without_v1() {
        assert_eq!(endpoint("http://h:1", "messages"), "http://h:1/v1/messages");
        assert_eq!(
            endpoint("http://h:1/v1/", "messages"),
            "http://h:1/v1/messages"
        );
    }

    #[test]
    fn responses_yield_text_tool_uses_and_cache_usage() {
        let body = json!({
            "content": [{"type": "text", "text": "let me"},
                        {"type": "tool_use", "id": "t1", "name": "a__b", "input": {"x": 1}}],
            "usage": {"input_tokens": 5, "output_tokens": 6,
                      "cache_read_input_tokens": 7, "cache_creation_input_tokens": 8}
        });
        let completion = parse_response(&body).unwrap();
        assert_eq!(completion.text.as_deref(), Some("let me"));
        assert_eq!(completion.tool_calls[0].name, "a__b");
        assert_eq!(completion.usage.cache_read, 7);
        assert_eq!(completion.usage.cache_write, 8);
    }
}
