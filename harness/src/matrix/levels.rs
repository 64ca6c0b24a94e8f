//! Conformance levels: the one table ([`LEVELS`]) and the rule that computes an implementation's
//! level from the verdicts of its report ([`score`]). `docs/certification/LEVELS.md` says the
//! same in prose; a test holds the two together.
//!
//! An entry is *judged* when its verdict is `pass`, `fail` or `warn` (a baselined `fail` counts
//! as `fail`). `skip` entries (a capability the profile does not claim) are not counted, only
//! shown. MAY and INFO entries never raise or lower a level.

use serde::Serialize;

use crate::checks::{CheckResult, Verdict};
use crate::runner::Counts;
use crate::scenario::Level;
use crate::vocab::Capability;

/// An implementation's conformance level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ConformanceLevel {
    /// Core, and every judged SHOULD entry passes.
    #[serde(rename = "full")]
    Full,
    /// Every judged MUST entry passes, none inconclusive or in error.
    #[serde(rename = "core")]
    Core,
    /// A judged MUST entry does not pass.
    #[serde(rename = "not compliant")]
    NotCompliant,
    /// Nothing to award a level on: no MUST entry judged, or one inconclusive or in error.
    #[serde(rename = "not scored")]
    NotScored,
}

impl ConformanceLevel {
    /// The level's name as the page, the JSON and the badge show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Core => "core",
            Self::NotCompliant => "not compliant",
            Self::NotScored => "not scored",
        }
    }

    /// The badge colour (shields' names: brightgreen, green, red, lightgrey).
    pub fn colour(self) -> &'static str {
        match self {
            Self::Full => "#4c1",
            Self::Core => "#97ca00",
            Self::NotCompliant => "#e05d44",
            Self::NotScored => "#9f9f9f",
        }
    }
}

/// One row of the levels table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LevelDef {
    /// The level.
    pub level: ConformanceLevel,
    /// When it is given, in the order the rules are tried.
    pub rule: &'static str,
}

/// The levels, in the order [`score`] tries them: the first whose rule holds is the level.
pub const LEVELS: [LevelDef; 4] = [
    LevelDef {
        level: ConformanceLevel::NotCompliant,
        rule: "a MUST entry is judged fail or warn; the first such check (in the matrix's row order) is named",
    },
    LevelDef {
        level: ConformanceLevel::NotScored,
        rule: "no MUST entry is judged (pass, fail or warn), or a MUST entry is inconclusive or in error (the first such check is named): no level is awarded on what was not observed",
    },
    LevelDef {
        level: ConformanceLevel::Full,
        rule: "every judged MUST entry passes, at least one SHOULD entry is judged, every judged SHOULD entry passes, and no SHOULD entry is inconclusive or in error",
    },
    LevelDef {
        level: ConformanceLevel::Core,
        rule: "every judged MUST entry passes (at least one judged, none inconclusive or in error), and the SHOULD entries do not reach full: the first SHOULD check not passing, or why, is named",
    },
];

/// An implementation's level, why, and the tallies it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Score {
    /// The level.
    pub level: ConformanceLevel,
    /// Why, in one sentence.
    pub reason: String,
    /// The first check (row order) whose entry decided a lower level: the failing MUST of
    /// "not compliant", the unobserved MUST of "not scored", the SHOULD not passing (or not
    /// observed) that keeps an implementation at "core".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// MUST entries by verdict.
    pub must: Counts,
    /// SHOULD entries by verdict.
    pub should: Counts,
    /// MAY entries by verdict (never used for the level; informational entries are in none).
    pub may: Counts,
    /// Entries skipped at a graded level (not counted).
    pub skipped: usize,
    /// Claimed capabilities never seen on the wire: their entries are left out of the level.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub claimed_not_seen: Vec<String>,
}

/// Entries judged: pass, fail (baselined or not) or warn.
pub fn judged(c: &Counts) -> usize {
    c.pass + c.fail + c.baselined + c.warn
}

fn not_passing(c: &Counts) -> usize {
    c.fail + c.baselined + c.warn
}

fn unobserved(c: &Counts) -> usize {
    c.inconclusive + c.error
}

fn is_breach(c: &CheckResult) -> bool {
    matches!(c.verdict, Verdict::Fail | Verdict::Warn)
}

fn is_unobserved(c: &CheckResult) -> bool {
    matches!(c.verdict, Verdict::Inconclusive | Verdict::Error)
}

/// The level of one implementation from its entries, given in the matrix's row order (the
/// first failing check named is the first in that order).
pub fn score<'a>(entries: impl IntoIterator<Item = &'a CheckResult>) -> Score {
    let (mut must, mut should, mut may) = (Counts::default(), Counts::default(), Counts::default());
    let (mut first_must, mut first_must_unobserved) = (None, None);
    let (mut first_should, mut first_should_unobserved) = (None, None);
    let mut skipped = 0;
    // Information is never graded: it is in none of the counts.
    for c in entries.into_iter().filter(|c| c.level != Level::Info) {
        if c.verdict == Verdict::Skip {
            skipped += 1;
        }
        match c.level {
            Level::Must => {
                must.add(c);
                if is_breach(c) && first_must.is_none() {
                    first_must = Some(c);
                }
                if is_unobserved(c) && first_must_unobserved.is_none() {
                    first_must_unobserved = Some(c);
                }
            }
            Level::Should => {
                should.add(c);
                if is_breach(c) && first_should.is_none() {
                    first_should = Some(c);
                }
                if is_unobserved(c) && first_should_unobserved.is_none() {
                    first_should_unobserved = Some(c);
                }
            }
            Level::May => may.add(c),
            Level::Info => {}
        }
    }
    let mut s = Score {
        level: ConformanceLevel::NotScored,
        reason: String::new(),
        decided_by: None,
        must,
        should,
        may,
        skipped,
        claimed_not_seen: Vec::new(),
    };
    if let Some(c) = first_must {
        let more = not_passing(&must) - 1;
        s.level = ConformanceLevel::NotCompliant;
        s.reason = format!(
            "MUST {} ({}) is {}{}",
            c.id,
            c.title,
            c.verdict.as_str(),
            if more > 0 {
                format!("; {more} more MUST entr{} not passing", plural_y(more))
            } else {
                String::new()
            }
        );
        s.decided_by = Some(c.id.clone());
    } else if judged(&must) == 0 {
        s.reason = format!(
            "no MUST entry judged ({} MUST entr{} skipped)",
            must.skip,
            plural_y(must.skip)
        );
    } else if let Some(c) = first_must_unobserved {
        s.reason = format!(
            "MUST {} ({}) is {} ({} MUST entr{} inconclusive, {} in error): a level is not awarded on what was not observed",
            c.id,
            c.title,
            c.verdict.as_str(),
            must.inconclusive,
            plural_y(must.inconclusive),
            must.error
        );
        s.decided_by = Some(c.id.clone());
    } else if let Some(c) = first_should {
        s.level = ConformanceLevel::Core;
        s.reason = format!(
            "every judged MUST entry passes ({}); SHOULD {} ({}) is {} ({} SHOULD entr{} not passing, {} more inconclusive or in error)",
            must.pass,
            c.id,
            c.title,
            c.verdict.as_str(),
            not_passing(&should),
            plural_y(not_passing(&should)),
            unobserved(&should)
        );
        s.decided_by = Some(c.id.clone());
    } else if let Some(c) = first_should_unobserved {
        s.level = ConformanceLevel::Core;
        s.reason = format!(
            "every judged MUST entry passes ({}); {} SHOULD entr{} inconclusive or in error, the first {}",
            must.pass,
            unobserved(&should),
            plural_y(unobserved(&should)),
            c.id
        );
        s.decided_by = Some(c.id.clone());
    } else if judged(&should) == 0 {
        s.level = ConformanceLevel::Core;
        s.reason = format!(
            "every judged MUST entry passes ({}); no SHOULD entry judged",
            must.pass
        );
    } else {
        s.level = ConformanceLevel::Full;
        s.reason = format!(
            "every judged MUST entry ({}) and SHOULD entry ({}) passes",
            must.pass, should.pass
        );
    }
    s
}

/// What seed 000 says every Pallas exposes: "a **registry endpoint** for agent discovery, a
/// **`get_health` MCP tool** on each agent …, and **progress notifications**".
pub const PALLAS_INTERFACES: [Capability; 3] = [
    Capability::Registry,
    Capability::Health,
    Capability::PallasProgress,
];

/// Each check ID's place in the catalogue: the matrix's row order.
pub fn catalogue_order() -> std::collections::BTreeMap<&'static str, usize> {
    crate::rules::book()
        .map(|b| {
            b.checks
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id.as_str(), i))
                .collect()
        })
        .unwrap_or_default()
}

/// The levels of one report's entries, as the matrix awards them: the entries in the matrix's
/// row order (the catalogue's order of checks, then the report's order), the generic level
/// ([`score`]) over the checks every bridge answers, the Pallas level ([`score_pallas`]) over
/// the Pallas-only checks. The one source of a level: the matrix, the JSON report and the
/// Markdown headline all read it.
pub fn report_levels<'a>(
    entries: impl IntoIterator<Item = &'a CheckResult>,
    not_seen: &[Capability],
) -> (Score, Score) {
    let catalogue = catalogue_order();
    // A capability claimed and never seen on the wire carries no level: its entries are left
    // out (what passed there rests on a claim the implementation never showed).
    let mut in_row_order: Vec<&CheckResult> = entries
        .into_iter()
        // A scenario premise gates what follows and judges no rule.
        .filter(|c| !c.premise)
        .filter(|c| {
            !crate::catalog::get(&c.id)
                .and_then(|d| d.capability)
                .is_some_and(|cap| not_seen.contains(&cap))
        })
        .collect();
    in_row_order.sort_by_key(|c| {
        (
            catalogue.get(c.id.as_str()).copied().unwrap_or(usize::MAX),
            c.id.clone(),
        )
    });
    let (pallas_only, generic): (Vec<&CheckResult>, Vec<&CheckResult>) =
        in_row_order.into_iter().partition(|c| {
            crate::catalog::get(&c.id).is_some_and(|d| d.scale == crate::rules::Scale::Pallas)
        });
    let names: Vec<String> = not_seen.iter().map(|c| c.as_str().to_owned()).collect();
    let (mut generic, mut pallas) = (score(generic), score_pallas(pallas_only));
    for s in [&mut generic, &mut pallas] {
        if !names.is_empty() {
            s.reason = format!(
                "{} (the entries of {}, claimed and never seen on the wire, are left out)",
                s.reason,
                names.join(", ")
            );
        }
        s.claimed_not_seen.clone_from(&names);
    }
    (generic, pallas)
}

/// The scope a level rests on: of the entries the target's claims reach (every entry not
/// skipped, premises aside), how many were judged on an observation (a pass with its witness,
/// a fail or a warn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// Entries judged on an observation.
    pub judged: usize,
    /// Entries the claims reach.
    pub reached: usize,
}

/// The [`Scope`] of a report's entries.
pub fn scope<'a>(entries: impl IntoIterator<Item = &'a CheckResult>) -> Scope {
    let mut s = Scope {
        judged: 0,
        reached: 0,
    };
    for c in entries {
        if c.verdict == Verdict::Skip || c.premise || c.level == Level::Info {
            continue;
        }
        s.reached += 1;
        if matches!(c.verdict, Verdict::Fail | Verdict::Warn)
            || (c.verdict == Verdict::Pass && !c.observed.is_empty())
        {
            s.judged += 1;
        }
    }
    s
}

/// The Pallas level: [`score`] over the entries of the Pallas-only checks. A report on which
/// one of the interfaces seed 000 says a Pallas exposes ([`PALLAS_INTERFACES`]) was never judged
/// (every entry of its checks skipped: the profile does not claim it) is not scored, and says
/// which: a level on this scale is not awarded to a part of a Pallas.
pub fn score_pallas<'a>(entries: impl IntoIterator<Item = &'a CheckResult>) -> Score {
    let entries: Vec<&CheckResult> = entries.into_iter().collect();
    let mut s = score(entries.iter().copied());
    // A bridge that claims no Pallas-only capability is no Pallas, whatever it answered to the
    // checks that run on every bridge but count on this scale (`scale: pallas`).
    let claims_pallas = entries.iter().any(|c| {
        c.verdict != Verdict::Skip
            && crate::catalog::get(&c.id)
                .and_then(|d| d.capability)
                .is_some_and(Capability::is_pallas_only)
    });
    if !claims_pallas
        || judged(&s.must) + judged(&s.should) + unobserved(&s.must) + unobserved(&s.should) == 0
    {
        s.level = ConformanceLevel::NotScored;
        s.decided_by = None;
        s.reason = format!(
            "not scored as a Pallas: no entry of a Pallas-only capability was judged on this report ({} skipped: the profile does not claim the capability, or no such entry ran)",
            s.skipped
        );
        return s;
    }
    let missing: Vec<&str> = PALLAS_INTERFACES
        .into_iter()
        .filter(|cap| {
            !entries.iter().any(|c| {
                c.verdict != Verdict::Skip
                    && crate::catalog::get(&c.id).and_then(|d| d.capability) == Some(*cap)
            })
        })
        .map(Capability::as_str)
        .collect();
    if !missing.is_empty() && s.level != ConformanceLevel::NotCompliant {
        s.level = ConformanceLevel::NotScored;
        s.decided_by = None;
        s.reason = format!(
            "no entry of `{}` was judged on this report (the profile does not claim it, or no such entry ran); seed 000 says a Pallas exposes a registry endpoint, a `get_health` tool on each agent and progress notifications",
            missing.join("`, `")
        );
    }
    s
}

fn plural_y(n: usize) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, level: Level, verdict: Verdict) -> CheckResult {
        CheckResult {
            id: id.into(),
            level,
            refs: Vec::new(),
            quote: None,
            rule: None,
            title: format!("{id} title"),
            verdict,
            reason: String::new(),
            evidence: Vec::new(),
            observed: Vec::new(),
            premise: false,
            transcript: Vec::new(),
            location: String::new(),
            mode: None,
            baselined: false,
        }
    }

    fn level_of(entries: &[CheckResult]) -> (ConformanceLevel, Option<String>) {
        let s = score(entries);
        (s.level, s.decided_by)
    }

    use Level::{May, Must, Should};
    use Verdict::{Error, Fail, Inconclusive, Info, Pass, Skip, Warn};

    #[test]
    fn the_pallas_scale_is_not_scored_on_a_bridge_that_claims_no_pallas_capability() {
        let skipped = [
            entry("REG-001", Level::Must, Verdict::Skip),
            entry("HEALTH-001", Level::Should, Verdict::Skip),
        ];
        let s = score_pallas(&skipped);
        assert_eq!(s.level, ConformanceLevel::NotScored);
        assert!(
            s.reason.starts_with("not scored as a Pallas"),
            "{}",
            s.reason
        );
        assert!(s.reason.contains("(2 skipped"), "{}", s.reason);
        // Every interface seed 000 says a Pallas exposes judged: scored.
        let judged = [
            entry("REG-001", Level::Must, Verdict::Pass),
            entry("HEALTH-001", Level::Must, Verdict::Pass),
            entry("PROG-006", Level::Should, Verdict::Warn),
        ];
        let s = score_pallas(&judged);
        assert_eq!(s.level, ConformanceLevel::Core);
        // One of them never judged (its checks skipped): a part of a Pallas is not scored,
        // and the reason names what is missing.
        let part = [
            entry("REG-001", Level::Must, Verdict::Pass),
            entry("HEALTH-001", Level::Should, Verdict::Skip),
            entry("PROG-006", Level::Should, Verdict::Pass),
        ];
        let s = score_pallas(&part);
        assert_eq!(s.level, ConformanceLevel::NotScored);
        assert!(s.reason.contains("`health`"), "{}", s.reason);
        assert!(!s.reason.contains("`registry`"), "{}", s.reason);
        // A failing MUST is reported as such all the same.
        let failing = [entry("REG-001", Level::Must, Verdict::Fail)];
        assert_eq!(score_pallas(&failing).level, ConformanceLevel::NotCompliant);
        let inconclusive = [entry("REG-001", Level::Must, Verdict::Inconclusive)];
        let s = score_pallas(&inconclusive);
        assert_eq!(s.level, ConformanceLevel::NotScored);
        assert!(
            !s.reason.starts_with("not scored as a Pallas"),
            "{}",
            s.reason
        );
    }

    #[test]
    fn full_needs_judged_must_and_should_entries_all_passing() {
        let e = [entry("A-1", Must, Pass), entry("A-2", Should, Pass)];
        assert_eq!(level_of(&e), (ConformanceLevel::Full, None));
        let e = [entry("A-1", Must, Pass)];
        assert_eq!(level_of(&e), (ConformanceLevel::Core, None));
        assert_eq!(
            score(&e).reason,
            "every judged MUST entry passes (1); no SHOULD entry judged"
        );
    }

    #[test]
    fn a_warned_should_keeps_core_and_names_the_check() {
        let e = [
            entry("A-1", Must, Pass),
            entry("A-2", Should, Pass),
            entry("A-3", Should, Warn),
        ];
        assert_eq!(
            level_of(&e),
            (ConformanceLevel::Core, Some("A-3".to_owned()))
        );
        let e = [entry("A-1", Must, Pass), entry("A-2", Should, Inconclusive)];
        assert_eq!(
            level_of(&e),
            (ConformanceLevel::Core, Some("A-2".to_owned()))
        );
    }

    #[test]
    fn the_first_failing_must_is_named_before_anything_unobserved() {
        let e = [
            entry("A-1", Must, Inconclusive),
            entry("A-2", Must, Fail),
            entry("A-3", Must, Fail),
        ];
        let s = score(&e);
        assert_eq!(s.level, ConformanceLevel::NotCompliant);
        assert_eq!(s.decided_by.as_deref(), Some("A-2"));
        assert_eq!(
            s.reason,
            "MUST A-2 (A-2 title) is fail; 1 more MUST entry not passing"
        );
    }

    #[test]
    fn nothing_judged_or_something_unobserved_at_must_is_not_scored() {
        let e = [entry("A-1", Must, Skip), entry("A-2", Should, Pass)];
        let s = score(&e);
        assert_eq!(s.level, ConformanceLevel::NotScored);
        assert_eq!(s.reason, "no MUST entry judged (1 MUST entry skipped)");
        assert_eq!(s.skipped, 1);
        assert_eq!(level_of(&[]).0, ConformanceLevel::NotScored);
        let e = [entry("A-1", Must, Pass), entry("A-2", Must, Error)];
        let s = score(&e);
        assert_eq!(s.level, ConformanceLevel::NotScored);
        assert_eq!(s.decided_by.as_deref(), Some("A-2"));
        assert!(
            s.reason.contains("0 MUST entries inconclusive, 1 in error"),
            "{}",
            s.reason
        );
    }

    #[test]
    fn may_and_skipped_entries_never_lower_a_level() {
        let e = [
            entry("A-1", Must, Pass),
            entry("A-2", Should, Pass),
            entry("A-3", May, Info),
            entry("A-4", May, Inconclusive),
            entry("A-5", Level::Info, Error),
            entry("A-6", Must, Skip),
            entry("A-7", Should, Skip),
        ];
        let s = score(&e);
        assert_eq!(s.level, ConformanceLevel::Full);
        assert_eq!(s.skipped, 2);
        assert_eq!(s.may.inconclusive, 1);
    }

    #[test]
    fn the_table_lists_every_level_once() {
        let all = [
            ConformanceLevel::Full,
            ConformanceLevel::Core,
            ConformanceLevel::NotCompliant,
            ConformanceLevel::NotScored,
        ];
        for l in all {
            assert_eq!(LEVELS.iter().filter(|d| d.level == l).count(), 1, "{l:?}");
        }
    }
}
