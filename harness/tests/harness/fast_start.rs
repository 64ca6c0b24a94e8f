//! `fast_start:` of a profile: a launch through `{{python}}` is forked from the warm server (it
//! finds the preloaded module already imported), runs in its own directory with its arguments
//! and exit code, and ends with the server. Needs a `python3` on PATH (README: optional tools);
//! without one the test says so and checks nothing.

use std::process::Command;

use pallas_conformance::fast_start::WarmServer;

fn python() -> Option<String> {
    Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "python3".to_owned())
}

#[test]
fn a_launch_is_forked_warm_and_behaves_as_python_dash_m() {
    let Some(py) = python() else {
        eprintln!("no python3 on PATH: the fast start is not exercised here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let libs = dir.path().join("libs");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::write(libs.join("warm_marker.py"), "LOADED = True\n").unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("bridge.py"),
        "import os, sys\nprint('warm' if 'warm_marker' in sys.modules else 'cold', os.getcwd(), sys.argv[1:])\nsys.exit(7)\n",
    )
    .unwrap();
    let profile = dir.path().join("profile.yaml");
    std::fs::write(
        &profile,
        format!(
            "name: warm-check\ncommand: [\"{{{{python}}}}\", \"-m\", \"bridge\"]\nagent_url: \"http://127.0.0.1:{{{{agent.port}}}}/mcp\"\nenv:\n  PYTHONPATH: {}\nfast_start:\n  python: {py}\n  preload: [warm_marker]\n",
            libs.display()
        ),
    )
    .unwrap();
    let target = pallas_conformance::target::load(&profile).unwrap();
    let server = WarmServer::start(&target).unwrap().expect("a fast_start");
    let out = Command::new(&server.launcher)
        .args(["-m", "bridge", "one", "two"])
        .current_dir(&work)
        .env("PYTHONPATH", &libs)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("warm "),
        "forked from the warm server: {text}"
    );
    assert!(
        text.contains(&work.display().to_string()),
        "in the launcher's directory: {text}"
    );
    assert!(
        text.contains("['one', 'two']"),
        "with its arguments: {text}"
    );
    // Cold, the same module imports nothing in advance.
    let cold = Command::new(&py)
        .args(["-m", "bridge"])
        .current_dir(&work)
        .env("PYTHONPATH", &libs)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&cold.stdout).starts_with("cold "));
    let pid = server.pid();
    drop(server);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the warm server ends with its handle"
    );
}

#[test]
fn a_warm_server_that_cannot_start_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.yaml");
    std::fs::write(
        &profile,
        "name: warm-broken\ncommand: [\"{{python}}\", \"-m\", \"bridge\"]\nagent_url: \"http://127.0.0.1:{{agent.port}}/mcp\"\nfast_start:\n  python: /nonexistent/python\n",
    )
    .unwrap();
    let target = pallas_conformance::target::load(&profile).unwrap();
    let e = WarmServer::start(&target).unwrap_err().to_string();
    assert!(e.contains("did not start") && e.contains("--cold"), "{e}");
}
