//! The matrix's downstream side: each bridge's results in the official MCP conformance suite's
//! client scenarios, driven through the bridge so that its own MCP client is judged
//! (`.ci/certify-downstream`, published as `docs/certification/downstream/results.json`). The
//! results are the suite's; the matrix shows them beside the kit's levels.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::MatrixError;

/// The results file read when the matrix is built from the default reports.
pub const DEFAULT_RESULTS: &str = "docs/certification/downstream/results.json";

/// The published results of the official suite's client scenarios through each bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Downstream {
    /// The suite and its version (`@modelcontextprotocol/conformance@0.1.16`).
    pub suite: String,
    /// The client scenarios driven through a bridge, each with the kit scenario that drives it.
    pub driven: BTreeMap<String, String>,
    /// The client scenarios that cannot be driven through a bridge, each with why.
    pub not_driven: BTreeMap<String, String>,
    /// Each bridge (its target profile's name): its results.
    pub targets: BTreeMap<String, Target>,
}

/// One bridge's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The target profile that started it.
    pub profile: String,
    /// The MCP era the kit spoke to a bridge that speaks only that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    /// Each driven scenario's result: `pass`, `warn`, `fail` or `error`.
    pub results: BTreeMap<String, String>,
    /// The suite's failed or warned checks of a scenario that did not pass.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, Vec<String>>,
}

impl Target {
    /// What the matrix shows: `3/3 pass`, or the scenarios that did not pass.
    pub fn label(&self) -> String {
        let passed = self.results.values().filter(|r| *r == "pass").count();
        let others: Vec<String> = self
            .results
            .iter()
            .filter(|(_, r)| *r != "pass")
            .map(|(s, r)| format!("{s}: {r}"))
            .collect();
        if others.is_empty() {
            format!("{passed}/{} pass", self.results.len())
        } else {
            format!(
                "{passed}/{} pass; {}",
                self.results.len(),
                others.join(", ")
            )
        }
    }
}

/// Reads a results file.
pub fn read(path: &Path) -> Result<Downstream, MatrixError> {
    let text = std::fs::read_to_string(path).map_err(|source| MatrixError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| MatrixError::NotDownstream {
        path: PathBuf::from(path),
        why: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_counts_passes_and_names_the_others() {
        let t = Target {
            profile: "scenarios/targets/x.yaml".into(),
            era: None,
            results: BTreeMap::from([
                ("initialize".into(), "pass".into()),
                ("sse-retry".into(), "fail".into()),
                ("tools_call".into(), "pass".into()),
            ]),
            checks: BTreeMap::new(),
        };
        assert_eq!(t.label(), "2/3 pass; sse-retry: fail");
    }

    #[test]
    fn a_file_that_is_not_the_results_is_refused_with_its_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("results.json");
        std::fs::write(&path, "{\"suite\": 1}").expect("written");
        let e = read(&path).expect_err("refused");
        assert!(e.to_string().contains("results.json"), "{e}");
    }
}
