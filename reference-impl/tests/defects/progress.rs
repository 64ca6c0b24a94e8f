//! Progress defects, observed on the raw SSE stream of a `send_message` that calls one
//! downstream tool.

use pallas_reference::settings::DownstreamSettings;
use serde_json::{Value, json};

use crate::Defects;
use crate::fixtures::{Exchange, McpServer, MockOpenAi, RawClient, settings, start_agent};

/// Runs `send_message` with one tool call (`argos__echo`) and the given progress token.
async fn tool_loop(token: Option<Value>) -> Exchange {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL argos__echo {}"}),
            token,
            None,
        )
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    reply
}

fn messages(reply: &Exchange) -> Vec<String> {
    reply
        .progress()
        .iter()
        .map(|p| p["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn progress_without_token_notifies_a_call_that_asked_for_nothing() {
    let d = Defects::take().await;
    assert!(tool_loop(None).await.progress().is_empty());
    d.set(&["progress-without-token"]);
    let reply = tool_loop(None).await;
    assert!(!reply.progress().is_empty(), "{:?}", reply.messages);
}

#[tokio::test]
async fn progress_token_as_string_changes_a_numeric_token_type() {
    let d = Defects::take().await;
    let clean = tool_loop(Some(json!(7))).await.progress();
    assert!(!clean.is_empty());
    assert!(
        clean.iter().all(|p| p["progressToken"] == json!(7)),
        "{clean:?}"
    );
    d.set(&["progress-token-as-string"]);
    let broken = tool_loop(Some(json!(7))).await.progress();
    assert!(!broken.is_empty());
    assert!(
        broken.iter().all(|p| p["progressToken"] == json!("7")),
        "{broken:?}"
    );
}

#[tokio::test]
async fn progress_not_monotonic_makes_progress_decrease() {
    let d = Defects::take().await;
    let values = |reply: Exchange| -> Vec<f64> {
        reply
            .progress()
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect()
    };
    let clean = values(tool_loop(Some(json!("t"))).await);
    assert!(clean.len() >= 4);
    assert!(clean.windows(2).all(|w| w[1] > w[0]), "{clean:?}");
    d.set(&["progress-not-monotonic"]);
    let broken = values(tool_loop(Some(json!("t"))).await);
    assert!(broken.len() >= 4);
    assert!(broken.windows(2).all(|w| w[1] < w[0]), "{broken:?}");
}

#[tokio::test]
async fn progress_drop_started_sends_completed_without_started() {
    let d = Defects::take().await;
    let clean = messages(&tool_loop(Some(json!("t"))).await);
    assert!(
        clean.contains(&"argos/echo: started".to_owned()),
        "{clean:?}"
    );
    assert!(clean.contains(&"argos/echo: completed".to_owned()));
    d.set(&["progress-drop-started"]);
    let broken = messages(&tool_loop(Some(json!("t"))).await);
    assert!(
        !broken.iter().any(|m| m.ends_with(": started")),
        "{broken:?}"
    );
    assert!(broken.contains(&"argos/echo: completed".to_owned()));
}

#[tokio::test]
async fn progress_after_result_appends_a_notification_to_the_stream() {
    let d = Defects::take().await;
    let after_result = |reply: &Exchange| -> usize {
        let at = reply
            .messages
            .iter()
            .position(|m| m.get("result").is_some())
            .unwrap();
        reply.messages[at + 1..]
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count()
    };
    assert_eq!(after_result(&tool_loop(Some(json!(3))).await), 0);
    d.set(&["progress-after-result"]);
    let reply = tool_loop(Some(json!(3))).await;
    assert_eq!(after_result(&reply), 1, "{:?}", reply.messages);
    assert!(
        reply
            .progress()
            .iter()
            .all(|p| p["progressToken"] == json!(3))
    );
}

#[tokio::test]
async fn progress_bad_message_drops_the_step_kind() {
    let d = Defects::take().await;
    let clean = messages(&tool_loop(Some(json!("t"))).await);
    assert!(
        clean.contains(&"jarvis step 1 (llm)".to_owned()),
        "{clean:?}"
    );
    assert!(clean.contains(&"jarvis step 2 (tool)".to_owned()));
    d.set(&["progress-bad-message"]);
    let broken = messages(&tool_loop(Some(json!("t"))).await);
    assert!(broken.contains(&"jarvis step 1".to_owned()), "{broken:?}");
    assert!(
        !broken
            .iter()
            .any(|m| m.ends_with("(llm)") || m.ends_with("(tool)"))
    );
}

#[tokio::test]
async fn progress_total_on_steps_gives_loop_steps_a_total() {
    let d = Defects::take().await;
    let step_totals = |reply: Exchange| -> Vec<Value> {
        reply
            .progress()
            .iter()
            .filter(|p| p["message"].as_str().unwrap_or_default().contains(" step "))
            .map(|p| p.get("total").cloned().unwrap_or(Value::Null))
            .collect()
    };
    let clean = step_totals(tool_loop(Some(json!("t"))).await);
    assert!(!clean.is_empty());
    assert!(clean.iter().all(Value::is_null), "{clean:?}");
    d.set(&["progress-total-on-steps"]);
    let broken = step_totals(tool_loop(Some(json!("t"))).await);
    assert!(broken.iter().all(Value::is_number), "{broken:?}");
}

#[tokio::test]
async fn progress_after_cancel_reports_a_cancelled_call_as_failed() {
    use std::time::{Duration, Instant};
    let d = Defects::take().await;
    for (defects, late) in [(&[][..], 0), (&["progress-after-cancel"][..], 1)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
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
            .notify("notifications/cancelled", json!({"requestId": 77}))
            .await
            .unwrap();
        let reply = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let failed = messages(&reply)
            .iter()
            .filter(|m| *m == "cancelled call: failed")
            .count();
        assert_eq!(failed, late, "{defects:?}: {:?}", reply.messages);
    }
}
