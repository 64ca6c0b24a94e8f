//! Tests across families on hand-made progress, health and wire observations.

use super::{Fixture, kept};
use serde_json::{Value, json};

use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};
use crate::client::JsonDoc;
use crate::observation::{Observed, StepRecord};

fn step(name: &str, token: Option<Value>, progress: Vec<Value>, after: Vec<Value>) -> StepRecord {
    let mut s = StepRecord {
        name: name.into(),
        action: "send".into(),
        agent: Some("research".into()),
        started_at: "2026-01-01T00:00:00.000000Z".into(),
        ended_at: "2026-01-01T00:00:01.000000Z".into(),
        progress_token: token,
        ..StepRecord::default()
    };
    s.set_request(json!({}));
    s.set_output(json!({"progress": progress, "after_response": after}));
    s
}

fn note(token: Value, progress: f64, total: Option<f64>, message: &str) -> Value {
    let mut p = json!({"progressToken": token, "progress": progress, "message": message});
    if let Some(t) = total {
        p["total"] = json!(t);
    }
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p})
}

fn observed(steps: Vec<StepRecord>) -> Observed {
    Observed {
        steps,
        ..Observed::default()
    }
}

fn verdict(id: &str, o: &Observed) -> Outcome {
    run(id, &CheckSpec::default(), o)
}

fn seed_pattern(token: Value) -> Vec<Value> {
    vec![
        note(
            token.clone(),
            0.0,
            None,
            "research/research__research: started",
        ),
        note(token.clone(), 1.0, None, "harper step 1 (tool)"),
        note(token.clone(), 2.0, None, "harper step 2 (llm)"),
        note(
            token,
            1.0,
            Some(1.0),
            "research/research__research: completed",
        ),
    ]
}

#[test]
fn the_seeds_pattern_is_pallas_compatible_but_not_spec_strict() {
    let o = observed(vec![step(
        "s",
        Some(json!("abc")),
        seed_pattern(json!("abc")),
        vec![],
    )]);
    kept(verdict("PROG-004", &o));
    kept(verdict("PROG-005", &o));
    kept(verdict("PROG-006", &o));
    assert!(matches!(verdict("PROG-003", &o), Outcome::Fail(..)));
}

#[test]
fn prog_004_and_006_judge_the_numbers_not_the_wording() {
    let t = json!("t");
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![
            note(t.clone(), 0.0, None, "research/search: started"),
            note(t.clone(), 1.0, None, "harper: thinking (turn 1)"),
            note(t.clone(), 2.0, Some(2.0), "research/search: Error: quota"),
            note(t.clone(), 3.0, Some(3.0), "harper finished"),
        ],
        vec![],
    )]);
    kept(verdict("PROG-004", &o));
    kept(verdict("PROG-006", &o));
    assert!(matches!(verdict("PROG-005", &o), Outcome::Fail(..)));
    // Numbers still count: a step that goes backwards, an end below its total.
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![
            note(t.clone(), 2.0, None, "harper step 2 (llm)"),
            note(t.clone(), 1.0, None, "harper step 1 (llm)"),
        ],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-004", &o), Outcome::Fail(..)));
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![note(
            t.clone(),
            1.0,
            Some(2.0),
            "research/search: completed",
        )],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-004", &o), Outcome::Fail(..)));
    // A tool whose only later note is not terminal never ended.
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![
            note(t.clone(), 0.0, None, "research/search: started"),
            note(t, 1.0, None, "research/search: Error: quota"),
        ],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-006", &o), Outcome::Fail(..)));
}

#[test]
fn an_error_with_a_null_id_passes_mcp_001_unless_the_rest_breaks_the_schema() {
    let msg = |m: Value| crate::observation::ReceivedMessage {
        label: "a".into(),
        version: "2025-11-25".into(),
        message: JsonDoc::shared(&m),
        request_method: None,
    };
    let mut o = observed(vec![]);
    o.received = vec![msg(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "bad session"}}),
    )];
    // JSON-RPC 2.0 §5 and MCP's "except in error cases where the ID could not be read".
    kept(verdict("MCP-001", &o));
    // A null-id error whose code is no integer still breaks the schema.
    o.received = vec![msg(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": "x", "message": "bad"}}),
    )];
    assert!(matches!(verdict("MCP-001", &o), Outcome::Fail(..)));
    // A null id on a result is no error response: a breach.
    o.received = vec![msg(json!({"jsonrpc": "2.0", "id": null, "result": {}}))];
    assert!(matches!(verdict("MCP-001", &o), Outcome::Fail(..)));
    o.received = vec![msg(json!({"jsonrpc": "2.0", "id": 1}))];
    assert!(matches!(verdict("MCP-001", &o), Outcome::Fail(..)));
}

#[test]
fn a_token_of_another_type_is_not_an_exact_echo() {
    let o = observed(vec![step(
        "s",
        Some(json!(42)),
        seed_pattern(json!("42")),
        vec![],
    )]);
    let Outcome::Fail(reason, ev) = verdict("PROG-002", &o) else {
        panic!("should fail")
    };
    assert!(reason.contains("not echoed exactly"));
    assert_eq!(ev[0].expected.as_deref(), Some("42"));
    assert_eq!(ev[0].seen.as_deref(), Some("\"42\""));
}

#[test]
fn progress_without_a_token_fails_prog_001() {
    let o = observed(vec![step(
        "s",
        None,
        vec![note(json!("x"), 0.0, None, "a/b: started")],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-001", &o), Outcome::Fail(..)));
    // No notification on the call without a token, beside a call with one that got some: kept.
    let o = observed(vec![
        step("s", None, vec![], vec![]),
        step(
            "t",
            Some(json!("t")),
            vec![note(json!("t"), 0.0, None, "a/b: started")],
            vec![],
        ),
    ]);
    kept(verdict("PROG-001", &o));
    // No notification anywhere: a bridge that sends none tells nothing of a call without a token.
    let o = observed(vec![step("s", None, vec![], vec![])]);
    assert!(matches!(verdict("PROG-001", &o), Outcome::Inconclusive(_)));
}

#[test]
fn a_notification_after_the_result_fails_prog_007() {
    let late = note(json!("t"), 5.0, None, "harper step 5 (llm)");
    let o = observed(vec![step(
        "s",
        Some(json!("t")),
        vec![late.clone()],
        vec![late],
    )]);
    assert!(matches!(verdict("PROG-007", &o), Outcome::Fail(..)));
}

#[test]
fn completed_before_started_fails_prog_006_and_bad_messages_fail_prog_005() {
    let t = json!("t");
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![note(t.clone(), 1.0, Some(1.0), "a/b: completed")],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-006", &o), Outcome::Fail(..)));
    let o = observed(vec![step(
        "s",
        Some(t.clone()),
        vec![note(t, 1.0, None, "working…")],
        vec![],
    )]);
    assert!(matches!(verdict("PROG-005", &o), Outcome::Fail(..)));
}

#[test]
fn a_bearer_reaching_a_plain_server_fails_auth_002() {
    let mut s = step("s", None, vec![], vec![]);
    s.bearer = Some("tok-9".into());
    let mut o = observed(vec![s]);
    let entry: pallas_mocks::McpJournalEntry = serde_json::from_value(json!({
        "time": "2026-01-01T00:00:00.500000Z", "method": "POST",
        "headers": {"authorization": "Bearer tok-9"}, "jsonrpc_method": "tools/call", "tool": "forecast"
    }))
    .unwrap();
    o.mcp_journals.insert("weather".into(), vec![entry]);
    let c = CheckSpec {
        with: Some(json!({"server": "weather"})),
        ..CheckSpec::default()
    };
    assert!(matches!(run("AUTH-002", &c, &o), Outcome::Fail(..)));
    o.mcp_journals.get_mut("weather").unwrap()[0]
        .headers
        .clear();
    kept(run("AUTH-002", &c, &o));
}

#[test]
fn an_unhealthy_answer_fails_the_status_expectation_and_the_message_rule() {
    let mut s = step("h", None, vec![], vec![]);
    s.action = "health".into();
    s.set_request(json!({}));
    s.set_output(json!({"health": {"status": "degraded"}, "gate": "warning: "}));
    let o = observed(vec![s]);
    assert!(matches!(verdict("HEALTH-003", &o), Outcome::Fail(..)));
    let c = CheckSpec {
        with: Some(json!({"status": "ok"})),
        ..CheckSpec::default()
    };
    assert!(matches!(run("HEALTH-004", &c, &o), Outcome::Fail(..)));
    let c = CheckSpec {
        with: Some(json!({"gate": "allowed"})),
        ..CheckSpec::default()
    };
    assert!(matches!(run("HEALTH-009", &c, &o), Outcome::Fail(..)));
}

#[test]
fn a_timestamp_that_is_not_iso_8601_fails_health_011_and_none_at_all_is_inconclusive() {
    let answer = |health: serde_json::Value| {
        let mut s = step("h", None, vec![], vec![]);
        s.action = "health".into();
        s.set_request(json!({}));
        s.set_output(json!({"health": health, "gate": "allowed"}));
        observed(vec![s])
    };
    let epoch = answer(json!({"status": "ok", "timestamp": "1700000000"}));
    assert!(matches!(verdict("HEALTH-011", &epoch), Outcome::Fail(..)));
    // HEALTH-003 judges only the message, of an answer that is not `ok`.
    assert!(matches!(
        verdict("HEALTH-003", &epoch),
        Outcome::NotApplicable(..)
    ));
    let degraded = answer(json!({"status": "degraded", "message": "argos unreachable"}));
    kept(verdict("HEALTH-003", &degraded));
    let silent = answer(json!({"status": "degraded"}));
    assert!(matches!(verdict("HEALTH-003", &silent), Outcome::Fail(..)));
    let iso = answer(json!({"status": "ok", "timestamp": "2026-11-24T10:00:00Z"}));
    kept(verdict("HEALTH-011", &iso));
    let none = answer(json!({"status": "ok"}));
    assert!(matches!(
        verdict("HEALTH-011", &none),
        Outcome::Inconclusive(..)
    ));
}

/// A report's step line says what the exchange observed: status, content type, messages,
/// progress notifications and the kind of response; a step without an exchange says nothing.
#[test]
fn a_step_says_what_its_exchange_observed() {
    let notes = vec![
        note(json!("t"), 0.0, None, "argos/search: started"),
        note(json!("t"), 1.0, Some(1.0), "argos/search: completed"),
    ];
    let mut s = super::token_step(notes);
    s.set_output(json!({
        "status": 200,
        "content_type": "text/event-stream; charset=utf-8",
        "progress": s.output["progress"].clone(),
        "result": {"content": [{"type": "text", "text": "no"}], "isError": true},
    }));
    let line = s.observed_summary().unwrap_or_default();
    assert!(line.starts_with("HTTP 200 text/event-stream;"), "{line}");
    assert!(line.contains("2 progress notification(s)"), "{line}");
    assert!(line.ends_with("an isError result"), "{line}");
    let scrape = super::scrape("m", 0, json!([]));
    assert_eq!(
        scrape.observed_summary(),
        None,
        "a metrics scrape has no MCP exchange"
    );
}

/// `any:` holds when one alternative holds, and reports every failure when none does.
#[test]
fn any_holds_when_one_alternative_holds() {
    let spec = |n_call: u32, n_listen: u32| -> crate::scenario::AssertSpec {
        serde_json::from_value(json!({"any": [
            {"output": {"step": "call", "path": "$.progress[*]", "count": {"min": n_call}}},
            {"output": {"step": "listen", "path": "$.notifications[*]", "count": {"min": n_listen}}}
        ]}))
        .unwrap()
    };
    let mut call = super::step("call", "send", 0, 1, json!({"progress": [{"n": 1}]}));
    call.set_request(json!({}));
    let listen = super::step("listen", "listen", 0, 1, json!({"notifications": []}));
    let o = super::obs(vec![call, listen]);
    let check = |a: &crate::scenario::AssertSpec| crate::checks::assert::run(a, &o);
    // The call's stream carried one: holds, whatever the other says.
    kept(check(&spec(1, 1)));
    // Neither holds: a failure naming both.
    let Outcome::Fail(reason, _) = check(&spec(2, 1)) else {
        panic!("no alternative holds");
    };
    assert!(
        reason.starts_with("none of 2 alternatives holds"),
        "{reason}"
    );
    assert!(reason.matches(';').count() == 1, "{reason}");
    // An alternative that cannot be judged (no such step) is reported as such.
    let unknown: crate::scenario::AssertSpec = serde_json::from_value(json!({"any": [
        {"output": {"step": "nope", "path": "$", "exists": true}},
        {"output": {"step": "listen", "path": "$.notifications[*]", "count": {"min": 1}}}
    ]}))
    .unwrap();
    assert!(matches!(check(&unknown), Outcome::Error(_)));
}

#[test]
fn a_failed_field_shows_the_object_around_it() {
    let mut s = step("h", None, vec![], vec![]);
    s.action = "health".into();
    s.set_request(json!({}));
    s.set_output(json!({"health": {"status": "error", "message": "neo4j: HTTP 307"}}));
    let o = observed(vec![s]);
    let a: crate::scenario::AssertSpec = serde_json::from_value(
        json!({"output": {"step": "h", "path": "$.health.status", "equals": "ok"}}),
    )
    .unwrap();
    let Outcome::Fail(_, evidence) = crate::checks::assert::run(&a, &o) else {
        panic!("an `error` status is no `ok`");
    };
    assert_eq!(evidence.len(), 2, "{evidence:?}");
    assert_eq!(
        evidence[1].what,
        "step `h` `$.health`, the object holding `status`"
    );
    assert!(
        evidence[1]
            .seen
            .as_deref()
            .is_some_and(|s| s.contains("neo4j: HTTP 307")),
        "{evidence:?}"
    );
    // A held field shows its own value only.
    let a: crate::scenario::AssertSpec = serde_json::from_value(
        json!({"output": {"step": "h", "path": "$.health.status", "equals": "error"}}),
    )
    .unwrap();
    assert!(matches!(crate::checks::assert::run(&a, &o), Outcome::Kept(w) if w.len() == 1));
}
