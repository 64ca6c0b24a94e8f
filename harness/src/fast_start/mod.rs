//! Fast starts for Python bridges, the `fast_start:` key of a target profile: a warm server
//! (`warm.py`, shipped inside this binary) imports the bridge's libraries once, and every launch
//! the profile's command makes through `{{python}}` is a fresh process forked from it that runs
//! as `python -m MODULE ARGS` would: its own working directory, environment, standard streams,
//! process group and signals; no state carried from one launch to the next
//! (`harness/docs/fast-start.md`).

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use crate::target::Target;

/// The warm server and launcher, as shipped.
const WARM_PY: &str = include_str!("warm.py");

/// How long importing the preloaded modules may take before the run gives up on the warm server.
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// Why a fast start could not begin.
#[derive(Debug, thiserror::Error)]
pub enum FastStartError {
    /// A file of the warm server could not be written, or its process not started.
    #[error("fast start: {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The warm server ended, or said nothing, before it listened.
    #[error(
        "fast start: the warm server did not start ({reason}); run with --cold to start every launch cold{}",
        if .output.is_empty() { String::new() } else { format!("\n{}", .output) }
    )]
    NotStarted {
        /// What happened.
        reason: String,
        /// What it printed on stderr (its tail).
        output: String,
    },
}

/// A running warm server: while it lives, `launcher` starts warm processes. Dropping it ends
/// the server and every launch still running.
pub struct WarmServer {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The executable the profile's `{{python}}` names while the server runs.
    pub launcher: PathBuf,
    /// The server's files (`warm.py`, the launcher, its log), removed with it.
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for WarmServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmServer")
            .field("pid", &self.child.id())
            .field("launcher", &self.launcher)
            .finish()
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> FastStartError {
    let what = what.into();
    move |source| FastStartError::Io { what, source }
}

/// The compile cache every launch of a Node bridge shares (`fast_start: {node: true}`): under
/// the kit's cache, `node-compile-cache/<target>`, else the system's temporary directory. Node
/// checks each cached entry against the module's source, so a changed bridge compiles afresh; the
/// cache holds compiled code only, nothing a launch did.
pub fn node_compile_cache(target: &Target) -> Option<PathBuf> {
    if !target.spec.fast_start.as_ref().is_some_and(|f| f.node) {
        return None;
    }
    let base = crate::runner::schedule::cache_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("pallas-conformance"));
    Some(
        base.join("node-compile-cache")
            .join(crate::runner::schedule::file_name(&target.spec.name)),
    )
}

/// Gives every launch of a Node bridge (`fast_start: {node: true}`) the shared compile cache as
/// `NODE_COMPILE_CACHE`, unless the command line sets that variable itself.
pub fn share_node_compile_cache(target: &mut Target) {
    if let Some(dir) = node_compile_cache(target) {
        target
            .env_overrides
            .entry("NODE_COMPILE_CACHE".into())
            .or_insert_with(|| dir.display().to_string());
    }
}

/// A single-quoted shell word.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl WarmServer {
    /// Starts the warm server of `target`'s `fast_start` (`None` when the profile has none), in
    /// the profile's environment, and waits until it listens.
    pub fn start(target: &Target) -> Result<Option<WarmServer>, FastStartError> {
        let Some((fast, python)) = target
            .spec
            .fast_start
            .as_ref()
            .and_then(|f| Some((f, f.python.as_deref()?)))
        else {
            return Ok(None);
        };
        let dir = tempfile::Builder::new()
            .prefix("pallas-fast-start-")
            .tempdir()
            .map_err(io("create its directory"))?;
        let warm = dir.path().join("warm.py");
        std::fs::write(&warm, WARM_PY).map_err(io(format!("write {}", warm.display())))?;
        let preload = if fast.preload.is_empty() {
            String::new()
        } else {
            format!(" --preload {}", quoted(&fast.preload.join(",")))
        };
        // The server's command prints the socket and lives until its standard input closes.
        let script = format!(
            "exec {} {} run{preload} -- sh -c 'printf \"%s\\n\" \"$PALLAS_WARM_SOCKET\"; exec cat >/dev/null'",
            python,
            quoted(&warm.display().to_string()),
        );
        let log = dir.path().join("server.log");
        let stderr =
            std::fs::File::create(&log).map_err(io(format!("create {}", log.display())))?;
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&script)
            .current_dir(&target.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0);
        for (k, v) in environment(target) {
            command.env(k, v);
        }
        use std::os::unix::process::CommandExt as _;
        let mut child = command.spawn().map_err(io("start the warm server"))?;
        let stdin = child.stdin.take();
        let socket = first_line(&mut child, &log)?;
        let launcher = dir.path().join("python");
        let shim = format!(
            "#!/bin/sh\nPALLAS_WARM_SOCKET={} exec {} {} launch \"$@\"\n",
            quoted(&socket),
            python,
            quoted(&warm.display().to_string())
        );
        std::fs::write(&launcher, shim).map_err(io(format!("write {}", launcher.display())))?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))
            .map_err(io(format!("make {} executable", launcher.display())))?;
        Ok(Some(WarmServer {
            child,
            stdin,
            launcher,
            _dir: dir,
        }))
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The profile's environment as a launch gets it (its `env` with the templates a profile may use
/// outside a deployment, then the command line's `--target-env`).
fn environment(target: &Target) -> Vec<(String, String)> {
    let vars = crate::target::static_vars(target);
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in target.spec.env.iter().chain(target.env_overrides.iter()) {
        let value = crate::scenario::template::render(v, &vars).unwrap_or_else(|_| v.clone());
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), value));
    }
    env
}

/// The socket the server's command printed, or why there is none.
fn first_line(child: &mut Child, log: &Path) -> Result<String, FastStartError> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(read.map(|_| line));
        });
    }
    let reason = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(line)) if !line.trim().is_empty() => return Ok(line.trim().to_owned()),
        Ok(_) => "it ended before it listened".to_owned(),
        Err(_) => format!(
            "no socket within {}",
            humantime::format_duration(START_TIMEOUT)
        ),
    };
    kill_group(child);
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = output.lines().rev().take(20).collect();
    Err(FastStartError::NotStarted {
        reason,
        output: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    })
}

fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.wait();
}

impl Drop for WarmServer {
    fn drop(&mut self) {
        // Its command ends when its input closes; the server then ends every launch and exits.
        drop(self.stdin.take());
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        kill_group(&mut self.child);
    }
}
