//! The runner: scenarios in parallel against a target, each with its own mocks, deployment and
//! implementation process; per-step timeouts and a per-scenario deadline. It returns data and
//! never prints. It emits [`RunEvent`]s (documented in `harness/docs/events.md`); reporters
//! render what [`RunResult::from_events`] rebuilds from them.

mod actions;
mod baseline;
mod declared;
mod events;
mod exec;
mod judge;
mod merge;
mod overall;
mod partition;
mod scenario_run;
pub mod schedule;
mod serial;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use baseline::{Baseline, BaselineError};
pub use declared::Declared;
pub use events::{
    BuildFinished, BuildStarted, EVENTS_SCHEMA, EventsError, KIT_VERSION, RunEvent, RunFinished,
    RunPartition, RunStarted, ScenarioFinished, ScenarioStarted, StepDone, VerdictEvent, events_of,
    parse_jsonl, scenario_events, to_jsonl,
};
pub use merge::{MergeError, Merged, merge_streams, partition_warnings};
pub use overall::{binds_a_pallas_only, overall};
pub use partition::Partition;

use crate::checks::{CheckResult, Grading, Verdict};
use crate::exit;
use crate::scenario::Scenario;
use crate::target::Target;

/// An error of the harness that stops a run or a scenario before its verdicts (as opposed to a
/// verdict, or to a step that failed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HarnessError {
    /// The target's `build` command failed.
    #[error(transparent)]
    Build(#[from] crate::target::BuildError),
    /// The build's thread ended abnormally.
    #[error("{0}")]
    BuildStopped(#[source] tokio::task::JoinError),
    /// A serial scenario's fixed port is taken.
    #[error(
        "port {port} (seed 001's default registry port) is not free ({0}): \
         this serial scenario needs it; stop what listens there and run it again",
        port = crate::scenario::DEFAULT_REGISTRY_PORT
    )]
    PortTaken(#[source] std::io::Error),
    /// The scenario's mocks failed to start.
    #[error("mock ecosystem did not start: {0}")]
    Mocks(#[source] pallas_mocks::MockError),
    /// The scenario's mocks did not start in time.
    #[error("mock ecosystem did not start within 10s")]
    MocksTimedOut,
    /// The checks' thread ended abnormally.
    #[error("judging stopped: {0}")]
    JudgingStopped(#[source] tokio::task::JoinError),
    /// The checks outlasted the time left (whole seconds, at least one).
    #[error(
        "judging did not finish within the {} left of the scenario deadline; no verdicts",
        humantime::format_duration(*.0)
    )]
    JudgingTimedOut(Duration),
}

/// Options of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scenarios at once (default: number of cores).
    pub jobs: usize,
    /// Ignore `jobs`: one scenario per core always, more (up to six per core) while the CPU is
    /// mostly idle (what the command line does without `--jobs`; [`schedule`]).
    pub adaptive_jobs: bool,
    /// Where scenario durations are remembered between runs, so the longest start first.
    pub durations: Option<PathBuf>,
    /// Durations known before the run (a report of an earlier one, `--durations-from`); those
    /// remembered in `durations` win.
    pub durations_from: Option<PathBuf>,
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
    /// Read limits set on the command line (they win over the profile's).
    pub limits: crate::client::LimitOverrides,
    /// Run only this share of the selected scenarios (`--partition K/N`).
    pub partition: Option<Partition>,
    /// Where the scenarios came from (the embedded suite or files), for the reports.
    pub suite: crate::suite::SuiteSource,
    /// The generated deployments drawn among the scenarios (their seed), for the reports.
    pub generated: Option<crate::generated::GeneratedInfo>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            adaptive_jobs: false,
            durations: None,
            durations_from: None,
            grading: Grading::default(),
            filters: Vec::new(),
            registry_url: None,
            step_timeout: Duration::from_secs(10),
            scenario_deadline: Duration::from_secs(60),
            baseline: None,
            keep_dir: None,
            limits: crate::client::LimitOverrides::default(),
            partition: None,
            suite: crate::suite::SuiteSource::default(),
            generated: None,
        }
    }
}

/// The outcome of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Where its time went; absent when it did not run to judging (skipped, a setup error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// What the implementation declared on the wire here (the run's sum is the report's
    /// `declared`).
    #[serde(skip)]
    pub declared: Declared,
}

/// Where a scenario's wall time went, in milliseconds, phase by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Starting the scenario's mock servers.
    pub mocks_ms: f64,
    /// Rendering the deployment and spawning the implementation.
    pub start_ms: f64,
    /// Waiting until the implementation is ready.
    pub ready_ms: f64,
    /// The steps.
    pub steps_ms: f64,
    /// Collecting the observations and stopping the implementation.
    pub stop_ms: f64,
    /// Judging.
    pub judge_ms: f64,
}

/// The command line that reruns one scenario file against a target profile.
pub fn reproduce_command(scenario_file: &std::path::Path, profile: &std::path::Path) -> String {
    format!(
        "cargo run -p pallas-conformance -- run {} --target {}",
        scenario_file.display(),
        profile.display()
    )
}

/// The command that reruns one scenario: its file with `cargo run` for files on disk, its id in
/// the embedded suite (`pallas-conformance run --filter ID`) for an embedded run.
fn reproduce(s: &Scenario, profile: &std::path::Path, opts: &RunOptions) -> String {
    // A generated deployment is drawn again by the same seed, and picked out by its id.
    if let Some(g) = opts.generated.as_ref().filter(|g| g.not_run.is_none())
        && s.spec.tags.iter().any(|t| t == crate::generated::TAG)
    {
        return format!(
            "pallas-conformance run --target {} --generated-seed {} --generated {} --filter {}",
            profile.display(),
            g.seed,
            g.cases,
            s.spec.id
        );
    }
    match opts.suite {
        crate::suite::SuiteSource::Files => reproduce_command(&s.path, profile),
        crate::suite::SuiteSource::Embedded => format!(
            "pallas-conformance run --target {} --filter {}",
            profile.display(),
            s.spec.id
        ),
    }
}

/// One step, as reports and the `step_done` event show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// Name (`send#3`, `calls[7]`).
    pub name: String,
    /// Action key (`health`, `send`…).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// Duration.
    pub elapsed_ms: f64,
    /// Why it could not run (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// It hit its timeout.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// What its MCP exchange observed ([`crate::observation::StepRecord::observed_summary`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

impl StepSummary {
    /// The summary of a step's record, its error redacted by `redactor`.
    pub(crate) fn of(
        record: &crate::observation::StepRecord,
        redactor: &crate::redact::Redactor,
    ) -> Self {
        Self {
            name: record.name.clone(),
            action: record.action.clone(),
            elapsed_ms: record.elapsed_ms,
            error: exec::step_error(redactor, record),
            timed_out: record.timed_out,
            observed: record.observed_summary(),
        }
    }
}

/// A baselined failure that now passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaleEntry {
    /// Scenario id.
    pub scenario: String,
    /// Check id.
    pub check: String,
}

/// Which party of seed 000 a run judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// A bridge (a Pallas or another MCP agent bridge), judged by `run`.
    #[default]
    Server,
    /// A Daedalus-side client, judged by `daedalus` against the mock Pallas.
    Client,
}

impl Side {
    /// Whether this is a bridge's run (the JSON report leaves `side` out then).
    pub fn is_server(&self) -> bool {
        *self == Self::Server
    }

    /// The reports' title: `Pallas conformance report` or `Daedalus-side client conformance
    /// report`.
    pub fn report_title(self) -> &'static str {
        match self {
            Self::Server => "Pallas conformance report",
            Self::Client => "Daedalus-side client conformance report",
        }
    }
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// Which party was judged.
    #[serde(default, skip_serializing_if = "Side::is_server")]
    pub side: Side,
    /// Target name.
    pub target: String,
    /// The kit's version.
    pub kit_version: String,
    /// The kit's embedded suite and where the scenarios came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<crate::suite::SuiteInfo>,
    /// The capabilities the target profile claims.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Scenario premises that held: what a scenario had to exercise, which judges no rule, so
    /// never counted as a pass.
    #[serde(default)]
    pub premises: usize,
}

impl Counts {
    /// Adds one check.
    pub fn add(&mut self, c: &CheckResult) {
        match c.verdict {
            Verdict::Pass if c.premise => self.premises += 1,
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

    /// What the implementation declared on the wire over the whole run.
    pub fn declared(&self) -> Declared {
        let mut d = Declared::default();
        for s in &self.scenarios {
            d.add(&s.declared);
        }
        d
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

/// The scenarios a run takes: those matching the filters, then the run's share of them. Each
/// comes with its `index` in the events: its position among all the filtered scenarios, so that
/// the events of the shares of a partitioned run merge back into the unpartitioned order.
fn select(
    scenarios: &[Scenario],
    opts: &RunOptions,
) -> (Vec<Scenario>, Vec<usize>, Option<RunPartition>) {
    let filtered: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| matches_filter(s, &opts.filters))
        .collect();
    let Some(p) = opts.partition else {
        let positions = (0..filtered.len()).collect();
        return (filtered.into_iter().cloned().collect(), positions, None);
    };
    let ids: Vec<&str> = filtered.iter().map(|s| s.spec.id.as_str()).collect();
    let positions = p.select(&ids);
    let selected = positions.iter().map(|&i| filtered[i].clone()).collect();
    let info = RunPartition {
        k: p.k,
        n: p.n,
        of: filtered.len(),
    };
    (selected, positions, Some(info))
}

/// Runs scenarios against a target and returns the results.
pub async fn run(scenarios: &[Scenario], target: &Target, opts: &RunOptions) -> RunResult {
    run_with_events(scenarios, target, opts, |_| {}).await
}

/// Collects the events of a run and hands each to the caller as it happens.
struct Emitter<F> {
    events: Vec<RunEvent>,
    on_event: F,
}

impl<F: FnMut(&RunEvent)> Emitter<F> {
    fn emit(&mut self, e: RunEvent) {
        (self.on_event)(&e);
        self.events.push(e);
    }

    /// Emits an event from a running scenario, keeping its live `step_done` summaries.
    fn emit_live(&mut self, e: RunEvent, steps: &mut BTreeMap<usize, Vec<StepSummary>>) {
        if let RunEvent::StepDone(s) = &e {
            steps.entry(s.index).or_default().push(s.step.clone());
        }
        self.emit(e);
    }
}

/// Runs the target's `build` once, as a phase of its own; its error, if it failed.
async fn build_phase<F: FnMut(&RunEvent)>(
    target: &Target,
    out: &mut Emitter<F>,
) -> Result<(), HarnessError> {
    out.emit(RunEvent::BuildStarted(BuildStarted {
        command: target.spec.build.clone(),
    }));
    let build_started = Instant::now();
    let t = target.clone();
    let built = match tokio::task::spawn_blocking(move || t.build()).await {
        Ok(b) => b.map_err(HarnessError::from),
        Err(e) => Err(HarnessError::BuildStopped(e)),
    };
    out.emit(RunEvent::BuildFinished(BuildFinished {
        elapsed_ms: ms(build_started),
        error: built.as_ref().err().map(ToString::to_string),
    }));
    built
}

/// The result of a scenario whose task panicked.
fn panicked(s: &Scenario, target_path: &std::path::Path, opts: &RunOptions) -> ScenarioResult {
    let mut r = scenario_run::errored(s, Instant::now(), "the scenario task panicked".into(), None);
    r.duration_ms = 0.0;
    r.reproduce = reproduce(s, target_path, opts);
    r
}

/// Like [`run`], calling `on_event` with each event of the run as it happens: `run_started`,
/// the build, then `scenario_started` as scenarios get a slot and each finished scenario's
/// steps, verdicts and summary (in finishing order), and `run_finished`. The result is
/// [`RunResult::from_events`] of exactly these events.
pub async fn run_with_events(
    scenarios: &[Scenario],
    target: &Target,
    opts: &RunOptions,
    on_event: impl FnMut(&RunEvent),
) -> RunResult {
    let mut out = Emitter {
        events: Vec::new(),
        on_event,
    };
    let started = Instant::now();
    let (selected, positions, partition) = select(scenarios, opts);
    let total = selected.len();
    out.emit(RunEvent::RunStarted(RunStarted {
        schema: EVENTS_SCHEMA.into(),
        kit_version: KIT_VERSION.into(),
        target: target.spec.name.clone(),
        suite: suite_info(opts),
        claims: claims_of(target),
        scenarios: total,
        partition,
    }));
    if opts.registry_url.is_none()
        && !target.spec.build.is_empty()
        && let Err(e) = build_phase(target, &mut out).await
    {
        let result = RunResult {
            duration_ms: ms(started),
            error: Some(format!("build failed: {e}")),
            ..RunResult::empty(target, opts)
        };
        out.emit(events::run_finished(&result));
        return replayed(&out.events, result);
    }
    let target = Arc::new(target.clone());
    let load = |p: &Option<PathBuf>| {
        p.as_deref()
            .map(schedule::Durations::load)
            .unwrap_or_default()
    };
    let mut remembered = load(&opts.durations_from).updated_by(load(&opts.durations));
    let work = Arc::new(Work::new(
        selected,
        positions,
        &remembered,
        target.clone(),
        opts,
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..work.gate.cap().min(total) {
        workers.spawn(work.clone().worker(tx.clone(), done_tx.clone()));
    }
    drop((tx, done_tx));
    let mut results: Vec<Option<ScenarioResult>> = vec![None; total];
    let mut live_steps: BTreeMap<usize, Vec<StepSummary>> = BTreeMap::new();
    let mut done = 0;
    loop {
        let finished = tokio::select! {
            Some(e) = rx.recv() => {
                out.emit_live(e, &mut live_steps);
                continue;
            }
            Some(finished) = done_rx.recv() => finished,
            joined = workers.join_next() => {
                if joined.is_some() {
                    continue;
                }
                // Every worker ended: what they sent is all there is.
                match done_rx.try_recv() {
                    Ok(finished) => finished,
                    Err(_) => break,
                }
            }
        };
        // A scenario's start and steps are sent before it ends: emit them before its results.
        while let Ok(e) = rx.try_recv() {
            out.emit_live(e, &mut live_steps);
        }
        let (i, mut result) = finished;
        if result.skipped.is_none() && remembered_kind(&work.scenarios[i]) {
            remembered.insert(&result.id, result.duration_ms);
        }
        if let Some(b) = &opts.baseline {
            b.apply(&mut result, target.is_pallas());
        }
        result.reproduce = reproduce(&work.scenarios[i], &target.path, opts);
        done += 1;
        // Its steps were reported live, as they finished.
        result.steps = live_steps.remove(&work.positions[i]).unwrap_or_default();
        for e in events::finished_events(work.positions[i], done, total, &result) {
            out.emit(e);
        }
        results[i] = Some(result);
    }
    while let Ok(e) = rx.try_recv() {
        out.emit_live(e, &mut live_steps);
    }
    let mut scenarios = Vec::with_capacity(total);
    for (i, r) in results.into_iter().enumerate() {
        let r = r.unwrap_or_else(|| {
            // The scenario's task panicked: it is an error, reported like any finished one.
            let r = panicked(&work.scenarios[i], &target.path, opts);
            done += 1;
            for e in scenario_events(work.positions[i], done, total, &r) {
                out.emit(e);
            }
            r
        });
        scenarios.push(r);
    }
    if let Some(path) = &opts.durations {
        remembered.save(path);
    }
    let stale = opts
        .baseline
        .as_ref()
        .map(|b| b.stale(&scenarios))
        .unwrap_or_default();
    let result = RunResult {
        scenarios,
        stale,
        duration_ms: ms(started),
        ..RunResult::empty(&target, opts)
    };
    out.emit(events::run_finished(&result));
    replayed(&out.events, result)
}

/// The suite a run names: where its scenarios came from, and its generated deployments.
fn suite_info(opts: &RunOptions) -> Option<crate::suite::SuiteInfo> {
    Some(crate::suite::SuiteInfo {
        generated: opts.generated.clone(),
        ..crate::suite::SuiteInfo::current(opts.suite)
    })
}

/// Whether a scenario's duration is worth remembering: not a generated case's, drawn anew by each
/// seed (its duration says nothing of the next run).
fn remembered_kind(s: &Scenario) -> bool {
    !s.spec.tags.iter().any(|t| t == crate::generated::TAG)
}

/// What the workers of a run share: the scenarios, the order they start in, and the gate.
struct Work {
    queue: std::sync::Mutex<std::collections::VecDeque<usize>>,
    scenarios: Vec<Scenario>,
    positions: Vec<usize>,
    target: Arc<Target>,
    opts: RunOptions,
    gate: schedule::Admission,
}

impl Work {
    /// The run's scenarios, queued longest remembered first, behind the gate `opts` asks for.
    fn new(
        scenarios: Vec<Scenario>,
        positions: Vec<usize>,
        remembered: &schedule::Durations,
        target: Arc<Target>,
        opts: &RunOptions,
    ) -> Self {
        Self {
            queue: std::sync::Mutex::new(remembered.order(&scenarios)),
            scenarios,
            positions,
            target,
            opts: opts.clone(),
            gate: schedule::Admission::new(if opts.adaptive_jobs {
                schedule::Jobs::Adaptive
            } else {
                schedule::Jobs::Fixed(opts.jobs)
            }),
        }
    }

    /// Runs scenarios from the queue, each once the gate lets it in, until none is left; each
    /// result is sent with its index in `scenarios`.
    async fn worker(
        self: Arc<Self>,
        tx: tokio::sync::mpsc::UnboundedSender<RunEvent>,
        done: tokio::sync::mpsc::UnboundedSender<(usize, ScenarioResult)>,
    ) {
        loop {
            self.gate.enter().await;
            let next = self.queue.lock().ok().and_then(|mut q| q.pop_front());
            let Some(i) = next else {
                self.gate.leave();
                return;
            };
            let (s, index) = (&self.scenarios[i], self.positions[i]);
            let _ = tx.send(RunEvent::ScenarioStarted(ScenarioStarted {
                index,
                id: s.spec.id.clone(),
                title: s.spec.title.clone(),
                file: s.path.display().to_string(),
            }));
            let sink = exec::StepSink {
                index,
                scenario: s.spec.id.clone(),
                tx: tx.clone(),
            };
            let result = scenario_run::run_one(s, &self.target, &self.opts, Some(sink)).await;
            self.gate.leave();
            let _ = done.send((i, result));
        }
    }
}

impl RunResult {
    /// A run of `target` with `opts` that judged nothing yet: no scenario, no error.
    fn empty(target: &Target, opts: &RunOptions) -> Self {
        Self {
            side: Side::Server,
            target: target.spec.name.clone(),
            kit_version: KIT_VERSION.into(),
            suite: suite_info(opts),
            claims: claims_of(target),
            scenarios: Vec::new(),
            stale: Vec::new(),
            duration_ms: 0.0,
            error: None,
        }
    }
}

/// The capabilities a target profile claims, as written there.
fn claims_of(target: &Target) -> Vec<String> {
    target
        .spec
        .capabilities
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect()
}

/// The result rebuilt from the run's own events (what every reporter sees); the directly built
/// one only if the stream could not be read, which a stream this runner wrote never is.
fn replayed(events: &[RunEvent], direct: RunResult) -> RunResult {
    let replayed = RunResult::from_events(events);
    debug_assert_eq!(replayed.as_ref().ok(), Some(&direct));
    replayed.unwrap_or(direct)
}

pub(crate) fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
