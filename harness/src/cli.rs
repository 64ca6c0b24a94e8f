//! The command line: `run`, `checks`, `validate`, `schema`, `client` and `load`, resolved into library
//! calls. Output goes through the reporters; `main.rs` only maps the returned exit code.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::checks::Grading;
use crate::client::ClientCommand;
use crate::runner::{Baseline, RunOptions};
use crate::{catalog, exit, report, runner, scenario, target};

/// Conformance harness for Pallas-style agent bridges.
///
/// Certify an implementation: write (or reuse) a target profile that says how to deploy and
/// start it, then `pallas-conformance run scenarios/ --target my-target.yaml`. Every scenario
/// starts its mock LLMs and mock MCP servers, renders the implementation's config files, starts
/// it, drives it like Daedalus on the raw wire and grades each catalogued check
/// (`pallas-conformance checks`). Exit codes: 0 all passed, 1 a check failed (or a stale
/// baseline entry), 2 invalid input, 3 setup or harness error.
#[derive(Debug, Parser)]
#[command(name = "pallas-conformance", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios against a target and report.
    Run(RunArgs),
    /// List the check catalog.
    Checks {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Parse and validate scenario files (and a target profile) without running anything.
    Validate {
        /// Scenario files or folders.
        paths: Vec<PathBuf>,
        /// A target profile to validate too.
        #[arg(long)]
        target: Option<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format.
    Schema,
    /// The scripted Daedalus client, for people.
    #[command(subcommand)]
    Client(ClientCommand),
    /// Load an MCP bridge with N sessions calling its message tool; throughput, latency, errors,
    /// server CPU and RSS.
    Load(Box<crate::load::LoadArgs>),
}

/// `run` arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Scenario files or folders (default: `scenarios`).
    pub paths: Vec<PathBuf>,
    /// Target profile.
    #[arg(long)]
    pub target: PathBuf,
    /// Only scenarios whose id, path or tag matches a glob.
    #[arg(long = "filter")]
    pub filters: Vec<String>,
    /// Scenarios at once (default: number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// A broken SHOULD fails instead of warning.
    #[arg(long)]
    pub strict: bool,
    /// A broken MUST warns instead of failing.
    #[arg(long, conflicts_with = "strict")]
    pub lenient: bool,
    /// Expected-failures baseline (YAML: `expected_failures: {scenario: [CHECK-ID]}`).
    #[arg(long)]
    pub expected_failures: Option<PathBuf>,
    /// Attach to a running implementation (scenarios without a deployment only).
    #[arg(long)]
    pub registry_url: Option<String>,
    /// Extra environment for the implementation (`K=V`, repeatable), e.g. `PALLAS_DEFECTS=x`.
    #[arg(long = "target-env", value_parser = parse_kv)]
    pub target_env: Vec<(String, String)>,
    /// Default step timeout.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub step_timeout: Duration,
    /// Default scenario deadline.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub scenario_deadline: Duration,
    /// Write the JSON report here.
    #[arg(long)]
    pub report_json: Option<PathBuf>,
    /// Write the JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write the Markdown certification report here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Keep each scenario's run directory (rendered files, logs) under this folder.
    #[arg(long)]
    pub keep: Option<PathBuf>,
}

fn parse_kv(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("`{s}` is not K=V"))
}

/// Runs a parsed command line; returns the exit code. Writes to `out` and `err`.
pub async fn run_cli(cli: Cli, out: &mut impl Write, err: &mut impl Write) -> u8 {
    match cli.command {
        Command::Checks { json } => {
            let text = if json {
                serde_json::to_string_pretty(&catalog::to_json()).unwrap_or_default() + "\n"
            } else {
                catalog::to_table()
            };
            let _ = out.write_all(text.as_bytes());
            exit::SUCCESS
        }
        Command::Schema => {
            let _ = out.write_all(scenario::json_schema_pretty().as_bytes());
            exit::SUCCESS
        }
        Command::Validate { paths, target } => {
            let paths = if paths.is_empty() {
                vec![PathBuf::from("scenarios")]
            } else {
                paths
            };
            let mut bad = false;
            match scenario::load_paths(&paths) {
                Ok(s) => {
                    let _ = writeln!(out, "{} scenario(s) valid", s.len());
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
        Command::Client(cmd) => crate::client::run_client(cmd, out).await,
        Command::Run(args) => run_command(args, out, err).await,
        Command::Load(args) => crate::load::args::run_command(&args, out, err).await,
    }
}

async fn run_command(args: RunArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.paths.clone()
    };
    let scenarios = match scenario::load_paths(&paths) {
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
    let mut opts = RunOptions {
        grading: Grading {
            strict: args.strict,
            lenient: args.lenient,
        },
        filters: args.filters.clone(),
        registry_url: args.registry_url.clone(),
        step_timeout: args.step_timeout,
        scenario_deadline: args.scenario_deadline,
        baseline,
        keep_dir: args.keep.clone(),
        ..RunOptions::default()
    };
    if let Some(j) = args.jobs {
        opts.jobs = j.max(1);
    }
    let run = runner::run_with_events(&scenarios, &tgt, &opts, |e| {
        if let Some(line) = report::event_line(e) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    })
    .await;
    let _ = write!(out, "{}", report::summary(&run));
    let writes: [(&Option<PathBuf>, String); 3] = [
        (&args.report_json, report::json_text(&run)),
        (&args.junit, report::junit(&run)),
        (&args.markdown, report::markdown(&run)),
    ];
    for (path, text) in writes {
        if let Some(p) = path {
            if let Some(parent) = p.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            if let Err(e) = std::fs::write(p, text) {
                let _ = writeln!(err, "error: cannot write {}: {e}", p.display());
                return exit::HARNESS_ERROR;
            }
        }
    }
    run.exit_code()
}
