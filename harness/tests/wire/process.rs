//! Launching implementations: readiness with a deadline, crash detection, output kept,
//! graceful and forced stops, no orphans.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::kill;
use nix::unistd::Pid;
use pallas_conformance::process::{
    ImplProcess, LaunchSpec, ProcessError, ReadinessProbe, free_port,
};
use pallas_mocks::{McpMock, McpMockSpec};

use crate::fixture::{Fixture, Reply};

fn sh(dir: &Path, script: &str) -> LaunchSpec {
    LaunchSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env: vec![("GREETING".into(), "hello from env".into())],
        env_remove: vec![],
        log_dir: dir.join("logs"),
    }
}

/// The process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
        && std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|s| !s.contains("State:\tZ"))
}

/// Polls until `cond` holds or the deadline passes.
async fn eventually(deadline: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

async fn read_pid(path: PathBuf) -> i32 {
    assert!(
        eventually(Duration::from_secs(10), || std::fs::read_to_string(&path)
            .is_ok_and(|s| s.trim().parse::<i32>().is_ok()))
        .await,
        "pid file {path:?} never appeared"
    );
    std::fs::read_to_string(&path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn an_implementation_is_ready_once_its_probe_answers() {
    let dir = tempfile::tempdir().unwrap();
    let ready_file = dir.path().join("ready");
    let watched = ready_file.clone();
    // The probe answers 200 only once the launched program has created its `ready` file.
    let fx = Fixture::start(move |_| {
        if watched.exists() {
            Reply::status(200, "text/plain", "ok")
        } else {
            Reply::status(503, "text/plain", "starting")
        }
    })
    .await;
    let spec = sh(
        dir.path(),
        "echo \"$GREETING\"; sleep 0.3; touch ready; exec sleep 30",
    );
    let mut p = ImplProcess::spawn(&spec).await.unwrap();
    p.wait_ready(
        &[ReadinessProbe::HttpGet {
            url: fx.url("/health"),
        }],
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    assert!(ready_file.exists());
    assert!(p.exited().is_none());
    let out = p.stop(Duration::from_secs(5)).await;
    assert_eq!(out.stdout, "hello from env\n");
    assert!(out.exit.is_some());
}

#[tokio::test]
async fn a_crash_before_readiness_fails_fast_with_status_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port().unwrap();
    let mut p = ImplProcess::spawn(&sh(
        dir.path(),
        "echo starting; echo 'config error: agents.yaml:3:5' >&2; exit 3",
    ))
    .await
    .unwrap();
    let started = Instant::now();
    let err = p
        .wait_ready(
            &[ReadinessProbe::Tcp {
                addr: format!("127.0.0.1:{port}"),
            }],
            Duration::from_secs(60),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "a crash must not wait for the deadline"
    );
    let ProcessError::ExitedEarly {
        status,
        stdout,
        stderr,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(status.code(), Some(3));
    assert_eq!(stdout, "starting\n");
    assert!(stderr.contains("agents.yaml:3:5"));
    assert!(err.to_string().contains("agents.yaml:3:5"));
}

#[tokio::test]
async fn a_process_that_never_becomes_ready_fails_at_the_deadline_naming_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port().unwrap();
    let mut p = ImplProcess::spawn(&sh(dir.path(), "echo waiting >&2; exec sleep 30"))
        .await
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let stderr_log = p.stderr_path().to_path_buf();
    assert!(
        eventually(Duration::from_secs(10), || std::fs::read_to_string(
            &stderr_log
        )
        .is_ok_and(|s| s == "waiting\n"))
        .await
    );
    let err = p
        .wait_ready(
            &[ReadinessProbe::Tcp { addr: addr.clone() }],
            Duration::from_millis(400),
        )
        .await
        .unwrap_err();
    let ProcessError::NotReady {
        pending, stderr, ..
    } = &err
    else {
        panic!("{err}")
    };
    assert!(pending.contains(&addr), "{pending}");
    assert_eq!(stderr, "waiting\n");
    let out = p.stop(Duration::from_secs(5)).await;
    assert!(out.exit.is_some());
}

#[tokio::test]
async fn the_mcp_initialize_probe_leaves_no_session_behind() {
    let dir = tempfile::tempdir().unwrap();
    let m = McpMock::start(
        "iut",
        McpMockSpec::default(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .unwrap();
    let mut p = ImplProcess::spawn(&sh(dir.path(), "exec sleep 30"))
        .await
        .unwrap();
    p.wait_ready(
        &[ReadinessProbe::McpInitialize { url: m.url() }],
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let stats = m.sessions();
    assert!(stats.opened >= 1);
    assert_eq!(stats.open_now, 0, "{stats:?}");
    p.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn stop_terminates_gracefully_when_the_program_honours_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = ImplProcess::spawn(&sh(
        dir.path(),
        "trap 'echo stopping; exit 0' TERM; touch up; while :; do sleep 0.05; done",
    ))
    .await
    .unwrap();
    let up = dir.path().join("up");
    assert!(eventually(Duration::from_secs(10), || up.exists()).await);
    assert!(p.exited().is_none());
    let out = p.stop(Duration::from_secs(10)).await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stdout.contains("stopping"));
}

#[tokio::test]
async fn stop_kills_a_program_that_ignores_sigterm_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = ImplProcess::spawn(&sh(
        dir.path(),
        "trap '' TERM; sleep 30 & echo $! > child.pid; while :; do sleep 0.05; done",
    ))
    .await
    .unwrap();
    let child = read_pid(dir.path().join("child.pid")).await;
    assert!(alive(child));
    assert!(p.exited().is_none());
    let out = p.stop(Duration::from_millis(200)).await;
    assert_eq!(out.exit_code, None, "killed by a signal: {out:?}");
    assert!(
        out.exit.as_deref().is_some_and(|e| e.contains("9")),
        "{out:?}"
    );
    assert!(
        eventually(Duration::from_secs(10), || !alive(child)).await,
        "child {child} survived"
    );
}

#[tokio::test]
async fn dropping_the_handle_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let p = ImplProcess::spawn(&sh(
        dir.path(),
        "sleep 30 & echo $! > child.pid; exec sleep 30",
    ))
    .await
    .unwrap();
    let leader = p.pid().unwrap() as i32;
    let child = read_pid(dir.path().join("child.pid")).await;
    drop(p);
    assert!(
        eventually(Duration::from_secs(10), || !alive(child)).await,
        "child {child} survived the drop"
    );
    // The leader is a zombie until reaped by tokio's orphan reaper or gone; either way it no
    // longer runs: its /proc status says so, or it has vanished.
    assert!(eventually(Duration::from_secs(10), || !alive(leader)).await);
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = LaunchSpec {
        program: "/nonexistent/pallas".into(),
        args: vec![],
        cwd: dir.path().to_path_buf(),
        env: vec![],
        env_remove: vec![],
        log_dir: dir.path().join("logs"),
    };
    let err = ImplProcess::spawn(&spec).await.unwrap_err();
    assert!(matches!(err, ProcessError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/pallas"));
}

#[tokio::test]
async fn a_panic_while_the_implementation_runs_leaves_no_orphan() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh(dir.path(), "sleep 30 & echo $! > child.pid; exec sleep 30");
    let pid_file = dir.path().join("child.pid");
    let task = tokio::spawn(async move {
        let _iut = ImplProcess::spawn(&spec).await.unwrap();
        let _child = read_pid(pid_file).await;
        panic!("a step blew up");
    });
    assert!(task.await.unwrap_err().is_panic());
    let child = read_pid(dir.path().join("child.pid")).await;
    assert!(
        eventually(Duration::from_secs(10), || !alive(child)).await,
        "child {child} outlived the panic"
    );
}

#[tokio::test]
async fn a_removed_variable_is_unset_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    // HOME is in the harness's own environment: removing it leaves it unset.
    let mut spec = sh(dir.path(), "echo \"${HOME-unset}|${GREETING-unset}\"");
    spec.env_remove = vec!["HOME".into()];
    let mut p = ImplProcess::spawn(&spec).await.unwrap();
    p.wait_exit(Duration::from_secs(10)).await;
    let out = p.stop(Duration::from_secs(5)).await;
    assert_eq!(out.stdout, "unset|hello from env\n");
}
