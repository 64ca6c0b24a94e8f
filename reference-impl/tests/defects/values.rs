//! Defects of values: what `get_health` probes, how often the metrics count, where progress
//! numbers start.

use std::time::Duration;

use pallas_reference::metrics::Metrics;
use pallas_reference::settings::DownstreamSettings;
use serde_json::{Value, json};

use crate::Defects;
use crate::fixtures::{
    Exchange, McpServer, MockOpenAi, RawClient, refused_url, settings, start_agent,
};

/// Runs `send_message` with one tool call (two model turns) and a progress token; returns the
/// exchange and the agent's metrics text afterwards.
async fn tool_loop() -> (Exchange, String) {
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
            Some(json!("t")),
            None,
        )
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    (reply, agent.metrics.render())
}

#[tokio::test]
async fn probe_skips_last_server_misses_a_refusing_last_server() {
    let d = Defects::take().await;
    for (defects, status) in [
        (&[][..], "degraded"),
        (&["probe-skips-last-server"][..], "ok"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![
            DownstreamSettings::new("argos", &argos.url),
            DownstreamSettings::new("gitea", refused_url().await),
        ];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], status, "{report}");
    }
}

#[tokio::test]
async fn metrics_send_counted_twice_counts_one_ok_call_as_two() {
    let d = Defects::take().await;
    for (defects, n) in [(&[][..], 1), (&["metrics-send-counted-twice"][..], 2)] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics.observe_send_message("jarvis", true, Duration::from_millis(3));
        let line = format!("pallas_send_message_total{{agent=\"jarvis\",outcome=\"ok\"}} {n}");
        assert!(metrics.render().contains(&line), "{line}");
    }
}

#[tokio::test]
async fn metrics_tokens_cumulative_adds_the_running_total() {
    let d = Defects::take().await;
    // The fixture's model reports 5 completion tokens per turn; the loop takes two turns.
    for (defects, output) in [(&[][..], 10), (&["metrics-tokens-cumulative"][..], 15)] {
        d.set(defects);
        let (_, text) = tool_loop().await;
        let line = format!(
            "pallas_llm_tokens_total{{agent=\"jarvis\",kind=\"output\",model=\"mock-model\"}} {output}"
        );
        assert!(text.contains(&line), "{line} not in\n{text}");
    }
}

#[tokio::test]
async fn progress_starts_at_one_skips_progress_zero() {
    let d = Defects::take().await;
    for (defects, first) in [(&[][..], 0.0), (&["progress-starts-at-one"][..], 1.0)] {
        d.set(defects);
        let (reply, _) = tool_loop().await;
        let progress = reply.progress();
        assert_eq!(
            progress[0]["progress"].as_f64(),
            Some(first),
            "{progress:?}"
        );
    }
}

#[tokio::test]
async fn progress_steps_from_zero_numbers_the_first_step_zero() {
    let d = Defects::take().await;
    for (defects, first) in [
        (&[][..], "jarvis step 1 (llm)"),
        (&["progress-steps-from-zero"][..], "jarvis step 0 (llm)"),
    ] {
        d.set(defects);
        let (reply, _) = tool_loop().await;
        let messages: Vec<Value> = reply
            .progress()
            .iter()
            .map(|p| p["message"].clone())
            .collect();
        assert!(messages.contains(&json!(first)), "{messages:?}");
    }
}
