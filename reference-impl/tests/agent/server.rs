//! The agent MCP server: tool definitions, Host check, images, history per scope, both eras.

use pallas_reference::settings::InstanceScope;
use serde_json::json;

use crate::fixtures::{MockOpenAi, RawClient, settings, start_agent};

#[tokio::test]
async fn tools_list_has_send_message_and_the_exact_get_health_definition() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let listed = client.request("tools/list", json!({}), None).await.unwrap();
    let tools = listed.result()["result"]["tools"]
        .as_array()
        .unwrap()
        .clone();
    let health = tools.iter().find(|t| t["name"] == "get_health").unwrap();
    assert_eq!(
        health["inputSchema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        health["description"],
        "Returns the health status of this agent and its downstream dependencies."
    );
    let send = tools.iter().find(|t| t["name"] == "send_message").unwrap();
    assert_eq!(send["inputSchema"]["required"], json!(["message"]));
    assert_eq!(send["inputSchema"]["properties"]["images"]["type"], "array");
    client.close().await;
}

#[tokio::test]
async fn send_message_returns_the_model_text() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client.send("hello there").await.unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    assert_eq!(reply.text(), "echo: hello there (images: 0)");
    let sent = llm.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["messages"][0]["role"], "system");
    assert_eq!(sent[0]["messages"][0]["content"], "You are a test agent.");
    assert!(
        agent
            .metrics
            .render()
            .contains("pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"} 1")
    );
}

#[tokio::test]
async fn a_foreign_host_is_refused_and_the_configured_host_is_allowed() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.allowed_hosts = vec!["pallas.example".into()];
    let agent = start_agent(s).await;
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let http = pallas_reference::net::builder().build().unwrap();
    let post = |host: &'static str| {
        http.post(&agent.url)
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    assert_eq!(post("evil.example").await.unwrap().status(), 403);
    assert_eq!(post("pallas.example:8201").await.unwrap().status(), 200);
}

#[tokio::test]
async fn images_reach_a_vision_model_as_image_parts() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("seer", &llm.url);
    s.capabilities.vision = true;
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": "what is this", "images": [{"data": "iVBORw0KGgo=", "mime_type": "image/png"}]}),
            None,
            None,
        )
        .await
        .unwrap();
    assert!(!reply.is_error());
    assert_eq!(reply.text(), "echo: what is this (images: 1)");
    let sent = llm.requests();
    let parts = &sent[0]["messages"][1]["content"];
    assert_eq!(
        parts[1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}

#[tokio::test]
async fn images_are_refused_clearly_without_vision_and_the_model_is_not_called() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("blind", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": "see", "images": [{"data": "iVBORw0KGgo=", "mime_type": "image/png"}]}),
            None,
            None,
        )
        .await
        .unwrap();
    assert!(reply.is_error());
    assert!(
        reply.text().contains("does not accept images"),
        "{}",
        reply.text()
    );
    assert!(llm.requests().is_empty());
}

#[tokio::test]
async fn malformed_send_message_arguments_get_an_is_error_result() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("send_message", json!({"msg": "x"}), None, None)
        .await
        .unwrap();
    assert!(reply.is_error());
    assert!(reply.text().contains("unknown argument 'msg'"));
    let unknown = client.call("nope", json!({}), None, None).await.unwrap();
    assert_eq!(unknown.result()["error"]["code"], -32602);
    assert!(llm.requests().is_empty());
}

async fn history_of(client: &mut RawClient, prompt: &str) -> Vec<serde_json::Value> {
    let got = client
        .request("prompts/get", json!({"name": prompt}), None)
        .await
        .unwrap();
    got.result()["result"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn shared_scope_keeps_one_history_for_every_session() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let mut first = RawClient::connect(&agent.url).await.unwrap();
    first.send("one").await.unwrap();
    let mut second = RawClient::connect(&agent.url).await.unwrap();
    second.send("two").await.unwrap();
    let history = history_of(&mut second, "jarvis_history").await;
    let texts: Vec<&str> = history
        .iter()
        .map(|m| m["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "one",
            "echo: one (images: 0)",
            "two",
            "echo: two (images: 0)"
        ]
    );
    assert_eq!(history[0]["role"], "user");
    assert_eq!(history[1]["role"], "assistant");
    // The second turn carried the first turn to the model.
    assert_eq!(llm.requests()[1]["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn connection_scope_keeps_one_history_per_session() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.instance_scope = InstanceScope::Connection;
    let agent = start_agent(s).await;
    let mut first = RawClient::connect(&agent.url).await.unwrap();
    first.send("one").await.unwrap();
    let mut second = RawClient::connect(&agent.url).await.unwrap();
    second.send("two").await.unwrap();
    assert_eq!(history_of(&mut first, "jarvis_history").await.len(), 2);
    let second_history = history_of(&mut second, "jarvis_history").await;
    assert_eq!(second_history[0]["content"]["text"], "two");
}

#[tokio::test]
async fn request_scope_keeps_no_history_and_registers_no_prompt() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("jarvis", &llm.url);
    s.instance_scope = InstanceScope::Request;
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    client.send("one").await.unwrap();
    client.send("two").await.unwrap();
    let prompts = client
        .request("prompts/list", json!({}), None)
        .await
        .unwrap();
    let listed = &prompts.result()["result"]["prompts"];
    assert!(
        listed.is_null() || listed.as_array().is_some_and(|p| p.is_empty()),
        "{listed}"
    );
    // Each turn is sent alone (system + user).
    assert_eq!(llm.requests()[1]["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_stateless_2026_request_is_answered_without_a_session() {
    let llm = MockOpenAi::start().await;
    let agent = start_agent(settings("jarvis", &llm.url)).await;
    let response = pallas_reference::net::builder()
        .build()
        .unwrap()
        .post(&agent.url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
        )
        .send()
        .await
        .unwrap();
    let status = response.status();
    let session = response.headers().get("mcp-session-id").cloned();
    let body = response.text().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(session.is_none());
    assert!(body.contains("get_health"), "{body}");
}
