//! The client against byte-exact fixtures: SSE edge cases, JSON responses, error statuses,
//! timeouts, recording order and redaction.

use std::time::Duration;

use bytes::Bytes;
use pallas_conformance::client::{
    CallOptions, ClientError, Era, McpConnection, Recorder, WireClient, WireEventKind,
};
use serde_json::{Value, json};

use crate::fixture::{PRIMING, Reply, event, mcp_fixture, progress, result_for};

fn client() -> WireClient {
    WireClient::new(Recorder::new(), Duration::from_secs(10)).unwrap()
}

async fn connect(client: &WireClient, url: &str) -> McpConnection {
    let (conn, init) = McpConnection::connect(
        client,
        "agent",
        url,
        Era::V2025_11_25,
        &CallOptions::default(),
    )
    .await
    .unwrap();
    assert!(init.result().is_some());
    conn
}

#[tokio::test]
async fn priming_event_is_recorded_but_not_taken_for_a_message() {
    let fx = mcp_fixture(|req| {
        Reply::sse(vec![
            PRIMING.to_owned(),
            event("1/1", &progress(&json!("tok"), 1.0, "step 1")),
            event("2/1", &result_for(&req.id(), json!({"content": []}))),
        ])
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let ex = conn.list_tools(&CallOptions::default()).await.unwrap();
    assert_eq!(ex.messages.len(), 2, "{:?}", ex.messages);
    assert_eq!(ex.notifications().count(), 1);
    assert_eq!(ex.messages[0].sse_event_id.as_deref(), Some("1/1"));
    assert_eq!(
        ex.result().map(|r| r.to_value()),
        Some(json!({"content": []}))
    );
    let primings = client
        .recorder()
        .snapshot()
        .into_iter()
        .filter(|o| matches!(&o.kind, WireEventKind::SseEvent(e) if e.data.is_empty() && e.retry == Some(3000)))
        .count();
    assert_eq!(primings, 2, "both POST streams began with a priming event");
}

#[tokio::test]
async fn multi_line_data_is_joined_before_it_is_parsed() {
    let fx = mcp_fixture(|req| {
        Reply::sse(vec![format!(
            "data: {{\"jsonrpc\":\"2.0\",\r\ndata: \"id\":{},\r\ndata: \"result\":{{\"tools\":[]}}}}\r\n\r\n",
            req.id()
        )])
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let ex = conn.list_tools(&CallOptions::default()).await.unwrap();
    assert_eq!(
        ex.result().map(|r| r.to_value()),
        Some(json!({"tools": []}))
    );
    assert!(!ex.timed_out);
}

#[tokio::test]
async fn interleaved_notifications_keep_their_arrival_order() {
    let fx = mcp_fixture(|req| {
        let token = json!(7);
        Reply::sse(vec![
            PRIMING.to_owned(),
            event("1/1", &progress(&token, 0.0, "research/search: started")),
            event("2/1", &json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}})),
            event("3/1", &progress(&token, 1.0, "harper step 1 (tool)")),
            event("4/1", &result_for(&req.id(), json!({"content": [{"type":"text","text":"done"}]}))),
        ])
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let opts = CallOptions {
        progress_token: Some(json!(7)),
        ..CallOptions::default()
    };
    let ex = conn
        .call_tool("send_message", json!({"message": "hi"}), &opts)
        .await
        .unwrap();
    let methods: Vec<&str> = ex.notifications().filter_map(|m| m.method()).collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress"
        ]
    );
    let messages: Vec<&str> = ex
        .progress()
        .map(|m| {
            m.params()
                .unwrap()
                .get("message")
                .unwrap()
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        messages,
        ["research/search: started", "harper step 1 (tool)"]
    );
    assert!(ex.messages.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    // The request carried the token exactly, as a number.
    let sent = fx.captured().last().unwrap().json();
    assert_eq!(sent["params"]["_meta"]["progressToken"], json!(7));
}

#[tokio::test]
async fn json_response_is_read_as_the_response() {
    let fx = mcp_fixture(|req| {
        Reply::json(result_for(
            &req.id(),
            json!({"tools": [{"name": "get_health"}]}),
        ))
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let ex = conn.list_tools(&CallOptions::default()).await.unwrap();
    assert_eq!(ex.content_type.as_deref(), Some("application/json"));
    assert_eq!(
        ex.result().unwrap().to_value()["tools"][0]["name"],
        "get_health"
    );
    assert_eq!(ex.body_text, None);
}

#[tokio::test]
async fn string_ids_chosen_by_the_caller_are_matched() {
    let fx = mcp_fixture(|req| Reply::json(result_for(&req.id(), json!({})))).await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let opts = CallOptions {
        id: Some(json!("call-A")),
        ..CallOptions::default()
    };
    let ex = conn.request("ping", json!({}), &opts).await.unwrap();
    assert_eq!(ex.response.as_ref().unwrap().to_value()["id"], "call-A");
    assert_eq!(fx.captured().last().unwrap().json()["id"], "call-A");
}

#[tokio::test]
async fn session_id_and_protocol_version_are_sent_only_after_initialize() {
    let fx = mcp_fixture(|req| Reply::json(result_for(&req.id(), json!({})))).await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    assert_eq!(conn.session_id(), Some("sess-1"));
    assert_eq!(conn.protocol_version(), "2025-11-25");
    conn.list_tools(&CallOptions::default()).await.unwrap();
    let reqs = fx.captured();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].rpc_method().as_deref(), Some("initialize"));
    assert_eq!(reqs[0].header("mcp-session-id"), None);
    assert_eq!(
        reqs[0].header("accept"),
        Some("application/json, text/event-stream")
    );
    for later in &reqs[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    assert_eq!(
        reqs[1].rpc_method().as_deref(),
        Some("notifications/initialized")
    );
}

#[tokio::test]
async fn era_2026_discovers_and_puts_lifecycle_meta_on_every_request() {
    let fx = crate::fixture::Fixture::start(|req| {
        Reply::json(result_for(
            &req.id(),
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
        ))
    })
    .await;
    let client = client();
    let opts = CallOptions {
        progress_token: Some(json!("p")),
        ..CallOptions::default()
    };
    let (conn, _) = McpConnection::connect(
        &client,
        "a",
        &fx.url("/mcp"),
        Era::V2026_07_28,
        &CallOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(conn.session_id(), None);
    conn.list_tools(&opts).await.unwrap();
    let reqs = fx.captured();
    assert_eq!(reqs[0].rpc_method().as_deref(), Some("server/discover"));
    for r in &reqs {
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        let meta = &r.json()["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    }
    assert_eq!(reqs[1].json()["params"]["_meta"]["progressToken"], "p");
}

#[tokio::test]
async fn unknown_session_and_wrong_accept_come_back_as_exchanges() {
    let fx = mcp_fixture(|req| {
        if req.header("mcp-session-id") == Some("bogus") {
            Reply::status(404, "text/plain", "Not Found: Session not found")
        } else if req.header("accept") == Some("application/json") {
            Reply::status(406, "text/plain", "Not Acceptable")
        } else {
            Reply::json(result_for(&req.id(), json!({})))
        }
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let body = Bytes::from(r#"{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}"#);
    let unknown = conn
        .post_raw(
            body.clone(),
            vec![("mcp-session-id".into(), "bogus".into())],
            false,
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.body_text.as_deref(),
        Some("Not Found: Session not found")
    );
    assert!(unknown.response.is_none());
    let wrong_accept = conn
        .post_raw(
            body,
            vec![("Accept".into(), "application/json".into())],
            true,
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(wrong_accept.status, 406);
    let last = fx.captured().pop().unwrap();
    assert_eq!(last.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(last.header("accept"), Some("application/json"));
}

#[tokio::test]
async fn malformed_json_body_is_kept_as_text_and_recorded_as_malformed() {
    let fx = mcp_fixture(|_| Reply::status(200, "application/json", "{not json")).await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let ex = conn.list_tools(&CallOptions::default()).await.unwrap();
    assert_eq!(ex.body_text.as_deref(), Some("{not json"));
    assert!(ex.response.is_none());
    assert!(
        client.recorder().snapshot().iter().any(
            |o| matches!(&o.kind, WireEventKind::Malformed { text, .. } if text == "{not json")
        )
    );
}

#[tokio::test]
async fn hanging_server_yields_a_timed_out_exchange_with_what_was_seen() {
    let fx = mcp_fixture(|_| {
        let mut reply = Reply::sse(vec![
            PRIMING.to_owned(),
            event("1/1", &progress(&json!("t"), 1.0, "step")),
        ]);
        reply.hang = true;
        reply
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let opts = CallOptions {
        timeout: Some(Duration::from_millis(1000)),
        ..CallOptions::default()
    };
    let ex = conn
        .call_tool("send_message", json!({"message": "x"}), &opts)
        .await
        .unwrap();
    assert!(ex.timed_out);
    assert_eq!(ex.status, 200);
    assert_eq!(ex.progress().count(), 1);
    assert!(ex.response.is_none());
}

#[tokio::test]
async fn server_that_never_sends_headers_times_out_too() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let client = WireClient::new(Recorder::new(), Duration::from_millis(300)).unwrap();
    let err = McpConnection::connect(
        &client,
        "a",
        &url,
        Era::V2025_11_25,
        &CallOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ClientError::Handshake { status: 0, ref detail, .. } if detail.contains("timed out")),
        "{err}"
    );
    let snap = client.recorder().snapshot();
    assert!(snap.iter().any(|o| matches!(&o.kind, WireEventKind::Http(h) if h.error.as_deref().is_some_and(|e| e.contains("timeout")))));
    holder.abort();
}

#[tokio::test]
async fn connection_refused_is_a_transport_error_and_is_recorded() {
    let port = pallas_conformance::process::free_port().unwrap();
    let client = client();
    let err = McpConnection::connect(
        &client,
        "gone",
        &format!("http://127.0.0.1:{port}/mcp"),
        Era::V2025_11_25,
        &CallOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    let snap = client.recorder().snapshot();
    assert!(matches!(&snap[0].kind, WireEventKind::Sent(m) if m["method"] == "initialize"));
    assert!(
        matches!(&snap[1].kind, WireEventKind::Http(h) if h.status.is_none() && h.error.is_some())
    );
}

#[tokio::test]
async fn messages_after_the_response_are_kept_for_the_checks() {
    let fx = mcp_fixture(|req| {
        let mut reply = Reply::sse(vec![
            event("1/1", &result_for(&req.id(), json!({"content": []}))),
            event("2/1", &progress(&json!("late"), 9.0, "too late")),
        ]);
        reply.chunk_delay = Some(Duration::from_millis(20));
        reply
    })
    .await;
    // A long grace: the stream ends right after the late event, so this costs nothing.
    let client = client().with_after_response_grace(Duration::from_secs(10));
    let conn = connect(&client, &fx.url("/mcp")).await;
    let ex = conn
        .call_tool(
            "send_message",
            json!({"message": "x"}),
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(ex.response.is_some());
    let late: Vec<_> = ex.after_response().collect();
    assert_eq!(late.len(), 1);
    assert_eq!(
        late[0].params().unwrap().to_value()["progressToken"],
        "late"
    );
}

#[tokio::test]
async fn recording_keeps_wire_order_and_redacts_bearers() {
    let fx = mcp_fixture(|req| {
        Reply::sse(vec![
            PRIMING.to_owned(),
            event("1/1", &result_for(&req.id(), json!({"tools": []}))),
        ])
        .header("set-cookie", "sid=secret-cookie")
    })
    .await;
    let client = client();
    let opts = CallOptions {
        bearer: Some("tok-7".into()),
        headers: vec![("x-api-key".into(), "sk-live-123".into())],
        ..CallOptions::default()
    };
    let (conn, _) =
        McpConnection::connect(&client, "harper", &fx.url("/mcp"), Era::V2025_11_25, &opts)
            .await
            .unwrap();
    conn.list_tools(&opts).await.unwrap();
    // The real bearer went over the wire…
    assert!(
        fx.captured()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer tok-7"))
    );
    // …but never into the recording.
    let snap = client.recorder().snapshot();
    let text = serde_json::to_string(&snap).unwrap();
    assert!(
        !text.contains("tok-7") && !text.contains("sk-live-123") && !text.contains("secret-cookie"),
        "{text}"
    );
    let kinds: Vec<String> = snap
        .iter()
        .map(|o| match &o.kind {
            WireEventKind::Sent(m) => format!("sent {}", m["method"].as_str().unwrap()),
            WireEventKind::Http(h) => format!("http {}", h.status.unwrap()),
            WireEventKind::SseEvent(e) if e.data.is_empty() => "priming".to_owned(),
            WireEventKind::SseEvent(_) => "event".to_owned(),
            WireEventKind::Received { .. } => "received".to_owned(),
            WireEventKind::Malformed { .. } => "malformed".to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "sent initialize",
            "http 200",
            "priming",
            "event",
            "received",
            "sent notifications/initialized",
            "http 202",
            "sent tools/list",
            "http 200",
            "priming",
            "event",
            "received",
        ]
    );
    assert!(
        snap.windows(2)
            .all(|w| w[0].seq < w[1].seq && w[0].at_ms <= w[1].at_ms)
    );
    assert!(snap.iter().all(|o| o.label == "harper"));
    let WireEventKind::Http(http) = &snap[1].kind else {
        panic!()
    };
    assert!(
        http.request_headers
            .contains(&("authorization".to_owned(), "Bearer [redacted]".to_owned()))
    );
    assert!(http.completed_ms.is_some());
    // Received messages point at the HTTP exchange that carried them.
    assert!(
        matches!(&snap[4].kind, WireEventKind::Received { http_seq, sse_event_id: Some(id), .. } if *http_seq == snap[1].seq && id == "1/0")
    );
}

#[tokio::test]
async fn streaming_requests_forward_every_message_live_in_order() {
    let fx = mcp_fixture(|req| {
        let mut reply = Reply::sse(vec![
            PRIMING.to_owned(),
            event("1/1", &progress(&json!("s"), 1.0, "one")),
            event("2/1", &progress(&json!("s"), 2.0, "two")),
            event("3/1", &result_for(&req.id(), json!({"content": []}))),
        ]);
        reply.chunk_delay = Some(Duration::from_millis(10));
        reply
    })
    .await;
    let client = client();
    let conn = connect(&client, &fx.url("/mcp")).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ex = conn
        .request_streaming(
            "tools/call",
            json!({"name": "send_message", "arguments": {}}),
            &CallOptions::default(),
            tx,
        )
        .await
        .unwrap();
    let mut live = Vec::new();
    while let Ok(m) = rx.try_recv() {
        live.push(m);
    }
    assert_eq!(live, ex.messages);
    assert_eq!(live.len(), 3);
    let ids: Vec<Value> = live
        .iter()
        .map(|m| m.message.get("id").map_or(Value::Null, |i| i.to_value()))
        .collect();
    assert_eq!(ids[..2], [Value::Null, Value::Null]);
}
