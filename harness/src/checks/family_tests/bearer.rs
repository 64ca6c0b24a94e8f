//! Tests of the bearer checks.

use serde_json::json;

use super::*;
use crate::checks::CheckSpec;
use crate::checks::run_builtin as run;

#[test]
fn auth_003_wants_the_configured_header_not_the_inbound_bearer() {
    let mut o = obs(vec![bearer_step("call", 0, 2, Some("inbound"))]);
    o.deployment = Some(deployment(json!({"agents": {"research": {}}, "servers": {
        "mnemosyne": {"mock": "mnemosyne", "forward_inbound_auth": true,
                      "headers": {"Authorization": "Bearer configured"}}}})));
    o.mcp_journals.insert(
        "mnemosyne".into(),
        vec![mcp(
            at(1, 0),
            "tools/call",
            Some("s"),
            Some("Bearer configured"),
        )],
    );
    kept(run("AUTH-003", &CheckSpec::default(), &o));
    let c = with(json!({"server": "mnemosyne", "header": "Bearer configured"}));
    kept(run("AUTH-003", &c, &o));
    o.mcp_journals.get_mut("mnemosyne").unwrap()[0] =
        mcp(at(1, 0), "tools/call", Some("s"), Some("Bearer inbound"));
    assert!(fails(&run("AUTH-003", &CheckSpec::default(), &o)));
    o.deployment = Some(deployment(json!({"agents": {"research": {}}})));
    assert!(skipped(&run("AUTH-003", &CheckSpec::default(), &o)));
}

#[test]
fn auth_004_catches_a_bearer_lent_to_a_concurrent_call() {
    let mut a = bearer_step("call[0]", 0, 3, Some("tok-0"));
    let b = bearer_step("call[1]", 1, 4, Some("tok-1"));
    a.set_output(json!({"text": "headers: Authorization: Bearer tok-0"}));
    let mut o = obs(vec![a, b]);
    kept(run("AUTH-004", &CheckSpec::default(), &o));
    // The echoed headers of call[0] show call[1]'s bearer (tok-1 is not a prefix match of tok-10).
    o.steps[0].set_output(json!({"text": "Authorization: Bearer tok-1"}));
    assert!(fails(&run("AUTH-004", &CheckSpec::default(), &o)));
    // ... or in a JSON-RPC error the call got instead of a result.
    o.steps[0].set_output(json!({"status": 200, "error": {"code": -32603,
        "message": "downstream refused Authorization: Bearer tok-1"}}));
    assert!(fails(&run("AUTH-004", &CheckSpec::default(), &o)));
    // A stale bearer downstream: tok-9 belongs to a call that had ended.
    o.steps[0].set_output(json!({}));
    o.steps.push(bearer_step("old", 10, 11, Some("tok-9")));
    o.mcp_journals.insert(
        "m".into(),
        vec![mcp(at(2, 0), "tools/call", Some("s"), Some("Bearer tok-9"))],
    );
    assert!(fails(&run("AUTH-004", &CheckSpec::default(), &o)));
    let o = obs(vec![bearer_step("solo", 0, 1, Some("tok"))]);
    assert!(skipped(&run("AUTH-004", &CheckSpec::default(), &o)));
}

#[test]
fn auth_005_wants_no_authorization_on_a_bearer_less_call() {
    let mut o = obs(vec![
        bearer_step("with", 0, 1, Some("tok")),
        bearer_step("without", 2, 3, None),
    ]);
    o.deployment = Some(deployment(json!({"agents": {"research": {}}, "servers": {
        "argos": {"mock": "argos", "forward_inbound_auth": true}}})));
    o.mcp_journals.insert(
        "argos".into(),
        vec![
            mcp(at(0, 500000), "tools/call", Some("s"), Some("Bearer tok")),
            mcp(at(2, 500000), "tools/call", Some("s"), None),
        ],
    );
    kept(run("AUTH-005", &CheckSpec::default(), &o));
    let c = with(json!({"step": "without", "server": "argos"}));
    kept(run("AUTH-005", &c, &o));
    o.mcp_journals.get_mut("argos").unwrap()[1] =
        mcp(at(2, 500000), "tools/call", Some("s"), Some("Bearer tok"));
    assert!(fails(&run("AUTH-005", &c, &o)));
    o.mcp_journals.clear();
    assert!(skipped(&run("AUTH-005", &c, &o)));
}

/// A `get_health` step from `from` to `to` (seconds), carrying `bearer`.
fn health_step(name: &str, from: u32, to: u32, bearer: Option<&str>) -> StepRecord {
    let mut s = step(
        name,
        "health",
        from,
        to,
        json!({"status": 200, "health": {"status": "ok"}}),
    );
    s.bearer = bearer.map(str::to_owned);
    s
}

#[test]
fn auth_006_judges_only_bearers_of_requests_not_running_with_the_health_call() {
    let probe = |sec, auth| mcp(at(sec, 500000), "initialize", None, auth);
    // A call with a bearer, then a bearer-less health call whose probe carries none: a pass.
    let mut o = obs(vec![
        bearer_step("call", 0, 1, Some("tok-call")),
        health_step("health", 2, 3, None),
    ]);
    o.mcp_journals.insert("m".into(), vec![probe(2, None)]);
    kept(run("AUTH-006", &CheckSpec::default(), &o));
    // The probe carries the bearer of the call that had ended: a finding.
    o.mcp_journals
        .insert("m".into(), vec![probe(2, Some("Bearer tok-call"))]);
    assert!(fails(&run("AUTH-006", &CheckSpec::default(), &o)));
    // A health call carrying its own bearer: its probe may carry that one (seed 001's ContextVar
    // fallback for probe paths), never the ended call's.
    o.steps[1] = health_step("health", 2, 3, Some("tok-health"));
    o.mcp_journals
        .insert("m".into(), vec![probe(2, Some("Bearer tok-health"))]);
    kept(run("AUTH-006", &CheckSpec::default(), &o));
    o.mcp_journals
        .insert("m".into(), vec![probe(2, Some("Bearer tok-call"))]);
    assert!(fails(&run("AUTH-006", &CheckSpec::default(), &o)));
    // A bearer-carrying call running with the health call may lend its bearer: not judged, and
    // with no other bearer nothing is judged at all.
    let mut o = obs(vec![
        bearer_step("call", 0, 4, Some("tok-call")),
        health_step("health", 2, 3, None),
    ]);
    o.mcp_journals
        .insert("m".into(), vec![probe(2, Some("Bearer tok-call"))]);
    assert!(skipped(&run("AUTH-006", &CheckSpec::default(), &o)));
}
