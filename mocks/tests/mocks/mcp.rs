//! The MCP mocks: the rmcp client end to end, raw HTTP for wire details.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::support::{client, mcp, sse_data};

const TOOLS: &str = r#"
tools:
  - name: hello
    description: Says hello
    result: {text: "hello!"}
  - name: data
    result: {json: {n: 1}}
  - name: broken
    result: {is_error: "it broke"}
  - name: rpc_fail
    result: {jsonrpc_error: {code: -32001, message: "backend unavailable"}}
  - name: args
    input_schema: {type: object, properties: {q: {type: string}}}
    result: echo_args
  - name: headers
    result: echo_headers
  - name: slow
    progress: 3
    result: {text: done}
  - name: forever
    result: hang
"#;

fn mcp_post(c: &reqwest::Client, url: &str, body: Value) -> reqwest::RequestBuilder {
    c.post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .json(&body)
}

/// Opens a session by hand; returns its id.
async fn initialize(c: &reqwest::Client, url: &str) -> String {
    let r = mcp_post(
        c,
        url,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.text().await.unwrap();
    let n = mcp_post(
        c,
        url,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .header("mcp-session-id", &sid)
    .header("mcp-protocol-version", "2025-11-25")
    .send()
    .await
    .unwrap();
    assert_eq!(n.status(), 202);
    sid
}

#[tokio::test]
async fn rmcp_client_lists_and_calls_every_kind_of_tool() {
    let m = mcp(TOOLS).await;
    let transport = StreamableHttpClientTransport::from_uri(m.url());
    let client = ().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "test");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 8);
    assert_eq!(tools[0].description.as_deref(), Some("Says hello"));

    let text = |r: &rmcp::model::CallToolResult| {
        serde_json::to_value(&r.content).unwrap()[0]["text"].clone()
    };
    let r = client
        .call_tool(CallToolRequestParams::new("hello"))
        .await
        .unwrap();
    assert_eq!(text(&r), "hello!");
    let r = client
        .call_tool(CallToolRequestParams::new("data"))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 1})));
    let r = client
        .call_tool(CallToolRequestParams::new("broken"))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let err = client
        .call_tool(CallToolRequestParams::new("rpc_fail"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("backend unavailable"), "{err}");
    let args = json!({"q": "owls"}).as_object().unwrap().clone();
    let r = client
        .call_tool(CallToolRequestParams::new("args").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text(&r).as_str().unwrap()).unwrap(),
        json!({"q": "owls"})
    );
    assert!(
        client
            .call_tool(CallToolRequestParams::new("nope"))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
    let calls: Vec<_> = m.journal().into_iter().filter_map(|e| e.tool).collect();
    assert_eq!(
        calls,
        vec!["hello", "data", "broken", "rpc_fail", "args", "nope"]
    );
}

#[tokio::test]
async fn sessions_are_counted_open_and_deleted() {
    let m = mcp(TOOLS).await;
    let transport = StreamableHttpClientTransport::from_uri(m.url());
    let client = ().serve(transport).await.unwrap();
    client.list_all_tools().await.unwrap();
    assert_eq!(m.sessions().open_now, 1);
    client.cancel().await.unwrap();
    // The DELETE is sent on close; poll with a deadline.
    let deadline = Instant::now() + Duration::from_secs(5);
    while m.sessions().deleted == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let s = m.sessions();
    assert_eq!((s.opened, s.deleted, s.open_now), (1, 1, 0));
    let j = m.journal();
    assert_eq!(j[0].jsonrpc_method.as_deref(), Some("initialize"));
    assert!(
        j.iter()
            .any(|e| e.method == "DELETE" && e.session_id.is_some())
    );
    let over_http: Value = client_get(&format!("http://{}/__mock/sessions", m.addr())).await;
    assert_eq!(over_http, json!({"opened": 1, "deleted": 1, "open_now": 0}));
}

async fn client_get(url: &str) -> Value {
    client()
        .get(url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn bearer_is_required_and_echoed_back_with_every_request_journaled() {
    let m = mcp(&format!("require_bearer: tok-1\n{TOOLS}")).await;
    let c = client();
    let denied = mcp_post(
        &c,
        &m.url(),
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(denied.status(), 401);
    assert!(
        denied.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );

    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(m.url()).auth_header("tok-1"),
    );
    let client = ().serve(transport).await.unwrap();
    let r = client
        .call_tool(CallToolRequestParams::new("headers"))
        .await
        .unwrap();
    let text = serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let headers: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(headers["authorization"], "Bearer tok-1");
    client.cancel().await.unwrap();
    let j = m.journal();
    assert_eq!(j[0].authorization(), None);
    assert_eq!(j[0].status, Some(401));
    assert!(
        j[1..]
            .iter()
            .all(|e| e.authorization() == Some("Bearer tok-1"))
    );
}

/// A server that lets anyone connect and list, and wants the bearer on tool calls only: the
/// handshake without a bearer succeeds, a call without one gets 401, a call with it runs.
#[tokio::test]
async fn a_bearer_required_on_calls_only_leaves_the_handshake_open() {
    let m = mcp(&format!(
        "require_bearer: tok-1\nbearer_on_calls_only: true\n{TOOLS}"
    ))
    .await;
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    let call = |bearer: Option<&str>| {
        let mut r = mcp_post(
            &c,
            &m.url(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "headers", "arguments": {}}}),
        )
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25");
        if let Some(b) = bearer {
            r = r.header("authorization", format!("Bearer {b}"));
        }
        r.send()
    };
    assert_eq!(call(None).await.unwrap().status(), 401);
    assert_eq!(call(Some("tok-2")).await.unwrap().status(), 401);
    let ok = call(Some("tok-1")).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.text().await.unwrap().contains("Bearer tok-1"));
    let statuses: Vec<Option<u16>> = m.journal().iter().map(|e| e.status).collect();
    assert_eq!(
        statuses,
        vec![Some(200), Some(202), Some(401), Some(401), Some(200)],
        "{:?}",
        m.journal()
    );
}

/// A server that authenticates with configured credentials: every request, the session's
/// `DELETE` included, needs each required header (an `Authorization` scheme in any case).
#[tokio::test]
async fn required_headers_guard_every_request_the_delete_included() {
    let m = mcp(&format!(
        "require_headers: {{X-Api-Key: k-123, Authorization: Bearer t-9}}\n{TOOLS}"
    ))
    .await;
    let c = client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let only_key = mcp_post(&c, &m.url(), init.clone())
        .header("x-api-key", "k-123")
        .send()
        .await
        .unwrap();
    assert_eq!(only_key.status(), 401);
    let ok = mcp_post(&c, &m.url(), init)
        .header("x-api-key", "k-123")
        .header("authorization", "bearer t-9")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let sid = ok.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let delete = |key: &'static str| {
        c.delete(m.url())
            .header("mcp-session-id", &sid)
            .header("x-api-key", key)
            .header("authorization", "Bearer t-9")
            .send()
    };
    assert_eq!(delete("wrong").await.unwrap().status(), 401);
    assert!(delete("k-123").await.unwrap().status().is_success());
    let statuses: Vec<Option<u16>> = m.journal().iter().map(|e| e.status).collect();
    assert_eq!(statuses[0], Some(401), "{statuses:?}");
    assert_eq!(statuses[statuses.len() - 2], Some(401), "{statuses:?}");
}

/// A server reached by a URL ending in `/` serves MCP there, and answers the path without the
/// slash with 307 to it (a client that drops the slash and follows no redirect sees no MCP).
#[tokio::test]
async fn a_trailing_slash_server_serves_its_slash_url_and_redirects_the_other() {
    let m = mcp(&format!("trailing_slash: true\n{TOOLS}")).await;
    assert!(m.url().ends_with("/mcp/"), "{}", m.url());
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    assert!(!sid.is_empty());
    let direct = pallas_mocks::http_client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let slashless = m.url().trim_end_matches('/').to_owned();
    let answer = mcp_post(
        &direct,
        &slashless,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(answer.status(), 307);
    assert_eq!(answer.headers()["location"], "/mcp/");
}

/// A server that does not let clients end sessions answers DELETE with 405 and keeps serving the
/// session.
#[tokio::test]
async fn a_delete_status_refuses_the_teardown_and_keeps_the_session() {
    let m = mcp(&format!("delete_status: 405\n{TOOLS}")).await;
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    let delete = c
        .delete(m.url())
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 405);
    let list = mcp_post(
        &c,
        &m.url(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    )
    .header("mcp-session-id", &sid)
    .header("mcp-protocol-version", "2025-11-25")
    .send()
    .await
    .unwrap();
    assert_eq!(list.status(), 200, "the session lives on");
    let j = m.journal();
    assert_eq!(j[0].opened_session.as_deref(), Some(sid.as_str()));
    let del = j.iter().find(|e| e.method == "DELETE").unwrap();
    assert_eq!(
        (del.status, del.session_id.as_deref()),
        (Some(405), Some(sid.as_str()))
    );
}

#[tokio::test]
async fn progress_is_sent_only_when_the_call_carries_a_token() {
    let m = mcp(TOOLS).await;
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    let call = |meta: Option<Value>| {
        let mut params = json!({"name": "slow", "arguments": {}});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        mcp_post(
            &c,
            &m.url(),
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}),
        )
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
    };
    let with = call(Some(json!({"progressToken": "tok-A"})))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let msgs = sse_data(&with);
    let progress: Vec<_> = msgs
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "tok-A")
    );
    assert_eq!(progress[2]["params"]["progress"], 3.0);
    assert_eq!(msgs.last().unwrap()["result"]["content"][0]["text"], "done");
    let without = call(None).send().await.unwrap().text().await.unwrap();
    assert!(!without.contains("notifications/progress"));
}

#[tokio::test]
async fn down_server_refuses_connections() {
    let m = mcp("reachability: down\n").await;
    assert!(m.url().ends_with("/mcp"));
    let err = client().post(m.url()).send().await.unwrap_err();
    assert!(err.is_connect(), "{err}");
}

#[tokio::test]
async fn blackhole_server_accepts_and_never_answers() {
    let m = mcp("reachability: blackhole\n").await;
    let err = client()
        .post(m.url())
        .timeout(Duration::from_millis(300))
        .body("{}")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
}

#[tokio::test]
async fn http_status_answers_every_request_with_it() {
    let m = mcp("http_status: 503\n").await;
    let c = client();
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        assert_eq!(
            c.request(method, m.url()).send().await.unwrap().status(),
            503
        );
    }
    assert_eq!(m.journal().len(), 3);
}

#[tokio::test]
async fn stateless_era_answers_405_to_get_and_delete_and_serves_posts() {
    let m = mcp(&format!("era: \"2026-07-28\"\n{TOOLS}")).await;
    let c = client();
    assert_eq!(
        c.get(m.url())
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap()
            .status(),
        405
    );
    assert_eq!(c.delete(m.url()).send().await.unwrap().status(), 405);
    let r = mcp_post(
        &c,
        &m.url(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}}}}),
    )
    .header("mcp-protocol-version", "2026-07-28")
    .header("mcp-method", "tools/list")
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("mcp-session-id").is_none());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 8);
    assert_eq!(m.sessions().opened, 0);
}

#[tokio::test]
async fn slow_initialize_is_delayed_but_other_requests_are_not_blocked() {
    let m = mcp(&format!("initialize_delay: 200ms\n{TOOLS}")).await;
    let c = client();
    let start = Instant::now();
    initialize(&c, &m.url()).await;
    assert!(start.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn hanging_tool_never_answers() {
    let m = mcp(TOOLS).await;
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    let r = mcp_post(&c, &m.url(), json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forever","arguments":{}}}))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .timeout(Duration::from_millis(400))
        .send().await;
    // Headers may arrive (SSE), the result never does.
    match r {
        Err(e) => assert!(e.is_timeout(), "{e}"),
        Ok(resp) => assert!(resp.text().await.is_err()),
    }
}

#[tokio::test]
async fn journal_over_http_and_reset_clear_requests_and_counters() {
    let m = mcp(TOOLS).await;
    let c = client();
    initialize(&c, &m.url()).await;
    let base = format!("http://{}", m.addr());
    let j: Value = c
        .get(format!("{base}/__mock/journal"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(j[0]["jsonrpc_method"], "initialize");
    assert_eq!(j[0]["status"], 200);
    assert_eq!(m.sessions().opened, 1);
    assert_eq!(
        c.post(format!("{base}/__mock/reset"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert!(m.journal().is_empty());
    assert_eq!(m.sessions().opened, 0);
}

#[tokio::test]
async fn tool_delay_holds_the_answer_back() {
    let m = mcp("tools:\n  - {name: slow, delay: 200ms, result: {text: late}}\n").await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(m.url())).await.unwrap();
    let start = Instant::now();
    let r = client
        .call_tool(CallToolRequestParams::new("slow"))
        .await
        .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert_eq!(serde_json::to_value(&r.content).unwrap()[0]["text"], "late");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_held_tool_answers_once_the_tool_it_waits_for_is_called() {
    let m = mcp(concat!(
        "tools:\n",
        "  - {name: hold, delay: 30s, until_called: other, result: {text: released}}\n",
        "  - {name: other, result: {text: here}}\n",
    ))
    .await;
    let held = ().serve(StreamableHttpClientTransport::from_uri(m.url())).await.unwrap();
    let start = Instant::now();
    let call = tokio::spawn(async move {
        let r = held.call_tool(CallToolRequestParams::new("hold")).await;
        (r, held)
    });
    // Not released by anything else: the held call is still pending after a while.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !call.is_finished(),
        "the held call answered before `other` was called"
    );
    let second = ().serve(StreamableHttpClientTransport::from_uri(m.url())).await.unwrap();
    second
        .call_tool(CallToolRequestParams::new("other"))
        .await
        .unwrap();
    let (r, held) = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the held call was not released by the call of `other`")
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(
        serde_json::to_value(&r.unwrap().content).unwrap()[0]["text"],
        "released"
    );
    held.cancel().await.unwrap();
    second.cancel().await.unwrap();
}

#[tokio::test]
async fn shutdown_ends_a_hanging_call_promptly() {
    let m = mcp(TOOLS).await;
    let c = client();
    let sid = initialize(&c, &m.url()).await;
    let call = mcp_post(&c, &m.url(), json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forever","arguments":{}}}))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send();
    let pending = tokio::spawn(async move { call.await.map(|r| r.status()) });
    // Wait until the call reached the mock.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !m
        .journal()
        .iter()
        .any(|e| e.tool.as_deref() == Some("forever"))
    {
        assert!(Instant::now() < deadline, "call never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let start = Instant::now();
    m.shutdown().await;
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "shutdown waited for the hanging call"
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .unwrap();
}
