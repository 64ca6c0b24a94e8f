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

/// `fast_start: {node: true}`: every launch gets one compile cache per target, kept under the
/// kit's cache; a profile with neither runtime, or `preload` without `python`, is refused.
#[test]
fn a_node_bridge_shares_a_compile_cache_per_target() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, fast: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "name: node-bridge\ncommand: [node, server.mjs]\nagent_url: \"http://127.0.0.1:{{{{agent.port}}}}/mcp\"\n{fast}"
            ),
        )
        .unwrap();
        path
    };
    let mut target =
        pallas_conformance::target::load(&write("node.yaml", "fast_start: {node: true}\n"))
            .unwrap();
    assert!(
        WarmServer::start(&target).unwrap().is_none(),
        "no Python warm server"
    );
    pallas_conformance::fast_start::share_node_compile_cache(&mut target);
    let cache = target
        .env_overrides
        .get("NODE_COMPILE_CACHE")
        .cloned()
        .unwrap();
    assert!(cache.ends_with("node-compile-cache/node-bridge"), "{cache}");
    let mut cold = pallas_conformance::target::load(&write("plain.yaml", "")).unwrap();
    pallas_conformance::fast_start::share_node_compile_cache(&mut cold);
    assert!(cold.env_overrides.is_empty(), "no fast_start, no cache");
    for (name, fast, says) in [
        ("none.yaml", "fast_start: {}\n", "names no runtime"),
        (
            "pre.yaml",
            "fast_start: {node: true, preload: [x]}\n",
            "preload` without `python`",
        ),
    ] {
        let err = pallas_conformance::target::load(&write(name, fast)).unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains(says), "{name}: {text}");
    }
}
