//! Full-verdict baselines: every entry's verdict of a certification run (pass, warn, fail, info,
//! inconclusive, error, skip with its reason), not only its failures, so that any change of any
//! verdict on a certified implementation — a new warn, a pass that became inconclusive, a new
//! skip — is seen. `pallas-conformance verdicts write` makes one from JSON reports (several runs
//! merge: an entry seen with different verdicts records each of them), `verdicts check` compares
//! a report with it and prints the differences a reviewer reads at once.
//!
//! An entry is named `"{check ID} {title}"` within its scenario (`#2`, `#3`… after a repeated
//! name), so a diff says what the entry judges, not where it sits in a file.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scenario::{InvalidFiles, from_yaml};

/// The verdicts of one implementation's certification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictBaseline {
    /// The target profile's name.
    pub target: String,
    /// The kit version that made it.
    pub kit_version: String,
    /// The digest of the kit's embedded suite when it was made.
    pub suite_digest: String,
    /// Every scenario of the run, by id.
    pub scenarios: BTreeMap<String, ScenarioVerdicts>,
}

/// One scenario's verdicts: skipped as a whole (with the reason), or each entry's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioVerdicts {
    /// Why the whole scenario did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Each entry's verdict.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub verdicts: BTreeMap<String, Expected>,
}

/// An entry's recorded verdict: one, or each of those seen across the runs merged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expected {
    /// The verdict every run gave.
    One(String),
    /// The verdicts the merged runs gave (the entry depends on timing); any of them matches.
    AnyOf(Vec<String>),
}

impl Expected {
    fn matches(&self, seen: &str) -> bool {
        match self {
            Self::One(v) => v == seen,
            Self::AnyOf(vs) => vs.iter().any(|v| v == seen),
        }
    }

    fn show(&self) -> String {
        match self {
            Self::One(v) => v.clone(),
            Self::AnyOf(vs) => vs.join(" | "),
        }
    }

    fn with(self, seen: String) -> Self {
        if self.matches(&seen) {
            return self;
        }
        let mut all = match self {
            Self::One(v) => vec![v],
            Self::AnyOf(vs) => vs,
        };
        all.push(seen);
        all.sort();
        Self::AnyOf(all)
    }
}

/// A report or baseline that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum VerdictsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A JSON report that is not one.
    #[error("{path} is not a pallas-conformance JSON report: {why}")]
    NotAReport {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: NotAReport,
    },
    /// Reports of different targets or kits merged into one baseline.
    #[error("{path}: {why}")]
    Mismatch {
        /// The report that does not fit.
        path: PathBuf,
        /// What differs.
        why: CannotMerge,
    },
    /// A baseline file that is not one.
    #[error(transparent)]
    Baseline(#[from] InvalidFiles),
}

/// What makes a JSON value not a pallas-conformance report.
#[derive(Debug, thiserror::Error)]
pub enum NotAReport {
    /// Not JSON at all.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// Another `format`.
    #[error("its `format` is not `pallas-conformance/report/v1`")]
    Format,
    /// No `scenarios` list.
    #[error("it has no `scenarios` list")]
    NoScenarios,
    /// A scenario without an `id`.
    #[error("a scenario without an `id`")]
    NoId,
    /// No report at all.
    #[error("no report given")]
    NoneGiven,
}

/// Why one run's verdicts cannot merge into another's.
#[derive(Debug, thiserror::Error)]
pub enum CannotMerge {
    /// Another target or kit version.
    #[error(
        "a report of `{theirs}` (kit {their_kit}) cannot merge into one of `{ours}` (kit {our_kit})"
    )]
    Target {
        /// The target merged in.
        theirs: String,
        /// Its kit version.
        their_kit: String,
        /// The target merged into.
        ours: String,
        /// Its kit version.
        our_kit: String,
    },
    /// Another suite.
    #[error("suite sha256:{theirs} differs from sha256:{ours}: merge only runs of one suite")]
    Suite {
        /// The digest of the suite merged in.
        theirs: String,
        /// The digest of the suite merged into.
        ours: String,
    },
}

/// The verdict an entry shows in a baseline: `skip: reason` keeps the reason.
fn verdict_of(check: &Value) -> String {
    let verdict = check["verdict"].as_str().unwrap_or("?");
    match (verdict, check["reason"].as_str()) {
        ("skip", Some(r)) if !r.is_empty() => format!("skip: {r}"),
        _ => verdict.to_owned(),
    }
}

impl VerdictBaseline {
    /// The verdicts of one JSON report (`run --report-json`).
    pub fn from_report(report: &Value) -> Result<Self, NotAReport> {
        if report["format"].as_str() != Some("pallas-conformance/report/v1") {
            return Err(NotAReport::Format);
        }
        let scenarios = report["scenarios"]
            .as_array()
            .ok_or(NotAReport::NoScenarios)?;
        let mut out = Self {
            target: report["target"].as_str().unwrap_or_default().to_owned(),
            kit_version: report["kit_version"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            suite_digest: report["suite"]["digest"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            scenarios: BTreeMap::new(),
        };
        for s in scenarios {
            let id = s["id"].as_str().ok_or(NotAReport::NoId)?;
            let mut sv = ScenarioVerdicts {
                skipped: s["skipped"].as_str().map(str::to_owned),
                verdicts: BTreeMap::new(),
            };
            if sv.skipped.is_none() {
                for c in s["checks"].as_array().into_iter().flatten() {
                    let name = format!(
                        "{} {}",
                        c["id"].as_str().unwrap_or("?"),
                        c["title"].as_str().unwrap_or_default()
                    );
                    let mut key = name.clone();
                    let mut n = 1;
                    while sv.verdicts.contains_key(&key) {
                        n += 1;
                        key = format!("{name} #{n}");
                    }
                    sv.verdicts.insert(key, Expected::One(verdict_of(c)));
                }
            }
            out.scenarios.insert(id.to_owned(), sv);
        }
        Ok(out)
    }

    /// Reads JSON reports of one target and kit and merges their verdicts.
    pub fn from_reports(paths: &[PathBuf]) -> Result<Self, VerdictsError> {
        let mut merged: Option<Self> = None;
        for path in paths {
            let report = read_report(path)?;
            let b = Self::from_report(&report).map_err(|why| VerdictsError::NotAReport {
                path: path.clone(),
                why,
            })?;
            merged = Some(match merged {
                None => b,
                Some(m) => m.merge(b).map_err(|why| VerdictsError::Mismatch {
                    path: path.clone(),
                    why,
                })?,
            });
        }
        merged.ok_or_else(|| VerdictsError::NotAReport {
            path: PathBuf::from("(none)"),
            why: NotAReport::NoneGiven,
        })
    }

    /// This baseline with another run's verdicts: an entry seen with different verdicts keeps
    /// each of them.
    pub fn merge(mut self, other: Self) -> Result<Self, CannotMerge> {
        if self.target != other.target || self.kit_version != other.kit_version {
            return Err(CannotMerge::Target {
                theirs: other.target,
                their_kit: other.kit_version,
                ours: self.target,
                our_kit: self.kit_version,
            });
        }
        if self.suite_digest != other.suite_digest {
            return Err(CannotMerge::Suite {
                theirs: other.suite_digest,
                ours: self.suite_digest,
            });
        }
        for (id, theirs) in other.scenarios {
            let ours = self.scenarios.entry(id).or_default();
            if ours.skipped.is_none() {
                ours.skipped = theirs.skipped;
            }
            for (key, v) in theirs.verdicts {
                let seen = match v {
                    Expected::One(v) => vec![v],
                    Expected::AnyOf(vs) => vs,
                };
                for v in seen {
                    let e = match ours.verdicts.remove(&key) {
                        Some(e) => e.with(v),
                        None => Expected::One(v),
                    };
                    ours.verdicts.insert(key.clone(), e);
                }
            }
        }
        Ok(self)
    }

    /// Parses a baseline file.
    pub fn parse(file: &str, text: &str) -> Result<Self, VerdictsError> {
        from_yaml(file, text).map_err(|e| InvalidFiles { errors: vec![e] }.into())
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Self, VerdictsError> {
        let text = std::fs::read_to_string(path).map_err(|source| VerdictsError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// The baseline as YAML, with a header saying what wrote it.
    pub fn to_yaml(&self) -> String {
        let body = serde_saphyr::to_string(self).unwrap_or_default();
        format!(
            "# Every verdict of `{}`'s certification, written by `pallas-conformance verdicts write`\n\
             # from its JSON report(s). `verdicts check` fails on any difference. Do not edit by hand.\n{body}",
            self.target
        )
    }

    /// What differs between this baseline (expected) and a run's verdicts (seen).
    pub fn diff(&self, seen: &Self) -> Vec<Difference> {
        let mut out = Vec::new();
        let ids: std::collections::BTreeSet<&String> =
            self.scenarios.keys().chain(seen.scenarios.keys()).collect();
        for id in ids {
            let (want, got) = (self.scenarios.get(id), seen.scenarios.get(id));
            let (want, got) = match (want, got) {
                (Some(w), Some(g)) => (w, g),
                (Some(_), None) => {
                    out.push(Difference::new(id, None, "in the baseline", "not run"));
                    continue;
                }
                (None, Some(g)) => {
                    let what = match &g.skipped {
                        Some(r) => format!("skip: {r}"),
                        None => format!("{} entries", g.verdicts.len()),
                    };
                    out.push(Difference::new(id, None, "not in the baseline", &what));
                    continue;
                }
                (None, None) => continue,
            };
            if want.skipped != got.skipped {
                let show = |s: &Option<String>| match s {
                    Some(r) => format!("skip: {r}"),
                    None => "ran".to_owned(),
                };
                out.push(Difference::new(
                    id,
                    None,
                    &show(&want.skipped),
                    &show(&got.skipped),
                ));
                continue;
            }
            let keys: std::collections::BTreeSet<&String> =
                want.verdicts.keys().chain(got.verdicts.keys()).collect();
            for key in keys {
                match (want.verdicts.get(key), got.verdicts.get(key)) {
                    (Some(w), Some(Expected::One(g))) if w.matches(g) => {}
                    (Some(w), Some(g)) => {
                        out.push(Difference::new(id, Some(key), &w.show(), &g.show()));
                    }
                    (Some(w), None) => {
                        out.push(Difference::new(id, Some(key), &w.show(), "(no such entry)"));
                    }
                    (None, Some(g)) => {
                        out.push(Difference::new(id, Some(key), "(no such entry)", &g.show()));
                    }
                    (None, None) => {}
                }
            }
        }
        out
    }
}

/// One verdict that is not what the baseline records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The scenario.
    pub scenario: String,
    /// The entry (`None`: the scenario as a whole).
    pub entry: Option<String>,
    /// What the baseline records.
    pub expected: String,
    /// What the run gave.
    pub seen: String,
}

impl Difference {
    fn new(scenario: &str, entry: Option<&String>, expected: &str, seen: &str) -> Self {
        Self {
            scenario: scenario.to_owned(),
            entry: entry.cloned(),
            expected: expected.to_owned(),
            seen: seen.to_owned(),
        }
    }
}

/// The differences as a reviewer reads them: one block per scenario, `expected → seen` per entry.
pub fn render(diffs: &[Difference]) -> String {
    let mut out = String::new();
    let mut last: Option<&str> = None;
    for d in diffs {
        if last != Some(d.scenario.as_str()) {
            let _ = writeln!(out, "{}", d.scenario);
            last = Some(&d.scenario);
        }
        match &d.entry {
            Some(e) => {
                let _ = writeln!(out, "  {e}\n      {} → {}", d.expected, d.seen);
            }
            None => {
                let _ = writeln!(out, "  (the scenario) {} → {}", d.expected, d.seen);
            }
        }
    }
    out
}

fn read_report(path: &Path) -> Result<Value, VerdictsError> {
    let text = std::fs::read_to_string(path).map_err(|source| VerdictsError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| VerdictsError::NotAReport {
        path: path.to_owned(),
        why: NotAReport::Json(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(verdict: &str) -> Value {
        json!({
            "format": "pallas-conformance/report/v1",
            "target": "agno",
            "kit_version": "0.1.0",
            "suite": {"source": "files", "digest": "abc"},
            "scenarios": [
                {"id": "progress-failed-tool", "verdict": "warn", "checks": [
                    {"id": "PROG-099", "title": "failed is never completed", "verdict": verdict, "reason": "x"},
                    {"id": "PROG-099", "title": "failed is never completed", "verdict": "pass"},
                    {"id": "PROG-008", "title": "seed wording", "verdict": "skip", "reason": "the target does not claim `pallas_progress`"}
                ]},
                {"id": "bearer-x", "verdict": "skip", "skipped": "the target does not claim `bearer`", "checks": []}
            ]
        })
    }

    #[test]
    fn every_entry_is_recorded_with_skip_reasons_and_repeated_names_numbered() {
        let b = VerdictBaseline::from_report(&report("warn")).expect("a report");
        let s = &b.scenarios["progress-failed-tool"];
        assert_eq!(
            s.verdicts["PROG-099 failed is never completed"],
            Expected::One("warn".into())
        );
        assert_eq!(
            s.verdicts["PROG-099 failed is never completed #2"],
            Expected::One("pass".into())
        );
        assert_eq!(
            s.verdicts["PROG-008 seed wording"],
            Expected::One("skip: the target does not claim `pallas_progress`".into())
        );
        assert_eq!(
            b.scenarios["bearer-x"].skipped.as_deref(),
            Some("the target does not claim `bearer`")
        );
    }

    #[test]
    fn one_changed_verdict_is_one_readable_difference() {
        let base = VerdictBaseline::from_report(&report("warn")).expect("a report");
        let now = VerdictBaseline::from_report(&report("pass")).expect("a report");
        assert!(base.diff(&base).is_empty());
        let diffs = base.diff(&now);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(
            render(&diffs),
            "progress-failed-tool\n  PROG-099 failed is never completed\n      warn → pass\n"
        );
    }

    #[test]
    fn a_new_skip_a_missing_scenario_and_a_new_entry_are_differences() {
        let base = VerdictBaseline::from_report(&report("warn")).expect("a report");
        let mut now = base.clone();
        now.scenarios
            .get_mut("progress-failed-tool")
            .expect("scenario")
            .verdicts
            .insert("PROG-099 new".into(), Expected::One("pass".into()));
        now.scenarios.remove("bearer-x");
        let shown = render(&base.diff(&now));
        assert!(
            shown.contains("PROG-099 new\n      (no such entry) → pass"),
            "{shown}"
        );
        assert!(
            shown.contains("bearer-x\n  (the scenario) in the baseline → not run"),
            "{shown}"
        );
    }

    #[test]
    fn merged_runs_record_each_verdict_seen_and_accept_either() {
        let a = VerdictBaseline::from_report(&report("warn")).expect("a report");
        let b = VerdictBaseline::from_report(&report("pass")).expect("a report");
        let merged = a.clone().merge(b.clone()).expect("one target");
        assert_eq!(
            merged.scenarios["progress-failed-tool"].verdicts["PROG-099 failed is never completed"],
            Expected::AnyOf(vec!["pass".into(), "warn".into()])
        );
        assert!(merged.diff(&a).is_empty() && merged.diff(&b).is_empty());
        let fail = VerdictBaseline::from_report(&report("fail")).expect("a report");
        assert_eq!(merged.diff(&fail).len(), 1);
    }

    #[test]
    fn the_yaml_round_trips_and_reports_of_another_target_do_not_merge() {
        let b = VerdictBaseline::from_report(&report("warn")).expect("a report");
        let text = b.to_yaml();
        assert_eq!(VerdictBaseline::parse("b.yaml", &text).expect("parses"), b);
        let mut other = b.clone();
        other.target = "mastra".into();
        let e = b.clone().merge(other).expect_err("another target");
        assert_eq!(
            e.to_string(),
            "a report of `mastra` (kit 0.1.0) cannot merge into one of `agno` (kit 0.1.0)"
        );
        let mut other = b.clone();
        other.suite_digest = "def".into();
        let e = b.clone().merge(other).expect_err("another suite");
        assert_eq!(
            e.to_string(),
            "suite sha256:def differs from sha256:abc: merge only runs of one suite"
        );
        let e = VerdictBaseline::from_report(&json!({"format": "x"})).expect_err("not a report");
        assert_eq!(
            e.to_string(),
            "its `format` is not `pallas-conformance/report/v1`"
        );
        assert!(VerdictBaseline::parse("b.yaml", "target: x\nbogus: 1\n").is_err());
    }
}
