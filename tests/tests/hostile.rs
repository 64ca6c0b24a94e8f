//! The harness survives any implementation: tests/scenarios/hostile.yaml against the hostile
//! bridge (src/bin/pallas-e2e-hostile.rs), once per misbehaviour. For each mode the run must
//! finish in bounded time, the harness's own peak memory above its baseline stay under a bound,
//! the reports and the event stream stay small, no process of the launch be left, and the
//! verdict named for the mode carry the cause in its reason.
//!
//! One test runs the modes one after another, so each mode's peak RSS is its own (the peak is
//! reset through `/proc/self/clear_refs` before each). The figures are printed per mode
//! (`cargo test -p pallas-e2e --test hostile -- --nocapture`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pallas_conformance::checks::Verdict;
use pallas_conformance::runner::{self, RunEvent, RunOptions, RunResult};
use pallas_conformance::{report, suite, target};

/// One mode: the verdict a check must have (by check id or title prefix), and what its reason
/// must say.
struct Mode {
    name: &'static str,
    check: &'static str,
    verdict: Verdict,
    reason: &'static str,
}

const fn mode(
    name: &'static str,
    check: &'static str,
    verdict: Verdict,
    reason: &'static str,
) -> Mode {
    Mode {
        name,
        check,
        verdict,
        reason,
    }
}

const MODES: &[Mode] = &[
    mode("normal", "ASSERT", Verdict::Pass, ""),
    // Judged when the machine reads, parses and judges 26 MB within the 5 s step timeout (a
    // release build); else the overrun is an error that says so. Either way never a silence.
    mode(
        "huge-result",
        "ASSERT",
        Verdict::Fail,
        "does not hold|over its 5000 ms timeout|judging did not finish",
    ),
    mode(
        "huge-sse-line",
        "ASSERT",
        Verdict::Error,
        "answer exceeded 32 MiB",
    ),
    mode(
        "huge-registry",
        "REG-002",
        Verdict::Error,
        "answer exceeded 8 MiB",
    ),
    mode(
        "endless-registry",
        "REG-002",
        Verdict::Error,
        "answer exceeded 8 MiB",
    ),
    mode("unreadable-registry", "REG-002", Verdict::Fail, "not JSON"),
    mode(
        "progress-flood",
        "MCP-009",
        Verdict::Pass,
        "|over its 5000 ms timeout|judging did not finish",
    ),
    mode(
        "duplicate-response",
        "MCP-010",
        Verdict::Warn,
        "3 responses to id",
    ),
    mode("unknown-id", "MCP-009", Verdict::Fail, "matches no request"),
    mode(
        "sentinel-error-id",
        "MCP-009",
        Verdict::Fail,
        "answered by an error response with id \"server-error\"",
    ),
    mode("invalid-json", "ASSERT", Verdict::Error, "not JSON"),
    mode("invalid-utf8", "ASSERT", Verdict::Error, "not UTF-8"),
    mode("deep-nesting", "ASSERT", Verdict::Error, "nested too deep"),
    mode(
        "reset-mid-body",
        "ASSERT",
        Verdict::Error,
        "connection reset after",
    ),
    mode("over-content-length", "ASSERT", Verdict::Pass, ""),
    mode("slow-headers", "ASSERT", Verdict::Error, "timed out"),
    mode("ignore-sigterm", "ASSERT", Verdict::Pass, ""),
    mode("daemonize", "ASSERT", Verdict::Pass, ""),
    // The profile agrees the port; a server elsewhere never becomes ready there: a setup
    // error that names the probe of the agreed port, after the startup timeout.
    mode(
        "other-port",
        "SETUP",
        Verdict::Error,
        "did not become ready",
    ),
    // The registry's `url` is what a client uses: a remote on another port than the
    // deployed agent's breaks seed 000's "remote is the endpoint" (REG-004's rule
    // `s000.registry-remote-is-endpoint`, a SHOULD: the finding warns).
    mode(
        "registry-other-port",
        "REG-004",
        Verdict::Warn,
        "is no deployed agent endpoint",
    ),
];

/// The most a mode may take, start to end (the scenario deadline is 30 s).
const WALL_BOUND: Duration = Duration::from_secs(90);
/// The most the harness's peak RSS may rise above its baseline in one mode, as `cargo test`
/// runs it (a debug build).
///
/// `huge-result` is held to the goal: 10× the answer's size (1,000,000 blocks of
/// `{"type":"text","text":"x"},`, 27 MB). A received message is a compact document (its text
/// and one 16-byte node per value, `harness/src/compact`), read in place by the checks, the
/// schema validation and the output paths; measured alone, +117 MB. See harness/README.md.
fn rss_bound_kb(mode: &str) -> u64 {
    match mode {
        "huge-result" => 10 * HUGE_ANSWER_BYTES / 1024,
        // 100,000 notifications (~15 MB), each its own small document, and their previews.
        "progress-flood" => 250 * 1024,
        _ => 160 * 1024,
    }
}

/// The size of the `huge-result` answer: 1,000,000 blocks of 27 bytes (with their commas).
const HUGE_ANSWER_BYTES: u64 = 1_000_000 * 27;
/// The most bytes any report or the event stream of one mode may take.
const REPORT_BOUND: usize = 256 * 1024;

fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// Whether a setup error names the readiness probe of the agreed port (the profile's `/ready`)
/// and why it failed there.
fn tgt_port_named(error: &str) -> bool {
    error.contains("127.0.0.1:") && error.contains("/ready") && error.contains("refused")
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Resets the peak RSS to the current RSS; returns the current RSS (kB).
fn reset_peak() -> u64 {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status_kb("VmRSS:")
}

/// Whether a verdict and reason are what `m` expects: `m.reason` lists causes, `|`-separated;
/// the first goes with the mode's verdict, the others are overruns, reported as errors.
fn accepted(m: &Mode, verdict: Verdict, reason: &str) -> bool {
    let mut causes = m.reason.split('|');
    let first = causes.next().unwrap_or("");
    (verdict == m.verdict && reason.contains(first))
        || causes.any(|c| !c.is_empty() && verdict == Verdict::Error && reason.contains(c))
}

struct Figures {
    wall: Duration,
    peak_above_kb: u64,
    largest_report: usize,
}

#[expect(
    clippy::too_many_lines,
    reason = "test: one hostile mode end to end (start, run, measure, check what is left behind)"
)]
fn run_mode(rt: &tokio::runtime::Runtime, m: &Mode) -> Result<Figures, String> {
    let root = root();
    let scen = suite::load_file(&root.join("tests/scenarios/hostile.yaml"))
        .map_err(|e| e.render_plain())?;
    let mut tgt =
        target::load(&root.join("tests/targets/hostile.yaml")).map_err(|e| e.render_plain())?;
    let bin = env!("CARGO_BIN_EXE_pallas-e2e-hostile").to_owned();
    match tgt.spec.command.first_mut() {
        Some(p) => *p = bin,
        None => return Err("the hostile profile has no command".into()),
    }
    tgt.spec.env.insert("HOSTILE_MODE".into(), m.name.into());
    let opts = RunOptions {
        jobs: 1,
        step_timeout: Duration::from_secs(5),
        scenario_deadline: Duration::from_secs(30),
        ..RunOptions::default()
    };
    let baseline = reset_peak();
    let started = Instant::now();
    let mut events_bytes = 0usize;
    let run: RunResult = rt
        .block_on(async {
            tokio::time::timeout(
                WALL_BOUND,
                runner::run_with_events(
                    std::slice::from_ref(&scen),
                    &tgt,
                    &opts,
                    |e: &RunEvent| {
                        events_bytes += serde_json::to_string(e).map_or(0, |t| t.len() + 1);
                    },
                ),
            )
            .await
        })
        .map_err(|_| format!("the run did not finish within {WALL_BOUND:?}"))?;
    let wall = started.elapsed();
    let peak_above_kb = status_kb("VmHWM:").saturating_sub(baseline);

    let sizes = [
        ("events", events_bytes),
        ("json", report::json_text(&run).len()),
        ("terminal", report::summary(&run).len()),
        ("markdown", report::markdown(&run).len()),
        ("junit", report::junit(&run).len()),
        ("html", report::html(&run).len()),
    ];
    let largest_report = sizes.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let mut problems = Vec::new();
    for (what, n) in sizes {
        if n > REPORT_BOUND {
            problems.push(format!("the {what} report is {n} bytes"));
        }
    }
    if peak_above_kb > rss_bound_kb(m.name) {
        problems.push(format!(
            "peak RSS rose {peak_above_kb} kB above the baseline (bound {} kB)",
            rss_bound_kb(m.name)
        ));
    }
    // No process of the launch is left, whatever session it moved to.
    let left = pallas_conformance::escapees::left_by_this_harness();
    if !left.is_empty() {
        problems.push(format!("processes left behind: {left:?}"));
        pallas_conformance::escapees::end_all_of_this_harness();
    }
    // Nor its run folder.
    let mine = format!(
        "{}{}-",
        pallas_conformance::escapees::RUN_DIR_PREFIX,
        pallas_conformance::escapees::harness_identity()
    );
    let folders: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&mine))
                .collect()
        })
        .unwrap_or_default();
    if !folders.is_empty() {
        problems.push(format!("run folders left behind: {folders:?}"));
    }
    let scenario = run
        .scenarios
        .first()
        .ok_or("the run has no scenario result")?;
    let judged_late = scenario
        .error
        .as_deref()
        .is_some_and(|e| e.contains("judging did not finish"));
    if judged_late && m.reason.contains("judging did not finish") {
        println!(
            "{:<20} wall {:>6.2} s  peak RSS +{:>7} kB  largest report {:>7} bytes; judging overran the deadline: {:?}",
            m.name,
            wall.as_secs_f64(),
            peak_above_kb,
            largest_report,
            scenario.error
        );
        // What is left behind or too large still counts when judging overran.
        return if problems.is_empty() {
            Ok(Figures {
                wall,
                peak_above_kb,
                largest_report,
            })
        } else {
            Err(problems.join("; "))
        };
    }
    if m.check == "SETUP" {
        // No step ran: the scenario's error is the verdict, and it must name the cause.
        let error = scenario.error.as_deref().unwrap_or("");
        let port = tgt_port_named(error);
        if !error.contains(m.reason) || !port {
            problems.push(format!(
                "scenario error {:?}, expected one with \"{}\" naming the agreed port's probe",
                scenario.error, m.reason
            ));
        }
        println!("{:<20} scenario error: {error}", m.name);
        if scenario.checks.iter().any(|c| c.verdict == Verdict::Pass) {
            problems.push("a check passed against a target that never became ready".into());
        }
    }
    let found = scenario.checks.iter().find(|c| {
        c.id == m.check || (m.check == "ASSERT" && c.title.starts_with("the message call"))
    });
    match found {
        None if m.check == "SETUP" => {}
        None => problems.push(format!(
            "no {} verdict; scenario error: {:?}",
            m.check, scenario.error
        )),
        Some(c) if !accepted(m, c.verdict, &c.reason) => {
            problems.push(format!(
                "{} is {:?} ({}), expected {:?} with \"{}\"",
                m.check, c.verdict, c.reason, m.verdict, m.reason
            ));
        }
        Some(_) => {}
    }
    println!(
        "{:<20} wall {:>6.2} s  peak RSS +{:>7} kB  largest report {:>7} bytes",
        m.name,
        wall.as_secs_f64(),
        peak_above_kb,
        largest_report
    );
    if problems.is_empty() {
        Ok(Figures {
            wall,
            peak_above_kb,
            largest_report,
        })
    } else {
        Err(problems.join("; "))
    }
}

#[test]
fn every_hostile_mode_ends_bounded_with_its_cause_named() -> Result<(), String> {
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let only = std::env::var("HOSTILE_ONLY").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for m in MODES {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|n| n == m.name))
        {
            continue;
        }
        ran += 1;
        match run_mode(&rt, m) {
            Ok(f) => {
                assert!(f.wall <= WALL_BOUND && f.largest_report <= REPORT_BOUND);
                assert!(f.peak_above_kb <= rss_bound_kb(m.name));
            }
            Err(e) => failures.push(format!("{}: {e}", m.name)),
        }
    }
    if ran == 0 {
        return Err(format!("no mode named {only:?}"));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}
