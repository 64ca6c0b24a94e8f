//! Progress notifications: token echoed with its type, one strictly increasing counter,
//! completions with `total == progress`, the seed's messages, none without a token or after the
//! result, and cancellation.

use std::time::{Duration, Instant};

use pallas_reference::settings::DownstreamSettings;
use serde_json::{Value, json};

use crate::fixtures::{Exchange, McpServer, MockOpenAi, RawClient, settings, start_agent};

async fn agent_with_argos() -> (MockOpenAi, McpServer, crate::fixtures::Agent) {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("harper", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    (llm, argos, agent)
}

fn assert_counter_rules(exchange: &Exchange, token: &Value) {
    let progress = exchange.progress();
    assert!(!progress.is_empty());
    let mut last = -1.0;
    for event in &progress {
        assert_eq!(&event["progressToken"], token, "token echoed exactly");
        let value = event["progress"].as_f64().unwrap();
        assert!(
            value > last,
            "progress must strictly increase: {progress:?}"
        );
        last = value;
        let message = event["message"].as_str().unwrap();
        if message.ends_with(": completed") || message.ends_with(": failed") {
            assert_eq!(event["total"].as_f64(), Some(value), "{event}");
        } else {
            assert!(event.get("total").is_none_or(Value::is_null), "{event}");
        }
    }
    // Nothing after the result.
    let last_message = exchange.messages.last().unwrap();
    assert!(last_message.get("result").is_some(), "{last_message}");
}

fn messages(exchange: &Exchange) -> Vec<String> {
    exchange
        .progress()
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn progress_follows_the_seed_messages_and_echoes_a_string_token() {
    let (_llm, _argos, agent) = agent_with_argos().await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let token = json!("abc123");
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL argos__echo {}"}),
            Some(token.clone()),
            None,
        )
        .await
        .unwrap();
    assert!(!reply.is_error());
    assert_eq!(
        messages(&reply),
        [
            "harper step 1 (llm)",
            "harper step 2 (tool)",
            "argos/echo: started",
            "argos/echo: completed",
            "harper step 3 (llm)",
        ]
    );
    assert_counter_rules(&reply, &token);
}

#[tokio::test]
async fn a_numeric_token_stays_a_number_and_failures_are_reported_finished() {
    let (_llm, _argos, agent) = agent_with_argos().await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let token = json!(42);
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL argos__fail {}"}),
            Some(token.clone()),
            None,
        )
        .await
        .unwrap();
    assert!(reply.progress().iter().all(|p| p["progressToken"].is_i64()));
    assert!(messages(&reply).contains(&"argos/fail: failed".to_owned()));
    assert_counter_rules(&reply, &token);
}

#[tokio::test]
async fn no_progress_is_sent_without_a_token() {
    let (_llm, _argos, agent) = agent_with_argos().await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client.send("CALL_TOOL argos__echo {}").await.unwrap();
    assert!(!reply.is_error());
    assert!(reply.progress().is_empty(), "{:?}", reply.messages);
}

#[tokio::test]
async fn parallel_tool_calls_interleave_under_one_increasing_counter() {
    let (_llm, _argos, agent) = agent_with_argos().await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let token = json!("par");
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL argos__rendezvous {}\nCALL_TOOL argos__rendezvous {}"}),
            Some(token.clone()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(reply.text(), "tool results: met | met");
    let all = messages(&reply);
    let started = all
        .iter()
        .filter(|m| *m == "argos/rendezvous: started")
        .count();
    let completed: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, m)| *m == "argos/rendezvous: completed")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(started, 2);
    assert_eq!(completed.len(), 2);
    let last_start = all
        .iter()
        .rposition(|m| m == "argos/rendezvous: started")
        .unwrap();
    assert!(
        last_start < completed[0],
        "both start before either completes: {all:?}"
    );
    assert_counter_rules(&reply, &token);
}

#[tokio::test]
async fn cancelling_a_send_message_stops_the_loop_and_cancels_the_downstream_call() {
    let (llm, argos, agent) = agent_with_argos().await;
    let client = RawClient::connect(&agent.url).await.unwrap();
    let mut caller = client.fork(77);
    let call = tokio::spawn(async move {
        caller
            .call(
                "send_message",
                json!({"message": "CALL_TOOL argos__hang {}"}),
                Some(json!("c")),
                None,
            )
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while argos.journal.count("POST", Some("tools/call")) == 0 {
        assert!(
            Instant::now() < deadline,
            "the downstream call never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    client
        .notify(
            "notifications/cancelled",
            json!({"requestId": 77, "reason": "user stop"}),
        )
        .await
        .unwrap();
    while argos.journal.count("POST", Some("notifications/cancelled")) == 0 {
        assert!(
            Instant::now() < deadline,
            "the downstream call was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let outcome = tokio::time::timeout(Duration::from_secs(10), call).await;
    assert!(outcome.is_ok(), "the cancelled call's stream did not end");
    // The loop stopped: no second model turn.
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn shutdown_cancels_in_flight_loops_and_their_downstream_calls() {
    let (llm, argos, agent) = agent_with_argos().await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let call = tokio::spawn(async move { client.send("CALL_TOOL argos__hang {}").await });
    let deadline = Instant::now() + Duration::from_secs(10);
    while argos.journal.count("POST", Some("tools/call")) == 0 {
        assert!(
            Instant::now() < deadline,
            "the downstream call never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    agent.shutdown.cancel();
    while argos.journal.count("POST", Some("notifications/cancelled")) == 0 {
        assert!(
            Instant::now() < deadline,
            "the downstream call was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let outcome = tokio::time::timeout(Duration::from_secs(10), call).await;
    assert!(outcome.is_ok(), "the in-flight call did not end");
    assert_eq!(llm.requests().len(), 1);
    // The shared downstream session is closed too.
    while argos.journal.count("DELETE", None) == 0 {
        assert!(
            Instant::now() < deadline,
            "the downstream session was not closed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
