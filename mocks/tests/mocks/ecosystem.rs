//! Ecosystem files: parsing, diagnostics, starting and stopping every mock.

use pallas_mocks::{Ecosystem, parse_ecosystem};

use super::support::client;

const EXAMPLE: &str = include_str!("../../examples/ecosystem.yaml");

#[tokio::test]
async fn example_ecosystem_starts_every_mock_with_the_documented_urls() {
    let spec = parse_ecosystem("ecosystem.yaml", EXAMPLE).unwrap();
    let eco = Ecosystem::start(&spec).await.unwrap();
    let urls = eco.urls();
    assert_eq!(
        urls.keys().cloned().collect::<Vec<_>>(),
        vec![
            "anthropic",
            "argos",
            "gitea",
            "kernos",
            "mnemosyne",
            "neo4j",
            "openai"
        ]
    );
    assert!(urls["openai"].starts_with("http://127.0.0.1:") && urls["openai"].ends_with("/v1"));
    assert!(!urls["anthropic"].ends_with("/v1"));
    assert!(urls["argos"].ends_with("/mcp") && urls["gitea"].ends_with("/mcp"));
    assert_eq!(eco.mcp("mnemosyne").unwrap().url(), urls["mnemosyne"]);
    let r = client()
        .get(format!("{}/models", urls["openai"]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(eco.llm("openai").unwrap().journal().len(), 1);
    let gitea = client().post(&urls["gitea"]).send().await.unwrap_err();
    assert!(gitea.is_connect());
    let addr = eco.llm("openai").unwrap().addr();
    eco.shutdown().await;
    let after = client()
        .get(format!("http://{addr}/v1/models"))
        .send()
        .await;
    assert!(after.is_err(), "the port must be closed after shutdown");
}

#[tokio::test]
async fn dropping_an_ecosystem_stops_its_mocks() {
    let spec = parse_ecosystem("e.yaml", "llms:\n  o: {dialect: openai}\n").unwrap();
    let eco = Ecosystem::start(&spec).await.unwrap();
    let addr = eco.llm("o").unwrap().addr();
    drop(eco);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still listening after drop"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[test]
fn unknown_key_is_reported_with_position_and_suggestion() {
    let text = "mcp_servers:\n  argos:\n    tols: []\n";
    let err = parse_ecosystem("eco.yaml", text).unwrap_err();
    assert_eq!((err.line, err.column), (3, 5));
    assert_eq!(err.hint.as_deref(), Some("did you mean `tools`?"));
    assert_eq!(err.snippet(), "    tols: []\n    ^");
}

#[test]
fn unknown_variant_suggests_the_right_dialect() {
    let err = parse_ecosystem("eco.yaml", "llms:\n  x:\n    dialect: opanai\n").unwrap_err();
    assert_eq!(err.line, 3);
    assert_eq!(err.hint.as_deref(), Some("did you mean `openai`?"));
}

#[test]
fn semantic_errors_point_at_the_offending_key() {
    let cases = [
        (
            "llms:\n  o:\n    dialect: openai\n    script:\n      - tool_calls:\n          - name: ''\n",
            6,
            "empty name",
        ),
        (
            "llms:\n  o:\n    dialect: openai\n    script:\n      - when: {last_user_regex: '(unclosed'}\n        text: x\n",
            5,
            "does not compile",
        ),
        (
            "mcp_servers:\n  g:\n    reachability: down\n    require_bearer: t\n",
            4,
            "no effect",
        ),
        (
            "llms:\n  dup: {dialect: openai}\nmcp_servers:\n  dup: {}\n",
            2,
            "both an LLM and an MCP server",
        ),
        (
            "mcp_servers:\n  a: {port: 4000}\n  b: {port: 4000}\n",
            3,
            "already used",
        ),
        (
            "mcp_servers:\n  a:\n    tools:\n      - {name: hold, until_called: b}\n      - {name: b}\n",
            4,
            "has none",
        ),
        (
            "mcp_servers:\n  a:\n    tools:\n      - {name: hold, delay: 1s, until_called: nope}\n",
            4,
            "no tool `nope`",
        ),
    ];
    for (text, line, needle) in cases {
        let err = parse_ecosystem("e.yaml", text).unwrap_err();
        assert_eq!(err.line, line, "{text}: {err}");
        assert!(err.message.contains(needle), "{text}: {err}");
        assert!(err.to_string().starts_with(&format!("e.yaml:{line}:")));
    }
}

#[tokio::test]
async fn starting_an_invalid_spec_fails_without_starting_anything() {
    let mut spec = parse_ecosystem("e.yaml", "llms:\n  o: {dialect: openai}\n").unwrap();
    spec.llms.get_mut("o").unwrap().models.clear();
    let err = Ecosystem::start(&spec).await.unwrap_err();
    assert!(err.to_string().contains("no models"), "{err}");
}

#[tokio::test]
async fn fixed_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let spec = parse_ecosystem(
        "e.yaml",
        &format!("llms:\n  o: {{dialect: openai, port: {port}}}\n"),
    )
    .unwrap();
    let err = Ecosystem::start_with_fixed_ports(&spec).await.unwrap_err();
    assert!(err.to_string().contains("could not listen"), "{err}");
    // Without fixed ports the same spec starts on an ephemeral port.
    let eco = Ecosystem::start(&spec).await.unwrap();
    assert_ne!(eco.llm("o").unwrap().addr().port(), port);
}

#[test]
fn example_ecosystem_round_trips_through_yaml() {
    let spec = parse_ecosystem("ecosystem.yaml", EXAMPLE).unwrap();
    let text = serde_saphyr::to_string(&spec).unwrap();
    assert_eq!(parse_ecosystem("again.yaml", &text).unwrap(), spec);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..Default::default()
    })]

    /// Arbitrary text never panics the reader, and any error points inside the text.
    #[test]
    fn any_text_gets_a_result_or_an_error_inside_the_text(text in "(llms|mcp_servers|dialect|tools|:| |\n|-|\\{|\\}|\\[|\\]|openai|[a-z0-9]){0,80}") {
        if let Err(e) = parse_ecosystem("p.yaml", &text) {
            let lines = text.lines().count().max(1);
            proptest::prop_assert!(e.line <= lines + 1, "{} beyond {} lines", e.line, lines);
            proptest::prop_assert!(!e.message.is_empty());
        }
    }
}

/// A pack mock of an HTTPS ecosystem calls the HTTPS mock LLM trusting the ecosystem's own CA:
/// nothing to configure, and no certificate error.
#[tokio::test]
async fn a_pack_mock_calls_the_https_mock_llm_of_its_ecosystem() {
    let yaml = "tls: true\nllms:\n  openai: {dialect: openai, models: [claude-sonnet-4.5]}\nmcp_servers:\n  percolate:\n    pack: {kind: percolate, llm: openai}\n";
    let spec = parse_ecosystem("ecosystem.yaml", yaml).unwrap();
    let eco = Ecosystem::start(&spec).await.unwrap();
    let urls = eco.urls();
    assert!(urls["openai"].starts_with("https://"), "{urls:?}");
    assert!(urls["percolate"].starts_with("https://"), "{urls:?}");
    let ca = reqwest::Certificate::from_pem(eco.tls().unwrap().ca_pem().as_bytes()).unwrap();
    let client = pallas_mocks::http_client::builder()
        .tls_certs_only([ca])
        .build()
        .unwrap();
    let answer: serde_json::Value = client
        .post(&urls["percolate"])
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask_agent", "arguments": {
                "agent_uri": "percolate-researcher", "tenant_id": "acme", "prompt": "hello"}}
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(answer.get("error").is_none(), "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains(r#""status":"success""#), "{answer}");
    let asked = eco
        .llm("openai")
        .unwrap()
        .journal()
        .iter()
        .filter(|e| e.path.ends_with("/chat/completions"))
        .count();
    assert_eq!(asked, 1, "the pack reached the mock LLM over HTTPS");
    eco.shutdown().await;
}

/// `initialize_error`: the server is up, but `initialize` gets a JSON-RPC error in an HTTP 200
/// JSON answer, echoing the request id; other requests are served as usual.
#[tokio::test]
async fn initialize_error_refuses_the_handshake_with_a_jsonrpc_error() {
    let yaml =
        "mcp_servers:\n  refusing: {initialize_error: maintenance, tools: [{name: search}]}\n";
    let spec = parse_ecosystem("ecosystem.yaml", yaml).unwrap();
    let eco = Ecosystem::start(&spec).await.unwrap();
    let url = eco.urls()["refusing"].clone();
    let r = client()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(
            &serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["code"], -32603);
    assert_eq!(body["error"]["message"], "maintenance");
    assert!(body.get("result").is_none());
    eco.shutdown().await;
}
