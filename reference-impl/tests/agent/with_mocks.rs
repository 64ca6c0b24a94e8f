//! The agent side against `pallas-mocks`: the Anthropic and OpenAI mock providers (loop, usage
//! tokens, preflight), mock MCP servers of both wire eras and with faults (health, session
//! teardown), and bearer forwarding seen in the mock journals.

use std::time::Duration;

use pallas_mocks::{Ecosystem, EcosystemSpec};
use pallas_reference::llm::preflight;
use pallas_reference::settings::{DownstreamSettings, ModelRef, Provider, Secret};
use serde_json::{Value, json};

use crate::fixtures::{RawClient, settings, start_agent};

async fn ecosystem(spec: Value) -> Ecosystem {
    let spec: EcosystemSpec = serde_json::from_value(spec).unwrap();
    Ecosystem::start(&spec).await.unwrap()
}

#[tokio::test]
async fn an_anthropic_agent_runs_the_tool_loop_against_the_mocks_and_counts_usage_tokens() {
    let eco = ecosystem(json!({
        "llms": {"anthropic": {"dialect": "anthropic", "api_key": "ak", "models": ["claude-test"],
                               "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_tokens": 4, "cache_write_tokens": 2}}},
        "mcp_servers": {"argos": {"tools": [{"name": "search_web", "result": {"text": "found it"}}]}}
    }))
    .await;
    let urls = eco.urls();
    let mut s = settings("research", &urls["anthropic"]);
    s.model = ModelRef {
        provider: Provider::Anthropic,
        model: "claude-test".into(),
    };
    s.provider.api_key = Some(Secret::new("ak"));
    s.servers = vec![DownstreamSettings::new("argos", &urls["argos"])];
    let agent = start_agent(s.clone()).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .send("CALL_TOOL argos__search_web {\"q\":\"x\"}")
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    assert!(reply.text().contains("found it"), "{}", reply.text());
    let llm = eco.llm("anthropic").unwrap().journal();
    let turns: Vec<_> = llm
        .iter()
        .filter(|e| e.path.starts_with("/v1/messages"))
        .collect();
    assert_eq!(turns.len(), 2);
    assert!(
        turns
            .iter()
            .all(|e| e.headers.get("x-api-key").map(String::as_str) == Some("ak"))
    );
    let calls: Vec<_> = eco
        .mcp("argos")
        .unwrap()
        .journal()
        .into_iter()
        .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
        .collect();
    assert_eq!(calls[0].tool.as_deref(), Some("search_web"));
    assert_eq!(calls[0].arguments, Some(json!({"q": "x"})));
    let metrics = agent.metrics.render();
    let cache_read = metrics
        .lines()
        .find(|l| l.starts_with("pallas_llm_tokens_total") && l.contains("kind=\"cache_read\""))
        .unwrap_or_default();
    assert!(cache_read.ends_with(" 8"), "{metrics}");

    let http = pallas_reference::net::builder().build().unwrap();
    assert!(preflight(&s.provider, &s.model, &http).await.is_ok());
    let missing = ModelRef {
        provider: Provider::Anthropic,
        model: "nope".into(),
    };
    let status = preflight(&s.provider, &missing, &http).await;
    assert_eq!(
        status.describe().as_deref(),
        Some("anthropic: model 'nope' not found")
    );
}

#[tokio::test]
async fn openai_preflight_against_the_mock_finds_listed_models_and_reports_missing_ones() {
    let eco =
        ecosystem(json!({"llms": {"openai": {"dialect": "openai", "models": ["mock-model"]}}}))
            .await;
    let provider = pallas_reference::settings::ProviderSettings::new(&eco.urls()["openai"]);
    let http = pallas_reference::net::builder().build().unwrap();
    let ok = ModelRef {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
    };
    assert!(preflight(&provider, &ok, &http).await.is_ok());
    let bad = ModelRef {
        provider: Provider::OpenAi,
        model: "bad-model".into(),
    };
    let status = preflight(&provider, &bad, &http).await;
    assert_eq!(
        status.describe().as_deref(),
        Some("openai: model 'bad-model' not found")
    );
}

#[tokio::test]
async fn health_against_mock_eras_and_faults_names_only_the_dead_servers_and_leaves_no_session() {
    let eco = ecosystem(json!({
        "llms": {"openai": {"dialect": "openai"}},
        "mcp_servers": {
            "argos": {},
            "modern": {"era": "2026-07-28"},
            "down": {"reachability": "down"},
            "hole": {"reachability": "blackhole"},
            "broken": {"http_status": 500}
        }
    }))
    .await;
    let urls = eco.urls();
    let mut s = settings("jarvis", &urls["openai"]);
    s.health.probe_timeout = Duration::from_secs(1);
    s.servers = ["argos", "modern", "down", "hole", "broken"]
        .iter()
        .map(|name| DownstreamSettings::new(*name, &urls[*name]))
        .collect();
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("get_health", json!({}), None, None)
        .await
        .unwrap();
    let report: Value = serde_json::from_str(&reply.text()).unwrap();
    assert_eq!(report["status"], "degraded");
    assert_eq!(report["message"], "Unreachable: down, hole, broken");
    let argos = eco.mcp("argos").unwrap();
    let stats = argos.sessions();
    assert_eq!(
        (stats.opened, stats.deleted, stats.open_now),
        (1, 1, 0),
        "{stats:?}"
    );
    assert!(
        eco.llm("openai")
            .unwrap()
            .journal()
            .iter()
            .all(|e| !e.path.contains("chat"))
    );
}

#[tokio::test]
async fn the_mock_journals_show_the_bearer_only_on_opted_in_servers() {
    let eco = ecosystem(json!({
        "llms": {"openai": {"dialect": "openai"}},
        "mcp_servers": {
            "mnemosyne": {"tools": [{"name": "whoami", "result": "echo_headers"}]},
            "weather": {"tools": [{"name": "whoami", "result": "echo_headers"}]}
        }
    }))
    .await;
    let urls = eco.urls();
    let mut s = settings("harper", &urls["openai"]);
    let mut m = DownstreamSettings::new("mnemosyne", &urls["mnemosyne"]);
    m.forward_inbound_auth = true;
    s.servers = vec![m, DownstreamSettings::new("weather", &urls["weather"])];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    for bearer in [Some("tok-1"), None, Some("tok-3")] {
        let reply = client
            .call(
                "send_message",
                json!({"message": "CALL_TOOL mnemosyne__whoami {}\nCALL_TOOL weather__whoami {}"}),
                None,
                bearer,
            )
            .await
            .unwrap();
        assert!(!reply.is_error(), "{:?}", reply.messages);
    }
    let calls = |name: &str| -> Vec<Option<String>> {
        eco.mcp(name)
            .unwrap()
            .journal()
            .into_iter()
            .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
            .map(|e| e.authorization().map(str::to_owned))
            .collect()
    };
    assert_eq!(
        calls("mnemosyne"),
        [
            Some("Bearer tok-1".to_owned()),
            None,
            Some("Bearer tok-3".to_owned())
        ]
    );
    assert_eq!(calls("weather"), [None, None, None]);
}

#[tokio::test]
async fn a_server_that_demands_the_bearer_gets_a_private_session_per_request() {
    let eco = ecosystem(json!({
        "llms": {"openai": {"dialect": "openai"}},
        "mcp_servers": {
            "mnemosyne": {"require_bearer": "tok-A", "tools": [{"name": "whoami", "result": {"text": "hello"}}]},
            "weather": {"tools": [{"name": "whoami", "result": "echo_headers"}]}
        }
    }))
    .await;
    let urls = eco.urls();
    let mut s = settings("harper", &urls["openai"]);
    let mut m = DownstreamSettings::new("mnemosyne", &urls["mnemosyne"]);
    m.forward_inbound_auth = true;
    s.servers = vec![m, DownstreamSettings::new("weather", &urls["weather"])];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let message =
        json!({"message": "CALL_TOOL mnemosyne__whoami {}\nCALL_TOOL weather__whoami {}"});
    let reply = client
        .call("send_message", message.clone(), None, Some("tok-A"))
        .await
        .unwrap();
    assert!(
        reply.text().starts_with("Tool results:\nhello"),
        "{}",
        reply.text()
    );
    let mnemosyne = eco.mcp("mnemosyne").unwrap();
    // Every request of the private session carried this request's bearer; it was closed.
    let with_bearer: Vec<_> = mnemosyne
        .journal()
        .into_iter()
        .filter(|e| e.authorization() == Some("Bearer tok-A"))
        .collect();
    assert!(
        with_bearer
            .iter()
            .any(|e| e.jsonrpc_method.as_deref() == Some("initialize"))
    );
    assert!(
        with_bearer
            .iter()
            .any(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
    );
    assert_eq!(
        mnemosyne.sessions().open_now,
        0,
        "{:?}",
        mnemosyne.sessions()
    );
    // Without a bearer the server offers nothing; the other server still works.
    let reply = client
        .call("send_message", message, None, None)
        .await
        .unwrap();
    assert!(!reply.is_error());
    assert!(
        reply.text().contains("unknown tool 'mnemosyne__whoami'"),
        "{}",
        reply.text()
    );
    let weather_auth: Vec<_> = eco
        .mcp("weather")
        .unwrap()
        .journal()
        .into_iter()
        .filter_map(|e| e.authorization().map(str::to_owned))
        .collect();
    assert!(weather_auth.is_empty(), "{weather_auth:?}");
}
