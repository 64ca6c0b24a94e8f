//! The event stream of a real run against the `mock-agent` target: saved as JSONL and replayed,
//! it reproduces every report byte for byte (terminal, JSON, JUnit, Markdown, HTML), in-process
//! and through `pallas-conformance report --from`; `run --format jsonl` writes only events on
//! stdout.

use std::sync::OnceLock;
use std::time::Duration;

use clap::Parser;
use pallas_conformance::checks::{Grading, Verdict};
use pallas_conformance::cli::{Cli, run_cli};
use pallas_conformance::runner::{self, Baseline, RunEvent, RunOptions, RunResult};
use pallas_conformance::target::{self, Target};
use pallas_conformance::{exit, report, suite};

use super::common::scenarios_dir;

/// The mock-agent profile, with its `pallas-mocks` build done once for these tests.
fn mock_agent() -> Target {
    static BUILT: OnceLock<Result<(), target::BuildError>> = OnceLock::new();
    let mut t = target::load(&scenarios_dir().join("targets/mock-agent.yaml")).unwrap();
    BUILT
        .get_or_init(|| t.build())
        .as_ref()
        .expect("pallas-mocks builds");
    t.spec.build.clear();
    t
}

/// Every report of a run, as the CLI writes them.
#[derive(Debug, PartialEq)]
struct Rendered {
    terminal: String,
    json: String,
    junit: String,
    markdown: String,
    html: String,
}

fn render(events: &[RunEvent], run: &RunResult) -> Rendered {
    let mut terminal = String::new();
    for e in events {
        if let Some(l) = report::event_line(e) {
            terminal.push_str(&l);
            terminal.push('\n');
        }
    }
    terminal.push_str(&report::summary(run));
    Rendered {
        terminal,
        json: report::json_text(run),
        junit: report::junit(run),
        markdown: report::markdown(run),
        html: report::html(run),
    }
}

/// The samples, one scenario that fails a check (with evidence) and a baseline with one stale
/// entry: a stream with passes, skips, a failure and a stale entry.
async fn live_run() -> (Vec<RunEvent>, RunResult) {
    let mut scenarios = suite::load_paths(&[scenarios_dir().join("samples")]).unwrap();
    scenarios.push(
        suite::parse_str(
            "inline/wrong-status.yaml",
            "id: wrong-status\ntitle: health is not what the scenario expects\nrequires: [health]\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - name: h\n    health: {agent: research}\nchecks:\n  - check: HEALTH-004\n    with: {status: degraded, mentions: [argos]}\n  - check: HEALTH-002\n",
        )
        .unwrap(),
    );
    let opts = RunOptions {
        jobs: 2,
        step_timeout: Duration::from_secs(5),
        scenario_deadline: Duration::from_secs(30),
        grading: Grading {
            strict: true,
            ..Default::default()
        },
        baseline: Some(
            Baseline::parse(
                "baseline.yaml",
                "expected_failures:\n  wrong-status: [HEALTH-002]\n",
            )
            .unwrap(),
        ),
        ..RunOptions::default()
    };
    let mut events = Vec::new();
    let run =
        runner::run_with_events(&scenarios, &mock_agent(), &opts, |e| events.push(e.clone())).await;
    (events, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_stream_replays_every_report_byte_for_byte() {
    let (events, run) = live_run().await;
    let live = render(&events, &run);
    // The run is what it should be: a failure with evidence, a stale entry, skips.
    assert_eq!(run.exit_code(), exit::CHECK_FAILED, "{}", live.terminal);
    assert_eq!(run.stale.len(), 1, "{}", live.terminal);
    let failed = run
        .scenarios
        .iter()
        .flat_map(|s| &s.checks)
        .find(|c| c.verdict == Verdict::Fail)
        .expect("a failure");
    assert!(!failed.evidence.is_empty(), "{failed:?}");
    assert!(
        run.scenarios.iter().any(|s| s.skipped.is_some()),
        "{}",
        live.terminal
    );
    // The stream: begins and ends as documented, one verdict per check, one step_done per step,
    // each scenario started before its results.
    assert!(matches!(&events[0], RunEvent::RunStarted(s) if s.scenarios == run.scenarios.len()));
    assert!(
        matches!(events.last(), Some(RunEvent::RunFinished(f)) if f.exit_code == exit::CHECK_FAILED)
    );
    let count = |f: fn(&RunEvent) -> bool| events.iter().filter(|e| f(e)).count();
    let checks: usize = run.scenarios.iter().map(|s| s.checks.len()).sum();
    let steps: usize = run.scenarios.iter().map(|s| s.steps.len()).sum();
    assert_eq!(count(|e| matches!(e, RunEvent::Verdict(_))), checks);
    assert_eq!(count(|e| matches!(e, RunEvent::StepDone(_))), steps);
    assert!(steps > 0);
    for (i, e) in events.iter().enumerate() {
        if let RunEvent::ScenarioFinished(f) = e {
            assert!(
                events[..i].iter().any(
                    |x| matches!(x, RunEvent::ScenarioStarted(s) if s.index == f.index && s.id == f.id)
                ),
                "{} finished before it started",
                f.id
            );
        }
    }

    // Saved, read back, replayed: the same reports.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("events.jsonl");
    std::fs::write(&saved, runner::to_jsonl(&events)).unwrap();
    let text = std::fs::read_to_string(&saved).unwrap();
    let replayed_events = runner::parse_jsonl("events.jsonl", &text).unwrap();
    assert_eq!(replayed_events, events);
    let replayed = RunResult::from_events(&replayed_events).unwrap();
    assert_eq!(replayed, run);
    let again = render(&replayed_events, &replayed);
    assert!(again.terminal == live.terminal, "terminal differs");
    assert!(again.json == live.json, "JSON differs");
    assert!(again.junit == live.junit, "JUnit differs");
    assert!(again.markdown == live.markdown, "Markdown differs");
    assert!(again.html == live.html, "HTML differs");

    // The CLI re-renders the same files and terminal output from the saved stream.
    let file = |n: &str| dir.path().join(n).display().to_string();
    let cli = Cli::parse_from([
        "pallas-conformance",
        "report",
        "--from",
        &saved.display().to_string(),
        "--report-json",
        &file("r.json"),
        "--junit",
        &file("r.xml"),
        "--markdown",
        &file("r.md"),
        "--html",
        &file("r.html"),
    ]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_cli(cli, &mut out, &mut err).await;
    assert_eq!(
        code,
        exit::CHECK_FAILED,
        "{}",
        String::from_utf8_lossy(&err)
    );
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
    let from_cli = Rendered {
        terminal: String::from_utf8(out).unwrap(),
        json: read("r.json"),
        junit: read("r.xml"),
        markdown: read("r.md"),
        html: read("r.html"),
    };
    assert!(
        from_cli == live,
        "report --from differs from the live reports"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_format_jsonl_writes_only_events_on_stdout_and_shows_the_build_as_a_phase() {
    let _ = mock_agent(); // the binary exists, so the profile's own build is quick
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.jsonl");
    let cli = Cli::parse_from([
        "pallas-conformance",
        "run",
        &scenarios_dir()
            .join("samples/health-ok.yaml")
            .display()
            .to_string(),
        "--target",
        &scenarios_dir()
            .join("targets/mock-agent.yaml")
            .display()
            .to_string(),
        "--format",
        "jsonl",
        "--events",
        &saved.display().to_string(),
    ]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_cli(cli, &mut out, &mut err).await;
    let (out, err) = (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    );
    assert_eq!(code, exit::SUCCESS, "{out}\n{err}");
    let events = runner::parse_jsonl("stdout", &out).unwrap();
    assert_eq!(
        events.len(),
        out.lines().count(),
        "every stdout line is an event:\n{out}"
    );
    assert!(
        matches!(&events[0], RunEvent::RunStarted(s) if s.schema == runner::EVENTS_SCHEMA && s.kit_version == runner::KIT_VERSION && s.target == "mock-agent")
    );
    assert!(
        matches!(&events[1], RunEvent::BuildStarted(b) if b.command.first().is_some_and(|c| c == "cargo"))
    );
    assert!(matches!(&events[2], RunEvent::BuildFinished(b) if b.error.is_none()));
    assert!(
        matches!(events.last(), Some(RunEvent::RunFinished(f)) if f.exit_code == exit::SUCCESS)
    );
    // The terminal output went to stderr, with the build as a phase.
    assert!(
        err.starts_with("running 1 scenario(s) (pallas-conformance ")
            && err.contains(", scenario files on disk (the kit's embedded suite is sha256:")
            && err.contains(")\nbuilding the target: cargo build"),
        "{err}"
    );
    assert!(err.contains("\nbuilt in "), "{err}");
    assert!(err.contains("1 scenario(s),"), "{err}");
    // `--events` saved the same stream.
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), out);
}

#[test]
fn the_events_doc_documents_every_event_and_its_example_replays() {
    let doc =
        std::fs::read_to_string(super::common::workspace().join("harness/docs/events.md")).unwrap();
    let example = doc
        .split("```jsonl\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a jsonl example");
    let events = runner::parse_jsonl("events.md", example).unwrap();
    assert_eq!(
        events.len(),
        example.lines().count(),
        "every example line is an event"
    );
    let run = RunResult::from_events(&events).unwrap();
    assert_eq!(run.exit_code(), exit::CHECK_FAILED);
    let mut kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    kinds.dedup();
    for kind in [
        "run_started",
        "build_started",
        "build_finished",
        "scenario_started",
        "step_done",
        "verdict",
        "scenario_finished",
        "run_finished",
    ] {
        assert!(
            doc.contains(&format!("### `{kind}`")),
            "{kind} is not documented"
        );
        assert!(
            kinds.iter().any(|k| k == kind),
            "{kind} is not in the example"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_build_is_a_phase_that_ends_the_run_with_its_error() {
    let mut t = mock_agent();
    t.spec.build = vec!["false".into()];
    let s = suite::load_paths(&[scenarios_dir().join("samples/health-ok.yaml")]).unwrap();
    let mut events = Vec::new();
    let run =
        runner::run_with_events(&s, &t, &RunOptions::default(), |e| events.push(e.clone())).await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "build_started",
            "build_finished",
            "run_finished"
        ]
    );
    assert!(matches!(&events[2], RunEvent::BuildFinished(b) if b.error.is_some()));
    assert!(
        report::event_line(&events[2])
            .unwrap()
            .starts_with("build failed after ")
    );
    assert_eq!(run.exit_code(), exit::HARNESS_ERROR);
    assert!(
        run.error
            .as_deref()
            .unwrap()
            .starts_with("build failed: `false` failed"),
        "{:?}",
        run.error
    );
    assert!(run.scenarios.is_empty());
    assert_eq!(RunResult::from_events(&events).unwrap(), run);
}
