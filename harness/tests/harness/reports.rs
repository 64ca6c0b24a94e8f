//! Snapshots of every report format, with times and ports redacted. Every report is rendered
//! from the sample run's event stream, saved as JSONL and replayed, as the CLI renders them.

use pallas_conformance::checks::{CheckResult, Evidence, Verdict, Witness};
use pallas_conformance::report;
use pallas_conformance::runner::{
    self, RunEvent, RunResult, ScenarioResult, StaleEntry, StepSummary,
};
use pallas_conformance::scenario::Level;

fn check(id: &str, level: Level, verdict: Verdict, reason: &str) -> CheckResult {
    CheckResult {
        id: id.into(),
        level,
        refs: vec!["seed 000 §4 Agent Progress Notifications".into()],
        quote: (verdict != Verdict::Pass)
            .then(|| "Progress notifications **MUST** stop after completion".to_owned()),
        rule: matches!(verdict, Verdict::Fail | Verdict::Warn)
            .then(|| "mcp.progress-stops-after-completion".to_owned()),
        title: format!("{id} title"),
        verdict,
        reason: reason.into(),
        evidence: if verdict == Verdict::Fail {
            vec![Evidence {
                what: "with-string progress #0".into(),
                expected: Some("\"abc\"".into()),
                seen: Some("{\"progressToken\":1,\"url\":\"http://127.0.0.1:41234/mcp\"}".into()),
                path: Some("/progress/0".into()),
            }]
        } else {
            Vec::new()
        },
        observed: if verdict == Verdict::Pass {
            vec![Witness::new(
                "with-string (token 1)",
                "2 progress notification(s), the first {\"progress\":1}",
            )]
        } else {
            Vec::new()
        },
        premise: false,
        transcript: if verdict == Verdict::Fail {
            vec!["with-string (send, 12 ms): → {\"message\":\"hi\"} ← {\"progress\":[]}".into()]
        } else {
            Vec::new()
        },
        location: "scenarios/progress/echo.yaml:14".into(),
        mode: (id == "PROG-003").then(|| "spec-strict".to_owned()),
        baselined: false,
    }
}

fn sample_result() -> RunResult {
    let mut baselined = check(
        "PROG-004",
        Level::Must,
        Verdict::Fail,
        "progress does not follow the seed's pattern",
    );
    baselined.baselined = true;
    RunResult {
        side: pallas_conformance::runner::Side::Server,
        target: "reference".into(),
        kit_version: pallas_conformance::runner::KIT_VERSION.into(),
        suite: Some(pallas_conformance::suite::SuiteInfo::current(
            pallas_conformance::suite::SuiteSource::Embedded,
        )),
        claims: vec!["progress".into(), "sessions".into()],
        duration_ms: 1834.2,
        error: None,
        stale: vec![StaleEntry { scenario: "health-ok".into(), check: "HEALTH-006".into() }],
        scenarios: vec![
            ScenarioResult {
                reproduce: "cargo run -p pallas-conformance -- run scenarios/progress/echo.yaml --target scenarios/targets/reference.yaml".into(),
                phases: None,
                declared: Default::default(),
                id: "health-ok".into(),
                title: "health is ok".into(),
                file: "scenarios/health/ok.yaml".into(),
                verdict: Verdict::Pass,
                checks: vec![
                    check("HEALTH-002", Level::Must, Verdict::Pass, ""),
                    check("HEALTH-006", Level::Should, Verdict::Warn, "`health` took 1210 ms"),
                    check("REG-001", Level::Must, Verdict::Skip, "the target does not claim `registry`"),
                ],
                duration_ms: 412.7,
                error: None,
                skipped: None,
                output_tail: None,
                steps: vec![StepSummary {
                    name: "health".into(),
                    action: "health".into(),
                    elapsed_ms: 12.3,
                    error: None,
                    timed_out: false,
                    observed: Some(
                        "HTTP 200 application/json; 1 message(s) received, 0 progress notification(s); a result"
                            .into(),
                    ),
                }],
            },
            ScenarioResult {
                reproduce: "cargo run -p pallas-conformance -- run scenarios/progress/echo.yaml --target scenarios/targets/reference.yaml".into(),
                phases: None,
                declared: Default::default(),
                id: "progress-echo".into(),
                title: "token echoed".into(),
                file: "scenarios/progress/echo.yaml".into(),
                verdict: Verdict::Fail,
                checks: vec![
                    check("PROG-002", Level::Must, Verdict::Fail, "the progress token was not echoed exactly"),
                    check("PROG-003", Level::Should, Verdict::Pass, ""),
                    baselined,
                ],
                duration_ms: 977.0,
                error: None,
                skipped: None,
                output_tail: Some("--- stdout\nlistening on 127.0.0.1:41234\n--- stderr\n".into()),
                steps: Vec::new(),
            },
            ScenarioResult {
                reproduce: "cargo run -p pallas-conformance -- run scenarios/progress/echo.yaml --target scenarios/targets/reference.yaml".into(),
                phases: None,
                declared: Default::default(),
                id: "hung".into(),
                title: "a hung implementation".into(),
                file: "scenarios/x/hung.yaml".into(),
                verdict: Verdict::Error,
                checks: Vec::new(),
                duration_ms: 5001.0,
                error: Some("the implementation did not become ready: http://127.0.0.1:40001/mcp (probe timed out)".into()),
                skipped: None,
                output_tail: None,
                steps: Vec::new(),
            },
        ],
    }
}

/// The sample's event stream, saved as JSONL and read back.
fn sample_events() -> Vec<RunEvent> {
    let text = runner::to_jsonl(&runner::events_of(&sample_result()));
    runner::parse_jsonl("sample.jsonl", &text).unwrap()
}

/// The sample as the reporters see it: rebuilt from its replayed stream.
fn sample_run() -> RunResult {
    RunResult::from_events(&sample_events()).unwrap()
}

#[test]
fn the_sample_run_replays_from_its_saved_stream_unchanged() {
    assert_eq!(sample_run(), sample_result());
    let events = sample_events();
    assert!(
        matches!(events.first(), Some(RunEvent::RunStarted(s)) if s.schema == runner::EVENTS_SCHEMA)
    );
    assert!(matches!(events.last(), Some(RunEvent::RunFinished(f)) if f.exit_code == 3));
    let verdicts = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Verdict(_)))
        .count();
    assert_eq!(verdicts, 6, "one verdict event per check result");
}

/// Times (`1.23s`, `412.7`) and loopback ports become placeholders.
fn redact(text: &str) -> String {
    let ports = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let secs = regex::Regex::new(r"\d+\.\d+s\b").unwrap();
    let ms = regex::Regex::new(r#"("(?:duration_ms|elapsed_ms)": )[0-9.]+"#).unwrap();
    let xml_time = regex::Regex::new(r#"time="[0-9.]+""#).unwrap();
    // The suite's digest changes with every scenario edit; the snapshots do not.
    let t = text.replace(pallas_conformance::suite::DIGEST, "[suite digest]");
    let t = ports.replace_all(&t, "127.0.0.1:[port]");
    let t = secs.replace_all(&t, "[time]s");
    let t = ms.replace_all(&t, "${1}\"[ms]\"");
    xml_time.replace_all(&t, "time=\"[time]\"").into_owned()
}

#[test]
fn every_report_names_the_kit_version_and_the_suite_digest() {
    let run = sample_run();
    let digest = pallas_conformance::suite::DIGEST;
    let version = runner::KIT_VERSION;
    let start = report::event_line(&sample_events()[0]).unwrap();
    for (name, text) in [
        ("run_started line", start),
        ("terminal", report::summary(&run)),
        ("json", report::json_text(&run)),
        ("junit", report::junit(&run)),
        ("markdown", report::markdown(&run)),
        ("html", report::html(&run)),
        ("jsonl", sample_events()[0].to_json_line()),
    ] {
        assert!(
            text.contains(digest),
            "{name} lacks the suite digest:\n{text}"
        );
        assert!(
            text.contains(version),
            "{name} lacks the kit version:\n{text}"
        );
    }
}

#[test]
fn the_terminal_report_shows_lines_a_family_table_and_evidence() {
    let run = sample_run();
    let mut lines = String::new();
    for e in sample_events()
        .iter()
        .filter(|e| matches!(e, RunEvent::ScenarioFinished(_)))
    {
        lines.push_str(&report::event_line(e).unwrap());
        lines.push('\n');
    }
    lines.push_str(&report::summary(&run));
    insta::assert_snapshot!("terminal", redact(&lines));
}

#[test]
fn the_json_report_has_every_check_with_its_verdict_and_evidence() {
    let text = redact(&report::json_text(&sample_run()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["scenarios"][1]["checks"][0]["verdict"], "fail");
    insta::assert_snapshot!("json", text);
}

#[test]
fn the_junit_report_is_well_formed_and_marks_failures() {
    let xml = redact(&report::junit(&sample_run()));
    assert!(xml.contains("<failure"), "{xml}");
    assert!(xml.contains("<error"), "{xml}");
    assert!(xml.contains("<skipped"), "{xml}");
    insta::assert_snapshot!("junit", xml);
}

#[test]
fn the_markdown_report_states_a_verdict_and_lists_findings() {
    let md = redact(&report::markdown(&sample_run()));
    assert!(md.contains("**Verdict: INCOMPLETE"), "{md}");
    insta::assert_snapshot!("markdown", md);
}

#[test]
fn the_html_report_is_self_contained_with_filters_counts_and_evidence() {
    let html = redact(&report::html(&sample_run()));
    for needle in [
        "data-count=\"fail\">1<",
        "data-filter=\"verdict\" value=\"inconclusive\"",
        "data-filter=\"level\" value=\"MAY\"",
        "data-filter=\"family\" value=\"PROG\"",
        "<details><summary>evidence</summary>",
        "reproduce",
    ] {
        assert!(html.contains(needle), "{needle} missing:\n{html}");
    }
    assert!(
        !html.contains("<link") && !html.contains("src=\""),
        "{html}"
    );
    insta::assert_snapshot!("html", html);
}

#[test]
fn exit_codes_follow_failures_errors_and_stale_entries() {
    let mut run = sample_result();
    assert_eq!(run.exit_code(), 3);
    run.scenarios.pop();
    assert_eq!(run.exit_code(), 1, "a failure");
    run.scenarios.pop();
    assert_eq!(run.exit_code(), 1, "the stale entry alone");
    run.stale.clear();
    assert_eq!(run.exit_code(), 0);
}

#[test]
fn one_cause_in_several_scenarios_is_one_finding() {
    let mut run = sample_result();
    let mut again = run.scenarios[1].clone();
    again.id = "progress-echo-again".into();
    again.checks[0].location = "scenarios/progress/again.yaml:9".into();
    run.scenarios.push(again);
    let mut other = run.scenarios[1].clone();
    other.id = "progress-other-cause".into();
    other.checks[0].reason = "a different reason".into();
    run.scenarios.push(other);
    let md = report::markdown(&run);
    assert_eq!(md.matches("### **FAIL** PROG-002").count(), 2, "{md}");
    assert!(
        md.contains("PROG-002 in `progress-echo`, `progress-echo-again` (MUST)"),
        "{md}"
    );
    assert!(md.contains("- one cause, 2 scenarios"), "{md}");
    assert!(
        md.contains("- `progress-echo-again`: location: `scenarios/progress/again.yaml:9`"),
        "{md}"
    );
    assert!(md.contains("PROG-002 in `progress-other-cause`"), "{md}");
    let term = report::summary(&run);
    assert!(
        term.contains("in progress-echo-again — the same finding as in progress-echo (one cause)"),
        "{term}"
    );
    assert_eq!(
        term.matches("reason: the progress token was not echoed")
            .count(),
        1,
        "{term}"
    );
}
