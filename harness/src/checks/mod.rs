//! Checks: turning observations (steps, received messages, mock journals, logs) into verdicts
//! of catalogued checks and generic assertions.

mod assert;
pub use assert::predicate as assert_predicate;
mod builtin;
mod rules;
pub use rules::{metric_value, python_title};
pub mod wire;

use std::collections::BTreeMap;

use pallas_mocks::{LlmJournalEntry, McpJournalEntry, SessionStats};
use serde::Serialize;
use serde_json::Value;

use crate::catalog::{self, Evaluation};
use crate::redact::Redactor;
use crate::scenario::template::{Vars, render_json};
use crate::scenario::{Capability, CheckSpec, DeploymentSpec, Level, Scenario};

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The rule held.
    Pass,
    /// A MUST was broken.
    Fail,
    /// A SHOULD was broken (or a MUST under `--lenient`).
    Warn,
    /// Not applicable to the target (always with a reason).
    Skip,
    /// The harness could not run what the check needs.
    Error,
}

impl Verdict {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::Skip => "skip",
            Self::Error => "error",
        }
    }
}

/// One piece of evidence: what was expected, what was seen, where.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// What this is about (a step, a message, a journal entry).
    pub what: String,
    /// What the rule wants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    /// JSON path inside the observed value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Evidence {
    /// Evidence with expected and seen values.
    pub fn new(
        what: impl Into<String>,
        expected: impl Into<String>,
        seen: impl Into<String>,
    ) -> Self {
        Self {
            what: what.into(),
            expected: Some(expected.into()),
            seen: Some(seen.into()),
            path: None,
        }
    }
}

/// The result of one check in one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// Catalog ID, or `ASSERT` for an unattributed assertion.
    pub id: String,
    /// Level.
    pub level: Level,
    /// References.
    pub refs: Vec<String>,
    /// What was checked.
    pub title: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Why (always set unless the check passed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Evidence (redacted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// `file:line` of the check entry in the scenario (empty for automatic checks).
    pub location: String,
    /// Which mode held, for checks with modes (progress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether an expected-failures baseline listed it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

/// What one step did, as the checks see it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepRecord {
    /// Name (`send#3`, `calls[7]`).
    pub name: String,
    /// Action key.
    pub action: String,
    /// Connection name, if any.
    pub agent: Option<String>,
    /// Milliseconds since the run's recorder started, at the start and end.
    pub started_ms: f64,
    /// End.
    pub ended_ms: f64,
    /// Wall-clock start and end (RFC 3339, to correlate with mock journals).
    pub started_at: String,
    /// End.
    pub ended_at: String,
    /// Duration.
    pub elapsed_ms: f64,
    /// The step's output as JSON (what `output:` assertions and captures query).
    pub output: Value,
    /// Why the step could not run (a harness or transport error).
    pub error: Option<String>,
    /// The step hit its timeout.
    pub timed_out: bool,
    /// The bearer it sent (raw; redacted in reports).
    #[serde(skip)]
    pub bearer: Option<String>,
    /// The progress token it sent.
    pub progress_token: Option<Value>,
    /// The rendered action as written in the scenario (`{message, images}`, `{tool,
    /// arguments}`, `{body, headers, with_session}`…); kept out of reports (it may hold secrets).
    #[serde(skip)]
    pub request: Value,
}

/// Everything a scenario run observed.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Steps in completion order.
    pub steps: Vec<StepRecord>,
    /// Journals of the mock MCP servers.
    pub mcp_journals: BTreeMap<String, Vec<McpJournalEntry>>,
    /// Journals of the mock LLMs.
    pub llm_journals: BTreeMap<String, Vec<LlmJournalEntry>>,
    /// Session accounting of the mock MCP servers.
    pub sessions: BTreeMap<String, SessionStats>,
    /// The implementation's stdout, stderr and log files, concatenated.
    pub logs: String,
    /// Whether logs could be read at all.
    pub logs_available: bool,
    /// The deployment in force at the end (after reloads).
    pub deployment: Option<DeploymentSpec>,
    /// Every JSON-RPC message received.
    pub received: Vec<ReceivedMessage>,
    /// Template variables at the end of the run (captures included).
    pub vars: Vars,
    /// The message tool's name per agent.
    pub message_tools: BTreeMap<String, String>,
    /// The health tool's name.
    pub health_tool: String,
    /// Agent key → URL.
    pub agent_urls: BTreeMap<String, String>,
}

/// A JSON-RPC message received from the implementation.
#[derive(Debug, Clone, Default)]
pub struct ReceivedMessage {
    /// Connection label.
    pub label: String,
    /// Negotiated protocol version of the connection.
    pub version: String,
    /// The message.
    pub message: Value,
    /// The method of the request this message answers, when it is a response.
    pub request_method: Option<String>,
}

/// What an evaluator concluded, before levels and capabilities are applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Held.
    Pass,
    /// Broken.
    Fail(String, Vec<Evidence>),
    /// Broken only in what the spec says SHOULD (wording, a recommendation): graded as
    /// a SHOULD-level failure whatever the check's level.
    Should(String, Vec<Evidence>),
    /// Nothing to judge (e.g. no step of the kind ran).
    NotApplicable(String),
    /// The harness could not judge.
    Error(String),
}

/// Options that change verdicts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grading {
    /// A broken SHOULD fails instead of warning.
    pub strict: bool,
    /// A broken MUST warns instead of failing.
    pub lenient: bool,
}

fn grade(level: Level, outcome: Outcome, g: Grading) -> (Verdict, String, Vec<Evidence>) {
    match outcome {
        Outcome::Pass => (Verdict::Pass, String::new(), Vec::new()),
        Outcome::NotApplicable(r) => (Verdict::Skip, r, Vec::new()),
        Outcome::Error(r) => (Verdict::Error, r, Vec::new()),
        Outcome::Should(r, e) => {
            let v = if g.strict {
                Verdict::Fail
            } else {
                Verdict::Warn
            };
            (v, r, e)
        }
        Outcome::Fail(r, e) => {
            let v = match level {
                Level::Must if g.lenient => Verdict::Warn,
                Level::Must => Verdict::Fail,
                _ if g.strict => Verdict::Fail,
                _ => Verdict::Warn,
            };
            (v, r, e)
        }
    }
}

/// A result for every check of `scenario` (and the automatic ones), graded and redacted.
pub fn evaluate(
    scenario: &Scenario,
    observed: &Observed,
    claims: &dyn Fn(Capability) -> bool,
    grading: Grading,
    redactor: &Redactor,
) -> Vec<CheckResult> {
    let mut out = Vec::new();
    // Automatic checks.
    for def in catalog::CATALOG
        .iter()
        .filter(|d| d.evaluation == Evaluation::Automatic)
    {
        if scenario
            .spec
            .checks
            .iter()
            .any(|c| c.check.as_deref() == Some(def.id) && c.assert.is_none())
        {
            continue; // listed explicitly below
        }
        let outcome = builtin::run(def.id, &CheckSpec::default(), observed);
        if matches!(outcome, Outcome::NotApplicable(_)) {
            continue; // nothing observed that it applies to
        }
        out.push(finish(
            def.id,
            def.level,
            def.refs.iter().map(|s| s.to_string()).collect(),
            def.title.into(),
            outcome,
            String::new(),
            def.capability,
            claims,
            grading,
            redactor,
        ));
    }
    for (i, check) in scenario.spec.checks.iter().enumerate() {
        let location = scenario.check_location(i);
        if let Some(cap) = check.requires.iter().find(|c| !claims(**c)) {
            let def = check.check.as_deref().and_then(catalog::get);
            out.push(finish(
                def.map_or("ASSERT", |d| d.id),
                def.map_or(check.level.unwrap_or(Level::Must), |d| d.level),
                def.map_or_else(
                    || scenario.spec.refs.clone(),
                    |d| d.refs.iter().map(|s| s.to_string()).collect(),
                ),
                check
                    .title
                    .clone()
                    .or_else(|| def.map(|d| d.title.to_owned()))
                    .unwrap_or_else(|| "scenario assertion".into()),
                Outcome::NotApplicable(format!("the target does not claim `{}`", cap.as_str())),
                location,
                None,
                claims,
                grading,
                redactor,
            ));
            continue;
        }
        let expansions: Vec<CheckSpec> = match &check.for_each {
            None => vec![check.clone()],
            Some(f) => (f.from..f.to)
                .map(|n| {
                    let mut vars = observed.vars.clone();
                    vars.insert(f.var.clone(), n.to_string());
                    let mut c = check.clone();
                    c.for_each = None;
                    if let Ok(v) = serde_json::to_value(&c)
                        && let Ok(r) = render_json(&v, &vars)
                        && let Ok(c2) = serde_json::from_value(r)
                    {
                        c = c2;
                    }
                    c
                })
                .collect(),
        };
        // A for_each entry is one result: the first failing expansion decides.
        let mut merged: Option<Outcome> = None;
        // With `assert:`, the built-in evaluator's failure is reported beside the verdict.
        let mut builtin_note: Option<String> = None;
        for c in &expansions {
            if let (Some(_), Some(id)) = (&c.assert, &c.check)
                && builtin_note.is_none()
                && let Outcome::Fail(r, _) | Outcome::Should(r, _) = builtin::run(id, c, observed)
            {
                builtin_note = Some(r);
            }
            let outcome = match (&c.assert, &c.check) {
                // The author's assertion is the stated rule for this entry; the built-in
                // evaluator still reports its own verdict as the automatic check.
                (Some(a), Some(_)) => assert::run(a, observed),
                (Some(a), None) => assert::run(a, observed),
                (None, Some(id)) => builtin::run(id, c, observed),
                (None, None) => Outcome::Error("empty check entry".into()),
            };
            match (&merged, outcome) {
                (None, o) => merged = Some(o),
                (
                    Some(Outcome::Pass | Outcome::Should(..)),
                    o @ (Outcome::Fail(..) | Outcome::Error(_)),
                ) => merged = Some(o),
                (Some(Outcome::Pass), o @ Outcome::Should(..)) => merged = Some(o),
                (Some(Outcome::NotApplicable(_)), o) => merged = Some(o),
                _ => {}
            }
        }
        let outcome = merged.unwrap_or(Outcome::NotApplicable("for_each range is empty".into()));
        let (id, level, refs, title, cap) = match check.check.as_deref().and_then(catalog::get) {
            Some(def) => (
                def.id.to_owned(),
                // An asserted entry may state its own level (a wording detail of a MUST rule).
                check
                    .level
                    .filter(|_| check.assert.is_some())
                    .unwrap_or(def.level),
                def.refs.iter().map(|s| s.to_string()).collect(),
                check.title.clone().unwrap_or_else(|| def.title.into()),
                def.capability,
            ),
            None => (
                "ASSERT".to_owned(),
                check.level.unwrap_or(Level::Must),
                scenario.spec.refs.clone(),
                check
                    .title
                    .clone()
                    .unwrap_or_else(|| "scenario assertion".into()),
                None,
            ),
        };
        let mut result = finish(
            &id, level, refs, title, outcome, location, cap, claims, grading, redactor,
        );
        if let Some(note) = builtin_note {
            let note = format!(
                "built-in evaluator (not deciding: the assertion states the rule here): {}",
                redactor.text(&note)
            );
            result.reason = if result.reason.is_empty() {
                note
            } else {
                format!("{}; {note}", result.reason)
            };
        }
        out.push(result);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn finish(
    id: &str,
    level: Level,
    refs: Vec<String>,
    title: String,
    outcome: Outcome,
    location: String,
    cap: Option<Capability>,
    claims: &dyn Fn(Capability) -> bool,
    grading: Grading,
    redactor: &Redactor,
) -> CheckResult {
    let (verdict, reason, evidence) = match cap {
        Some(c) if !claims(c) => (
            Verdict::Skip,
            format!("the target does not claim `{}`", c.as_str()),
            Vec::new(),
        ),
        _ => grade(level, outcome, grading),
    };
    let mode = (id == "PROG-003" || id == "PROG-004").then(|| {
        if id == "PROG-003" {
            "spec-strict".to_owned()
        } else {
            "pallas-compatible".to_owned()
        }
    });
    CheckResult {
        id: id.to_owned(),
        level,
        refs,
        title: redactor.text(&title),
        verdict,
        reason: redactor.text(&reason),
        evidence: evidence
            .into_iter()
            .map(|e| Evidence {
                what: redactor.text(&e.what),
                expected: e.expected.map(|x| redactor.text(&x)),
                seen: e.seen.map(|x| redactor.text(&x)),
                path: e.path,
            })
            .collect(),
        location,
        mode,
        baselined: false,
    }
}

/// Short JSON text of a value, for evidence (at most `max` characters).
pub fn excerpt(v: &Value, max: usize) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s
    }
}

/// Steps whose names match any of `globs` (every step when empty).
pub fn select_steps<'a>(steps: &'a [StepRecord], globs: &[String]) -> Vec<&'a StepRecord> {
    if globs.is_empty() {
        return steps.iter().collect();
    }
    let matchers: Vec<globset::GlobMatcher> = globs
        .iter()
        .filter_map(|g| globset::Glob::new(g).ok())
        .map(|g| g.compile_matcher())
        .collect();
    steps
        .iter()
        .filter(|s| matchers.iter().any(|m| m.is_match(&s.name)) || globs.contains(&s.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_held_assertion_decides_its_entry_and_the_built_in_reports_apart() {
        let scenario = crate::scenario::parse_str(
            "t.yaml",
            "id: t\ntitle: t\nsteps:\n  - name: s\n    send: {agent: a, message: hi, progress_token: t}\nchecks:\n  - check: PROG-007\n    assert:\n      timing: {step: s, max: 10s}\n",
        )
        .expect("scenario parses");
        let late = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1, "message": "late"}});
        let observed = Observed {
            steps: vec![StepRecord {
                name: "s".into(),
                action: "send".into(),
                elapsed_ms: 5.0,
                progress_token: Some(json!("t")),
                output: json!({"progress": [late.clone()], "after_response": [late]}),
                ..StepRecord::default()
            }],
            ..Observed::default()
        };
        let results = evaluate(
            &scenario,
            &observed,
            &|_| true,
            Grading::default(),
            &Redactor::default(),
        );
        let entry = results
            .iter()
            .find(|r| r.id == "PROG-007")
            .expect("the entry is reported");
        assert_eq!(entry.verdict, Verdict::Pass, "the held assertion decides");
        assert!(
            entry.reason.contains("built-in evaluator")
                && entry.reason.contains("after the result"),
            "the built-in verdict is still reported: {}",
            entry.reason
        );
    }
}

#[cfg(test)]
mod requires_tests {
    use super::*;

    #[test]
    fn a_check_entry_skips_when_the_target_does_not_claim_what_it_requires() {
        let scenario = crate::scenario::parse_str(
            "t.yaml",
            "id: t\ntitle: t\nsteps:\n  - name: h\n    health: {agent: a}\n    requires: [health]\nchecks:\n  - title: healthy\n    requires: [health]\n    assert:\n      output: {step: h, path: \"$.health.status\", equals: ok}\n",
        )
        .expect("scenario parses");
        let results = evaluate(
            &scenario,
            &Observed::default(),
            &|c| c != Capability::Health,
            Grading::default(),
            &Redactor::default(),
        );
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].verdict, Verdict::Skip);
        assert!(
            results[0].reason.contains("health"),
            "{}",
            results[0].reason
        );
    }
}
