//! The binary, terminated mid-run, leaves no implementation process behind.

use std::process::Command;
use std::time::{Duration, Instant};

use super::common::*;

/// Whether `pid` names a live process (a zombie waiting for its reaper counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn poll<T>(what: &str, within: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

fn terminate_mid_run(signal: nix::sys::signal::Signal, expected_code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("impl.pid");
    // An implementation that never becomes ready: the run is waiting for it when the signal comes.
    let profile = dir.path().join("never-ready.yaml");
    std::fs::write(
        &profile,
        format!(
            "name: never-ready\ncommand: [sh, -c, 'echo $$ > {}; exec sleep 300']\nagent_url: \"http://127.0.0.1:{{{{agent.port}}}}/mcp\"\nreadiness:\n  - tcp: \"127.0.0.1:{{{{agent.port}}}}\"\n    each_agent: true\ncapabilities: [health]\nstartup_timeout: 120s\n",
            pid_file.display()
        ),
    )
    .unwrap();
    let mut harness = Command::new(env!("CARGO_BIN_EXE_pallas-conformance"))
        .args(["run"])
        .arg(scenarios_dir().join("samples/health-ok.yaml"))
        .arg("--target")
        .arg(&profile)
        .current_dir(workspace())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid: i32 = poll(
        "the implementation wrote its pid",
        Duration::from_secs(60),
        || {
            std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
        },
    );
    assert!(alive(pid));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(harness.id() as i32), signal).unwrap();
    let status = poll("the harness exited", Duration::from_secs(20), || {
        harness.try_wait().unwrap()
    });
    assert_eq!(status.code(), Some(expected_code), "{status:?}");
    poll(
        "the implementation was stopped",
        Duration::from_secs(10),
        || (!alive(pid)).then_some(()),
    );
}

#[test]
fn sigterm_stops_the_launched_implementation_and_exits_143() {
    terminate_mid_run(nix::sys::signal::Signal::SIGTERM, 143);
}

#[test]
fn sigint_stops_the_launched_implementation_and_exits_130() {
    terminate_mid_run(nix::sys::signal::Signal::SIGINT, 130);
}
