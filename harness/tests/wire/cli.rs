//! The `client` subcommands for people, run in-process against fixtures and mocks.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use pallas_conformance::client::cli::ClientOptions;
use pallas_conformance::client::{ClientCommand, run_client};
use pallas_mocks::{McpMock, McpMockSpec, ToolResultSpec, ToolSpec};
use serde_json::json;

use crate::fixture::{Fixture, Reply};

fn options() -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

fn tool(name: &str, result: ToolResultSpec, progress: Option<u32>) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: None,
        input_schema: None,
        result,
        delay: None,
        until_called: None,
        progress,
    }
}

async fn agent(tools: Vec<ToolSpec>) -> McpMock {
    McpMock::start(
        "agent",
        McpMockSpec {
            tools,
            ..McpMockSpec::default()
        },
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .unwrap()
}

async fn run(cmd: ClientCommand) -> (u8, String) {
    let mut out = Vec::new();
    let code = run_client(cmd, &mut out).await;
    (code, String::from_utf8(out).unwrap())
}

#[tokio::test]
async fn client_registry_lists_agents_as_daedalus_shows_them() {
    let fx = Fixture::start(|_| {
        Reply::json(json!({"servers": [{"server": {
            "name": "com.example/pallas-research", "title": "Research Agent",
            "description": "Searches the web",
            "icons": [{"src": "r.svg"}],
            "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}]}}]}))
    })
    .await;
    let (code, out) = run(ClientCommand::Registry {
        url: fx.base.clone(),
        json: false,
        options: options(),
    })
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 agent(s)"), "{out}");
    assert!(
        out.contains("pallas-research  Research Agent  http://127.0.0.1:9/mcp"),
        "{out}"
    );
    assert!(
        out.contains("Searches the web") && out.contains("icon: r.svg"),
        "{out}"
    );
}

#[tokio::test]
async fn client_health_shows_the_chat_gate_and_fails_on_error() {
    let degraded = agent(vec![tool(
        "get_health",
        ToolResultSpec::Text(r#"{"status":"degraded","message":"argos unreachable"}"#.into()),
        None,
    )])
    .await;
    let (code, out) = run(ClientCommand::Health {
        url: degraded.url(),
        registry: false,
        options: options(),
    })
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("degraded — argos unreachable"), "{out}");
    assert!(
        out.contains("chat allowed with warning: argos unreachable"),
        "{out}"
    );

    let failing = agent(vec![tool(
        "get_health",
        ToolResultSpec::Text(r#"{"status":"error","message":"cannot start"}"#.into()),
        None,
    )])
    .await;
    let (code, out) = run(ClientCommand::Health {
        url: failing.url(),
        registry: false,
        options: options(),
    })
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("chat blocked (HTTP 503): cannot start"),
        "{out}"
    );
}

#[tokio::test]
async fn client_health_of_an_unreachable_agent_blocks_chat() {
    let port = pallas_conformance::process::free_port().unwrap();
    let (code, out) = run(ClientCommand::Health {
        url: format!("http://127.0.0.1:{port}/mcp"),
        registry: false,
        options: options(),
    })
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("unreachable") && out.contains("chat blocked (HTTP 503)"),
        "{out}"
    );
}

#[tokio::test]
async fn client_send_prints_progress_lines_then_the_answer_and_never_the_bearer() {
    let m = agent(vec![tool(
        "send_message",
        ToolResultSpec::EchoArgs,
        Some(2),
    )])
    .await;
    let (code, out) = run(ClientCommand::Send {
        url: m.url(),
        message: "hello agent".into(),
        bearer: Some("tok-secret".into()),
        progress: true,
        tool: "send_message".into(),
        options: options(),
    })
    .await;
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("progress 1/2 send_message step 1/2"),
        "{out}"
    );
    assert!(
        lines[1].contains("progress 2/2 send_message step 2/2"),
        "{out}"
    );
    assert_eq!(lines[2], r#"{"message":"hello agent"}"#);
    assert!(!out.contains("tok-secret"));
    assert!(
        m.journal()
            .iter()
            .any(|e| e.authorization() == Some("Bearer tok-secret"))
    );
}

#[tokio::test]
async fn client_send_reports_a_jsonrpc_error_with_exit_code_one() {
    let m = agent(vec![]).await;
    let (code, out) = run(ClientCommand::Send {
        url: m.url(),
        message: "x".into(),
        bearer: None,
        progress: false,
        tool: "send_message".into(),
        options: options(),
    })
    .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("JSON-RPC error") && out.contains("tool not found"),
        "{out}"
    );
}

#[tokio::test]
async fn client_history_prints_the_prompt_messages() {
    let fx = crate::fixture::mcp_fixture(|req| {
        if req.method == "DELETE" {
            return Reply::status(202, "text/plain", "");
        }
        assert_eq!(req.json()["params"]["name"], "harper_history");
        Reply::json(crate::fixture::result_for(
            &req.id(),
            json!({"messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "text", "text": "hello"}}
            ]}),
        ))
    })
    .await;
    let (code, out) = run(ClientCommand::History {
        url: fx.url("/mcp"),
        agent: "harper".into(),
        bearer: None,
        options: options(),
    })
    .await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "2 message(s)\nuser: hi\nassistant: hello\n");
}

#[tokio::test]
async fn client_send_speaks_the_2026_era_when_asked() {
    let m = McpMock::start(
        "agent",
        McpMockSpec {
            era: pallas_mocks::WireEra::V2026_07_28,
            tools: vec![tool("send_message", ToolResultSpec::EchoArgs, Some(1))],
            ..McpMockSpec::default()
        },
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .unwrap();
    let (code, out) = run(ClientCommand::Send {
        url: m.url(),
        message: "modern".into(),
        bearer: None,
        progress: true,
        tool: "send_message".into(),
        options: ClientOptions {
            era: pallas_conformance::client::Era::V2026_07_28,
            ..options()
        },
    })
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("progress 1/1 send_message step 1/1"), "{out}");
    assert!(out.ends_with("{\"message\":\"modern\"}\n"), "{out}");
    assert!(m.journal().iter().all(|e| e.session_id.is_none()));
}
