//! `docs/COVERAGE.md`: every statement of seeds 000 and 001 that the rule data quotes, with the
//! checks that enforce it, the scenarios that exercise those checks and the defects that prove
//! they fail; then the statements judged untestable (`tests/coverage-untestable.yaml`) with the
//! reason. Generated from the rule data, the scenarios and `tests/defects.yaml`; a trial fails
//! when the file is stale (`PALLAS_E2E_BLESS=1` rewrites it).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use pallas_conformance::rules::{Doc, RuleBook};
use pallas_conformance::scenario::Scenario;
use serde::Deserialize;

use crate::defects::DefectTable;

/// The generated file, relative to the workspace root.
pub const COVERAGE_FILE: &str = "docs/COVERAGE.md";
/// Statements judged untestable, relative to the workspace root.
pub const UNTESTABLE_FILE: &str = "tests/coverage-untestable.yaml";

/// Statements of the seeds the kit does not test, with the reason.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Untestable {
    /// Each statement.
    #[serde(default)]
    pub statements: Vec<UntestableStatement>,
}

/// One untestable statement.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UntestableStatement {
    /// `seed-000` or `seed-001`.
    pub doc: String,
    /// The section it is in.
    pub section: String,
    /// The statement, verbatim.
    pub quote: String,
    /// Why the kit does not test it.
    pub reason: String,
}

/// Reads the untestable list.
pub fn load_untestable(root: &Path) -> Result<Untestable, String> {
    let path = root.join(UNTESTABLE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Untestable statements whose quote is not found verbatim (whitespace-normalised) in its seed,
/// or whose `doc` is not `seed-000` / `seed-001`.
pub fn untestable_problems(untestable: &Untestable) -> Vec<String> {
    use pallas_conformance::rules::sources;
    let mut out = Vec::new();
    for s in &untestable.statements {
        let doc = match s.doc.as_str() {
            "seed-000" => Doc::Seed000,
            "seed-001" => Doc::Seed001,
            other => {
                out.push(format!("`{other}` is not seed-000 or seed-001"));
                continue;
            }
        };
        let quote = sources::normalise(&s.quote);
        let found = sources::text(doc)
            .unwrap_or_default()
            .iter()
            .any(|t| sources::normalise(t).contains(&quote));
        if !found {
            out.push(format!("not found verbatim in {}: {}", s.doc, s.quote));
        }
    }
    out
}

/// What covers one rule.
#[derive(Debug, Clone, Default)]
pub struct RuleCoverage {
    /// Checks enforcing it.
    pub checks: BTreeSet<String>,
    /// Scenarios exercising those checks.
    pub scenarios: BTreeSet<String>,
    /// Defects caught by those checks.
    pub defects: BTreeSet<String>,
}

impl RuleCoverage {
    /// Check, scenario and defect all present.
    pub fn complete(&self) -> bool {
        !self.checks.is_empty() && !self.scenarios.is_empty() && !self.defects.is_empty()
    }
}

fn is_seed(doc: Doc) -> bool {
    matches!(doc, Doc::Seed000 | Doc::Seed001)
}

/// What covers `rule` in the book, scenarios and defect table.
pub fn coverage_of(
    rule: &str,
    book: &RuleBook,
    scenarios: &[Scenario],
    table: &DefectTable,
) -> RuleCoverage {
    let mut c = RuleCoverage::default();
    for check in book
        .checks
        .iter()
        .filter(|k| k.rules.iter().any(|r| r == rule))
    {
        c.checks.insert(check.id.clone());
        let automatic = check.evaluation == pallas_conformance::rules::Evaluation::Automatic;
        for s in scenarios {
            if s.spec
                .checks
                .iter()
                .any(|e| e.check.as_deref() == Some(check.id.as_str()))
            {
                c.scenarios.insert(s.spec.id.clone());
            }
        }
        for d in table
            .defects
            .iter()
            .filter(|d| d.catches.contains(&check.id))
        {
            c.defects.insert(d.name.clone());
            if automatic {
                for s in d.select(scenarios) {
                    c.scenarios.insert(s.spec.id.clone());
                }
            }
        }
    }
    c
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn list(items: &BTreeSet<String>) -> String {
    if items.is_empty() {
        "—".to_owned()
    } else {
        items
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The whole file.
pub fn markdown(
    book: &RuleBook,
    scenarios: &[Scenario],
    table: &DefectTable,
    untestable: &Untestable,
) -> String {
    let rules: Vec<_> = book.rules.values().filter(|r| is_seed(r.doc)).collect();
    let rows: Vec<_> = rules
        .iter()
        .map(|r| (r, coverage_of(&r.id, book, scenarios, table)))
        .collect();
    let complete = rows.iter().filter(|(_, c)| c.complete()).count();
    let mut out = String::new();
    out.push_str("# Coverage of seeds 000 and 001\n\n");
    out.push_str(
        "Generated by `cargo test -p pallas-e2e -- coverage::` from the rule data \
         (`harness/rules/*.yaml`), the scenarios (`scenarios/`), the defect table \
         (`tests/defects.yaml`) and the untestable list (`tests/coverage-untestable.yaml`); \
         the trial fails when this file is stale, `PALLAS_E2E_BLESS=1` rewrites it. Do not \
         edit it by hand.\n\n",
    );
    let _ = writeln!(
        out,
        "- statements quoted as rules: **{}** (seed 000: {}, seed 001: {})",
        rules.len(),
        rules.iter().filter(|r| r.doc == Doc::Seed000).count(),
        rules.iter().filter(|r| r.doc == Doc::Seed001).count()
    );
    let _ = writeln!(
        out,
        "- covered by a check, a scenario and a defect that makes the check fail: **{complete}**"
    );
    let _ = writeln!(
        out,
        "- with a gap (a `—` below): **{}**",
        rows.len() - complete
    );
    let _ = writeln!(
        out,
        "- judged untestable, with the reason: **{}**\n",
        untestable.statements.len()
    );
    for (doc, title) in [(Doc::Seed000, "Seed 000"), (Doc::Seed001, "Seed 001")] {
        let _ = writeln!(out, "## {title}\n");
        out.push_str("| rule | level | section | statement | checks | scenarios | defects |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for (r, c) in rows.iter().filter(|(r, _)| r.doc == doc) {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} | {} |",
                r.id,
                r.level.as_str(),
                cell(&r.section),
                cell(&r.quote),
                list(&c.checks),
                list(&c.scenarios),
                list(&c.defects)
            );
        }
        out.push('\n');
    }
    out.push_str("## Statements judged untestable\n\n");
    out.push_str("| source | section | statement | why it is not tested |\n|---|---|---|---|\n");
    for s in &untestable.statements {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            s.doc,
            cell(&s.section),
            cell(&s.quote),
            cell(&s.reason)
        );
    }
    out
}
