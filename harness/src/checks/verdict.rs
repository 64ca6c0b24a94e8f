//! Verdicts: what an evaluator concluded ([`Outcome`]), graded by the level of the rule it
//! enforces into a [`CheckResult`]. [`CheckResult::judged`] is the one place a verdict is made.

use serde::{Deserialize, Serialize};

use crate::catalog::CheckDef;
use crate::client::evidence::{EVIDENCE_MAX, bounded_text};
use crate::redact::Redactor;
use crate::rules::CheckRule;
use crate::scenario::{Capability, Level};

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The rule held (for a MAY: implemented).
    Pass,
    /// A MUST was broken.
    Fail,
    /// A SHOULD was broken (or a MUST under `--lenient`).
    Warn,
    /// A MAY the target does not implement: information, never a failure or a warning.
    Info,
    /// What the check needs was not observed (no registry, no tool call, no progress…), so
    /// nothing can be concluded either way.
    Inconclusive,
    /// Not applicable to the target (always with a reason).
    Skip,
    /// The harness could not observe what the check needs (a step failed to run or timed
    /// out).
    Error,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Self; 7] = [
        Self::Pass,
        Self::Fail,
        Self::Warn,
        Self::Info,
        Self::Inconclusive,
        Self::Skip,
        Self::Error,
    ];

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Inconclusive => "inconclusive",
            Self::Skip => "skip",
            Self::Error => "error",
        }
    }
}

/// One piece of evidence: what was expected, what was seen, where.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What this is about (a step, a message, a journal entry).
    pub what: String,
    /// What the rule wants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    /// JSON path inside the observed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    fn redacted(self, r: &Redactor) -> Self {
        Self {
            what: r.text(&self.what),
            expected: self.expected.map(|x| r.text(&x)),
            seen: self.seen.map(|x| r.text(&x)),
            path: self.path,
        }
    }
}

/// What a kept rule was seen to hold on: the observed value that could have broken it, and
/// where it was seen. A pass carries at least one; a pass that observed nothing is no pass
/// ([`CheckResult::judged`] makes it an `error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// Where it was seen (a step, a message, a journal entry, a log).
    pub what: String,
    /// The value observed there, as it was seen (bounded, redacted in reports).
    pub seen: String,
}

impl Witness {
    /// `seen` observed at `what`.
    pub fn new(what: impl Into<String>, seen: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            seen: seen.into(),
        }
    }

    /// Whether it names nothing that was seen.
    fn is_empty(&self) -> bool {
        self.seen.trim().is_empty()
    }
}

/// The most witnesses a result keeps; the count of the others is stated in the last one.
pub const WITNESSES_MAX: usize = 3;

/// The longest a witness's `seen` is kept, with its full size stated.
pub const WITNESS_SEEN_MAX: usize = 240;

/// What an evaluator concluded, before levels and capabilities are applied: kept with its
/// witnesses, broken with evidence, not applicable (the observed shape cannot carry the clause,
/// or its situation did not occur), not observed (inconclusive) or not judged (an error).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Kept: the rule held on what the witnesses show, each an observed value that could have
    /// broken it.
    Kept(Vec<Witness>),
    /// Broken: a clause of the check's first rule (graded at that rule's level).
    Fail(String, Vec<Evidence>),
    /// Broken: a clause of the check's rule `rule`, graded at that rule's level and reported
    /// with its quote and source (a MUST rule breaks to `fail` even when the check's first
    /// rule is a SHOULD, a SHOULD rule to `warn` even when it is a MUST).
    Breaks {
        /// The ID of the rule (one of the check's) whose clause is broken.
        rule: String,
        /// Why.
        reason: String,
        /// What was expected and seen.
        evidence: Vec<Evidence>,
    },
    /// Not applicable: the observed shape cannot carry the clause (an `application/json` answer
    /// holds one message, a server that answers DELETE with 405 ends no session), or the
    /// deployment has nothing the clause speaks of. Graded `skip`, with the reason.
    NotApplicable(String),
    /// Not observed: the check's premise or situation did not occur, nothing to judge.
    Inconclusive(String),
    /// The harness could not judge.
    Error(String),
}

impl Outcome {
    /// Kept, on the value `seen` observed at `what`.
    pub fn kept(what: impl Into<String>, seen: impl Into<String>) -> Self {
        Self::Kept(vec![Witness::new(what, seen)])
    }

    /// Whether the rule was kept.
    pub fn is_kept(&self) -> bool {
        matches!(self, Self::Kept(_))
    }

    /// A break of the clause of the check's rule `rule` (see [`Outcome::Breaks`]).
    pub fn breaks(
        rule: impl Into<String>,
        reason: impl Into<String>,
        evidence: Vec<Evidence>,
    ) -> Self {
        Self::Breaks {
            rule: rule.into(),
            reason: reason.into(),
            evidence,
        }
    }

    /// The reason of a broken rule (`Fail` or `Breaks`), `None` for every other outcome.
    pub fn broken_reason(&self) -> Option<&str> {
        match self {
            Self::Fail(r, _) | Self::Breaks { reason: r, .. } => Some(r),
            _ => None,
        }
    }
}

/// Options that change verdicts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grading {
    /// A broken SHOULD fails instead of warning (MAY stays informational).
    pub strict: bool,
    /// A broken MUST warns instead of failing.
    pub lenient: bool,
    /// Every pass is judged again over perturbed copies of what it observed
    /// ([`super::selftest`]); one that survives them all is an `error` (a defect of its check).
    pub self_test: bool,
}

/// The result of one check in one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Catalog ID, or `ASSERT` for an unattributed assertion.
    pub id: String,
    /// Level.
    pub level: Level,
    /// References.
    pub refs: Vec<String>,
    /// The verbatim rule the check enforces (catalogued checks); for a non-pass verdict, the
    /// quote of the rule it breaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The ID of the rule whose clause a `fail`, `warn` or `info` breaks: `level`, `quote`
    /// and `refs` are that rule's (catalogued checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// What was checked.
    pub title: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Why (always set unless the check passed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Evidence (redacted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// For a pass: what it observed that could have broken the rule (redacted, bounded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed: Vec<Witness>,
    /// The entry is a scenario premise: what the scenario must have exercised. It gates the
    /// other entries and judges no rule, so its pass is never counted as a rule kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub premise: bool,
    /// Excerpts of the exchanges the verdict rests on (redacted), for non-pass verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<String>,
    /// `file:line` of the check entry in the scenario (empty for automatic checks).
    pub location: String,
    /// Which mode held, for checks with modes (progress).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether an expected-failures baseline listed it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

/// What a verdict is about: a catalogued check or a scenario's own assertion.
#[derive(Debug, Clone)]
pub struct Subject {
    id: String,
    level: Level,
    refs: Vec<String>,
    quote: Option<String>,
    rules: Vec<CheckRule>,
    rule: Option<String>,
    premise: Option<String>,
    pub(crate) title: String,
    capability: Option<Capability>,
    location: String,
    mode: Option<&'static str>,
}

impl Subject {
    /// A catalogued check (its level, rules and premise from the rule data).
    pub fn check(def: &CheckDef, title: Option<String>, location: String) -> Self {
        Self {
            id: def.id.clone(),
            level: def.level,
            // A source several of the check's rules share is named once.
            refs: def
                .refs
                .iter()
                .fold(Vec::new(), |mut refs: Vec<String>, r| {
                    if !refs.contains(r) {
                        refs.push(r.clone());
                    }
                    refs
                }),
            quote: Some(def.quote.clone()),
            rules: def.rule_defs.clone(),
            rule: None,
            premise: Some(def.premise.clone()),
            title: title.unwrap_or_else(|| def.title.clone()),
            capability: def.capability,
            location,
            mode: None,
        }
    }

    /// The same subject stating rule `id` of its check (an entry's `rule:`): every verdict, a pass
    /// included, shows that rule's level, quote and source. Unchanged when the check has no such
    /// rule (validation refuses that entry).
    pub fn stating(mut self, id: &str) -> Self {
        if let Some(r) = self.rules.iter().find(|r| r.id == id).cloned() {
            self.level = r.level;
            self.quote = Some(r.quote);
            self.refs = vec![r.source];
            self.rule = Some(r.id);
        }
        self
    }

    /// The same subject judged in the reading `mode` (its check's declared mode).
    pub fn in_mode(self, mode: Option<&'static str>) -> Self {
        Self { mode, ..self }
    }

    /// A scenario expectation at the level its author wrote.
    pub fn assertion(level: Level, refs: Vec<String>, title: String, location: String) -> Self {
        Self {
            id: "ASSERT".into(),
            level,
            refs,
            quote: None,
            rules: Vec::new(),
            rule: None,
            premise: None,
            title,
            capability: None,
            location,
            mode: None,
        }
    }

    /// The harness itself (a setup or step error that is no check's verdict).
    pub fn harness(title: String, location: String) -> Self {
        Self {
            id: "HARNESS".into(),
            level: Level::Must,
            refs: Vec::new(),
            quote: None,
            rules: Vec::new(),
            rule: None,
            premise: None,
            title,
            capability: None,
            location,
            mode: None,
        }
    }

    /// The check ID.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The rule a non-pass `outcome` breaks: `Breaks` names it, `Fail` breaks the first rule.
    /// `Err` when `Breaks` names a rule the check does not enforce (an evaluator's mistake).
    fn broken_rule(&self, outcome: &Outcome) -> Result<Option<CheckRule>, NotItsRule> {
        match outcome {
            Outcome::Breaks { rule, .. } => match self.rules.iter().find(|r| &r.id == rule) {
                Some(r) => Ok(Some(r.clone())),
                None => Err(NotItsRule {
                    check: self.id.clone(),
                    rule: rule.clone(),
                }),
            },
            Outcome::Fail(..) => Ok(self.rules.first().cloned()),
            _ => Ok(None),
        }
    }
}

/// An outcome that breaks a rule its check does not enforce (an evaluator's mistake).
#[derive(Debug, thiserror::Error)]
#[error("the evaluator of `{check}` names rule `{rule}`, which is not one of its rules")]
pub(crate) struct NotItsRule {
    check: String,
    rule: String,
}

impl CheckResult {
    /// A bare MUST result of check `id` (title `t`, no evidence), for unit tests.
    #[cfg(test)]
    pub(crate) fn bare(id: &str, verdict: Verdict, reason: &str, location: &str) -> Self {
        Self {
            id: id.into(),
            level: crate::vocab::Level::Must,
            refs: vec![],
            quote: None,
            rule: None,
            title: "t".into(),
            verdict,
            reason: reason.into(),
            evidence: vec![],
            observed: Vec::new(),
            premise: false,
            transcript: vec![],
            location: location.into(),
            mode: None,
            baselined: false,
        }
    }

    /// The one way a verdict is made: the outcome graded at the subject's level (skip when the
    /// target does not claim the capability), reasons and evidence redacted.
    pub fn judged(
        subject: Subject,
        outcome: Outcome,
        claims: &dyn Fn(Capability) -> bool,
        grading: Grading,
        redactor: &Redactor,
    ) -> Self {
        let mut subject = subject;
        let (verdict, reason, evidence, witnesses) = match subject.capability {
            Some(c) if !claims(c) => (
                Verdict::Skip,
                format!("the target does not claim `{}`", c.as_str()),
                Vec::new(),
                Vec::new(),
            ),
            _ => match subject.broken_rule(&outcome) {
                Err(why) => (Verdict::Error, why.to_string(), Vec::new(), Vec::new()),
                Ok(broken) => {
                    // The level, quote and source shown are those of the rule broken.
                    if let Some(r) = broken {
                        subject.level = r.level;
                        subject.quote = Some(r.quote);
                        subject.refs = vec![r.source];
                        subject.rule = Some(r.id);
                    }
                    grade(subject.level, outcome, grading)
                }
            },
        };
        let reason = match (verdict, &subject.premise) {
            (Verdict::Inconclusive, Some(p)) => format!("premise not observed ({p}): {reason}"),
            (Verdict::Info, _) if subject.level == Level::Info => {
                format!("informational (no normative keyword requires it): {reason}")
            }
            (Verdict::Info, _) => format!("not implemented (MAY): {reason}"),
            _ => reason,
        };
        if verdict == Verdict::Pass && subject.rule.is_none() {
            // A pass holds the check's rules; the first is the one its level and quote are.
            subject.rule = subject.rules.first().map(|r| r.id.clone());
        }
        let mode = subject.mode.map(str::to_owned);
        Self {
            // A pass cites the rule it held to, as a breach cites the rule it broke.
            quote: subject.quote,
            // The rule broken, held, read, or stated by the entry: named on every verdict.
            rule: subject.rule,
            id: subject.id,
            level: subject.level,
            refs: subject.refs,
            title: redactor.text(&subject.title),
            verdict,
            reason: bounded(redactor.text(&reason)),
            evidence: evidence
                .into_iter()
                .map(|e| e.redacted(redactor).bounded())
                .collect(),
            observed: shown_witnesses(witnesses, redactor),
            premise: false,
            transcript: Vec::new(),
            location: subject.location,
            mode,
            baselined: false,
        }
    }

    /// The rule a non-pass verdict cites, in one line: `id (LEVEL): "quote"` when the rule it
    /// breaks is named, else the quote alone.
    pub fn cited_rule(&self) -> Option<String> {
        let quote = self.quote.as_deref()?;
        Some(match &self.rule {
            Some(id) => format!("{id} ({}): \"{quote}\"", self.level.as_str()),
            None => format!("\"{quote}\""),
        })
    }
}

/// A reason or evidence string cut to [`EVIDENCE_MAX`] with its full size stated.
fn bounded(text: String) -> String {
    bounded_to(text, EVIDENCE_MAX)
}

impl Evidence {
    /// This evidence with every string cut to [`EVIDENCE_MAX`], its full size stated.
    pub fn bounded(self) -> Self {
        Self {
            what: bounded(self.what),
            expected: self.expected.map(bounded),
            seen: self.seen.map(bounded),
            path: self.path.map(bounded),
        }
    }
}

/// The witnesses a result shows: at most [`WITNESSES_MAX`], each redacted and bounded, the
/// last one saying how many more there were.
fn shown_witnesses(witnesses: Vec<Witness>, r: &Redactor) -> Vec<Witness> {
    let total = witnesses.len();
    let mut shown: Vec<Witness> = witnesses
        .into_iter()
        .take(WITNESSES_MAX)
        .map(|w| Witness {
            what: bounded(r.text(&w.what)),
            seen: bounded_to(r.text(&w.seen), WITNESS_SEEN_MAX),
        })
        .collect();
    if total > WITNESSES_MAX
        && let Some(last) = shown.last_mut()
    {
        last.what = format!("{} (and {} more)", last.what, total - WITNESSES_MAX);
    }
    shown
}

/// `text` cut to `max` bytes with its full size stated.
fn bounded_to(text: String, max: usize) -> String {
    if text.len() > max {
        bounded_text(&text, max)
    } else {
        text
    }
}

/// A verdict with its reason, evidence and witnesses.
type Graded = (Verdict, String, Vec<Evidence>, Vec<Witness>);

fn grade(level: Level, outcome: Outcome, g: Grading) -> Graded {
    let broken = |level: Level| match level {
        Level::Must if g.lenient => Verdict::Warn,
        Level::Must => Verdict::Fail,
        Level::Should if g.strict => Verdict::Fail,
        Level::Should => Verdict::Warn,
        Level::May | Level::Info => Verdict::Info,
    };
    match outcome {
        // Nothing observed is never a pass: a kept rule shows what could have broken it.
        Outcome::Kept(w) if w.is_empty() || w.iter().all(Witness::is_empty) => (
            Verdict::Error,
            "the evaluator kept the rule without a witness: nothing observed is never a pass"
                .into(),
            Vec::new(),
            Vec::new(),
        ),
        // An informational entry is never graded: what it saw is shown, as information.
        Outcome::Kept(w) if level == Level::Info => {
            let seen = w
                .iter()
                .find(|w| !w.is_empty())
                .map(|w| format!("held; seen at {}: {}", w.what, w.seen))
                .unwrap_or_default();
            (Verdict::Info, seen, Vec::new(), w)
        }
        Outcome::Kept(w) => (Verdict::Pass, String::new(), Vec::new(), w),
        Outcome::NotApplicable(r) => (Verdict::Skip, r, Vec::new(), Vec::new()),
        Outcome::Inconclusive(r) => (Verdict::Inconclusive, r, Vec::new(), Vec::new()),
        Outcome::Error(r) => (Verdict::Error, r, Vec::new(), Vec::new()),
        Outcome::Fail(r, e)
        | Outcome::Breaks {
            reason: r,
            evidence: e,
            ..
        } => (broken(level), r, e, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grade_a_broken_rule() {
        let fail = || Outcome::Fail("x".into(), vec![]);
        let g = Grading::default();
        assert_eq!(grade(Level::Must, fail(), g).0, Verdict::Fail);
        assert_eq!(grade(Level::Should, fail(), g).0, Verdict::Warn);
        assert_eq!(
            grade(Level::May, fail(), g).0,
            Verdict::Info,
            "MAY never warns"
        );
        let strict = Grading {
            strict: true,
            ..Grading::default()
        };
        assert_eq!(grade(Level::Should, fail(), strict).0, Verdict::Fail);
        assert_eq!(
            grade(Level::May, fail(), strict).0,
            Verdict::Info,
            "--strict leaves MAY alone"
        );
        let lenient = Grading {
            lenient: true,
            ..Grading::default()
        };
        assert_eq!(grade(Level::Must, fail(), lenient).0, Verdict::Warn);
    }

    /// A catalogued check of two rules: the first at `first`, the second at `second`.
    fn two_rule_subject(first: Level, second: Level) -> Subject {
        let rule = |id: &str, level| CheckRule {
            id: id.into(),
            level,
            quote: format!("{id} quote"),
            source: format!("{id} source"),
        };
        Subject {
            id: "X-001".into(),
            level: first,
            refs: vec!["one source".into(), "two source".into()],
            quote: Some("one quote".into()),
            rules: vec![rule("one", first), rule("two", second)],
            rule: None,
            premise: Some("p".into()),
            title: "t".into(),
            capability: None,
            location: String::new(),
            mode: None,
        }
    }

    fn judge(subject: Subject, outcome: Outcome) -> CheckResult {
        CheckResult::judged(
            subject,
            outcome,
            &|_| true,
            Grading::default(),
            &Redactor::default(),
        )
    }

    #[test]
    fn a_must_rule_broken_in_a_check_led_by_a_should_fails() {
        let r = judge(
            two_rule_subject(Level::Should, Level::Must),
            Outcome::breaks("two", "broken", vec![]),
        );
        assert_eq!(r.verdict, Verdict::Fail);
        assert_eq!(r.level, Level::Must);
        assert_eq!(r.rule.as_deref(), Some("two"));
        assert_eq!(r.quote.as_deref(), Some("two quote"));
        assert_eq!(r.refs, vec!["two source".to_owned()]);
        assert_eq!(r.cited_rule().as_deref(), Some("two (MUST): \"two quote\""));
        // The check's first rule, broken by a plain `Fail`, still warns.
        let first = judge(
            two_rule_subject(Level::Should, Level::Must),
            Outcome::Fail("broken".into(), vec![]),
        );
        assert_eq!(first.verdict, Verdict::Warn);
        assert_eq!(first.rule.as_deref(), Some("one"));
    }

    #[test]
    fn a_should_rule_broken_in_a_check_led_by_a_must_warns() {
        let r = judge(
            two_rule_subject(Level::Must, Level::Should),
            Outcome::breaks("two", "broken", vec![]),
        );
        assert_eq!(r.verdict, Verdict::Warn);
        assert_eq!(r.level, Level::Should);
        assert_eq!(r.quote.as_deref(), Some("two quote"));
        let may = judge(
            two_rule_subject(Level::Must, Level::May),
            Outcome::breaks("two", "broken", vec![]),
        );
        assert_eq!(may.verdict, Verdict::Info, "a MAY rule never warns");
        assert!(
            may.reason.starts_with("not implemented (MAY)"),
            "{}",
            may.reason
        );
        let info = judge(
            two_rule_subject(Level::Must, Level::Info),
            Outcome::breaks("two", "broken", vec![]),
        );
        assert_eq!(info.verdict, Verdict::Info, "an INFO rule never warns");
        assert!(
            info.reason
                .starts_with("informational (no normative keyword requires it)")
                && !info.reason.contains("MAY"),
            "a keywordless rule is not called a MAY: {}",
            info.reason
        );
        let pass = judge(
            two_rule_subject(Level::Must, Level::Should),
            Outcome::kept("step `s`", "HTTP 200"),
        );
        assert_eq!((pass.verdict, pass.level), (Verdict::Pass, Level::Must));
        assert_eq!(pass.observed, vec![Witness::new("step `s`", "HTTP 200")]);
        assert_eq!(
            (pass.rule.as_deref(), pass.quote.as_deref()),
            (Some("one"), Some("one quote")),
            "a pass cites the rule it held to"
        );
    }

    #[test]
    fn an_informational_entry_that_holds_is_information_not_a_pass() {
        let subject = Subject::assertion(Level::Info, vec![], "t".into(), String::new());
        let held = judge(subject.clone(), Outcome::kept("step `s`", "HTTP 200"));
        assert_eq!(held.verdict, Verdict::Info, "{held:?}");
        assert!(
            held.reason.starts_with("informational") && held.reason.contains("HTTP 200"),
            "{}",
            held.reason
        );
        assert_eq!(held.observed, vec![Witness::new("step `s`", "HTTP 200")]);
        let not = judge(subject, Outcome::Fail("not seen".into(), vec![]));
        assert_eq!(not.verdict, Verdict::Info);
        let s = crate::matrix::levels::scope([&held, &not]);
        assert_eq!((s.judged, s.reached), (0, 0), "information is not judged");
    }

    #[test]
    fn a_break_of_a_rule_the_check_does_not_enforce_is_an_error() {
        let r = judge(
            two_rule_subject(Level::Must, Level::Should),
            Outcome::breaks("three", "broken", vec![]),
        );
        assert_eq!(r.verdict, Verdict::Error);
        assert!(r.reason.contains("`three`"), "{}", r.reason);
    }

    #[test]
    fn a_pass_without_a_witness_is_an_error_never_a_pass() {
        for kept in [
            Outcome::Kept(Vec::new()),
            Outcome::kept("step `s`", ""),
            Outcome::kept("step `s`", "  "),
        ] {
            let r = judge(two_rule_subject(Level::Must, Level::Should), kept);
            assert_eq!(r.verdict, Verdict::Error, "{r:?}");
            assert!(r.reason.contains("without a witness"), "{}", r.reason);
        }
    }

    #[test]
    fn witnesses_are_bounded_and_counted() {
        let many = (0..5)
            .map(|i| Witness::new(format!("step {i}"), "x".repeat(1000)))
            .collect();
        let r = judge(
            two_rule_subject(Level::Must, Level::Should),
            Outcome::Kept(many),
        );
        assert_eq!(r.observed.len(), WITNESSES_MAX);
        assert!(
            r.observed[2].what.ends_with("(and 2 more)"),
            "{:?}",
            r.observed
        );
        assert!(
            r.observed[0].seen.len() < 400,
            "{}",
            r.observed[0].seen.len()
        );
    }

    #[test]
    fn an_absent_premise_is_inconclusive_never_a_pass() {
        let (v, r, _, _) = grade(
            Level::Must,
            Outcome::Inconclusive("no progress notification".into()),
            Grading::default(),
        );
        assert_eq!(v, Verdict::Inconclusive);
        assert!(r.contains("no progress"));
    }
}
