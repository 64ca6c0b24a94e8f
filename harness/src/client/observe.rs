//! The observation recorder: every HTTP exchange, SSE event and JSON-RPC message the scripted
//! client sends or receives, in order, with timestamps relative to [`Recorder::new`].

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

/// Text that replaces a secret header value in every recorded observation.
pub const REDACTED: &str = "[redacted]";

/// Header names whose values are secrets (compared case-insensitively).
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-auth-token",
];

/// Redacts a header value when the header carries a secret.
///
/// `Authorization: Bearer tok-7` becomes `Bearer [redacted]` (the scheme stays, so a check can
/// still tell that a bearer was sent); other secret headers become `[redacted]`. Checks that must
/// compare bearers use the journals of the mocks, never the recorded headers.
pub fn redact_header(name: &str, value: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if !SECRET_HEADERS.contains(&lower.as_str()) {
        return value.to_owned();
    }
    if (lower == "authorization" || lower == "proxy-authorization")
        && let Some((scheme, _)) = value.split_once(' ')
    {
        return format!("{scheme} {REDACTED}");
    }
    REDACTED.to_owned()
}

/// Redacts every secret header of a list.
pub fn redact_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.clone(), redact_header(n, v)))
        .collect()
}

/// One HTTP request and what came back, as recorded (secrets redacted).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpExchange {
    /// HTTP method (`GET`, `POST`, `DELETE`).
    pub method: String,
    /// Full request URL.
    pub url: String,
    /// Request headers as sent, secret values redacted.
    pub request_headers: Vec<(String, String)>,
    /// Request body as text (JSON-RPC messages are also recorded as [`WireEventKind::Sent`]).
    pub request_body: Option<String>,
    /// Response status, if a response arrived.
    pub status: Option<u16>,
    /// Response headers, secret values redacted.
    pub response_headers: Vec<(String, String)>,
    /// Response `Content-Type`.
    pub content_type: Option<String>,
    /// Response body for non-streaming responses (JSON or text); `None` for SSE streams,
    /// whose events are recorded one by one.
    pub response_body: Option<String>,
    /// Milliseconds from sending the request until the response headers arrived (or the error).
    pub elapsed_ms: f64,
    /// Milliseconds from sending the request until the body or stream ended, when it did.
    pub completed_ms: Option<f64>,
    /// Transport error: connection refused, timeout, reset.
    pub error: Option<String>,
}

/// One Server-Sent Event as it arrived, including empty priming events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SseEventRecord {
    /// Sequence number of the [`WireEventKind::Http`] observation whose stream carried it.
    pub http_seq: u64,
    /// The `id:` field, if any.
    pub id: Option<String>,
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines (empty for a priming event).
    pub data: String,
    /// The `retry:` field, if any.
    pub retry: Option<u64>,
}

/// What one observation is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireEventKind {
    /// An HTTP exchange.
    Http(HttpExchange),
    /// A JSON-RPC message the client sent, in order.
    Sent(Value),
    /// A raw SSE event (every event, priming events included).
    SseEvent(SseEventRecord),
    /// A JSON-RPC message received (from SSE or a JSON body), in arrival order.
    Received {
        /// The message (shared with the exchange that read it).
        message: super::SharedMessage,
        /// The SSE event id that carried it, if it came over SSE.
        sse_event_id: Option<String>,
        /// Sequence number of the HTTP observation whose response carried it.
        http_seq: u64,
    },
    /// Something the peer sent that is not a JSON-RPC message (bad JSON in an SSE event or body).
    Malformed {
        /// Sequence number of the HTTP observation whose response carried it.
        http_seq: u64,
        /// The raw text.
        text: String,
        /// Why it could not be read.
        reason: String,
    },
}

/// One recorded wire event (an HTTP exchange, a message sent or received, an SSE event).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WireEvent {
    /// Position in the recording, from 1, strictly increasing.
    pub seq: u64,
    /// Milliseconds since the recorder was created.
    pub at_ms: f64,
    /// The connection label (an agent name, `registry`, `metrics`).
    pub label: String,
    /// What was observed.
    pub kind: WireEventKind,
}

#[derive(Debug)]
struct Inner {
    started: Instant,
    next_seq: u64,
    observations: Vec<WireEvent>,
    /// Secret values (bearer tokens, API keys) scrubbed from everything recorded.
    secrets: Vec<String>,
}

impl Inner {
    fn scrub(&self, text: &mut String) {
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), REDACTED);
            }
        }
    }

    fn scrub_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => self.scrub(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.scrub_json(v)),
            _ => {}
        }
    }

    fn scrub_http(&self, http: &mut HttpExchange) {
        for (_, v) in http
            .request_headers
            .iter_mut()
            .chain(http.response_headers.iter_mut())
        {
            self.scrub(v);
        }
        for text in [
            &mut http.request_body,
            &mut http.response_body,
            &mut http.error,
        ]
        .into_iter()
        .flatten()
        {
            self.scrub(text);
        }
    }

    fn scrub_kind(&self, kind: &mut WireEventKind) {
        if self.secrets.is_empty() {
            return;
        }
        match kind {
            WireEventKind::Http(http) => self.scrub_http(http),
            WireEventKind::Sent(message) => self.scrub_json(message),
            WireEventKind::Received { message, .. } => {
                // Copied only when a secret is in it: the shared copy stays unredacted for
                // the exchange, as before.
                if self.secrets.iter().any(|x| message.mentions(x)) {
                    let mut copy = message.to_value();
                    self.scrub_json(&mut copy);
                    *message = std::sync::Arc::new(copy.into());
                }
            }
            WireEventKind::SseEvent(event) => self.scrub(&mut event.data),
            WireEventKind::Malformed { text, .. } => self.scrub(text),
        }
    }
}

/// An ordered, shareable log of observations. Cloning shares the same log.
#[derive(Debug, Clone)]
pub struct Recorder(Arc<Mutex<Inner>>);

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// A new empty recorder; timestamps are relative to this moment.
    pub fn new() -> Self {
        Self(Arc::new(Mutex::new(Inner {
            started: Instant::now(),
            next_seq: 1,
            observations: Vec::new(),
            secrets: Vec::new(),
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Milliseconds since the recorder was created, or since its clock last restarted.
    pub fn now_ms(&self) -> f64 {
        self.lock().started.elapsed().as_secs_f64() * 1000.0
    }

    /// Restarts the clock of `at_ms`: a runner calls it when the steps begin, so that times a
    /// scenario states ("within 5.5 s of the request") do not include the implementation's
    /// start and readiness wait. Observations recorded before keep their times.
    pub fn restart_clock(&self) {
        self.lock().started = Instant::now();
    }

    /// Registers a secret value: from now on it is replaced by [`REDACTED`] wherever it would
    /// appear in a recorded observation (bodies, messages, headers, errors). Values shorter than
    /// 3 characters are ignored. The client registers every bearer and API key it sends.
    pub fn add_secret(&self, secret: &str) {
        if secret.chars().count() < 3 {
            return;
        }
        let mut inner = self.lock();
        if !inner.secrets.iter().any(|s| s == secret) {
            inner.secrets.push(secret.to_owned());
            // Longest first, so a secret containing another is replaced whole.
            inner.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Appends an observation and returns its sequence number.
    pub fn record(&self, label: &str, mut kind: WireEventKind) -> u64 {
        let mut inner = self.lock();
        inner.scrub_kind(&mut kind);
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let at_ms = inner.started.elapsed().as_secs_f64() * 1000.0;
        inner.observations.push(WireEvent {
            seq,
            at_ms,
            label: label.to_owned(),
            kind,
        });
        seq
    }

    /// Updates a recorded HTTP exchange in place (to add its body or completion time).
    pub fn update_http(&self, seq: u64, update: impl FnOnce(&mut HttpExchange)) {
        let mut inner = self.lock();
        let Some(index) = inner.observations.iter().rposition(|o| o.seq == seq) else {
            return;
        };
        let WireEventKind::Http(slot) = &mut inner.observations[index].kind else {
            return;
        };
        update(slot);
        let mut http = std::mem::replace(slot, empty_http());
        inner.scrub_http(&mut http);
        if let WireEventKind::Http(slot) = &mut inner.observations[index].kind {
            *slot = http;
        }
    }

    /// A copy of every observation so far, in order.
    pub fn snapshot(&self) -> Vec<WireEvent> {
        self.lock().observations.clone()
    }

    /// Every observation so far, in order, moved out of the recorder (which is left empty):
    /// the end of a scenario reads them once, without a copy.
    pub fn take(&self) -> Vec<WireEvent> {
        std::mem::take(&mut self.lock().observations)
    }

    /// Number of observations so far.
    pub fn len(&self) -> usize {
        self.lock().observations.len()
    }

    /// True when nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn empty_http() -> HttpExchange {
    HttpExchange {
        method: String::new(),
        url: String::new(),
        request_headers: Vec::new(),
        request_body: None,
        status: None,
        response_headers: Vec::new(),
        content_type: None,
        response_body: None,
        elapsed_ms: 0.0,
        completed_ms: None,
        error: None,
    }
}

/// The secret part of a header value that carries one: the token of `Bearer <token>`, the
/// whole value of an API-key header. `None` for other headers.
pub fn header_secret(name: &str, value: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if !SECRET_HEADERS.contains(&lower.as_str()) {
        return None;
    }
    match value.split_once(' ') {
        Some((_, token)) if lower.ends_with("authorization") => Some(token.trim().to_owned()),
        _ => Some(value.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_keeps_its_scheme_but_loses_its_token() {
        assert_eq!(
            redact_header("Authorization", "Bearer tok-7"),
            "Bearer [redacted]"
        );
        assert_eq!(redact_header("x-api-key", "sk-123"), "[redacted]");
        assert_eq!(
            redact_header("content-type", "application/json"),
            "application/json"
        );
    }

    #[test]
    fn registered_secrets_are_scrubbed_from_every_recorded_string() {
        let rec = Recorder::new();
        rec.add_secret("tok-7");
        rec.record(
            "a",
            WireEventKind::Received {
                message: std::sync::Arc::new(
                    serde_json::json!({"result": {"text": "saw Bearer tok-7", "n": [1, "tok-7"]}})
                        .into(),
                ),
                sse_event_id: None,
                http_seq: 0,
            },
        );
        let text = serde_json::to_string(&rec.snapshot()).unwrap();
        assert!(!text.contains("tok-7"), "{text}");
        assert!(text.contains("saw Bearer [redacted]"), "{text}");
        assert_eq!(
            header_secret("Authorization", "Bearer tok-7").as_deref(),
            Some("tok-7")
        );
        assert_eq!(header_secret("accept", "x"), None);
    }

    #[test]
    fn sequence_numbers_increase_and_clones_share_the_log() {
        let rec = Recorder::new();
        let other = rec.clone();
        let a = rec.record("a", WireEventKind::Sent(serde_json::json!({"id": 1})));
        let b = other.record("b", WireEventKind::Sent(serde_json::json!({"id": 2})));
        assert!(b > a);
        let snap = rec.snapshot();
        assert_eq!(snap.len(), 2);
        assert!(snap[0].at_ms <= snap[1].at_ms);
        assert_eq!(snap[1].label, "b");
    }
}
