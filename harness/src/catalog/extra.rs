//! Checks declared as data in `harness/rules/pallas-<area>.yaml` (the rule-data format: `rules`
//! quoting the seeds, `checks` naming them), made visible to the catalog until the rule-data
//! loader reads every file of `harness/rules/` itself.

use std::sync::OnceLock;

use serde::Deserialize;

use super::{CheckDef, Evaluation};
use crate::scenario::{Capability, Level};

/// The bundled area files, by name.
pub const FILES: &[(&str, &str)] = &[
    (
        "pallas-health.yaml",
        include_str!("../../rules/pallas-health.yaml"),
    ),
    (
        "pallas-startup.yaml",
        include_str!("../../rules/pallas-startup.yaml"),
    ),
    (
        "pallas-config.yaml",
        include_str!("../../rules/pallas-config.yaml"),
    ),
    (
        "pallas-registry.yaml",
        include_str!("../../rules/pallas-registry.yaml"),
    ),
    (
        "pallas-logging.yaml",
        include_str!("../../rules/pallas-logging.yaml"),
    ),
    (
        "pallas-metrics.yaml",
        include_str!("../../rules/pallas-metrics.yaml"),
    ),
    (
        "pallas-progress.yaml",
        include_str!("../../rules/pallas-progress.yaml"),
    ),
    (
        "pallas-bearer.yaml",
        include_str!("../../rules/pallas-bearer.yaml"),
    ),
];

/// One rule: a quoted sentence of a source.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleData {
    /// `s001.preflight-timeout`.
    pub id: String,
    /// `seed-000`, `seed-001`, `mcp-2025-11-25`, `registry-schema`, …
    pub doc: String,
    /// The section heading or schema path.
    pub section: String,
    /// The verbatim sentence.
    pub quote: String,
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// Why a quote without a keyword is a rule.
    #[serde(default)]
    pub basis: Option<String>,
}

/// One check naming its rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckData {
    /// `HEALTH-010`.
    pub id: String,
    /// What holds when it passes.
    pub title: String,
    /// Rule IDs.
    pub rules: Vec<String>,
    /// Capability the target must claim.
    #[serde(default)]
    pub capability: Option<Capability>,
    /// `builtin`, `automatic` or `assertion`.
    pub evaluation: String,
    /// What must have been observed for a verdict.
    #[serde(default)]
    pub premise: Option<String>,
}

/// One area file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Rules.
    #[serde(default)]
    pub rules: Vec<RuleData>,
    /// Checks.
    #[serde(default)]
    pub checks: Vec<CheckData>,
}

/// Parses one area file.
pub fn parse(name: &str, text: &str) -> Result<RulesFile, String> {
    if text.trim().is_empty() {
        return Ok(RulesFile::default());
    }
    serde_saphyr::from_str(text).map_err(|e| format!("harness/rules/{name}: {e}"))
}

/// Every area file, parsed (a file that does not parse is left out; the tests report it).
pub fn files() -> &'static [(String, RulesFile)] {
    static FILES_PARSED: OnceLock<Vec<(String, RulesFile)>> = OnceLock::new();
    FILES_PARSED.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(name, text)| parse(name, text).ok().map(|f| ((*name).to_owned(), f)))
            .collect()
    })
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn doc_ref(rule: &RuleData) -> String {
    match rule.doc.strip_prefix("seed-") {
        Some(n) => format!("seed {n} {}", rule.section),
        None => format!("{} {}", rule.doc, rule.section),
    }
}

/// The checks of the area files as catalog entries.
pub fn checks() -> &'static [CheckDef] {
    static DEFS: OnceLock<Vec<CheckDef>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let rules: Vec<&RuleData> = files().iter().flat_map(|(_, f)| &f.rules).collect();
        let mut out = Vec::new();
        for (_, f) in files() {
            for c in &f.checks {
                let mine: Vec<&&RuleData> =
                    rules.iter().filter(|r| c.rules.contains(&r.id)).collect();
                let level = mine.iter().map(|r| r.level).min().unwrap_or(Level::Should);
                let mut refs: Vec<&'static str> = Vec::new();
                for r in &mine {
                    let text = doc_ref(r);
                    if !refs.iter().any(|x| *x == text) {
                        refs.push(leak(text));
                    }
                }
                let evaluation = match c.evaluation.as_str() {
                    "builtin" => Evaluation::Builtin,
                    "automatic" => Evaluation::Automatic,
                    _ => Evaluation::Assertion,
                };
                out.push(CheckDef {
                    id: leak(c.id.clone()),
                    level,
                    refs: Box::leak(refs.into_boxed_slice()),
                    title: leak(c.title.clone()),
                    capability: c.capability,
                    evaluation,
                });
            }
        }
        out
    })
}

/// Looks up a check of the area files.
pub fn get(id: &str) -> Option<&'static CheckDef> {
    checks().iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_area_file_parses_and_its_checks_name_known_rules() {
        let mut ids = std::collections::BTreeSet::new();
        for (name, text) in FILES {
            let f = parse(name, text).unwrap();
            for c in &f.checks {
                assert!(ids.insert(c.id.clone()), "duplicate check {}", c.id);
                assert!(!c.rules.is_empty(), "{} names no rule", c.id);
                for r in &c.rules {
                    assert!(
                        files()
                            .iter()
                            .any(|(_, f)| f.rules.iter().any(|x| &x.id == r)),
                        "{}: unknown rule {r}",
                        c.id
                    );
                }
                assert!(super::super::CATALOG.iter().all(|d| d.id != c.id));
            }
        }
    }
}
