//! `tests/clauses.yaml`: seeds 000 and 001 split into testable clauses, each with the assertion
//! that observes it and the defect of the reference that breaks it. A clause is `covered` only
//! when its check is led by the clause's own rule or its defect's finding cites that rule
//! (`breaks:`; a rider does not count), its defect is named by
//! no other clause, and the defect's run fails (or, below MUST, warns) at exactly that check entry
//! of that scenario; the defect trial of `tests/tests/e2e.rs` calls [`verify`] to keep that true.

use std::collections::BTreeMap;
use std::path::Path;

use pallas_conformance::checks::Verdict;
use pallas_conformance::rules::{Doc, Evaluation, RuleBook};
use pallas_conformance::runner::ScenarioResult;
use pallas_conformance::scenario::{Level, Scenario};
use serde::Deserialize;

use crate::defects::DefectTable;

/// The clause file, relative to the workspace root.
pub const CLAUSES_FILE: &str = "tests/clauses.yaml";

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseFile {
    /// Every clause, in the order of the rule data.
    pub clauses: Vec<Clause>,
}

/// One clause of a seed statement.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    /// Unique ID (`rule` ID, with a `#n` suffix when a statement has several clauses).
    pub id: String,
    /// The rule quoting the statement it is part of; absent for a statement no rule quotes yet.
    #[serde(default)]
    pub rule: Option<String>,
    /// `seed-000` or `seed-001` (default: the rule's).
    #[serde(default)]
    pub doc: Option<Doc>,
    /// The section (default: the rule's).
    #[serde(default)]
    pub section: Option<String>,
    /// The clause, verbatim from the seed (default: the rule's whole quote).
    #[serde(default)]
    pub fragment: Option<String>,
    /// Its level, from its own words or the `Required` table convention (default: the rule's).
    #[serde(default)]
    pub level: Option<Level>,
    /// The scenario ID whose check entry observes it.
    #[serde(default)]
    pub scenario: Option<String>,
    /// The check ID of that entry.
    #[serde(default)]
    pub check: Option<String>,
    /// Which entry of that check in the scenario, 1-based (default: the first).
    #[serde(default)]
    pub entry: Option<usize>,
    /// The defect of `tests/defects.yaml` that breaks exactly this clause.
    #[serde(default)]
    pub defect: Option<String>,
    /// What is missing, for a clause not covered.
    #[serde(default)]
    pub note: Option<String>,
    /// Why the named assertion and defect, although they hold mechanically, do not test the
    /// clause (a review finding): the clause counts as partial.
    #[serde(default)]
    pub weak: Option<String>,
}

/// How far a clause is tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Assertion and own defect, caught there.
    Covered,
    /// Something observes or breaks it, but not both exactly.
    Partial,
    /// Nothing observes it.
    NotCovered,
}

impl Status {
    /// The word in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Covered => "covered",
            Self::Partial => "partial",
            Self::NotCovered => "not covered",
        }
    }
}

/// A clause with everything resolved.
#[derive(Debug, Clone)]
pub struct Assessed {
    /// The clause as written.
    pub clause: Clause,
    /// Its document.
    pub doc: Doc,
    /// Its section.
    pub section: String,
    /// Its text.
    pub fragment: String,
    /// Its level.
    pub level: Level,
    /// The status.
    pub status: Status,
    /// `file:line` of the check entry (relative to the workspace root), when one is named.
    pub location: Option<String>,
    /// Why it is not covered (empty when covered).
    pub why: String,
}

/// Reads the clause file.
pub fn load(root: &Path) -> Result<ClauseFile, String> {
    let path = root.join(CLAUSES_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Index of the `nth` (1-based) entry of `check` in `scenario`.
fn entry_index(scenario: &Scenario, check: &str, nth: usize) -> Option<usize> {
    scenario
        .spec
        .checks
        .iter()
        .enumerate()
        .filter(|(_, e)| e.check.as_deref() == Some(check))
        .nth(nth.saturating_sub(1))
        .map(|(i, _)| i)
}

fn relative(root: &Path, scenario: &Scenario, index: usize) -> String {
    let path = scenario
        .path
        .strip_prefix(root)
        .unwrap_or(&scenario.path)
        .display()
        .to_string();
    format!(
        "{path}:{}",
        scenario.check_lines.get(index).copied().unwrap_or(0)
    )
}

/// Resolves every clause. Problems (unknown names, fragments not found verbatim) are returned
/// apart; the clauses they concern are still assessed, as not covered.
pub fn assess(
    root: &Path,
    file: &ClauseFile,
    book: &RuleBook,
    scenarios: &[Scenario],
    table: &DefectTable,
) -> (Vec<Assessed>, Vec<String>) {
    let mut problems = Vec::new();
    let mut seen = BTreeMap::new();
    // Defects named by a clause with a full triple: a defect named twice is nobody's own.
    let mut defect_uses: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &file.clauses {
        if let (Some(_), Some(_), Some(d)) = (&c.scenario, &c.check, &c.defect) {
            *defect_uses.entry(d.as_str()).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for c in &file.clauses {
        if seen.insert(c.id.as_str(), ()).is_some() {
            problems.push(format!("clause `{}` is listed twice", c.id));
        }
        let rule = c.rule.as_deref().and_then(|r| book.rules.get(r));
        if c.rule.is_some() && rule.is_none() {
            problems.push(format!(
                "clause `{}`: no rule `{}`",
                c.id,
                c.rule.as_deref().unwrap_or("")
            ));
        }
        let (doc, fragment) = text_of(c, rule, &mut problems);
        let level = c.level.or(rule.map(|r| r.level)).unwrap_or(Level::Should);
        let section = c
            .section
            .clone()
            .or(rule.map(|r| r.section.clone()))
            .unwrap_or_default();
        let scenario = c
            .scenario
            .as_deref()
            .and_then(|id| scenarios.iter().find(|s| s.spec.id == id));
        if c.scenario.is_some() && scenario.is_none() {
            problems.push(format!(
                "clause `{}`: no scenario `{}`",
                c.id,
                c.scenario.as_deref().unwrap_or("")
            ));
        }
        let check = c
            .check
            .as_deref()
            .and_then(|id| book.checks.iter().find(|k| k.id == id));
        if c.check.is_some() && check.is_none() {
            problems.push(format!(
                "clause `{}`: no check `{}`",
                c.id,
                c.check.as_deref().unwrap_or("")
            ));
        }
        let defect = c.defect.as_deref().and_then(|d| table.get(d));
        if c.defect.is_some() && defect.is_none() {
            problems.push(format!(
                "clause `{}`: no defect `{}` in tests/defects.yaml",
                c.id,
                c.defect.as_deref().unwrap_or("")
            ));
        }
        let index = match (scenario, check) {
            (Some(s), Some(k)) => entry_index(s, &k.id, c.entry.unwrap_or(1)),
            _ => None,
        };
        let automatic = check.is_some_and(|k| k.evaluation == Evaluation::Automatic);
        let location = match (scenario, index) {
            (Some(s), Some(i)) => Some(relative(root, s, i)),
            (Some(s), None) if automatic => Some(format!(
                "{} (automatic)",
                s.path.strip_prefix(root).unwrap_or(&s.path).display()
            )),
            _ => None,
        };
        let (mut why, cited) = gaps(
            c,
            Found {
                check,
                scenario,
                defect,
                located: location.is_some(),
            },
            book,
            scenarios,
            &defect_uses,
        );
        if let Some(w) = &c.weak {
            why.push(format!("weak: {w}"));
        }
        let named = c.scenario.is_some() || c.check.is_some() || c.defect.is_some();
        let status = if why.is_empty() && location.is_some() {
            Status::Covered
        } else if named || cited {
            Status::Partial
        } else {
            Status::NotCovered
        };
        if let Some(n) = &c.note {
            why.push(n.clone());
        }
        out.push(Assessed {
            clause: c.clone(),
            doc,
            section,
            fragment,
            level,
            status,
            location,
            why: why.join("; "),
        });
    }
    (out, problems)
}

/// The clause's document and text, with the problems of either.
fn text_of(
    c: &Clause,
    rule: Option<&pallas_conformance::rules::Rule>,
    problems: &mut Vec<String>,
) -> (Doc, String) {
    use pallas_conformance::rules::sources;
    let doc = c.doc.or(rule.map(|r| r.doc)).unwrap_or(Doc::Seed001);
    if !matches!(doc, Doc::Seed000 | Doc::Seed001) {
        problems.push(format!("clause `{}` is not of seed 000 or 001", c.id));
    }
    let fragment = c
        .fragment
        .clone()
        .or(rule.map(|r| r.quote.clone()))
        .unwrap_or_default();
    let found = !fragment.is_empty()
        && sources::text(doc)
            .unwrap_or_default()
            .iter()
            .any(|t| sources::normalise(t).contains(&sources::normalise(&fragment)));
    if c.fragment.is_some() && !found {
        problems.push(format!(
            "clause `{}`: fragment not found verbatim: {fragment}",
            c.id
        ));
    }
    if rule.is_none() && c.fragment.is_none() {
        problems.push(format!(
            "clause `{}` has neither a rule nor a fragment",
            c.id
        ));
    }
    (doc, fragment)
}

/// What a clause resolved to.
struct Found<'a> {
    check: Option<&'a pallas_conformance::rules::CheckDef>,
    scenario: Option<&'a Scenario>,
    defect: Option<&'a crate::defects::Defect>,
    located: bool,
}

/// Why a clause is not covered (empty when it is), and whether a check led by another rule
/// cites its rule.
fn gaps(
    c: &Clause,
    f: Found<'_>,
    book: &RuleBook,
    scenarios: &[Scenario],
    defect_uses: &BTreeMap<&str, usize>,
) -> (Vec<String>, bool) {
    let Found {
        check,
        scenario,
        defect,
        located,
    } = f;
    let mut why = Vec::new();
    // A clause of another than the check's first rule is its own when its defect's finding must
    // cite that rule (`breaks:` in tests/defects.yaml; the defect trial verifies the citation).
    let cited_by_defect = |k: &pallas_conformance::rules::CheckDef, r: &String| {
        defect.is_some_and(|d| d.breaks.get(&k.id) == Some(r))
    };
    match (check, &c.rule) {
        (Some(k), Some(r)) if k.rules.first() != Some(r) && !cited_by_defect(k, r) => {
            why.push(format!(
                "rides on {} (led by `{}`)",
                k.id,
                k.rules.first().map_or("", String::as_str)
            ));
        }
        (Some(_), None) => why.push("no rule quotes it".to_owned()),
        _ => {}
    }
    let mut cited = false;
    if c.check.is_none() {
        let riders: Vec<&str> = book
            .checks
            .iter()
            .filter(|k| c.rule.as_ref().is_some_and(|r| k.rules.contains(r)))
            .map(|k| k.id.as_str())
            .collect();
        cited = !riders.is_empty();
        if riders.is_empty() {
            why.push("no assertion observes it".to_owned());
        } else {
            why.push(format!(
                "no assertion of its own; cited by {}",
                riders.join(", ")
            ));
        }
    }
    if scenario.is_some() && check.is_some() && !located {
        why.push("the scenario does not run the check".to_owned());
    }
    match (defect, check, scenario) {
        (None, _, _) => why.push("no defect breaks it".to_owned()),
        (Some(d), Some(k), Some(s)) => {
            if !d.catches.contains(&k.id) {
                why.push(format!(
                    "`{}` does not name {} as catching it",
                    d.name, k.id
                ));
            }
            if !d.select(scenarios).iter().any(|x| x.spec.id == s.spec.id) {
                why.push(format!("`{}` does not run {}", d.name, s.spec.id));
            }
            if defect_uses.get(d.name.as_str()).copied().unwrap_or(0) > 1 {
                why.push(format!("`{}` breaks other clauses too", d.name));
            }
        }
        _ => {}
    }
    (why, cited)
}

/// What a defect's run must show: (scenario ID, check ID, check entry `file:line` suffix or
/// empty for an automatic check, clause ID) for every covered clause naming it.
pub fn expectations(assessed: &[Assessed], defect: &str) -> Vec<(String, String, String, String)> {
    assessed
        .iter()
        .filter(|a| a.status == Status::Covered && a.clause.defect.as_deref() == Some(defect))
        .filter_map(|a| {
            let loc = a.location.as_deref()?;
            let suffix = if loc.ends_with("(automatic)") {
                String::new()
            } else {
                loc.to_owned()
            };
            Some((
                a.clause.scenario.clone()?,
                a.clause.check.clone()?,
                suffix,
                a.clause.id.clone(),
            ))
        })
        .collect()
}

/// Checks that the defect's run broke each expected check at exactly its entry.
pub fn verify(
    results: &[ScenarioResult],
    expected: &[(String, String, String, String)],
) -> Result<(), String> {
    let mut missing = Vec::new();
    for (scenario, check, suffix, clause) in expected {
        // The clause's rule (its ID up to a `#n` suffix), when it is one of the check's rules:
        // the finding must cite it, a break of the check's other rules is another clause.
        let rule = clause.split('#').next().unwrap_or(clause.as_str());
        let own = pallas_conformance::catalog::get(check).and_then(|d| d.rule_def(rule));
        let hit = results.iter().filter(|r| &r.id == scenario).any(|r| {
            r.checks.iter().any(|c| {
                &c.id == check
                    && (suffix.is_empty() || c.location.ends_with(suffix.as_str()))
                    && (c.verdict == Verdict::Fail
                        || (c.verdict == Verdict::Warn && c.level != Level::Must)
                        || (c.verdict == Verdict::Info
                            && matches!(c.level, Level::May | Level::Info)))
                    && (own.is_none() || c.rule.is_none() || c.rule.as_deref() == Some(rule))
            })
        });
        if !hit {
            let elsewhere: Vec<String> = results
                .iter()
                .flat_map(|r| r.checks.iter().map(move |c| (r, c)))
                .filter(|(_, c)| &c.id == check && c.verdict != Verdict::Pass)
                .map(|(r, c)| {
                    format!(
                        "{} {} at {} citing {}",
                        r.id,
                        c.verdict.as_str(),
                        c.location,
                        c.rule.as_deref().unwrap_or("no rule")
                    )
                })
                .collect();
            missing.push(format!(
                "clause `{clause}`: {check} did not report the break in {scenario} at {suffix} \
                 (non-pass entries of {check}: {})",
                if elsewhere.is_empty() {
                    "none".to_owned()
                } else {
                    elsewhere.join(", ")
                }
            ));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("\n"))
    }
}
