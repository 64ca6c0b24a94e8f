//! `pallas-conformance record` against the reference: a session driven through the proxy by
//! the kit's own raw-wire client (always runs) and by the official Python `mcp` SDK (skipped
//! with the reason when no Python with the SDK is found, required with
//! `PALLAS_REQUIRE_MCP_SDK=1`) is written as a scenario without the
//! bearer, and that scenario passes when re-run against the reference in attach mode.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pallas_conformance::checks::Verdict;
use pallas_conformance::client::{
    CallOptions, Era, McpConnection, Recorder, WireClient, fetch_registry, server_id,
    streamable_http_url,
};
use pallas_conformance::load::deploy::{self, DeployOptions, Deployed};
use pallas_conformance::record::{self, Naming, Proxy};
use pallas_conformance::runner::{self, RunOptions, ScenarioResult};
use pallas_conformance::target::Target;
use pallas_e2e::suite;
use serde_json::json;

const REFERENCE_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-reference");
const BEARER: &str = "tok-recorded-secret-7731";

async fn reference() -> (Target, Deployed, String) {
    let root = suite::workspace_root();
    let target = suite::reference_target(&root, REFERENCE_BIN.as_ref(), &[]).expect("profile");
    let deployed = deploy::deploy(&target, &DeployOptions::default())
        .await
        .expect("the reference starts");
    let registry = deployed.registry_url.clone().expect("a registry");
    (target, deployed, registry)
}

fn naming(id: &str) -> Naming {
    Naming {
        id: id.into(),
        title: "a recorded session".into(),
        message_tool: "send_message".into(),
    }
}

/// Writes the recording, checks no bearer is in it, re-runs it in attach mode against the
/// registry; returns the file's text and the scenario's result.
async fn replay(
    recorded: &[record::Recorded],
    id: &str,
    target: &Target,
    registry: &str,
) -> (String, ScenarioResult) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(format!("{id}.yaml"));
    record::write(recorded, &naming(id), &path).expect("written");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains(BEARER), "the bearer was written:\n{text}");
    let scenarios = pallas_conformance::suite::load_paths(std::slice::from_ref(&path))
        .expect("the recorded scenario loads");
    let opts = RunOptions {
        registry_url: Some(registry.to_owned()),
        jobs: 1,
        ..RunOptions::default()
    };
    let run = runner::run(&scenarios, target, &opts).await;
    assert_eq!(run.scenarios.len(), 1);
    let s = run.scenarios[0].clone();
    assert!(s.error.is_none() && s.skipped.is_none(), "{s:?}\n{text}");
    (text, s)
}

/// Every check of the replay passed.
fn all_passed(s: &ScenarioResult, text: &str) {
    let bad: Vec<String> = s
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .map(|c| format!("{} {} {:?}: {}", c.id, c.title, c.verdict, c.reason))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}\n{text}");
    assert!(s.checks.len() >= 8, "{:?}\n{text}", s.checks.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_the_kit_client_is_recorded_and_its_scenario_passes_against_the_reference() {
    let (target, deployed, registry) = reference().await;
    let proxy = Proxy::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        Some(registry.clone()),
        BTreeMap::new(),
    )
    .await
    .expect("the proxy starts");
    let client = WireClient::new(Recorder::new(), Duration::from_secs(10)).expect("client");
    let doc = fetch_registry(&client, &proxy.registry_url())
        .await
        .expect("registry");
    let server = doc.servers()[0].clone();
    let url = streamable_http_url(&server).expect("a remote").to_owned();
    assert!(
        url.starts_with(&proxy.registry_url()),
        "the remote points at the proxy: {url}"
    );
    let agent = server_id(server["name"].as_str().expect("name")).to_owned();
    let opts = CallOptions {
        bearer: Some(BEARER.into()),
        ..CallOptions::default()
    };
    let (conn, _) = McpConnection::connect(&client, &agent, &url, Era::V2025_11_25, &opts)
        .await
        .expect("connect through the proxy");
    conn.list_tools(&opts).await.expect("tools/list");
    conn.call_tool("get_health", json!({}), &opts)
        .await
        .expect("health");
    let send = CallOptions {
        progress_token: Some(json!(41)),
        ..opts.clone()
    };
    let answer = conn
        .call_tool("send_message", json!({"message": "hello"}), &send)
        .await
        .expect("send");
    assert!(answer.progress().count() >= 1);
    conn.delete(&opts).await.expect("delete");
    let recorded = proxy.stop();
    let (text, result) = replay(&recorded, "recorded-kit-client", &target, &registry).await;
    deployed.stop().await;
    all_passed(&result, &text);
    // The same scenario against a reference that echoes numeric progress tokens as strings:
    // the recorded progress check fails.
    let root = suite::workspace_root();
    let broken =
        suite::reference_target(&root, REFERENCE_BIN.as_ref(), &["progress-token-as-string"])
            .expect("profile");
    let deployed = deploy::deploy(&broken, &DeployOptions::default())
        .await
        .expect("the broken reference starts");
    let broken_registry = deployed.registry_url.clone().expect("a registry");
    let (_, result) = replay(&recorded, "recorded-kit-client", &broken, &broken_registry).await;
    deployed.stop().await;
    let prog_002: Vec<Verdict> = result
        .checks
        .iter()
        .filter(|c| c.id == "PROG-002")
        .map(|c| c.verdict)
        .collect();
    assert_eq!(prog_002, vec![Verdict::Fail], "{result:?}");
    for needle in [
        "registry: {}",
        "connect:",
        "list_tools:",
        "health:",
        "send:",
        "progress_token: 41",
        "delete:",
        "recorded-bearer-1",
        "check: PROG-002",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

/// A Python with the official `mcp` SDK: `PALLAS_MCP_PYTHON`, else the interop venv.
fn sdk_python() -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = std::env::var_os("PALLAS_MCP_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([suite::workspace_root().join(".venv-interop/bin/python")])
        .collect();
    for p in &candidates {
        let ok = std::process::Command::new(p)
            .args(["-c", "import mcp.client.streamable_http"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(p.clone());
        }
    }
    Err(format!(
        "no Python with the `mcp` SDK (tried {candidates:?}; set PALLAS_MCP_PYTHON)"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_the_python_sdk_is_recorded_and_its_scenario_passes_against_the_reference() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => {
            assert!(
                std::env::var_os("PALLAS_REQUIRE_MCP_SDK").is_none(),
                "PALLAS_REQUIRE_MCP_SDK is set: {why}"
            );
            eprintln!("skipped: {why} (set PALLAS_REQUIRE_MCP_SDK=1 to require it)");
            return;
        }
    };
    let (target, deployed, registry) = reference().await;
    let proxy = Proxy::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        Some(registry.clone()),
        BTreeMap::new(),
    )
    .await
    .expect("the proxy starts");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/record_sdk_client.py");
    let proxy_registry = proxy.registry_url();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(script)
            .arg(proxy_registry)
            .env("RECORD_BEARER", BEARER)
            .output()
    })
    .await
    .expect("join")
    .expect("python runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    let recorded = proxy.stop();
    let (text, result) = replay(&recorded, "recorded-python-sdk", &target, &registry).await;
    deployed.stop().await;
    all_passed(&result, &text);
    for needle in [
        "connect:",
        "list_tools:",
        "health:",
        "send:",
        "progress_token:",
        "recorded-bearer-1",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}\n{log}");
    }
}
