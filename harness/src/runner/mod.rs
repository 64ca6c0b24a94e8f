//! The runner: scenarios in parallel against a target, each with its own mocks, deployment and
//! implementation process; per-step timeouts and a per-scenario deadline. It returns data and
//! never prints — reporters consume [`RunResult`] and [`RunEvent`]s.

mod actions;
mod baseline;
mod exec;
mod scenario_run;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use baseline::{Baseline, BaselineError};

use crate::checks::{CheckResult, Grading, Verdict};
use crate::exit;
use crate::scenario::Scenario;
use crate::target::Target;

/// Options of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scenarios at once (default: number of cores).
    pub jobs: usize,
    /// Verdict grading (`--strict`, `--lenient`).
    pub grading: Grading,
    /// Only scenarios whose id, file or tag matches one of these globs.
    pub filters: Vec<String>,
    /// Attach mode: an implementation someone already runs.
    pub registry_url: Option<String>,
    /// Default step timeout (a scenario's `timeouts.step` wins).
    pub step_timeout: Duration,
    /// Default scenario deadline (a scenario's `timeouts.scenario` wins).
    pub scenario_deadline: Duration,
    /// Expected failures.
    pub baseline: Option<Baseline>,
    /// Keep run directories here instead of temporary ones.
    pub keep_dir: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            grading: Grading::default(),
            filters: Vec::new(),
            registry_url: None,
            step_timeout: Duration::from_secs(10),
            scenario_deadline: Duration::from_secs(60),
            baseline: None,
            keep_dir: None,
        }
    }
}

/// The outcome of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    /// Scenario id.
    pub id: String,
    /// Title.
    pub title: String,
    /// File.
    pub file: String,
    /// Overall verdict: the worst of its checks (error > fail > warn > pass > skip).
    pub verdict: Verdict,
    /// Every check.
    pub checks: Vec<CheckResult>,
    /// Wall time.
    pub duration_ms: f64,
    /// A setup or harness error (mocks, deployment, start, deadline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the whole scenario was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Tail of the implementation's stdout/stderr, kept when something failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// Steps that ran: name, duration, error.
    pub steps: Vec<StepSummary>,
    /// The command that runs just this scenario against the same target.
    #[serde(default)]
    pub reproduce: String,
}

/// The command line that reruns one scenario file against a target profile.
pub fn reproduce_command(scenario_file: &std::path::Path, profile: &std::path::Path) -> String {
    format!(
        "cargo run -p pallas-conformance -- run {} --target {}",
        scenario_file.display(),
        profile.display()
    )
}

/// One step, as reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct StepSummary {
    /// Name.
    pub name: String,
    /// Duration.
    pub elapsed_ms: f64,
    /// Error, if it could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A baselined failure that now passes.
#[derive(Debug, Clone, Serialize)]
pub struct StaleEntry {
    /// Scenario id.
    pub scenario: String,
    /// Check id.
    pub check: String,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Target name.
    pub target: String,
    /// Scenarios, in input order.
    pub scenarios: Vec<ScenarioResult>,
    /// Stale baseline entries.
    pub stale: Vec<StaleEntry>,
    /// Wall time.
    pub duration_ms: f64,
    /// A run-level error (e.g. the build step failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Counts by verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Pass.
    pub pass: usize,
    /// Fail.
    pub fail: usize,
    /// Warn.
    pub warn: usize,
    /// Skip.
    pub skip: usize,
    /// Error.
    pub error: usize,
    /// Inconclusive: the premise was not observed.
    pub inconclusive: usize,
    /// Informational: a MAY not implemented.
    pub info: usize,
    /// Failures listed in the baseline.
    pub baselined: usize,
}

impl Counts {
    /// Adds one check.
    pub fn add(&mut self, c: &CheckResult) {
        match c.verdict {
            Verdict::Pass => self.pass += 1,
            Verdict::Fail if c.baselined => self.baselined += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Warn => self.warn += 1,
            Verdict::Skip => self.skip += 1,
            Verdict::Error => self.error += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
            Verdict::Info => self.info += 1,
        }
    }
}

impl RunResult {
    /// Counts over every check of every scenario.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for s in &self.scenarios {
            for k in &s.checks {
                c.add(k);
            }
        }
        c
    }

    /// Counts per check family.
    pub fn by_family(&self) -> BTreeMap<String, Counts> {
        let mut m: BTreeMap<String, Counts> = BTreeMap::new();
        for s in &self.scenarios {
            for k in &s.checks {
                m.entry(crate::catalog::family_of(&k.id).to_owned())
                    .or_default()
                    .add(k);
            }
        }
        m
    }

    /// The named exit code: 3 on a harness error, else 1 on a failure or stale baseline,
    /// else 0.
    pub fn exit_code(&self) -> u8 {
        let c = self.counts();
        if self.error.is_some() || c.error > 0 || self.scenarios.iter().any(|s| s.error.is_some()) {
            exit::HARNESS_ERROR
        } else if c.fail > 0 || !self.stale.is_empty() {
            exit::CHECK_FAILED
        } else {
            exit::SUCCESS
        }
    }
}

/// Something that happened during a run, for live reporting.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// The run starts with this many scenarios.
    Started {
        /// Scenario count.
        total: usize,
    },
    /// A scenario finished (`done` of `total`).
    ScenarioFinished {
        /// How many finished so far.
        done: usize,
        /// Scenario count.
        total: usize,
        /// Its result.
        result: Box<ScenarioResult>,
    },
}

fn matches_filter(s: &Scenario, filters: &[String]) -> bool {
    if filters.is_empty() {
        return true;
    }
    filters
        .iter()
        .filter_map(|f| globset::Glob::new(f).ok().map(|g| g.compile_matcher()))
        .any(|m| {
            m.is_match(&s.spec.id)
                || m.is_match(&s.path)
                || s.spec.tags.iter().any(|t| m.is_match(t))
        })
}

/// Runs scenarios against a target and returns the results.
pub async fn run(scenarios: &[Scenario], target: &Target, opts: &RunOptions) -> RunResult {
    run_with_events(scenarios, target, opts, |_| {}).await
}

/// Like [`run`], calling `on_event` as scenarios finish (in finishing order).
pub async fn run_with_events(
    scenarios: &[Scenario],
    target: &Target,
    opts: &RunOptions,
    mut on_event: impl FnMut(&RunEvent),
) -> RunResult {
    let started = Instant::now();
    let selected: Vec<Scenario> = scenarios
        .iter()
        .filter(|s| matches_filter(s, &opts.filters))
        .cloned()
        .collect();
    let total = selected.len();
    on_event(&RunEvent::Started { total });
    if opts.registry_url.is_none()
        && !target.spec.build.is_empty()
        && let Err(e) = {
            let t = target.clone();
            tokio::task::spawn_blocking(move || t.build())
                .await
                .unwrap_or_else(|e| Err(e.to_string()))
        }
    {
        return RunResult {
            target: target.spec.name.clone(),
            scenarios: Vec::new(),
            stale: Vec::new(),
            duration_ms: ms(started),
            error: Some(format!("build failed: {e}")),
        };
    }
    let target = Arc::new(target.clone());
    let opts_arc = Arc::new(opts.clone());
    let semaphore = Arc::new(tokio::sync::Semaphore::new(opts.jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (i, s) in selected.iter().cloned().enumerate() {
        let (t, o, sem) = (target.clone(), opts_arc.clone(), semaphore.clone());
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, scenario_run::run_one(&s, &t, &o).await)
        });
    }
    let mut results: Vec<Option<ScenarioResult>> = vec![None; total];
    let mut done = 0;
    while let Some(joined) = set.join_next().await {
        let Ok((i, mut result)) = joined else {
            continue;
        };
        if let Some(b) = &opts.baseline {
            b.apply(&mut result);
        }
        done += 1;
        on_event(&RunEvent::ScenarioFinished {
            done,
            total,
            result: Box::new(result.clone()),
        });
        results[i] = Some(result);
    }
    let scenarios: Vec<ScenarioResult> = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.unwrap_or_else(|| ScenarioResult {
                id: selected[i].spec.id.clone(),
                title: selected[i].spec.title.clone(),
                file: selected[i].path.display().to_string(),
                verdict: Verdict::Error,
                checks: Vec::new(),
                duration_ms: 0.0,
                error: Some("the scenario task panicked".into()),
                skipped: None,
                output_tail: None,
                steps: Vec::new(),
                reproduce: reproduce_command(&selected[i].path, &target.path),
            })
        })
        .collect();
    let mut scenarios = scenarios;
    for (s, spec) in scenarios.iter_mut().zip(&selected) {
        s.reproduce = reproduce_command(&spec.path, &target.path);
    }
    let stale = opts
        .baseline
        .as_ref()
        .map(|b| b.stale(&scenarios))
        .unwrap_or_default();
    RunResult {
        target: target.spec.name.clone(),
        scenarios,
        stale,
        duration_ms: ms(started),
        error: None,
    }
}

pub(crate) fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The overall verdict of a list of checks.
pub fn overall(checks: &[CheckResult], error: bool) -> Verdict {
    if error || checks.iter().any(|c| c.verdict == Verdict::Error) {
        Verdict::Error
    } else if checks
        .iter()
        .any(|c| c.verdict == Verdict::Fail && !c.baselined)
    {
        Verdict::Fail
    } else if checks.iter().any(|c| c.verdict == Verdict::Warn) {
        Verdict::Warn
    } else if checks.iter().any(|c| c.verdict == Verdict::Pass)
        || checks.iter().any(|c| c.baselined)
    {
        Verdict::Pass
    } else if checks.iter().any(|c| c.verdict == Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else {
        Verdict::Skip
    }
}
