//! `pallas-mocks record` with the reference as the bridge: a two-call tool loop recorded through
//! the proxy in front of HTTPS upstreams (the kit's mocks standing in for a real provider, OpenAI
//! or Anthropic, and a real MCP server), then replayed offline from the file it wrote: the same
//! answer, the same downstream calls, the same conversations sent to the model.

use std::collections::BTreeMap;
use std::time::Duration;

use pallas_mocks::record::{RecordConfig, Recorder, Upstream};
use pallas_mocks::{Dialect, Ecosystem, EcosystemSpec};
use pallas_reference::settings::{DownstreamSettings, ModelRef, Provider, Secret};

use crate::fixtures::{RawClient, settings, start_agent};

const KEY: &str = "sk-recorded-provider-key-42";

/// Runs the reference agent against `urls` (`llm`, `argos`) and returns its reply.
async fn ask(
    dialect: Dialect,
    urls: &BTreeMap<String, String>,
    message: &str,
) -> crate::fixtures::Exchange {
    let mut s = settings("research", &urls["llm"]);
    if dialect == Dialect::Anthropic {
        s.model = ModelRef {
            provider: Provider::Anthropic,
            model: "claude-test".into(),
        };
    }
    s.provider.api_key = Some(Secret::new(KEY));
    s.servers = vec![DownstreamSettings::new("argos", &urls["argos"])];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    client.send(message).await.unwrap()
}

/// (tool, arguments) of every `tools/call` an MCP mock received.
fn tool_calls(eco: &Ecosystem) -> Vec<(Option<String>, Option<serde_json::Value>)> {
    eco.mcp("argos")
        .unwrap()
        .journal()
        .into_iter()
        .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
        .map(|e| (e.tool, e.arguments))
        .collect()
}

/// The `messages` the model was sent, completion by completion.
fn completions(eco: &Ecosystem) -> Vec<serde_json::Value> {
    eco.llm("llm")
        .unwrap()
        .journal()
        .into_iter()
        .filter(|e| e.path.ends_with("/chat/completions") || e.path.ends_with("/v1/messages"))
        .map(|e| e.body.unwrap()["messages"].clone())
        .collect()
}

async fn record_then_replay(dialect: Dialect) {
    let name = match dialect {
        Dialect::Openai => "openai",
        Dialect::Anthropic => "anthropic",
    };
    let upstream: EcosystemSpec = pallas_mocks::parse_ecosystem(
        "upstream.yaml",
        &format!(
            "tls: true\nllms:\n  llm: {{dialect: {name}, api_key: {KEY}, models: [mock-model, claude-test]}}\n\
             mcp_servers:\n  argos:\n    tools:\n      - {{name: search_web, result: echo_args}}\n"
        ),
    )
    .unwrap();
    let upstream = Ecosystem::start(&upstream).await.unwrap();
    let up = upstream.urls();
    assert!(up["llm"].starts_with("https://") && up["argos"].starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recorded.yaml");
    let recorder = Recorder::start(RecordConfig {
        upstreams: BTreeMap::from([
            (
                "llm".to_owned(),
                Upstream::Llm {
                    dialect,
                    url: up["llm"].clone(),
                },
            ),
            (
                "argos".to_owned(),
                Upstream::Mcp {
                    url: up["argos"].clone(),
                },
            ),
        ]),
        out: out.clone(),
        ca_pems: vec![upstream.tls().unwrap().ca_pem().as_bytes().to_vec()],
        no_proxy: true,
    })
    .await
    .unwrap();

    let message = "CALL_TOOL argos__search_web {\"query\":\"pallas\"}";
    let live = ask(dialect, &recorder.urls(), message).await;
    assert!(!live.is_error(), "{:?}", live.messages);
    assert!(live.text().contains("pallas"), "{}", live.text());
    assert!(recorder.settled(Duration::from_secs(5)).await);
    recorder.finish().await.unwrap();
    let live_calls = tool_calls(&upstream);
    assert_eq!(live_calls.len(), 1, "{live_calls:?}");
    let live_completions = completions(&upstream);
    assert_eq!(
        live_completions.len(),
        2,
        "the model asked for a tool, then answered"
    );
    upstream.shutdown().await;

    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(KEY), "{text}");
    let replay = Ecosystem::start(&pallas_mocks::parse_ecosystem("recorded.yaml", &text).unwrap())
        .await
        .unwrap();
    let replayed = ask(dialect, &replay.urls(), message).await;
    assert_eq!(replayed.text(), live.text());
    assert_eq!(tool_calls(&replay), live_calls);
    // The model saw the same conversations, tool call ids included.
    assert_eq!(completions(&replay), live_completions);
    // The replay answers from the recording, not from the directive the upstream mock read: a
    // message never recorded gets no answer from the replayed model.
    let other = ask(
        dialect,
        &replay.urls(),
        "CALL_TOOL argos__search_web {\"query\":\"other\"}",
    )
    .await;
    assert!(other.is_error(), "{:?}", other.messages);
    assert_eq!(tool_calls(&replay), live_calls, "no call for `other`");
}

#[tokio::test]
async fn an_openai_tool_loop_recorded_through_the_proxy_replays_offline_with_the_same_calls() {
    record_then_replay(Dialect::Openai).await;
}

#[tokio::test]
async fn an_anthropic_tool_loop_recorded_through_the_proxy_replays_offline_with_the_same_calls() {
    record_then_replay(Dialect::Anthropic).await;
}
