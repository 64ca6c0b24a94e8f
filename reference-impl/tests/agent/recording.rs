//! `pallas-mocks record` with the reference as the bridge: a two-call tool loop recorded through
//! the proxy in front of HTTPS upstreams (the kit's mocks standing in for a real provider and a
//! real MCP server), then replayed offline from the file it wrote: the same answer, and the same
//! downstream calls.

use std::collections::BTreeMap;
use std::time::Duration;

use pallas_mocks::record::{RecordConfig, Recorder, Upstream};
use pallas_mocks::{Dialect, Ecosystem, EcosystemSpec};
use pallas_reference::settings::{DownstreamSettings, Secret};

use crate::fixtures::{RawClient, settings, start_agent};

const KEY: &str = "sk-recorded-provider-key-42";

/// Runs the reference agent against `urls` (`openai`, `argos`) and returns its answer.
async fn ask(urls: &BTreeMap<String, String>, message: &str) -> String {
    let mut s = settings("research", &urls["openai"]);
    s.provider.api_key = Some(Secret::new(KEY));
    s.servers = vec![DownstreamSettings::new("argos", &urls["argos"])];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client.send(message).await.unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    reply.text()
}

/// (tool, arguments) of every `tools/call` an MCP mock received.
fn tool_calls(eco: &Ecosystem, name: &str) -> Vec<(Option<String>, Option<serde_json::Value>)> {
    eco.mcp(name)
        .unwrap()
        .journal()
        .into_iter()
        .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
        .map(|e| (e.tool, e.arguments))
        .collect()
}

/// The `messages` the model was sent, completion by completion.
fn completions(eco: &Ecosystem) -> Vec<serde_json::Value> {
    eco.llm("openai")
        .unwrap()
        .journal()
        .into_iter()
        .filter(|e| e.path.ends_with("/chat/completions"))
        .map(|e| e.body.unwrap()["messages"].clone())
        .collect()
}

#[tokio::test]
async fn a_tool_loop_recorded_through_the_proxy_replays_offline_with_the_same_calls() {
    let upstream: EcosystemSpec = pallas_mocks::parse_ecosystem(
        "upstream.yaml",
        &format!(
            "tls: true\nllms:\n  openai: {{dialect: openai, api_key: {KEY}}}\n\
             mcp_servers:\n  argos:\n    tools:\n      - {{name: search_web, result: echo_args}}\n"
        ),
    )
    .unwrap();
    let upstream = Ecosystem::start(&upstream).await.unwrap();
    let up = upstream.urls();
    assert!(up["openai"].starts_with("https://") && up["argos"].starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recorded.yaml");
    let recorder = Recorder::start(RecordConfig {
        upstreams: BTreeMap::from([
            (
                "openai".to_owned(),
                Upstream::Llm {
                    dialect: Dialect::Openai,
                    url: up["openai"].clone(),
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
    let live = ask(&recorder.urls(), message).await;
    assert!(live.contains("pallas"), "{live}");
    assert!(recorder.settled(Duration::from_secs(5)).await);
    recorder.finish().await.unwrap();
    let live_calls = tool_calls(&upstream, "argos");
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
    let replayed = ask(&replay.urls(), message).await;
    assert_eq!(replayed, live);
    assert_eq!(tool_calls(&replay, "argos"), live_calls);
    // The model saw the same conversations, tool call ids included.
    assert_eq!(completions(&replay), live_completions);
    // The replay answers from the recording, not from the directive the upstream mock read:
    // a message never recorded gets no answer from the replayed model.
    let mut s = settings("research", &replay.urls()["openai"]);
    s.servers = vec![DownstreamSettings::new("argos", &replay.urls()["argos"])];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let other = client
        .send("CALL_TOOL argos__search_web {\"query\":\"other\"}")
        .await
        .unwrap();
    assert!(other.is_error(), "{:?}", other.messages);
    assert!(!other.text().contains("\"other\""), "{}", other.text());
}
