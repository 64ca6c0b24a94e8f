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
    /// Request body as text (JSON-RPC messages are also recorded as [`ObservationKind::Sent`]).
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
    /// Sequence number of the [`ObservationKind::Http`] observation whose stream carried it.
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
pub enum ObservationKind {
    /// An HTTP exchange.
    Http(HttpExchange),
    /// A JSON-RPC message the client sent, in order.
    Sent(Value),
    /// A raw SSE event (every event, priming events included).
    SseEvent(SseEventRecord),
    /// A JSON-RPC message received (from SSE or a JSON body), in arrival order.
    Received {
        /// The message.
        message: Value,
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

/// One recorded observation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// Position in the recording, from 1, strictly increasing.
    pub seq: u64,
    /// Milliseconds since the recorder was created.
    pub at_ms: f64,
    /// The connection label (an agent name, `registry`, `metrics`).
    pub label: String,
    /// What was observed.
    pub kind: ObservationKind,
}

#[derive(Debug)]
struct Inner {
    started: Instant,
    next_seq: u64,
    observations: Vec<Observation>,
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
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Milliseconds since the recorder was created.
    pub fn now_ms(&self) -> f64 {
        self.lock().started.elapsed().as_secs_f64() * 1000.0
    }

    /// Milliseconds between the recorder's start and `instant`.
    pub fn ms_at(&self, instant: Instant) -> f64 {
        let started = self.lock().started;
        instant.saturating_duration_since(started).as_secs_f64() * 1000.0
    }

    /// Appends an observation and returns its sequence number.
    pub fn record(&self, label: &str, kind: ObservationKind) -> u64 {
        let mut inner = self.lock();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let at_ms = inner.started.elapsed().as_secs_f64() * 1000.0;
        inner.observations.push(Observation {
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
        if let Some(obs) = inner.observations.iter_mut().rev().find(|o| o.seq == seq)
            && let ObservationKind::Http(http) = &mut obs.kind
        {
            update(http);
        }
    }

    /// A copy of every observation so far, in order.
    pub fn snapshot(&self) -> Vec<Observation> {
        self.lock().observations.clone()
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
    fn sequence_numbers_increase_and_clones_share_the_log() {
        let rec = Recorder::new();
        let other = rec.clone();
        let a = rec.record("a", ObservationKind::Sent(serde_json::json!({"id": 1})));
        let b = other.record("b", ObservationKind::Sent(serde_json::json!({"id": 2})));
        assert!(b > a);
        let snap = rec.snapshot();
        assert_eq!(snap.len(), 2);
        assert!(snap[0].at_ms <= snap[1].at_ms);
        assert_eq!(snap[1].label, "b");
    }
}
