//! The `load` command line, resolved into [`LoadOptions`] before anything runs.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use super::deploy::DeployOptions;
use super::{Endpoint, LoadOptions, Stop, output};
use crate::{exit, target};

/// `load` arguments (the command's long help is on the `Load` subcommand of the command line).
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// Target profile to deploy and start (e.g. scenarios/targets/reference.yaml).
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    pub target: Option<PathBuf>,
    /// MCP endpoint of a running bridge (e.g. http://127.0.0.1:24201/mcp).
    #[arg(long)]
    pub url: Option<String>,
    /// Message tool with --url (with --target: the profile's `message_tool`).
    #[arg(long, default_value = "send_message", requires = "url")]
    pub tool: String,
    /// Process to sample with --url (CPU and RSS from /proc/PID).
    #[arg(long, requires = "url")]
    pub pid: Option<u32>,
    /// `instance_scope` of the deployed agent: shared, connection or request (default: the
    /// target's own default).
    #[arg(long, requires = "target", value_parser = ["shared", "connection", "request"])]
    pub instance_scope: Option<String>,
    /// Start the target under `taskset -c CPUS` (e.g. `0`).
    #[arg(long, requires = "target")]
    pub pin_server: Option<String>,
    /// Extra environment for the target (`K=V`, repeatable).
    #[arg(long = "target-env", value_parser = crate::args::key_value, requires = "target")]
    pub target_env: Vec<(String, String)>,
    /// Keep the rendered deployment and the target's logs in this folder.
    #[arg(long, requires = "target")]
    pub keep: Option<PathBuf>,
    /// Concurrent sessions.
    #[arg(long, short = 'n', default_value_t = 1)]
    pub sessions: usize,
    /// Measured window (e.g. `10s`, `1m`); the default when --calls is not given is 10s.
    #[arg(long, value_parser = humantime::parse_duration, conflicts_with = "calls")]
    pub duration: Option<Duration>,
    /// Stop after this many measured calls in total.
    #[arg(long)]
    pub calls: Option<u64>,
    /// Open loop: total calls per second over all sessions.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Calls in this first period are not measured (e.g. `2s`).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub warmup: Duration,
    /// Text of every message.
    #[arg(long, default_value = "ping")]
    pub message: String,
    /// Limit of one call.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub call_timeout: Duration,
    /// Write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Do not print the per-second series in the table.
    #[arg(long)]
    pub no_series: bool,
}

/// `load` arguments that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum InvalidLoadArgs {
    /// `--sessions 0`.
    #[error("--sessions must be at least 1")]
    NoSessions,
    /// A `--rate` that is not a positive number.
    #[error("--rate must be a positive number of calls per second")]
    Rate,
    /// `--calls 0`.
    #[error("--calls must be at least 1")]
    NoCalls,
    /// A zero `--duration`.
    #[error("--duration must be positive")]
    NoDuration,
    /// A target profile that does not load (every diagnostic, rendered without colours).
    #[error("{}", .0.render_plain())]
    Target(#[source] crate::scenario::InvalidFiles),
    /// Neither `--target` nor `--url`.
    #[error("give --target PROFILE or --url URL")]
    NoEndpoint,
}

impl LoadArgs {
    /// Validates the arguments into options.
    pub fn resolve(&self) -> Result<LoadOptions, InvalidLoadArgs> {
        if self.sessions == 0 {
            return Err(InvalidLoadArgs::NoSessions);
        }
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(InvalidLoadArgs::Rate);
        }
        let stop = match (self.duration, self.calls) {
            (_, Some(0)) => return Err(InvalidLoadArgs::NoCalls),
            (_, Some(n)) => Stop::Calls(n),
            (Some(d), None) if d.is_zero() => return Err(InvalidLoadArgs::NoDuration),
            (Some(d), None) => Stop::Duration(d),
            (None, None) => Stop::Duration(Duration::from_secs(10)),
        };
        let endpoint = match (&self.target, &self.url) {
            (Some(path), _) => {
                let mut t = target::load(path).map_err(InvalidLoadArgs::Target)?;
                t.env_overrides = self.target_env.iter().cloned().collect();
                Endpoint::Target {
                    target: Box::new(t),
                    deploy: DeployOptions {
                        instance_scope: self.instance_scope.clone(),
                        pin_cpus: self.pin_server.clone(),
                        keep: self.keep.clone(),
                    },
                }
            }
            (None, Some(url)) => Endpoint::Url {
                url: url.clone(),
                tool: self.tool.clone(),
                pid: self.pid,
            },
            (None, None) => return Err(InvalidLoadArgs::NoEndpoint),
        };
        Ok(LoadOptions {
            endpoint,
            sessions: self.sessions,
            stop,
            rate: self.rate,
            warmup: self.warmup,
            message: self.message.clone(),
            call_timeout: self.call_timeout,
        })
    }
}

/// Runs `load`: resolves, runs, prints the table, writes the JSON; returns the exit code.
pub async fn run_command(args: &LoadArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let opts = match args.resolve() {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let report = match super::run(&opts).await {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::HARNESS_ERROR;
        }
    };
    let mut shown = report.clone();
    if args.no_series {
        shown.series.clear();
    }
    let _ = write!(out, "{}", output::table(&shown));
    if let Some(path) = &args.json {
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(path, output::json(&report)) {
            let _ = writeln!(err, "error: cannot write {}: {e}", path.display());
            return exit::HARNESS_ERROR;
        }
    }
    if report.clean() {
        exit::SUCCESS
    } else {
        exit::CHECK_FAILED
    }
}
