//! A bridge that is not a Pallas, sending correct MCP progress in its own words: the reference
//! with one of its `progress-generic-*` variants, judged through a profile that claims only the
//! generic capabilities (`progress`, `sessions`, `logs`), over every scenario that requires
//! `progress`. Seed 000's wording is the `pallas_progress` capability, so none of it may warn,
//! fail or be judged inconclusive on such a bridge, whatever its words — other words, a failed
//! tool announced as `Tool call completed: …`, messages naming no tool — while MCP's progress
//! rules are still judged. The same `progress-failed-tool` scenario judged as a Pallas shows that
//! the seed's "failed, never completed" entries rest on observed end notes: announced as
//! completed in the seed's words they warn; with no end note in the seed's words they are
//! inconclusive, never passed.

use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use pallas_conformance::checks::{CheckResult, Verdict};
use pallas_conformance::runner::{RunOptions, ScenarioResult};
use pallas_conformance::vocab::Capability;

use super::Shared;

const GENERIC: [Capability; 3] = [Capability::Progress, Capability::Sessions, Capability::Logs];
const PALLAS: [Capability; 4] = [
    Capability::Progress,
    Capability::PallasProgress,
    Capability::Sessions,
    Capability::Logs,
];

/// Against the reference with `variant`, judged with the capabilities `claims`: every scenario
/// requiring `progress` for a generic profile, `progress-failed-tool` for a Pallas one.
fn run(
    shared: &Shared,
    variant: &str,
    claims: &[Capability],
) -> Result<Vec<ScenarioResult>, Failed> {
    let mut target = pallas_e2e::suite::reference_target(
        &shared.root,
        std::path::Path::new(super::REFERENCE_BIN),
        &[variant],
    )
    .map_err(|e| Failed::from(e.to_string()))?;
    target.spec.capabilities = claims.to_vec();
    let pallas = claims.contains(&Capability::PallasProgress);
    let scenarios: Vec<_> = shared
        .scenarios
        .iter()
        .filter(|s| s.spec.requires.contains(&Capability::Progress))
        .filter(|s| !pallas || s.spec.id == "progress-failed-tool")
        .cloned()
        .collect();
    if scenarios.len() < if pallas { 1 } else { 10 } {
        return Err(format!("only {} progress scenarios", scenarios.len()).into());
    }
    let opts = RunOptions {
        jobs: 4,
        step_timeout: Duration::from_secs(10),
        scenario_deadline: Duration::from_secs(60),
        ..RunOptions::default()
    };
    let run = super::run_bounded(shared, &scenarios, &target, &opts)?;
    if let Some(e) = run.error {
        return Err(format!("run error: {e}").into());
    }
    Ok(run.scenarios)
}

fn entries(results: &[ScenarioResult]) -> impl Iterator<Item = (&ScenarioResult, &CheckResult)> {
    results
        .iter()
        .flat_map(|s| s.checks.iter().map(move |c| (s, c)))
}

fn show(s: &ScenarioResult, c: &CheckResult) -> String {
    format!(
        "{} {} {:?} ({}): {}",
        s.id, c.id, c.verdict, c.title, c.reason
    )
}

/// Every warn, fail, inconclusive or error entry not in `allowed`.
fn unexpected<'a>(
    results: &'a [ScenarioResult],
    allowed: impl Fn(&ScenarioResult, &CheckResult) -> bool + 'a,
) -> Vec<String> {
    entries(results)
        .filter(|(_, c)| {
            matches!(
                c.verdict,
                Verdict::Warn | Verdict::Fail | Verdict::Inconclusive | Verdict::Error
            )
        })
        .filter(|(s, c)| !allowed(s, c))
        .map(|(s, c)| show(s, c))
        .collect()
}

fn failed_tool_entries(results: &[ScenarioResult]) -> Vec<(&ScenarioResult, &CheckResult)> {
    entries(results)
        .filter(|(s, c)| {
            s.id == "progress-failed-tool" && c.title.contains("never reported as completed")
        })
        .collect()
}

/// Every scenario requiring `progress` judged as a generic bridge: nothing but passes and skips,
/// and no entry of a `pallas_progress` check judged.
fn generic(shared: &Shared, variant: &str) -> Result<(), Failed> {
    let results = run(shared, variant, &GENERIC)?;
    let bad = unexpected(&results, |_, _| false);
    if !bad.is_empty() {
        return Err(format!(
            "a generic bridge ({variant}) was judged:\n{}",
            bad.join("\n")
        )
        .into());
    }
    let wording_judged: Vec<String> = entries(&results)
        .filter(|(_, c)| c.verdict != Verdict::Skip)
        .filter(|(_, c)| {
            pallas_conformance::catalog::get(&c.id)
                .is_some_and(|d| d.capability == Some(Capability::PallasProgress))
        })
        .map(|(s, c)| show(s, c))
        .collect();
    if !wording_judged.is_empty() {
        return Err(format!(
            "seed 000 wording judged on a bridge not claiming `pallas_progress`:\n{}",
            wording_judged.join("\n")
        )
        .into());
    }
    let passed = entries(&results)
        .filter(|(_, c)| c.verdict == Verdict::Pass)
        .count();
    if passed < 20 {
        return Err(format!("only {passed} passes: MCP's progress rules were not judged").into());
    }
    Ok(())
}

/// `progress-failed-tool` judged as a Pallas: the "never reported as completed" entries give
/// `want` on both failed tools.
fn as_pallas(shared: &Shared, variant: &str, want: Verdict) -> Result<(), Failed> {
    let results = run(shared, variant, &PALLAS)?;
    let judged = failed_tool_entries(&results);
    if judged.len() != 2 || judged.iter().any(|(_, c)| c.verdict != want) {
        return Err(format!(
            "with {variant}, the \"never reported as completed\" entries should be {want:?}: {:?}",
            judged.iter().map(|(s, c)| show(s, c)).collect::<Vec<_>>()
        )
        .into());
    }
    Ok(())
}

/// The trials.
pub(super) fn trials(shared: &std::sync::Arc<Shared>) -> Vec<Trial> {
    type Case = Box<dyn Fn(&Shared) -> Result<(), Failed> + Send + Sync>;
    let cases: Vec<(&str, Case)> = vec![
        (
            "generic_wording::other_words_are_never_judged_by_seed_000",
            Box::new(|s| generic(s, "progress-generic-wording")),
        ),
        (
            "generic_wording::a_failed_tool_announced_as_completed_is_no_finding_on_a_generic_bridge",
            Box::new(|s| generic(s, "progress-generic-failed-completed")),
        ),
        (
            "generic_wording::messages_naming_no_tool_are_no_finding_on_a_generic_bridge",
            Box::new(|s| generic(s, "progress-generic-nameless")),
        ),
        (
            "generic_wording::as_a_pallas_a_failed_tool_announced_as_completed_warns",
            Box::new(|s| as_pallas(s, "progress-failed-as-completed", Verdict::Warn)),
        ),
        (
            "generic_wording::as_a_pallas_no_end_note_in_the_seeds_words_is_inconclusive",
            Box::new(|s| {
                as_pallas(
                    s,
                    "progress-generic-failed-completed",
                    Verdict::Inconclusive,
                )
            }),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, case)| {
            let shared = shared.clone();
            Trial::test(name, move || case(&shared))
        })
        .collect()
}
