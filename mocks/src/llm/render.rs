//! Rendering a neutral [`Reply`] in each provider's wire format: JSON bodies, SSE events, error
//! shapes and model listings.

use bytes::Bytes;
use serde_json::{Value, json};

use super::script::Reply;
use crate::spec::{Dialect, UsageSpec};

/// Per-response identifiers and figures, decided by the server.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub(crate) id: String,
    pub(crate) model: String,
    pub(crate) created: i64,
    pub(crate) usage: UsageSpec,
    /// Ids for tool calls without one (same length as the reply's calls).
    pub(crate) call_ids: Vec<String>,
}

fn args_string(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        v.to_string()
    }
}

fn args_object(v: &Value) -> Value {
    if v.is_null() { json!({}) } else { v.clone() }
}

fn openai_usage(u: &UsageSpec) -> Value {
    json!({
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
    })
}

fn anthropic_usage(u: &UsageSpec) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
    })
}

/// The non-streaming body.
pub(crate) fn body(dialect: Dialect, reply: &Reply, meta: &Meta) -> Value {
    match dialect {
        Dialect::Openai => {
            let mut message = json!({"role": "assistant", "content": reply.text, "refusal": null});
            if !reply.tool_calls.is_empty() {
                message["tool_calls"] = reply
                    .tool_calls
                    .iter()
                    .zip(&meta.call_ids)
                    .map(|(c, id)| {
                        json!({"id": id, "type": "function",
                            "function": {"name": c.name, "arguments": args_string(&c.arguments)}})
                    })
                    .collect();
            }
            let finish = if reply.tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            json!({
                "id": meta.id, "object": "chat.completion", "created": meta.created,
                "model": meta.model,
                "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
                "usage": openai_usage(&meta.usage),
            })
        }
        Dialect::Anthropic => {
            let mut content = Vec::new();
            if let Some(t) = &reply.text {
                content.push(json!({"type": "text", "text": t}));
            }
            for (c, id) in reply.tool_calls.iter().zip(&meta.call_ids) {
                content.push(json!({"type": "tool_use", "id": id, "name": c.name,
                    "input": args_object(&c.arguments)}));
            }
            let stop = if reply.tool_calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            json!({
                "id": meta.id, "type": "message", "role": "assistant", "model": meta.model,
                "content": content, "stop_reason": stop, "stop_sequence": null,
                "usage": anthropic_usage(&meta.usage),
            })
        }
    }
}

/// Splits text into streaming pieces at word boundaries (whitespace stays with the word).
fn pieces(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return vec![""];
    }
    text.split_inclusive(' ').collect()
}

/// Splits a JSON argument string in two halves (on a char boundary) so clients must concatenate.
fn halves(s: &str) -> Vec<&str> {
    if s.len() < 2 {
        return vec![s];
    }
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    vec![&s[..mid], &s[mid..]]
}

fn sse_data(v: &Value) -> Bytes {
    Bytes::from(format!("data: {v}\n\n"))
}

fn sse_event(name: &str, v: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {v}\n\n"))
}

/// The streaming body as SSE chunks, one element per event.
pub(crate) fn stream_events(
    dialect: Dialect,
    reply: &Reply,
    meta: &Meta,
    include_usage: bool,
) -> Vec<Bytes> {
    match dialect {
        Dialect::Openai => openai_stream(reply, meta, include_usage),
        Dialect::Anthropic => anthropic_stream(reply, meta),
    }
}

fn openai_stream(reply: &Reply, meta: &Meta, include_usage: bool) -> Vec<Bytes> {
    let chunk = |delta: Value, finish: Value| {
        let mut c = json!({
            "id": meta.id, "object": "chat.completion.chunk", "created": meta.created,
            "model": meta.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        sse_data(&c)
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    if let Some(text) = &reply.text {
        for p in pieces(text) {
            out.push(chunk(json!({"content": p}), Value::Null));
        }
    }
    for (i, (c, id)) in reply.tool_calls.iter().zip(&meta.call_ids).enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": c.name, "arguments": ""}}]}),
            Value::Null,
        ));
        let args = args_string(&c.arguments);
        if !args.is_empty() {
            for h in halves(&args) {
                out.push(chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": h}}]}),
                    Value::Null,
                ));
            }
        }
    }
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(json!({}), json!(finish)));
    if include_usage {
        out.push(sse_data(&json!({
            "id": meta.id, "object": "chat.completion.chunk", "created": meta.created,
            "model": meta.model, "choices": [], "usage": openai_usage(&meta.usage),
        })));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

fn anthropic_stream(reply: &Reply, meta: &Meta) -> Vec<Bytes> {
    let start_usage = json!({
        "input_tokens": meta.usage.input_tokens, "output_tokens": 1,
        "cache_creation_input_tokens": meta.usage.cache_write_tokens,
        "cache_read_input_tokens": meta.usage.cache_read_tokens,
    });
    let mut out = vec![sse_event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": meta.id, "type": "message", "role": "assistant", "model": meta.model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    )];
    out.push(sse_event("ping", &json!({"type": "ping"})));
    let mut index = 0usize;
    if let Some(text) = &reply.text {
        out.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}),
        ));
        for p in pieces(text) {
            out.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": p}}),
            ));
        }
        out.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (c, id) in reply.tool_calls.iter().zip(&meta.call_ids) {
        out.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": c.name, "input": {}}}),
        ));
        let args = args_object(&c.arguments).to_string();
        let parts = if args == "{}" {
            vec![""]
        } else {
            halves(&args)
        };
        for h in parts {
            out.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": h}}),
            ));
        }
        out.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": meta.usage.output_tokens}}),
    ));
    out.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    out
}

/// The provider's error body for `status`.
pub(crate) fn error_body(dialect: Dialect, status: u16, message: &str) -> Value {
    match dialect {
        Dialect::Openai => {
            let (kind, code) = match status {
                400 => ("invalid_request_error", Value::Null),
                401 => ("invalid_request_error", json!("invalid_api_key")),
                403 => (
                    "invalid_request_error",
                    json!("unsupported_country_region_territory"),
                ),
                404 => ("invalid_request_error", json!("model_not_found")),
                429 => ("requests", json!("rate_limit_exceeded")),
                503 | 529 => ("server_error", json!("overloaded")),
                _ => ("server_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Dialect::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
}

/// A default message for an injected error status.
pub(crate) fn default_error_message(status: u16) -> &'static str {
    match status {
        400 => "Invalid request.",
        401 => "Incorrect API key provided.",
        403 => "Forbidden.",
        404 => "The model does not exist or you do not have access to it.",
        429 => "Rate limit reached. Please try again later.",
        529 => "Overloaded.",
        _ => "The server had an error while processing your request.",
    }
}

/// One model object.
pub(crate) fn model_object(dialect: Dialect, id: &str) -> Value {
    match dialect {
        Dialect::Openai => {
            json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "pallas-mocks"})
        }
        Dialect::Anthropic => json!({"type": "model", "id": id, "display_name": id,
            "created_at": "2025-01-01T00:00:00Z"}),
    }
}

/// The model listing.
pub(crate) fn model_list(dialect: Dialect, models: &[String]) -> Value {
    let data: Vec<Value> = models.iter().map(|m| model_object(dialect, m)).collect();
    match dialect {
        Dialect::Openai => json!({"object": "list", "data": data}),
        Dialect::Anthropic => json!({"data": data, "has_more": false,
            "first_id": models.first(), "last_id": models.last()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::script::Call;

    fn meta(n: usize) -> Meta {
        Meta {
            id: "x".into(),
            model: "m".into(),
            created: 0,
            usage: UsageSpec::default(),
            call_ids: (0..n).map(|i| format!("c{i}")).collect(),
        }
    }

    fn calls() -> Reply {
        Reply {
            text: None,
            tool_calls: vec![
                Call {
                    id: None,
                    name: "a__b".into(),
                    arguments: json!({"q": "é long"}),
                },
                Call {
                    id: None,
                    name: "c__d".into(),
                    arguments: Value::Null,
                },
            ],
            usage: None,
        }
    }

    #[test]
    fn openai_parallel_calls_carry_their_index_and_concatenate_to_the_arguments() {
        let ev = openai_stream(&calls(), &meta(2), false);
        let mut args = ["".to_string(), "".to_string()];
        for e in &ev[..ev.len() - 1] {
            let s = std::str::from_utf8(e).unwrap();
            let v: Value = serde_json::from_str(s.trim_start_matches("data: ").trim()).unwrap();
            if let Some(tc) = v.pointer("/choices/0/delta/tool_calls/0") {
                let i = tc["index"].as_u64().unwrap() as usize;
                args[i].push_str(tc["function"]["arguments"].as_str().unwrap());
            }
        }
        assert_eq!(args[0], r#"{"q":"é long"}"#);
        assert_eq!(args[1], "");
        assert_eq!(ev.last().unwrap().as_ref(), b"data: [DONE]\n\n");
    }

    #[test]
    fn anthropic_stream_uses_input_json_deltas_per_block_index() {
        let ev = anthropic_stream(&calls(), &meta(2));
        let joined: String = ev.iter().map(|b| std::str::from_utf8(b).unwrap()).collect();
        assert!(joined.starts_with("event: message_start\n"));
        assert!(
            joined.contains(r#""index":1,"delta":{"type":"input_json_delta","partial_json":""}"#)
        );
        assert!(joined.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
    }

    #[test]
    fn error_shapes_follow_each_provider() {
        assert_eq!(
            error_body(Dialect::Openai, 429, "m")["error"]["code"],
            "rate_limit_exceeded"
        );
        assert_eq!(
            error_body(Dialect::Anthropic, 529, "m")["error"]["type"],
            "overloaded_error"
        );
        assert_eq!(error_body(Dialect::Anthropic, 401, "m")["type"], "error");
    }
}
