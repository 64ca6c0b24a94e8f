//! The embedded scenario suite: every file of the workspace's `scenarios/` except the target
//! profiles (`targets/`), compiled into the binary by `build.rs` and versioned with the kit.
//! `run` with no scenario path runs it, `scenarios export DIR` writes it out, and its digest
//! (SHA-256 of a `sha256sum`-style manifest of the files, see `build.rs`) is printed by
//! `--version` and named in every report. Loading a suite, embedded or on disk, validates each
//! scenario as a file ([`scenario::parse_str`]) and each check entry's `with:` against the
//! parameters its check declares ([`crate::checks::with_errors`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scenario::{self, InvalidFiles, Scenario};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/embedded_suite.rs"));
}

/// The embedded suite's digest (64 hex digits).
pub const DIGEST: &str = env!("PALLAS_SUITE_DIGEST");

/// What `--version` prints after the program name.
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (embedded suite sha256:",
    env!("PALLAS_SUITE_DIGEST"),
    ")"
);

/// The folder name the embedded files are shown under, as in the repository.
pub const PREFIX: &str = "scenarios";

/// The embedded files: `(path relative to scenarios/, text)`, sorted by path.
pub fn files() -> &'static [(&'static str, &'static str)] {
    generated::FILES
}

/// Where a run's scenarios came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteSource {
    /// The suite embedded in the kit.
    Embedded,
    /// Scenario files on disk.
    #[default]
    Files,
}

/// The kit and suite that judged a run, as `run_started` and every report name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// Whether the scenarios were the embedded suite or files on disk.
    pub source: SuiteSource,
    /// The digest of the kit's embedded suite (which suite this kit carries, whichever ran).
    pub digest: String,
    /// The generated deployments the run drew beside the scenarios (their seed), or why none;
    /// absent when the run drew none by choice (`--generated 0`, or files named one by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<crate::generated::GeneratedInfo>,
}

impl SuiteInfo {
    /// This kit's suite, with the given source.
    pub fn current(source: SuiteSource) -> Self {
        Self {
            source,
            digest: DIGEST.to_owned(),
            generated: None,
        }
    }

    /// One line for report headers: `embedded suite sha256:…` or `scenario files (kit suite
    /// sha256:…)`.
    pub fn describe(&self) -> String {
        let suite = match self.source {
            SuiteSource::Embedded => format!("embedded suite sha256:{}", self.digest),
            SuiteSource::Files => format!(
                "scenario files on disk (the kit's embedded suite is sha256:{})",
                self.digest
            ),
        };
        match &self.generated {
            Some(g) => format!("{suite}; {}", g.describe()),
            None => suite,
        }
    }
}

fn is_scenario(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    (name.ends_with(".yaml") || name.ends_with(".yml")) && !name.starts_with('_')
}

/// Parses and validates every scenario of the embedded suite (shown as `scenarios/<path>`);
/// a duplicated `id` is an error, as on disk.
pub fn load() -> Result<Vec<Scenario>, InvalidFiles> {
    scenario::collect(
        files()
            .iter()
            .filter(|(rel, _)| is_scenario(rel))
            .map(|(rel, text)| {
                let file = format!("{PREFIX}/{rel}");
                let loaded = parse_str(&file, text);
                (file, loaded, move || (*text).to_owned())
            }),
    )
}

/// Parses and validates one scenario from text (`file` names it in diagnostics), the `with:`
/// of its check entries included.
pub fn parse_str(file: &str, text: &str) -> Result<Scenario, InvalidFiles> {
    let loaded = scenario::parse_str(file, text)?;
    let errors = crate::checks::with_errors(&loaded, text);
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(InvalidFiles { errors })
    }
}

/// Reads and validates one scenario file, as [`parse_str`].
pub fn load_file(path: &Path) -> Result<Scenario, InvalidFiles> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&path.display().to_string(), &text),
        // The file format's loader says why it cannot be read.
        Err(_) => scenario::load_file(path),
    }
}

/// Loads and validates every scenario under `paths` ([`scenario::discover`]), as [`parse_str`]:
/// all problems of all files are reported together, and a duplicated `id` is an error.
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, InvalidFiles> {
    scenario::collect(scenario::discover(paths).into_iter().map(|path| {
        let loaded = load_file(&path);
        (path.display().to_string(), loaded, move || {
            std::fs::read_to_string(&path).unwrap_or_default()
        })
    }))
}

/// Writes the embedded suite under `dir` (created if needed). Refuses to replace an existing
/// file unless `force`. Returns the files written.
pub fn export(dir: &Path, force: bool) -> std::io::Result<Vec<PathBuf>> {
    let targets: Vec<PathBuf> = files()
        .iter()
        .map(|(rel, _)| rel.split('/').fold(dir.to_path_buf(), |p, c| p.join(c)))
        .collect();
    if !force && let Some(existing) = targets.iter().find(|p| p.exists()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{} exists (--force replaces the suite's files)",
                existing.display()
            ),
        ));
    }
    for (path, (_, text)) in targets.iter().zip(files()) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_embedded_suite_is_the_workspace_suite_and_loads() {
        let on_disk =
            scenario::load_paths(&[Path::new(env!("CARGO_MANIFEST_DIR")).join(PREFIX)]).unwrap();
        let embedded = load().unwrap();
        assert_eq!(embedded.len(), on_disk.len());
        let mut a: Vec<_> = embedded.iter().map(|s| s.spec.id.clone()).collect();
        let mut b: Vec<_> = on_disk.iter().map(|s| s.spec.id.clone()).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert!(files().iter().all(|(rel, _)| !rel.starts_with("targets/")));
        assert!(
            files()
                .iter()
                .any(|(rel, _)| *rel == "scenario.schema.json")
        );
    }

    #[test]
    fn the_digest_is_sha256_hex_and_in_the_version_line() {
        assert_eq!(DIGEST.len(), 64);
        assert!(DIGEST.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(VERSION_LINE.contains(DIGEST));
    }

    #[test]
    fn export_writes_every_file_and_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let written = export(dir.path(), false).unwrap();
        assert_eq!(written.len(), files().len());
        let exported = scenario::load_paths(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(exported.len(), load().unwrap().len());
        assert!(export(dir.path(), false).is_err());
        assert!(export(dir.path(), true).is_ok());
    }
}
