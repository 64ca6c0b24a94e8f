//! `pallas-conformance record` in front of a mock agent (no registry): the proxy forwards the
//! session, answers a standalone GET stream with 405, and the written scenario holds the steps,
//! the tool call's arguments and progress token, and a placeholder instead of the bearer.
//! Against the reference, with replays: `tests/tests/record.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use pallas_conformance::client::{CallOptions, Era, McpConnection, Recorder, WireClient};
use pallas_conformance::record::{self, Naming, Proxy};
use pallas_conformance::suite;
use pallas_mocks::{McpMock, McpMockSpec};
use serde_json::json;

const BEARER: &str = "tok-never-written-5521";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_through_the_proxy_becomes_a_valid_scenario_without_its_bearer() {
    let local = SocketAddr::from(([127, 0, 0, 1], 0));
    let spec: McpMockSpec = serde_json::from_value(json!({
        "tools": [
            {"name": "lookup", "input_schema": {"type": "object"}, "result": "echo_args", "progress": 2},
        ]
    }))
    .unwrap();
    let mock = McpMock::start("agent", spec, local).await.unwrap();
    let agents: BTreeMap<String, String> = [("scout".to_owned(), mock.url())].into();
    let proxy = Proxy::start(local, None, agents).await.unwrap();
    let url = proxy.agent_url("scout");

    let http = pallas_mocks::http_client::builder().build().unwrap();
    let get = http
        .get(&url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    let missing = http
        .get(format!(
            "{}/.well-known/mcp/server.json",
            proxy.registry_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404, "no registry behind this proxy");

    let client = WireClient::new(Recorder::new(), Duration::from_secs(5)).unwrap();
    let opts = CallOptions {
        bearer: Some(BEARER.into()),
        ..CallOptions::default()
    };
    let (conn, _) = McpConnection::connect(&client, "scout", &url, Era::V2025_11_25, &opts)
        .await
        .unwrap();
    conn.list_tools(&opts).await.unwrap();
    let call = CallOptions {
        progress_token: Some(json!("tok-p")),
        ..opts.clone()
    };
    let answer = conn
        .call_tool("lookup", json!({"q": "owls", "n": 3}), &call)
        .await
        .unwrap();
    assert_eq!(
        answer.progress().count(),
        2,
        "progress came through the proxy"
    );
    conn.delete(&opts).await.unwrap();
    assert_eq!(mock.sessions().open_now, 0);
    // The mock saw the bearer: the proxy forwards it.
    assert!(
        mock.journal()
            .iter()
            .any(|e| e.authorization() == Some(&format!("Bearer {BEARER}")))
    );

    let recorded = proxy.stop();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scout.yaml");
    let naming = Naming {
        id: "recorded-scout".into(),
        title: "scout".into(),
        message_tool: "send_message".into(),
    };
    record::write(&recorded, &naming, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(BEARER), "{text}");
    let loaded = suite::load_paths(&[path]).expect("the scenario validates");
    assert_eq!(loaded.len(), 1);
    let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    let keys: Vec<&str> = steps
        .iter()
        .filter_map(|s| {
            s.as_object()
                .and_then(|o| o.keys().find(|k| *k != "name"))
                .map(String::as_str)
        })
        .collect();
    assert_eq!(keys, ["connect", "list_tools", "call", "delete"], "{text}");
    assert_eq!(steps[0]["connect"]["bearer"], "recorded-bearer-1");
    assert_eq!(steps[2]["call"]["tool"], "lookup");
    assert_eq!(steps[2]["call"]["arguments"], json!({"q": "owls", "n": 3}));
    assert_eq!(steps[2]["call"]["progress_token"], "tok-p");
    assert_eq!(steps[2]["call"]["bearer"], "recorded-bearer-1");
    let checks: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["check"].as_str())
        .collect();
    assert_eq!(checks, ["PROG-002", "PROG-003", "PROG-007"], "{text}");
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_prints_the_proxied_endpoints_and_writes_the_file_when_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("nested/session.yaml");
    let cli = <pallas_conformance::cli::Cli as clap::Parser>::try_parse_from([
        "pallas-conformance",
        "record",
        "--agent",
        "scout=http://127.0.0.1:9/mcp",
        "--duration",
        "300ms",
        "--id",
        "cli-recorded",
        "-o",
        out_file.to_str().unwrap(),
    ])
    .unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = pallas_conformance::cli::run_cli(cli, &mut out, &mut err).await;
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "{out}{}", String::from_utf8_lossy(&err));
    let line = out.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("agent scout: http://127.0.0.1:") && line.ends_with("/agents/scout/mcp"),
        "{out}"
    );
    assert!(!line.contains(":0/"), "the bound port is printed: {out}");
    assert!(out.contains("wrote 0 exchange(s)"), "{out}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    assert!(text.contains("id: cli-recorded"), "{text}");
}
