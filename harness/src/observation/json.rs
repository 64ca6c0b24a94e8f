//! The JSON face of a step's observation: the step output that `output:` assertions,
//! `capture:` and `until:` query and that reports show.

use serde_json::{Value, json};

use super::Observation;
use super::step::first_text;
use crate::client::Exchange;

impl Observation {
    /// The step's output as JSON: what `output:` assertions, captures and reports read.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Nothing => Value::Null,
            Self::RegistryFetched(f) => json!({
                "url": f.url, "status": f.status, "content_type": f.content_type,
                "body": f.body, "text": f.text, "elapsed_ms": f.elapsed_ms,
            }),
            Self::Connected(c) => {
                let mut o = exchange_json(&c.exchange);
                o["session_id"] = json!(c.session_id);
                o["protocol_version"] = json!(c.protocol_version);
                o["era"] = json!(c.era);
                o
            }
            Self::Exchanged(x) => exchange_json(x),
            Self::HealthAnswered(h) => {
                let mut o = h.exchange.as_ref().map_or_else(|| json!({}), exchange_json);
                match &h.health {
                    Ok(r) => o["health"] = serde_json::to_value(r).unwrap_or_default(),
                    Err(e) => o["health_error"] = json!(e),
                }
                o["gate"] = json!(h.gate);
                o
            }
            Self::MessageSent(m) => {
                let Some(at) = m.cancellation else {
                    return m.exchange.as_ref().map_or(Value::Null, exchange_json);
                };
                let mut o = m.exchange.as_ref().map_or_else(|| json!({}), exchange_json);
                o["cancelled_at_ms"] = json!(at);
                if let (Some(at), Some(x)) = (at, &m.exchange) {
                    let after: Vec<&Value> = x
                        .progress()
                        .filter(|p| p.at_ms > at)
                        .map(|p| &*p.message)
                        .collect();
                    o["progress_after_cancel"] = json!(after);
                }
                o
            }
            Self::MetricsScraped(m) => serde_json::to_value(m).unwrap_or_default(),
            Self::HttpAnswered(h) => h.to_json(),
            Self::ProcessRead(p) => crate::process::output_json(p),
            Self::FileRead(f) => f.to_json(),
            Self::Waited(d) => json!({"waited_ms": d.as_millis() as u64}),
            Self::Reloaded(files) => json!({"files": files}),
        }
    }
}

/// An MCP exchange as step output.
fn exchange_json(x: &Exchange) -> Value {
    let headers: serde_json::Map<String, Value> = x
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), Value::String(v.clone())))
        .collect();
    // Built from clones, not `json!` (which re-serialises every value): a huge answer costs
    // a copy per key, not a serialisation.
    let list = |items: Vec<&Value>| Value::Array(items.into_iter().cloned().collect());
    let opt = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
    let mut o = serde_json::Map::new();
    o.insert("status".into(), json!(x.status));
    o.insert("content_type".into(), json!(x.content_type));
    o.insert("headers".into(), Value::Object(headers));
    o.insert("elapsed_ms".into(), json!(x.elapsed_ms));
    o.insert("timed_out".into(), json!(x.timed_out));
    o.insert("response".into(), opt(x.response.as_deref()));
    o.insert("result".into(), opt(x.result()));
    o.insert("error".into(), opt(x.error()));
    o.insert("text".into(), json!(first_text(x)));
    o.insert(
        "messages".into(),
        Value::Array(
            x.messages
                .iter()
                .map(|m| {
                    let mut e = serde_json::Map::new();
                    e.insert("at_ms".into(), json!(m.at_ms));
                    e.insert("message".into(), Value::clone(&m.message));
                    e.insert("sse_event_id".into(), json!(m.sse_event_id));
                    Value::Object(e)
                })
                .collect(),
        ),
    );
    o.insert(
        "notifications".into(),
        list(x.notifications().map(|m| &*m.message).collect()),
    );
    o.insert(
        "progress".into(),
        list(x.progress().map(|m| &*m.message).collect()),
    );
    o.insert(
        "after_response".into(),
        list(x.after_response().map(|m| &*m.message).collect()),
    );
    o.insert("body_text".into(), json!(x.body_text));
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::TimedMessage;
    use crate::observation::{HealthAnswered, MessageSent};

    fn exchange(messages: Vec<(f64, Value)>, response: Value) -> Exchange {
        Exchange {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            content_type: Some("text/event-stream".into()),
            elapsed_ms: 5.0,
            messages: messages
                .into_iter()
                .map(|(at_ms, message)| TimedMessage {
                    at_ms,
                    message: message.into(),
                    sse_event_id: Some("1".into()),
                })
                .collect(),
            response: Some(response.into()),
            body_text: None,
            timed_out: false,
            problem: None,
        }
    }

    fn progress(p: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": p}})
    }

    #[test]
    fn typed_readers_and_the_json_form_agree() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "image"}, {"type": "text", "text": "done"}]}});
        let x = exchange(
            vec![
                (1.0, progress(0)),
                (2.0, progress(1)),
                (3.0, answer.clone()),
            ],
            answer,
        );
        let o = Observation::Exchanged(x);
        let j = o.to_json();
        assert_eq!(o.status(), 200);
        assert_eq!(j["status"], 200);
        assert_eq!(o.text(), Some("done"));
        assert_eq!(j["text"], "done");
        assert_eq!(o.progress().len(), 2);
        assert_eq!(j["progress"].as_array().map(Vec::len), Some(2));
        assert_eq!(j["headers"]["content-type"], "text/event-stream");
        assert_eq!(o.content_type(), Some("text/event-stream"));
        assert!(o.jsonrpc_error().is_none());
        assert!(j["after_response"].as_array().is_some_and(Vec::is_empty));
    }

    #[test]
    fn a_cancelled_send_lists_the_progress_that_came_after_the_cancellation() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let x = exchange(vec![(1.0, progress(0)), (9.0, progress(1))], answer);
        let sent = |cancellation| {
            Observation::MessageSent(MessageSent {
                exchange: Some(x.clone()),
                cancellation,
            })
        };
        let j = sent(Some(Some(5.0))).to_json();
        assert_eq!(j["cancelled_at_ms"], 5.0);
        assert_eq!(j["progress_after_cancel"], json!([progress(1)]));
        assert_eq!(sent(Some(Some(5.0))).cancelled_at_ms(), Some(5.0));
        // Asked for but never sent: the key is there, null, and nothing is "after" it.
        let j = sent(Some(None)).to_json();
        assert!(j.get("cancelled_at_ms").is_some_and(Value::is_null));
        assert!(j.get("progress_after_cancel").is_none());
        // No cancellation asked: the plain exchange.
        assert!(sent(None).to_json().get("cancelled_at_ms").is_none());
        let failed = Observation::MessageSent(MessageSent {
            exchange: None,
            cancellation: None,
        });
        assert_eq!(failed.to_json(), Value::Null);
    }

    #[test]
    fn a_health_answer_that_is_not_one_keeps_why() {
        let h = Observation::HealthAnswered(HealthAnswered {
            exchange: None,
            health: Err("no result".into()),
            gate: "blocked: no result".into(),
        });
        let j = h.to_json();
        assert_eq!(
            j,
            json!({"health_error": "no result", "gate": "blocked: no result"})
        );
        assert!(h.health().is_none());
        assert_eq!(h.status(), 0);
    }
}
