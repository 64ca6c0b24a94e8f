//! Health, metrics, messages, history and MCP defects of the agent server.

use std::time::{Duration, Instant};

use pallas_reference::agent::tools;
use pallas_reference::metrics::Metrics;
use pallas_reference::settings::DownstreamSettings;
use serde_json::{Value, json};

use crate::Defects;
use crate::fixtures::{
    LlmFault, McpServer, MockOpenAi, RawClient, blackhole_url, refused_url, serve, settings,
    start_agent,
};

async fn health(client: &mut RawClient, token: Option<Value>) -> (Value, Vec<Value>) {
    let reply = client
        .call("get_health", json!({}), token, None)
        .await
        .unwrap();
    let report = serde_json::from_str(&reply.text()).unwrap();
    (report, reply.progress())
}

/// An agent with one healthy and one refusing downstream server.
async fn half_down_health() -> Value {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![
        DownstreamSettings::new("argos", &argos.url),
        DownstreamSettings::new("neo4j_cypher", refused_url().await),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    health(&mut client, None).await.0
}

#[tokio::test]
async fn health_ok_when_down_reports_ok_with_a_refusing_server() {
    let d = Defects::take().await;
    let clean = half_down_health().await;
    assert_eq!(clean["status"], "degraded", "{clean}");
    d.set(&["health-ok-when-down"]);
    let broken = half_down_health().await;
    assert_eq!(broken["status"], "ok", "{broken}");
}

#[tokio::test]
async fn health_no_message_drops_the_message_of_a_degraded_answer() {
    let d = Defects::take().await;
    let clean = half_down_health().await;
    assert!(clean["message"].as_str().unwrap().contains("neo4j_cypher"));
    d.set(&["health-no-message"]);
    let broken = half_down_health().await;
    assert_eq!(broken["status"], "degraded");
    assert!(broken.get("message").is_none(), "{broken}");
}

#[tokio::test]
async fn health_calls_llm_sends_a_completion_during_get_health() {
    let d = Defects::take().await;
    for (defects, expected) in [(&[][..], 0), (&["health-calls-llm"][..], 1)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let (report, _) = health(&mut client, None).await;
        assert!(report.get("status").is_some());
        assert_eq!(llm.requests().len(), expected, "{defects:?}");
    }
}

#[tokio::test]
async fn health_progress_sends_notifications_from_get_health() {
    let d = Defects::take().await;
    for (defects, expected) in [(&[][..], 0), (&["health-progress"][..], 1)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let (_, progress) = health(&mut client, Some(json!("h-1"))).await;
        assert_eq!(progress.len(), expected, "{defects:?}: {progress:?}");
    }
}

#[tokio::test]
async fn probe_skip_delete_leaves_the_probe_session_open() {
    let d = Defects::take().await;
    for (defects, expected) in [(&[][..], 1), (&["probe-skip-delete"][..], 0)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let (report, _) = health(&mut client, None).await;
        assert_eq!(report["status"], "ok");
        assert_eq!(argos.journal.count("POST", Some("initialize")), 1);
        assert_eq!(argos.journal.count("DELETE", None), expected, "{defects:?}");
    }
}

#[tokio::test]
async fn probe_accept_json_only_drops_text_event_stream_from_the_probe() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "application/json, text/event-stream"),
        (&["probe-accept-json-only"][..], "application/json"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let _ = health(&mut client, None).await;
        let probe = argos
            .journal
            .records()
            .into_iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .expect("a probe");
        assert_eq!(probe.accept.as_deref(), Some(expected), "{defects:?}");
    }
}

#[tokio::test]
async fn probe_serially_makes_two_blackholed_servers_cost_two_timeouts() {
    let d = Defects::take().await;
    let timeout = Duration::from_millis(500);
    for defects in [&[][..], &["probe-serially"][..]] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let (first, _a) = blackhole_url().await;
        let (second, _b) = blackhole_url().await;
        let mut s = settings("jarvis", &llm.url);
        s.health.probe_timeout = timeout;
        s.servers = vec![
            DownstreamSettings::new("first", first),
            DownstreamSettings::new("second", second),
        ];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let started = Instant::now();
        let (report, _) = health(&mut client, None).await;
        let elapsed = started.elapsed();
        assert_eq!(report["status"], "degraded");
        if defects.is_empty() {
            assert!(elapsed < 2 * timeout, "parallel probes took {elapsed:?}");
        } else {
            // A lower bound: one timeout after the other.
            assert!(elapsed >= 2 * timeout, "serial probes took {elapsed:?}");
        }
    }
}

#[tokio::test]
async fn health_tool_schema_open_drops_additional_properties_false() {
    let d = Defects::take().await;
    let schema =
        |tool: rmcp::model::Tool| serde_json::to_value(tool).unwrap()["inputSchema"].clone();
    assert_eq!(
        schema(tools::get_health_tool())["additionalProperties"],
        json!(false)
    );
    d.set(&["health-tool-schema-open"]);
    assert!(
        schema(tools::get_health_tool())
            .get("additionalProperties")
            .is_none()
    );
}

#[tokio::test]
async fn message_tool_schema_loose_no_longer_requires_message() {
    let d = Defects::take().await;
    let required = || {
        serde_json::to_value(tools::send_message_tool("jarvis")).unwrap()["inputSchema"]["required"]
            .clone()
    };
    assert_eq!(required(), json!(["message"]));
    d.set(&["message-tool-schema-loose"]);
    assert_eq!(required(), json!([]));
}

#[tokio::test]
async fn metrics_missing_metric_leaves_out_send_message_total() {
    let d = Defects::take().await;
    let metrics = Metrics::new();
    metrics.set_agent_info("jarvis", 1);
    assert!(metrics.render().contains("pallas_send_message_total"));
    d.set(&["metrics-missing-metric"]);
    let text = metrics.render();
    assert!(!text.contains("pallas_send_message_total"), "{text}");
    assert!(text.contains("pallas_agent_info"));
}

#[tokio::test]
async fn metrics_frozen_counters_never_count_calls() {
    let d = Defects::take().await;
    let line = "pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"} 1";
    let tool_line = "pallas_tool_calls_total{agent=\"jarvis\",operation=\"tool\",outcome=\"ok\",server=\"argos\"} 1";
    for (defects, counted) in [(&[][..], true), (&["metrics-frozen-counters"][..], false)] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics.observe_send_message("jarvis", true, Duration::from_millis(3));
        metrics.observe_tool_call("jarvis", "argos", "tool", true, Duration::from_millis(1));
        let text = metrics.render();
        assert_eq!(text.contains(line), counted, "{text}");
        assert_eq!(text.contains(tool_line), counted, "{text}");
    }
}

#[tokio::test]
async fn metrics_health_gauge_stale_ignores_get_health() {
    let d = Defects::take().await;
    let line = "pallas_agent_health_status{agent=\"jarvis\"} 0.5";
    for (defects, follows) in [
        (&[][..], true),
        (&["metrics-health-gauge-stale"][..], false),
    ] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics.set_agent_health("jarvis", "degraded");
        assert_eq!(metrics.render().contains(line), follows);
    }
}

#[tokio::test]
async fn metrics_wrong_content_type_serves_json_content_type() {
    let d = Defects::take().await;
    let ct = tokio_util::sync::CancellationToken::new();
    let _stop = ct.clone().drop_guard();
    let addr = serve(
        pallas_reference::registry::metrics_router(Metrics::new()),
        ct,
    )
    .await;
    let content_type = || async {
        pallas_reference::net::loopback_client()
            .get(format!("http://{addr}/metrics"))
            .send()
            .await
            .unwrap()
            .headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert!(content_type().await.starts_with("text/plain"));
    d.set(&["metrics-wrong-content-type"]);
    assert_eq!(content_type().await, "application/json");
}

#[tokio::test]
async fn reply_empty_answers_no_text() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    assert_eq!(
        client.send("hello").await.unwrap().text(),
        "echo: hello (images: 0)"
    );
    d.set(&["reply-empty"]);
    let reply = client.send("hello").await.unwrap();
    assert!(!reply.is_error());
    assert_eq!(reply.text(), "");
}

#[tokio::test]
async fn images_dropped_sends_only_the_text_to_a_vision_model() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.capabilities.vision = true;
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let args =
        json!({"message": "look", "images": [{"data": "iVBORw0KGgo=", "mime_type": "image/png"}]});
    let sent = client
        .call("send_message", args.clone(), None, None)
        .await
        .unwrap();
    assert_eq!(sent.text(), "echo: look (images: 1)");
    d.set(&["images-dropped"]);
    let dropped = client.call("send_message", args, None, None).await.unwrap();
    assert!(!dropped.is_error(), "{:?}", dropped.messages);
    assert_eq!(dropped.text(), "echo: look (images: 0)");
}

#[tokio::test]
async fn provider_error_as_success_hides_a_provider_failure() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    llm.set_fault(LlmFault {
        status: Some(500),
        delay: None,
    });
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let clean = client.send("hello").await.unwrap();
    assert!(clean.is_error());
    assert!(clean.text().contains("LLM request failed"));
    d.set(&["provider-error-as-success"]);
    let broken = client.send("hello").await.unwrap();
    assert!(!broken.is_error(), "{:?}", broken.messages);
    assert!(broken.text().contains("LLM request failed"));
}

#[tokio::test]
async fn history_empty_forgets_the_conversation_in_the_prompt() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    assert!(!client.send("remember me").await.unwrap().is_error());
    let mut history = async || {
        let reply = client
            .request("prompts/get", json!({"name": "jarvis_history"}), None)
            .await
            .unwrap();
        reply.result()["result"]["messages"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(history().await, 2);
    d.set(&["history-empty"]);
    assert_eq!(history().await, 0);
}

#[tokio::test]
async fn unknown_tool_is_result_answers_an_unknown_tool_without_a_json_rpc_error() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let clean = client
        .call("no_such_tool", json!({}), None, None)
        .await
        .unwrap();
    assert!(
        clean.result().get("error").is_some(),
        "{:?}",
        clean.messages
    );
    d.set(&["unknown-tool-is-result"]);
    let broken = client
        .call("no_such_tool", json!({}), None, None)
        .await
        .unwrap();
    assert!(broken.result().get("error").is_none());
    assert!(broken.is_error());
}
