//! `pallas-conformance load` against the reference: its JSON report's counts agree with what the
//! mock model journaled (each call is one model turn: the mock answers with final text), and the
//! command line documents itself.

use std::path::PathBuf;
use std::time::Duration;

use pallas_conformance::cli::{Cli, run_cli};
use pallas_conformance::load::deploy::{self, DeployOptions};
use pallas_conformance::load::{self, Endpoint, LoadOptions, LoadReport, Stop, output};
use pallas_e2e::suite;

const REFERENCE_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-reference");

fn root() -> PathBuf {
    suite::workspace_root()
}

fn options(endpoint: Endpoint, sessions: usize, stop: Stop) -> LoadOptions {
    LoadOptions {
        endpoint,
        sessions,
        stop,
        rate: None,
        warmup: Duration::from_millis(300),
        message: "ping".into(),
        call_timeout: Duration::from_secs(10),
    }
}

fn chat_completions(llm: &pallas_mocks::LlmMock) -> u64 {
    llm.journal()
        .iter()
        .filter(|e| e.method == "POST" && e.path.ends_with("/chat/completions"))
        .count() as u64
}

/// The reference deployed with `instance_scope: request`, and its endpoint for the load tool.
async fn deploy_request_scoped() -> (deploy::Deployed, Endpoint) {
    let target = suite::reference_target(&root(), REFERENCE_BIN.as_ref(), &[]).expect("profile");
    let opts = DeployOptions {
        instance_scope: Some("request".into()),
        ..DeployOptions::default()
    };
    let deployed = deploy::deploy(&target, &opts)
        .await
        .expect("the reference starts");
    let endpoint = Endpoint::Url {
        url: deployed.url.clone(),
        tool: deployed.tool.clone(),
        pid: deployed.pid,
    };
    (deployed, endpoint)
}

/// The JSON document as a script reads it.
fn reparsed(report: &LoadReport) -> serde_json::Value {
    serde_json::from_str(&output::json(report)).expect("the JSON report parses")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_the_json_report_equal_the_model_requests_journaled_by_the_mock() {
    let (deployed, endpoint) = deploy_request_scoped().await;
    let result = load::run(&options(
        endpoint,
        4,
        Stop::Duration(Duration::from_secs(2)),
    ))
    .await;
    let journaled = chat_completions(&deployed.llm);
    deployed.stop().await;
    let report = result.expect("the run completes");
    let j = reparsed(&report);

    assert_eq!(j["errors"], serde_json::json!({}), "{j:#}");
    assert_eq!(j["sessions"]["opened"], 4);
    assert_eq!(j["sessions"]["closed"], 4);
    let ok = j["calls_ok"].as_u64().expect("calls_ok");
    let failed = j["calls_failed"].as_u64().expect("calls_failed");
    let warmup = j["warmup_calls"].as_u64().expect("warmup_calls");
    assert!(ok > 50, "a 2 s run of 4 sessions made only {ok} calls");
    assert_eq!(
        ok + failed + warmup,
        journaled,
        "every tool call is one model turn"
    );
    let series_ok: u64 = j["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| s["ok"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(series_ok, ok, "the per-second series adds up to the total");
    let p50 = j["latency_ms"]["p50"].as_f64().expect("p50");
    let p99 = j["latency_ms"]["p99"].as_f64().expect("p99");
    assert!(p50 > 0.0 && p50 <= p99, "p50 {p50} p99 {p99}");
    let server = &j["server"];
    assert!(
        server["rss_idle_kib"].as_u64().unwrap_or(0) > 1024,
        "{server}"
    );
    assert!(
        server["cpu_seconds"].as_f64().unwrap_or(0.0) > 0.0,
        "{server}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployed_target_stops_after_the_fixed_call_count_and_counts_its_own_model_requests() {
    let target = suite::reference_target(&root(), REFERENCE_BIN.as_ref(), &[]).expect("profile");
    let endpoint = Endpoint::Target {
        target: Box::new(target),
        deploy: DeployOptions::default(),
    };
    let mut opts = options(endpoint, 3, Stop::Calls(120));
    opts.warmup = Duration::ZERO;
    let report = load::run(&opts).await.expect("the run completes");
    let j = reparsed(&report);

    assert_eq!(j["target"], "reference");
    assert_eq!(j["calls_ok"], 120, "{j:#}");
    assert_eq!(j["calls_failed"], 0);
    assert_eq!(j["mock_llm"]["chat_completions"], 120, "{j:#}");
    assert!(j["startup_ms"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(j["server"]["rss_after_kib"].as_u64().unwrap_or(0) > 0);
}

/// Open loop: the calls are paced by the schedule (`--rate`), not by the answers. The reference
/// answers in well under a millisecond, so a closed loop would make thousands of calls; at 40
/// calls/s over 0.5 s of warm-up and 2 s measured, the schedule has 20 warm-up slots and 80
/// measured ones (±1 for a slot on a boundary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_run_makes_the_calls_its_rate_schedules() {
    let (deployed, endpoint) = deploy_request_scoped().await;
    let mut o = options(endpoint, 4, Stop::Duration(Duration::from_secs(2)));
    o.rate = Some(40.0);
    o.warmup = Duration::from_millis(500);
    let result = load::run(&o).await;
    let journaled = chat_completions(&deployed.llm);
    deployed.stop().await;
    let j = reparsed(&result.expect("the run completes"));

    assert_eq!(j["rate"], 40.0, "{j:#}");
    assert_eq!(j["errors"], serde_json::json!({}), "{j:#}");
    let ok = j["calls_ok"].as_u64().expect("calls_ok");
    let warmup = j["warmup_calls"].as_u64().expect("warmup_calls");
    assert!(
        (79..=81).contains(&ok),
        "80 scheduled calls, {ok} made: {j:#}"
    );
    assert!(
        (19..=21).contains(&warmup),
        "20 warm-up slots, {warmup} made"
    );
    assert_eq!(ok + warmup, journaled, "every call is one model turn");
    // Each second of the window holds its share of the schedule, not a burst (a call answered
    // late on a busy machine may count in the next second).
    for s in j["series"].as_array().expect("series").iter().take(2) {
        let n = s["ok"].as_u64().unwrap_or(0);
        assert!(
            (30..=50).contains(&n),
            "a second of 40 scheduled calls made {n}: {s}"
        );
    }
}

#[tokio::test]
async fn load_with_bad_arguments_is_invalid_input_before_anything_starts() {
    use clap::Parser;
    let cli = Cli::try_parse_from([
        "pallas-conformance",
        "load",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--sessions",
        "0",
    ])
    .expect("parses");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_cli(cli, &mut out, &mut err).await;
    assert_eq!(code, pallas_conformance::exit::INVALID_INPUT);
    assert!(String::from_utf8_lossy(&err).contains("--sessions"));
}

#[test]
fn load_help_documents_the_modes_the_figures_and_the_json_file() {
    use clap::Parser;
    let help = match Cli::try_parse_from(["pallas-conformance", "load", "--help"]) {
        Err(e) => e.render().to_string(),
        Ok(_) => panic!("--help parses into an error that carries the help"),
    };
    for needle in [
        "--target",
        "--url",
        "--sessions",
        "--duration",
        "--calls",
        "--rate",
        "--json",
        "--pid",
        "--instance-scope",
        "notifications/initialized",
        "p50/p90/p99",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from:\n{help}");
    }
}
