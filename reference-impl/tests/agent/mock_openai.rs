//! The in-process mock OpenAI-compatible model of the agent tests: scripted answers, the in-band
//! `CALL_TOOL` directive, scripted failures and a journal of the requests it received.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::serve;

/// A scripted failure of the mock model.
#[derive(Clone, Default)]
pub struct LlmFault {
    pub status: Option<u16>,
    pub delay: Option<Duration>,
}

#[derive(Default)]
pub struct LlmState {
    pub requests: Mutex<Vec<Value>>,
    pub fault: Mutex<LlmFault>,
    pub models: Mutex<Vec<String>>,
    pub list_calls: Mutex<u32>,
}

/// A mock OpenAI-compatible provider at `url` (base URL with `/v1`).
pub struct MockOpenAi {
    pub url: String,
    pub state: Arc<LlmState>,
    _ct: tokio_util::sync::DropGuard,
}

impl MockOpenAi {
    pub async fn start() -> Self {
        let state = Arc::new(LlmState::default());
        *state.models.lock().unwrap() = vec!["mock-model".into()];
        let router = Router::new()
            .route("/v1/models", get(models))
            .route("/v1/chat/completions", post(chat))
            .with_state(state.clone());
        let ct = CancellationToken::new();
        let addr = serve(router, ct.clone()).await;
        Self {
            url: format!("http://{addr}/v1"),
            state,
            _ct: ct.drop_guard(),
        }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn set_fault(&self, fault: LlmFault) {
        *self.state.fault.lock().unwrap() = fault;
    }
}

async fn models(State(state): State<Arc<LlmState>>) -> Response {
    *state.list_calls.lock().unwrap() += 1;
    let fault = state.fault.lock().unwrap().clone();
    if let Some(status) = fault.status {
        return error_response(status);
    }
    let data: Vec<Value> = state
        .models
        .lock()
        .unwrap()
        .iter()
        .map(|id| json!({"id": id, "object": "model"}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

fn error_response(status: u16) -> Response {
    let code = axum::http::StatusCode::from_u16(status).unwrap();
    (
        code,
        Json(json!({"error": {"message": format!("mock failure {status}"), "type": "mock"}})),
    )
        .into_response()
}

async fn chat(State(state): State<Arc<LlmState>>, Json(body): Json<Value>) -> Response {
    state.requests.lock().unwrap().push(body.clone());
    let fault = state.fault.lock().unwrap().clone();
    if let Some(delay) = fault.delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(status) = fault.status {
        return error_response(status);
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let usage = json!({"prompt_tokens": 11, "completion_tokens": 5});
    if last["role"] == "tool" {
        let results: Vec<String> = messages
            .iter()
            .rev()
            .take_while(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("tool results: {}", results.join(" | "))}, "finish_reason": "stop"}],
            "usage": usage,
        }))
        .into_response();
    }
    let text = match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    let calls: Vec<Value> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("CALL_TOOL "))
        .enumerate()
        .map(|(index, rest)| {
            let (name, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
            json!({"id": format!("call_{index}"), "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    if calls.is_empty() {
        let images = match &last["content"] {
            Value::Array(parts) => parts.iter().filter(|p| p["type"] == "image_url").count(),
            _ => 0,
        };
        Json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("echo: {text} (images: {images})")}, "finish_reason": "stop"}],
            "usage": usage,
        }))
        .into_response()
    } else {
        // `SAY …` lines are what the model says beside its tool calls.
        let said: Vec<&str> = text
            .lines()
            .filter_map(|line| line.trim().strip_prefix("SAY "))
            .collect();
        let content = if said.is_empty() {
            Value::Null
        } else {
            Value::String(said.join(" "))
        };
        Json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "tool_calls": calls}, "finish_reason": "tool_calls"}],
            "usage": usage,
        }))
        .into_response()
    }
}
