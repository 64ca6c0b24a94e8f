//! The agent loop: downstream tools, concurrency, failures, provider errors, iteration cap.

use std::time::Duration;

use pallas_reference::settings::DownstreamSettings;
use serde_json::json;

use crate::fixtures::{
    LlmFault, McpServer, MockOpenAi, RawClient, refused_url, settings, start_agent,
};

#[tokio::test]
async fn the_model_calls_downstream_tools_named_server_double_underscore_tool() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .send("CALL_TOOL argos__echo {\"q\":\"x\"}")
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    assert_eq!(reply.text(), "tool results: {\"q\":\"x\"}");
    let calls = argos.journal.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].tool.as_deref(), Some("echo"));
    assert_eq!(calls[0].arguments, Some(json!({"q": "x"})));
    let first = &llm.requests()[0];
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"argos__echo") && offered.contains(&"argos__whoami"),
        "{offered:?}"
    );
    let metrics = agent.metrics.render();
    assert!(metrics.contains("pallas_tool_calls_total{agent=\"jarvis\",operation=\"tool\",outcome=\"ok\",server=\"argos\"} 1"), "{metrics}");
    assert!(
        metrics.contains("pallas_llm_turns_total{agent=\"jarvis\",model=\"mock-model\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn tool_calls_of_one_turn_run_concurrently() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    // Each rendezvous call answers "met" only if the other is in flight at the same time.
    let reply = client
        .send("CALL_TOOL argos__rendezvous {}\nCALL_TOOL argos__rendezvous {}")
        .await
        .unwrap();
    assert_eq!(reply.text(), "tool results: met | met");
}

#[tokio::test]
async fn a_failing_or_unknown_tool_becomes_an_error_result_for_the_model() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![
        DownstreamSettings::new("argos", &argos.url),
        DownstreamSettings::new("dead", refused_url().await),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .send("CALL_TOOL argos__fail {}\nCALL_TOOL dead__anything {}")
        .await
        .unwrap();
    assert!(!reply.is_error());
    assert_eq!(
        reply.text(),
        "tool results: it failed | unknown tool 'dead__anything'"
    );
    let second = &llm.requests()[1];
    let tool_messages: Vec<_> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_messages.len(), 2);
    assert!(
        agent
            .metrics
            .render()
            .contains("outcome=\"error\",server=\"argos\"} 1")
    );
}

#[tokio::test]
async fn provider_failures_return_is_error_and_the_server_keeps_serving() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    for status in [401, 404, 500] {
        llm.set_fault(LlmFault {
            status: Some(status),
            delay: None,
        });
        let reply = client.send("hi").await.unwrap();
        assert!(reply.is_error());
        assert!(
            reply.text().contains(&format!("HTTP {status}")),
            "{}",
            reply.text()
        );
        assert!(reply.text().contains("mock failure"), "{}", reply.text());
    }
    llm.set_fault(LlmFault::default());
    let reply = client.send("again").await.unwrap();
    assert!(!reply.is_error());
    assert!(
        agent
            .metrics
            .render()
            .contains("pallas_send_message_total{agent=\"jarvis\",outcome=\"error\"} 3")
    );
}

#[tokio::test]
async fn a_provider_timeout_returns_a_clear_is_error_result() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.provider.timeout = Duration::from_millis(200);
    let agent = start_agent(s).await;
    llm.set_fault(LlmFault {
        status: None,
        delay: Some(Duration::from_secs(3)),
    });
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client.send("hi").await.unwrap();
    assert!(reply.is_error());
    assert!(
        reply.text().contains("no answer within 200ms"),
        "{}",
        reply.text()
    );
}

#[tokio::test]
async fn the_iteration_cap_stops_a_model_that_keeps_calling_tools() {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    s.request_params.max_iterations = 1;
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client.send("CALL_TOOL argos__echo {}").await.unwrap();
    assert!(reply.is_error());
    assert!(
        reply.text().contains("after 1 model turns"),
        "{}",
        reply.text()
    );
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn request_params_reach_an_openai_compatible_server() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.request_params.temperature = Some(0.6);
    s.request_params.top_p = Some(0.9);
    s.request_params.top_k = Some(20);
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    client.send("hi").await.unwrap();
    let sent = &llm.requests()[0];
    assert_eq!(sent["temperature"], json!(0.6));
    assert_eq!(sent["top_p"], json!(0.9));
    assert_eq!(sent["top_k"], json!(20));
}

#[tokio::test]
async fn an_agent_can_use_another_agent_as_a_downstream_server() {
    let llm = MockOpenAi::start().await;
    let research = start_agent(settings("research", &llm.url)).await;
    let mut s = settings("harper", &llm.url);
    s.servers = vec![DownstreamSettings::new("research", &research.url)];
    let harper = start_agent(s).await;
    let mut client = RawClient::connect(&harper.url).await.unwrap();
    let reply = client
        .send("CALL_TOOL research__send_message {\"message\":\"dig\"}")
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    assert_eq!(reply.text(), "tool results: echo: dig (images: 0)");
}

#[tokio::test]
async fn a_downstream_speaking_only_2026_07_28_serves_its_tools() {
    let llm = MockOpenAi::start().await;
    let modern = McpServer::start_with("modern", false).await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("modern", &modern.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .send("CALL_TOOL modern__echo {\"n\":1}")
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    assert_eq!(reply.text(), "tool results: {\"n\":1}");
    let calls = modern.journal.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].session, None);
}
