//! OpenAI-compatible chat completions and the `GET {base_url}/models` preflight.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    ChatMessage, Completion, CompletionEndpoint, LlmError, Part, ToolCall, TurnRequest,
    describe_reqwest_error, error_message, exchange_json, with_key,
};
use crate::metrics::TokenUsage;
use crate::settings::{Provider, ProviderSettings};

/// Whether `base_url` is OpenAI's own API (which takes no `top_k`).
fn is_native_openai(base_url: &str) -> bool {
    base_url.contains("api.openai.com")
}

fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}/{path}", base_url.trim_end_matches('/'))
}

/// `{base_url}/chat/completions`.
pub(super) fn completion_url(base_url: &str) -> String {
    endpoint(base_url, "chat/completions")
}

/// Builds the chat completions request body.
pub(super) fn request_body(turn: &TurnRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(turn.messages.len() + 1);
    if !turn.instruction.is_empty() {
        messages.push(json!({"role": "system", "content": turn.instruction}));
    }
    for message in turn.messages {
        match message {
            ChatMessage::User(parts) => messages.push(user_message(parts)),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut entry = Map::new();
                entry.insert("role".into(), "assistant".into());
                entry.insert(
                    "content".into(),
                    text.clone().map(Value::String).unwrap_or(Value::Null),
                );
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments.to_string()},
                            })
                        })
                        .collect();
                    entry.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(entry));
            }
            ChatMessage::ToolResults(results) => {
                for result in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": result.id,
                        "content": result.content,
                    }));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), turn.model.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    if !turn.tools.is_empty() {
        let tools: Vec<Value> = turn
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let params = turn.params;
    if let Some(temperature) = params.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = params.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if let Some(top_k) = params.top_k {
        if is_native_openai(&turn.provider.base_url) {
            tracing::debug!(target: "pallas::llm", "top_k is not sent to native OpenAI");
        } else {
            body.insert("top_k".into(), json!(top_k));
        }
    }
    if let Some(max_tokens) = params.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    Value::Object(body)
}

fn user_message(parts: &[Part]) -> Value {
    if let [Part::Text(text)] = parts {
        return json!({"role": "user", "content": text});
    }
    let content: Vec<Value> = parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => json!({"type": "text", "text": text}),
            Part::Image { data, mime_type } => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{mime_type};base64,{data}")},
            }),
        })
        .collect();
    json!({"role": "user", "content": content})
}

/// Parses a chat completions response.
pub(super) fn parse_response(body: &Value) -> Result<Completion, String> {
    let message = body
        .pointer("/choices/0/message")
        .ok_or("no choices[0].message")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or("tool call without function.name")?;
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(raw)) if raw.trim().is_empty() => json!({}),
                Some(Value::String(raw)) => {
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
                }
                Some(Value::Object(map)) => Value::Object(map.clone()),
                _ => json!({}),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("call_{index}"));
            tool_calls.push(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    let usage = body.get("usage").map(parse_usage).unwrap_or_default();
    Ok(Completion {
        text,
        tool_calls,
        usage,
    })
}

fn parse_usage(usage: &Value) -> TokenUsage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let prompt = number("/prompt_tokens");
    let cached = number("/prompt_tokens_details/cached_tokens");
    TokenUsage {
        input: prompt.saturating_sub(cached),
        output: number("/completion_tokens"),
        cache_read: 0,
        cache_write: 0,
        cache_hit: cached,
        reasoning: number("/completion_tokens_details/reasoning_tokens"),
    }
}

pub(super) async fn complete(
    http: &reqwest::Client,
    turn: &TurnRequest<'_>,
) -> Result<Completion, LlmError> {
    let (url, post) = CompletionEndpoint::post(turn.endpoint, http, || {
        completion_url(&turn.provider.base_url)
    });
    let body = request_body(turn);
    let provider = turn.model.provider;
    // Seed 001: the inbound bearer is the credential of a token-passthrough provider.
    let passthrough = turn
        .bearer
        .filter(|_| provider == Provider::HuggingFace && !crate::defect!("hf-no-passthrough"))
        .cloned();
    #[cfg(feature = "defects")]
    let passthrough = passthrough.or_else(|| {
        crate::defect!("bearer-to-llm")
            .then(crate::defects::last_inbound)
            .flatten()
    });
    let key = passthrough.or_else(|| turn.provider.api_key.clone());
    let request = with_key(
        post.timeout(turn.provider.timeout).json(&body),
        provider,
        key.as_ref(),
    );
    let value = exchange_json(request, provider, &url, turn.provider.timeout).await?;
    parse_response(&value).map_err(|reason| LlmError::Malformed { provider, reason })
}

/// `GET {base_url}/models`, checking `model` is listed. `None` when healthy.
pub(super) async fn preflight(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    model: Option<&str>,
    timeout: Duration,
) -> Option<String> {
    let url = match model {
        Some(model) if crate::defect!("openai-preflight-retrieves-model") => {
            endpoint(&provider.base_url, &format!("models/{model}"))
        }
        _ => endpoint(&provider.base_url, "models"),
    };
    let request = with_key(
        http.get(&url).timeout(timeout),
        Provider::OpenAi,
        provider.api_key.as_ref(),
    );
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => {
            return Some(format!(
                "{url} unreachable: {}",
                describe_reqwest_error(&error, timeout)
            ));
        }
    };
    let status = response.status();
    let body = match response.text().await {
        Ok(body) => body,
        Err(error) => return Some(describe_reqwest_error(&error, timeout)),
    };
    match status.as_u16() {
        200..=299 => {}
        401 | 403 => return Some(format!("API key rejected (HTTP {})", status.as_u16())),
        code => return Some(format!("HTTP {code}: {}", error_message(&body))),
    }
    let Ok(listing) = serde_json::from_str::<Value>(&body) else {
        return Some("model listing is not JSON".to_owned());
    };
    // A provider that is not active: the listing answered, the key is good.
    let model = model?;
    let model = if crate::defect!("cm-preflight-model-first-segment") {
        model.split('.').next().unwrap_or(model)
    } else {
        model
    };
    let listed = listing
        .get("data")
        .and_then(Value::as_array)
        .is_some_and(|models| {
            models
                .iter()
                .any(|entry| entry.get("id").and_then(Value::as_str) == Some(model))
        });
    if listed || crate::defect!("openai-preflight-model-unchecked") {
        None
    } else {
        Some(format!("model '{model}' not found"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ToolDef, ToolResult};
    use crate::settings::{ModelCapabilities, ModelRef, RequestParams};

    fn turn_fixture<'a>(
        model: &'a ModelRef,
        provider: &'a ProviderSettings,
        params: &'a RequestParams,
        capabilities: &'a ModelCapabilities,
        messages: &'a [ChatMessage],
        tools: &'a [ToolDef],
    ) -> TurnRequest<'a> {
        TurnRequest {
            model,
            provider,
            params,
            capabilities,
            instruction: "be brief",
            messages,
            tools,
            bearer: None,
            endpoint: None,
        }
    }

    #[test]
    fn top_k_goes_to_compatible_servers_but_not_to_native_openai() {
        let model = ModelRef {
            provider: Provider::OpenAi,
            model: "m".into(),
        };
        let params = RequestParams {
            temperature: Some(0.5),
            top_p: Some(0.9),
            top_k: Some(40),
            max_tokens: Some(100),
            ..RequestParams::default()
        };
        let caps = ModelCapabilities::default();
        let messages = [ChatMessage::User(vec![Part::Text("hi".into())])];
        let local = ProviderSettings::new("http://127.0.0.1:9/v1");
        let body = request_body(&turn_fixture(
            &model,
            &local,
            &params,
            &caps,
            &messages,
            &[],
        ));
        assert_eq!(body["top_k"], json!(40));
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["top_p"], json!(0.9));
        assert_eq!(body["max_tokens"], json!(100));
        assert_eq!(body["messages"][0]["role"], "system");
        assert!(body.get("tools").is_none());
        let native = ProviderSettings::new("https://api.openai.com/v1");
        let body = request_body(&turn_fixture(
            &model,
            &native,
            &params,
            &caps,
            &messages,
            &[],
        ));
        assert!(body.get("top_k").is_none());
        assert_eq!(body["temperature"], json!(0.5));
    }

    #[test]
    fn images_and_tool_rounds_use_the_chat_completions_shapes() {
        let model = ModelRef {
            provider: Provider::OpenAi,
            model: "m".into(),
        };
        let provider = ProviderSettings::new("http://x/v1");
        let params = RequestParams::default();
        let caps = ModelCapabilities::default();
        let messages = [
            ChatMessage::User(vec![
                Part::Text("look".into()),
                Part::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ]),
            ChatMessage::Assistant {
                text: None,
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "argos__search".into(),
                    arguments: json!({"q": "x"}),
                }],
            },
            ChatMessage::ToolResults(vec![ToolResult {
                id: "c1".into(),
                name: "argos__search".into(),
                content: "found".into(),
                is_error: false,
            }]),
        ];
        let tools = [ToolDef {
            name: "argos__search".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        }];
        let body = request_body(&turn_fixture(
            &model, &provider, &params, &caps, &messages, &tools,
        ));
        assert_eq!(
            body["messages"][1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"q\":\"x\"}"
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["name"], "argos__search");
    }

    #[test]
    fn responses_yield_text_tool_calls_and_usage() {
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "s__t", "arguments": "{\"q\":1}"}}
            ]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4,
                      "prompt_tokens_details": {"cached_tokens": 3},
                      "completion_tokens_details": {"reasoning_tokens": 2}}
        });
        let completion = parse_response(&body).unwrap();
        assert_eq!(completion.text, None);
        assert_eq!(completion.tool_calls[0].arguments, json!({"q": 1}));
        assert_eq!(completion.usage.input, 7);
        assert_eq!(completion.usage.cache_hit, 3);
        assert_eq!(completion.usage.output, 4);
        assert_eq!(completion.usage.reasoning, 2);
        assert!(parse_response(&json!({"nope": 1})).is_err());
    }
}
