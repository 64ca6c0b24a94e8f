//! `pallas-conformance watch` against in-process stand-ins: a mock MCP agent (probe success,
//! health, the canary judged by the progress checks, every probe session deleted), a broken
//! agent and a registry that answers 500 (probe success 0, registry down), and the shipped
//! Prometheus files checked by promtool. Against the reference: `tests/tests/watch.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use pallas_conformance::watch::metrics as exporter;
use pallas_conformance::watch::{Agent, ProbePlan, Source, Tools, WatchOptions, Watcher};
use pallas_mocks::{McpMock, McpMockSpec};
use serde_json::json;

fn local() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn plan(canary: Option<&str>) -> ProbePlan {
    ProbePlan {
        tools: Tools {
            message_tool: "send_message".into(),
            health_tool: "get_health".into(),
            target: None,
        },
        canary: canary.map(str::to_owned),
        timeout: Duration::from_secs(5),
        bearer: None,
    }
}

/// A mock agent: `send_message` (2 progress notifications when given a token) and
/// `get_health` answering `health`.
async fn agent(health: &str, http_status: Option<u16>) -> McpMock {
    let spec: McpMockSpec = serde_json::from_value(json!({
        "http_status": http_status,
        "tools": [
            {"name": "send_message", "input_schema": {"type": "object"},
             "result": "echo_args", "progress": 2},
            {"name": "get_health", "result": {"text": health}},
        ]
    }))
    .unwrap();
    McpMock::start("agent", spec, local()).await.unwrap()
}

/// The value of the series `line` (its name and labels as the exposition prints them).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Runs `rounds` rounds at a short interval while serving the metrics; returns the scraped
/// exposition.
async fn watch(source: Source, plan: ProbePlan, rounds: u64) -> String {
    let mut watcher = Watcher::new(WatchOptions {
        source,
        plan,
        interval: Duration::from_millis(100),
        rounds: Some(rounds),
    })
    .unwrap();
    let listener = exporter::bind(local()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = exporter::serve(listener, watcher.metrics());
    let mut sink = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), watcher.run(&mut sink))
        .await
        .expect("the rounds finish");
    let lines = String::from_utf8_lossy(&sink).into_owned();
    assert_eq!(lines.lines().count() as u64, rounds, "{lines}");
    let response = pallas_mocks::http_client::builder()
        .build()
        .unwrap()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let ct = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let text = response.text().await.unwrap();
    server.abort();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_agent_is_probed_each_round_and_every_probe_session_is_deleted() {
    let mock = agent(r#"{"status":"ok"}"#, None).await;
    let source = Source::Agents(vec![Agent {
        name: "mock".into(),
        url: mock.url(),
    }]);
    let text = watch(source, plan(Some("ping")), 3).await;
    let v = |s: &str| value(&text, s);
    assert_eq!(v("pallas_watch_rounds_total"), Some(3.0), "{text}");
    assert_eq!(v(r#"pallas_watch_probe_success{agent="mock"}"#), Some(1.0));
    assert_eq!(
        v(r#"pallas_watch_health_status{agent="mock",status="ok"}"#),
        Some(1.0)
    );
    assert_eq!(
        v(r#"pallas_watch_health_status{agent="mock",status="error"}"#),
        Some(0.0)
    );
    for op in ["initialize", "tools/list", "get_health"] {
        let count = format!(
            r#"pallas_watch_operation_duration_seconds_count{{agent="mock",operation="{op}"}}"#
        );
        assert_eq!(v(&count), Some(3.0), "{op}: {text}");
    }
    // Every session opened by a probe was closed by its DELETE.
    let stats = mock.sessions();
    assert_eq!(stats.opened, 3, "{stats:?}");
    assert_eq!(stats.deleted, 3, "{stats:?}");
    assert_eq!(stats.open_now, 0);
    assert_eq!(
        v(r#"pallas_watch_sessions_closed_total{agent="mock"}"#),
        Some(3.0)
    );
    // The canary's progress stream went through the kit's checks: the token is echoed and
    // progress increases, but the mock's messages (`send_message step 1/2`) are not the
    // seed's pattern, so PROG-005 warns and the canary is not a success.
    let check = |id: &str, verdict: &str| {
        v(&format!(
            r#"pallas_watch_check{{check="{id}",scope="canary:mock",verdict="{verdict}"}}"#
        ))
    };
    assert_eq!(check("PROG-002", "pass"), Some(1.0), "{text}");
    assert_eq!(check("PROG-003", "pass"), Some(1.0));
    // PROG-004 and PROG-005 are SHOULD rules (the seed's pattern): broken, they warn.
    assert_eq!(check("PROG-004", "warn"), Some(1.0), "{text}");
    assert_eq!(check("PROG-005", "warn"), Some(1.0));
    assert_eq!(check("PROG-005", "pass"), Some(0.0));
    assert_eq!(
        v(r#"pallas_watch_canary_progress_notifications{agent="mock"}"#),
        Some(2.0)
    );
    assert_eq!(v(r#"pallas_watch_canary_success{agent="mock"}"#), Some(0.0));
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_agent_or_an_unhealthy_one_fails_its_probe() {
    let down = agent(r#"{"status":"ok"}"#, Some(500)).await;
    let sick = agent(
        r#"{"status":"error","message":"LLM provider unreachable"}"#,
        None,
    )
    .await;
    let source = Source::Agents(vec![
        Agent {
            name: "down".into(),
            url: down.url(),
        },
        Agent {
            name: "sick".into(),
            url: sick.url(),
        },
    ]);
    let text = watch(source, plan(None), 1).await;
    let v = |s: &str| value(&text, s);
    assert_eq!(
        v(r#"pallas_watch_probe_success{agent="down"}"#),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        v(r#"pallas_watch_health_status{agent="down",status="unanswered"}"#),
        Some(1.0)
    );
    assert_eq!(v(r#"pallas_watch_probe_success{agent="sick"}"#), Some(0.0));
    assert_eq!(
        v(r#"pallas_watch_health_status{agent="sick",status="error"}"#),
        Some(1.0)
    );
    assert_eq!(
        v(r#"pallas_watch_health_status{agent="sick",status="ok"}"#),
        Some(0.0)
    );
    // The unhealthy agent's session was still deleted.
    assert_eq!(sick.sessions().open_now, 0);
    assert_eq!(sick.sessions().deleted, 1);
    assert!(v(r#"pallas_watch_canary_success{agent="sick"}"#).is_none());
    down.shutdown().await;
    sick.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_that_answers_500_is_down_and_its_schema_is_not_judged() {
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/.well-known/mcp/server.json",
        axum::routing::get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
    );
    let listener = tokio::net::TcpListener::bind(local()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}");
    let text = watch(Source::Registry(url.clone()), plan(None), 2).await;
    let v = |s: &str| value(&text, s);
    assert_eq!(
        v(&format!(r#"pallas_watch_registry_up{{registry="{url}"}}"#)),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_agents{{registry="{url}"}}"#
        )),
        Some(0.0)
    );
    assert_eq!(
        v(r#"pallas_watch_check{check="REG-002",scope="registry",verdict="fail"}"#),
        Some(1.0)
    );
    // No entry was fetched: REG-001's premise did not occur, so no validity is claimed.
    assert_eq!(
        v(r#"pallas_watch_check{check="REG-001",scope="registry",verdict="inconclusive"}"#),
        Some(1.0)
    );
    assert!(
        !text.contains("pallas_watch_registry_schema_valid{"),
        "{text}"
    );
    assert!(!text.contains("pallas_watch_probe_success{"));
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_prints_its_bound_address_and_stops_after_its_rounds() {
    let mock = agent(r#"{"status":"degraded","message":"one server down"}"#, None).await;
    let cli = <pallas_conformance::cli::Cli as clap::Parser>::try_parse_from([
        "pallas-conformance",
        "watch",
        "--url",
        &mock.url(),
        "--agent",
        "solo",
        "--interval",
        "50ms",
        "--rounds",
        "2",
        "--listen",
        "127.0.0.1:0",
    ])
    .unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let started = Instant::now();
    let code = pallas_conformance::cli::run_cli(cli, &mut out, &mut err).await;
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "{out}{}", String::from_utf8_lossy(&err));
    assert!(started.elapsed() < Duration::from_secs(30));
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("serving metrics on http://127.0.0.1:") && first.ends_with("/metrics"),
        "{out}"
    );
    assert!(!first.contains(":0/"), "{out}");
    assert!(out.contains("round 2: solo ok"), "{out}");
    assert!(out.contains("health degraded"), "{out}");
    assert_eq!(mock.sessions().open_now, 0);
    mock.shutdown().await;
}

fn watch_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("watch")
}

/// The shipped alert rules and scrape config, checked by promtool (optional locally,
/// required with `PALLAS_REQUIRE_PROMTOOL=1`, as in the metrics tests). The module is named
/// `metrics` so CI's `PALLAS_REQUIRE_PROMTOOL=1 cargo test --workspace -- metrics::` runs it.
mod metrics {
    use super::*;

    fn promtool(args: &[&str]) -> Option<(bool, String)> {
        let out = Command::new("promtool")
            .args(args)
            .current_dir(watch_dir())
            .output()
            .ok()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some((out.status.success(), text))
    }

    fn skip_or_panic(what: &str) {
        assert!(
            std::env::var_os("PALLAS_REQUIRE_PROMTOOL").is_none(),
            "PALLAS_REQUIRE_PROMTOOL is set but promtool is not on PATH"
        );
        eprintln!(
            "skipped: `promtool {what}` (promtool not on PATH; set PALLAS_REQUIRE_PROMTOOL=1 to require it)"
        );
    }

    #[test]
    fn promtool_accepts_the_shipped_alert_rules_and_scrape_config() {
        for args in [
            &["check", "rules", "alerts.yml"][..],
            &["check", "config", "prometheus.yml"][..],
        ] {
            match promtool(args) {
                Some((ok, text)) => assert!(ok, "promtool {args:?}:\n{text}"),
                None => return skip_or_panic(&args.join(" ")),
            }
        }
    }

    #[test]
    fn promtool_rejects_a_broken_rule_file() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.yml");
        std::fs::write(
            &bad,
            "groups:\n  - name: x\n    rules:\n      - alert: Broken\n        expr: pallas_watch_probe_success ==\n",
        )
        .unwrap();
        match promtool(&["check", "rules", bad.to_str().unwrap()]) {
            Some((ok, text)) => assert!(!ok, "promtool accepted a broken rule:\n{text}"),
            None => skip_or_panic("check rules"),
        }
    }

    #[test]
    fn every_metric_the_alerts_use_is_one_the_watch_exports() {
        let rules = std::fs::read_to_string(watch_dir().join("alerts.yml")).unwrap();
        let exported = pallas_conformance::watch::WatchMetrics::new().unwrap();
        let help = exported.names();
        let used: Vec<&str> = rules
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("pallas_watch_"))
            .collect();
        assert!(!used.is_empty());
        for name in used {
            let base = name.trim_end_matches("_bucket");
            assert!(
                help.iter().any(|h| h == base),
                "{name} is not exported: {help:?}"
            );
        }
    }
}
