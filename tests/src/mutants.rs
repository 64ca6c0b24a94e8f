//! The contract mutants of `tests/mutants.yaml`: one-sentence misreadings of the seeds, each
//! realised as a defect of the reference, with what must catch it.

use std::path::Path;

use serde::Deserialize;

/// The file, relative to the workspace root.
pub const FILE: &str = "tests/mutants.yaml";

/// The name prefixes of the reference defects that realise contract mutants (`cm-`: the first
/// review's misreadings, `fm-`: a fresh set the kit's authors never saw before it was realised,
/// `mr-`, `ms-`, `nx-`, `px-`, `qx-`: a third, fourth, fifth, sixth and seventh fresh set, each measured on first contact with
/// the kit as it was): they are held by [`FILE`], not by `tests/defects.yaml`.
pub const PREFIXES: [&str; 8] = ["cm-", "fm-", "mr-", "ms-", "nx-", "px-", "qx-", "rx-"];

/// Whether a reference defect realises a contract mutant (see [`PREFIXES`]).
pub fn is_mutant_defect(name: &str) -> bool {
    PREFIXES.iter().any(|p| name.starts_with(p))
}

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
    /// A survivor whose misreading no seed sentence rules out at an observable point (its
    /// `survives` says why): left out of the rate of the observable and binding.
    #[serde(default)]
    pub not_binding: bool,
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
    /// The file could not be read or parsed.
    #[error(transparent)]
    File(#[from] crate::defects::TableError),
    /// A row names neither a catcher nor a reason, or both (or is `not_binding` and caught).
    #[error(
        "{path}: mutant `{id}` needs exactly one of `caught_by` and `survives` (`not_binding` only with `survives`)"
    )]
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
    let file: MutantFile = crate::defects::read_yaml(&path)?;
    for m in &file.mutants {
        let scenarios_ok = (m.caught_by == Some(CaughtBy::Scenarios)) != m.scenarios.is_empty();
        if m.caught_by.is_some() == m.survives.is_some()
            || !scenarios_ok
            || (m.not_binding && m.caught_by.is_some())
        {
            return Err(MutantsError::Row {
                path: shown,
                id: m.id.clone(),
            });
        }
    }
    Ok(file)
}

/// The `## heading` of the seed section that holds `sentence` (the nearest `##` heading above
/// its first line), or `(not found)`.
pub fn section_of(seed_text: &str, sentence: &str) -> String {
    let first = sentence.lines().next().unwrap_or(sentence).trim();
    let mut heading = "(before any section)";
    for line in seed_text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            heading = h.trim();
        }
        if !first.is_empty() && line.contains(first) {
            return heading.to_owned();
        }
    }
    "(not found)".to_owned()
}

/// The "Contract mutants" section of `docs/COVERAGE.md`: per seed section, the mutants realised,
/// how many `pallas-conformance run` catches (the `generated` test holds each row true: a
/// caught row fails a run with the kit's defaults, a survivor passes one) and the survivors.
pub fn coverage_section(root: &Path, file: &MutantFile) -> String {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    let seeds = root.join("harness/rules/sources/seeds");
    let text_of = |seed: &str| -> String {
        std::fs::read_dir(&seeds)
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{seed}_"))
            })
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .unwrap_or_default()
    };
    let texts: BTreeMap<&str, String> = file
        .mutants
        .iter()
        .map(|m| (m.seed.as_str(), text_of(&m.seed)))
        .collect();
    let mut rows: BTreeMap<(String, String), (usize, usize, Vec<String>)> = BTreeMap::new();
    for m in &file.mutants {
        let section = section_of(
            texts.get(m.seed.as_str()).map_or("", String::as_str),
            &m.sentence,
        );
        let row = rows.entry((m.seed.clone(), section)).or_default();
        row.0 += 1;
        if m.caught_by.is_some() {
            row.1 += 1;
        } else {
            row.2.push(format!("`{}`", m.id));
        }
    }
    let realised = file.mutants.len();
    let caught = file
        .mutants
        .iter()
        .filter(|m| m.caught_by.is_some())
        .count();
    let mut out = String::new();
    let _ = writeln!(out, "\n## Contract mutants\n");
    let _ = writeln!(
        out,
        "One-sentence misreadings of seeds 000 and 001, written by reviewers who had read only the seeds, each realised as a defect of the reference (`{FILE}`). A mutant is caught when `pallas-conformance run --target scenarios/targets/reference.yaml --strict` with the kit's defaults (the embedded suite and the generated deployments it draws) does not pass; the `generated` test of `pallas-e2e` runs every row so and fails when a caught row passes or a survivor is caught. Survivors carry the reason they are not observable or not binding in `{FILE}`.\n"
    );
    let _ = writeln!(
        out,
        "**{caught}** of **{realised}** realised mutants caught ({}%).\n",
        (caught * 100).checked_div(realised).unwrap_or_default()
    );
    // Per set of misreadings (the id's prefix: each set was written at one time by one reviewer).
    let mut sets: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for m in &file.mutants {
        let set = sets
            .entry(m.id.split('-').next().unwrap_or_default())
            .or_default();
        set.0 += 1;
        if !m.not_binding {
            set.1 += 1;
            if m.caught_by.is_some() {
                set.2 += 1;
            }
        }
    }
    for (set, (n, binding, caught)) in &sets {
        let _ = writeln!(
            out,
            "- set `{set}-`: {n} realised, {binding} observable and binding, {caught} of those caught ({}%).",
            (caught * 100).checked_div(*binding).unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "\n| seed | section | realised | caught | survive |\n|---|---|---|---|---|"
    );
    for ((seed, section), (n, c, survivors)) in rows {
        let _ = writeln!(
            out,
            "| {seed} | {section} | {n} | {c} | {} |",
            if survivors.is_empty() {
                "—".to_owned()
            } else {
                survivors.join(", ")
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<MutantFile, MutantsError> {
        let dir = tempfile::tempdir().map_err(|source| {
            MutantsError::File(crate::defects::TableError::Read {
                path: "tempdir".into(),
                source,
            })
        })?;
        let tests = dir.path().join("tests");
        let _ = std::fs::create_dir_all(&tests);
        let _ = std::fs::write(tests.join("mutants.yaml"), text);
        load(dir.path())
    }

    const ROW: &str = "mutants:\n  - id: cm-01\n    seed: \"001\"\n    sentence: s\n    misreading: m\n    defect: cm-x\n";

    #[test]
    fn a_sentence_is_placed_under_its_section() {
        let seed = "# Title\n## Registry\nthe slug is the key\n## Health\nstatus is ok\n";
        assert_eq!(section_of(seed, "status is ok"), "Health");
        assert_eq!(section_of(seed, "the slug is the key"), "Registry");
        assert_eq!(section_of(seed, "nowhere"), "(not found)");
    }

    #[test]
    fn a_row_needs_exactly_one_catcher_or_reason() {
        assert!(load_text(&format!("{ROW}    caught_by: generated\n")).is_ok());
        let none = load_text(ROW).map(|_| ()).map_err(|e| e.to_string());
        assert!(
            none.as_ref()
                .is_err_and(|e| e.contains("`cm-01` needs exactly one")),
            "{none:?}"
        );
        let both = load_text(&format!("{ROW}    caught_by: generated\n    survives: r\n"));
        assert!(matches!(both, Err(MutantsError::Row { .. })));
        let scenarios_missing = load_text(&format!("{ROW}    caught_by: scenarios\n"));
        assert!(matches!(scenarios_missing, Err(MutantsError::Row { .. })));
    }

    #[test]
    fn a_misspelt_key_is_named_with_its_place() {
        let e = load_text(&format!("{ROW}    caugth_by: generated\n")).map(|_| ());
        let text = e.map_err(|e| e.to_string()).err().unwrap_or_default();
        assert!(
            text.contains("caugth_by") && text.contains("mutants.yaml"),
            "{text}"
        );
    }
}
