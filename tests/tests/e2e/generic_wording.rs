//! A bridge that is not a Pallas, sending correct MCP progress in its own words: the reference
//! with one of its `progress-generic-*` variants, judged through a profile that claims only the
//! generic capabilities (`progress`, `sessions`, `logs`), over every scenario that requires
//! `progress`. Seed 000's wording is the `pallas_progress` capability, so none of it may warn or
//! fail such a bridge; what MCP asks of every bridge is still judged, and on an observation:
//! - other words, every tool named: no warn, fail or inconclusive anywhere;
//! - a failed tool announced as `Tool call completed: …`: PROG-037 (MCP: "relevant human readable
//!   progress information") warns on both failed tools, and nothing else does;
//! - messages that name no tool: PROG-037 is inconclusive (nothing to judge), never passed.

use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use pallas_conformance::checks::{CheckResult, Verdict};
use pallas_conformance::runner::{RunOptions, ScenarioResult};
use pallas_conformance::vocab::Capability;

use super::Shared;

const GENERIC: [Capability; 3] = [Capability::Progress, Capability::Sessions, Capability::Logs];

/// Every scenario requiring `progress`, against the reference with `variant`, judged as a
/// generic bridge.
fn run(shared: &Shared, variant: &str) -> Result<Vec<ScenarioResult>, Failed> {
    let mut target = pallas_e2e::suite::reference_target(
        &shared.root,
        std::path::Path::new(super::REFERENCE_BIN),
        &[variant],
    )
    .map_err(|e| Failed::from(e.to_string()))?;
    target.spec.capabilities = GENERIC.to_vec();
    let scenarios: Vec<_> = shared
        .scenarios
        .iter()
        .filter(|s| s.spec.requires.contains(&Capability::Progress))
        .cloned()
        .collect();
    if scenarios.len() < 10 {
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

fn prog_037(results: &[ScenarioResult]) -> Vec<(&ScenarioResult, &CheckResult)> {
    entries(results)
        .filter(|(_, c)| c.id == "PROG-037")
        .collect()
}

fn other_words(shared: &Shared) -> Result<(), Failed> {
    let results = run(shared, "progress-generic-wording")?;
    let bad = unexpected(&results, |_, _| false);
    if !bad.is_empty() {
        return Err(format!(
            "a generic bridge in its own words was judged:\n{}",
            bad.join("\n")
        )
        .into());
    }
    let judged = prog_037(&results);
    if judged.len() != 2 || judged.iter().any(|(_, c)| c.verdict != Verdict::Pass) {
        return Err(format!(
            "PROG-037 should pass twice on a bridge naming its failed tools: {:?}",
            judged.iter().map(|(s, c)| show(s, c)).collect::<Vec<_>>()
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
    Ok(())
}

fn failed_announced_completed(shared: &Shared) -> Result<(), Failed> {
    let results = run(shared, "progress-generic-failed-completed")?;
    let judged = prog_037(&results);
    if judged.len() != 2 || judged.iter().any(|(_, c)| c.verdict != Verdict::Warn) {
        return Err(format!(
            "PROG-037 should warn on both failed tools announced as completed: {:?}",
            judged.iter().map(|(s, c)| show(s, c)).collect::<Vec<_>>()
        )
        .into());
    }
    let bad = unexpected(&results, |_, c| c.id == "PROG-037");
    if !bad.is_empty() {
        return Err(format!("other findings than PROG-037's:\n{}", bad.join("\n")).into());
    }
    Ok(())
}

fn nameless(shared: &Shared) -> Result<(), Failed> {
    let results = run(shared, "progress-generic-nameless")?;
    let judged = prog_037(&results);
    if judged.len() != 2
        || judged
            .iter()
            .any(|(_, c)| c.verdict != Verdict::Inconclusive)
    {
        return Err(format!(
            "PROG-037 should be inconclusive when no message names the failed tool: {:?}",
            judged.iter().map(|(s, c)| show(s, c)).collect::<Vec<_>>()
        )
        .into());
    }
    let bad = unexpected(&results, |_, c| c.id == "PROG-037");
    if !bad.is_empty() {
        return Err(format!("other findings than PROG-037's:\n{}", bad.join("\n")).into());
    }
    Ok(())
}

/// The three trials.
pub(super) fn trials(shared: &std::sync::Arc<Shared>) -> Vec<Trial> {
    type Case = fn(&Shared) -> Result<(), Failed>;
    let cases: [(&str, Case); 3] = [
        (
            "generic_wording::other_words_are_never_judged_by_seed_000",
            other_words,
        ),
        (
            "generic_wording::a_failed_tool_announced_as_completed_warns",
            failed_announced_completed,
        ),
        (
            "generic_wording::messages_naming_no_tool_leave_prog_037_inconclusive",
            nameless,
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
