//! `pallas-mocks record`: the kit's own mocks, served over HTTPS, stand in for the real
//! upstreams; a session recorded through the proxy replays with the same answers (streams as
//! streams, tool loops call by call), and no secret reaches the file.

use std::collections::BTreeMap;
use std::time::Duration;

use pallas_mocks::record::{RecordConfig, Recorder, Upstream};
use pallas_mocks::{Dialect, Ecosystem, EcosystemSpec};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::support::{client, sse_data};

const OPENAI_KEY: &str = "sk-live-openai-0123456789";
const ANTHROPIC_KEY: &str = "sk-ant-live-0123456789";
const MCP_BEARER: &str = "mcp-bearer-secret-5678";

fn upstream_spec() -> EcosystemSpec {
    let yaml = format!(
        r#"
tls: true
llms:
  openai: {{dialect: openai, api_key: {OPENAI_KEY}, models: [gpt-test]}}
  anthropic: {{dialect: anthropic, api_key: {ANTHROPIC_KEY}, models: [claude-test]}}
mcp_servers:
  argos:
    require_bearer: {MCP_BEARER}
    server_name: Argos
    tools:
      - {{name: search, description: Search the web, input_schema: {{type: object}}, result: echo_args}}
      - {{name: whoami, result: echo_headers}}
      - {{name: fail, result: {{jsonrpc_error: {{code: -32001, message: backend down}}}}}}
"#
    );
    pallas_mocks::parse_ecosystem("upstream.yaml", &yaml).unwrap()
}

/// The upstreams over HTTPS and a recorder in front of them (trusting their CA).
async fn record_setup(out: &std::path::Path) -> (Ecosystem, Recorder) {
    let eco = Ecosystem::start(&upstream_spec()).await.unwrap();
    let urls = eco.urls();
    assert!(urls["openai"].starts_with("https://"), "{urls:?}");
    let mut upstreams = BTreeMap::new();
    for (name, dialect) in [
        ("openai", Dialect::Openai),
        ("anthropic", Dialect::Anthropic),
    ] {
        upstreams.insert(
            name.to_owned(),
            Upstream::Llm {
                dialect,
                url: urls[name].clone(),
            },
        );
    }
    upstreams.insert(
        "argos".to_owned(),
        Upstream::Mcp {
            url: urls["argos"].clone(),
        },
    );
    let config = RecordConfig {
        upstreams,
        out: out.to_owned(),
        ca_pems: vec![eco.tls().unwrap().ca_pem().as_bytes().to_vec()],
        no_proxy: true,
    };
    let recorder = Recorder::start(config).await.unwrap();
    (eco, recorder)
}

const CALL: &str = "CALL_TOOL argos__search {\"q\":\"pallas\"}";

/// An OpenAI conversation: the user message, then (when `result` is given) the model's tool call
/// and that tool result.
fn openai_body(result: Option<&str>, stream: bool) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "be brief"}),
        json!({"role": "user", "content": CALL}),
    ];
    if let Some(r) = result {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
            "type": "function", "function": {"name": "argos__search", "arguments": "{\"q\":\"pallas\"}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": "c1", "content": r}));
    }
    json!({"model": "gpt-test", "messages": messages, "stream": stream,
           "tools": [{"type": "function", "function": {"name": "argos__search"}}]})
}

/// What a completion answered, without its random ids: (streamed, text, tool calls).
async fn completion(resp: reqwest::Response, dialect: Dialect) -> Value {
    let status = resp.status().as_u16();
    let streamed = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let body = resp.text().await.unwrap();
    if status != 200 {
        return json!({"status": status});
    }
    let (mut text, mut calls) = (String::new(), Vec::new());
    match (dialect, streamed) {
        (Dialect::Openai, false) => {
            let v: Value = serde_json::from_str(&body).unwrap();
            let m = &v["choices"][0]["message"];
            text = m["content"].as_str().unwrap_or("").to_owned();
            calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        }
        (Dialect::Openai, true) => {
            for d in sse_data(&body) {
                let delta = &d["choices"][0]["delta"];
                text.push_str(delta["content"].as_str().unwrap_or(""));
                calls.extend(delta["tool_calls"].as_array().cloned().unwrap_or_default());
            }
        }
        (Dialect::Anthropic, false) => {
            let v: Value = serde_json::from_str(&body).unwrap();
            for b in v["content"].as_array().unwrap() {
                text.push_str(b["text"].as_str().unwrap_or(""));
                if b["type"] == "tool_use" {
                    calls.push(b.clone());
                }
            }
        }
        (Dialect::Anthropic, true) => {
            for d in sse_data(&body) {
                text.push_str(d["delta"]["text"].as_str().unwrap_or(""));
                if d["content_block"]["type"] == "tool_use" {
                    calls.push(d["content_block"].clone());
                }
            }
        }
    }
    json!({"streamed": streamed, "text": text, "calls": calls})
}

async fn openai(urls: &BTreeMap<String, String>, result: Option<&str>, stream: bool) -> Value {
    let r = client()
        .post(format!("{}/chat/completions", urls["openai"]))
        .bearer_auth(OPENAI_KEY)
        .json(&openai_body(result, stream))
        .send()
        .await
        .unwrap();
    completion(r, Dialect::Openai).await
}

async fn anthropic(urls: &BTreeMap<String, String>, messages: Value, stream: bool) -> Value {
    let r = client()
        .post(format!("{}/v1/messages", urls["anthropic"]))
        .header("x-api-key", ANTHROPIC_KEY)
        .header("anthropic-version", "2023-06-01")
        .json(
            &json!({"model": "claude-test", "max_tokens": 100, "stream": stream,
                      "messages": messages}),
        )
        .send()
        .await
        .unwrap();
    completion(r, Dialect::Anthropic).await
}

/// The session: a two-call OpenAI tool loop (the second call twice, with different tool
/// results), Anthropic streaming and a tool round, and MCP listing and calls with a bearer.
/// Returns what was answered, and the text `whoami` returned.
async fn session(urls: &BTreeMap<String, String>) -> (Vec<Value>, String) {
    let mut seen = vec![
        openai(urls, None, false).await,
        openai(urls, Some("result A"), true).await,
        openai(urls, Some("result B"), true).await,
        anthropic(urls, json!([{"role": "user", "content": "hello there"}]), true).await,
        anthropic(
            urls,
            json!([{"role": "user", "content": "look"},
                   {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "argos__search", "input": {}}]},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "R"}]}]),
            false,
        )
        .await,
    ];
    let config = StreamableHttpClientTransportConfig::with_uri(urls["argos"].clone())
        .auth_header(MCP_BEARER);
    let mcp = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    seen.push(json!(
        mcp.peer_info().unwrap().server_info.as_ref().unwrap().name
    ));
    let tools = mcp.list_all_tools().await.unwrap();
    seen.push(serde_json::to_value(&tools).unwrap());
    let args = json!({"q": "pallas"}).as_object().unwrap().clone();
    let r = mcp
        .call_tool(CallToolRequestParams::new("search").with_arguments(args))
        .await
        .unwrap();
    seen.push(serde_json::to_value(&r).unwrap());
    let err = mcp
        .call_tool(CallToolRequestParams::new("fail"))
        .await
        .unwrap_err();
    seen.push(json!(err.to_string()));
    let whoami = mcp
        .call_tool(CallToolRequestParams::new("whoami"))
        .await
        .unwrap();
    let whoami = serde_json::to_value(&whoami.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    mcp.cancel().await.unwrap();
    (seen, whoami)
}

#[tokio::test]
async fn a_session_recorded_over_https_replays_with_the_same_answers_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recorded.yaml");
    let (upstream, recorder) = record_setup(&out).await;
    let (live, live_whoami) = session(&recorder.urls()).await;
    assert!(
        live_whoami.contains(MCP_BEARER),
        "the live call reached the real server"
    );
    assert!(recorder.settled(Duration::from_secs(5)).await);
    assert_eq!(recorder.counts(), (5, 3));
    // Flushed as it goes: the file already holds everything before the recorder stops.
    let text = std::fs::read_to_string(&out).unwrap();
    let spec = pallas_mocks::parse_ecosystem("recorded.yaml", &text).unwrap();
    assert_eq!(spec.llms["openai"].script.len(), 3, "{text}");
    recorder.finish().await.unwrap();
    upstream.shutdown().await;

    let text = std::fs::read_to_string(&out).unwrap();
    let spec = pallas_mocks::parse_ecosystem("recorded.yaml", &text).unwrap();
    let replay = Ecosystem::start(&spec).await.unwrap();
    let (replayed, replay_whoami) = session(&replay.urls()).await;
    assert_eq!(replayed, live);
    assert_eq!(live[1]["streamed"], true);
    assert_eq!(live[3]["streamed"], true);
    assert_eq!(live[0]["calls"][0]["function"]["name"], "argos__search");
    assert!(live[1]["text"].as_str().unwrap().contains("result A"));
    assert!(live[2]["text"].as_str().unwrap().contains("result B"));
    assert!(!replay_whoami.contains(MCP_BEARER));
    assert!(replay_whoami.contains(pallas_mocks::record::REDACTED));
    // A call never recorded is refused, not answered with another call's answer.
    let unseen = openai(&replay.urls(), Some("result C"), false).await;
    assert_eq!(unseen, json!({"status": 500}));
}

#[tokio::test]
async fn same_user_message_with_different_tool_results_replays_differently() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("collide.yaml");
    let (_upstream, recorder) = record_setup(&out).await;
    let urls = recorder.urls();
    let b = openai(&urls, Some("result B"), false).await;
    let a = openai(&urls, Some("result A"), false).await;
    let first = openai(&urls, None, false).await;
    recorder.finish().await.unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let replay = Ecosystem::start(&pallas_mocks::parse_ecosystem("c.yaml", &text).unwrap())
        .await
        .unwrap();
    let urls = replay.urls();
    // Asked in another order than recorded, each call still gets its own answer.
    assert_eq!(openai(&urls, None, false).await, first);
    assert_eq!(openai(&urls, Some("result A"), false).await, a);
    assert_eq!(openai(&urls, Some("result B"), false).await, b);
    assert_ne!(a, b);
    assert_ne!(a["text"], first["text"]);
}

#[tokio::test]
async fn no_key_or_bearer_reaches_the_recorded_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("secret.yaml");
    let (_upstream, recorder) = record_setup(&out).await;
    let (_, whoami) = session(&recorder.urls()).await;
    assert!(
        whoami.contains(MCP_BEARER),
        "the bearer was in a recorded answer"
    );
    recorder.finish().await.unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    for secret in [OPENAI_KEY, ANTHROPIC_KEY, MCP_BEARER] {
        assert!(!text.contains(secret), "{secret} in\n{text}");
    }
    assert!(text.contains(pallas_mocks::record::REDACTED), "{text}");
}
