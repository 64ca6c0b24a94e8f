//! `POST /api/v1/agents/:name/chat`: parameter resolution (request → `defaultParams` → adapter
//! default, `null` clears), history or a `messages` override, the tool loop over the project's
//! MCP servers (tools as `<server>__<tool>`, cap 12, rows linked by `toolCallId`, `pending` →
//! `complete` / `error`), answered as JSON or as SSE chunks ending in `data: [DONE]`.

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::api::{error, new_thread, runnable};
use super::{AgentRow, LOOP_CAP, Mcpd, MessageRow};
use crate::common::now_rfc3339;
use crate::packs::jsonrpc::random_id;
use crate::packs::upstream::{McpClient, ToolCall, chat_completion};

/// Keys of the LiteLLM-style passthrough.
const PARAM_KEYS: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "response_format",
    "tool_choice",
    "tools_allowlist",
    "systemOverride",
    "systemAppend",
    "extra",
];
/// Keys the OpenAI adapter passes to the provider (`top_k` and `extra` are not OpenAI's).
const OPENAI_KEYS: &[&str] = &[
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "response_format",
];

/// A parsed chat request.
#[derive(Debug, Clone, Default)]
pub(super) struct ChatRequest {
    message: Option<String>,
    thread_id: Option<String>,
    messages: Option<Vec<Value>>,
    stream: bool,
    /// Passthrough keys as sent (`null` included).
    params: Map<String, Value>,
}

impl ChatRequest {
    /// Reads a request body.
    pub(super) fn parse(body: &Value) -> Result<Self, String> {
        let o = body.as_object().ok_or("body must be a JSON object")?;
        let message = match o.get("message") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("message must be a string".into()),
        };
        let messages = match o.get("messages") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(_) => return Err("messages must be an array".into()),
        };
        if message.is_none() && messages.is_none() {
            return Err("message or messages is required".into());
        }
        let thread_id = o.get("threadId").and_then(Value::as_str).map(str::to_owned);
        let params = o
            .iter()
            .filter(|(k, _)| PARAM_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Self {
            message,
            thread_id,
            messages,
            stream: o.get("stream").and_then(Value::as_bool).unwrap_or(false),
            params,
        })
    }
}

/// A finished chat turn.
#[derive(Debug, Clone)]
pub(super) struct Done {
    pub thread_id: String,
    pub turn_index: u64,
    pub text: String,
}

pub(super) async fn handler(
    State(m): State<Arc<Mcpd>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (caller, agent) = match runnable(&m, &headers, &name) {
        Ok(x) => x,
        Err(r) => return r.into_response(),
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("Body is not valid JSON: {e}"),
            );
        }
    };
    let req = match ChatRequest::parse(&value) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    if let Some(t) = &req.thread_id
        && !m
            .store()
            .threads
            .iter()
            .any(|x| &x.id == t && x.agent_id == agent.id)
    {
        return error(StatusCode::NOT_FOUND, &format!("Thread not found: {t}"));
    }
    let wants_sse = req.stream
        || headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/event-stream"));
    if !wants_sse {
        return match run(&m, &agent, req, &caller.user, None).await {
            Ok(d) => Json(json!({"threadId": d.thread_id, "turnIndex": d.turn_index,
                "text": d.text}))
            .into_response(),
            Err(e) => error(StatusCode::BAD_GATEWAY, &e),
        };
    }
    let (tx, rx) = mpsc::channel::<Value>(64);
    let user = caller.user.clone();
    let mm = m.clone();
    tokio::spawn(async move {
        let _ = run(&mm, &agent, req, &user, Some(tx)).await;
    });
    let done = !m.defects.on("no-done");
    let stream = futures::stream::unfold((rx, false), move |(mut rx, finished)| async move {
        if finished {
            return None;
        }
        match rx.recv().await {
            Some(chunk) => Some((
                Ok::<_, std::io::Error>(Bytes::from(format!("data: {chunk}\n\n"))),
                (rx, false),
            )),
            None if done => Some((Ok(Bytes::from_static(b"data: [DONE]\n\n")), (rx, true))),
            None => None,
        }
    });
    let mut r = Response::new(Body::from_stream(stream));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if !m.defects.on("no-accel-header") {
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    }
    r
}

/// Sends a chunk when streaming.
async fn emit(tx: &Option<mpsc::Sender<Value>>, chunk: Value) {
    if let Some(tx) = tx {
        let _ = tx.send(chunk).await;
    }
}

/// Resolves the passthrough parameters: request → `defaultParams`; `null` clears.
fn resolve(m: &Mcpd, agent: &AgentRow, req: &Map<String, Value>) -> Map<String, Value> {
    let mut out = agent.default_params.clone();
    for (k, v) in req {
        if m.defects.on("params-precedence-reversed") && out.contains_key(k) {
            continue;
        }
        if v.is_null() {
            if !m.defects.on("null-not-clearing") {
                out.remove(k);
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn push_row(
    m: &Mcpd,
    thread: &str,
    role: &'static str,
    content: &str,
    tool_calls: Option<Value>,
    tool_call_id: Option<String>,
    status: &'static str,
    same_turn: Option<u64>,
) -> (String, u64) {
    let mut s = m.store();
    let turn = same_turn.unwrap_or_else(|| {
        s.messages
            .iter()
            .filter(|r| r.thread_id == thread)
            .map(|r| r.turn_index + 1)
            .max()
            .unwrap_or(0)
    });
    let id = random_id();
    let now = now_rfc3339();
    s.messages.push(MessageRow {
        id: id.clone(),
        thread_id: thread.to_owned(),
        turn_index: turn,
        role,
        content: content.to_owned(),
        tool_calls,
        tool_call_id,
        status,
        created_at: now.clone(),
    });
    if let Some(t) = s.threads.iter_mut().find(|t| t.id == thread) {
        t.last_turn_at = Some(now);
    }
    (id, turn)
}

fn set_row(
    m: &Mcpd,
    id: &str,
    content: Option<&str>,
    tool_calls: Option<Value>,
    status: &'static str,
) {
    let mut s = m.store();
    if let Some(r) = s.messages.iter_mut().find(|r| r.id == id) {
        if let Some(c) = content {
            r.content = c.to_owned();
        }
        if tool_calls.is_some() {
            r.tool_calls = tool_calls;
        }
        r.status = status;
    }
}

fn flip_pending(m: &Mcpd, thread: &str, to: &'static str) {
    for r in m.store().messages.iter_mut() {
        if r.thread_id == thread && r.status == "pending" {
            r.status = to;
        }
    }
}

/// The thread's history as OpenAI messages (`error` rows left out).
fn history(m: &Mcpd, thread: &str) -> Vec<Value> {
    let s = m.store();
    let mut rows: Vec<&MessageRow> = s
        .messages
        .iter()
        .filter(|r| {
            r.thread_id == thread
                && (r.status != "error" || m.defects.on("history-keeps-error-rows"))
        })
        .collect();
    rows.sort_by_key(|r| r.turn_index);
    rows.iter()
        .map(|r| match r.role {
            "tool" => json!({"role": "tool", "content": r.content, "tool_call_id": r.tool_call_id}),
            "assistant" => match &r.tool_calls {
                Some(Value::Array(calls)) if !calls.is_empty() => json!({"role": "assistant",
                    "content": r.content, "tool_calls": calls.iter().map(|c| json!({"id": c["id"],
                        "type": "function", "function": {"name": c["name"],
                        "arguments": c["arguments"].to_string()}})).collect::<Vec<_>>()}),
                _ => json!({"role": "assistant", "content": r.content}),
            },
            role => json!({"role": role, "content": r.content}),
        })
        .collect()
}

/// Lists the project's tools: offered name → (server URL, tool name, declaration).
async fn project_tools(m: &Mcpd, agent: &AgentRow) -> Vec<(String, String, String, Value)> {
    let mut out = Vec::new();
    if agent.project.as_deref() != Some(m.project.as_str()) {
        return out;
    }
    for t in super::upstream_tools::upstream_tools(m).await {
        let offered = if m.defects.on("tools-not-namespaced") {
            t.name.clone()
        } else {
            format!("{}__{}", t.server, t.name)
        };
        let decl = json!({"type": "function", "function": {"name": offered,
            "description": t.decl.get("description").cloned().unwrap_or(json!("")),
            "parameters": t.decl.get("inputSchema").cloned().unwrap_or(json!({"type": "object"}))}});
        out.push((offered, t.url, t.name, decl));
    }
    out
}

async fn dispatch(
    m: &Mcpd,
    tools: &[(String, String, String, Value)],
    call: &ToolCall,
) -> (bool, String) {
    let Some((_, url, tool, _)) = tools.iter().find(|t| t.0 == call.name) else {
        return (false, format!("tool not available: {}", call.name));
    };
    let mut c = match McpClient::connect(&m.http, url, None).await {
        Ok(c) => c,
        Err(e) => return (false, e),
    };
    let r = c
        .request(
            "tools/call",
            json!({"name": tool, "arguments": call.arguments}),
        )
        .await;
    c.close().await;
    match r {
        Ok(v) => {
            let text = v
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n");
            (v.get("isError") != Some(&json!(true)), text)
        }
        Err(e) => (false, e),
    }
}

/// Runs one chat turn (the whole tool loop). With `tx`, streams chunks (an `error` chunk on
/// failure).
pub(super) async fn run(
    m: &Mcpd,
    agent: &AgentRow,
    req: ChatRequest,
    owner: &str,
    tx: Option<mpsc::Sender<Value>>,
) -> Result<Done, String> {
    let thread = match &req.thread_id {
        Some(t) => t.clone(),
        None => {
            let title = req.message.clone().unwrap_or_else(|| "Chat".into());
            new_thread(m, agent, owner, &title).id
        }
    };
    let result = run_loop(m, agent, &req, &thread, &tx).await;
    if let Err(e) = &result {
        if !m.defects.on("pending-left-on-error") {
            flip_pending(m, &thread, "error");
        }
        emit(&tx, json!({"type": "error", "message": e})).await;
    }
    result
}

/// The system prompt (`systemOverride`, `systemAppend`) and the conversation the loop starts
/// from: the thread's history and the new user message, or the request's own messages; the
/// user's message is stored in the thread.
fn opening_messages(
    m: &Mcpd,
    agent: &AgentRow,
    req: &ChatRequest,
    thread: &str,
    params: &serde_json::Map<String, Value>,
) -> Vec<Value> {
    let mut system = match params.get("systemOverride").and_then(Value::as_str) {
        Some(o) if m.defects.on("system-override-appended") => {
            format!("{}\n\n{o}", agent.system_prompt)
        }
        Some(o) => o.to_owned(),
        None => agent.system_prompt.clone(),
    };
    if let Some(a) = params.get("systemAppend").and_then(Value::as_str)
        && !m.defects.on("system-append-ignored")
    {
        system = if system.is_empty() {
            a.to_owned()
        } else {
            format!("{system}\n\n{a}")
        };
    }
    let mut messages = vec![json!({"role": "system", "content": system})];
    match &req.messages {
        Some(over) => {
            if m.defects.on("messages-merged-with-history") {
                messages.extend(history(m, thread));
            }
            messages.extend(over.iter().cloned());
            if let Some(last) = over.iter().rev().find(|x| x["role"] == "user") {
                let text = last["content"].as_str().unwrap_or_default();
                push_row(m, thread, "user", text, None, None, "complete", None);
            }
        }
        None => {
            messages.extend(history(m, thread));
            let text = req.message.clone().unwrap_or_default();
            push_row(m, thread, "user", &text, None, None, "complete", None);
            messages.push(json!({"role": "user", "content": text}));
        }
    }
    messages
}

async fn run_loop(
    m: &Mcpd,
    agent: &AgentRow,
    req: &ChatRequest,
    thread: &str,
    tx: &Option<mpsc::Sender<Value>>,
) -> Result<Done, String> {
    let params = resolve(m, agent, &req.params);
    let mut messages = opening_messages(m, agent, req, thread, &params);
    let mut tools = project_tools(m, agent).await;
    if let Some(Value::Array(allow)) = params.get("tools_allowlist")
        && !m.defects.on("allowlist-ignored")
    {
        tools.retain(|t| allow.iter().any(|a| a.as_str() == Some(t.0.as_str())));
    }
    let Some(base) = m.llm.clone() else {
        return Err("the agent's Llm is not configured".into());
    };
    let cap = if m.defects.on("loop-cap-off-by-one") {
        LOOP_CAP + 1
    } else {
        LOOP_CAP
    };
    for _ in 0..cap {
        let mut body = json!({"model": "mock-model", "messages": messages});
        for k in OPENAI_KEYS {
            if let Some(v) = params.get(*k) {
                body[*k] = v.clone();
            }
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.iter().map(|t| t.3.clone()).collect());
            if let Some(tc) = params.get("tool_choice") {
                body["tool_choice"] = tc.clone();
            }
        }
        let (row, turn) = push_row(m, thread, "assistant", "", None, None, "pending", None);
        let reply = chat_completion(&m.http, &base, &body).await?;
        if reply.tool_calls.is_empty() {
            set_row(m, &row, Some(&reply.text), None, "complete");
            let fin = json!({"type": "final", "threadId": thread, "turnIndex": turn});
            if m.defects.on("final-before-text") {
                emit(tx, fin.clone()).await;
            }
            let words: Vec<&str> = reply.text.split_inclusive(' ').collect();
            for piece in words.chunks(4) {
                emit(tx, json!({"type": "text", "delta": piece.concat()})).await;
            }
            if !m.defects.on("final-before-text") {
                emit(tx, fin).await;
            }
            return Ok(Done {
                thread_id: thread.to_owned(),
                turn_index: turn,
                text: reply.text,
            });
        }
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        set_row(
            m,
            &row,
            Some(&reply.text),
            Some(Value::Array(calls.clone())),
            "pending",
        );
        messages.push(json!({"role": "assistant", "content": reply.text,
            "tool_calls": reply.tool_calls.iter().map(|c| json!({"id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments.to_string()}})).collect::<Vec<_>>()}));
        for call in &reply.tool_calls {
            emit(
                tx,
                json!({"type": "tool_call", "toolName": call.name, "args": call.arguments}),
            )
            .await;
            let (ok, text) = dispatch(m, &tools, call).await;
            let id = (!m.defects.on("tool-call-id-dropped")).then(|| call.id.clone());
            let same = m.defects.on("turn-index-repeats").then_some(turn);
            push_row(m, thread, "tool", &text, None, id, "pending", same);
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": text}));
            let mut chunk = json!({"type": "tool_result", "toolName": call.name, "ok": ok});
            if m.defects.on("tool-result-unnamed")
                && let Some(o) = chunk.as_object_mut()
            {
                o.remove("toolName");
            }
            emit(tx, chunk).await;
        }
        flip_pending(m, thread, "complete");
    }
    Err(format!("tool loop exceeded {LOOP_CAP} iterations"))
}
