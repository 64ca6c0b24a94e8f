//! Expected-failures baseline: listed failures do not fail the run; a listed check that now
//! passes fails it as stale (the rule of rmcp's and the official MCP suite's baselines).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{ScenarioResult, StaleEntry, overall};
use crate::checks::Verdict;
use crate::scenario::{InvalidFiles, SpecError, from_yaml};

/// `scenario id → [check ids]` expected to fail.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Expected failures.
    pub expected_failures: BTreeMap<String, Vec<String>>,
}

/// A baseline file that cannot be used.
pub type BaselineError = InvalidFiles;

impl Baseline {
    /// Parses a baseline (`expected_failures: {scenario: [CHECK-ID, …]}`), rejecting unknown IDs.
    pub fn parse(file: &str, text: &str) -> Result<Self, BaselineError> {
        let b: Baseline = from_yaml(file, text).map_err(|e| InvalidFiles { errors: vec![e] })?;
        let mut errors = Vec::new();
        for ids in b.expected_failures.values() {
            for id in ids {
                if crate::catalog::get(id).is_none() && id != "ASSERT" {
                    let line = text
                        .lines()
                        .position(|l| l.contains(id.as_str()))
                        .map_or(0, |p| p + 1);
                    let hint = crate::scenario::did_you_mean(id, crate::catalog::ids())
                        .map(|m| format!("did you mean `{m}`?"));
                    errors.push(SpecError::at(
                        file,
                        text,
                        line,
                        1,
                        format!("unknown check `{id}`"),
                        hint,
                    ));
                }
            }
        }
        if errors.is_empty() {
            Ok(b)
        } else {
            Err(InvalidFiles { errors })
        }
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| InvalidFiles {
            errors: vec![SpecError::at(
                &file,
                "",
                0,
                0,
                format!("cannot read: {e}"),
                None,
            )],
        })?;
        Self::parse(&file, &text)
    }

    fn lists(&self, scenario: &str, check: &str) -> bool {
        self.expected_failures
            .get(scenario)
            .is_some_and(|v| v.iter().any(|c| c == check))
    }

    /// Marks listed failures as baselined and recomputes the scenario's verdict.
    pub fn apply(&self, result: &mut ScenarioResult, pallas: bool) {
        for c in &mut result.checks {
            if c.verdict == Verdict::Fail && self.lists(&result.id, &c.id) {
                c.baselined = true;
            }
        }
        result.verdict = overall(&result.checks, result.error.is_some(), pallas);
    }

    /// Listed checks that did not fail (in scenarios that ran).
    pub fn stale(&self, results: &[ScenarioResult]) -> Vec<StaleEntry> {
        let mut out = Vec::new();
        for (scenario, ids) in &self.expected_failures {
            let Some(r) = results.iter().find(|r| &r.id == scenario) else {
                continue;
            };
            if r.skipped.is_some() {
                continue;
            }
            for id in ids {
                let failed = r
                    .checks
                    .iter()
                    .any(|c| &c.id == id && c.verdict == Verdict::Fail);
                if !failed {
                    out.push(StaleEntry {
                        scenario: scenario.clone(),
                        check: id.clone(),
                    });
                }
            }
        }
        out
    }
}
