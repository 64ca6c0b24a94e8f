//! `pallas-conformance watch` against the reference, deployed through its profile as `watch
//! --target` deploys it: a couple of rounds at a short interval, `/metrics` scraped. The
//! healthy reference probes at 1 with health `ok`, a schema-valid registry and a passing
//! canary; the reference with the `registry-invalid-entry` and `progress-bad-message` defects
//! shows the registry invalid and the canary failing while its probe still succeeds.

use std::net::SocketAddr;
use std::time::Duration;

use pallas_conformance::load::deploy::{self, DeployOptions};
use pallas_conformance::watch::metrics as exporter;
use pallas_conformance::watch::{ProbePlan, Source, Tools, WatchOptions, Watcher};
use pallas_e2e::suite;

const REFERENCE_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-reference");

/// The value of a series (name and labels as printed).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Every series of metric `name` with its value.
fn series<'a>(text: &'a str, name: &str) -> Vec<(&'a str, f64)> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter_map(|l| {
            let (s, v) = l.rsplit_once(' ')?;
            Some((s, v.parse().ok()?))
        })
        .collect()
}

/// Deploys the reference with `defects`, watches it for two rounds with a canary, returns the
/// scraped exposition and the registry URL.
async fn watch_reference(defects: &[&str]) -> (String, String) {
    let root = suite::workspace_root();
    let target = suite::reference_target(&root, REFERENCE_BIN.as_ref(), defects).expect("profile");
    let deployed = deploy::deploy(&target, &DeployOptions::default())
        .await
        .expect("the reference starts");
    let registry = deployed
        .registry_url
        .clone()
        .expect("the profile has a registry");
    let mut watcher = Watcher::new(WatchOptions {
        source: Source::Registry(registry.clone()),
        plan: ProbePlan {
            tools: Tools {
                message_tool: String::new(),
                health_tool: target.spec.health_tool.clone(),
                target: Some(Box::new(target)),
            },
            canary: Some("ping".into()),
            timeout: Duration::from_secs(10),
            bearer: None,
        },
        interval: Duration::from_millis(200),
        rounds: Some(2),
    })
    .expect("metrics register");
    let listener = exporter::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = exporter::serve(listener, watcher.metrics());
    let mut lines = Vec::new();
    let ran = tokio::time::timeout(Duration::from_secs(120), watcher.run(&mut lines)).await;
    let http = pallas_mocks::http_client::builder()
        .build()
        .expect("client");
    let text = match http.get(format!("http://{addr}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(e) => format!("scrape failed: {e}"),
    };
    server.abort();
    deployed.stop().await;
    assert!(ran.is_ok(), "the rounds did not finish");
    eprintln!("{}", String::from_utf8_lossy(&lines));
    (text, registry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_probes_healthy_with_a_valid_registry_and_a_passing_canary() {
    let (text, registry) = watch_reference(&[]).await;
    let v = |s: &str| value(&text, s);
    assert_eq!(v("pallas_watch_rounds_total"), Some(2.0), "{text}");
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_up{{registry="{registry}"}}"#
        )),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_schema_valid{{registry="{registry}"}}"#
        )),
        Some(1.0)
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_agents{{registry="{registry}"}}"#
        )),
        Some(1.0)
    );
    let success = series(&text, "pallas_watch_probe_success");
    assert_eq!(success.len(), 1, "{text}");
    assert_eq!(success[0].1, 1.0, "{text}");
    let agent = success[0]
        .0
        .split('"')
        .nth(1)
        .expect("an agent label")
        .to_owned();
    assert_eq!(
        v(&format!(
            r#"pallas_watch_health_status{{agent="{agent}",status="ok"}}"#
        )),
        Some(1.0)
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_health_status{{agent="{agent}",status="error"}}"#
        )),
        Some(0.0)
    );
    for op in ["initialize", "tools/list", "get_health"] {
        let count = format!(
            r#"pallas_watch_operation_duration_seconds_count{{agent="{agent}",operation="{op}"}}"#
        );
        assert_eq!(v(&count), Some(2.0), "{op}: {text}");
    }
    // Both probe sessions were ended with a DELETE the reference accepted.
    assert_eq!(
        v(&format!(
            r#"pallas_watch_sessions_closed_total{{agent="{agent}"}}"#
        )),
        Some(2.0)
    );
    assert!(
        !text.contains("pallas_watch_sessions_left_open_total{"),
        "{text}"
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_canary_success{{agent="{agent}"}}"#
        )),
        Some(1.0),
        "{text}"
    );
    let scope = format!("canary:{agent}");
    for id in ["PROG-002", "PROG-005"] {
        let pass = format!(r#"pallas_watch_check{{check="{id}",scope="{scope}",verdict="pass"}}"#);
        assert_eq!(v(&pass), Some(1.0), "{id}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_registry_entry_and_bad_progress_messages_show_in_the_metrics() {
    let (text, registry) =
        watch_reference(&["registry-invalid-entry", "progress-bad-message"]).await;
    let v = |s: &str| value(&text, s);
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_up{{registry="{registry}"}}"#
        )),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        v(&format!(
            r#"pallas_watch_registry_schema_valid{{registry="{registry}"}}"#
        )),
        Some(0.0),
        "{text}"
    );
    // REG-001's level comes from its rules (the seed's "follows the schema" sentence): a
    // broken entry is graded fail or warn by that level, never pass.
    let reg_001 = |verdict: &str| {
        v(&format!(
            r#"pallas_watch_check{{check="REG-001",scope="registry",verdict="{verdict}"}}"#
        ))
    };
    assert_eq!(reg_001("pass"), Some(0.0), "{text}");
    assert_eq!(
        reg_001("fail").unwrap_or(0.0) + reg_001("warn").unwrap_or(0.0),
        1.0
    );
    let success = series(&text, "pallas_watch_probe_success");
    assert_eq!(success.len(), 1, "{text}");
    assert_eq!(success[0].1, 1.0, "the agent itself still answers: {text}");
    let canary = series(&text, "pallas_watch_canary_success");
    assert_eq!(canary.len(), 1, "{text}");
    assert_eq!(canary[0].1, 0.0, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with(r#"pallas_watch_check{check="PROG-005""#)
                && l.contains(r#"verdict="warn""#)
                && l.ends_with(" 1")),
        "{text}"
    );
}
