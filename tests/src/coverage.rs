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

use crate::clauses::{Assessed, Status};
use crate::defects::DefectTable;

/// A defect variant as coverage sees it: its name, the checks it makes fail, the scenarios that
/// show it. Built from the reference's table (`tests/defects.yaml`) and the packs' matrix
/// (`tests/pack-defects.yaml`).
#[derive(Debug, Clone)]
pub struct DefectRef {
    /// `name`, or `pack/name` for a pack mock's defect.
    pub name: String,
    /// Checks it makes fail.
    pub catches: Vec<String>,
    /// Scenario IDs it runs.
    pub scenarios: Vec<String>,
}

/// The packs' defect matrix file.
pub const PACK_DEFECTS_FILE: &str = "tests/pack-defects.yaml";

#[derive(Debug, Deserialize)]
struct PackTable {
    defects: Vec<PackEntry>,
}

#[derive(Debug, Deserialize)]
struct PackEntry {
    pack: String,
    name: String,
    scenarios: Vec<String>,
    catches: Vec<String>,
}

/// Every defect of the reference's table and the packs' matrix.
pub fn defect_refs(
    root: &Path,
    table: &DefectTable,
    scenarios: &[Scenario],
) -> Result<Vec<DefectRef>, String> {
    let mut out: Vec<DefectRef> = table
        .defects
        .iter()
        .map(|d| DefectRef {
            name: d.name.clone(),
            catches: d.catches.clone(),
            scenarios: d
                .select(scenarios)
                .iter()
                .map(|s| s.spec.id.clone())
                .collect(),
        })
        .collect();
    let text = std::fs::read_to_string(root.join(PACK_DEFECTS_FILE))
        .map_err(|e| format!("{PACK_DEFECTS_FILE}: {e}"))?;
    let packs: PackTable =
        serde_saphyr::from_str(&text).map_err(|e| format!("{PACK_DEFECTS_FILE}: {e}"))?;
    out.extend(packs.defects.into_iter().map(|e| DefectRef {
        name: format!("{}/{}", e.pack, e.name),
        catches: e.catches,
        scenarios: e.scenarios,
    }));
    Ok(out)
}

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
    /// Why the kit does not test it (or, when `pending`, what testing it still needs).
    pub reason: String,
    /// Testable, but not covered yet: listed apart from the untestable ones, as a gap.
    #[serde(default)]
    pub pending: bool,
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
            "seed-002" => Doc::Seed002,
            "seed-003" => Doc::Seed003,
            "seed-004" => Doc::Seed004,
            other => {
                out.push(format!("`{other}` is not a seed (seed-000 … seed-004)"));
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

fn is_pallas_seed(doc: Doc) -> bool {
    matches!(doc, Doc::Seed000 | Doc::Seed001)
}

/// What covers `rule` in the book, scenarios and defects.
pub fn coverage_of(
    rule: &str,
    book: &RuleBook,
    scenarios: &[Scenario],
    defects: &[DefectRef],
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
        for d in defects.iter().filter(|d| d.catches.contains(&check.id)) {
            c.defects.insert(d.name.clone());
            if automatic {
                c.scenarios.extend(d.scenarios.iter().cloned());
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
    defects: &[DefectRef],
    untestable: &Untestable,
    clauses: &[Assessed],
) -> String {
    let rules: Vec<_> = book
        .rules
        .values()
        .filter(|r| is_pallas_seed(r.doc))
        .collect();
    let rows: Vec<_> = book
        .rules
        .values()
        .filter(|r| r.doc.is_seed())
        .map(|r| (r, coverage_of(&r.id, book, scenarios, defects)))
        .collect();
    let pack_rows = rows.iter().filter(|(r, _)| !is_pallas_seed(r.doc)).count();
    let pack_complete = rows
        .iter()
        .filter(|(r, c)| !is_pallas_seed(r.doc) && c.complete())
        .count();
    let mut out = String::new();
    out.push_str("# Coverage of the seeds\n\n");
    out.push_str(
        "Generated by `cargo test -p pallas-e2e -- coverage::` from the rule data \
         (`harness/rules/*.yaml`), the scenarios (`scenarios/`), the defect tables \
         (`tests/defects.yaml` for the reference, `tests/pack-defects.yaml` for the pack mocks) \
         and the untestable list (`tests/coverage-untestable.yaml`, the packs' statements \
         included; `docs/packs.md` explains them); \
         the trial fails when this file is stale, `PALLAS_E2E_BLESS=1` rewrites it. Do not \
         edit it by hand.\n\n",
    );
    let count = |st: Status| clauses.iter().filter(|a| a.status == st).count();
    let _ = writeln!(
        out,
        "- seeds 000 and 001 split into clauses (`tests/clauses.yaml`): **{}** (seed 000: {}, \
         seed 001: {}), from **{}** statements quoted as rules",
        clauses.len(),
        clauses.iter().filter(|a| a.doc == Doc::Seed000).count(),
        clauses.iter().filter(|a| a.doc == Doc::Seed001).count(),
        rules.len()
    );
    let _ = writeln!(
        out,
        "- **covered** — an assertion led by the clause's own rule (or whose finding cites it: \
         `breaks:` in tests/defects.yaml) observes it and a defect of its own is caught at exactly \
         that assertion, citing that rule (the defect trial fails otherwise): **{}**",
        count(Status::Covered)
    );
    let _ = writeln!(
        out,
        "- **partial** — observed or broken, but not both exactly (a rider, a shared defect, an assertion judged weak on review, a \
         check that does not fail there): **{}**",
        count(Status::Partial)
    );
    let _ = writeln!(
        out,
        "- **not covered** — nothing observes it: **{}**",
        count(Status::NotCovered)
    );
    let pack_pending = untestable
        .statements
        .iter()
        .filter(|s| s.pending && !matches!(s.doc.as_str(), "seed-000" | "seed-001"))
        .count();
    let pack_judged = untestable
        .statements
        .iter()
        .filter(|s| !s.pending && !matches!(s.doc.as_str(), "seed-000" | "seed-001"))
        .count();
    let _ = writeln!(
        out,
        "- seeds 002–004 (the contract packs): **{}** testable statements: **{pack_rows}** \
         quoted as rules, **{pack_complete}** of them covered by a check, a scenario and a \
         defect of the pack's mock; **{pack_pending}** not covered yet (listed below); \
         **{pack_judged}** more judged untestable (listed below)",
        pack_rows + pack_pending
    );
    let (pending, judged): (Vec<_>, Vec<_>) = untestable.statements.iter().partition(|s| s.pending);
    let _ = writeln!(
        out,
        "- judged untestable, with the reason: **{}**",
        judged.len()
    );
    let _ = writeln!(
        out,
        "- testable but not covered yet, with what it needs: **{}**\n",
        pending.len()
    );
    for (doc, title) in [
        (Doc::Seed000, "Seed 000 (Pallas↔Daedalus contract)"),
        (Doc::Seed001, "Seed 001 (Pallas technical reference)"),
        (Doc::Seed002, "Seed 002 (mcpctl agents)"),
        (Doc::Seed003, "Seed 003 (Percolate)"),
        (Doc::Seed004, "Seed 004 (McpAgenticServer)"),
    ] {
        let _ = writeln!(out, "## {title}\n");
        if is_pallas_seed(doc) {
            clause_table(&mut out, clauses, doc);
            continue;
        }
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
    for (heading, column, list) in [
        (
            "Statements judged untestable",
            "why it is not tested",
            &judged,
        ),
        (
            "Statements not covered yet",
            "what testing it needs",
            &pending,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "## {heading}\n\n| source | section | statement | {column} |\n|---|---|---|---|\n"
        );
        for s in list.iter() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                s.doc,
                cell(&s.section),
                cell(&s.quote),
                cell(&s.reason)
            );
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn clause_table(out: &mut String, clauses: &[Assessed], doc: Doc) {
    out.push_str("| clause | level | section | clause text | status | assertion | defect | why not covered |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for a in clauses.iter().filter(|a| a.doc == doc) {
        let code = |v: Option<&str>| v.map_or("—".to_owned(), |v| format!("`{v}`"));
        let assertion = match (&a.location, &a.clause.check) {
            (Some(l), Some(k)) => format!("{k} at `{l}`"),
            (None, Some(k)) => format!("{k} (no scenario runs it)"),
            _ => "—".to_owned(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            a.clause.id,
            a.level.as_str(),
            cell(&a.section),
            cell(&a.fragment),
            a.status.as_str(),
            cell(&assertion),
            code(a.clause.defect.as_deref()),
            if a.why.is_empty() {
                "—".to_owned()
            } else {
                cell(&a.why)
            }
        );
    }
    out.push('\n');
}
