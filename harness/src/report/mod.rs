//! Reporters: each renders, in one format, what [`crate::runner::RunResult::from_events`]
//! rebuilds from a run's event stream (live lines: one [`crate::runner::RunEvent`] at a time).
//! They only read data; nothing here runs anything.

mod findings;
mod html;
mod junit;
mod markdown;
mod terminal;

pub use findings::{FINDING_VERDICTS, Finding, findings};
pub use html::html;
pub use junit::junit;
pub use markdown::markdown;
pub use terminal::{event_line, summary};

use crate::matrix::levels;
use crate::runner::RunResult;
use crate::suite::SuiteInfo;

/// Which kit and suite judged a run, for every report's header: `pallas-conformance 0.1.0,
/// embedded suite sha256:…` (or `…, scenario files on disk (the kit's embedded suite is …)`).
pub fn kit_line(kit_version: &str, suite: Option<&SuiteInfo>) -> String {
    match suite {
        Some(s) => format!("pallas-conformance {kit_version}, {}", s.describe()),
        None => format!("pallas-conformance {kit_version}"),
    }
}

fn run_kit_line(run: &RunResult) -> String {
    kit_line(&run.kit_version, run.suite.as_ref())
}

/// The JSON report: the capabilities the profile claims and what the implementation declared on
/// the wire ([`crate::runner::Declared`]); every scenario and check with id, level, refs, verdict,
/// evidence, duration;
/// and `findings`, the fail/warn/error results grouped by cause (one entry listing every scenario
/// where the same check failed the same way).
pub fn json(run: &RunResult) -> serde_json::Value {
    let mut doc = serde_json::json!({
        "format": "pallas-conformance/report/v1",
        "target": run.target,
        "kit_version": run.kit_version,
        "suite": run.suite,
        "claims": run.claims,
        "declared": run.declared(),
        "duration_ms": run.duration_ms,
        "counts": run.counts(),
        "level": level_json(run),
        "by_family": run.by_family(),
        "exit_code": run.exit_code(),
        "error": run.error,
        "stale": run.stale,
        "scenarios": run.scenarios,
        "findings": findings::json(run),
    });
    // A scenario that ran but judged nothing of this target says why, beside its verdict.
    let pallas = claims_a_pallas(&run.claims);
    if let Some(listed) = doc["scenarios"].as_array_mut() {
        for (s, out) in run.scenarios.iter().zip(listed) {
            if let (Some(note), Some(map)) = (not_judged(s, pallas), out.as_object_mut()) {
                map.insert("not_judged".into(), note.into());
            }
        }
    }
    if let (false, Some(map)) = (run.side.is_server(), doc.as_object_mut()) {
        map.insert("side".into(), serde_json::json!(run.side));
    }
    doc
}

/// The report's levels, as the matrix awards them (one source: [`levels::report_levels`]),
/// with the scope they rest on.
fn level_json(run: &RunResult) -> serde_json::Value {
    let entries = || run.scenarios.iter().flat_map(|s| &s.checks);
    let (generic, pallas) = levels::report_levels(entries(), &not_seen(run));
    if !run.side.is_server() {
        // A client has one level, over the client checks.
        return serde_json::json!({
            "generic": generic,
            "scope": levels::scope(entries()),
        });
    }
    serde_json::json!({
        "generic": generic,
        "pallas": pallas,
        "scope": levels::scope(entries()),
    })
}

/// The claimed capabilities the run never saw on the wire.
fn not_seen(run: &RunResult) -> Vec<crate::vocab::Capability> {
    crate::matrix::capabilities::claimed_not_seen(Some(&run.claims), Some(&run.declared()))
}

/// The levels in one line, for a headline: `generic: core; Pallas: not scored (…); 41 of 57
/// entries the claims reach judged on an observation`.
pub fn level_line(run: &RunResult) -> String {
    let entries = || run.scenarios.iter().flat_map(|s| &s.checks);
    let (generic, pallas) = levels::report_levels(entries(), &not_seen(run));
    let scope = levels::scope(entries());
    if !run.side.is_server() {
        return format!(
            "client level: {}; {} of {} entries judged on an observation",
            generic.level.as_str(),
            scope.judged,
            scope.reached
        );
    }
    format!(
        "generic level: {}; Pallas level: {}; {} of {} entries the claims reach judged on an observation",
        generic.level.as_str(),
        pallas.level.as_str(),
        scope.judged,
        scope.reached
    )
}

/// The JSON report as pretty text.
pub fn json_text(run: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(&json(run)).unwrap_or_default();
    s.push('\n');
    s
}

/// Why scenario `s` ran and is `skip` though nothing skipped it: every entry it was written to
/// judge binds a Pallas alone, and the target (`pallas`: whether it claims to be one) is none.
pub(crate) fn not_judged(s: &crate::runner::ScenarioResult, pallas: bool) -> Option<String> {
    if s.skipped.is_some() || !crate::runner::binds_a_pallas_only(&s.checks, s.verdict, pallas) {
        return None;
    }
    let mut own: Vec<(&str, usize)> = Vec::new();
    for c in s
        .checks
        .iter()
        .filter(|c| !c.premise && !c.location.is_empty())
    {
        match own.iter_mut().find(|(id, _)| *id == c.id) {
            Some((_, n)) => *n += 1,
            None => own.push((&c.id, 1)),
        }
    }
    let own: Vec<String> = own
        .iter()
        .map(|(id, n)| {
            if *n > 1 {
                format!("{id} ×{n}")
            } else {
                (*id).to_owned()
            }
        })
        .collect();
    Some(format!(
        "ran; every entry it was written to judge ({}) binds a Pallas alone (seed 000's and 001's Pallas wording), and the target claims no Pallas-only capability: their passes are shown, not counted for the scenario (a failure among them would still count); the automatic MCP entries are judged as in every scenario",
        own.join(", ")
    ))
}

/// Whether `claims` (a report's claimed capabilities) hold a Pallas-only one: the target is a
/// Pallas, and the entries that bind a Pallas alone are judged on it.
fn claims_a_pallas(claims: &[String]) -> bool {
    claims.iter().any(|c| {
        serde_json::from_value::<crate::vocab::Capability>(serde_json::Value::String(c.clone()))
            .is_ok_and(crate::vocab::Capability::is_pallas_only)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{CheckResult, Verdict};
    use crate::runner::{ScenarioResult, Side};

    fn scenario(checks: Vec<CheckResult>, verdict: Verdict) -> ScenarioResult {
        ScenarioResult {
            id: "multi-round".into(),
            title: String::new(),
            file: String::new(),
            verdict,
            checks,
            duration_ms: 0.0,
            error: None,
            skipped: None,
            output_tail: None,
            steps: vec![],
            reproduce: String::new(),
            phases: None,
            declared: Default::default(),
        }
    }

    #[test]
    fn a_skip_that_ran_pallas_only_entries_says_why_in_the_json() {
        let own = |location: &str| {
            let mut c = CheckResult::bare("MSG-002", Verdict::Pass, "", location);
            c.level = crate::vocab::Level::Should;
            c
        };
        let mut premise = CheckResult::bare("ASSERT", Verdict::Pass, "", "s.yaml:2");
        premise.premise = true;
        let checks = vec![own("s.yaml:6"), own("s.yaml:9"), premise];
        let verdict = crate::runner::overall(&checks, false, false);
        assert_eq!(verdict, Verdict::Skip);
        let run = |claims: Vec<String>| RunResult {
            side: Side::Server,
            scenarios: vec![scenario(checks.clone(), verdict)],
            target: "t".into(),
            kit_version: String::new(),
            suite: None,
            claims,
            stale: vec![],
            duration_ms: 0.0,
            error: None,
        };
        let doc = json(&run(vec!["tools".into()]));
        let why = doc["scenarios"][0]["not_judged"]
            .as_str()
            .unwrap_or_default();
        assert!(
            why.contains("MSG-002 ×2") && why.contains("binds a Pallas alone"),
            "{doc}"
        );
        assert!(doc["scenarios"][0].get("skipped").is_none(), "it ran");
        // On a Pallas the same entries are judged: no such note.
        let doc = json(&run(vec!["health".into()]));
        assert!(doc["scenarios"][0].get("not_judged").is_none(), "{doc}");
    }
}
