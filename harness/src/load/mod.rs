//! `pallas-conformance load`: a load generator for any MCP bridge, on the raw wire.
//!
//! N sessions each run `initialize` → `notifications/initialized` → a loop of `tools/call` of
//! the target's message tool → `DELETE`, for a fixed duration or a fixed number of calls,
//! closed-loop (each session sends its next call when the last one answered) or open-loop at a
//! fixed total rate. [`run`] returns a [`LoadReport`] (throughput, latency quantiles from an HDR
//! histogram, a per-second series, errors by kind, and the server's CPU and RSS read from
//! `/proc/<pid>`); [`output`] renders it as a table or JSON.
//!
//! The target is either a URL of a running bridge, or a target profile that [`deploy`] starts
//! with a minimal deployment: one agent answering through a mock OpenAI model from
//! pallas-mocks.

pub mod args;
pub mod deploy;
mod engine;
pub mod output;
pub mod procstat;
pub mod session;
pub mod stats;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

pub use args::LoadArgs;
pub use engine::run;
pub use procstat::ServerUsage;

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (measured window; the warm-up comes before it).
    Duration(Duration),
    /// After this many measured calls in total.
    Calls(u64),
}

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A running bridge.
    Url {
        /// MCP endpoint.
        url: String,
        /// Message tool.
        tool: String,
        /// Process to sample, if known.
        pid: Option<u32>,
    },
    /// A target the tool deploys and starts.
    Target {
        /// The profile.
        target: Box<crate::target::Target>,
        /// How to deploy it.
        deploy: deploy::DeployOptions,
    },
}

/// A validated load run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Where.
    pub endpoint: Endpoint,
    /// Concurrent sessions.
    pub sessions: usize,
    /// When to stop.
    pub stop: Stop,
    /// Open-loop total rate (calls/s); `None`: closed loop.
    pub rate: Option<f64>,
    /// Calls before this are not measured.
    pub warmup: Duration,
    /// Text of every message.
    pub message: String,
    /// Limit of one HTTP exchange.
    pub call_timeout: Duration,
}

/// Why a run could not happen (as opposed to calls that failed, which the report counts).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The target could not be deployed or started, or the client could not be built.
    #[error("{0}")]
    Setup(String),
    /// The target's `build` command failed.
    #[error(transparent)]
    Build(#[from] crate::target::BuildError),
    /// No session could be opened.
    #[error("no session could be opened: {0}")]
    NoSession(String),
}

/// Latency quantiles of successful calls, milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencyMs {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Highest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// One second of the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SecondReport {
    /// Seconds since the window opened (the end of this second).
    pub t: u64,
    /// Calls that succeeded in it.
    pub ok: u64,
    /// Calls that failed in it.
    pub errors: u64,
    /// Successful calls since the window opened, this second included.
    pub cumulative_ok: u64,
    /// Median latency of its successful calls, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Server RSS at its end, KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_kib: Option<u64>,
    /// Server CPU over it, percent of one core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
}

/// Throughput of the first and last quarter of the full seconds (decay shows as a ratio < 1).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Trend {
    /// Calls/s in the first quarter.
    pub first_quarter: f64,
    /// Calls/s in the last quarter.
    pub last_quarter: f64,
    /// `last_quarter / first_quarter`.
    pub ratio: f64,
}

/// Sessions opened and closed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionCounts {
    /// Asked for.
    pub requested: usize,
    /// `initialize` succeeded.
    pub opened: usize,
    /// `DELETE` succeeded (or the server is stateless).
    pub closed: usize,
}

/// Requests the mock model received (deploy mode).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MockLlmCounts {
    /// `POST /v1/chat/completions` requests, warm-up included.
    pub chat_completions: u64,
    /// Other requests (model listings of a preflight).
    pub other: u64,
}

/// The result of a run, the JSON document of `--json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LoadReport {
    /// Target profile name, or `url`.
    pub target: String,
    /// MCP endpoint.
    pub url: String,
    /// Message tool.
    pub tool: String,
    /// `instance_scope` deployed (deploy mode; `null`: the target's default).
    pub instance_scope: Option<String>,
    /// Sessions.
    pub sessions: SessionCounts,
    /// Open-loop rate, calls/s (`null`: closed loop).
    pub rate: Option<f64>,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Length of the measured window, seconds.
    pub elapsed_s: f64,
    /// Successful measured calls.
    pub calls_ok: u64,
    /// Failed measured calls.
    pub calls_failed: u64,
    /// Calls that ended during the warm-up.
    pub warmup_calls: u64,
    /// `calls_ok / elapsed_s`.
    pub throughput: f64,
    /// Latency of successful calls (open loop: from the scheduled send time).
    pub latency_ms: LatencyMs,
    /// Failures by kind (calls and session operations).
    pub errors: BTreeMap<String, u64>,
    /// Per second.
    pub series: Vec<SecondReport>,
    /// Throughput trend.
    pub trend: Option<Trend>,
    /// Spawn → the agent answering `initialize` (deploy mode), ms.
    pub startup_ms: Option<f64>,
    /// The server process (when its pid is known).
    pub server: Option<ServerUsage>,
    /// Mock model counts (deploy mode).
    pub mock_llm: Option<MockLlmCounts>,
}

impl LoadReport {
    /// Every call and session operation succeeded.
    pub fn clean(&self) -> bool {
        self.errors.is_empty() && self.calls_ok > 0
    }
}
