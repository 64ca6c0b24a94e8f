//! Launching an implementation under test: its own process group, stdout/stderr kept in files,
//! readiness polled with a deadline, crash detection, and no orphans (the group is killed on
//! stop, on drop — panics included — and by [`kill_all_launched`] from a Ctrl-C handler).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Serialize;
use serde_json::json;

use crate::log_format::LogFormat;
use crate::observation::ProcessOutput;

/// The longest pause between two rounds of readiness probes.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The pause after the first round of readiness probes; each later pause doubles, up to
/// [`POLL_INTERVAL`]. A server that is ready within a few milliseconds (a compiled bridge) is
/// found ready within about as many, and a slow starter is asked every 50 ms as before.
const FIRST_PAUSE: Duration = Duration::from_millis(2);
/// Bytes of each output file kept in errors and [`ProcessOutput`] (the tail).
pub const OUTPUT_TAIL_BYTES: usize = 64 * 1024;
/// Timeout of one readiness probe attempt.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// How to launch one implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Program (looked up in `PATH` when it has no `/`).
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment variables (the harness environment is inherited).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Where `stdout.log` and `stderr.log` are written (created if missing).
    pub log_dir: PathBuf,
}

/// A condition that says the implementation is ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadinessProbe {
    /// An HTTP GET answered with a 2xx status.
    HttpGet {
        /// URL.
        url: String,
    },
    /// An MCP `initialize` (2025-11-25) answered with a result; the session is then deleted.
    McpInitialize {
        /// MCP endpoint URL.
        url: String,
    },
    /// A TCP connect succeeded.
    Tcp {
        /// `host:port`.
        addr: String,
    },
}

impl std::fmt::Display for ReadinessProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadinessProbe::HttpGet { url } => write!(f, "HTTP GET {url}"),
            ReadinessProbe::McpInitialize { url } => write!(f, "MCP initialize {url}"),
            ReadinessProbe::Tcp { addr } => write!(f, "TCP connect {addr}"),
        }
    }
}

/// Why launching or waiting failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The log directory or files could not be created.
    #[error("could not prepare log files in {dir}: {source}")]
    Logs {
        /// The log directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("could not start `{program}` in {cwd}: {source}")]
    Spawn {
        /// Program.
        program: String,
        /// Working directory.
        cwd: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The process exited before it was ready.
    #[error(
        "the implementation exited ({status}) before it was ready\n--- stderr (tail) ---\n{stderr}\n--- stdout (tail) ---\n{stdout}"
    )]
    ExitedEarly {
        /// Exit status.
        status: ExitStatus,
        /// Tail of stdout.
        stdout: String,
        /// Tail of stderr.
        stderr: String,
    },
    /// The deadline passed with probes still failing.
    #[error(
        "not ready after {waited_ms} ms; still failing: {pending}\n--- stderr (tail) ---\n{stderr}"
    )]
    NotReady {
        /// How long it waited.
        waited_ms: u64,
        /// The probes still failing, with their last error.
        pending: String,
        /// Tail of stderr.
        stderr: String,
    },
    /// The HTTP client for the probes could not be built.
    #[error("could not build the probe HTTP client: {0}")]
    Client(String),
}

/// Why a readiness probe did not pass (yet).
#[derive(Debug, thiserror::Error)]
pub enum ProbeFailure {
    /// Not run so far.
    #[error("not tried yet")]
    NotTried,
    /// No answer within the probe's time.
    #[error("probe timed out")]
    TimedOut,
    /// The TCP connection failed.
    #[error("{0}")]
    Connect(#[source] std::io::Error),
    /// The HTTP request failed (shown with its causes).
    #[error("{}", with_causes(.0))]
    Request(#[source] reqwest::Error),
    /// An unsuccessful HTTP status.
    #[error("HTTP {0}")]
    Status(u16),
    /// The answer's body could not be read.
    #[error("{0}")]
    Body(#[source] reqwest::Error),
    /// `initialize` was answered without a result.
    #[error("initialize answered without a result")]
    NoResult,
}

fn live_groups() -> &'static Mutex<BTreeSet<i32>> {
    static GROUPS: OnceLock<Mutex<BTreeSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| Mutex::new(BTreeSet::new()))
}

fn with_groups<R>(f: impl FnOnce(&mut BTreeSet<i32>) -> R) -> R {
    let mut guard = live_groups()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f(&mut guard)
}

/// Sends SIGKILL to every process group launched by this process and not yet stopped. Call it
/// from a Ctrl-C handler before exiting.
pub fn kill_all_launched() -> usize {
    let groups: Vec<i32> = with_groups(|g| std::mem::take(g).into_iter().collect());
    for pgid in &groups {
        let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
    }
    crate::escapees::end_all_of_this_harness();
    groups.len()
}

/// One running implementation (the leader of its own process group).
#[derive(Debug)]
pub struct ImplProcess {
    child: tokio::process::Child,
    pgid: Option<i32>,
    stdout_path: PathBuf,
    stderr_path: PathBuf,
    exit: Option<ExitStatus>,
    /// Marks this launch and its descendants (see [`crate::escapees`]).
    marker: String,
}

impl ImplProcess {
    /// Starts the program in its own process group, stdout and stderr going to
    /// `log_dir/stdout.log` and `log_dir/stderr.log`.
    pub async fn spawn(spec: &LaunchSpec) -> Result<ImplProcess, ProcessError> {
        let logs_err = |source| ProcessError::Logs {
            dir: spec.log_dir.clone(),
            source,
        };
        std::fs::create_dir_all(&spec.log_dir).map_err(logs_err)?;
        let stdout_path = spec.log_dir.join("stdout.log");
        let stderr_path = spec.log_dir.join("stderr.log");
        let stdout = std::fs::File::create(&stdout_path).map_err(logs_err)?;
        let stderr = std::fs::File::create(&stderr_path).map_err(logs_err)?;
        crate::escapees::sweep_stale_once();
        let marker = crate::escapees::new_marker();
        let mut command = tokio::process::Command::new(&spec.program);
        for k in &spec.env_remove {
            command.env_remove(k);
        }
        command
            .env(crate::escapees::MARKER_ENV, &marker)
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .process_group(0)
            .kill_on_drop(true);
        let child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: spec.program.clone(),
            cwd: spec.cwd.clone(),
            source,
        })?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        if let Some(pgid) = pgid {
            with_groups(|g| g.insert(pgid));
        }
        Ok(ImplProcess {
            child,
            pgid,
            stdout_path,
            stderr_path,
            exit: None,
            marker,
        })
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pgid.and_then(|p| u32::try_from(p).ok())
    }

    /// Path of the stdout log.
    pub fn stdout_path(&self) -> &Path {
        &self.stdout_path
    }

    /// Path of the stderr log.
    pub fn stderr_path(&self) -> &Path {
        &self.stderr_path
    }

    /// The exit status, if the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(status);
        }
        self.exit
    }

    /// Polls every probe until all succeed, failing fast if the process exits and with the
    /// still-failing probes when `deadline` passes.
    pub async fn wait_ready(
        &mut self,
        probes: &[ReadinessProbe],
        deadline: Duration,
    ) -> Result<(), ProcessError> {
        let http = pallas_mocks::http_client::builder()
            .no_proxy()
            .timeout(PROBE_TIMEOUT)
            .build()
            .map_err(|e| ProcessError::Client(e.to_string()))?;
        let started = Instant::now();
        let mut pending: Vec<(ReadinessProbe, ProbeFailure)> = probes
            .iter()
            .map(|p| (p.clone(), ProbeFailure::NotTried))
            .collect();
        let mut pause = Duration::ZERO;
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).clamp(FIRST_PAUSE, POLL_INTERVAL);
            if let Some(status) = self.exited() {
                return Err(ProcessError::ExitedEarly {
                    status,
                    stdout: read_tail(&self.stdout_path),
                    stderr: read_tail(&self.stderr_path),
                });
            }
            let remaining = deadline.saturating_sub(started.elapsed());
            let mut still = Vec::new();
            for (probe, _) in pending {
                let attempt =
                    tokio::time::timeout(remaining.min(PROBE_TIMEOUT), run_probe(&http, &probe))
                        .await;
                match attempt {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => still.push((probe, e)),
                    Err(_) => still.push((probe, ProbeFailure::TimedOut)),
                }
            }
            pending = still;
            if pending.is_empty() {
                // A process that is already dying is not ready.
                if let Some(status) = self.exited() {
                    return Err(ProcessError::ExitedEarly {
                        status,
                        stdout: read_tail(&self.stdout_path),
                        stderr: read_tail(&self.stderr_path),
                    });
                }
                return Ok(());
            }
            if started.elapsed() >= deadline {
                let pending = pending
                    .iter()
                    .map(|(p, e)| format!("{p} ({e})"))
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(ProcessError::NotReady {
                    waited_ms: started.elapsed().as_millis() as u64,
                    pending,
                    stderr: read_tail(&self.stderr_path),
                });
            }
        }
    }

    /// Stops the implementation: SIGTERM to the group, up to `grace` for the leader to exit,
    /// then SIGKILL to the whole group (stragglers included). Returns the output tails.
    pub async fn stop(mut self, grace: Duration) -> ProcessOutput {
        if self.exited().is_none() {
            if let Some(pgid) = self.pgid {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
            }
            match tokio::time::timeout(grace, self.child.wait()).await {
                Ok(Ok(status)) => self.exit = Some(status),
                _ => {
                    self.kill_group();
                    if let Ok(Ok(status)) =
                        tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await
                    {
                        self.exit = Some(status);
                    }
                }
            }
        }
        self.kill_group();
        // Descendants that left the group (setsid, double fork) carry the launch's marker.
        crate::escapees::end_marked(&self.marker);
        ProcessOutput {
            stdout: read_tail(&self.stdout_path),
            stderr: read_tail(&self.stderr_path),
            exit: self.exit.map(|s| s.to_string()),
            exit_code: self.exit.and_then(|s| s.code()),
            log_format: LogFormat::default(),
        }
    }

    /// Waits up to `within` for the process to exit; its status, if it did.
    pub async fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.exited() {
            return Some(status);
        }
        if let Ok(Ok(status)) = tokio::time::timeout(within, self.child.wait()).await {
            self.exit = Some(status);
        }
        self.exit
    }

    /// The output so far, without stopping.
    pub fn output_so_far(&mut self) -> ProcessOutput {
        let exit = self.exited();
        ProcessOutput {
            stdout: read_tail(&self.stdout_path),
            stderr: read_tail(&self.stderr_path),
            exit: exit.map(|s| s.to_string()),
            exit_code: exit.and_then(|s| s.code()),
            log_format: LogFormat::default(),
        }
    }

    fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }

    fn forget_group(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            with_groups(|g| g.remove(&pgid));
        }
    }
}

impl Drop for ImplProcess {
    fn drop(&mut self) {
        // Kill the whole group even when the leader already exited: its children may live on.
        self.kill_group();
        let _ = self.child.start_kill();
        let _ = self.child.try_wait();
        self.forget_group();
    }
}

/// An error with its sources (`error sending request…: client error (Connect): tcp connect
/// error: Connection refused`): the probe's failure names its cause.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.ends_with(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

async fn run_probe(http: &reqwest::Client, probe: &ReadinessProbe) -> Result<(), ProbeFailure> {
    match probe {
        ReadinessProbe::Tcp { addr } => tokio::net::TcpStream::connect(addr.as_str())
            .await
            .map(|_| ())
            .map_err(ProbeFailure::Connect),
        ReadinessProbe::HttpGet { url } => {
            let response = http.get(url).send().await.map_err(ProbeFailure::Request)?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(ProbeFailure::Status(response.status().as_u16()))
            }
        }
        ReadinessProbe::McpInitialize { url } => {
            let body = json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "pallas-conformance-probe", "version": env!("CARGO_PKG_VERSION")}
                }
            });
            let response = http
                .post(url)
                .header("accept", crate::client::MCP_ACCEPT)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .map_err(ProbeFailure::Request)?;
            let status = response.status();
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let text = response.text().await.map_err(ProbeFailure::Body)?;
            if !status.is_success() {
                return Err(ProbeFailure::Status(status.as_u16()));
            }
            if !text.contains("\"result\"") {
                return Err(ProbeFailure::NoResult);
            }
            if let Some(session) = session {
                // Leave no session behind; a failed DELETE does not make the target unready.
                let _ = http
                    .delete(url)
                    .header("mcp-session-id", session)
                    .send()
                    .await;
            }
            Ok(())
        }
    }
}

/// The last [`OUTPUT_TAIL_BYTES`] of a file, lossily decoded (empty when unreadable).
pub fn read_tail(path: &Path) -> String {
    crate::client::limits::read_file_tail(path, OUTPUT_TAIL_BYTES)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

pub use crate::ports::free_port;
