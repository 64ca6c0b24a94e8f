//! Scenario files: the `*Spec` types, loading with source locations, semantic validation,
//! templating and the generated JSON Schema of the format.

mod action;
mod asserts;
mod http;
mod schema;
mod spec;
mod steps;
pub mod template;
mod validate;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;

pub use crate::diag::{SpecError, did_you_mean, from_yaml};
pub use crate::vocab::{Capability, InstanceScope, Level};
pub use action::{ActionKind, StepAction};
pub use asserts::*;
pub use http::HttpStep;
pub use schema::{json_schema, json_schema_pretty};
pub use spec::*;
pub use steps::*;

/// A parsed, validated scenario and where it came from.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// What the file declares.
    pub spec: ScenarioSpec,
    /// The file it was read from (as given).
    pub path: PathBuf,
    /// 1-based line of each top-level step (0 when unknown).
    pub step_lines: Vec<usize>,
    /// 1-based line of each check entry (0 when unknown).
    pub check_lines: Vec<usize>,
}

impl Scenario {
    /// `file:line` of check entry `index`.
    pub fn check_location(&self, index: usize) -> String {
        format!(
            "{}:{}",
            self.path.display(),
            self.check_lines.get(index).copied().unwrap_or(0)
        )
    }
}

/// Several invalid files, reported together before anything starts.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{} invalid file(s)", errors.len())]
pub struct InvalidFiles {
    /// One diagnostic per problem.
    #[related]
    pub errors: Vec<SpecError>,
}

impl InvalidFiles {
    /// Every diagnostic rendered rustc-style, without colours.
    pub fn render_plain(&self) -> String {
        self.errors
            .iter()
            .map(SpecError::render_plain)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Deserialize)]
struct Shadow {
    #[serde(default)]
    steps: Vec<Spanned<ShadowStep>>,
    #[serde(default)]
    checks: Vec<Spanned<ShadowCheck>>,
}

#[derive(Deserialize)]
struct ShadowStep {
    #[serde(default)]
    #[allow(dead_code)]
    name: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ShadowCheck {
    #[serde(default)]
    check: Option<Spanned<String>>,
}

/// Where things are in the file, for diagnostics and reports.
#[derive(Debug, Clone, Default)]
pub(crate) struct Locations {
    pub steps: Vec<usize>,
    pub checks: Vec<usize>,
    /// (line, column) of each check's `check:` value.
    pub check_ids: Vec<Option<(usize, usize)>>,
}

fn locations(file: &str, text: &str) -> Locations {
    let Ok(shadow) = from_yaml::<Shadow>(file, text) else {
        return Locations::default();
    };
    Locations {
        steps: shadow
            .steps
            .iter()
            .map(|s| s.referenced.line() as usize)
            .collect(),
        checks: shadow
            .checks
            .iter()
            .map(|s| s.referenced.line() as usize)
            .collect(),
        check_ids: shadow
            .checks
            .iter()
            .map(|c| {
                c.value.check.as_ref().map(|id| {
                    (
                        id.referenced.line() as usize,
                        id.referenced.column() as usize,
                    )
                })
            })
            .collect(),
    }
}

/// Parses and validates one scenario from text as a file of the format (`file` names it in
/// diagnostics); the `with:` of its check entries is the checks' to validate
/// (`suite::parse_str` does both).
pub fn parse_str(file: &str, text: &str) -> Result<Scenario, InvalidFiles> {
    let spec: ScenarioSpec = from_yaml(file, text).map_err(|e| InvalidFiles { errors: vec![e] })?;
    let locs = locations(file, text);
    let errors = validate::validate(&spec, file, text, &locs);
    if !errors.is_empty() {
        return Err(InvalidFiles { errors });
    }
    Ok(Scenario {
        spec,
        path: PathBuf::from(file),
        step_lines: locs.steps,
        check_lines: locs.checks,
    })
}

/// Reads and validates one scenario file, as [`parse_str`].
pub fn load_file(path: &Path) -> Result<Scenario, InvalidFiles> {
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
    parse_str(&file, &text)
}

/// Scenario files under `paths` (files as given; directories walked for `*.yaml`/`*.yml`,
/// skipping `targets/` folders and files whose name starts with `_`), sorted.
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "targets" && !name.starts_with('.') {
                    walk(&p, out);
                }
            } else if (name.ends_with(".yaml") || name.ends_with(".yml")) && !name.starts_with('_')
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Loads every scenario under `paths`, as [`parse_str`]; all problems of all files are reported
/// together, and a duplicated `id` is an error (`suite::load_paths` validates the
/// checks' `with:` too).
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, InvalidFiles> {
    collect(discover(paths).into_iter().map(|file| {
        let loaded = load_file(&file);
        (file.display().to_string(), loaded, move || {
            std::fs::read_to_string(&file).unwrap_or_default()
        })
    }))
}

/// Gathers loaded scenarios (file name, parse result, the file's text for an error): all
/// problems together, and an `id` used twice is an error at the second file's `id:` line.
pub(crate) fn collect<T: FnOnce() -> String>(
    loaded: impl IntoIterator<Item = (String, Result<Scenario, InvalidFiles>, T)>,
) -> Result<Vec<Scenario>, InvalidFiles> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut errors = Vec::new();
    for (file, result, text) in loaded {
        match result {
            Ok(s) => {
                if let Some(first) = scenarios.iter().find(|o| o.spec.id == s.spec.id) {
                    let text = text();
                    let line = text
                        .lines()
                        .position(|l| l.starts_with("id:"))
                        .map_or(0, |i| i + 1);
                    errors.push(SpecError::at(
                        &file,
                        &text,
                        line,
                        1,
                        format!("duplicate scenario id `{}`", s.spec.id),
                        Some(format!("already used by {}", first.path.display())),
                    ));
                } else {
                    scenarios.push(s);
                }
            }
            Err(e) => errors.extend(e.errors),
        }
    }
    if errors.is_empty() {
        Ok(scenarios)
    } else {
        Err(InvalidFiles { errors })
    }
}
