//! Unit tests of the check families: each evaluator on good observations (pass), bad ones
//! (fail or warn) and absent ones (inconclusive or error). Shared fixtures live here.

use serde_json::{Value, json};

use crate::checks::{CheckSpec, Observed, Outcome, StepRecord};
use crate::scenario::DeploymentSpec;
use pallas_mocks::{LlmJournalEntry, McpJournalEntry};

mod basics;
mod bearer;
mod mcp;
mod messages;
mod metrics;
mod progress;
mod registry;

pub(super) fn at(sec: u32, frac: u32) -> String {
    format!("2026-01-01T00:00:{sec:02}.{frac:06}Z")
}

pub(super) fn step(name: &str, action: &str, from: u32, to: u32, output: Value) -> StepRecord {
    StepRecord {
        name: name.into(),
        action: action.into(),
        agent: Some("research".into()),
        started_at: at(from, 0),
        ended_at: at(to, 0),
        output,
        ..StepRecord::default()
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

pub(super) fn fails(o: &Outcome) -> bool {
    matches!(o, Outcome::Fail(..))
}

pub(super) fn skipped(o: &Outcome) -> bool {
    matches!(o, Outcome::NotApplicable(_))
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
    for family in super::FAMILIES {
        for (id, _) in family.iter() {
            assert!(
                catalog::get(id).is_some(),
                "evaluator for unknown check {id}"
            );
        }
    }
}
