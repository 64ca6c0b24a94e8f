//! Unit tests of the check families: each evaluator on good observations (pass), bad ones
//! (fail or warn) and absent ones (inconclusive or error). Shared fixtures live here.

use serde_json::{Value, json};

use crate::checks::{CheckSpec, Outcome};
use crate::client::{Exchange, HealthReport, JsonDoc, MetricsScrape, RegistryFetch, TimedMessage};
use crate::observation::{Connected, HealthAnswered, MessageSent, Observation};
use crate::observation::{Observed, StepRecord};
use crate::scenario::DeploymentSpec;
use pallas_mocks::{LlmJournalEntry, McpJournalEntry};

mod basics;
mod bearer;
mod mcp;
mod messages;
mod metrics;
mod progress;
mod registry;
mod rules;

pub(super) fn at(sec: u32, frac: u32) -> String {
    format!("2026-01-01T00:00:{sec:02}.{frac:06}Z")
}

pub(super) fn step(name: &str, action: &str, from: u32, to: u32, output: Value) -> StepRecord {
    let mut s = StepRecord {
        name: name.into(),
        action: action.into(),
        agent: Some("research".into()),
        started_at: at(from, 0),
        ended_at: at(to, 0),
        ..StepRecord::default()
    };
    s.set_request(json!({}));
    s.set_output(output);
    s
}

/// Fixtures write a step's output and request in their JSON form; these set the typed
/// observation and step those stand for.
pub(super) trait Fixture {
    /// Sets the observation whose JSON form `output` abbreviates.
    fn set_output(&mut self, output: Value);
    /// Sets the step's action options (`agent` defaults to the step's agent).
    fn set_request(&mut self, request: Value);
}

impl Fixture for StepRecord {
    fn set_output(&mut self, output: Value) {
        self.observation = typed(&self.action, &output);
        self.output = output;
    }

    fn set_request(&mut self, mut request: Value) {
        let action = self.action.clone();
        if action == "registry" || action == "metrics" {
            self.spec = serde_json::from_value(json!({ action: request })).unwrap();
            return;
        }
        if request.get("agent").is_none() {
            request["agent"] = json!(self.agent.clone().unwrap_or_default());
        }
        match action.as_str() {
            "send" if request.get("message").is_none() => request["message"] = json!("m"),
            "raw" if request.get("body").is_none() => request["body"] = json!("{}"),
            "call" if request.get("tool").is_none() => request["tool"] = json!("t"),
            "request" if request.get("method").is_none() => request["method"] = json!("ping"),
            "listen" if request.get("for").is_none() => request["for"] = json!("1s"),
            _ => {}
        }
        self.spec = serde_json::from_value(json!({ action.clone(): request.clone() }))
            .unwrap_or_else(|e| panic!("{action}: {request}: {e}"));
    }
}

/// The observation a step of `action` records, from its JSON form (absent keys: no status,
/// no response).
#[expect(
    clippy::too_many_lines,
    reason = "test support: one arm per step action, building its typed observation from a JSON fixture"
)]
pub(super) fn typed(action: &str, out: &Value) -> Observation {
    let status = out.get("status").and_then(Value::as_u64).unwrap_or(0) as u16;
    let content_type = out
        .get("content_type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match action {
        "registry" => Observation::RegistryFetched(RegistryFetch {
            url: String::new(),
            status,
            content_type,
            body: out.get("body").cloned(),
            unreadable: None,
            text: out
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            elapsed_ms: 0.0,
        }),
        "metrics" => Observation::MetricsScraped(MetricsScrape {
            url: String::new(),
            status,
            content_type,
            text: String::new(),
            families: serde_json::from_value(out.get("families").cloned().unwrap_or(json!([])))
                .unwrap(),
            parse_errors: Vec::new(),
        }),
        _ => {
            let result = out.get("result").cloned().or_else(|| {
                out.get("text")
                    .map(|t| json!({"content": [{"type": "text", "text": t}]}))
            });
            let after: Vec<Value> = out
                .get("after_response")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let response = match (result, out.get("error")) {
                (Some(r), _) => Some(json!({"jsonrpc": "2.0", "id": 1, "result": r})),
                (None, Some(e)) => Some(json!({"jsonrpc": "2.0", "id": 1, "error": e})),
                // Messages after the response need one to come after.
                (None, None) if !after.is_empty() => {
                    Some(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
                }
                (None, None) => None,
            };
            let mut messages: Vec<TimedMessage> = match out.get("messages") {
                Some(m) => serde_json::from_value::<Vec<Value>>(m.clone())
                    .unwrap()
                    .into_iter()
                    .map(|m| TimedMessage {
                        at_ms: m["at_ms"].as_f64().unwrap_or(0.0),
                        message: JsonDoc::shared(&m["message"]),
                        sse_event_id: m["sse_event_id"].as_str().map(str::to_owned),
                    })
                    .collect(),
                None => out
                    .get("progress")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, p)| TimedMessage {
                        at_ms: i as f64,
                        message: JsonDoc::shared(p),
                        sse_event_id: None,
                    })
                    .collect(),
            };
            for m in response.iter().chain(&after) {
                messages.push(TimedMessage {
                    at_ms: messages.len() as f64,
                    message: JsonDoc::shared(m),
                    sse_event_id: None,
                });
            }
            let exchange = Exchange {
                status,
                headers: Vec::new(),
                content_type,
                elapsed_ms: 0.0,
                messages,
                response: response.map(|r| JsonDoc::shared(&r)),
                body_text: out
                    .get("body_text")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                body_bytes: out.get("body_bytes").and_then(Value::as_u64).unwrap_or(0),
                timed_out: out
                    .get("timed_out")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                problem: None,
                stream_ended: out
                    .get("stream_ended")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            };
            let has_exchange = out.as_object().is_some_and(|m| {
                m.keys().any(|k| {
                    !["health", "health_error", "gate", "cancelled_at_ms"].contains(&k.as_str())
                })
            });
            let exchange = has_exchange.then_some(exchange);
            match action {
                "health" => Observation::HealthAnswered(HealthAnswered {
                    exchange,
                    health: match out.get("health") {
                        Some(h) => Ok(HealthReport {
                            status: h["status"].as_str().unwrap_or_default().to_owned(),
                            timestamp: h["timestamp"].as_str().map(str::to_owned),
                            message: h["message"].as_str().map(str::to_owned),
                        }),
                        None => Err(out["health_error"]
                            .as_str()
                            .unwrap_or("no result")
                            .to_owned()),
                    },
                    gate: out["gate"].as_str().unwrap_or_default().to_owned(),
                }),
                "send" => {
                    // A fixture's `reply_path`: the profile's, read as the runner reads it.
                    let reply_path = out.get("reply_path").and_then(Value::as_str).map(|p| {
                        serde_json_path::JsonPath::parse(p).expect("a fixture's reply_path")
                    });
                    Observation::MessageSent(MessageSent {
                        dropped: out.get("dropped_at_ms").and_then(Value::as_f64),
                        ..MessageSent::new(
                            exchange,
                            out.get("cancelled_at_ms").map(Value::as_f64),
                            reply_path.as_ref(),
                        )
                    })
                }
                "connect" => match exchange {
                    Some(exchange) => Observation::Connected(Connected {
                        exchange,
                        session_id: out["session_id"].as_str().map(str::to_owned),
                        protocol_version: out["protocol_version"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        era: "2025-11-25",
                        initialized: out.get("initialized").map(|ack| {
                            match typed("request", ack) {
                                Observation::Exchanged(x) => x,
                                other => panic!("an initialized ack fixture: {other:?}"),
                            }
                        }),
                    }),
                    None => Observation::Nothing,
                },
                _ => exchange.map_or(Observation::Nothing, Observation::Exchanged),
            }
        }
    }
}

pub(super) fn with(v: Value) -> CheckSpec {
    CheckSpec {
        with: Some(v),
        ..CheckSpec::default()
    }
}

pub(super) fn mcp(
    time: String,
    method: &str,
    tool: Option<&str>,
    auth: Option<&str>,
) -> McpJournalEntry {
    let mut headers = serde_json::Map::new();
    if let Some(a) = auth {
        headers.insert("authorization".into(), json!(a));
    }
    serde_json::from_value(json!({
        "time": time, "method": "POST", "headers": headers,
        "jsonrpc_method": method, "tool": tool, "status": 200
    }))
    .unwrap()
}

pub(super) fn llm(time: String, body: Value, status: u16) -> LlmJournalEntry {
    serde_json::from_value(json!({
        "time": time, "method": "POST", "path": "/v1/chat/completions",
        "headers": {}, "body": body, "status": status
    }))
    .unwrap()
}

pub(super) fn deployment(v: Value) -> DeploymentSpec {
    serde_json::from_value(v).unwrap()
}

pub(super) fn obs(steps: Vec<StepRecord>) -> Observed {
    Observed {
        steps,
        ..Observed::default()
    }
}

/// A broken rule: the check's first (`Fail`) or one it names (`Breaks`).
/// Asserts that `o` kept its rule, with a witness that shows something.
#[track_caller]
pub(super) fn kept(o: Outcome) {
    match &o {
        Outcome::Kept(w) if !w.is_empty() && w.iter().all(|w| !w.seen.trim().is_empty()) => {}
        other => panic!("expected a pass with its witness, got {other:?}"),
    }
}

pub(super) fn fails(o: &Outcome) -> bool {
    matches!(o, Outcome::Fail(..) | Outcome::Breaks { .. })
}

/// A break that names rule `rule`.
pub(super) fn breaks(o: &Outcome, rule: &str) -> bool {
    matches!(o, Outcome::Breaks { rule: r, .. } if r == rule)
}

/// Not judged: not applicable (the observed shape cannot carry the clause) or not observed.
pub(super) fn skipped(o: &Outcome) -> bool {
    matches!(o, Outcome::NotApplicable(_) | Outcome::Inconclusive(_))
}

pub(super) fn note(token: Value, progress: f64, total: Option<f64>, message: &str) -> Value {
    let mut p = json!({"progressToken": token, "progress": progress, "message": message});
    if let Some(t) = total {
        p["total"] = json!(t);
    }
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p})
}

pub(super) fn registry(servers: Value) -> StepRecord {
    step(
        "registry",
        "registry",
        0,
        1,
        json!({"status": 200, "body": {"servers": servers}}),
    )
}

pub(super) fn token_step(notes: Vec<Value>) -> StepRecord {
    let mut s = step("call", "send", 0, 3, json!({"progress": notes}));
    s.progress_token = Some(json!("t"));
    s
}

pub(super) fn bearer_step(name: &str, from: u32, to: u32, bearer: Option<&str>) -> StepRecord {
    let mut s = step(name, "send", from, to, json!({"status": 200}));
    s.bearer = bearer.map(str::to_owned);
    s
}

pub(super) fn scrape(name: &str, from: u32, families: Value) -> StepRecord {
    step(
        name,
        "metrics",
        from,
        from + 1,
        json!({"status": 200, "families": families}),
    )
}

pub(super) fn counter(v: f64) -> Value {
    json!([
        {"name": "pallas_send_message_total", "kind": "counter", "samples": [
            {"name": "pallas_send_message_total", "labels": {"agent": "research", "outcome": "ok"}, "value": v}]},
        {"name": "pallas_send_message_duration_seconds", "kind": "histogram", "samples": [
            {"name": "pallas_send_message_duration_seconds_count", "labels": {"agent": "research"}, "value": v}]}
    ])
}

#[test]
fn every_catalogued_check_has_its_evaluator_and_every_evaluator_its_check() {
    use crate::catalog::{self, Evaluation};
    for def in catalog::all() {
        let has = crate::checks::evaluator(&def.id).is_some();
        match def.evaluation {
            Evaluation::Builtin | Evaluation::Automatic => {
                assert!(has, "{} has no evaluator in its family file", def.id)
            }
            Evaluation::Assertion => assert!(!has, "{} is decided by assertions only", def.id),
        }
    }
    for family in crate::checks::value::FAMILIES {
        for check in family.iter() {
            assert!(
                check.def().is_some(),
                "a family lists the unknown check {}",
                check.id
            );
        }
    }
}

#[test]
fn every_premise_can_be_missing_and_names_what_was_not_observed() {
    let nothing = Observed::default();
    let mut with_premise = 0;
    for check in crate::checks::value::FAMILIES.iter().flat_map(|f| f.iter()) {
        if check.premise.is_some() {
            with_premise += 1;
            let why = check.missing(&nothing);
            assert!(why.is_some_and(|w| !w.is_empty()), "{}: {why:?}", check.id);
        }
    }
    assert!(with_premise >= 20, "{with_premise} checks carry a premise");
}
