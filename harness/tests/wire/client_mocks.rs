//! The client against `pallas-mocks` MCP servers (rmcp on the other side): exact token echo,
//! bearer delivery, sessions, concurrency, both eras, cancellation.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use pallas_conformance::client::{CallOptions, Era, McpConnection, Recorder, WireClient};
use pallas_mocks::{McpMock, McpMockSpec, ToolResultSpec, ToolSpec, WireEra};
use serde_json::{Value, json};

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

async fn mock(spec: McpMockSpec) -> McpMock {
    McpMock::start(
        "downstream",
        spec,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .unwrap()
}

fn counting_mock_spec() -> McpMockSpec {
    McpMockSpec {
        tools: vec![
            tool("count", ToolResultSpec::Text("counted".into()), Some(3)),
            tool("whoami", ToolResultSpec::EchoHeaders, None),
        ],
        ..McpMockSpec::default()
    }
}

fn client() -> WireClient {
    WireClient::new(Recorder::new(), Duration::from_secs(10)).unwrap()
}

async fn connect(client: &WireClient, url: &str, era: Era) -> McpConnection {
    McpConnection::connect(client, "downstream", url, era, &CallOptions::default())
        .await
        .unwrap()
        .0
}

async fn assert_token_echoed(token: Value) {
    let m = mock(counting_mock_spec()).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let opts = CallOptions {
        progress_token: Some(token.clone()),
        ..CallOptions::default()
    };
    let ex = conn.call_tool("count", json!({}), &opts).await.unwrap();
    assert_eq!(
        ex.result().unwrap().to_value()["content"][0]["text"],
        "counted"
    );
    let tokens: Vec<Value> = ex
        .progress()
        .map(|m| m.params().unwrap().to_value()["progressToken"].clone())
        .collect();
    assert_eq!(
        tokens,
        vec![token.clone(); 3],
        "token must come back with its exact JSON type"
    );
    let progress: Vec<f64> = ex
        .progress()
        .map(|m| m.params().unwrap().to_value()["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(ex.after_response().count(), 0);
    m.shutdown().await;
}

#[tokio::test]
async fn a_string_progress_token_is_echoed_exactly_by_a_mock_server() {
    assert_token_echoed(json!("tok-A")).await;
}

#[tokio::test]
async fn a_numeric_progress_token_is_echoed_as_a_number() {
    assert_token_echoed(json!(42)).await;
}

#[tokio::test]
async fn without_a_progress_token_no_progress_arrives() {
    let m = mock(counting_mock_spec()).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let ex = conn
        .call_tool("count", json!({}), &CallOptions::default())
        .await
        .unwrap();
    assert!(ex.result().is_some());
    assert_eq!(ex.progress().count(), 0);
}

#[tokio::test]
async fn the_bearer_reaches_the_mock_while_the_recording_stays_clean() {
    let m = mock(McpMockSpec {
        require_bearer: Some("tok-7".into()),
        ..counting_mock_spec()
    })
    .await;
    let client = client();
    let opts = CallOptions {
        bearer: Some("tok-7".into()),
        ..CallOptions::default()
    };
    let (conn, _) = McpConnection::connect(&client, "d", &m.url(), Era::V2025_11_25, &opts)
        .await
        .unwrap();
    let ex = conn.call_tool("whoami", json!({}), &opts).await.unwrap();
    let headers: Value = serde_json::from_str(
        ex.result().unwrap().to_value()["content"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(headers["authorization"], "Bearer tok-7");
    let journal = m.journal();
    assert!(!journal.is_empty());
    assert!(
        journal
            .iter()
            .all(|e| e.authorization() == Some("Bearer tok-7"))
    );
    let recording = serde_json::to_string(&client.recorder().snapshot()).unwrap();
    assert!(!recording.contains("tok-7"));

    // Without the bearer the mock refuses the handshake.
    let err = McpConnection::connect(
        &client,
        "d",
        &m.url(),
        Era::V2025_11_25,
        &CallOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("HTTP 401"), "{err}");
}

#[tokio::test]
async fn delete_ends_the_session_and_the_session_is_then_unknown() {
    let m = mock(counting_mock_spec()).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    assert!(conn.session_id().is_some());
    assert_eq!(m.sessions().opened, 1);
    let del = conn.delete(&CallOptions::default()).await.unwrap();
    assert!(
        (200..300).contains(&del.status),
        "DELETE answered {}",
        del.status
    );
    assert_eq!(m.sessions().deleted, 1);
    let after = conn.list_tools(&CallOptions::default()).await.unwrap();
    assert_eq!(after.status, 404);
    let journal = m.journal();
    let delete = journal.iter().find(|e| e.method == "DELETE").unwrap();
    assert_eq!(delete.session_id.as_deref(), conn.session_id());
}

#[tokio::test]
async fn rmcp_rejects_a_wrong_accept_with_406_and_a_missing_session_with_400() {
    let m = mock(counting_mock_spec()).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let body = Bytes::from(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}"#);
    let wrong_accept = conn
        .post_raw(
            body.clone(),
            vec![("accept".into(), "text/plain".into())],
            true,
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(wrong_accept.status, 406);
    let no_session = conn
        .post_raw(body, vec![], false, &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(no_session.status, 400);
}

#[tokio::test]
async fn concurrent_calls_on_one_connection_each_get_their_own_answer_and_progress() {
    let mut spec = counting_mock_spec();
    spec.tools[0].delay = Some(Duration::from_millis(50));
    let m = mock(spec).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let calls = (0..4).map(|i| {
        let conn = conn.clone();
        async move {
            let opts = CallOptions {
                progress_token: Some(json!(format!("t{i}"))),
                ..CallOptions::default()
            };
            (i, conn.call_tool("count", json!({}), &opts).await.unwrap())
        }
    });
    let results = futures::future::join_all(calls).await;
    let mut ids = Vec::new();
    for (i, ex) in results {
        assert!(ex.result().is_some());
        ids.push(ex.response.as_ref().unwrap().to_value()["id"].clone());
        assert_eq!(ex.progress().count(), 3);
        assert!(
            ex.progress()
                .all(|p| p.params().unwrap().to_value()["progressToken"] == json!(format!("t{i}")))
        );
    }
    ids.sort_by_key(|v| v.as_u64());
    ids.dedup();
    assert_eq!(ids.len(), 4, "every call used its own id");
}

#[tokio::test]
async fn a_2026_era_connection_needs_no_session() {
    let m = mock(McpMockSpec {
        era: WireEra::V2026_07_28,
        ..counting_mock_spec()
    })
    .await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2026_07_28).await;
    assert_eq!(conn.session_id(), None);
    let tools = conn.list_tools(&CallOptions::default()).await.unwrap();
    let listed = tools.result().unwrap().to_value();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["count", "whoami"]);
    let opts = CallOptions {
        progress_token: Some(json!("modern")),
        ..CallOptions::default()
    };
    let ex = conn.call_tool("count", json!({}), &opts).await.unwrap();
    assert!(
        ex.progress()
            .all(|p| p.params().unwrap().to_value()["progressToken"] == "modern")
    );
    let del = conn.delete(&CallOptions::default()).await.unwrap();
    assert_eq!(del.status, 405);
}

#[tokio::test]
async fn a_call_can_be_cancelled_mid_flight() {
    let m = mock(McpMockSpec {
        tools: vec![tool("stuck", ToolResultSpec::Hang, Some(1))],
        ..McpMockSpec::default()
    })
    .await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let id = conn.next_id();
    let opts = CallOptions {
        id: Some(id.clone()),
        progress_token: Some(json!("c")),
        timeout: Some(Duration::from_secs(5)),
        ..CallOptions::default()
    };
    let call = {
        let conn = conn.clone();
        tokio::spawn(async move {
            conn.request_streaming(
                "tools/call",
                json!({"name": "stuck", "arguments": {}}),
                &opts,
                tx,
            )
            .await
        })
    };
    let first = rx
        .recv()
        .await
        .expect("a progress notification before the hang");
    assert_eq!(first.method(), Some("notifications/progress"));
    let cancel = conn
        .cancel(&id, Some("user pressed stop"), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(cancel.status, 202);
    let ex = call.await.unwrap().unwrap();
    assert!(
        ex.result().is_none(),
        "a cancelled call has no result: {:?}",
        ex.response
    );
    assert!(
        m.journal()
            .iter()
            .any(|e| e.jsonrpc_method.as_deref() == Some("notifications/cancelled"))
    );
}

#[tokio::test]
async fn listen_reads_the_standalone_stream_for_its_duration_and_keeps_calls_apart() {
    let m = mock(counting_mock_spec()).await;
    let client = client();
    let conn = connect(&client, &m.url(), Era::V2025_11_25).await;
    let listener = conn.clone();
    let listen = tokio::spawn(async move {
        listener
            .listen(Duration::from_millis(800), &CallOptions::default())
            .await
    });
    let opts = CallOptions {
        progress_token: Some(json!("tok-listen")),
        ..CallOptions::default()
    };
    let call = conn.call_tool("count", json!({}), &opts).await.unwrap();
    assert_eq!(
        call.progress().count(),
        3,
        "the call's progress is on its own stream"
    );
    let listened = listen.await.unwrap().unwrap();
    assert_eq!(listened.status, 200);
    assert!(
        listened
            .content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("text/event-stream")),
        "{:?}",
        listened.content_type
    );
    assert!(
        !listened.timed_out,
        "reaching its duration is the listen's normal end"
    );
    assert_eq!(
        listened.progress().count(),
        0,
        "the standalone stream carries none of the call's progress"
    );
}
