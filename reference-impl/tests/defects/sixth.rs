//! The sixth set of contract mutants (`px-…`): each test observes the same exchange with no
//! defect and with the defect, the rule holding in the first and broken in the second.
//!
//! One idea: the proof that each defect of one set of misreadings does what its row says, one
//! test per defect over the same few fixtures (a mock model, mock downstreams, a started agent
//! or a whole Pallas); where the exchange needs more machinery, the changed function itself.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::routing::{get, post};
use chrono::TimeZone;
use pallas_reference::config::{self, Deployment, LoadOptions};
use pallas_reference::llm::{self, ChatMessage, Part, TurnRequest};
use pallas_reference::logging::{self, LogSettings, RotatingFile};
use pallas_reference::metrics::Metrics;
use pallas_reference::progress::{Progress, ProgressSink};
use pallas_reference::registry::{self, OFFICIAL_META_KEY, PublishedAgent, RegistryState};
use pallas_reference::runtime::{self, AgentFactory, RunningPallas, StartOptions};
use pallas_reference::settings::{
    DownstreamSettings, ModelCapabilities, ModelRef, Provider, ProviderSettings, RequestParams,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    NumberOrString, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Defects;
use crate::fixtures::{McpServer, MockOpenAi, RawClient, serve, settings, start_agent};

// ---------------------------------------------------------------- projects on disk

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project whose `agents.yaml` is `agents` (each agent's card `agents/<key>.md` written with no
/// servers) and whose `fastagent.config.yaml` is `fastagent`.
fn project(agents: &str, keys: &[&str], fastagent: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "agents.yaml", agents);
    write(dir.path(), "fastagent.config.yaml", fastagent);
    for key in keys {
        write(
            dir.path(),
            &format!("agents/{key}.md"),
            &format!("---\nname: {key}\nservers: []\n---\nDo {key} things.\n"),
        );
    }
    dir
}

/// `agents.yaml` of `my-project` with one agent `research` on port 0; `extra` adds top-level keys.
fn one_agent(extra: &str) -> String {
    format!(
        "name: my-project\nnamespace: com.example.project\n{extra}agents:\n  research:\n    module: agents.research\n    port: 0\n    description: Research agent\n"
    )
}

fn load(dir: &Path, env: &[(&str, &str)]) -> Deployment {
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    config::load(
        dir,
        &LoadOptions {
            agents_config: None,
            env: Some(env),
        },
    )
    .unwrap()
}

fn published(dir: &Path) -> PublishedAgent {
    let d = load(dir, &[]);
    PublishedAgent::new(
        &d.agents[0],
        &d.namespace,
        &d.version,
        &d.host,
        8250,
        d.publish_capabilities,
    )
}

/// The registry entry (`server`) of the first agent of the project in `dir`.
fn registry_entry(dir: &Path) -> Value {
    published(dir).to_json()["server"].clone()
}

const MY_MODEL_VISION_ONLY: &str = "default_model: openai.my-model-name\nmodel_capabilities:\n  vision: true\nopenai:\n  base_url: http://127.0.0.1:9/v1\n";

// ---------------------------------------------------------------- configuration and registry

#[tokio::test]
async fn px_version_default_package_version_publishes_the_runtime_version() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        MY_MODEL_VISION_ONLY,
    );
    assert_eq!(registry_entry(dir.path())["version"], "1.0.0");
    d.set(&["px-version-default-package-version"]);
    assert_eq!(
        registry_entry(dir.path())["version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_ne!(env!("CARGO_PKG_VERSION"), "1.0.0");
}

#[tokio::test]
async fn px_registry_port_default_from_contract_binds_23030() {
    let d = Defects::take().await;
    let dir = project(&one_agent(""), &["research"], MY_MODEL_VISION_ONLY);
    assert_eq!(load(dir.path(), &[]).registry_port, 24200);
    d.set(&["px-registry-port-default-from-contract"]);
    assert_eq!(load(dir.path(), &[]).registry_port, 23030);
}

#[tokio::test]
async fn px_capabilities_model_keeps_provider_prefix_publishes_the_raw_model() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        MY_MODEL_VISION_ONLY,
    );
    assert_eq!(
        registry_entry(dir.path())["capabilities"]["model"],
        "my-model-name"
    );
    d.set(&["px-capabilities-model-keeps-provider-prefix"]);
    let capabilities = registry_entry(dir.path())["capabilities"].clone();
    assert_eq!(capabilities["model"], "openai.my-model-name");
    assert_eq!(capabilities["vision"], true);
}

#[tokio::test]
async fn px_context_window_default_128000_publishes_a_decimal_128k() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        MY_MODEL_VISION_ONLY,
    );
    assert_eq!(
        registry_entry(dir.path())["capabilities"]["context_window"],
        131_072
    );
    d.set(&["px-context-window-default-128000"]);
    assert_eq!(
        registry_entry(dir.path())["capabilities"]["context_window"],
        128_000
    );
    assert_eq!(
        load(dir.path(), &[]).agents[0]
            .settings
            .capabilities
            .context_window,
        128_000
    );
}

#[tokio::test]
async fn px_meta_updatedat_is_request_time_changes_with_every_get() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        MY_MODEL_VISION_ONLY,
    );
    let mut agent = published(dir.path());
    agent.updated_at = chrono::Utc.with_ymd_and_hms(2020, 1, 2, 3, 4, 5).unwrap();
    let updated_at =
        |agent: &PublishedAgent| agent.to_json()["_meta"][OFFICIAL_META_KEY]["updatedAt"].clone();
    assert_eq!(updated_at(&agent), "2020-01-02T03:04:05Z");
    assert_eq!(updated_at(&agent), updated_at(&agent));
    d.set(&["px-meta-updatedat-is-request-time"]);
    let now = updated_at(&agent);
    assert_ne!(now, "2020-01-02T03:04:05Z");
    assert!(
        now.as_str()
            .unwrap()
            .starts_with(&chrono::Utc::now().format("%Y-").to_string())
    );
}

#[tokio::test]
async fn px_dotenv_loaded_only_in_preflight_ignores_agents_config_from_dotenv() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        MY_MODEL_VISION_ONLY,
    );
    write(
        dir.path(),
        "other.yaml",
        &one_agent("registry_port: 0\n").replace("my-project", "other-project"),
    );
    write(dir.path(), ".env", "PALLAS_AGENTS_CONFIG=other.yaml\n");
    let d0 = load(dir.path(), &[]);
    assert!(d0.agents_file.ends_with("other.yaml"));
    assert_eq!(d0.name, "other-project");
    d.set(&["px-dotenv-loaded-only-in-preflight"]);
    let d1 = load(dir.path(), &[]);
    assert!(d1.agents_file.ends_with("agents.yaml"));
    assert_eq!(d1.name, "my-project");
    // The process environment still chooses the file.
    let d2 = load(dir.path(), &[("PALLAS_AGENTS_CONFIG", "other.yaml")]);
    assert_eq!(d2.name, "other-project");
}

#[tokio::test]
async fn px_openai_default_base_url_without_v1_drops_the_v1() {
    let d = Defects::take().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        "default_model: openai.gpt-4.1\n",
    );
    let base_url = |dir: &Path| load(dir, &[]).agents[0].settings.provider.base_url.clone();
    assert_eq!(base_url(dir.path()), "https://api.openai.com/v1");
    d.set(&["px-openai-default-base-url-without-v1"]);
    assert_eq!(base_url(dir.path()), "https://api.openai.com");
}

// ---------------------------------------------------------------- a mock Anthropic API

/// An Anthropic API knowing `claude-sonnet-4-5` that records each messages request body.
async fn anthropic() -> (String, Arc<Mutex<Vec<Value>>>, CancellationToken) {
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let ct = CancellationToken::new();
    let router = axum::Router::new()
        .route(
            "/v1/models/{model}",
            get(
                |axum::extract::Path(model): axum::extract::Path<String>| async move {
                    if model == "claude-sonnet-4-5" {
                        (
                            axum::http::StatusCode::OK,
                            Json(json!({"id": model, "type": "model"})),
                        )
                    } else {
                        (
                            axum::http::StatusCode::NOT_FOUND,
                            Json(json!({"type": "error", "error": {"type": "not_found_error", "message": "model not found"}})),
                        )
                    }
                },
            ),
        )
        .route(
            "/v1/messages",
            post(
                |State(bodies): State<Arc<Mutex<Vec<Value>>>>, Json(body): Json<Value>| async move {
                    bodies.lock().unwrap().push(body);
                    Json(json!({"content": [{"type": "text", "text": "hi"}],
                                "usage": {"input_tokens": 1, "output_tokens": 1}}))
                },
            ),
        )
        .with_state(bodies.clone());
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}"), bodies, ct)
}

fn claude_sonnet() -> ModelRef {
    ModelRef {
        provider: Provider::Anthropic,
        model: "claude-sonnet-4-5".into(),
    }
}

#[tokio::test]
async fn px_anthropic_probe_path_keeps_prefix_asks_for_the_prefixed_model() {
    let d = Defects::take().await;
    let (url, _, ct) = anthropic().await;
    let _stop = ct.drop_guard();
    let http = pallas_reference::net::builder().build().unwrap();
    let provider = ProviderSettings::new(&url);
    let status = llm::preflight(&provider, &claude_sonnet(), &http).await;
    assert!(status.is_ok(), "{status:?}");
    d.set(&["px-anthropic-probe-path-keeps-prefix"]);
    let status = llm::preflight(&provider, &claude_sonnet(), &http).await;
    assert_eq!(
        status.describe().as_deref(),
        Some("anthropic: model 'anthropic.claude-sonnet-4-5' not found")
    );
}

#[tokio::test]
async fn px_sampling_params_stripped_for_all_anthropic_sends_no_temperature() {
    let d = Defects::take().await;
    let (url, bodies, ct) = anthropic().await;
    let _stop = ct.drop_guard();
    let http = pallas_reference::net::builder().build().unwrap();
    let provider = ProviderSettings::new(&url);
    let model = claude_sonnet();
    let params = RequestParams {
        temperature: Some(0.6),
        top_p: Some(0.9),
        ..RequestParams::default()
    };
    let capabilities = ModelCapabilities::default();
    let messages = [ChatMessage::User(vec![Part::Text("hi".into())])];
    let turn = TurnRequest {
        model: &model,
        provider: &provider,
        params: &params,
        capabilities: &capabilities,
        instruction: "",
        messages: &messages,
        tools: &[],
        bearer: None,
        endpoint: None,
    };
    for (defects, sent) in [
        (&[][..], true),
        (
            &["px-sampling-params-stripped-for-all-anthropic"][..],
            false,
        ),
    ] {
        d.set(defects);
        llm::complete(&http, &turn).await.unwrap();
        let body = bodies.lock().unwrap().pop().unwrap();
        assert_eq!(
            body.get("temperature").is_some(),
            sent,
            "{defects:?}: {body}"
        );
        assert_eq!(body.get("top_p").is_some(), sent, "{defects:?}: {body}");
    }
}

// ---------------------------------------------------------------- the agent's tools

#[tokio::test]
async fn px_get_health_only_with_downstreams_drops_the_tool_of_a_serverless_agent() {
    let d = Defects::take().await;
    for (defects, present) in [
        (&[][..], true),
        (&["px-get-health-only-with-downstreams"][..], false),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let listed = client.request("tools/list", json!({}), None).await.unwrap();
        let names: Vec<&str> = listed.result()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names.contains(&"get_health"), present, "{names:?}");
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let answered = reply.result().get("result").is_some() && !reply.is_error();
        assert_eq!(answered, present, "{defects:?}: {:?}", reply.messages);
        if present {
            let report: Value = serde_json::from_str(&reply.text()).unwrap();
            assert_eq!(report["status"], "ok");
        }
    }
}

#[tokio::test]
async fn px_history_prompt_one_transcript_message_flattens_the_history() {
    let d = Defects::take().await;
    for (defects, count) in [
        (&[][..], 4),
        (&["px-history-prompt-one-transcript-message"][..], 1),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        for message in ["one", "two"] {
            assert!(!client.send(message).await.unwrap().is_error());
        }
        let reply = client
            .request(
                "prompts/get",
                json!({"name": pallas_reference::agent::tools::history_prompt_name("jarvis")}),
                None,
            )
            .await
            .unwrap();
        let messages = reply.result()["result"]["messages"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(messages.len(), count, "{defects:?}: {messages:?}");
        if count == 1 {
            assert_eq!(messages[0]["role"], "user");
            let text = messages[0]["content"]["text"].as_str().unwrap();
            assert!(
                text.starts_with("user: one\nassistant: echo: one"),
                "{text}"
            );
            assert!(text.contains("\nuser: two\n"), "{text}");
        } else {
            let roles: Vec<&str> = messages
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
        }
    }
}

#[tokio::test]
async fn px_progress_token_made_mandatory_refuses_a_call_without_token() {
    let d = Defects::take().await;
    for (defects, refused) in [
        (&[][..], false),
        (&["px-progress-token-made-mandatory"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client.send("hi").await.unwrap();
        assert_eq!(
            reply.is_error(),
            refused,
            "{defects:?}: {:?}",
            reply.messages
        );
        if refused {
            assert!(reply.text().contains("progressToken required"));
        }
        let with_token = client
            .call(
                "send_message",
                json!({"message": "hi"}),
                Some(json!("t")),
                None,
            )
            .await
            .unwrap();
        assert!(!with_token.is_error(), "{:?}", with_token.messages);
    }
}

#[tokio::test]
async fn px_images_before_text_puts_the_text_last() {
    let d = Defects::take().await;
    for (defects, first, last) in [
        (&[][..], "text", "image_url"),
        (&["px-images-before-text"][..], "image_url", "text"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.capabilities.vision = true;
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call(
                "send_message",
                json!({"message": "look", "images": [{"data": "AAAA", "mime_type": "image/png"}]}),
                None,
                None,
            )
            .await
            .unwrap();
        assert!(!reply.is_error(), "{:?}", reply.messages);
        let request = llm.requests().pop().unwrap();
        let user = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap()
            .clone();
        let parts = user["content"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{user}");
        assert_eq!(parts[0]["type"], first, "{defects:?}: {user}");
        assert_eq!(parts[1]["type"], last, "{defects:?}: {user}");
    }
}

// ---------------------------------------------------------------- progress

#[tokio::test]
async fn px_progress_server_from_serverinfo_names_the_server_by_its_own_name() {
    let d = Defects::take().await;
    for (defects, prefix) in [
        (&[][..], "argos"),
        (&["px-progress-server-from-serverinfo"][..], "rmcp"),
    ] {
        d.set(defects);
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
        let messages: Vec<String> = reply
            .progress()
            .iter()
            .filter_map(|p| p["message"].as_str().map(str::to_owned))
            .collect();
        for word in ["started", "completed"] {
            let expected = format!("{prefix}/echo: {word}");
            assert!(messages.contains(&expected), "{defects:?}: {messages:?}");
        }
    }
}

/// A sink that takes 100 ms to send each notification, recording it once sent.
#[derive(Clone, Default)]
struct SlowSink(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ProgressSink for SlowSink {
    fn send(
        &self,
        param: ProgressNotificationParam,
    ) -> futures::future::BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.0.lock().unwrap().push(param);
            Ok(())
        })
    }
}

#[tokio::test]
async fn px_progress_sent_fire_and_forget_returns_before_the_notification_is_sent() {
    let d = Defects::take().await;
    let token = ProgressToken(NumberOrString::String("t".into()));
    for (defects, sent_on_return) in [(&[][..], 1), (&["px-progress-sent-fire-and-forget"][..], 0)]
    {
        d.set(defects);
        let sink = SlowSink::default();
        let progress = Progress::new(Some(token.clone()), sink.clone());
        progress
            .finished("argos/search_web: completed".into())
            .await;
        progress.close().await;
        // The call's result would go out now.
        assert_eq!(sink.0.lock().unwrap().len(), sent_on_return, "{defects:?}");
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(sink.0.lock().unwrap().len(), 1, "{defects:?}");
    }
}

// ---------------------------------------------------------------- health

/// A downstream answering `initialize` after 200 ms (no session), counting the probes in flight
/// at once; answers the URL and the highest count seen.
async fn slow_downstream() -> (String, Arc<AtomicUsize>, CancellationToken) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let ct = CancellationToken::new();
    let state = (in_flight, most.clone());
    let router = axum::Router::new()
        .route(
            "/mcp",
            post(
                |State((in_flight, most)): State<(Arc<AtomicUsize>, Arc<AtomicUsize>)>,
                 Json(body): Json<Value>| async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    Json(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "slow", "version": "1"}}}))
                },
            ),
        )
        .with_state(state);
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}/mcp"), most, ct)
}

#[tokio::test]
async fn px_health_probes_run_sequentially_never_overlaps_two_probes() {
    let d = Defects::take().await;
    for (defects, overlap) in [
        (&[][..], 2),
        (&["px-health-probes-run-sequentially"][..], 1),
    ] {
        d.set(defects);
        let (url, most, ct) = slow_downstream().await;
        let _stop = ct.drop_guard();
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![
            DownstreamSettings::new("argos", &url),
            DownstreamSettings::new("mnemosyne", &url),
        ];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], "ok", "{report}");
        assert_eq!(most.load(Ordering::SeqCst), overlap, "{defects:?}");
    }
}

/// A downstream serving MCP at `/mcp/` (sessionless JSON answers) whose `/mcp` redirects there.
async fn slash_downstream() -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new()
        .route(
            "/mcp/",
            post(|Json(body): Json<Value>| async move {
                Json(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "mnemosyne", "version": "1"}}}))
            }),
        )
        .route(
            "/mcp",
            post(|| async {
                (
                    axum::http::StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, "/mcp/")],
                )
            }),
        );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}/mcp/"), ct)
}

#[tokio::test]
async fn px_probe_url_trailing_slash_stripped_marks_a_slash_url_unreachable() {
    let d = Defects::take().await;
    for (defects, status, up) in [
        (&[][..], "ok", "1"),
        (
            &["px-probe-url-trailing-slash-stripped"][..],
            "degraded",
            "0",
        ),
    ] {
        d.set(defects);
        let (url, ct) = slash_downstream().await;
        let _stop = ct.drop_guard();
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("mnemosyne", &url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], status, "{report}");
        if status == "degraded" {
            assert_eq!(report["message"], "Unreachable: mnemosyne", "{report}");
        }
        let line = format!("pallas_downstream_up{{agent=\"jarvis\",server=\"mnemosyne\"}} {up}\n");
        assert!(agent.metrics.render().contains(&line), "{line}");
    }
}

#[tokio::test]
async fn px_health_gauges_from_background_poller_answers_a_cached_report() {
    let d = Defects::take().await;
    for (defects, probes) in [
        (&[][..], 3),
        (&["px-health-gauges-from-background-poller"][..], 1),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        // Time for the poller's first round, if there is one.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let before = argos.journal.count("POST", Some("initialize"));
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let mut timestamps = Vec::new();
        for _ in 0..3 {
            let reply = client
                .call("get_health", json!({}), None, None)
                .await
                .unwrap();
            let report: Value = serde_json::from_str(&reply.text()).unwrap();
            assert_eq!(report["status"], "ok", "{report}");
            timestamps.push(report["timestamp"].clone());
        }
        let probed = argos.journal.count("POST", Some("initialize"));
        assert_eq!(probed, probes, "{defects:?}: {before} before the calls");
        if defects.is_empty() {
            assert_eq!(before, 0);
        } else {
            // Probed before any call, every call answered with that one report.
            assert_eq!(before, 1);
            assert!(timestamps.iter().all(|t| *t == timestamps[0]));
        }
    }
}

// ---------------------------------------------------------------- bearer forwarding

/// A downstream offering `whoami` (answers the `Authorization` it saw) that refuses every request
/// without `Authorization` with 401.
#[derive(Clone)]
struct Guarded;

impl ServerHandler for Guarded {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let Value::Object(schema) = json!({"type": "object"}) else {
            unreachable!()
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "whoami".to_owned(),
            "Returns the Authorization header".to_owned(),
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let auth = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get("authorization"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("guarded:{auth}"))]).into())
    }
}

async fn require_authorization(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if request.headers().contains_key("authorization") {
        return next.run(request).await;
    }
    (
        axum::http::StatusCode::UNAUTHORIZED,
        [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
        "authorization required",
    )
        .into_response()
}

#[tokio::test]
async fn px_bearer_only_on_tool_calls_never_opens_a_credentialed_session() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "tool results: guarded:Bearer tok-1"),
        (
            &["px-bearer-only-on-tool-calls"][..],
            "tool results: unknown tool 'mnemosyne__whoami'",
        ),
    ] {
        d.set(defects);
        let ct = CancellationToken::new();
        let _stop = ct.clone().drop_guard();
        let service = StreamableHttpService::new(
            || Ok(Guarded),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
        );
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(require_authorization));
        let addr = serve(router, ct).await;
        let llm = MockOpenAi::start().await;
        let mut server = DownstreamSettings::new("mnemosyne", format!("http://{addr}/mcp"));
        server.forward_inbound_auth = true;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![server];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call(
                "send_message",
                json!({"message": "CALL_TOOL mnemosyne__whoami {}"}),
                None,
                Some("tok-1"),
            )
            .await
            .unwrap();
        assert!(!reply.is_error(), "{:?}", reply.messages);
        assert_eq!(reply.text(), expected, "{defects:?}");
    }
}

// ---------------------------------------------------------------- metrics

#[tokio::test]
async fn px_metrics_mount_redirects_answers_307_to_metrics_slash() {
    let d = Defects::take().await;
    let ct = CancellationToken::new();
    let _stop = ct.clone().drop_guard();
    let no_redirect = pallas_reference::net::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for (defects, status) in [(&[][..], 200), (&["px-metrics-mount-redirects"][..], 307)] {
        d.set(defects);
        // The router is built with the defects active at the time.
        let addr = serve(
            registry::router(RegistryState::new(Metrics::new())),
            ct.clone(),
        )
        .await;
        let response = no_redirect
            .get(format!("http://{addr}/metrics"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{defects:?}");
        if status == 307 {
            assert_eq!(
                response.headers()["location"].to_str().unwrap(),
                format!("http://{addr}/metrics/")
            );
            assert!(response.text().await.unwrap().is_empty());
            let followed = pallas_reference::net::loopback_client()
                .get(format!("http://{addr}/metrics"))
                .send()
                .await
                .unwrap();
            assert_eq!(followed.status().as_u16(), 200);
            assert!(followed.text().await.unwrap().contains("pallas_up 1"));
        } else {
            assert!(response.text().await.unwrap().contains("pallas_up 1"));
        }
    }
}

// ---------------------------------------------------------------- a whole Pallas

const TWO_AGENTS: &str = "name: my-project\nnamespace: com.example.project\nregistry_port: 0\nagents:\n  research:\n    module: agents.research\n    port: 0\n  jarvis:\n    module: agents.jarvis\n    port: 0\n    depends_on: [research]\n";

/// Starts the project in `dir` on loopback, with `factory` building the agents' routers.
async fn start(dir: &Path, factory: Option<AgentFactory>) -> RunningPallas {
    let options = StartOptions {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        load: LoadOptions {
            agents_config: None,
            env: Some(HashMap::new()),
        },
        watch: false,
        ready_timeout: Duration::from_secs(10),
        agent_factory: factory,
        ..StartOptions::default()
    };
    runtime::start(dir, options).await.unwrap()
}

fn mock_model_config(llm: &MockOpenAi) -> String {
    format!(
        "default_model: openai.mock-model\nopenai:\n  base_url: {}\n",
        llm.url
    )
}

#[tokio::test]
async fn px_remote_port_from_registry_offset_advertises_a_port_nothing_serves() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        &one_agent("registry_port: 0\n"),
        &["research"],
        &mock_model_config(&llm),
    );
    for (defects, offset) in [
        (&[][..], false),
        (&["px-remote-port-from-registry-offset"][..], true),
    ] {
        d.set(defects);
        let running = start(dir.path(), None).await;
        let port = running.agent_addrs().await["research"].port();
        let url = running.registry().document()["servers"][0]["server"]["remotes"][0]["url"]
            .as_str()
            .unwrap()
            .to_owned();
        running.shutdown().await;
        let expected = if offset {
            // registry_port (0) + 1 + the agent's place (0).
            "http://localhost:1/mcp".to_owned()
        } else {
            format!("http://localhost:{port}/mcp")
        };
        assert_eq!(url, expected, "{defects:?}");
    }
}

#[tokio::test]
async fn px_subagents_inverted_starts_the_dependant_first() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_AGENTS,
        &["research", "jarvis"],
        &mock_model_config(&llm),
    );
    for (defects, order) in [
        (&[][..], ["research", "jarvis"]),
        (&["px-subagents-inverted"][..], ["jarvis", "research"]),
    ] {
        d.set(defects);
        let running = start(dir.path(), None).await;
        let started: Vec<String> = running
            .registry()
            .agents()
            .into_iter()
            .map(|a| a.agent)
            .collect();
        running.shutdown().await;
        assert_eq!(started, order, "{defects:?}");
    }
}

#[tokio::test]
async fn px_pallas_up_only_after_startup_scrapes_0_while_agents_start() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_AGENTS,
        &["research", "jarvis"],
        &mock_model_config(&llm),
    );
    for (defects, while_starting) in [
        (&[][..], "pallas_up 1"),
        (&["px-pallas-up-only-after-startup"][..], "pallas_up 0"),
    ] {
        d.set(defects);
        let seen: Arc<Mutex<Vec<bool>>> = Arc::default();
        let inner = runtime::default_agent_factory();
        let record = seen.clone();
        let factory: AgentFactory = Arc::new(move |settings, deps, shutdown| {
            let text = deps.metrics.render();
            record
                .lock()
                .unwrap()
                .push(text.contains(&format!("{while_starting}\n")));
            inner(settings, deps, shutdown)
        });
        let running = start(dir.path(), Some(factory)).await;
        let after = running.metrics().render();
        running.shutdown().await;
        assert_eq!(*seen.lock().unwrap(), [true, true], "{defects:?}");
        assert!(after.contains("pallas_up 1\n"), "{defects:?}");
    }
}

// ---------------------------------------------------------------- logs

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    move |k| map.get(k).cloned()
}

#[tokio::test]
async fn px_stderr_flag_any_nonempty_value_turns_stderr_on_for_0() {
    let d = Defects::take().await;
    let stderr = |value: &str| {
        LogSettings::from_lookup(lookup(&[("PALLAS_LOG_STDERR", value)]), None)
            .unwrap()
            .stderr
    };
    assert!(stderr("1"));
    assert!(!stderr("0") && !stderr("false") && !stderr("no"));
    d.set(&["px-stderr-flag-any-nonempty-value"]);
    assert!(stderr("1"));
    assert!(stderr("0") && stderr("false") && stderr("no"));
    assert!(!stderr(""));
}

#[tokio::test]
async fn px_third_party_pins_at_info_lets_dependency_info_through() {
    let d = Defects::take().await;
    let filter = || {
        LogSettings::from_lookup(lookup(&[]), None)
            .unwrap()
            .filter()
            .to_string()
    };
    assert!(filter().contains("rmcp=warn"), "{}", filter());
    d.set(&["px-third-party-pins-at-info"]);
    assert!(filter().contains("rmcp=info"), "{}", filter());
    assert!(!filter().contains("=warn"), "{}", filter());
}

#[tokio::test]
async fn px_log_dir_not_created_fails_on_a_missing_directory() {
    let d = Defects::take().await;
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a/.local/state/pallas/pallas.log");
    assert!(RotatingFile::open(&first, 1024, 5).is_ok());
    d.set(&["px-log-dir-not-created"]);
    let second = dir.path().join("b/.local/state/pallas/pallas.log");
    let error = RotatingFile::open(&second, 1024, 5).unwrap_err();
    assert!(error.to_string().contains("pallas.log"), "{error}");
    assert!(!second.parent().unwrap().exists());
}

#[test]
fn px_file_sink_level_follows_root_keeps_pallas_debug_out_of_the_file() {
    let d = Defects::take_blocking();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pallas.log");
    let path = file.to_str().unwrap().to_owned();
    let settings = LogSettings::from_lookup(
        lookup(&[("PALLAS_LOG_LEVEL", "debug"), ("PALLAS_LOG_FILE", &path)]),
        None,
    )
    .unwrap();
    // The process's one global subscriber: only this test installs it.
    logging::init(&settings, Vec::new()).unwrap();
    tracing::debug!(target: "pallas_reference::sixth", "px-debug-record-before");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(text.contains("px-debug-record-before"), "{text}");
    d.set(&["px-file-sink-level-follows-root"]);
    tracing::debug!(target: "pallas_reference::sixth", "px-debug-record-after");
    tracing::info!(target: "pallas_reference::sixth", "px-info-record-after");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(!text.contains("px-debug-record-after"), "{text}");
    assert!(text.contains("px-info-record-after"), "{text}");
}
