//! Mock LLM providers: OpenAI-compatible and Anthropic, one provider-neutral script, faults in the
//! providers' real shapes, and a journal of every request.

pub(crate) mod conversation;
mod render;
mod respond;
mod script;

use respond::*;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, Uri, header};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common::{Journal, ServerHandle, Ticket, header_map, lock, now_rfc3339};
use crate::error::MockError;
use crate::journal::LlmJournalEntry;
use crate::spec::{Dialect, FaultSpec, LlmMockSpec, UsageSpec};
use crate::tls::MockTls;
use conversation::Conversation;
use script::{Outcome, Reply, Script, ScriptState};

/// A running mock LLM provider. Stops when dropped.
#[derive(Debug)]
pub struct LlmMock {
    addr: SocketAddr,
    tls: Option<Arc<MockTls>>,
    dialect: Dialect,
    shared: Arc<Shared>,
    server: ServerHandle,
}

#[derive(Debug)]
struct Shared {
    spec: LlmMockSpec,
    script: Script,
    state: Mutex<ScriptState>,
    journal: Arc<Journal<LlmJournalEntry>>,
    counter: AtomicU64,
    ct: CancellationToken,
}

impl LlmMock {
    /// Starts the mock on `addr` (use port 0 for an ephemeral port). Returns once it listens.
    pub async fn start(spec: LlmMockSpec, addr: SocketAddr) -> Result<LlmMock, MockError> {
        Self::start_named("llm", spec, addr).await
    }

    /// Like [`LlmMock::start`], naming the mock in errors and logs. With `tls: true` in the spec
    /// it serves HTTPS with a certificate of its own CA ([`LlmMock::tls`]).
    pub async fn start_named(
        name: &str,
        spec: LlmMockSpec,
        addr: SocketAddr,
    ) -> Result<LlmMock, MockError> {
        let tls = MockTls::generate_if(spec.tls)?;
        Self::start_with_tls(name, spec, addr, tls).await
    }

    /// Like [`LlmMock::start_named`], serving HTTPS with `tls` when given (whatever `spec.tls`).
    pub async fn start_with_tls(
        name: &str,
        spec: LlmMockSpec,
        addr: SocketAddr,
        tls: Option<Arc<MockTls>>,
    ) -> Result<LlmMock, MockError> {
        let script = Script::compile(&spec).map_err(|message| MockError::InvalidSpec {
            name: name.to_owned(),
            message,
        })?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| MockError::Bind {
                name: name.to_owned(),
                addr,
                source,
            })?;
        let bound = listener.local_addr().map_err(|source| MockError::Bind {
            name: name.to_owned(),
            addr,
            source,
        })?;
        let ct = CancellationToken::new();
        let dialect = spec.dialect;
        let shared = Arc::new(Shared {
            state: Mutex::new(script.fresh_state()),
            script,
            spec,
            journal: Journal::new(),
            counter: AtomicU64::new(0),
            ct: ct.clone(),
        });
        let app = router(shared.clone());
        let server = ServerHandle::serve_with(listener, app, tls.as_deref());
        // Hanging requests end when the server stops.
        let server_ct = server.ct.clone();
        tokio::spawn(async move {
            server_ct.cancelled().await;
            ct.cancel();
        });
        tracing::debug!(name, %bound, ?dialect, "mock LLM listening");
        Ok(LlmMock {
            addr: bound,
            tls,
            dialect,
            shared,
            server,
        })
    }

    /// The base URL a client configures: `http://127.0.0.1:P/v1` (OpenAI) or
    /// `http://127.0.0.1:P` (Anthropic; the SDKs append `/v1/messages`); `https` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        match self.dialect {
            Dialect::Openai => format!("{scheme}://{}/v1", self.addr),
            Dialect::Anthropic => format!("{scheme}://{}", self.addr),
        }
    }

    /// The certificate authority of an HTTPS mock.
    pub fn tls(&self) -> Option<&MockTls> {
        self.tls.as_deref()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received since start or the last reset.
    pub fn journal(&self) -> Vec<LlmJournalEntry> {
        self.shared.journal.snapshot()
    }

    /// Removes and returns every request received since start, the last reset or the last
    /// take, keeping the script's progress. A long run (a load test) drains the journal this
    /// way so that it never holds more than what arrived since the last call.
    pub fn take_journal(&self) -> Vec<LlmJournalEntry> {
        self.shared.journal.take()
    }

    /// Clears the journal and restarts the script and the fault counters.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Stops the mock, waiting briefly for in-flight requests.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

impl Shared {
    fn reset(&self) {
        *lock(&self.state) = self.script.fresh_state();
        self.journal.clear();
    }

    fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/__mock/journal", get(journal_handler))
        .route("/__mock/reset", post(reset_handler))
        .fallback(api_handler)
        .layer(DefaultBodyLimit::max(64 * 1024 * 1024))
        .with_state(shared)
}

async fn journal_handler(State(shared): State<Arc<Shared>>) -> Response {
    axum::Json(shared.journal.snapshot()).into_response()
}

async fn reset_handler(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.reset();
    StatusCode::NO_CONTENT
}

/// Pause before cutting a connection, so the bytes sent before the cut reach the client.
const FLUSH_GAP: Duration = Duration::from_millis(20);

/// Which API endpoint a request addresses.
enum Endpoint {
    Models,
    Model(String),
    Completion,
    Unknown,
}

fn endpoint(dialect: Dialect, method: &Method, path: &str) -> Endpoint {
    let path = path.trim_end_matches('/');
    match (method, path) {
        (&Method::GET, "/v1/models") => Endpoint::Models,
        (&Method::GET, p) if p.starts_with("/v1/models/") => {
            Endpoint::Model(p["/v1/models/".len()..].to_owned())
        }
        (&Method::POST, "/v1/chat/completions") if dialect == Dialect::Openai => {
            Endpoint::Completion
        }
        (&Method::POST, "/v1/messages") if dialect == Dialect::Anthropic => Endpoint::Completion,
        _ => Endpoint::Unknown,
    }
}

/// Effects of the faults that apply to one request (mock-level and turn-level combined).
#[derive(Debug, Default)]
struct Effects {
    latency: Option<Duration>,
    chunk_delay: Option<Duration>,
    disconnect_after: Option<u32>,
    hang: bool,
    status: Option<(u16, Option<u64>)>,
    malformed: bool,
}

impl Effects {
    fn add(&mut self, f: &FaultSpec) {
        if let Some(l) = f.latency {
            self.latency = Some(self.latency.unwrap_or_default() + l);
        }
        self.chunk_delay = f.chunk_delay.or(self.chunk_delay);
        self.disconnect_after = f.disconnect_after_chunks.or(self.disconnect_after);
        self.hang |= f.hang;
        if let Some(s) = f.status {
            self.status = Some((s, f.retry_after));
        }
        self.malformed |= f.malformed;
    }
}

async fn api_handler(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let dialect = shared.spec.dialect;
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    let json: Option<Value> = if body.is_empty() {
        None
    } else {
        serde_json::from_slice(&body).ok()
    };
    let ep = endpoint(dialect, &method, uri.path());
    let model = match &ep {
        Endpoint::Model(id) => Some(id.clone()),
        _ => json
            .as_ref()
            .and_then(|b| b.get("model"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    // Read the conversation before the body moves into the journal (no deep copy).
    let parsed = match (&ep, &json) {
        (Endpoint::Completion, Some(v)) => Some(Conversation::parse(dialect, v)),
        _ => None,
    };
    let ticket = shared.journal.push(LlmJournalEntry {
        time: now_rfc3339(),
        method: method.as_str().to_owned(),
        path,
        headers: header_map(&headers),
        body: json,
        model,
        matched_turn: None,
        status: None,
        abandoned: None,
    });

    let mut effects = Effects::default();
    // Mock-level fault: every request, model listings included.
    if let Some(f) = &shared.spec.fault {
        let mut st = lock(&shared.state);
        if f.times.is_none_or(|n| st.mock_fault_hits < n) {
            st.mock_fault_hits = st.mock_fault_hits.saturating_add(1);
            effects.add(f);
        }
    }
    if effects.status.is_some() || effects.hang || effects.malformed {
        return apply_terminal(&shared, ticket, &effects, false).await;
    }

    if let Some(resp) = check_auth(&shared, &headers) {
        return finish(&shared, ticket, None, effects.latency, resp).await;
    }
    // Anthropic's API wants its version header on every request, model listings included.
    if dialect == Dialect::Anthropic
        && !matches!(ep, Endpoint::Unknown)
        && !headers.contains_key("anthropic-version")
    {
        let r = error_response(dialect, 400, "anthropic-version: header is required", None);
        return finish(&shared, ticket, None, effects.latency, r).await;
    }

    let parsed = match (&ep, parsed) {
        (Endpoint::Completion, Some(p)) => p,
        (Endpoint::Completion, None) => {
            let msg = if body.is_empty() {
                "the request body is empty; expected a JSON object"
            } else {
                "the request body is not valid JSON"
            };
            let r = error_response(dialect, 400, msg, None);
            return finish(&shared, ticket, None, effects.latency, r).await;
        }
        (Endpoint::Models, _) => {
            let r = json_response(
                StatusCode::OK,
                &render::model_list(dialect, &shared.spec.models),
            );
            return finish(&shared, ticket, None, effects.latency, r).await;
        }
        (Endpoint::Model(id), _) => {
            let r = if shared.spec.models.iter().any(|m| m == id) {
                json_response(StatusCode::OK, &render::model_object(dialect, id))
            } else {
                model_not_found(dialect, id)
            };
            return finish(&shared, ticket, None, effects.latency, r).await;
        }
        (Endpoint::Unknown, _) => {
            let msg = format!("Unknown request URL: {} {}", method, uri.path());
            let r = error_response(dialect, 404, &msg, None);
            return finish(&shared, ticket, None, effects.latency, r).await;
        }
    };

    let conv = match parsed {
        Ok(c) => c,
        Err(e) => {
            let r = error_response(dialect, 400, &e.0, None);
            return finish(&shared, ticket, None, effects.latency, r).await;
        }
    };
    if !shared.spec.models.contains(&conv.model) {
        let r = model_not_found(dialect, &conv.model);
        return finish(&shared, ticket, None, effects.latency, r).await;
    }

    answer(&shared, ticket, &conv, effects).await
}

/// Answers a well-formed completion request from the script (or its exhaustion).
async fn answer(
    shared: &Shared,
    ticket: Ticket,
    conv: &Conversation,
    mut effects: Effects,
) -> Response {
    let dialect = shared.spec.dialect;
    let outcome = shared.script.select(&mut lock(&shared.state), conv);
    let (turn, reply) = match outcome {
        Outcome::Exhausted => {
            let r = error_response(
                dialect,
                500,
                "mock script exhausted: no turn matches this request",
                None,
            );
            return finish(shared, ticket, None, effects.latency, r).await;
        }
        Outcome::FaultOnly { turn, fault } => {
            effects.add(&fault);
            shared
                .journal
                .update(ticket, |e| e.matched_turn = Some(turn));
            return apply_terminal(shared, ticket, &effects, conv.stream).await;
        }
        Outcome::Answer { turn, fault, reply } => {
            if let Some(f) = &fault {
                effects.add(f);
            }
            (turn, reply)
        }
    };
    let meta = make_meta(shared, conv, &reply);
    let resp = if conv.stream {
        let events = render::stream_events(dialect, &reply, &meta, conv.include_usage);
        sse_response(events, effects.chunk_delay, effects.disconnect_after)
    } else {
        let body = render::body(dialect, &reply, &meta).to_string();
        match effects.disconnect_after {
            Some(_) => truncated_body(body),
            None => json_text_response(StatusCode::OK, body),
        }
    };
    finish(shared, ticket, turn, effects.latency, resp).await
}

fn make_meta(shared: &Shared, conv: &Conversation, reply: &Reply) -> render::Meta {
    let n = shared.next_id();
    let usage = reply.usage.or(shared.spec.usage).unwrap_or_else(|| {
        let out_chars = reply.text.as_ref().map_or(0, String::len)
            + reply
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum::<usize>();
        UsageSpec {
            input_tokens: (conv.prompt_chars / 4 + 1) as u64,
            output_tokens: (out_chars / 4 + 1) as u64,
            ..UsageSpec::default()
        }
    });
    let (id, prefix) = match shared.spec.dialect {
        Dialect::Openai => (format!("chatcmpl-mock-{n}"), "call_mock_"),
        Dialect::Anthropic => (format!("msg_mock_{n}"), "toolu_mock_"),
    };
    let call_ids = reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, c)| c.id.clone().unwrap_or_else(|| format!("{prefix}{n}_{i}")))
        .collect();
    render::Meta {
        id,
        model: conv.model.clone(),
        created: chrono::Utc::now().timestamp(),
        usage,
        call_ids,
    }
}

fn check_auth(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let key = shared.spec.api_key.as_deref()?;
    let dialect = shared.spec.dialect;
    let presented = match dialect {
        Dialect::Openai => headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ")),
        // Newer Anthropic SDKs send the key as a bearer token instead of `x-api-key`.
        Dialect::Anthropic => headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .or_else(|| {
                headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
            }),
    };
    match presented {
        Some(p) if p == key => None,
        Some(_) => Some(error_response(
            dialect,
            401,
            match dialect {
                Dialect::Openai => "Incorrect API key provided.",
                Dialect::Anthropic => "invalid x-api-key",
            },
            None,
        )),
        None => Some(error_response(
            dialect,
            401,
            match dialect {
                Dialect::Openai => {
                    "You didn't provide an API key. Provide it in the Authorization header (Bearer)."
                }
                Dialect::Anthropic => "x-api-key header is required",
            },
            None,
        )),
    }
}

/// A request held unanswered (`hang`): dropped before the mock shuts down, the client gave it up.
struct Held<'a> {
    shared: &'a Shared,
    ticket: Ticket,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.shared.ct.is_cancelled() {
            let at = now_rfc3339();
            self.shared
                .journal
                .update(self.ticket, |e| e.abandoned = Some(at));
        }
    }
}

/// Hang, injected status or malformed body.
async fn apply_terminal(
    shared: &Shared,
    ticket: Ticket,
    effects: &Effects,
    stream: bool,
) -> Response {
    if let Some(l) = effects.latency {
        sleep_or_stop(&shared.ct, l).await;
    }
    if effects.hang {
        // The server drops this future when the client closes the connection: the guard records
        // when, unless the mock itself is shutting down.
        let _held = Held { shared, ticket };
        shared.ct.cancelled().await;
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let dialect = shared.spec.dialect;
    let resp = if let Some((status, retry_after)) = effects.status {
        error_response(
            dialect,
            status,
            render::default_error_message(status),
            retry_after,
        )
    } else if stream {
        let garbage = match dialect {
            Dialect::Openai => "data: {\"id\":\"chatcmpl-mock\",\"choices\":[{\"delta\":\n\n",
            Dialect::Anthropic => "event: message_start\ndata: {\"type\":\"message_start\",\n\n",
        };
        sse_response(vec![Bytes::from_static(garbage.as_bytes())], None, None)
    } else {
        json_text_response(
            StatusCode::OK,
            "{\"id\": \"mock\", \"choices\": [".to_owned(),
        )
    };
    record_status(shared, ticket, &resp);
    resp
}
