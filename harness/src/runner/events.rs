//! The run's event stream: what the runner emits, in order, and the one function that turns a
//! slice of events back into a [`RunResult`] for the reporters ([`RunResult::from_events`]).
//! Every event and field is documented in `harness/docs/events.md`; `run --format jsonl` writes
//! the stream one JSON object per line.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Counts, RunResult, ScenarioResult, Side, StaleEntry, StepSummary, overall};
use crate::checks::{CheckResult, Verdict};

/// The version of the event stream. A reader refuses a stream of another major version; within
/// one version, events and fields may be added, and readers ignore what they do not know.
pub const EVENTS_SCHEMA: &str = "pallas-conformance/events/v1";

/// The version of the kit that wrote a stream.
pub const KIT_VERSION: &str = env!("CARGO_PKG_VERSION");

use crate::suite::SuiteInfo;

/// Something that happened during a run. Serialised with an `event` tag
/// (`{"event":"run_started",…}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// First event of every stream.
    RunStarted(RunStarted),
    /// The target's `build` command starts (absent when it has none, or in attach mode).
    BuildStarted(BuildStarted),
    /// The target's `build` command ended.
    BuildFinished(BuildFinished),
    /// A scenario got its slot and starts.
    ScenarioStarted(ScenarioStarted),
    /// A step of a scenario ran.
    StepDone(StepDone),
    /// One check's verdict in a scenario, as [`CheckResult`] serialises.
    Verdict(VerdictEvent),
    /// A scenario ended.
    ScenarioFinished(ScenarioFinished),
    /// Last event of a complete stream.
    RunFinished(RunFinished),
}

/// `run_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    /// [`EVENTS_SCHEMA`].
    pub schema: String,
    /// The kit's version.
    pub kit_version: String,
    /// Target name.
    pub target: String,
    /// The kit's embedded suite (its digest) and whether it or files on disk ran; absent in
    /// streams of kits before 0.1.0's embedded suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
    /// The capabilities the target profile claims; absent in streams of kits before the
    /// matrix compared them with what the implementation declares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// How many scenarios the run selected.
    pub scenarios: usize,
    /// The share of the selection this run took (`run --partition K/N`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<RunPartition>,
}

/// `run_started.partition`: which share of the selected scenarios a partitioned run took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPartition {
    /// The share, 1-based.
    pub k: usize,
    /// How many shares.
    pub n: usize,
    /// How many scenarios were selected (after `--filter`) before the split.
    pub of: usize,
}

/// `build_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildStarted {
    /// The command, as the profile's `build` lists it.
    pub command: Vec<String>,
}

/// `build_finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildFinished {
    /// How long the build took.
    pub elapsed_ms: f64,
    /// Why it failed (the run then ends with no scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `scenario_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStarted {
    /// Position of the scenario in the run's input order (reports keep this order).
    pub index: usize,
    /// Scenario id.
    pub id: String,
    /// Title.
    pub title: String,
    /// File.
    pub file: String,
}

/// `step_done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepDone {
    /// The scenario's index.
    pub index: usize,
    /// The scenario's id.
    pub scenario: String,
    /// The step, as the scenario's result lists it.
    #[serde(flatten)]
    pub step: super::StepSummary,
}

/// `verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictEvent {
    /// The scenario's index.
    pub index: usize,
    /// The scenario's id.
    pub scenario: String,
    /// The check's result.
    pub check: CheckResult,
}

/// `scenario_finished`: the scenario's summary (its steps and checks came before).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioFinished {
    /// The scenario's index.
    pub index: usize,
    /// How many scenarios finished so far, this one included.
    pub done: usize,
    /// Scenario count.
    pub total: usize,
    /// Scenario id.
    pub id: String,
    /// Title.
    pub title: String,
    /// File.
    pub file: String,
    /// Overall verdict.
    pub verdict: Verdict,
    /// Its checks by verdict.
    pub counts: Counts,
    /// Wall time.
    pub duration_ms: f64,
    /// A setup or harness error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the whole scenario was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Tail of the implementation's output (redacted), kept when something failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// The command that reruns this scenario.
    #[serde(default)]
    pub reproduce: String,
    /// Where its time went (mocks, start, ready, steps, stop, judge); absent when it did not
    /// run to judging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<super::Phases>,
    /// What the implementation declared on the wire in this scenario (absent: nothing).
    #[serde(default, skip_serializing_if = "super::Declared::is_empty")]
    pub declared: super::Declared,
}

/// `run_finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    /// Wall time of the whole run.
    pub duration_ms: f64,
    /// Checks of every scenario by verdict.
    pub counts: Counts,
    /// Baselined failures that did not fail.
    pub stale: Vec<StaleEntry>,
    /// A run-level error (the build failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's exit code.
    pub exit_code: u8,
}

/// A stream that cannot be replayed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EventsError {
    /// A line is not an event.
    #[error("{file}:{line}: not an event of the stream: {message}")]
    Line {
        /// File name.
        file: String,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The first event is not `run_started`.
    #[error("the stream does not begin with `run_started`")]
    NoStart,
    /// Another major version.
    #[error("the stream is `{found}`; this kit reads `{EVENTS_SCHEMA}`")]
    Schema {
        /// The stream's schema.
        found: String,
    },
}

impl RunEvent {
    /// The event as one line of JSON (no newline).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

const KINDS: [&str; 8] = [
    "run_started",
    "build_started",
    "build_finished",
    "scenario_started",
    "step_done",
    "verdict",
    "scenario_finished",
    "run_finished",
];

/// The stream as JSONL text: one event per line.
pub fn to_jsonl(events: &[RunEvent]) -> String {
    let mut out = String::new();
    for e in events {
        out.push_str(&e.to_json_line());
        out.push('\n');
    }
    out
}

/// Reads JSONL text (`file` names it in errors). Blank lines and events of kinds this kit does
/// not know are skipped.
pub fn parse_jsonl(file: &str, text: &str) -> Result<Vec<RunEvent>, EventsError> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |message: String| EventsError::Line {
            file: file.to_owned(),
            line: i + 1,
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| err(e.to_string()))?;
        let kind = value.get("event").and_then(|k| k.as_str()).unwrap_or("");
        if kind.is_empty() {
            return Err(err("no `event` key".into()));
        }
        if !KINDS.contains(&kind) {
            continue;
        }
        events.push(serde_json::from_value(value).map_err(|e| err(e.to_string()))?);
    }
    Ok(events)
}

/// The events that report one finished scenario: its steps, then one verdict per check, then
/// its summary.
pub fn scenario_events(
    index: usize,
    done: usize,
    total: usize,
    r: &ScenarioResult,
) -> Vec<RunEvent> {
    let mut out = Vec::with_capacity(r.steps.len() + r.checks.len() + 1);
    for s in &r.steps {
        out.push(RunEvent::StepDone(StepDone {
            index,
            scenario: r.id.clone(),
            step: s.clone(),
        }));
    }
    out.extend(finished_events(index, done, total, r));
    out
}

/// The events that close one finished scenario whose steps were already reported live: one
/// verdict per check, then its summary.
pub fn finished_events(
    index: usize,
    done: usize,
    total: usize,
    r: &ScenarioResult,
) -> Vec<RunEvent> {
    let mut out = Vec::with_capacity(r.checks.len() + 1);
    let mut counts = Counts::default();
    for c in &r.checks {
        counts.add(c);
        out.push(RunEvent::Verdict(VerdictEvent {
            index,
            scenario: r.id.clone(),
            check: c.clone(),
        }));
    }
    out.push(RunEvent::ScenarioFinished(ScenarioFinished {
        index,
        done,
        total,
        id: r.id.clone(),
        title: r.title.clone(),
        file: r.file.clone(),
        verdict: r.verdict,
        counts,
        duration_ms: r.duration_ms,
        error: r.error.clone(),
        skipped: r.skipped.clone(),
        output_tail: r.output_tail.clone(),
        reproduce: r.reproduce.clone(),
        phases: r.phases,
        declared: r.declared.clone(),
    }));
    out
}

/// The stream a run with this result reports (without build events): what a saved stream of it
/// replays from. The runner emits the same events live, with `scenario_started` and the build
/// in between.
pub fn events_of(run: &RunResult) -> Vec<RunEvent> {
    let total = run.scenarios.len();
    let mut out = vec![RunEvent::RunStarted(RunStarted {
        schema: EVENTS_SCHEMA.into(),
        kit_version: run.kit_version.clone(),
        target: run.target.clone(),
        suite: run.suite.clone(),
        claims: run.claims.clone(),
        scenarios: total,
        partition: None,
    })];
    for (i, s) in run.scenarios.iter().enumerate() {
        out.push(RunEvent::ScenarioStarted(ScenarioStarted {
            index: i,
            id: s.id.clone(),
            title: s.title.clone(),
            file: s.file.clone(),
        }));
        out.extend(scenario_events(i, i + 1, total, s));
    }
    out.push(run_finished(run));
    out
}

/// The `run_finished` event of a result.
pub(crate) fn run_finished(run: &RunResult) -> RunEvent {
    RunEvent::RunFinished(RunFinished {
        duration_ms: run.duration_ms,
        counts: run.counts(),
        stale: run.stale.clone(),
        error: run.error.clone(),
        exit_code: run.exit_code(),
    })
}

#[derive(Default)]
struct Partial {
    started: Option<ScenarioStarted>,
    steps: Vec<StepSummary>,
    checks: Vec<CheckResult>,
    finished: Option<ScenarioFinished>,
}

impl RunResult {
    /// What the reporters render, rebuilt from a run's events. Scenarios come in input order
    /// (`index`), steps and checks in the order of their events. A stream that ends before
    /// `run_finished` (an interrupted run) gives a result with a run error, and each scenario
    /// that had not finished is an error.
    pub fn from_events(events: &[RunEvent]) -> Result<RunResult, EventsError> {
        let Some(RunEvent::RunStarted(start)) = events.first() else {
            return Err(EventsError::NoStart);
        };
        if !start.schema.starts_with(EVENTS_SCHEMA) {
            return Err(EventsError::Schema {
                found: start.schema.clone(),
            });
        }
        let mut parts: BTreeMap<usize, Partial> = BTreeMap::new();
        let mut end: Option<&RunFinished> = None;
        let mut build_error = None;
        for e in &events[1..] {
            match e {
                RunEvent::RunStarted(_) | RunEvent::BuildStarted(_) => {}
                RunEvent::BuildFinished(b) => build_error = b.error.clone(),
                RunEvent::ScenarioStarted(s) => {
                    parts.entry(s.index).or_default().started = Some(s.clone());
                }
                RunEvent::StepDone(s) => {
                    parts.entry(s.index).or_default().steps.push(s.step.clone())
                }
                RunEvent::Verdict(v) => parts
                    .entry(v.index)
                    .or_default()
                    .checks
                    .push(v.check.clone()),
                RunEvent::ScenarioFinished(f) => {
                    parts.entry(f.index).or_default().finished = Some(f.clone());
                }
                RunEvent::RunFinished(f) => end = Some(f),
            }
        }
        let scenarios = parts
            .into_values()
            .filter_map(|p| match (p.finished, p.started) {
                (Some(f), _) => Some(ScenarioResult {
                    id: f.id,
                    title: f.title,
                    file: f.file,
                    verdict: f.verdict,
                    checks: p.checks,
                    duration_ms: f.duration_ms,
                    error: f.error,
                    skipped: f.skipped,
                    output_tail: f.output_tail,
                    steps: p.steps,
                    reproduce: f.reproduce,
                    phases: f.phases,
                    declared: f.declared,
                }),
                (None, Some(s)) => Some(ScenarioResult {
                    id: s.id,
                    title: s.title,
                    file: s.file,
                    // An unfinished scenario is an error on every target.
                    verdict: overall(&p.checks, true, true),
                    checks: p.checks,
                    duration_ms: 0.0,
                    error: Some("the event stream ends before this scenario finished".into()),
                    skipped: None,
                    output_tail: None,
                    steps: p.steps,
                    reproduce: String::new(),
                    phases: None,
                    declared: super::Declared::default(),
                }),
                (None, None) => None,
            })
            .collect();
        Ok(match end {
            Some(f) => RunResult {
                side: Side::Server,
                target: start.target.clone(),
                kit_version: start.kit_version.clone(),
                suite: start.suite.clone(),
                claims: start.claims.clone(),
                scenarios,
                stale: f.stale.clone(),
                duration_ms: f.duration_ms,
                error: f.error.clone(),
            },
            None => RunResult {
                side: Side::Server,
                target: start.target.clone(),
                kit_version: start.kit_version.clone(),
                suite: start.suite.clone(),
                claims: start.claims.clone(),
                scenarios,
                stale: Vec::new(),
                duration_ms: 0.0,
                error: Some(build_error.map_or_else(
                    || {
                        "the event stream ends before `run_finished`: the run was interrupted"
                            .into()
                    },
                    |e| format!("build failed: {e}"),
                )),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn started() -> RunEvent {
        RunEvent::RunStarted(RunStarted {
            schema: EVENTS_SCHEMA.into(),
            kit_version: KIT_VERSION.into(),
            target: "t".into(),
            suite: None,
            claims: Vec::new(),
            scenarios: 1,
            partition: None,
        })
    }

    #[test]
    fn a_stream_of_another_major_version_is_refused() {
        let mut e = started();
        if let RunEvent::RunStarted(s) = &mut e {
            s.schema = "pallas-conformance/events/v2".into();
        }
        assert!(matches!(
            RunResult::from_events(&[e]),
            Err(EventsError::Schema { .. })
        ));
        assert_eq!(RunResult::from_events(&[]), Err(EventsError::NoStart));
    }

    #[test]
    fn unknown_event_kinds_and_fields_are_ignored_and_bad_lines_are_located() {
        let text = format!(
            "{}\n\n{{\"event\":\"future_thing\",\"x\":1}}\n{{\"event\":\"build_started\",\"command\":[\"make\"],\"new_field\":true}}\n",
            started().to_json_line()
        );
        let events = parse_jsonl("e.jsonl", &text).unwrap();
        assert_eq!(events.len(), 2);
        let e = parse_jsonl("e.jsonl", "{\"event\":\"verdict\"}\n").unwrap_err();
        assert!(e.to_string().starts_with("e.jsonl:1: "), "{e}");
    }

    #[test]
    fn an_interrupted_stream_replays_as_a_run_error_with_unfinished_scenarios_as_errors() {
        let events = vec![
            started(),
            RunEvent::ScenarioStarted(ScenarioStarted {
                index: 0,
                id: "s".into(),
                title: "t".into(),
                file: "s.yaml".into(),
            }),
        ];
        let run = RunResult::from_events(&events).unwrap();
        assert!(run.error.as_deref().unwrap().contains("interrupted"));
        assert_eq!(run.scenarios[0].verdict, Verdict::Error);
        assert_eq!(run.exit_code(), crate::exit::HARNESS_ERROR);
    }
}
