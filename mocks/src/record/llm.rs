//! Recording a provider: completions become script turns keyed so a tool loop replays call by
//! call; model listings become the mock's `models`.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::Value;

use super::proxy::{Answer, forward, read_body, tee};
use super::{Shared, sse};
use crate::llm::conversation::Conversation;
use crate::spec::{
    Dialect, Exhausted, FaultSpec, LlmMockSpec, MatchSpec, ToolCallSpec, TurnSpec, UsageSpec,
};

/// What one provider has recorded.
#[derive(Debug)]
pub(crate) struct LlmRecording {
    dialect: Dialect,
    models: BTreeSet<String>,
    turns: Vec<TurnSpec>,
}

impl LlmRecording {
    pub(crate) fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            models: BTreeSet::new(),
            turns: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.turns.len()
    }

    /// The mock that replays it: every turn answers each request with its key (`repeat`), except
    /// when the same key was answered several times: then the earlier answers are used once
    /// each, in order, and the last one stays.
    pub(crate) fn to_spec(&self) -> LlmMockSpec {
        let turns = self
            .turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut t = t.clone();
                t.repeat = !self.turns[i + 1..].iter().any(|later| later.when == t.when);
                t
            })
            .collect();
        LlmMockSpec {
            dialect: self.dialect,
            port: None,
            api_key: None,
            models: if self.models.is_empty() {
                vec!["mock-model".to_owned()]
            } else {
                self.models.iter().cloned().collect()
            },
            script: turns,
            on_exhausted: Exhausted::Error,
            fault: None,
            usage: None,
            tls: false,
        }
    }
}

#[derive(Clone)]
struct Ctx {
    shared: Arc<Shared>,
    name: String,
    dialect: Dialect,
    base: String,
}

pub(crate) fn router(shared: Arc<Shared>, name: String, dialect: Dialect, base: String) -> Router {
    Router::new().fallback(handle).with_state(Ctx {
        shared,
        name,
        dialect,
        base,
    })
}

/// `base` + the request path, without doubling a `/v1` both carry.
fn upstream_url(base: &str, path_and_query: &str) -> String {
    let path = if base.ends_with("/v1") {
        path_and_query
            .strip_prefix("/v1")
            .filter(|rest| rest.is_empty() || rest.starts_with(['/', '?']))
            .unwrap_or(path_and_query)
    } else {
        path_and_query
    };
    format!("{base}{path}")
}

async fn handle(State(ctx): State<Ctx>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match read_body(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    ctx.shared.note_secrets(&parts.headers);
    let path = parts.uri.path().trim_end_matches('/').to_owned();
    let pq = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let url = upstream_url(&ctx.base, &pq);
    let completion = parts.method == http::Method::POST
        && match ctx.dialect {
            Dialect::Openai => path.ends_with("/chat/completions"),
            Dialect::Anthropic => path.ends_with("/messages"),
        };
    let listing = parts.method == http::Method::GET && path.ends_with("/models");
    let key = if completion {
        serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| Conversation::parse(ctx.dialect, &v).ok())
            .map(|c| key_of(&c))
    } else {
        None
    };
    let resp = match forward(&ctx.shared, parts.method, &url, &parts.headers, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let keep = key.is_some() || listing;
    tee(&ctx.shared.clone(), resp, keep, move |answer| {
        ctx.shared.update(|rec| {
            let Some(l) = rec.llms.get_mut(&ctx.name) else {
                return;
            };
            if listing {
                l.models.extend(listed_models(&answer));
            } else if let Some(key) = key
                && let Some(turn) = turn_of(ctx.dialect, key.clone(), &answer)
            {
                if let Some(m) = key.model {
                    l.models.insert(m);
                }
                l.turns.push(turn);
            }
        });
    })
}

/// The guard a recorded turn answers under: model, exact last user message, position and exact
/// tool results.
fn key_of(c: &Conversation) -> MatchSpec {
    MatchSpec {
        model: Some(c.model.clone()),
        last_user_is: Some(c.last_user.clone().unwrap_or_default()),
        user_messages: Some(c.user_messages),
        round: Some(c.round),
        tool_results: Some(c.tool_results.clone()),
        ..MatchSpec::default()
    }
}

fn listed_models(answer: &Answer) -> Vec<String> {
    if answer.status != 200 {
        return Vec::new();
    }
    serde_json::from_slice::<Value>(&answer.body)
        .ok()
        .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The turn that replays an answer: its text, tool calls and usage; an error status becomes a
/// fault turn. `None` for an answer that cannot be read back (cut short, malformed).
fn turn_of(dialect: Dialect, when: MatchSpec, answer: &Answer) -> Option<TurnSpec> {
    let mut turn = TurnSpec {
        when: Some(when),
        text: None,
        tool_calls: Vec::new(),
        fault: None,
        usage: None,
        repeat: false,
    };
    if answer.status >= 400 {
        let retry_after = answer
            .headers
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        turn.fault = Some(FaultSpec {
            status: Some(answer.status),
            retry_after,
            ..FaultSpec::default()
        });
        return Some(turn);
    }
    if answer.status != 200 || !answer.complete {
        return None;
    }
    let text = std::str::from_utf8(&answer.body).ok()?;
    let parsed = match (dialect, answer.is_sse()) {
        (Dialect::Openai, false) => openai_json(&serde_json::from_str(text).ok()?),
        (Dialect::Openai, true) => openai_sse(text),
        (Dialect::Anthropic, false) => anthropic_json(&serde_json::from_str(text).ok()?),
        (Dialect::Anthropic, true) => anthropic_sse(text),
    }?;
    turn.text = parsed.text;
    turn.tool_calls = parsed.calls;
    turn.usage = parsed.usage;
    if turn.text.is_none() && turn.tool_calls.is_empty() {
        turn.text = Some(String::new());
    }
    Some(turn)
}

#[derive(Debug, Default)]
struct Parsed {
    text: Option<String>,
    calls: Vec<ToolCallSpec>,
    usage: Option<UsageSpec>,
}

fn push_text(p: &mut Parsed, t: &str) {
    p.text.get_or_insert_with(String::new).push_str(t);
}

fn u64_at(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr).and_then(Value::as_u64).unwrap_or(0)
}

/// OpenAI `arguments` (a JSON string) as the script holds them: `""` is `null`.
fn openai_arguments(s: &str) -> Value {
    if s.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))
    }
}

fn openai_usage(u: &Value) -> UsageSpec {
    UsageSpec {
        input_tokens: u64_at(u, "/prompt_tokens"),
        output_tokens: u64_at(u, "/completion_tokens"),
        cache_read_tokens: u64_at(u, "/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        reasoning_tokens: u64_at(u, "/completion_tokens_details/reasoning_tokens"),
    }
}

fn openai_json(v: &Value) -> Option<Parsed> {
    let msg = v.pointer("/choices/0/message")?;
    let mut p = Parsed::default();
    if let Some(t) = msg.get("content").and_then(Value::as_str) {
        push_text(&mut p, t);
    }
    for c in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        p.calls.push(ToolCallSpec {
            name: c.pointer("/function/name")?.as_str()?.to_owned(),
            arguments: openai_arguments(
                c.pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            id: c.get("id").and_then(Value::as_str).map(str::to_owned),
        });
    }
    p.usage = v.get("usage").filter(|u| u.is_object()).map(openai_usage);
    Some(p)
}

fn openai_sse(body: &str) -> Option<Parsed> {
    let mut p = Parsed::default();
    // (id, name, arguments) by `index`.
    let mut calls: Vec<(Option<String>, String, String)> = Vec::new();
    let mut done = false;
    for data in sse::data(body) {
        if data.trim() == "[DONE]" {
            done = true;
            continue;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
            return None;
        };
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            p.usage = Some(openai_usage(u));
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            continue;
        };
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            push_text(&mut p, t);
        }
        for c in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = usize::try_from(c.get("index").and_then(Value::as_u64).unwrap_or(0)).ok()?;
            if calls.len() <= i {
                calls.resize_with(i + 1, Default::default);
            }
            let slot = &mut calls[i];
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                slot.0 = Some(id.to_owned());
            }
            if let Some(n) = c.pointer("/function/name").and_then(Value::as_str) {
                slot.1.push_str(n);
            }
            if let Some(a) = c.pointer("/function/arguments").and_then(Value::as_str) {
                slot.2.push_str(a);
            }
        }
    }
    if !done {
        return None;
    }
    p.calls = calls
        .into_iter()
        .filter(|(_, n, _)| !n.is_empty())
        .map(|(id, name, args)| ToolCallSpec {
            name,
            arguments: openai_arguments(&args),
            id,
        })
        .collect();
    Some(p)
}

fn anthropic_usage(u: &Value, into: &mut UsageSpec) {
    let set = |field: &mut u64, ptr: &str| {
        if let Some(n) = u.pointer(ptr).and_then(Value::as_u64) {
            *field = n;
        }
    };
    set(&mut into.input_tokens, "/input_tokens");
    set(&mut into.output_tokens, "/output_tokens");
    set(&mut into.cache_read_tokens, "/cache_read_input_tokens");
    set(&mut into.cache_write_tokens, "/cache_creation_input_tokens");
}

fn anthropic_json(v: &Value) -> Option<Parsed> {
    let blocks = v.get("content")?.as_array()?;
    let mut p = Parsed::default();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => push_text(&mut p, b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => p.calls.push(ToolCallSpec {
                name: b.get("name")?.as_str()?.to_owned(),
                arguments: b.get("input").cloned().unwrap_or(Value::Null),
                id: b.get("id").and_then(Value::as_str).map(str::to_owned),
            }),
            _ => {}
        }
    }
    if let Some(u) = v.get("usage") {
        let mut usage = UsageSpec::default();
        anthropic_usage(u, &mut usage);
        p.usage = Some(usage);
    }
    Some(p)
}

fn anthropic_sse(body: &str) -> Option<Parsed> {
    let mut p = Parsed::default();
    let mut usage = None::<UsageSpec>;
    // Tool-use blocks by content index: (id, name, partial JSON).
    let mut tools: Vec<(usize, Option<String>, String, String)> = Vec::new();
    let mut stopped = false;
    for data in sse::data(body) {
        let Ok(ev) = serde_json::from_str::<Value>(&data) else {
            return None;
        };
        let index = ev.get("index").and_then(Value::as_u64).unwrap_or(0);
        let index = usize::try_from(index).ok()?;
        match ev.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(u) = ev.pointer("/message/usage") {
                    anthropic_usage(u, usage.get_or_insert_with(UsageSpec::default));
                }
            }
            Some("content_block_start") => {
                let b = ev.get("content_block")?;
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        push_text(&mut p, b.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    Some("tool_use") => tools.push((
                        index,
                        b.get("id").and_then(Value::as_str).map(str::to_owned),
                        b.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        String::new(),
                    )),
                    _ => {}
                }
            }
            Some("content_block_delta") => {
                let d = ev.get("delta")?;
                match d.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        push_text(&mut p, d.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = tools.iter_mut().find(|t| t.0 == index) {
                            t.3.push_str(
                                d.get("partial_json").and_then(Value::as_str).unwrap_or(""),
                            );
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(u) = ev.get("usage") {
                    anthropic_usage(u, usage.get_or_insert_with(UsageSpec::default));
                }
            }
            Some("message_stop") => stopped = true,
            _ => {}
        }
    }
    if !stopped {
        return None;
    }
    p.usage = usage;
    p.calls = tools
        .into_iter()
        .map(|(_, id, name, json)| ToolCallSpec {
            name,
            arguments: if json.trim().is_empty() {
                Value::Object(serde_json::Map::new())
            } else {
                serde_json::from_str(&json).unwrap_or(Value::String(json))
            },
            id,
        })
        .collect();
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_ending_in_v1_does_not_get_a_second_v1() {
        assert_eq!(
            upstream_url("https://api.openai.com/v1", "/v1/chat/completions"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            upstream_url("https://api.anthropic.com", "/v1/messages?beta=true"),
            "https://api.anthropic.com/v1/messages?beta=true"
        );
        assert_eq!(
            upstream_url("https://openrouter.ai/api/v1", "/v1/models"),
            "https://openrouter.ai/api/v1/models"
        );
    }

    #[test]
    fn openai_stream_chunks_assemble_into_text_and_indexed_tool_calls() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"He\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"llo\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"a__b\",\"arguments\":\"{\\\"q\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n"
        );
        let p = openai_sse(body).unwrap();
        assert_eq!(p.text.as_deref(), Some("Hello"));
        assert_eq!(p.calls[0].name, "a__b");
        assert_eq!(p.calls[0].id.as_deref(), Some("c1"));
        assert_eq!(p.calls[0].arguments, serde_json::json!({"q": 1}));
        assert_eq!(p.usage.map(|u| u.input_tokens), Some(7));
        assert!(
            openai_sse("data: {\"choices\":[]}\n\n").is_none(),
            "no [DONE]: cut short"
        );
    }

    #[test]
    fn anthropic_stream_events_assemble_into_text_and_tool_use() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"x\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":2}\"}}\n\n",
            "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":3}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n"
        );
        let p = anthropic_sse(body).unwrap();
        assert_eq!(p.text.as_deref(), Some("ok"));
        assert_eq!(p.calls[0].arguments, serde_json::json!({"a": 2}));
        assert_eq!(p.calls[0].id.as_deref(), Some("t1"));
        let u = p.usage.unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (5, 3));
    }
}
