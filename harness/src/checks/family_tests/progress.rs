//! Tests of the progress checks.

use serde_json::json;

use super::*;
use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};

#[test]
fn prog_008_wants_started_and_completed_for_every_journalled_tool_call() {
    let t = json!("t");
    let good = vec![
        note(t.clone(), 0.0, None, "argos/argos__search: started"),
        note(t.clone(), 1.0, Some(1.0), "argos/argos__search: completed"),
    ];
    let mut o = obs(vec![token_step(good.clone())]);
    o.mcp_journals.insert(
        "argos".into(),
        vec![mcp(at(1, 0), "tools/call", Some("search"), None)],
    );
    kept(run("PROG-008", &CheckSpec::default(), &o));
    o.steps[0] = token_step(vec![good[0].clone()]);
    assert!(fails(&run("PROG-008", &CheckSpec::default(), &o)));
    // Named with `with: {tools}` instead of the journal.
    let c = with(json!({"tools": ["weather/forecast"]}));
    o.steps[0] = token_step(good);
    assert!(fails(&run("PROG-008", &c, &o)));
    o.mcp_journals.clear();
    assert!(skipped(&run("PROG-008", &CheckSpec::default(), &o)));
}

#[test]
fn prog_008_warns_when_a_tool_ends_without_the_word_and_fails_when_it_never_ends() {
    let t = json!("t");
    let started = note(t.clone(), 0.0, None, "argos/argos__search: started");
    let mut o = obs(vec![token_step(vec![
        started.clone(),
        note(
            t.clone(),
            1.0,
            Some(1.0),
            "argos/argos__search: Error: timed out",
        ),
    ])]);
    o.mcp_journals.insert(
        "argos".into(),
        vec![mcp(at(1, 0), "tools/call", Some("search"), None)],
    );
    let Outcome::Breaks { rule, reason, .. } = run("PROG-008", &CheckSpec::default(), &o) else {
        panic!("an unworded end breaks the wording rule")
    };
    assert_eq!(rule, "s000.progress-completed-pattern");
    assert!(reason.contains("without the word"), "{reason}");
    // A note that is not at total = progress does not end the tool.
    o.steps[0] = token_step(vec![
        started,
        note(t, 1.0, None, "argos/argos__search: Error: timed out"),
    ]);
    assert!(fails(&run("PROG-008", &CheckSpec::default(), &o)));
}

#[test]
fn prog_009_wants_null_totals_on_loop_steps_and_one_of_one_when_finished() {
    let t = json!("t");
    let o = obs(vec![token_step(vec![
        note(t.clone(), 1.0, None, "harper step 1 (llm)"),
        note(t.clone(), 1.0, Some(1.0), "argos/search: failed"),
    ])]);
    kept(run("PROG-009", &CheckSpec::default(), &o));
    let o = obs(vec![token_step(vec![note(
        t.clone(),
        2.0,
        Some(5.0),
        "harper step 2 (tool)",
    )])]);
    assert!(fails(&run("PROG-009", &CheckSpec::default(), &o)));
    let o = obs(vec![token_step(vec![note(
        t,
        1.0,
        None,
        "argos/search: completed",
    )])]);
    assert!(fails(&run("PROG-009", &CheckSpec::default(), &o)));
    assert!(skipped(&run(
        "PROG-009",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn prog_010_fails_on_progress_well_after_the_cancellation() {
    let msg = |ms: f64| json!({"at_ms": ms, "message": {"method": "notifications/progress"}});
    let mut s = step(
        "cancel",
        "send",
        0,
        2,
        json!({"cancelled_at_ms": 100.0, "messages": [msg(90.0), msg(150.0)]}),
    );
    s.set_request(json!({"message": "m", "cancel_after_progress": 1}));
    let mut o = obs(vec![s]);
    kept(run("PROG-010", &CheckSpec::default(), &o));
    o.steps[0].set_output(json!({"cancelled_at_ms": 100.0, "messages": [msg(90.0), msg(900.0)]}));
    // Still processing after the cancellation: the SHOULD (stop processing).
    assert!(breaks(
        &run("PROG-010", &CheckSpec::default(), &o),
        "mcp.cancel-stop-processing"
    ));
    // Progress after the request's own response: the MUST (stop after completion).
    let answer = json!({"at_ms": 500.0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}});
    o.steps[0]
        .set_output(json!({"cancelled_at_ms": 100.0, "messages": [msg(90.0), answer, msg(900.0)]}));
    assert!(breaks(
        &run("PROG-010", &CheckSpec::default(), &o),
        "mcp.progress-stops-after-completion"
    ));
    o.steps[0].set_output(json!({"cancelled_at_ms": null, "messages": [msg(90.0), msg(900.0)]}));
    assert!(matches!(
        run("PROG-010", &CheckSpec::default(), &o),
        Outcome::Error(_)
    ));
    assert!(skipped(&run(
        "PROG-010",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn prog_003_says_when_the_seed_itself_prescribes_the_sequence() {
    let t = json!("t");
    // Seed 000's own example: 0 started, steps 1 and 2, then 1/1 completed.
    let seed = vec![
        note(t.clone(), 0.0, None, "research/research__research: started"),
        note(t.clone(), 1.0, None, "harper step 1 (tool)"),
        note(t.clone(), 2.0, None, "harper step 2 (llm)"),
        note(
            t.clone(),
            1.0,
            Some(1.0),
            "research/research__research: completed",
        ),
    ];
    let o = obs(vec![token_step(seed)]);
    let Outcome::Fail(reason, evidence) = run("PROG-003", &CheckSpec::default(), &o) else {
        panic!("MCP's MUST binds")
    };
    assert!(
        reason.contains("the sequence seed 000's example shows for a Pallas"),
        "{reason}"
    );
    assert!(reason.contains("MCP binds every bridge"), "{reason}");
    assert!(!evidence.is_empty());
    // A second tool starting at 0 after loop steps: the guarantee "`on_tool_start` (progress 0)
    // … for every downstream tool invocation" — the same cause, the same reason.
    let o = obs(vec![token_step(vec![
        note(t.clone(), 1.0, None, "harper step 1 (llm)"),
        note(t.clone(), 2.0, None, "harper step 2 (tool)"),
        note(t.clone(), 0.0, None, "argos/argos__search: started"),
    ])]);
    let Outcome::Fail(second, _) = run("PROG-003", &CheckSpec::default(), &o) else {
        panic!("MCP's MUST binds")
    };
    assert_eq!(second, reason);
    // Any other fall is reported as it is.
    let o = obs(vec![token_step(vec![
        note(t.clone(), 2.0, None, "harper step 2 (llm)"),
        note(t, 1.0, None, "harper step 1 (llm)"),
    ])]);
    let Outcome::Fail(reason, _) = run("PROG-003", &CheckSpec::default(), &o) else {
        panic!("a fall fails")
    };
    assert_eq!(reason, "progress went from 2 to 1");
}

#[test]
fn prog_012_failing_on_the_wording_alone_is_folded_into_prog_005() {
    use crate::checks::{Verdict, evaluate};
    let scenario = crate::scenario::parse_str(
        "t.yaml",
        "id: t\ntitle: t\nsteps:\n  - name: call\n    send: {agent: harper, message: hi, progress_token: t}\nchecks:\n  - check: PROG-005\n  - check: PROG-012\n    assert:\n      output: {step: call, path: \"$.progress[?match(@.params.message, 'harper step 1 [(](llm|tool)[)]')]\", count: {equals: 1}}\n",
    )
    .expect("scenario parses");
    let verdicts = |notes: Vec<serde_json::Value>| {
        let results = evaluate(
            &scenario,
            &obs(vec![token_step(notes)]),
            &|_| true,
            crate::checks::Grading::default(),
            &crate::redact::Redactor::default(),
        );
        let of = |id: &str| {
            results
                .iter()
                .find(|r| r.id == id)
                .map(|r| (r.verdict, r.reason.clone()))
                .expect("reported")
        };
        (of("PROG-005"), of("PROG-012"))
    };
    // A breach at the check's level (PROG-005 is a SHOULD: warn).
    let breach = |v: Verdict| matches!(v, Verdict::Fail | Verdict::Warn);
    let t = json!("t");
    // Another wording: PROG-005 fails; PROG-012 has no step numbers, one cause, one finding.
    let (p5, p12) = verdicts(vec![note(t.clone(), 0.0, None, "Calling the model")]);
    assert!(breach(p5.0), "{:?}", p5);
    assert_eq!(p12.0, Verdict::Skip, "{}", p12.1);
    assert!(p12.1.contains("PROG-005"), "{}", p12.1);
    // A wording that only resembles the seed's (fast-agent's `{agent}/agent_loop: step N`).
    let (p5, p12) = verdicts(vec![
        note(t.clone(), 0.0, None, "harper/agent_loop: step 1 (llm)"),
        note(
            t.clone(),
            1.0,
            None,
            "harper/agent_loop: step 2 (tool argos__search)",
        ),
    ]);
    assert!(breach(p5.0), "{:?}", p5);
    assert_eq!(p12.0, Verdict::Skip, "{}", p12.1);
    // The seed's wording counted from 0: PROG-005 passes and PROG-012 is its own finding.
    let (p5, p12) = verdicts(vec![note(t.clone(), 0.0, None, "harper step 0 (llm)")]);
    assert_eq!(p5.0, Verdict::Pass);
    assert!(breach(p12.0), "{:?}", p12);
    // Wrong wording beside a misnumbered step in the seed's wording: both are reported.
    let (p5, p12) = verdicts(vec![
        note(t.clone(), 0.0, None, "harper step 0 (llm)"),
        note(t, 1.0, None, "Calling the model"),
    ]);
    assert!(breach(p5.0) && breach(p12.0), "{p5:?} {p12:?}");
}

#[test]
fn a_call_that_got_no_notification_is_never_a_pass_of_the_per_token_checks() {
    // A token-carrying call answered without any notification: PROG-002 (token echoed) and
    // PROG-003 (increasing) have nothing to judge.
    let o = obs(vec![token_step(vec![])]);
    for id in ["PROG-002", "PROG-003", "PROG-005"] {
        let out = run(id, &CheckSpec::default(), &o);
        assert!(
            matches!(out, Outcome::Inconclusive(ref r) if r.contains("got a progress notification") || r.contains("got 2 progress notifications")),
            "{id}: {out:?}"
        );
    }
    // With one call that got notifications, that call is judged.
    let t = json!("t");
    let o = obs(vec![
        token_step(vec![]),
        token_step(vec![note(t.clone(), 0.0, None, "harper step 1 (llm)")]),
    ]);
    kept(run("PROG-002", &CheckSpec::default(), &o));
    // One notification per call shows no increase: PROG-003 counts per call, never over all.
    let one_each = obs(vec![
        token_step(vec![note(t.clone(), 0.0, None, "harper step 1 (llm)")]),
        token_step(vec![note(t.clone(), 1.0, None, "harper step 1 (llm)")]),
    ]);
    assert!(
        matches!(run("PROG-003", &CheckSpec::default(), &one_each), Outcome::Inconclusive(ref r) if r.contains("got 2 progress notifications")),
        "{:?}",
        run("PROG-003", &CheckSpec::default(), &one_each)
    );
    let two = obs(vec![token_step(vec![
        note(t.clone(), 0.0, None, "harper step 1 (llm)"),
        note(t, 1.0, None, "harper step 2 (llm)"),
    ])]);
    kept(run("PROG-003", &CheckSpec::default(), &two));
}

#[test]
fn a_step_message_names_the_agent_not_a_server_path() {
    let t = json!("t");
    let o = obs(vec![token_step(vec![note(
        t,
        0.0,
        None,
        "harper/agent_loop: step 1 (llm)",
    )])]);
    assert!(fails(&run("PROG-005", &CheckSpec::default(), &o)));
}
