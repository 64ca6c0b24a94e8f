//! A scenario's verdict from its entries: what a scenario stands on (its own observed entries,
//! premises aside), and what a Pallas-only entry decides on a bridge that is no Pallas.

use crate::checks::{CheckResult, Verdict};

/// The overall verdict of a list of checks. A scenario passes on what it was written to judge:
/// its own entries (those with a location), premises aside, when each of them that applies was
/// observed: one of them inconclusive makes the scenario inconclusive, whatever passed beside
/// it.
///
/// `pallas` says whether the target claims a Pallas-only capability. A check that runs on every
/// bridge but binds a Pallas alone (`scale: pallas` without a Pallas-only capability: MSG-002's
/// round trip, PROG-035's loop that outlives a dropped stream)
/// is what a scenario stands on only on a Pallas, and only when it has nothing else: on another
/// bridge its pass or its inconclusive reading says nothing of the scenario (its fail still
/// does).
pub fn overall(checks: &[CheckResult], error: bool, pallas: bool) -> Verdict {
    let own = |c: &&CheckResult| !c.premise && !c.location.is_empty();
    let bridge_wide = |c: &&CheckResult| {
        crate::catalog::get(&c.id).is_some_and(|d| {
            d.scale == crate::rules::Scale::Pallas
                && !d
                    .capability
                    .is_some_and(crate::vocab::Capability::is_pallas_only)
        })
    };
    let subject = |c: &&CheckResult| own(c) && !bridge_wide(c);
    let counted: Vec<&CheckResult> = checks
        .iter()
        .filter(|c| {
            pallas
                || !bridge_wide(c)
                || matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error)
        })
        .collect();
    // Its own entries bind a Pallas alone, and this bridge is none: nothing of it is judged,
    // and an unmet premise of it says nothing either.
    let not_its_subject = !counted.iter().any(own) && checks.iter().any(|c| own(&c));
    let judged: Vec<&CheckResult> = if counted.iter().any(subject) {
        counted.iter().copied().filter(|c| subject(c)).collect()
    } else if counted.iter().any(own) {
        counted.iter().copied().filter(|c| own(c)).collect()
    } else if not_its_subject {
        Vec::new()
    } else {
        counted.iter().copied().filter(|c| !c.premise).collect()
    };
    if error || counted.iter().any(|c| c.verdict == Verdict::Error) {
        Verdict::Error
    } else if counted
        .iter()
        .any(|c| c.verdict == Verdict::Fail && !c.baselined)
    {
        Verdict::Fail
    } else if counted.iter().any(|c| c.verdict == Verdict::Warn) {
        Verdict::Warn
    } else if not_its_subject {
        Verdict::Skip
    } else if judged.iter().any(|c| c.verdict == Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else if judged
        .iter()
        .any(|c| c.verdict == Verdict::Pass || c.baselined)
    {
        Verdict::Pass
    } else if counted.iter().any(|c| c.verdict == Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else if judged.iter().any(|c| c.verdict == Verdict::Info) {
        // It ran, and what it judges is information (a MAY not taken, an informational entry).
        Verdict::Info
    } else {
        Verdict::Skip
    }
}

/// Whether a scenario that ran is `skip` only because every entry it was written to judge binds a
/// Pallas alone (`scale: pallas`) and the target claims no Pallas-only capability: its entries
/// are shown, not judged. Reports say so beside the verdict.
pub fn binds_a_pallas_only(checks: &[CheckResult], verdict: Verdict, pallas: bool) -> bool {
    verdict == Verdict::Skip
        && !pallas
        && checks
            .iter()
            .any(|c| !c.premise && !c.location.is_empty() && c.verdict != Verdict::Skip)
        && checks
            .iter()
            .filter(|c| !c.premise && !c.location.is_empty())
            .all(|c| {
                crate::catalog::get(&c.id).is_some_and(|d| d.scale == crate::rules::Scale::Pallas)
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_of_pallas_only_entries_that_ran_is_told_apart_from_a_skip_that_ran_nothing() {
        let mut round_trip = entry(Verdict::Pass, "s.yaml:6", false);
        round_trip.id = "MSG-002".into();
        let premise = entry(Verdict::Pass, "s.yaml:2", true);
        let checks = [round_trip.clone(), premise.clone()];
        let verdict = overall(&checks, false, false);
        assert_eq!(verdict, Verdict::Skip);
        assert!(binds_a_pallas_only(&checks, verdict, false));
        // On a Pallas it is judged, and a passing one is a pass.
        assert!(!binds_a_pallas_only(
            &checks,
            overall(&checks, false, true),
            true
        ));
        // Entries that were all skipped ran nothing to show.
        let mut skipped = round_trip.clone();
        skipped.verdict = Verdict::Skip;
        assert!(!binds_a_pallas_only(
            &[skipped, premise.clone()],
            Verdict::Skip,
            false
        ));
        // An entry that binds every bridge: not this reason.
        let mut generic = entry(Verdict::Skip, "s.yaml:7", false);
        generic.id = "MCP-001".into();
        assert!(!binds_a_pallas_only(
            &[round_trip, generic, premise],
            Verdict::Skip,
            false
        ));
    }

    fn entry(verdict: Verdict, location: &str, premise: bool) -> CheckResult {
        CheckResult {
            premise,
            ..CheckResult::bare("X", verdict, "", location)
        }
    }

    #[test]
    fn a_scenario_passes_on_its_own_entries_not_on_automatic_checks_or_premises() {
        let automatic_pass = entry(Verdict::Pass, "", false);
        let own_inconclusive = entry(Verdict::Inconclusive, "s.yaml:3", false);
        let premise_pass = entry(Verdict::Pass, "s.yaml:2", true);
        let own_pass = entry(Verdict::Pass, "s.yaml:4", false);
        assert_eq!(
            overall(
                &[
                    automatic_pass.clone(),
                    premise_pass.clone(),
                    own_inconclusive.clone()
                ],
                false,
                true
            ),
            Verdict::Inconclusive
        );
        // One of its own entries unobserved: the passes beside it do not make it a pass.
        assert_eq!(
            overall(
                &[automatic_pass.clone(), own_inconclusive, own_pass.clone()],
                false,
                true
            ),
            Verdict::Inconclusive
        );
        assert_eq!(
            overall(&[automatic_pass.clone(), own_pass], false, true),
            Verdict::Pass
        );
        // A scenario of automatic checks only is judged by them.
        assert_eq!(overall(&[automatic_pass], false, true), Verdict::Pass);
        assert_eq!(
            overall(std::slice::from_ref(&premise_pass), false, true),
            Verdict::Skip
        );
        // A scenario whose own entries are information ran: it is `info`, not skipped.
        let own_info = entry(Verdict::Info, "s.yaml:5", false);
        assert_eq!(
            overall(&[premise_pass.clone(), own_info], false, true),
            Verdict::Info
        );
        // A Pallas-only round trip beside skipped progress entries: the scenario is skipped.
        let mut round_trip = entry(Verdict::Pass, "s.yaml:6", false);
        round_trip.id = "MSG-002".into();
        let mut progress = entry(Verdict::Skip, "s.yaml:7", false);
        progress.id = "PROG-003".into();
        assert_eq!(
            overall(&[round_trip.clone(), progress.clone()], false, true),
            Verdict::Skip
        );
        // Alone, it is what the scenario judges on a Pallas.
        assert_eq!(
            overall(&[round_trip.clone(), premise_pass.clone()], false, true),
            Verdict::Pass
        );
        // On another bridge it binds nothing: the scenario is skipped, beside an automatic
        // check too, and its inconclusive reading does not make the scenario inconclusive.
        let automatic_pass = entry(Verdict::Pass, "", false);
        assert_eq!(
            overall(
                &[
                    round_trip.clone(),
                    premise_pass.clone(),
                    automatic_pass.clone()
                ],
                false,
                false
            ),
            Verdict::Skip
        );
        let mut unread = round_trip.clone();
        unread.verdict = Verdict::Inconclusive;
        // Beside an unmet premise too: the premise was for a subject this bridge does not have.
        let mut premise_unmet = premise_pass.clone();
        premise_unmet.verdict = Verdict::Inconclusive;
        assert_eq!(
            overall(&[unread.clone(), premise_unmet], false, false),
            Verdict::Skip
        );
        assert_eq!(
            overall(&[unread, premise_pass.clone()], false, false),
            Verdict::Skip
        );
        // So is a Pallas-only reading of a generic capability (PROG-035 under `progress`).
        let mut loop_goes_on = entry(Verdict::Pass, "s.yaml:8", false);
        loop_goes_on.id = "PROG-035".into();
        assert_eq!(
            overall(&[loop_goes_on.clone(), premise_pass.clone()], false, false),
            Verdict::Skip
        );
        assert_eq!(
            overall(&[loop_goes_on, premise_pass.clone()], false, true),
            Verdict::Pass
        );
        // Its fail is still a fail.
        let mut broken = round_trip;
        broken.verdict = Verdict::Fail;
        assert_eq!(
            overall(&[broken, automatic_pass], false, false),
            Verdict::Fail
        );
    }
}
