//! The mocks refuse what the real servers refuse (#12): each refusal pinned by its status code.

use serde_json::{Value, json};

use super::support::{client, llm, mcp};

const TOOLS: &str = "tools:\n  - name: hello\n    result: {text: hi}\n";

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "strict", "version": "0"}}})
}

fn post(url: &str) -> reqwest::RequestBuilder {
    client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
}

/// A session opened by hand; its id.
async fn session(url: &str) -> String {
    let r = post(url).json(&initialize_body()).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.text().await.unwrap();
    let n = post(url)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert_eq!(n.status(), 202);
    sid
}

fn tools_list() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

#[tokio::test]
async fn mcp_406_when_accept_lacks_json_and_event_stream() {
    let m = mcp(TOOLS).await;
    let r = client()
        .post(m.url())
        .header("accept", "text/html")
        .header("content-type", "application/json")
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 406);
}

#[tokio::test]
async fn mcp_400_on_an_unsupported_protocol_version_header() {
    let m = mcp(TOOLS).await;
    let sid = session(&m.url()).await;
    let r = post(&m.url())
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "1999-01-01")
        .json(&tools_list())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // The same request with a supported version is answered.
    let ok = post(&m.url())
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&tools_list())
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn mcp_404_on_an_unknown_session() {
    let m = mcp(TOOLS).await;
    let r = post(&m.url())
        .header("mcp-session-id", "no-such-session")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&tools_list())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn mcp_403_on_a_foreign_host() {
    let m = mcp(TOOLS).await;
    let port = m.addr().port();
    let r = post(&m.url())
        .header("host", format!("evil.example.com:{port}"))
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let local = post(&m.url())
        .header("host", format!("localhost:{port}"))
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
}

#[tokio::test]
async fn mcp_403_on_a_foreign_origin() {
    let m = mcp(TOOLS).await;
    let r = post(&m.url())
        .header("origin", "http://evil.example.com")
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let local = post(&m.url())
        .header("origin", format!("http://localhost:{}", m.addr().port()))
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
}

#[tokio::test]
async fn lenient_servers_accept_a_foreign_host_and_origin() {
    let m = mcp(&format!("lenient: true\n{TOOLS}")).await;
    let r = post(&m.url())
        .header("host", format!("evil.example.com:{}", m.addr().port()))
        .header("origin", "http://evil.example.com")
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn anthropic_400_without_anthropic_version() {
    let m = llm("dialect: anthropic\n").await;
    let r = client()
        .post(format!("{}/v1/messages", m.url()))
        .json(&json!({"model": "mock-model", "max_tokens": 16,
            "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("anthropic-version"),
        "{body}"
    );
}

#[tokio::test]
async fn openai_400_without_model() {
    let m = llm("dialect: openai\n").await;
    let r = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
}
