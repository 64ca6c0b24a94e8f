//! The contract mutants of `tests/mutants.yaml`: one-sentence misreadings of the seeds, each
//! realised as a defect of the reference, with what must catch it.

use std::path::Path;

use serde::Deserialize;

/// The file, relative to the workspace root.
pub const FILE: &str = "tests/mutants.yaml";

/// The name prefix of the reference defects that realise contract mutants: they are held by
/// [`FILE`], not by `tests/defects.yaml`.
pub const PREFIX: &str = "cm-";

/// `tests/mutants.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutantFile {
    /// The mutants, in the reviewer's order.
    pub mutants: Vec<Mutant>,
}

/// One contract mutant.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mutant {
    /// The reviewer's id (`cm-02-slug-lowercased`).
    pub id: String,
    /// The seed the sentence is from (`000`, `001`).
    pub seed: String,
    /// The seed sentence, verbatim.
    pub sentence: String,
    /// What the mutated implementation does.
    pub misreading: String,
    /// The reference defect that realises it.
    pub defect: String,
    /// What catches it.
    #[serde(default)]
    pub caught_by: Option<CaughtBy>,
    /// Suite scenario ids that catch it (with `caught_by: scenarios`).
    #[serde(default)]
    pub scenarios: Vec<String>,
    /// Why it survives (instead of `caught_by`).
    #[serde(default)]
    pub survives: Option<String>,
}

/// What catches a mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaughtBy {
    /// The generated deployments.
    Generated,
    /// The scenarios the row names.
    Scenarios,
}

/// Why `tests/mutants.yaml` is not usable.
#[derive(Debug, thiserror::Error)]
pub enum MutantsError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a mutant table.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A row names neither a catcher nor a reason, or both.
    #[error("{path}: mutant `{id}` needs exactly one of `caught_by` and `survives`")]
    Row {
        /// The file.
        path: String,
        /// The mutant.
        id: String,
    },
}

/// Loads and checks `tests/mutants.yaml` under `root`.
pub fn load(root: &Path) -> Result<MutantFile, MutantsError> {
    let path = root.join(FILE);
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|source| MutantsError::Read {
        path: shown.clone(),
        source,
    })?;
    let file: MutantFile = serde_saphyr::from_str(&text).map_err(|e| MutantsError::Parse {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    for m in &file.mutants {
        let scenarios_ok = (m.caught_by == Some(CaughtBy::Scenarios)) != m.scenarios.is_empty();
        if m.caught_by.is_some() == m.survives.is_some() || !scenarios_ok {
            return Err(MutantsError::Row {
                path: shown,
                id: m.id.clone(),
            });
        }
    }
    Ok(file)
}
