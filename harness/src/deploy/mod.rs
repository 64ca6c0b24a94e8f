//! One way to deploy a target: render a scenario's deployment into a run directory, spawn the
//! implementation, wait for its readiness probes, reload it with a changed deployment, stop it
//! and read its logs. The runner, the `reload` step and the load tool all deploy through
//! [`Deployment`]; the defaults (startup deadline, stop grace) are written once, here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::observation::ProcessOutput;
use crate::process::{ImplProcess, LaunchSpec};
use crate::redact::Redactor;
use crate::scenario::DeploymentSpec;
use crate::target::{ReloadMode, Rendered, Target, render_deployment};

/// How long a target may take to become ready when its profile does not say.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopped implementation gets between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(3);
/// The grace after a start that failed (it is already misbehaving).
pub const FAILED_START_GRACE: Duration = Duration::from_secs(2);

/// Why a deployment step failed; `output` holds the implementation's stdout and stderr when it
/// had been started (unredacted: the caller redacts before reporting).
#[derive(Debug, Clone)]
pub struct DeployError {
    /// What went wrong.
    pub message: String,
    /// `--- stdout … --- stderr …` of the implementation, when it ran.
    pub output: Option<String>,
}

impl DeployError {
    pub(crate) fn plain(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            output: None,
        }
    }
}

impl std::fmt::Display for DeployError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A run directory: kept at a chosen path (`--keep`), or a temporary one removed on drop.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl RunDir {
    /// `keep`: this path, emptied first; otherwise a fresh temporary directory named `prefix…`.
    pub fn create(keep: Option<&Path>, prefix: &str) -> Result<Self, DeployError> {
        match keep {
            Some(p) => {
                let _ = std::fs::remove_dir_all(p);
                Ok(Self {
                    path: p.to_path_buf(),
                    _temp: None,
                })
            }
            None => tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .map(|t| Self {
                    path: t.path().to_path_buf(),
                    _temp: Some(t),
                })
                .map_err(|e| DeployError::plain(format!("cannot create a run directory: {e}"))),
        }
    }

    /// Where the files are.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A target deployed into a run directory: what was rendered, and the implementation process
/// once started.
#[derive(Debug)]
pub struct Deployment {
    target: Target,
    mock_urls: BTreeMap<String, String>,
    spec: DeploymentSpec,
    ports: BTreeMap<String, u16>,
    rendered: Rendered,
    process: Option<ImplProcess>,
    run_dir: RunDir,
}

impl Deployment {
    /// Renders `spec` for `target` into `run_dir` (free ports chosen, secrets of the rendered
    /// files added to `redactor`). Nothing is started yet.
    pub fn render(
        target: &Target,
        spec: &DeploymentSpec,
        mock_urls: &BTreeMap<String, String>,
        run_dir: RunDir,
        redactor: &mut Redactor,
    ) -> Result<Self, DeployError> {
        let mut ports = BTreeMap::new();
        let rendered = render_deployment(
            target,
            spec,
            mock_urls,
            run_dir.path(),
            &mut ports,
            redactor,
        )
        .map_err(|e| DeployError::plain(e.to_string()))?;
        Ok(Self {
            target: target.clone(),
            mock_urls: mock_urls.clone(),
            spec: spec.clone(),
            ports,
            rendered,
            process: None,
            run_dir,
        })
    }

    /// What rendering produced (URLs, variables, launch, probes, log files, files).
    pub fn rendered(&self) -> &Rendered {
        &self.rendered
    }

    /// The deployment as last rendered.
    pub fn spec(&self) -> &DeploymentSpec {
        &self.spec
    }

    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        self.run_dir.path()
    }

    /// The profile's startup deadline, or [`DEFAULT_STARTUP_TIMEOUT`].
    pub fn startup_timeout(&self) -> Duration {
        startup_timeout(&self.target)
    }

    /// Spawns the implementation with `launch` (the rendered one, possibly wrapped by the
    /// caller, e.g. in `taskset`).
    pub async fn spawn_with(&mut self, launch: &LaunchSpec) -> Result<(), DeployError> {
        let p = ImplProcess::spawn(launch)
            .await
            .map_err(|e| DeployError::plain(format!("the implementation did not start: {e}")))?;
        self.process = Some(p);
        Ok(())
    }

    /// Spawns the rendered launch.
    pub async fn spawn(&mut self) -> Result<(), DeployError> {
        let launch = self.rendered.launch.clone();
        self.spawn_with(&launch).await
    }

    /// Waits until every readiness probe passes, within `within`. On failure the implementation
    /// is stopped and its output returned with the error.
    pub async fn wait_ready(&mut self, within: Duration) -> Result<(), DeployError> {
        let Some(p) = self.process.as_mut() else {
            return Err(DeployError::plain("the implementation was not started"));
        };
        if let Err(e) = p.wait_ready(&self.rendered.probes, within).await {
            let out = self.stop().await;
            return Err(DeployError {
                message: format!("the implementation did not become ready: {e}"),
                output: out.map(|o| format!("--- stdout\n{}\n--- stderr\n{}", o.stdout, o.stderr)),
            });
        }
        Ok(())
    }

    /// Spawns and waits for readiness within the profile's startup deadline.
    pub async fn start(&mut self) -> Result<(), DeployError> {
        self.spawn().await?;
        let within = self.startup_timeout();
        self.wait_ready(within).await
    }

    /// The running process, for steps that read its output or wait for its exit.
    pub fn process_mut(&mut self) -> Option<&mut ImplProcess> {
        self.process.as_mut()
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(ImplProcess::pid)
    }

    /// Re-renders `spec` (ports of agents that stay are kept) and makes the implementation pick
    /// it up the way its profile says: SIGHUP, or a restart waited for until ready. Returns the
    /// files written.
    pub async fn reload(
        &mut self,
        spec: DeploymentSpec,
        redactor: &mut Redactor,
    ) -> Result<Vec<String>, DeployError> {
        let rendered = render_deployment(
            &self.target,
            &spec,
            &self.mock_urls,
            self.run_dir.path(),
            &mut self.ports,
            redactor,
        )
        .map_err(|e| DeployError::plain(e.to_string()))?;
        match self.target.spec.reload {
            ReloadMode::Sighup => {
                let pid = self
                    .pid()
                    .ok_or_else(|| DeployError::plain("the implementation is not running"))?;
                let pid = i32::try_from(pid).map_err(|e| DeployError::plain(e.to_string()))?;
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGHUP,
                )
                .map_err(|e| DeployError::plain(format!("SIGHUP to {pid} failed: {e}")))?;
            }
            ReloadMode::Restart => {
                if let Some(p) = self.process.take() {
                    p.stop(STOP_GRACE).await;
                }
                let mut p = ImplProcess::spawn(&rendered.launch)
                    .await
                    .map_err(|e| DeployError::plain(e.to_string()))?;
                p.wait_ready(&rendered.probes, self.startup_timeout())
                    .await
                    .map_err(|e| DeployError::plain(e.to_string()))?;
                self.process = Some(p);
            }
        }
        let files = rendered.files.clone();
        self.rendered = rendered;
        self.spec = spec;
        Ok(files)
    }

    /// Stops the implementation (SIGTERM, SIGKILL after [`STOP_GRACE`]) and returns its output,
    /// if it had been started.
    pub async fn stop(&mut self) -> Option<ProcessOutput> {
        let p = self.process.take()?;
        Some(p.stop(STOP_GRACE).await)
    }

    /// The implementation's stdout, stderr and every log file its profile names (the last
    /// `max` bytes of each), as one text.
    pub fn logs(&self, out: &ProcessOutput, max: usize) -> String {
        let mut logs = format!("{}\n{}", out.stdout, out.stderr);
        for f in &self.rendered.log_files {
            if let Ok(t) = crate::client::limits::read_file_tail(f, max) {
                logs.push('\n');
                logs.push_str(&String::from_utf8_lossy(&t));
            }
        }
        logs
    }
}

/// The startup deadline of `target`'s profile, or [`DEFAULT_STARTUP_TIMEOUT`].
pub fn startup_timeout(target: &Target) -> Duration {
    target
        .spec
        .startup_timeout
        .unwrap_or(DEFAULT_STARTUP_TIMEOUT)
}
