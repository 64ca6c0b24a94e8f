//! Checks: turning observations (steps, received messages, mock journals, logs) into verdicts
//! of catalogued checks and generic assertions.

mod assert;
mod verdict;
pub use assert::predicate as assert_predicate;
pub use assert::predicate_on as assert_predicate_on;
pub use verdict::{CheckResult, Evidence, Grading, Outcome, Subject, Verdict, Witness};
mod params;
mod premise;
mod read;
pub mod selftest;
mod value;

mod bearer;
mod common;
#[cfg(test)]
mod family_tests;
mod health;
mod mcp;
mod mcp_http;
mod mcp_tools;
mod messages;
mod metrics;
mod progress;
mod progress_walk;
mod registry;

pub use metrics::{SEED_METRICS, metric_value};
pub(crate) use params::with_errors;
pub use params::with_table;
pub use read::{excerpt, select_steps};
pub use registry::python_title;
pub mod wire;

use std::collections::BTreeMap;

use crate::catalog::{self, Evaluation};
use crate::observation::{Observed, StepRecord};
use crate::redact::Redactor;
use crate::scenario::template::render_json;
use crate::scenario::{Capability, CheckSpec, Level, Scenario};

pub(crate) use value::evaluator;

/// Runs the built-in evaluator of check `id`.
pub(crate) fn run_builtin(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    match evaluator(id) {
        Some(e) => e(c, o),
        None => Outcome::Error(format!("check `{id}` has no built-in evaluator")),
    }
}

/// The built-in checks `ids` judged on their own over `observed`, outside a scenario (the
/// `watch` probe judges its registry fetch and its canary call this way): each check's premise
/// (`inconclusive` when it did not occur), its evaluator, graded by its rule's level with every
/// capability claimed. An ID without a built-in evaluator is an `error` result.
pub fn judge_builtin(ids: &[&str], observed: &Observed, redactor: &Redactor) -> Vec<CheckResult> {
    let judge = Judge {
        observed,
        claims: &|_| true,
        grading: Grading::default(),
        redactor,
    };
    ids.iter()
        .filter_map(|id| catalog::get(id).map(|def| (*id, def)))
        .map(|(id, def)| {
            let outcome = match value::missing(id, observed) {
                Some(why) => Outcome::Inconclusive(why.to_owned()),
                None => match run_builtin(id, &CheckSpec::default(), observed) {
                    Outcome::NotApplicable(r) => Outcome::Inconclusive(r),
                    o => o,
                },
            };
            judge.judge(subject_of(def, None, String::new()), outcome, &[])
        })
        .collect()
}

/// A result for every check of `scenario` (and the automatic ones), graded and redacted.
pub fn evaluate(
    scenario: &Scenario,
    observed: &Observed,
    claims: &dyn Fn(Capability) -> bool,
    grading: Grading,
    redactor: &Redactor,
) -> Vec<CheckResult> {
    let judge = Judge {
        observed,
        claims,
        grading,
        redactor,
    };
    let mut out = automatic(scenario, &judge);
    // Listed entries are judged after all of them are evaluated: a scenario premise that does
    // not hold makes every other entry's pass or failure inconclusive (nothing was exercised).
    let listed: Vec<Listed> = (0..scenario.spec.checks.len())
        .map(|i| listed_entry(scenario, i, observed, claims))
        .collect();
    out.extend(settle(listed, &judge));
    if grading.self_test {
        self_test(scenario, observed, claims, &mut out);
    }
    out
}

/// Each outcome of `scenario`'s entries over `observed`, judged on its own (no premise gating,
/// no fold), keyed by check ID and location: whether it kept its rule.
fn kept_entries(
    scenario: &Scenario,
    observed: &Observed,
    claims: &dyn Fn(Capability) -> bool,
) -> BTreeMap<(String, String), bool> {
    let mut kept = BTreeMap::new();
    for (def, o) in automatic_outcomes(observed) {
        kept.insert((def.id.clone(), String::new()), o.is_kept());
    }
    for i in 0..scenario.spec.checks.len() {
        let l = listed_entry(scenario, i, observed, claims);
        kept.insert(
            (l.subject.id().to_owned(), scenario.check_location(i)),
            l.outcome.is_kept(),
        );
    }
    kept
}

/// The texts the scenario's entries look for in a model request's body (`body_contains`).
fn body_texts(scenario: &Scenario) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("body_contains", serde_json::Value::String(t)) => out.push(t.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::to_value(&scenario.spec.checks) {
        walk(&v, &mut out);
    }
    out
}

/// `run --self-test`: every pass (premises aside) judged again over each
/// [`selftest::Perturbation`] of what was observed; one that survives them all could not have
/// failed, and becomes an `error` that says so.
fn self_test(
    scenario: &Scenario,
    observed: &Observed,
    claims: &dyn Fn(Capability) -> bool,
    results: &mut [CheckResult],
) {
    let texts = body_texts(scenario);
    let perturbed: Vec<BTreeMap<(String, String), bool>> = selftest::Perturbation::ALL
        .iter()
        .map(|p| kept_entries(scenario, &p.apply_breaking(observed, &texts), claims))
        .collect();
    for r in results
        .iter_mut()
        .filter(|r| r.verdict == Verdict::Pass && !r.premise)
    {
        let key = (r.id.clone(), r.location.clone());
        if perturbed
            .iter()
            .all(|m| m.get(&key).copied().unwrap_or(false))
        {
            r.verdict = Verdict::Error;
            r.reason = format!(
                "self-test: this pass survived every perturbation of what it observed ({}): its check could not have failed here, a defect of the kit's check, not a verdict on the implementation",
                selftest::Perturbation::ALL
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// What grades an outcome into a result: the observations, the claims, the grading, the
/// redactor.
struct Judge<'a> {
    observed: &'a Observed,
    claims: &'a dyn Fn(Capability) -> bool,
    grading: Grading,
    redactor: &'a Redactor,
}

impl Judge<'_> {
    /// `outcome` graded into a result; a non-pass verdict gets its transcript.
    fn judge(&self, subject: Subject, outcome: Outcome, scope: &[String]) -> CheckResult {
        let outcome = unobservable(outcome, self.observed, scope);
        let mut result =
            CheckResult::judged(subject, outcome, self.claims, self.grading, self.redactor);
        if !matches!(result.verdict, Verdict::Pass | Verdict::Skip) {
            result.transcript = transcript(self.observed, scope, &result.evidence, self.redactor);
        }
        result
    }
}

/// The automatic checks the scenario does not list, over what it observed (none whose premise
/// or situation did not occur).
/// Each automatic check with something observed that it applies to, and its outcome there.
fn automatic_outcomes(
    observed: &Observed,
) -> impl Iterator<Item = (&'static crate::rules::CheckDef, Outcome)> + '_ {
    catalog::all()
        .iter()
        .filter(|d| d.evaluation == Evaluation::Automatic)
        .filter(|d| value::missing(&d.id, observed).is_none())
        .map(|d| (d, run_builtin(&d.id, &CheckSpec::default(), observed)))
}

fn automatic(scenario: &Scenario, judge: &Judge<'_>) -> Vec<CheckResult> {
    let observed = judge.observed;
    let mut out = Vec::new();
    for (def, outcome) in automatic_outcomes(observed) {
        if scenario
            .spec
            .checks
            .iter()
            .any(|c| c.check.as_deref() == Some(def.id.as_str()) && c.assert.is_none())
        {
            continue; // listed explicitly
        }
        if matches!(
            outcome,
            Outcome::NotApplicable(_) | Outcome::Inconclusive(_)
        ) {
            continue; // nothing observed that it applies to
        }
        out.push(judge.judge(subject_of(def, None, String::new()), outcome, &[]));
    }
    out
}

/// The copies of a listed entry its `for_each` makes (the entry itself without one).
fn expansions(check: &CheckSpec, observed: &Observed) -> Vec<CheckSpec> {
    match &check.for_each {
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
    }
}

/// Listed entry `i` of `scenario`, evaluated (not yet judged).
fn listed_entry(
    scenario: &Scenario,
    i: usize,
    observed: &Observed,
    claims: &dyn Fn(Capability) -> bool,
) -> Listed {
    let check = &scenario.spec.checks[i];
    let location = scenario.check_location(i);
    let def = check.check.as_deref().and_then(catalog::get);
    let subject = match def {
        Some(def) => subject_of(def, check.title.clone(), location),
        None => Subject::assertion(
            // Validation refuses an unattributed assertion without a level, unless it is a
            // premise: what the scenario must have exercised, which judges no rule.
            check.level.unwrap_or(if check.premise {
                Level::Info
            } else {
                Level::Should
            }),
            scenario.spec.refs.clone(),
            check
                .title
                .clone()
                .unwrap_or_else(|| "scenario assertion".into()),
            location,
        ),
    };
    // The entry states which of the check's rules it judges: every verdict cites that rule.
    let subject = match &check.rule {
        Some(rule) => subject.stating(rule),
        None => subject,
    };
    if let Some(cap) = check.requires.iter().find(|c| !claims(**c)) {
        return Listed {
            premise: false,
            subject,
            outcome: Outcome::NotApplicable(format!(
                "the target does not claim `{}`",
                cap.as_str()
            )),
            scope: Vec::new(),
            note: None,
        };
    }
    // A for_each entry is one result: the first failing expansion decides.
    let mut merged: Option<Outcome> = None;
    // With `assert:`, the built-in evaluator's failure is reported beside the verdict.
    let mut builtin_note: Option<String> = None;
    for c in &expansions(check, observed) {
        if let (Some(_), Some(d)) = (&c.assert, def)
            && d.evaluation != Evaluation::Assertion
            && builtin_note.is_none()
            && let Some(r) = run_builtin(&d.id, c, observed).broken_reason()
        {
            builtin_note = Some(r.to_owned());
        }
        let unmet_given = c
            .given
            .as_ref()
            .and_then(|g| assert::run(g, observed).broken_reason().map(str::to_owned));
        let outcome = match (&c.assert, &c.check) {
            // What the entry judges was not observed: no verdict is earned.
            _ if unmet_given.is_some() => Outcome::Inconclusive(format!(
                "the entry's `given:` does not hold: {}",
                unmet_given.as_deref().unwrap_or_default()
            )),
            // The author's assertion is the stated rule for this entry; the built-in
            // evaluator still reports its own verdict beside it.
            (Some(a), _) => assert::run(a, observed),
            // Not observed is inconclusive; not applicable (the observed shape cannot carry the
            // clause) is a skip that says why.
            (None, Some(id)) => run_builtin(id, c, observed),
            (None, None) => Outcome::Error("empty check entry".into()),
        };
        merged = Some(match merged {
            None => outcome,
            Some(prev) => merge(prev, outcome),
        });
    }
    let mut outcome = merged.unwrap_or(Outcome::Inconclusive("for_each range is empty".into()));
    // The entry states which of the check's rules its assertion observes.
    if let (Some(rule), Outcome::Fail(reason, evidence)) = (&check.rule, &outcome) {
        outcome = Outcome::breaks(rule.clone(), reason.clone(), evidence.clone());
    }
    if let Some(why) = def.and_then(|d| value::missing(&d.id, observed))
        && !matches!(outcome, Outcome::Error(_))
    {
        outcome = Outcome::Inconclusive(why.to_owned());
    }
    if check.premise
        && let Some(r) = outcome.broken_reason()
    {
        outcome = Outcome::Inconclusive(format!(
            "the scenario's premise does not hold, so what it sets up was not exercised: {r}"
        ));
    }
    Listed {
        premise: check.premise,
        subject,
        outcome,
        scope: scope_of(check),
        note: builtin_note,
    }
}

/// The subject of a catalogued check, in the reading its declaration names.
pub(crate) fn subject_of(
    def: &catalog::CheckDef,
    title: Option<String>,
    location: String,
) -> Subject {
    Subject::check(def, title, location).in_mode(value::find(&def.id).and_then(|c| c.mode))
}

/// The listed entries judged together: an unmet scenario premise makes the others
/// inconclusive; a failure that only repeats another entry's finding is folded into it (the
/// check's declared [`value::Fold`]).
fn settle(listed: Vec<Listed>, judge: &Judge<'_>) -> Vec<CheckResult> {
    let unmet: Option<String> = listed.iter().find_map(|l| match (&l.premise, &l.outcome) {
        (true, Outcome::Inconclusive(_)) => Some(l.subject.title.clone()),
        _ => None,
    });
    let failed: Vec<String> = listed
        .iter()
        .filter(|l| l.outcome.broken_reason().is_some())
        .map(|l| l.subject.id().to_owned())
        .collect();
    let mut out = Vec::new();
    for l in listed {
        let mut outcome = l.outcome;
        if outcome.broken_reason().is_some()
            && let Some(fold) = value::find(l.subject.id()).and_then(|c| c.folds)
            && let Some(folded) = (fold.when)(judge.observed, failed.iter().any(|f| f == fold.into))
        {
            outcome = folded;
        }
        if let Some(premise) = &unmet
            && !l.premise
            && matches!(
                outcome,
                Outcome::Kept(_) | Outcome::Fail(..) | Outcome::Breaks { .. }
            )
        {
            outcome = Outcome::Inconclusive(format!(
                "the scenario's premise \"{premise}\" does not hold, so what this entry judges was not exercised"
            ));
        }
        let held = matches!(outcome, Outcome::Kept(_));
        let mut result = judge.judge(l.subject, outcome, &l.scope);
        result.premise = l.premise;
        if l.premise && held && result.verdict == Verdict::Info {
            // A premise that held is shown as held beside the entries it lets judge, and is
            // counted apart from the passes (it judges no rule).
            result.verdict = Verdict::Pass;
            result.reason.clear();
        }
        // A note of the built-in evaluator shows where it disagrees with a non-passing entry; on
        // a pass it would contradict the witness it stands beside.
        if let Some(note) = l.note.filter(|_| result.verdict != Verdict::Pass) {
            let note = format!(
                "the check's own reading (not deciding: the entry's assertion states the rule here): {}",
                judge.redactor.text(&note)
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

/// A listed entry, evaluated and waiting to be judged.
struct Listed {
    premise: bool,
    subject: Subject,
    outcome: Outcome,
    scope: Vec<String>,
    note: Option<String>,
}

/// The worse of two outcomes of one entry (error > fail > should > inconclusive > pass).
fn merge(prev: Outcome, next: Outcome) -> Outcome {
    fn rank(o: &Outcome) -> u8 {
        match o {
            Outcome::Error(_) => 5,
            Outcome::Fail(..) | Outcome::Breaks { .. } => 4,
            Outcome::Inconclusive(_) => 2,
            Outcome::Kept(_) => 1,
            Outcome::NotApplicable(_) => 0,
        }
    }
    match (prev, next) {
        // Every expansion kept it: the witnesses of all.
        (Outcome::Kept(mut a), Outcome::Kept(b)) => {
            a.extend(b);
            Outcome::Kept(a)
        }
        (prev, next) if rank(&next) > rank(&prev) => next,
        (prev, _) => prev,
    }
}

/// The step globs an entry looks at: its `steps:`, or the step its assertion names.
fn scope_of(check: &CheckSpec) -> Vec<String> {
    let mut scope = check.steps.clone();
    if let Some(a) = &check.assert {
        if let Some(step) = a.output.as_ref().and_then(|o| o.step.clone()) {
            scope.push(step);
        }
        if let Some(t) = &a.timing {
            scope.push(t.step.clone());
        }
    }
    scope
}

/// A failure that rests on a step that timed out is not a failure: the harness could not
/// observe the rest. It becomes an error naming the step (the failure's reason kept beside).
fn unobservable(outcome: Outcome, observed: &Observed, scope: &[String]) -> Outcome {
    let Some(reason) = outcome.broken_reason() else {
        return outcome;
    };
    // An unscoped check judges every step, so any timeout leaves it without a full view.
    let timed_out: Vec<String> = select_steps(&observed.steps, scope)
        .into_iter()
        .filter(|s| {
            s.timed_out
                || s.error
                    .as_deref()
                    .is_some_and(crate::client::limits::is_limit_error)
        })
        .map(|s| match &s.error {
            Some(cause) => format!("{} ({cause})", s.name),
            None => s.name.clone(),
        })
        .collect();
    if timed_out.is_empty() {
        return outcome;
    }
    Outcome::Error(format!(
        "not judged: step(s) {} timed out or passed a read limit, so the observation is incomplete (the evaluator saw: {reason})",
        timed_out.join(", ")
    ))
}

/// Redacted excerpts of the steps a non-pass verdict rests on: those its evidence names, else
/// those in its scope, at most three.
fn transcript(
    observed: &Observed,
    scope: &[String],
    evidence: &[Evidence],
    redactor: &Redactor,
) -> Vec<String> {
    let named: Vec<&StepRecord> = observed
        .steps
        .iter()
        .filter(|s| {
            evidence
                .iter()
                .any(|e| e.what.contains(&format!("`{}`", s.name)) || e.what.contains(&s.name))
        })
        .collect();
    let steps = if named.is_empty() && !scope.is_empty() {
        select_steps(&observed.steps, scope)
    } else {
        named
    };
    steps
        .into_iter()
        .take(3)
        .map(|s| {
            let request = redactor.json(&s.request_json());
            // Redact a preview, not the whole output: a huge answer costs nothing here.
            let output = s.output_shown(redactor);
            let mut line = format!(
                "{} ({}, {:.0} ms): → {} ← {}",
                s.name,
                s.action,
                s.elapsed_ms,
                excerpt(&request, 300),
                excerpt(&output, 600)
            );
            if s.timed_out {
                line.push_str(" [timed out]");
            } else if let Some(e) = &s.error {
                line.push_str(&format!(" [error: {}]", redactor.text(e)));
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_held_assertion_decides_its_entry_and_a_pass_carries_no_contrary_note() {
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
                spec: scenario.spec.steps[0].clone(),
                elapsed_ms: 5.0,
                progress_token: Some(json!("t")),
                observation: super::family_tests::typed(
                    "send",
                    &json!({"progress": [late.clone()], "after_response": [late]}),
                ),
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
            !entry.reason.contains("own reading"),
            "a pass carries no note that contradicts its witness: {}",
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
            "id: t\ntitle: t\nsteps:\n  - name: h\n    health: {agent: a}\n    requires: [health]\nchecks:\n  - title: healthy\n    level: MUST\n    requires: [health]\n    assert:\n      output: {step: h, path: \"$.health.status\", equals: ok}\n",
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

    /// A check's declared reading is named on each of its verdicts, whatever the verdict; a
    /// check that declares none names none.
    #[test]
    fn a_verdict_names_the_reading_its_check_declares() {
        let scenario = crate::scenario::parse_str(
            "t.yaml",
            "id: t\ntitle: t\nsteps:\n  - name: s\n    send: {agent: a, message: hi, progress_token: 1}\nchecks:\n  - check: PROG-003\n  - check: PROG-004\n  - check: PROG-002\n",
        )
        .expect("scenario parses");
        let results = evaluate(
            &scenario,
            &Observed::default(),
            &|_| true,
            Grading::default(),
            &Redactor::default(),
        );
        let mode = |id: &str| results.iter().find(|r| r.id == id).map(|r| r.mode.clone());
        assert_eq!(mode("PROG-003"), Some(Some("spec-strict".to_owned())));
        assert_eq!(mode("PROG-004"), Some(Some("pallas-compatible".to_owned())));
        assert_eq!(mode("PROG-002"), Some(None));
    }
}
