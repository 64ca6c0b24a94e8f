//! OpenAI-compatible chat completions and the `GET {base_url}/models` preflight.

use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer, ser::SerializeSeq};
use serde_json::{Value, json};

use super::{
    ChatMessage, Completion, CompletionEndpoint, LlmError, Part, ToolCall, ToolDef, TurnRequest,
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

/// The chat completions request body, serialized from the turn as it stands: nothing is copied
/// into an intermediate JSON value. Members in this order: `model`, `messages` (the instruction
/// as a `system` message first when there is one), `tools` when there are any, then the request
/// parameters that are set (`top_k` not for native OpenAI).
#[derive(Serialize)]
pub(super) struct RequestBody<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Listed::is_empty")]
    tools: Listed<'a, ToolDef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

/// Builds the chat completions request body.
pub(super) fn request_body<'a>(turn: &TurnRequest<'a>) -> RequestBody<'a> {
    let params = turn.params;
    let top_k = params.top_k.filter(|_| {
        let native = is_native_openai(&turn.provider.base_url);
        if native {
            tracing::debug!(target: "pallas::llm", "top_k is not sent to native OpenAI");
        }
        !native
    });
    RequestBody {
        model: &turn.model.model,
        messages: Messages {
            instruction: turn.instruction,
            messages: turn.messages,
        },
        tools: Listed(turn.tools),
        temperature: params.temperature,
        top_p: params.top_p,
        top_k,
        max_tokens: params.max_tokens,
    }
}

/// The conversation as chat completions messages: one per message, one per tool result.
struct Messages<'a> {
    instruction: &'a str,
    messages: &'a [ChatMessage],
}

/// One chat completions message.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Listed::is_empty")]
        tool_calls: Listed<'a, ToolCall>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A user message's content: its text alone, or its parts.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    Parts(Listed<'a, Part>),
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if !self.instruction.is_empty() {
            seq.serialize_element(&WireMessage::System {
                content: self.instruction,
            })?;
        }
        for message in self.messages {
            match message {
                ChatMessage::User(parts) => seq.serialize_element(&WireMessage::User {
                    content: match parts.as_slice() {
                        [Part::Text(text)] => UserContent::Text(text),
                        parts => UserContent::Parts(Listed(parts)),
                    },
                })?,
                ChatMessage::Assistant { text, tool_calls } => {
                    seq.serialize_element(&WireMessage::Assistant {
                        content: text.as_deref(),
                        tool_calls: Listed(tool_calls),
                    })?;
                }
                ChatMessage::ToolResults(results) => {
                    for result in results {
                        seq.serialize_element(&WireMessage::Tool {
                            tool_call_id: &result.id,
                            content: &result.content,
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

/// A user message's parts: text and `image_url` data URLs.
impl Serialize for Listed<'_, Part> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for part in self.0 {
            match part {
                Part::Text(text) => {
                    seq.serialize_element(&json!({"type": "text", "text": text}))?
                }
                Part::Image { data, mime_type } => seq.serialize_element(&json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{mime_type};base64,{data}")},
                }))?,
            }
        }
        seq.end()
    }
}

/// A slice written as a chat completions array; what each element becomes is its `Serialize` impl.
struct Listed<'a, T>(&'a [T]);

impl<T> Listed<'_, T> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The tool calls of an assistant message, as the model made them: `arguments` as JSON text.
impl Serialize for Listed<'_, ToolCall> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
            })
        }))
    }
}

/// The tools offered to the model, as chat completions functions.
impl Serialize for Listed<'_, ToolDef> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            description: &'a str,
            parameters: &'a Value,
        }
        #[derive(Serialize)]
        struct Tool<'a> {
            r#type: &'static str,
            function: Function<'a>,
        }
        serializer.collect_seq(self.0.iter().map(|tool| Tool {
            r#type: "function",
            function: Function {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.input_schema,
            },
        }))
    }
}

/// The members of a chat completion the agent reads, parsed from the answer's bytes; every other
/// member is skipped without being built. An answer that does not parse into it is read whole as a
/// JSON value ([`From<Value>`]), so a malformed answer gets the same reading and the same error as
/// it always did.
#[derive(Debug, Deserialize)]
pub(super) struct Reply {
    choices: Option<Value>,
    usage: Option<Value>,
}

impl From<Value> for Reply {
    fn from(mut body: Value) -> Self {
        let mut take = |key: &str| body.as_object_mut().and_then(|map| map.remove(key));
        Reply {
            choices: take("choices"),
            usage: take("usage"),
        }
    }
}

/// Parses a chat completions response.
#[cfg(test)]
pub(super) fn parse_response(body: &Value) -> Result<Completion, String> {
    parse_reply(&Reply::from(body.clone()))
}

/// `choices[0].message`'s text and tool calls, and the `usage`.
pub(super) fn parse_reply(reply: &Reply) -> Result<Completion, String> {
    let message = reply
        .choices
        .as_ref()
        .and_then(first)
        .and_then(|choice| choice.get("message"))
        .ok_or("no choices[0].message")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function");
            let name = function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .ok_or("tool call without function.name")?;
            let arguments = match function.and_then(|f| f.get("arguments")) {
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
    let usage = reply.usage.as_ref().map(parse_usage).unwrap_or_default();
    Ok(Completion {
        text,
        tool_calls,
        usage,
    })
}

/// The member `0` of `choices`, as a JSON Pointer reads it: an array's first element, or an
/// object's member named "0". (`Value::pointer` would allocate each token it unescapes.)
fn first(choices: &Value) -> Option<&Value> {
    match choices {
        Value::Array(items) => items.first(),
        Value::Object(map) => map.get("0"),
        _ => None,
    }
}

fn parse_usage(usage: &Value) -> TokenUsage {
    let number = |path: &[&str]| {
        path.iter()
            .try_fold(usage, |value, key| value.get(*key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let prompt = number(&["prompt_tokens"]);
    let cached = number(&["prompt_tokens_details", "cached_tokens"]);
    TokenUsage {
        input: prompt.saturating_sub(cached),
        output: number(&["completion_tokens"]),
        cache_read: 0,
        cache_write: 0,
        cache_hit: cached,
        reasoning: number(&["completion_tokens_details", "reasoning_tokens"]),
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
        .filter(|_| {
            (provider == Provider::HuggingFace && !crate::defect!("hf-no-passthrough"))
                || crate::defect!("mr-bearer-replaces-provider-key")
        })
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
    let reply: Reply = exchange_json(request, provider, &url, turn.provider.timeout).await?;
    parse_reply(&reply).map_err(|reason| LlmError::Malformed { provider, reason })
}

/// `GET {base_url}/models`, checking `model` is listed. `None` when healthy.
pub(super) async fn preflight(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    model: Option<&str>,
    timeout: Duration,
) -> Option<String> {
    // `nx-preflight-base-url-env-only`: `os.environ.get("OPENAI_BASE_URL", default)`, whatever
    // `base_url` the files write.
    #[cfg(feature = "defects")]
    let env_base_url =
        crate::defect!("nx-preflight-base-url-env-only").then(crate::defects::openai_env_base_url);
    #[cfg(feature = "defects")]
    let base_url = env_base_url
        .as_deref()
        .unwrap_or(provider.base_url.as_str());
    #[cfg(not(feature = "defects"))]
    let base_url = provider.base_url.as_str();
    let url = match model {
        Some(model) if crate::defect!("openai-preflight-retrieves-model") => {
            endpoint(base_url, &format!("models/{model}"))
        }
        // `qx-models-url-via-urljoin`: `urljoin(base_url, "models")`.
        #[cfg(feature = "defects")]
        _ if crate::defect!("qx-models-url-via-urljoin") => {
            crate::defects::urljoin(base_url, "models")
        }
        _ => endpoint(base_url, "models"),
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
        // `nx-preflight-any-200-ok`: one routine for the active and inactive checks, any 200 a
        // pass.
        200..=299 if crate::defect!("nx-preflight-any-200-ok") => return None,
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
    } else if crate::defect!("fm-model-after-last-dot") {
        model.rsplit('.').next().unwrap_or(model)
    } else {
        model
    };
    let listed = listing
        .get("data")
        .and_then(Value::as_array)
        .is_some_and(|models| {
            models.iter().any(|entry| {
                let id = entry.get("id").and_then(Value::as_str);
                // `mr-preflight-model-substring`: a listed id containing the model will do.
                id == Some(model)
                    || (crate::defect!("mr-preflight-model-substring")
                        && id.is_some_and(|id| id.contains(model)))
            })
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

    /// The request body as a JSON value.
    fn body_value(turn: &TurnRequest<'_>) -> Value {
        serde_json::to_value(request_body(turn)).expect("the body serializes")
    }

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
    fn the_body_is_written_member_by_member_in_the_documented_order() {
        let model = ModelRef {
            provider: Provider::OpenAi,
            model: "m".into(),
        };
        let provider = ProviderSettings::new("http://x/v1");
        let caps = ModelCapabilities::default();
        let params = RequestParams {
            temperature: Some(0.7),
            top_p: Some(0.1),
            top_k: Some(3),
            max_tokens: Some(9),
            ..RequestParams::default()
        };
        let call = |id: &str, name: &str, arguments: Value| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        };
        let result = |id: &str, name: &str, content: &str| ToolResult {
            id: id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        };
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
                tool_calls: vec![
                    call("c1", "argos__search", json!({"q": "x"})),
                    call("c2", "b", json!("raw")),
                ],
            },
            ChatMessage::ToolResults(vec![
                result("c1", "argos__search", "found"),
                result("c2", "b", "x\ny"),
            ]),
            ChatMessage::Assistant {
                text: Some("done".into()),
                tool_calls: Vec::new(),
            },
            ChatMessage::User(vec![Part::Text("again \u{e9}".into())]),
        ];
        let tools = [ToolDef {
            name: "argos__search".into(),
            description: "d".into(),
            input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        }];
        let turn = turn_fixture(&model, &provider, &params, &caps, &messages, &tools);
        let text = serde_json::to_string(&request_body(&turn)).expect("serializes");
        assert_eq!(
            text,
            r#"{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"argos__search","arguments":"{\"q\":\"x\"}"}},{"id":"c2","type":"function","function":{"name":"b","arguments":"\"raw\""}}]},{"role":"tool","tool_call_id":"c1","content":"found"},{"role":"tool","tool_call_id":"c2","content":"x\ny"},{"role":"assistant","content":"done"},{"role":"user","content":"again é"}],"tools":[{"type":"function","function":{"name":"argos__search","description":"d","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}],"temperature":0.7,"top_p":0.1,"top_k":3,"max_tokens":9}"#
        );
        let defaults = RequestParams::default();
        let mut bare = turn_fixture(&model, &provider, &defaults, &caps, &messages[4..], &[]);
        bare.instruction = "";
        let text = serde_json::to_string(&request_body(&bare)).expect("serializes");
        assert_eq!(
            text,
            r#"{"model":"m","messages":[{"role":"user","content":"again é"}]}"#
        );
    }

    #[test]
    fn an_answer_reads_the_same_from_its_bytes_and_from_its_value() {
        let answers = [
            r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}}"#,
            r#"{"choices":{"0":{"message":{"content":"member zero"}}}}"#,
            r#"{"choices":null,"usage":null}"#,
            r#"{"choices":[{"message":{"content":"first"}}],"choices":[{"message":{"content":"last"}}]}"#,
            r#"[1,2]"#,
            r#""text""#,
        ];
        for answer in answers {
            let value: Value = serde_json::from_str(answer).expect("JSON");
            let from_value = parse_reply(&Reply::from(value));
            let from_bytes = serde_json::from_str::<Reply>(answer)
                .map(|reply| parse_reply(&reply))
                .unwrap_or_else(|_| from_value.clone());
            assert_eq!(from_bytes, from_value, "{answer}");
        }
        let reply = serde_json::from_str::<Reply>(answers[0]).expect("parses");
        let completion = parse_reply(&reply).expect("reads");
        assert_eq!(completion.text.as_deref(), Some("hi"));
        assert_eq!((completion.usage.input, completion.usage.cache_hit), (4, 1));
        let member_zero = parse_reply(&Reply::from(
            serde_json::from_str::<Value>(answers[1]).expect("JSON"),
        ));
        assert_eq!(
            member_zero.expect("reads").text.as_deref(),
            Some("member zero")
        );
        for not_an_answer in &answers[2..] {
            if not_an_answer.contains("first") {
                continue;
            }
            let value: Value = serde_json::from_str(not_an_answer).expect("JSON");
            assert_eq!(
                parse_reply(&Reply::from(value)),
                Err("no choices[0].message".to_owned()),
                "{not_an_answer}"
            );
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
        let body = body_value(&turn_fixture(
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
        let body = body_value(&turn_fixture(
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
