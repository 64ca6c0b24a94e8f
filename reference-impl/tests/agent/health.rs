//! `get_health`: parallel probes with session teardown, the provider status with TTL, the seed's
//! message, no LLM call and no progress.

use std::time::{Duration, Instant};

use pallas_reference::llm::{LlmStatusCell, ProviderStatus};
use pallas_reference::settings::{DownstreamSettings, Provider, Secret};
use serde_json::{Value, json};

use crate::fixtures::{
    McpServer, MockOpenAi, RawClient, blackhole_url, refused_url, settings, start_agent,
    start_agent_with,
};

async fn health(client: &mut RawClient) -> Value {
    let reply = client
        .call("get_health", json!({}), None, None)
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    let content = reply.result()["result"]["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(content.len(), 1, "one text block");
    serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn health_is_ok_when_everything_answers_and_probe_sessions_are_deleted() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let neo4j = McpServer::start("neo4j").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![
        DownstreamSettings::new("argos", &argos.url),
        DownstreamSettings::new("neo4j_cypher", &neo4j.url),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let report = health(&mut client).await;
    assert_eq!(report["status"], "ok", "{report}");
    assert!(report.get("message").is_none());
    assert!(report["timestamp"].as_str().unwrap().ends_with('Z'));
    for server in [&argos, &neo4j] {
        let records = server.journal.records();
        let init = records
            .iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .unwrap();
        assert!(init.session.is_none());
        let deletes: Vec<_> = records.iter().filter(|r| r.method == "DELETE").collect();
        assert_eq!(deletes.len(), 1, "{records:?}");
        assert!(deletes[0].session.is_some());
        assert_eq!(server.journal.count("POST", Some("tools/call")), 0);
    }
    assert!(
        llm.requests().is_empty(),
        "get_health must not call the model"
    );
    let metrics = agent.metrics.render();
    assert!(
        metrics.contains("pallas_downstream_up{agent=\"jarvis\",server=\"argos\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("pallas_agent_health_status{agent=\"jarvis\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn health_is_degraded_with_the_seed_message_when_a_server_refuses_and_the_model_is_missing() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.model.model = "bad-model".into();
    s.servers = vec![
        DownstreamSettings::new("argos", &argos.url),
        DownstreamSettings::new("neo4j_cypher", refused_url().await),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let report = health(&mut client).await;
    assert_eq!(report["status"], "degraded");
    assert_eq!(
        report["message"],
        "Unreachable: neo4j_cypher; LLM: openai: model 'bad-model' not found"
    );
    let metrics = agent.metrics.render();
    assert!(metrics.contains("pallas_downstream_up{agent=\"jarvis\",server=\"neo4j_cypher\"} 0"));
    assert!(
        metrics.contains("pallas_llm_provider_up{provider=\"openai\"} 0"),
        "{metrics}"
    );
    assert!(metrics.contains("pallas_agent_health_status{agent=\"jarvis\"} 0.5"));
}

#[tokio::test]
async fn a_downstream_speaking_only_2026_07_28_is_reachable() {
    let llm = MockOpenAi::start().await;
    let modern = McpServer::start_with("modern", false).await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("modern", &modern.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let report = health(&mut client).await;
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(modern.journal.count("POST", Some("server/discover")), 1);
}

#[tokio::test]
async fn hanging_and_refusing_servers_are_probed_in_parallel_within_one_probe_timeout() {
    let llm = MockOpenAi::start().await;
    let (hole_a, _a) = blackhole_url().await;
    let (hole_b, _b) = blackhole_url().await;
    let mut s = settings("jarvis", &llm.url);
    s.health.probe_timeout = Duration::from_secs(1);
    s.servers = vec![
        DownstreamSettings::new("hole_a", hole_a),
        DownstreamSettings::new("hole_b", hole_b),
        DownstreamSettings::new("refused", refused_url().await),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let started = Instant::now();
    let report = health(&mut client).await;
    let elapsed = started.elapsed();
    assert_eq!(report["message"], "Unreachable: hole_a, hole_b, refused");
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    // Serial probes would take at least two timeouts.
    assert!(elapsed < Duration::from_millis(1900), "{elapsed:?}");
}

#[tokio::test]
async fn probes_carry_configured_headers_and_never_the_inbound_bearer() {
    let llm = MockOpenAi::start().await;
    let plain = McpServer::start("plain").await;
    let forwarded = McpServer::start("forwarded").await;
    let mut s = settings("jarvis", &llm.url);
    let mut with_header = DownstreamSettings::new("plain", &plain.url);
    with_header.headers = vec![("Authorization".into(), Secret::new("Bearer configured"))];
    let mut opted = DownstreamSettings::new("forwarded", &forwarded.url);
    opted.forward_inbound_auth = true;
    s.servers = vec![with_header, opted];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("get_health", json!({}), None, Some("inbound-secret"))
        .await
        .unwrap();
    assert!(!reply.is_error());
    for record in plain.journal.records() {
        assert_eq!(record.authorization.as_deref(), Some("Bearer configured"));
    }
    assert!(!forwarded.journal.records().is_empty());
    for record in forwarded.journal.records() {
        assert_eq!(record.authorization, None, "{record:?}");
    }
}

#[tokio::test]
async fn get_health_emits_no_progress_even_with_a_token() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("get_health", json!({}), Some(json!("tok")), None)
        .await
        .unwrap();
    assert!(reply.progress().is_empty(), "{:?}", reply.messages);
}

#[tokio::test]
async fn the_provider_status_is_reused_within_its_ttl_and_reprobed_after() {
    let llm = MockOpenAi::start().await;
    let fresh = LlmStatusCell::with_status(ProviderStatus {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
        problem: Some("model 'mock-model' not found".into()),
    });
    let agent = start_agent_with(settings("jarvis", &llm.url), fresh).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    // Within the TTL the stored (failed) status is used: no listing request.
    let report = health(&mut client).await;
    assert_eq!(report["status"], "degraded");
    assert_eq!(*llm.state.list_calls.lock().unwrap(), 0);

    let stale = LlmStatusCell::with_status(ProviderStatus {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
        problem: Some("model 'mock-model' not found".into()),
    });
    let mut s = settings("jarvis", &llm.url);
    s.health.llm_ttl = Duration::ZERO;
    let agent = start_agent_with(s, stale).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let report = health(&mut client).await;
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(*llm.state.list_calls.lock().unwrap(), 1);
    assert!(llm.requests().is_empty());
}

#[tokio::test]
async fn an_agent_stops_answering_after_shutdown() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    assert_eq!(health(&mut client).await["status"], "ok");
    // After shutdown the listener closes; the report itself is covered by the unit test of
    // `summarize`. Here: the server stops answering.
    agent.shutdown.cancel();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let result = client.call("get_health", json!({}), None, None).await;
        if result.is_err() || result.is_ok_and(|r| r.status != 200) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "server still answering after shutdown"
        );
        tokio::task::yield_now().await;
    }
}
