//! A large answer through the command users run: the `pallas-conformance run` binary, as a child
//! process, runs suite scenarios that read message content (a text round trip, an image, the
//! history prompt, progress on the call's stream) against tests/targets/huge-answer.yaml, whose
//! every tool call answers 26 MB (1,000,000 text blocks in one `application/json` body).
//!
//! For each scenario the harness's own peak RSS (`VmHWM` of its process, sampled until it
//! exits; the bridge it launches is another process) must stay within 10× the answers it
//! received above the same run against a normal answer, and every entry's verdict must be the
//! one the normal answer gets: the huge answer is judged, not dropped. The figures are printed
//! (`cargo test -p pallas-e2e --test large_answer_cli -- --nocapture`); harness/README.md states
//! them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pallas_conformance::target::without_cargo_package_vars;
use pallas_e2e::suite::workspace_root;
use serde_json::Value;

/// The profile: the hostile bridge in `huge-result` mode (`--target-env HOSTILE_MODE=normal`
/// gives the baseline).
const PROFILE: &str = "tests/targets/huge-answer.yaml";

/// The bytes of one huge answer: 1,000,000 blocks of `{"type":"text","text":"x"},`.
const ANSWER_BYTES: u64 = 1_000_000 * 27;

/// The scenarios, each run once against the huge answer and once against a normal one.
const SCENARIOS: &[&str] = &[
    "scenarios/messages/text-round-trip.yaml",
    "scenarios/messages/image-vision-on.yaml",
    "scenarios/messages/history-connection.yaml",
    "scenarios/progress/on-the-call-stream.yaml",
];

/// The harness binary beside this test's build (debug under `cargo test`), built when stale.
fn harness_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("the test binary has no profile directory")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "-q", "-p", "pallas-conformance", "--bin"])
        .arg("pallas-conformance")
        .current_dir(workspace_root());
    // `cargo test` gave this process the package variables that ring's build script watches:
    // passed on, they would rebuild ring and every crate above it.
    without_cargo_package_vars(&mut build);
    if profile_dir.ends_with("release") {
        build.arg("--release");
    }
    let status = build.status().map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build of pallas-conformance: {status}"));
    }
    Ok(profile_dir.join("pallas-conformance"))
}

/// `VmHWM` of a process in KiB, while it runs.
fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One run of one scenario: the harness's peak RSS (KiB), the verdict of every entry, and how
/// many messages its steps sent (each answered with the huge answer in that mode).
struct Run {
    peak_kb: u64,
    verdicts: Vec<(String, String)>,
    sends: u64,
}

/// One run of `scenario` against the huge-answer profile in the bridge's `mode`.
fn run(binary: &Path, scenario: &str, mode: &str, out: &Path) -> Result<Run, String> {
    let report = out.join(format!("{}-{mode}.json", scenario.replace('/', "_")));
    let mut child = Command::new(binary)
        .arg("run")
        .arg(scenario)
        .arg("--target")
        .arg(PROFILE)
        .arg("--target-env")
        .arg(format!("HOSTILE_MODE={mode}"))
        .arg("--report-json")
        .arg(&report)
        .current_dir(workspace_root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    // VmHWM only rises: the last reading before the process exits is its peak.
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = peak_kb(child.id()) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // 0 all passed, 1 a finding: both are judged runs.
    if !matches!(status.code(), Some(0 | 1)) {
        return Err(format!("{scenario} against the {mode} answer: {status}"));
    }
    let text = std::fs::read_to_string(&report).map_err(|e| e.to_string())?;
    let json: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let s = &json["scenarios"][0];
    let verdicts = s["checks"]
        .as_array()
        .ok_or("the report has no checks")?
        .iter()
        .map(|c| {
            (
                format!("{} {}", c["id"], c["title"]),
                c["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let sends = s["steps"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|x| x["action"] == "send").count()) as u64;
    Ok(Run {
        peak_kb: peak,
        verdicts,
        sends,
    })
}

#[test]
fn the_binary_holds_a_26_mb_answer_within_ten_times_its_size() -> Result<(), String> {
    let binary = harness_binary()?;
    let out = tempfile::tempdir().map_err(|e| e.to_string())?;
    // One scenario per thread: each harness process has its own peak.
    let runs = std::thread::scope(|scope| {
        let handles: Vec<_> = SCENARIOS
            .iter()
            .map(|scenario| {
                let (binary, out) = (&binary, out.path());
                scope.spawn(move || {
                    let base = run(binary, scenario, "normal", out)?;
                    let big = run(binary, scenario, "huge-result", out)?;
                    Ok::<_, String>((*scenario, base, big))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a run panicked".to_owned())?)
            .collect::<Result<Vec<_>, String>>()
    })?;
    let mut failures = Vec::new();
    for (scenario, base, big) in runs {
        assert!(big.sends > 0, "{scenario} sends no message");
        assert!(!big.verdicts.is_empty(), "{scenario}: no entry was judged");
        let above = big.peak_kb.saturating_sub(base.peak_kb);
        let answers = big.sends * ANSWER_BYTES;
        println!(
            "{scenario}: {} answer(s) of {} MB; peak {} MB against {} MB with a normal answer: +{} MB, {:.1}× the answers",
            big.sends,
            ANSWER_BYTES / 1_000_000,
            big.peak_kb / 1024,
            base.peak_kb / 1024,
            above / 1024,
            (above * 1024) as f64 / answers as f64
        );
        if above * 1024 > 10 * answers {
            failures.push(format!(
                "{scenario}: +{} MB above the normal run, over 10× the {} MB received",
                above / 1024,
                answers / 1_000_000
            ));
        }
        if big.verdicts != base.verdicts {
            failures.push(format!(
                "{scenario}: verdicts differ from the normal answer's: {:?} vs {:?}",
                big.verdicts, base.verdicts
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
