//! Capability honesty: what a profile claims beside what the implementation declared on the wire
//! (the report's `claims` and `declared`, [`crate::runner::Declared`]) and what its verdicts
//! show.
//!
//! Three claims have a sign the run observes on any bridge:
//!
//! | claim | seen as |
//! |---|---|
//! | `sessions` | an `Mcp-Session-Id` on the answer to a 2025-11-25 `initialize` |
//! | `progress` | a `notifications/progress` with the token of a call that carried a `progressToken`, on the call's own response stream before its final result (where both eras of MCP put it; the kit's calls are never task-augmented, and a call whose stream it dropped is not counted) |
//! | `history` | `prompts` in the `initialize` (or `server/discover`) result's `capabilities` (MCP: a server that offers prompts declares it); a connection with neither result gives no occasion; checked only where claimed: `prompts` alone is no sign of a history prompt |
//!
//! The first that holds is a claim's standing: `claimed, never seen in this run` (the run had
//! occasions to see the sign and never did, for progress: no progress with any call's token, on
//! any stream, at any time; the profile's claim is not shown, which is no breach of MCP, where a
//! server may send no progress and issue no session); `claimed, seen only off the call's stream`
//! (progress for the calls' tokens came only on another stream, against a SHOULD of 2025-11-25
//! and a MUST of 2026-07-28, or after the answer, against "Progress notifications MUST stop after
//! completion"); `claimed, a MUST fails` (a MUST entry of its checks fails; the checks are named, each
//! once); `claimed, nothing judged` (no entry of its checks passed, failed or warned); `claimed, no
//! MUST entry judged` (entries judged, none at MUST); `claimed, no MUST fails`. What the
//! implementation showed without a claim is `shown, not tested`: sessions or progress seen on an
//! unclaimed capability, and each server capability of the `initialize` or `server/discover`
//! results no claim covers (`server capability: logging`, `resources`, `completions`, `tasks`,
//! each named member of `experimental` and `extensions`, any other key, `prompts` where `history`
//! is not claimed; never `tools`, which every bridge declares and every scenario uses). Reports
//! written before `claims` and `declared` give no row.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::checks::{CheckResult, Verdict};
use crate::runner::Declared;
use crate::scenario::Level;
use crate::vocab::Capability;

/// What the wire showed of one capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Declaration {
    /// The implementation showed it.
    Declared,
    /// The run had occasions to see it and never did.
    NotSeen,
    /// Seen only where MCP does not put it (progress: on another stream, or after the answer).
    SeenElsewhere,
    /// Nothing the run did would have shown it.
    NotObserved,
    /// No declaration on the wire stands for it: only its checks tell.
    NotDeclarable,
}

/// How one capability stands on one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Claimed, not contradicted by the wire, and no MUST of its checks fails.
    Claimed,
    /// Claimed, and no entry of its checks was judged (none ran, or every one was skipped).
    ClaimedNotJudged,
    /// Claimed, entries of its checks judged, none of them at MUST.
    ClaimedNoMustJudged,
    /// Claimed, and its sign seen only where MCP does not put it.
    ClaimedSeenElsewhere,
    /// Claimed, and a MUST entry of its checks fails.
    ClaimedMustFails,
    /// Claimed, and never seen on the wire though the run had occasions to see it.
    ClaimedNotSeen,
    /// Shown on the wire and not claimed: its checks were skipped, or no claim covers it.
    NotTested,
}

impl Standing {
    /// What the page shows.
    pub fn label(self) -> &'static str {
        match self {
            Self::Claimed => "claimed, no MUST fails",
            Self::ClaimedNotJudged => "claimed, nothing judged",
            Self::ClaimedNoMustJudged => "claimed, no MUST entry judged",
            Self::ClaimedSeenElsewhere => "claimed, seen only off the call's stream",
            Self::ClaimedMustFails => "claimed, a MUST fails",
            Self::ClaimedNotSeen => "claimed, never seen in this run",
            Self::NotTested => "shown, not tested",
        }
    }
}

/// One capability of one implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapabilityRow {
    /// The profile's name of the capability, or `server capability: KEY` for a server capability
    /// no claim covers.
    pub capability: String,
    /// The profile claims it.
    pub claimed: bool,
    /// What the wire showed.
    pub declaration: Declaration,
    /// What was seen, in words ("12 of 12 connections got an `Mcp-Session-Id`").
    pub seen: String,
    /// MUST entries of its checks that were judged (pass, fail or warn).
    pub musts_judged: usize,
    /// Of those, how many failed.
    pub musts_failed: usize,
    /// Entries of its checks judged at any level.
    pub entries_judged: usize,
    /// The checks with a failing MUST entry, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_checks: Vec<String>,
    /// The standing.
    pub standing: Standing,
}

/// The judged entries of one capability's checks.
#[derive(Default)]
struct Judged {
    entries: usize,
    musts: usize,
    musts_failed: usize,
    failed_checks: Vec<String>,
}

/// The claimed capabilities the run had occasions to see on the wire and never saw
/// ([`Declaration::NotSeen`]): "claimed, never seen in this run". No level rests on their
/// entries ([`super::levels::report_levels`]).
pub fn claimed_not_seen(claims: Option<&[String]>, declared: Option<&Declared>) -> Vec<Capability> {
    let (Some(claims), Some(d)) = (claims, declared) else {
        return Vec::new();
    };
    Capability::ALL
        .into_iter()
        .filter(|c| claims.iter().any(|n| n == c.as_str()))
        .filter(|c| declaration_of(c.as_str(), d).0 == Declaration::NotSeen)
        .collect()
}

/// The sign of a claim the run observes, and what was seen.
fn declaration_of(capability: &str, d: &Declared) -> (Declaration, String) {
    let of = |n: usize, total: usize, what: &str| {
        if total == 0 {
            (Declaration::NotObserved, format!("no {what} was observed"))
        } else if n == 0 {
            (Declaration::NotSeen, format!("0 of {total} {what}"))
        } else {
            (Declaration::Declared, format!("{n} of {total} {what}"))
        }
    };
    match capability {
        "sessions" => of(
            d.session_ids,
            d.connections,
            "2025-11-25 connections got an `Mcp-Session-Id`",
        ),
        "progress" => {
            let (declaration, mut seen) = of(
                d.calls_with_progress,
                d.calls_with_token,
                "answered calls with a `progressToken` got a `notifications/progress` with it on their own stream before their answer",
            );
            if d.calls_with_token == 0 {
                return (declaration, seen);
            }
            seen.push_str(&format!(
                "; {} had it only off their stream or after their answer",
                d.calls_with_progress_elsewhere
            ));
            match declaration {
                Declaration::NotSeen if d.calls_with_progress_elsewhere > 0 => {
                    (Declaration::SeenElsewhere, seen)
                }
                other => (other, seen),
            }
        }
        "history" => of(
            d.capabilities.get("prompts").copied().unwrap_or(0),
            d.initialized,
            "`initialize`/`server/discover` results declared `prompts` (needed for a history prompt, no sign of one: the history checks tell the rest)",
        ),
        _ => (Declaration::NotDeclarable, String::new()),
    }
}

/// The rows of one report: every claimed capability, every unclaimed one whose sign the wire
/// showed, and every other server capability shown. `None` when the report has neither
/// `claims` nor `declared` (written before them).
pub fn rows(
    claims: Option<&[String]>,
    declared: Option<&Declared>,
    checks: &[&CheckResult],
) -> Option<Vec<CapabilityRow>> {
    if claims.is_none() && declared.is_none() {
        return None;
    }
    let empty = Declared::default();
    let d = declared.unwrap_or(&empty);
    let claims = claims.unwrap_or_default();
    let mut judged: BTreeMap<&str, Judged> = BTreeMap::new();
    for c in checks {
        let Some(cap) = crate::catalog::get(&c.id).and_then(|def| def.capability) else {
            continue;
        };
        if !matches!(c.verdict, Verdict::Pass | Verdict::Fail | Verdict::Warn) {
            continue;
        }
        let j = judged.entry(cap.as_str()).or_default();
        j.entries += 1;
        if c.level == Level::Must {
            j.musts += 1;
            if c.verdict == Verdict::Fail {
                j.musts_failed += 1;
                if !j.failed_checks.contains(&c.id) {
                    j.failed_checks.push(c.id.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut names: Vec<&str> = claims.iter().map(String::as_str).collect();
    for name in ["sessions", "progress", "history"] {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let history_claimed = claims.iter().any(|c| c == "history");
    for name in names {
        let claimed = claims.iter().any(|c| c == name);
        // `prompts` is needed for a history prompt, not a sign of one: an unclaimed `history`
        // gets no row (its `prompts` shows as an `initialize` key below).
        if name == "history" && !claimed {
            continue;
        }
        let (declaration, seen) = declaration_of(name, d);
        let j = judged.remove(name).unwrap_or_default();
        let standing = match (claimed, declaration) {
            (true, Declaration::NotSeen) => Standing::ClaimedNotSeen,
            (true, Declaration::SeenElsewhere) => Standing::ClaimedSeenElsewhere,
            (true, _) if j.musts_failed > 0 => Standing::ClaimedMustFails,
            (true, _) if j.entries == 0 => Standing::ClaimedNotJudged,
            (true, _) if j.musts == 0 => Standing::ClaimedNoMustJudged,
            (true, _) => Standing::Claimed,
            (false, Declaration::Declared) => Standing::NotTested,
            (false, _) => continue,
        };
        out.push(CapabilityRow {
            capability: name.to_owned(),
            claimed,
            declaration,
            seen,
            musts_judged: j.musts,
            musts_failed: j.musts_failed,
            entries_judged: j.entries,
            failed_checks: j.failed_checks,
            standing,
        });
    }
    for (key, n) in &d.capabilities {
        if key == "tools" || (key == "prompts" && history_claimed) {
            continue;
        }
        out.push(CapabilityRow {
            capability: format!("server capability: {key}"),
            claimed: false,
            declaration: Declaration::Declared,
            seen: format!(
                "{n} of {} `initialize`/`server/discover` results declared `{key}`; no claim of the kit covers it",
                d.initialized
            ),
            musts_judged: 0,
            musts_failed: 0,
            entries_judged: 0,
            failed_checks: Vec::new(),
            standing: Standing::NotTested,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Declared {
        Declared {
            initialized: 4,
            capabilities: [("tools".to_owned(), 4), ("logging".to_owned(), 4)].into(),
            connections: 4,
            session_ids: 4,
            calls_with_token: 3,
            calls_with_progress: 0,
            calls_with_progress_elsewhere: 0,
            tools: Default::default(),
        }
    }

    fn row<'a>(rows: &'a [CapabilityRow], name: &str) -> Option<&'a CapabilityRow> {
        rows.iter().find(|r| r.capability == name)
    }

    /// Progress claimed, three calls with a token, no notification: its entries carry no level,
    /// and a pass among them no longer lifts it.
    #[test]
    fn a_claim_never_seen_carries_no_level() {
        let claims = [
            "progress".to_owned(),
            "sessions".to_owned(),
            "health".to_owned(),
        ];
        let not_seen = claimed_not_seen(Some(&claims), Some(&declared()));
        assert_eq!(not_seen, vec![Capability::Progress]);
        let entry = |id: &str, verdict| CheckResult {
            id: id.into(),
            level: Level::Must,
            refs: Vec::new(),
            quote: None,
            rule: None,
            title: id.into(),
            verdict,
            reason: String::new(),
            evidence: Vec::new(),
            observed: vec![crate::checks::Witness::new("s", "x")],
            premise: false,
            transcript: Vec::new(),
            location: String::new(),
            mode: None,
            baselined: false,
        };
        let entries = [
            entry("PROG-002", Verdict::Pass),
            entry("MCP-002", Verdict::Pass),
        ];
        let (with, _) = super::super::levels::report_levels(&entries, &[]);
        let (without, _) = super::super::levels::report_levels(&entries, &not_seen);
        assert_eq!(with.must.pass, 2);
        assert_eq!(without.must.pass, 1, "{without:?}");
        assert_eq!(without.claimed_not_seen, vec!["progress".to_owned()]);
        assert!(
            without.reason.contains("claimed and never seen"),
            "{}",
            without.reason
        );
    }

    #[test]
    fn a_claim_never_seen_says_so_and_what_was_shown_without_a_claim_is_not_tested() {
        let claims = ["progress".to_owned(), "bearer".to_owned()];
        let rows = rows(Some(&claims), Some(&declared()), &[]).expect("rows");
        let progress = row(&rows, "progress").expect("progress row");
        assert_eq!(progress.standing, Standing::ClaimedNotSeen);
        assert_eq!(
            progress.seen,
            "0 of 3 answered calls with a `progressToken` got a `notifications/progress` with it on their own stream before their answer; 0 had it only off their stream or after their answer"
        );
        let sessions = row(&rows, "sessions").expect("sessions row");
        assert_eq!(sessions.standing, Standing::NotTested);
        assert!(!sessions.claimed);
        let bearer = row(&rows, "bearer").expect("bearer row");
        assert_eq!(
            (bearer.standing, bearer.declaration),
            (Standing::ClaimedNotJudged, Declaration::NotDeclarable)
        );
        let logging = row(&rows, "server capability: logging").expect("logging row");
        assert_eq!(logging.standing, Standing::NotTested);
        assert!(row(&rows, "server capability: tools").is_none());
        // history: not claimed: no row, whatever `prompts` says.
        assert!(row(&rows, "history").is_none());
        // ... and a `prompts` it declares shows as a server capability, untested.
        let mut with_prompts = declared();
        with_prompts.capabilities.insert("prompts".to_owned(), 4);
        let rows = super::rows(Some(&claims), Some(&with_prompts), &[]).expect("rows");
        let prompts = row(&rows, "server capability: prompts").expect("prompts row");
        assert_eq!(prompts.standing, Standing::NotTested);
    }

    #[test]
    fn a_claim_whose_must_fails_says_so_and_a_report_without_the_fields_gives_no_rows() {
        let claims = ["sessions".to_owned()];
        let mut failed = CheckResult::judged(
            crate::checks::Subject::harness("t".into(), "f:1".into()),
            crate::checks::Outcome::Error("x".into()),
            &|_| true,
            crate::checks::Grading::default(),
            &crate::redact::Redactor::default(),
        );
        failed.id = "MCP-003".into();
        failed.level = Level::Must;
        failed.verdict = Verdict::Fail;
        let rows = rows(Some(&claims), Some(&declared()), &[&failed]).expect("rows");
        let sessions = row(&rows, "sessions").expect("sessions row");
        assert_eq!(sessions.standing, Standing::ClaimedMustFails);
        assert_eq!((sessions.musts_judged, sessions.musts_failed), (1, 1));
        assert_eq!(sessions.failed_checks, ["MCP-003"]);
        let mut passed = failed.clone();
        passed.verdict = Verdict::Pass;
        let rows = super::rows(Some(&claims), Some(&declared()), &[&passed]).expect("rows");
        let sessions = row(&rows, "sessions").expect("sessions row");
        assert_eq!(sessions.standing, Standing::Claimed);
        assert!(super::rows(None, None, &[]).is_none());
        // Progress only on another stream or after the answer: seen, but not where MCP puts it.
        let elsewhere = Declared {
            calls_with_progress_elsewhere: 2,
            ..declared()
        };
        let claims = ["progress".to_owned()];
        let rows = super::rows(Some(&claims), Some(&elsewhere), &[]).expect("rows");
        let progress = row(&rows, "progress").expect("progress row");
        assert_eq!(progress.standing, Standing::ClaimedSeenElsewhere);
        // Judged entries, none at MUST.
        let mut should = passed.clone();
        should.level = Level::Should;
        let claims = ["sessions".to_owned()];
        let rows = super::rows(Some(&claims), Some(&declared()), &[&should]).expect("rows");
        let sessions = row(&rows, "sessions").expect("sessions row");
        assert_eq!(sessions.standing, Standing::ClaimedNoMustJudged);
    }
}
