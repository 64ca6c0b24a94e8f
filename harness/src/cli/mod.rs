//! The command line: `run`, `report`, `checks`, `validate`, `schema`, `client`, `load`, `watch`,
//! `record`, `verdicts` and `matrix`, resolved into library calls. Output goes through the
//! reporters, which render the run's event stream; `load` prints its own table and JSON. `main.rs` only maps the returned exit code.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

mod daedalus;
mod generated;

use crate::checks::Grading;
use crate::client::ClientCommand;
use crate::runner::{Baseline, RunEvent, RunOptions, RunResult};
use crate::{catalog, exit, report, runner, scenario, target};

/// Conformance harness for Pallas-style agent bridges.
///
/// Certify an implementation: write a target profile that says how to deploy and start it
/// (`pallas-conformance init` writes a commented one), then `pallas-conformance run --target
/// my-target.yaml`, which runs the suite embedded in this binary (`scenarios export DIR` writes
/// it out; give scenario files or folders to run those instead). Every scenario
/// starts its mock LLMs and mock MCP servers, renders the implementation's config files, starts
/// it, drives it like Daedalus on the raw wire and grades each catalogued check
/// (`pallas-conformance checks`). Exit codes: 0 all passed, 1 a check failed (or a stale
/// baseline entry), 2 invalid input, 3 setup or harness error.
#[derive(Debug, Parser)]
#[command(
    name = "pallas-conformance",
    version = crate::suite::VERSION_LINE,
    about,
    long_about
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// How a listing is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// Aligned text.
    Text,
    /// JSON.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios against a target and report.
    Run(Box<RunArgs>),
    /// Re-render the reports of a run from its saved event stream (`run --events FILE` or
    /// `run --format jsonl > FILE`). Prints the run's terminal output again and exits with the
    /// run's exit code. Several streams of one target (the shares of `run --partition K/N`)
    /// merge into one report, exiting with the merged run's exit code.
    Report(ReportArgs),
    /// List the check catalog (`--rules`: the rules with their verbatim quotes).
    Checks {
        /// As JSON (same as `--format json`).
        #[arg(long)]
        json: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
        /// List the rules (ID, level, source, verbatim quote, basis, checks) instead of checks.
        #[arg(long)]
        rules: bool,
    },
    /// Parse and validate scenario files (and a target profile) without running anything.
    Validate {
        /// Scenario files or folders (default: the embedded suite).
        paths: Vec<PathBuf>,
        /// A target profile to validate too.
        #[arg(long)]
        target: Option<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format.
    Schema,
    /// The scenario suite embedded in this binary.
    #[command(subcommand)]
    Scenarios(ScenariosCommand),
    /// Write a commented target profile for a bridge started by a command (by default seed
    /// 001's Python Pallas layout), then print the command that checks and runs it.
    Init(crate::init::InitArgs),
    /// The scripted Daedalus client, for people.
    #[command(subcommand)]
    Client(ClientCommand),
    /// Certify a Daedalus-side client (an MCP client of a Pallas) against a mock Pallas.
    ///
    /// Each client scenario starts a mock Pallas (registry and agents, scripted health, progress
    /// and faults), runs the client from its profile with the registry URL as the last argument
    /// and `PALLAS_CONFORMANCE_SCENARIO` set, waits for it to exit, and judges what it sent (the
    /// mock's journal) with the client checks (`--list-checks`). Reports are the formats of
    /// `run`. Exit codes: 0 all passed, 1 a check failed, 2 invalid input, 3 a client that did
    /// not start, never connected or did not exit in time.
    Daedalus(Box<daedalus::DaedalusArgs>),
    /// Load an MCP bridge with N sessions calling its message tool; throughput, latency, errors,
    /// server CPU and RSS.
    ///
    /// Each session sends `initialize`, then `notifications/initialized`, then calls the target's
    /// message tool in a loop (`{"message": TEXT}`), and ends with `DELETE`. Closed loop by
    /// default (a session sends its next call when the last one answered); `--rate` makes it open
    /// loop, with latency measured from each call's scheduled time.
    ///
    /// Either give `--target PROFILE`: the tool starts a mock OpenAI model (pallas-mocks,
    /// answering final text), renders a deployment of one agent through the profile, starts the
    /// target as `run` does, measures its startup and samples its CPU and RSS; or give `--url` of
    /// a running bridge (and `--pid` to sample it).
    ///
    /// Prints a table (throughput, p50/p90/p99 latency, errors by kind, server CPU/RSS, a
    /// per-second series) and writes the report as JSON with `--json FILE`. Exit codes: 0 every
    /// call succeeded, 1 some failed, 2 invalid arguments, 3 the target did not start or no
    /// session opened.
    Load(Box<crate::load::LoadArgs>),
    /// Probe a deployment on an interval and serve the results as Prometheus metrics.
    ///
    /// Each round fetches the registry (`--registry`, or the `--target` profile's, deployed as
    /// `load` does) and judges it (REG-002, REG-001), then probes every agent it lists (or the
    /// `--url` agent) on a fresh session: `initialize`, `tools/list`, `get_health`, the
    /// `--canary` message with its progress stream judged by the kit's progress checks, then
    /// `DELETE`. Metrics (`pallas_watch_*`) are served on `--listen`; the bound address is
    /// printed. Example scrape config and alert rules: harness/watch/.
    Watch(Box<crate::watch::WatchArgs>),
    /// Proxy a client's session with a bridge (registry and agent endpoints) and write it as a
    /// scenario: steps, the answers' status and shape, progress; bearers never written.
    Record(Box<crate::record::RecordArgs>),
    /// Full-verdict baselines of a certification: every entry's verdict, skips with their
    /// reasons (`harness/docs/certification.md`).
    #[command(subcommand)]
    Verdicts(VerdictsCommand),
    /// Build the compliance matrix of certified implementations from their JSON reports:
    /// `OUT/index.html` (one self-contained page: implementations × checks by family, each
    /// cell the worst verdict of the check's entries, each implementation's level),
    /// `OUT/matrix.json` (the same data) and `OUT/badges/<implementation>.svg`. Levels:
    /// `docs/certification/LEVELS.md`. Exit codes: 0 written, 2 a report is unusable, 3 a file
    /// cannot be written.
    Matrix(crate::matrix::MatrixArgs),
}

/// `verdicts` subcommands.
#[derive(Debug, Subcommand)]
pub enum VerdictsCommand {
    /// Write the baseline of one or more JSON reports (`run --report-json`) of one target:
    /// an entry the runs judged differently records each verdict seen.
    Write {
        /// The JSON reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The baseline file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Compare a JSON report with a baseline: exit 0 when every verdict is as recorded, 1 with
    /// each difference printed (scenario, entry, recorded → seen), 2 when a file is unusable.
    Check {
        /// The JSON report of the run.
        report: PathBuf,
        /// The baseline (`verdicts write`).
        #[arg(long)]
        baseline: PathBuf,
        /// A JSON report of the differing scenarios run once more: a scenario whose verdicts
        /// there are as recorded passes, and its first-run differences are printed as not
        /// reproduced (timing), never hidden.
        #[arg(long)]
        retried: Option<PathBuf>,
        /// Write the ids of the scenarios that differ here, one per line (for `run --filter`).
        #[arg(long)]
        differing_out: Option<PathBuf>,
        /// The run selected only some scenarios (`--filter`): those it did not run are not
        /// differences.
        #[arg(long)]
        partial: bool,
    },
}

/// `scenarios` subcommands.
#[derive(Debug, Subcommand)]
pub enum ScenariosCommand {
    /// Write the embedded suite (scenario files, the scenario JSON Schema) into DIR, to read,
    /// extend, or run with `run DIR --target …`.
    Export {
        /// Folder to write into (created if needed).
        dir: PathBuf,
        /// Replace files that already exist.
        #[arg(long)]
        force: bool,
    },
    /// List the embedded suite's files.
    List,
    /// Write the generated deployments `run` draws from a seed as scenario files into DIR (the
    /// same cases as `run --generated-seed SEED --generated COUNT` against that target), to read
    /// or to run one by one.
    Generated {
        /// Folder to write into (created if needed).
        dir: PathBuf,
        /// The seed to draw from (a run's report prints it).
        #[arg(long)]
        seed: u64,
        /// How many cases.
        #[arg(long, default_value_t = crate::generated::DEFAULT_CASES)]
        count: usize,
        /// The target profile whose claims the cases are fitted to (default: every capability).
        #[arg(long)]
        target: Option<PathBuf>,
    },
}

/// What `run` writes on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// A line per finished scenario and phase, then the summary.
    #[default]
    Terminal,
    /// The event stream, one JSON event per line (`harness/docs/events.md`); the terminal
    /// output goes to stderr instead.
    Jsonl,
}

/// Report files, each rendered from the run's event stream.
#[derive(Debug, Default, clap::Args)]
pub struct ReportFiles {
    /// Write the JSON report here.
    #[arg(long)]
    pub report_json: Option<PathBuf>,
    /// Write the JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write the Markdown certification report here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Write the self-contained HTML report here (filterable verdict table with evidence).
    #[arg(long)]
    pub html: Option<PathBuf>,
}

/// `report` arguments.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The saved event stream (JSONL); several (`--from A --from B` or `--from A B`) merge into
    /// one report: streams of one target and kit version, each scenario in one stream only.
    #[arg(long, required = true, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Report files to write.
    #[command(flatten)]
    pub files: ReportFiles,
}

/// `run` arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Scenario files or folders on disk. Without any, the suite embedded in this binary runs
    /// (the version line and every report name its digest); with some, those files run and the
    /// reports say so.
    pub paths: Vec<PathBuf>,
    /// Target profile.
    #[arg(long)]
    pub target: PathBuf,
    /// Only scenarios whose id, path or tag matches a glob.
    #[arg(long = "filter")]
    pub filters: Vec<String>,
    /// Run only the K-th of N shares of the selected scenarios (after `--filter`), e.g. `2/4`:
    /// the scenarios sorted by id and dealt round-robin, so the N shares of a CI matrix run
    /// each scenario exactly once; merge their event streams with `report --from`.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<runner::Partition>,
    /// Scenarios at once: a count, or `auto` (the default): one per core always, and more (up
    /// to six per core) while the CPU stays mostly idle — scenarios mostly wait.
    #[arg(long, value_name = "N|auto")]
    pub jobs: Option<runner::schedule::Jobs>,
    /// Neither read nor write the scenario durations remembered from earlier runs against this
    /// target (`~/.cache/pallas-conformance/durations/<target>.json`), with which the longest
    /// scenarios start first.
    #[arg(long)]
    pub forget_durations: bool,
    /// Also take scenario durations from this JSON report of an earlier run (`--report-json`,
    /// a certification's report), for a machine that has none remembered.
    #[arg(long, value_name = "REPORT")]
    pub durations_from: Option<std::path::PathBuf>,
    /// Generated deployments to draw beside the scenarios: agents.yaml cases over the value
    /// domains seeds 000 and 001 allow (keys with capitals, digits and runs of underscores,
    /// several agents, single-agent mode, reloads, several images, second turns, placeholders),
    /// each judged by the seed sentences its inputs reach. For targets claiming `pallas_config`
    /// (fitted to their other claims). Default: 12 when the embedded suite or a folder runs,
    /// none when only files are named; 0 turns them off.
    #[arg(long, value_name = "N")]
    pub generated: Option<usize>,
    /// The seed the generated deployments are drawn from (default: a fresh one). The terminal
    /// and every report print it; the same seed and count draw the same cases.
    #[arg(long, value_name = "SEED")]
    pub generated_seed: Option<u64>,
    /// Where a failing generated deployment is written, shrunk to the smallest case that still
    /// fails, as a scenario file to run again and attach to a bug report.
    #[arg(long, value_name = "DIR", default_value = "pallas-generated")]
    pub generated_out: PathBuf,
    /// At most this many runs while shrinking a failing generated deployment (0: write it as
    /// drawn).
    #[arg(long, value_name = "RUNS", default_value_t = 32)]
    pub generated_shrink: usize,
    /// Start every launch cold, even where the profile has a `fast_start` (to compare the
    /// verdicts of a warm run with a cold one).
    #[arg(long)]
    pub cold: bool,
    /// A broken SHOULD fails instead of warning.
    #[arg(long)]
    pub strict: bool,
    /// A broken MUST warns instead of failing.
    #[arg(long, conflicts_with = "strict")]
    pub lenient: bool,
    /// Judge the kit's own passes too: each pass is judged again over perturbed copies of what
    /// it observed (absent, null, wrong type and breaking values), and one that survives them
    /// all is an error naming its check (a defect of the kit, not of the implementation).
    #[arg(long)]
    pub self_test: bool,
    /// Expected-failures baseline (YAML: `expected_failures: {scenario: [CHECK-ID]}`).
    #[arg(long)]
    pub expected_failures: Option<PathBuf>,
    /// Attach to a running implementation (scenarios without a deployment only).
    #[arg(long)]
    pub registry_url: Option<String>,
    /// Extra environment for the implementation (`K=V`, repeatable), e.g. `PALLAS_DEFECTS=x`.
    #[arg(long = "target-env", value_parser = crate::args::key_value)]
    pub target_env: Vec<(String, String)>,
    /// Default step timeout.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub step_timeout: Duration,
    /// Default scenario deadline.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub scenario_deadline: Duration,
    /// What stdout gets: the terminal output, or the event stream as JSONL.
    #[arg(long, value_enum, default_value_t = RunFormat::Terminal)]
    pub format: RunFormat,
    /// Also save the event stream (JSONL) here, for `pallas-conformance report --from`.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Report files to write.
    #[command(flatten)]
    pub files: ReportFiles,
    /// Keep each scenario's run directory (rendered files, logs) under this folder.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Most MiB read of one answer (a JSON body or one SSE stream); default 64.
    #[arg(long, value_name = "MIB")]
    pub max_answer_mib: Option<u64>,
    /// Most MiB read of one SSE event; default 32.
    #[arg(long, value_name = "MIB")]
    pub max_sse_event_mib: Option<u64>,
    /// Most MiB read of the registry document; default 8.
    #[arg(long, value_name = "MIB")]
    pub max_registry_mib: Option<u64>,
    /// Most MiB read of one `/metrics` scrape; default 8.
    #[arg(long, value_name = "MIB")]
    pub max_metrics_mib: Option<u64>,
    /// Most MiB read of the tail of each log and of the process output; default 4.
    #[arg(long, value_name = "MIB")]
    pub max_logs_mib: Option<u64>,
}

/// Runs a parsed command line; returns the exit code. Writes to `out` and `err`.
pub async fn run_cli(cli: Cli, out: &mut impl Write, err: &mut impl Write) -> u8 {
    if let Err(e) = crate::rules::book() {
        let _ = writeln!(err, "error: the bundled rule data does not load: {e}");
        return exit::INVALID_INPUT;
    }
    match cli.command {
        Command::Checks {
            json,
            format,
            rules,
        } => {
            let book = match crate::rules::book() {
                Ok(b) => b,
                Err(e) => {
                    let _ = writeln!(err, "error: the bundled rule data does not load: {e}");
                    return exit::INVALID_INPUT;
                }
            };
            let json = json || format == ListFormat::Json;
            let text = match (rules, json) {
                (true, true) => {
                    serde_json::to_string_pretty(&crate::rules::rules_json(book))
                        .unwrap_or_default()
                        + "\n"
                }
                (true, false) => crate::rules::rules_table(book),
                (false, true) => {
                    serde_json::to_string_pretty(&catalog::to_json()).unwrap_or_default() + "\n"
                }
                (false, false) => catalog::to_table(),
            };
            let _ = out.write_all(text.as_bytes());
            exit::SUCCESS
        }
        Command::Schema => {
            let _ = out.write_all(scenario::json_schema_pretty().as_bytes());
            exit::SUCCESS
        }
        Command::Validate { paths, target } => {
            let mut bad = false;
            let (loaded, what) = if paths.is_empty() {
                (crate::suite::load(), "in the embedded suite")
            } else {
                (crate::suite::load_paths(&paths), "on disk")
            };
            match loaded {
                Ok(s) => {
                    let _ = writeln!(out, "{} scenario(s) valid {what}", s.len());
                }
                Err(e) => {
                    bad = true;
                    let _ = write!(err, "{}", e.render_plain());
                }
            }
            if let Some(t) = target {
                match target::load(&t) {
                    Ok(_) => {
                        let _ = writeln!(out, "target {} valid", t.display());
                    }
                    Err(e) => {
                        bad = true;
                        let _ = write!(err, "{}", e.render_plain());
                    }
                }
            }
            if bad {
                exit::INVALID_INPUT
            } else {
                exit::SUCCESS
            }
        }
        Command::Scenarios(cmd) => scenarios_command(&cmd, out, err),
        Command::Init(args) => crate::init::run(&args, out, err),
        Command::Client(cmd) => crate::client::run_client(cmd, out).await,
        Command::Daedalus(args) => daedalus::run_command(&args, out, err).await,
        Command::Run(args) => run_command(*args, out, err).await,
        Command::Report(args) => report_command(&args, out, err),
        Command::Load(args) => crate::load::args::run_command(&args, out, err).await,
        Command::Watch(args) => crate::watch::run_command(&args, out, err).await,
        Command::Record(args) => crate::record::run_command(&args, out, err).await,
        Command::Verdicts(cmd) => verdicts_command(&cmd, out, err),
        Command::Matrix(args) => crate::matrix::run_command(&args, out, err),
    }
}

fn scenarios_command(cmd: &ScenariosCommand, out: &mut impl Write, err: &mut impl Write) -> u8 {
    match cmd {
        ScenariosCommand::List => {
            for (rel, _) in crate::suite::files() {
                let _ = writeln!(out, "{}/{rel}", crate::suite::PREFIX);
            }
            exit::SUCCESS
        }
        ScenariosCommand::Generated {
            dir,
            seed,
            count,
            target,
        } => write_generated(dir, *seed, *count, target.as_deref(), out, err),
        ScenariosCommand::Export { dir, force } => match crate::suite::export(dir, *force) {
            Ok(files) => {
                let _ = writeln!(
                    out,
                    "wrote {} file(s) of the embedded suite (sha256:{}) to {}",
                    files.len(),
                    crate::suite::DIGEST,
                    dir.display()
                );
                exit::SUCCESS
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let _ = writeln!(err, "error: {e}");
                exit::INVALID_INPUT
            }
            Err(e) => {
                let _ = writeln!(err, "error: cannot write {}: {e}", dir.display());
                exit::HARNESS_ERROR
            }
        },
    }
}

/// `scenarios generated`: the drawn cases as files.
fn write_generated(
    dir: &std::path::Path,
    seed: u64,
    count: usize,
    target: Option<&std::path::Path>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    let claims = match target.map(target::load) {
        None => crate::vocab::Capability::ALL.to_vec(),
        Some(Ok(t)) => t.spec.capabilities,
        Some(Err(e)) => {
            let _ = writeln!(err, "{e}");
            return exit::INVALID_INPUT;
        }
    };
    if let Some(why) = crate::generated::not_applicable(&claims) {
        let _ = writeln!(err, "error: no generated deployments: {why}");
        return exit::INVALID_INPUT;
    }
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        crate::generated::draw(seed, count, &claims)
            .iter()
            .map(|d| {
                let path = dir.join(format!("{}.yaml", d.case.id()));
                std::fs::write(&path, d.case.scenario_yaml()).map(|()| path)
            })
            .collect::<std::io::Result<Vec<_>>>()
    });
    match written {
        Ok(files) => {
            for f in &files {
                let _ = writeln!(out, "{}", f.display());
            }
            exit::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(err, "error: cannot write {}: {e}", dir.display());
            exit::HARNESS_ERROR
        }
    }
}

/// Starts `tgt`'s warm server when its profile has a `fast_start` and the run is not `cold`,
/// and points `{{python}}` at its launcher.
fn fast_start(
    tgt: &mut target::Target,
    cold: bool,
) -> Result<Option<crate::fast_start::WarmServer>, crate::fast_start::FastStartError> {
    if cold {
        return Ok(None);
    }
    crate::fast_start::share_node_compile_cache(tgt);
    let warm = crate::fast_start::WarmServer::start(tgt)?;
    if let Some(w) = &warm {
        tgt.python = Some(w.launcher.display().to_string());
    }
    Ok(warm)
}

/// The run's options from its arguments (durations aside: they need the target's name).
fn run_options(
    args: &RunArgs,
    source: crate::suite::SuiteSource,
    baseline: Option<Baseline>,
    generated: Option<crate::generated::GeneratedInfo>,
) -> RunOptions {
    let mut opts = RunOptions {
        grading: Grading {
            strict: args.strict,
            lenient: args.lenient,
            self_test: args.self_test,
        },
        filters: args.filters.clone(),
        registry_url: args.registry_url.clone(),
        step_timeout: args.step_timeout,
        scenario_deadline: args.scenario_deadline,
        baseline,
        keep_dir: args.keep.clone(),
        partition: args.partition,
        suite: source,
        generated,
        limits: crate::client::LimitOverrides {
            answer_mib: args.max_answer_mib,
            sse_event_mib: args.max_sse_event_mib,
            registry_mib: args.max_registry_mib,
            metrics_mib: args.max_metrics_mib,
            logs_mib: args.max_logs_mib,
        },
        ..RunOptions::default()
    };
    match args.jobs.unwrap_or(runner::schedule::Jobs::Adaptive) {
        runner::schedule::Jobs::Fixed(j) => opts.jobs = j,
        runner::schedule::Jobs::Adaptive => opts.adaptive_jobs = true,
    }
    opts
}

async fn run_command(args: RunArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let (loaded, source) = if args.paths.is_empty() {
        (crate::suite::load(), crate::suite::SuiteSource::Embedded)
    } else {
        (
            crate::suite::load_paths(&args.paths),
            crate::suite::SuiteSource::Files,
        )
    };
    let scenarios = match loaded {
        Ok(s) => s,
        Err(e) => {
            let _ = write!(err, "{}", e.render_plain());
            return exit::INVALID_INPUT;
        }
    };
    let mut tgt = match target::load(&args.target) {
        Ok(t) => t,
        Err(e) => {
            let _ = write!(err, "{}", e.render_plain());
            return exit::INVALID_INPUT;
        }
    };
    tgt.env_overrides = args.target_env.iter().cloned().collect::<BTreeMap<_, _>>();
    // Held for the whole run: its launches end with it.
    let warm = match fast_start(&mut tgt, args.cold) {
        Ok(w) => w,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::HARNESS_ERROR;
        }
    };
    let plan = match generated::plan(&args, &tgt.spec.capabilities) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let mut scenarios = scenarios;
    if let Some(p) = &plan {
        match p.scenarios() {
            Ok(cases) => scenarios.extend(cases),
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                return exit::HARNESS_ERROR;
            }
        }
    }
    let baseline = match &args.expected_failures {
        None => None,
        Some(p) => match Baseline::load(p) {
            Ok(b) => Some(b),
            Err(e) => {
                let _ = write!(err, "{}", e.render_plain());
                return exit::INVALID_INPUT;
            }
        },
    };
    let opts = run_options(
        &args,
        source,
        baseline,
        plan.as_ref().map(|p| p.info.clone()),
    );
    let mut opts = opts;
    if !args.forget_durations {
        opts.durations = runner::schedule::durations_file(&tgt.spec.name);
        opts.durations_from.clone_from(&args.durations_from);
    }
    let jsonl = args.format == RunFormat::Jsonl;
    let mut events_file = match &args.events {
        None => None,
        Some(p) => match create(p) {
            Ok(f) => Some(std::io::BufWriter::new(f)),
            Err(e) => {
                let _ = writeln!(err, "error: cannot write {}: {e}", p.display());
                return exit::HARNESS_ERROR;
            }
        },
    };
    let mut events_error = None;
    let mut run = runner::run_with_events(&scenarios, &tgt, &opts, |e| {
        if jsonl {
            let _ = writeln!(out, "{}", e.to_json_line());
            let _ = out.flush();
            terminal_line(e, err);
        } else {
            terminal_line(e, out);
        }
        if let Some(f) = &mut events_file
            && let Err(x) = writeln!(f, "{}", e.to_json_line()).and_then(|()| f.flush())
        {
            events_error.get_or_insert(x);
        }
    })
    .await;
    if let (Some(p), Some(e)) = (&args.events, events_error) {
        let _ = writeln!(err, "error: cannot write {}: {e}", p.display());
        return exit::HARNESS_ERROR;
    }
    if let Some(p) = plan {
        let say: &mut dyn Write = if jsonl { &mut *err } else { &mut *out };
        generated::shrink_first_failure(&mut run, p, &tgt, &opts, &args, say).await;
    }
    let summary = report::summary(&run);
    let _ = if jsonl {
        err.write_all(summary.as_bytes())
    } else {
        out.write_all(summary.as_bytes())
    };
    drop(warm);
    if let Err(code) = write_reports(&run, &args.files, err) {
        return code;
    }
    run.exit_code()
}

fn terminal_line(e: &RunEvent, w: &mut impl Write) {
    if let Some(line) = report::event_line(e) {
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

fn create(p: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(p)
}

/// Writes the requested report files; on failure, the exit code.
pub(crate) fn write_reports(
    run: &RunResult,
    files: &ReportFiles,
    err: &mut impl Write,
) -> Result<(), u8> {
    type Render = fn(&RunResult) -> String;
    let writes: [(&Option<PathBuf>, Render); 4] = [
        (&files.report_json, report::json_text),
        (&files.junit, report::junit),
        (&files.markdown, report::markdown),
        (&files.html, report::html),
    ];
    for (path, render) in writes {
        if let Some(p) = path
            && let Err(e) = create(p).and_then(|mut f| f.write_all(render(run).as_bytes()))
        {
            let _ = writeln!(err, "error: cannot write {}: {e}", p.display());
            return Err(exit::HARNESS_ERROR);
        }
    }
    Ok(())
}

/// `report --from`: the terminal output and report files of a saved stream, or of several
/// merged.
fn report_command(args: &ReportArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let mut streams = Vec::with_capacity(args.from.len());
    for path in &args.from {
        let name = path.display().to_string();
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {name}: {e}"))
            .and_then(|text| runner::parse_jsonl(&name, &text).map_err(|e| e.to_string()));
        match parsed {
            Ok(events) => streams.push((name, events)),
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                return exit::INVALID_INPUT;
            }
        }
    }
    let replayed = match streams.as_slice() {
        [(_, events)] => RunResult::from_events(events)
            .map(|run| (events.clone(), run, runner::partition_warnings(&streams)))
            .map_err(|e| e.to_string()),
        _ => runner::merge_streams(&streams)
            .map(|m| (m.events, m.run, m.warnings))
            .map_err(|e| e.to_string()),
    };
    let (events, run, warnings) = match replayed {
        Ok(x) => x,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    for e in &events {
        terminal_line(e, out);
    }
    let _ = out.write_all(report::summary(&run).as_bytes());
    if let Err(code) = write_reports(&run, &args.files, err) {
        return code;
    }
    run.exit_code()
}

/// `verdicts write` and `verdicts check`.
fn verdicts_command(cmd: &VerdictsCommand, out: &mut impl Write, err: &mut impl Write) -> u8 {
    use crate::verdicts::{VerdictBaseline, render};
    match cmd {
        VerdictsCommand::Write { reports, out: path } => {
            let b = match VerdictBaseline::from_reports(reports) {
                Ok(b) => b,
                Err(e) => {
                    let _ = writeln!(err, "error: {e}");
                    return exit::INVALID_INPUT;
                }
            };
            if let Err(e) = create(path).and_then(|mut f| f.write_all(b.to_yaml().as_bytes())) {
                let _ = writeln!(err, "error: cannot write {}: {e}", path.display());
                return exit::HARNESS_ERROR;
            }
            let entries: usize = b.scenarios.values().map(|s| s.verdicts.len()).sum();
            let _ = writeln!(
                out,
                "wrote {}: {} scenario(s), {entries} entries",
                path.display(),
                b.scenarios.len()
            );
            exit::SUCCESS
        }
        VerdictsCommand::Check {
            report,
            baseline,
            retried,
            differing_out,
            partial,
        } => {
            let loaded = VerdictBaseline::load(baseline).and_then(|b| {
                let seen = VerdictBaseline::from_reports(std::slice::from_ref(report))?;
                let again = match retried {
                    Some(r) => Some(VerdictBaseline::from_reports(std::slice::from_ref(r))?),
                    None => None,
                };
                Ok((b, seen, again))
            });
            let (mut want, mut seen, again) = match loaded {
                Ok(x) => x,
                Err(crate::verdicts::VerdictsError::Baseline(e)) => {
                    let _ = write!(err, "{}", e.render_plain());
                    return exit::INVALID_INPUT;
                }
                Err(e) => {
                    let _ = writeln!(err, "error: {e}");
                    return exit::INVALID_INPUT;
                }
            };
            if *partial {
                want.scenarios
                    .retain(|id, _| seen.scenarios.contains_key(id));
            }
            let mut diffs = want.diff(&seen);
            if let Some(again) = again.filter(|_| !diffs.is_empty()) {
                let first = diffs;
                for (id, verdicts) in again.scenarios {
                    seen.scenarios.insert(id, verdicts);
                }
                diffs = want.diff(&seen);
                let gone: Vec<_> = first.into_iter().filter(|d| !diffs.contains(d)).collect();
                if !gone.is_empty() {
                    let _ = writeln!(
                        out,
                        "{}: {} difference(s) of the first run did not reproduce when the scenario ran again (timing):\n{}",
                        seen.target,
                        gone.len(),
                        render(&gone)
                    );
                }
            }
            if let Some(p) = differing_out {
                let mut ids: Vec<&str> = diffs.iter().map(|d| d.scenario.as_str()).collect();
                ids.dedup();
                let text: String = ids.iter().map(|i| format!("{i}\n")).collect();
                if let Err(e) = create(p).and_then(|mut f| f.write_all(text.as_bytes())) {
                    let _ = writeln!(err, "error: cannot write {}: {e}", p.display());
                    return exit::HARNESS_ERROR;
                }
            }
            if diffs.is_empty() {
                let entries: usize = seen.scenarios.values().map(|s| s.verdicts.len()).sum();
                let _ = writeln!(
                    out,
                    "{}: every verdict as {} records ({} scenario(s), {entries} entries)",
                    seen.target,
                    baseline.display(),
                    seen.scenarios.len()
                );
                return exit::SUCCESS;
            }
            let _ = writeln!(
                out,
                "{}: {} verdict(s) differ from {} (recorded → seen):\n{}",
                seen.target,
                diffs.len(),
                baseline.display(),
                render(&diffs)
            );
            if want.suite_digest != seen.suite_digest {
                let _ = writeln!(
                    out,
                    "the baseline was written with suite sha256:{}, this run's kit carries sha256:{}",
                    want.suite_digest, seen.suite_digest
                );
            }
            exit::CHECK_FAILED
        }
    }
}
