//! The scenario suite: where the scenarios live, the reference target profile pointed at a
//! prebuilt binary, and the standard a clean run must meet.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pallas_conformance::checks::{CheckResult, Verdict};
use pallas_conformance::runner::ScenarioResult;
use pallas_conformance::scenario::{self, Level, Scenario};
use pallas_conformance::target::{self, Target};

/// The environment variable that selects the reference's defects.
pub const DEFECTS_ENV: &str = "PALLAS_DEFECTS";

/// The reference target profile, relative to the workspace root.
pub const REFERENCE_PROFILE: &str = "scenarios/targets/reference.yaml";

/// Why the suite could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The target profile did not load.
    #[error("target profile {path}: {message}")]
    Profile {
        /// The profile file.
        path: PathBuf,
        /// The rendered diagnostics.
        message: String,
    },
    /// A scenario file did not load.
    #[error("{message}")]
    Scenario {
        /// The rendered diagnostics.
        message: String,
    },
}

/// The workspace root: the parent of this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// Folders of the contract packs of other systems (seeds 002–004): their scenarios require the
/// pack's capability and run against the pack mocks, never against the reference.
pub const PACK_FOLDERS: &[&str] = &["mcpctl", "percolate", "agentic-server"];

/// Every Pallas scenario file under `root/scenarios`, sorted: `targets/` folders, files whose
/// name starts with `_` (the harness's own discovery rule) and the pack folders are left out.
pub fn scenario_files(root: &Path) -> Vec<PathBuf> {
    let base = root.join("scenarios");
    scenario::discover(std::slice::from_ref(&base))
        .into_iter()
        .filter(|f| !PACK_FOLDERS.iter().any(|p| f.starts_with(base.join(p))))
        .collect()
}

/// The scenario files of one pack folder (`scenarios/<pack>/`), sorted.
pub fn pack_scenario_files(root: &Path, pack: &str) -> Vec<PathBuf> {
    scenario::discover(&[root.join("scenarios").join(pack)])
}

/// Loads one scenario file, with its diagnostics rendered as plain text on error.
pub fn load_scenario(path: &Path) -> Result<Scenario, SuiteError> {
    pallas_conformance::suite::load_file(path).map_err(|e| SuiteError::Scenario {
        message: e.render_plain(),
    })
}

/// A short, stable name for a scenario file: its path under `scenarios/` without the extension
/// (`health/degraded-refused`).
pub fn trial_name(root: &Path, file: &Path) -> String {
    let base = root.join("scenarios");
    let rel = file.strip_prefix(&base).unwrap_or(file);
    let text = rel.to_string_lossy().replace('\\', "/");
    text.strip_suffix(".yaml")
        .or_else(|| text.strip_suffix(".yml"))
        .unwrap_or(&text)
        .to_owned()
}

/// The reference target profile, changed to launch `binary` directly (no build step) with
/// `PALLAS_DEFECTS` set to `defects` joined by commas (empty for the clean reference, so a value
/// in the caller's environment never leaks into a clean run).
pub fn do_nothing_target(root: &Path, mocks_binary: &Path) -> Result<Target, SuiteError> {
    let path = root.join(DO_NOTHING_PROFILE);
    let mut target = target::load(&path).map_err(|e| SuiteError::Profile {
        path: path.clone(),
        message: e.render_plain(),
    })?;
    target.spec.build.clear();
    let binary = mocks_binary.display().to_string();
    match target.spec.command.first_mut() {
        Some(program) => *program = binary,
        None => target.spec.command.push(binary),
    }
    Ok(target)
}

/// The do-nothing target's profile, relative to the workspace root.
pub const DO_NOTHING_PROFILE: &str = "tests/targets/do-nothing.yaml";

/// Checks a do-nothing bridge cannot have earned: each needs a registry entry, a model request,
/// a downstream call, a probe, a scrape or a cancellation that the do-nothing target never
/// produces. A `pass` of any of them is a vacuous verdict.
pub fn premise_absent_on_do_nothing(id: &str) -> bool {
    let family = pallas_conformance::catalog::family_of(id);
    (matches!(family, "REG" | "MET") && id != "REG-002")
        || matches!(
            id,
            "MSG-002"
                | "MSG-003"
                | "MSG-004"
                | "MSG-005"
                | "PROG-001"
                | "PROG-006"
                | "PROG-008"
                | "PROG-010"
                | "AUTH-001"
                | "AUTH-002"
                | "AUTH-003"
                | "AUTH-004"
                | "AUTH-005"
                | "AUTH-006"
                | "AUTH-008"
                | "HEALTH-007"
        )
}

/// The reference target profile, changed to launch `binary` directly (no build step) with
/// `PALLAS_DEFECTS` set to `defects` joined by commas (empty for the clean reference, so a value
/// in the caller's environment never leaks into a clean run).
pub fn reference_target(
    root: &Path,
    binary: &Path,
    defects: &[&str],
) -> Result<Target, SuiteError> {
    let path = root.join(REFERENCE_PROFILE);
    let mut target = target::load(&path).map_err(|e| SuiteError::Profile {
        path: path.clone(),
        message: e.render_plain(),
    })?;
    target.spec.build.clear();
    let binary = binary.display().to_string();
    match target.spec.command.first_mut() {
        Some(program) => *program = binary,
        None => target.spec.command.push(binary),
    }
    target
        .env_overrides
        .insert(DEFECTS_ENV.to_owned(), defects.join(","));
    Ok(target)
}

/// Whether a scenario failed to start only because the implementation could not bind a port the
/// harness had found free (another process took it in between): a start-up race of the test
/// machine, not a verdict on the implementation.
pub fn port_collision(result: &ScenarioResult) -> bool {
    result.checks.is_empty()
        && result.error.as_deref().is_some_and(|e| {
            e.contains("did not become ready") && e.contains("Address already in use")
        })
}

/// Warnings a clean run may show: check ID → why the reference warns there. Only SHOULD checks
/// may be listed (a broken MUST is never acceptable).
pub type AllowedWarnings = BTreeMap<String, String>;

/// Totals of a scenario's checks, for the suite's summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Checks that passed.
    pub pass: usize,
    /// Allowed warnings.
    pub warn: usize,
    /// Automatic checks with nothing to judge in the scenario.
    pub skip: usize,
}

impl Tally {
    /// Every check counted.
    pub fn total(&self) -> usize {
        self.pass + self.warn + self.skip
    }

    /// Adds another tally.
    pub fn add(&mut self, other: Tally) {
        self.pass += other.pass;
        self.warn += other.warn;
        self.skip += other.skip;
    }
}

/// Judges a scenario run against the clean reference's standard: no setup or harness error, not
/// skipped, at least one check, every declared check passes; a warning only on a SHOULD check
/// listed in `allowed`; a skip only on an automatic check (one the scenario did not declare).
/// Returns the tally, or every problem found, one per line.
pub fn judge(result: &ScenarioResult, allowed: &AllowedWarnings) -> Result<Tally, String> {
    let mut problems = Vec::new();
    if let Some(e) = &result.error {
        problems.push(format!("scenario error: {e}"));
    }
    if let Some(why) = &result.skipped {
        problems.push(format!("scenario skipped: {why}"));
    }
    for step in &result.steps {
        if let Some(e) = &step.error {
            problems.push(format!("step `{}` could not run: {e}", step.name));
        }
    }
    if result.checks.is_empty() && result.skipped.is_none() && result.error.is_none() {
        problems.push("no check was evaluated".to_owned());
    }
    let mut tally = Tally::default();
    for c in &result.checks {
        match c.verdict {
            Verdict::Pass => tally.pass += 1,
            Verdict::Warn if c.level != Level::Must && allowed.contains_key(&c.id) => {
                tally.warn += 1;
            }
            Verdict::Skip if c.location.is_empty() => tally.skip += 1,
            Verdict::Warn => problems.push(describe(c, "a warning not listed in allowed_warnings")),
            Verdict::Skip => problems.push(describe(c, "a declared check judged nothing")),
            Verdict::Fail | Verdict::Error => problems.push(describe(c, c.verdict.as_str())),
            // A MAY the reference does not implement is information, not a problem.
            Verdict::Info => tally.pass += 1,
            // The reference exercises every premise.
            Verdict::Inconclusive => problems.push(describe(c, c.verdict.as_str())),
        }
    }
    if problems.is_empty() {
        Ok(tally)
    } else {
        let mut text = format!("{} ({}):\n", result.id, result.file);
        for p in &problems {
            let _ = writeln!(text, "  - {p}");
        }
        if let Some(tail) = &result.output_tail {
            let _ = writeln!(text, "implementation output (tail):\n{tail}");
        }
        Err(text)
    }
}

/// One line about a check: ID, verdict, title, location, reason and evidence.
pub fn describe(c: &CheckResult, what: &str) -> String {
    let mut line = format!("{} [{}] {}: {}", c.id, c.level.as_str(), what, c.title);
    if !c.location.is_empty() {
        let _ = write!(line, " ({})", c.location);
    }
    if !c.reason.is_empty() {
        let _ = write!(line, " — {}", c.reason);
    }
    for e in c.evidence.iter().take(3) {
        let _ = write!(line, "\n      {}", e.what);
        if let Some(x) = &e.expected {
            let _ = write!(line, "; expected {x}");
        }
        if let Some(s) = &e.seen {
            let _ = write!(line, "; seen {s}");
        }
    }
    line
}
