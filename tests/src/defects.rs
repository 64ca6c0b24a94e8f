//! The defect table (`tests/defects.yaml`): each named defect of the reference, the scenarios run
//! against it and the checks that must catch it; plus the checks no defect breaks, with reasons.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use pallas_conformance::catalog;
use pallas_conformance::checks::Verdict;
use pallas_conformance::runner::ScenarioResult;
use pallas_conformance::scenario::{Level, Scenario};
use serde::Deserialize;

use crate::suite::AllowedWarnings;

/// The table file, relative to the workspace root.
pub const TABLE_FILE: &str = "tests/defects.yaml";

/// Marks the start of the generated table in `tests/README.md`.
pub const README_START: &str = "<!-- defect-table:start (generated from tests/defects.yaml) -->";
/// Marks its end.
pub const README_END: &str = "<!-- defect-table:end -->";

/// The whole table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefectTable {
    /// Every defect the reference can be built with.
    pub defects: Vec<Defect>,
    /// Checks no defect makes fail: check ID → why.
    #[serde(default)]
    pub uncaught: BTreeMap<String, String>,
    /// SHOULD checks the clean reference may warn on: check ID → why.
    #[serde(default)]
    pub allowed_warnings: AllowedWarnings,
}

/// One defect.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defect {
    /// The name given to `PALLAS_DEFECTS`.
    pub name: String,
    /// What the broken reference does (default: the reference's own description of it).
    #[serde(default)]
    pub summary: Option<String>,
    /// Scenario IDs (globs allowed) run against it.
    pub scenarios: Vec<String>,
    /// Checks that must report the broken rule (fail; warn for a SHOULD).
    pub catches: Vec<String>,
    /// For a check in `catches` whose finding breaks another of its rules than its first: that
    /// rule's ID. The finding must cite exactly this rule (default: the check's first), and the
    /// table shows its level.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub breaks: BTreeMap<String, String>,
}

impl Defect {
    /// The rule check `id`'s finding must cite: its `breaks:` entry, else the check's first rule.
    pub fn expected_rule(&self, id: &str) -> Option<String> {
        self.breaks
            .get(id)
            .cloned()
            .or_else(|| catalog::get(id).and_then(|d| d.rules.first().cloned()))
    }

    /// The level check `id` reports this defect at: the level of [`Self::expected_rule`].
    pub fn caught_level(&self, id: &str) -> Option<Level> {
        let def = catalog::get(id)?;
        let rule = self.expected_rule(id)?;
        def.rule_def(&rule).map(|r| r.level)
    }
}

/// Why the table is unusable.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML is malformed or has unknown keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        message: String,
    },
}

/// Reads and parses the table.
pub fn load(path: &Path) -> Result<DefectTable, TableError> {
    read_yaml(path)
}

/// Reads and parses one of the test crate's YAML tables.
pub fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, TableError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TableError::Read {
        path: name.clone(),
        source,
    })?;
    parse(&name, &text)
}

/// Parses a table from text; `file` names it in errors.
pub fn parse<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, TableError> {
    serde_saphyr::from_str(text).map_err(|e| TableError::Parse {
        path: file.to_owned(),
        message: e.to_string(),
    })
}

fn glob_matches(pattern: &str, id: &str) -> bool {
    globset::Glob::new(pattern).is_ok_and(|g| g.compile_matcher().is_match(id))
}

impl DefectTable {
    /// The defect called `name`.
    pub fn get(&self, name: &str) -> Option<&Defect> {
        self.defects.iter().find(|d| d.name == name)
    }

    /// Every check some defect catches.
    pub fn caught(&self) -> BTreeSet<&str> {
        self.defects
            .iter()
            .flat_map(|d| d.catches.iter().map(String::as_str))
            .collect()
    }

    /// Everything wrong with the table, given the loaded scenarios and the defects the reference
    /// knows: unknown or duplicated names, unknown check IDs, scenario globs that match nothing,
    /// defects missing from the table, catalog checks neither caught nor explained, explanations
    /// of checks that are caught, allowed warnings on MUST checks.
    /// `mutants`: the reference's contract mutants, which the table may also list (for a check
    /// only a contract mutant breaks) but need not.
    pub fn problems(
        &self,
        scenarios: &[Scenario],
        known_defects: &[&str],
        mutants: &[&str],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for d in &self.defects {
            if !seen.insert(d.name.as_str()) {
                out.push(format!("defect `{}` is listed twice", d.name));
            }
            if !known_defects.contains(&d.name.as_str()) && !mutants.contains(&d.name.as_str()) {
                out.push(format!(
                    "defect `{}` is not a defect the reference knows ({})",
                    d.name,
                    known_defects.join(", ")
                ));
            }
            if d.scenarios.is_empty() {
                out.push(format!("defect `{}` runs no scenario", d.name));
            }
            if d.catches.is_empty() {
                out.push(format!(
                    "defect `{}` names no check that catches it",
                    d.name
                ));
            }
            for pat in &d.scenarios {
                if globset::Glob::new(pat).is_err() {
                    out.push(format!("defect `{}`: `{pat}` is not a valid glob", d.name));
                } else if !scenarios.iter().any(|s| glob_matches(pat, &s.spec.id)) {
                    out.push(format!(
                        "defect `{}`: no scenario id matches `{pat}`",
                        d.name
                    ));
                }
            }
            for id in &d.catches {
                if catalog::get(id).is_none() {
                    out.push(format!(
                        "defect `{}`: `{id}` is not a catalog check",
                        d.name
                    ));
                }
            }
            for (id, rule) in &d.breaks {
                if !d.catches.contains(id) {
                    out.push(format!(
                        "defect `{}`: `breaks:` names `{id}`, which is not in its `catches`",
                        d.name
                    ));
                } else if catalog::get(id).is_some_and(|def| def.rule_def(rule).is_none()) {
                    out.push(format!(
                        "defect `{}`: `{rule}` is not one of the rules of `{id}`",
                        d.name
                    ));
                }
            }
        }
        for k in known_defects {
            if self.get(k).is_none() {
                out.push(format!(
                    "the reference's defect `{k}` is missing from the table"
                ));
            }
        }
        let caught = self.caught();
        // The contract packs of seeds 002–004 have their own matrix (tests/pack-defects.yaml).
        for def in catalog::all()
            .iter()
            .filter(|d| !matches!(d.family(), "MCPCTL" | "PERC" | "MAS"))
        {
            let listed = self.uncaught.contains_key(def.id.as_str());
            if caught.contains(def.id.as_str()) && listed {
                out.push(format!(
                    "{} is caught by a defect but also listed under `uncaught`",
                    def.id
                ));
            } else if !caught.contains(def.id.as_str()) && !listed {
                out.push(format!(
                    "{} is caught by no defect and not explained under `uncaught`",
                    def.id
                ));
            }
        }
        for (id, why) in &self.uncaught {
            if catalog::get(id).is_none() {
                out.push(format!("uncaught: `{id}` is not a catalog check"));
            }
            if why.trim().is_empty() {
                out.push(format!("uncaught: `{id}` needs a reason"));
            }
        }
        for id in self.allowed_warnings.keys() {
            match catalog::get(id) {
                None => out.push(format!("allowed_warnings: `{id}` is not a catalog check")),
                Some(def) if def.level == Level::Must => out.push(format!(
                    "allowed_warnings: `{id}` is a MUST; only SHOULD checks may warn"
                )),
                Some(_) => {}
            }
        }
        out
    }
}

impl Defect {
    /// What the broken reference does: the table's summary, else the reference's description.
    pub fn summary(&self) -> &str {
        self.summary.as_deref().unwrap_or_else(|| {
            pallas_reference::defects::KNOWN
                .iter()
                .find(|(name, _)| *name == self.name)
                .map_or("", |(_, what)| *what)
        })
    }

    /// The scenarios this defect runs, in the given order.
    pub fn select<'a>(&self, scenarios: &'a [Scenario]) -> Vec<&'a Scenario> {
        scenarios
            .iter()
            .filter(|s| self.scenarios.iter().any(|p| glob_matches(p, &s.spec.id)))
            .collect()
    }

    /// Judges a run of its scenarios against the broken reference: every check in `catches` must
    /// report the broken rule in at least one scenario (`fail`, or `warn` for a check below MUST).
    /// Returns the checks that did report something, or a description of what went unseen.
    pub fn judge(&self, results: &[ScenarioResult]) -> Result<BTreeSet<String>, String> {
        let mut reported: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in results {
            for c in &r.checks {
                // A MAY not implemented, or a difference from a keywordless description, is
                // reported as `info`: for a rule of those levels that is its finding.
                let broken = c.verdict == Verdict::Fail
                    || (c.verdict == Verdict::Warn && c.level != Level::Must)
                    || (c.verdict == Verdict::Info && matches!(c.level, Level::May | Level::Info));
                // The finding cites the rule the defect breaks (a check's other rules are other
                // clauses): a result without a cited rule (a scenario assertion) counts as is.
                let cites = c.rule.is_none() || c.rule == self.expected_rule(&c.id);
                if broken && cites {
                    reported.entry(c.id.clone()).or_default().push(r.id.clone());
                }
            }
        }
        let missing: Vec<&String> = self
            .catches
            .iter()
            .filter(|id| !reported.contains_key(*id))
            .collect();
        if missing.is_empty() {
            return Ok(reported.into_keys().collect());
        }
        let mut text = format!(
            "defect `{}` ({}) went unseen by {}\n",
            self.name,
            self.summary(),
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            text,
            "checks that did report a broken rule: {}",
            if reported.is_empty() {
                "none".to_owned()
            } else {
                reported
                    .iter()
                    .map(|(k, v)| format!("{k} (in {})", v.join(", ")))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        for r in results {
            let _ = write!(text, "  {} [{}]", r.id, r.verdict.as_str());
            if let Some(e) = &r.error {
                let _ = write!(text, " error: {e}");
            }
            if let Some(s) = &r.skipped {
                let _ = write!(text, " skipped: {s}");
            }
            let _ = writeln!(text);
            for c in r.checks.iter().filter(|c| missing.contains(&&c.id)) {
                let _ = writeln!(
                    text,
                    "    {}: {} citing {} (expected {}) {}",
                    c.id,
                    c.verdict.as_str(),
                    c.rule.as_deref().unwrap_or("no rule"),
                    self.expected_rule(&c.id).as_deref().unwrap_or("?"),
                    if c.reason.is_empty() { "" } else { &c.reason }
                );
            }
        }
        Err(text)
    }
}

/// The README's defect table, as Markdown: one row per defect (name, what it breaks, the checks
/// that catch it, the scenarios run), then the checks no defect breaks with their reasons.
pub fn markdown(table: &DefectTable) -> String {
    let mut out = String::new();
    out.push_str("| defect (`PALLAS_DEFECTS=`) | what the broken reference does | caught by | scenarios run |\n");
    out.push_str("|---|---|---|---|\n");
    for d in &table.defects {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            d.name,
            d.summary().replace('|', "\\|"),
            d.catches
                .iter()
                .map(|c| match d.caught_level(c) {
                    Some(level) => format!("`{c}` ({})", level.as_str()),
                    None => format!("`{c}`"),
                })
                .collect::<Vec<_>>()
                .join(", "),
            d.scenarios
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !table.uncaught.is_empty() {
        out.push_str("\nChecks that no defect makes fail, and why:\n\n");
        out.push_str("| check | why no defect |\n|---|---|\n");
        for (id, why) in &table.uncaught {
            let _ = writeln!(out, "| `{id}` | {} |", why.replace('|', "\\|"));
        }
    }
    if !table.allowed_warnings.is_empty() {
        out.push_str("\nWarnings the clean reference may show:\n\n");
        out.push_str("| check | why |\n|---|---|\n");
        for (id, why) in &table.allowed_warnings {
            let _ = writeln!(out, "| `{id}` | {} |", why.replace('|', "\\|"));
        }
    }
    out
}

/// `readme` with the text between [`README_START`] and [`README_END`] replaced by `table`, or
/// `None` when the markers are missing.
pub fn splice_readme(readme: &str, table: &str) -> Option<String> {
    let start = readme.find(README_START)? + README_START.len();
    let end = start + readme[start..].find(README_END)?;
    Some(format!("{}\n{}{}", &readme[..start], table, &readme[end..]))
}
