//! The fifth set of contract mutants (`nx-…`): each test observes the same exchange with no
//! defect and with the defect, the rule holding in the first and broken in the second.
//!
//! One idea: the proof that each defect of one set of misreadings does what its row says, one
//! test per defect over the same few fixtures (a mock model, a mock downstream, a started agent).

use std::collections::HashMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::routing::{get, post};
use pallas_reference::config::{self, Deployment, LoadOptions};
use pallas_reference::llm::{self, LlmStatusCell, ProviderStatus};
use pallas_reference::metrics::Metrics;
use pallas_reference::registry::{self, PublishedAgent, RegistryState};
use pallas_reference::runtime::{self, StartOptions};
use pallas_reference::settings::{DownstreamSettings, ModelRef, Provider, ProviderSettings};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Defects;
use crate::fixtures::{
    Exchange, McpServer, MockOpenAi, RawClient, refused_url, serve, settings, start_agent,
    start_agent_with,
};

// ---------------------------------------------------------------- projects on disk

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project: `agents.yaml` of `my-project` with one agent `research` (no title, port 0) using
/// `servers`, and `fastagent` as its `fastagent.config.yaml`.
fn project(fastagent: &str, servers: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "agents.yaml",
        "name: my-project\nnamespace: com.example.project\nregistry_port: 0\nagents:\n  research:\n    module: agents.research\n    port: 0\n    description: Research agent\n",
    );
    write(dir.path(), "fastagent.config.yaml", fastagent);
    write(
        dir.path(),
        "agents/research.md",
        &format!("---\nname: research\nservers: [{servers}]\n---\nResearch things.\n"),
    );
    dir
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

/// The registry entry (`server`) of the first agent of the project in `dir`.
fn registry_entry(dir: &Path) -> Value {
    let d = load(dir, &[]);
    let entry = &d.agents[0];
    PublishedAgent::new(
        entry,
        &d.namespace,
        &d.version,
        &d.host,
        8250,
        d.publish_capabilities,
    )
    .to_json()["server"]
        .clone()
}

const GPT_41_VISION_ONLY: &str = "default_model: openai.gpt-4.1\nmodel_capabilities:\n  vision: true\nopenai:\n  base_url: http://127.0.0.1:9/v1\n";

#[tokio::test]
async fn nx_registry_name_project_prefixed_puts_the_project_before_the_slug() {
    let d = Defects::take().await;
    let dir = project(GPT_41_VISION_ONLY, "");
    assert_eq!(
        registry_entry(dir.path())["name"],
        "com.example.project/research"
    );
    d.set(&["nx-registry-name-project-prefixed"]);
    assert_eq!(
        registry_entry(dir.path())["name"],
        "com.example.project/my-project-research"
    );
}

#[tokio::test]
async fn nx_title_omitted_when_unset_publishes_no_default_title() {
    let d = Defects::take().await;
    let dir = project(GPT_41_VISION_ONLY, "");
    assert_eq!(registry_entry(dir.path())["title"], "Research");
    d.set(&["nx-title-omitted-when-unset"]);
    let entry = registry_entry(dir.path());
    assert!(entry.get("title").is_none(), "{entry}");
    assert_eq!(entry["description"], "Research agent");
}

#[tokio::test]
async fn nx_partial_capabilities_as_written_leaves_the_defaults_out() {
    let d = Defects::take().await;
    let dir = project(
        "default_model: openai.my-model\nmodel_capabilities:\n  vision: true\n",
        "",
    );
    assert_eq!(
        registry_entry(dir.path())["capabilities"],
        json!({"model": "my-model", "vision": true, "context_window": 131_072, "max_output_tokens": 16_384})
    );
    d.set(&["nx-partial-capabilities-as-written"]);
    assert_eq!(
        registry_entry(dir.path())["capabilities"],
        json!({"model": "my-model", "vision": true})
    );
}

#[tokio::test]
async fn nx_capabilities_from_model_database_publishes_fast_agents_numbers_for_a_known_model() {
    let d = Defects::take().await;
    let known = project(
        "default_model: openai.gpt-4.1\nmodel_capabilities:\n  vision: false\n  context_window: 200000\n  max_output_tokens: 32000\n",
        "",
    );
    let custom = project(
        "default_model: openai.my-model\nmodel_capabilities:\n  vision: false\n  context_window: 200000\n  max_output_tokens: 32000\n",
        "",
    );
    let configured = |model: &str| json!({"model": model, "vision": false, "context_window": 200_000, "max_output_tokens": 32_000});
    assert_eq!(
        registry_entry(known.path())["capabilities"],
        configured("gpt-4.1")
    );
    d.set(&["nx-capabilities-from-model-database"]);
    assert_eq!(
        registry_entry(known.path())["capabilities"],
        json!({"model": "gpt-4.1", "vision": true, "context_window": 1_047_576, "max_output_tokens": 32_768})
    );
    assert_eq!(
        registry_entry(custom.path())["capabilities"],
        configured("my-model")
    );
}

// ---------------------------------------------------------------- configuration and health

#[tokio::test]
async fn nx_probe_placeholders_unexpanded_sends_the_header_as_written() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "Bearer neo4j-secret"),
        (
            &["nx-probe-placeholders-unexpanded"][..],
            "Bearer ${NEO4J_TOKEN}",
        ),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let neo4j = McpServer::start("neo4j_cypher").await;
        let dir = project(
            &format!(
                "default_model: openai.mock-model\nopenai:\n  base_url: {}\nmcp:\n  servers:\n    neo4j_cypher:\n      transport: http\n      url: {}\n      headers:\n        Authorization: \"Bearer ${{NEO4J_TOKEN}}\"\n",
                llm.url, neo4j.url
            ),
            "neo4j_cypher",
        );
        let deployment = load(dir.path(), &[("NEO4J_TOKEN", "neo4j-secret")]);
        let agent = start_agent((*deployment.agents[0].settings).clone()).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let records = neo4j.journal.records();
        let probe = records
            .iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .unwrap();
        assert_eq!(
            probe.authorization.as_deref(),
            Some(expected),
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn nx_unset_header_var_empty_keeps_the_header_with_an_empty_token() {
    let d = Defects::take().await;
    let dir = project(
        "default_model: openai.mock-model\nmcp:\n  servers:\n    neo4j_cypher:\n      transport: http\n      url: http://127.0.0.1:9/mcp\n      headers:\n        Authorization: \"Bearer ${NX_UNSET_VAR}\"\n",
        "neo4j_cypher",
    );
    let headers = |d: &Deployment| {
        d.agents[0].settings.servers[0]
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.expose()))
            .collect::<Vec<_>>()
    };
    assert!(headers(&load(dir.path(), &[])).is_empty());
    d.set(&["nx-unset-header-var-empty"]);
    assert_eq!(
        headers(&load(dir.path(), &[])),
        vec!["Authorization: Bearer ".to_owned()]
    );
}

/// A provider whose `GET /models` answers after `delay`, listing `mock-model`.
async fn slow_models(delay: Duration) -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new().route(
        "/v1/models",
        get(move || async move {
            tokio::time::sleep(delay).await;
            Json(json!({"object": "list", "data": [{"id": "mock-model"}]}))
        }),
    );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}/v1"), ct)
}

fn openai_model(model: &str) -> ModelRef {
    ModelRef {
        provider: Provider::OpenAi,
        model: model.into(),
    }
}

#[tokio::test]
async fn nx_preflight_timeout_3s_fails_a_provider_answering_in_4s() {
    let d = Defects::take().await;
    let (url, ct) = slow_models(Duration::from_secs(4)).await;
    let _stop = ct.drop_guard();
    let http = pallas_reference::net::builder().build().unwrap();
    let model = openai_model("mock-model");
    let status = llm::preflight(&ProviderSettings::new(&url), &model, &http).await;
    assert!(status.is_ok(), "{status:?}");
    d.set(&["nx-preflight-timeout-3s"]);
    let status = llm::preflight(&ProviderSettings::new(&url), &model, &http).await;
    assert!(!status.is_ok(), "{status:?}");
}

#[tokio::test]
async fn nx_preflight_any_200_ok_passes_a_model_the_listing_lacks() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let http = pallas_reference::net::builder().build().unwrap();
    let model = openai_model("bad-model");
    let status = llm::preflight(&ProviderSettings::new(&llm.url), &model, &http).await;
    assert_eq!(
        status.describe().as_deref(),
        Some("openai: model 'bad-model' not found")
    );
    d.set(&["nx-preflight-any-200-ok"]);
    let status = llm::preflight(&ProviderSettings::new(&llm.url), &model, &http).await;
    assert!(status.is_ok(), "{status:?}");
}

#[tokio::test]
async fn nx_preflight_base_url_env_only_ignores_a_literal_base_url() {
    let d = Defects::take().await;
    let http = pallas_reference::net::builder().build().unwrap();
    for (defects, listed) in [(&[][..], 1), (&["nx-preflight-base-url-env-only"][..], 0)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let dir = project(
            &format!(
                "default_model: openai.mock-model\nopenai:\n  base_url: {}\n",
                llm.url
            ),
            "",
        );
        let deployment = load(dir.path(), &[]);
        let s = &deployment.agents[0].settings;
        let status = llm::preflight(&s.provider, &s.model, &http).await;
        assert_eq!(*llm.state.list_calls.lock().unwrap(), listed, "{defects:?}");
        assert_eq!(status.is_ok(), listed == 1, "{defects:?}: {status:?}");
    }
}

/// `get_health` of an agent with one reachable downstream whose provider failed its preflight,
/// and the agent's metrics after it.
async fn health_with_failed_llm() -> (Exchange, String) {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let cell = LlmStatusCell::with_status(ProviderStatus {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
        problem: Some("API key rejected (HTTP 401)".into()),
    });
    let agent = start_agent_with(s, cell).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("get_health", json!({}), None, None)
        .await
        .unwrap();
    (reply, agent.metrics.render())
}

#[tokio::test]
async fn nx_llm_failure_error_reports_error_for_a_failed_provider() {
    let d = Defects::take().await;
    for (defects, status, gauge) in [
        (&[][..], "degraded", "0.5"),
        (&["nx-llm-failure-error"][..], "error", "0"),
    ] {
        d.set(defects);
        let (reply, metrics) = health_with_failed_llm().await;
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], status, "{report}");
        let line = format!("pallas_agent_health_status{{agent=\"jarvis\"}} {gauge}\n");
        assert!(metrics.contains(&line), "{line}");
    }
}

#[tokio::test]
async fn nx_provider_up_set_by_health_only_copies_the_stored_result_on_every_call() {
    let d = Defects::take().await;
    for (defects, present) in [
        (&[][..], false),
        (&["nx-provider-up-set-by-health-only"][..], true),
    ] {
        d.set(defects);
        // The stored status is fresh: no re-probe, so only the defect sets the gauge here.
        let (_, metrics) = health_with_failed_llm().await;
        assert_eq!(
            metrics.contains("pallas_llm_provider_up{provider=\"openai\"} 0"),
            present,
            "{defects:?}"
        );
    }
}

/// A downstream answering `initialize` 200 with a JSON result and no `Mcp-Session-Id`.
async fn sessionless_downstream() -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new().route(
        "/mcp",
        post(|Json(body): Json<Value>| async move {
            Json(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "stateless", "version": "1"}}}))
        }),
    );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}/mcp"), ct)
}

#[tokio::test]
async fn nx_probe_requires_session_id_marks_a_sessionless_server_unreachable() {
    let d = Defects::take().await;
    for (defects, status, up) in [
        (&[][..], "ok", "1"),
        (&["nx-probe-requires-session-id"][..], "degraded", "0"),
    ] {
        d.set(defects);
        let (url, ct) = sessionless_downstream().await;
        let _stop = ct.drop_guard();
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("stateless", &url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], status, "{report}");
        let line = format!("pallas_downstream_up{{agent=\"jarvis\",server=\"stateless\"}} {up}\n");
        assert!(agent.metrics.render().contains(&line), "{line}");
    }
}

/// `get_health` of an agent with one healthy and one refusing downstream server.
async fn half_down() -> (Exchange, String, String) {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let refused = refused_url().await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![
        DownstreamSettings::new("argos", &argos.url),
        DownstreamSettings::new("neo4j_cypher", &refused),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call("get_health", json!({}), None, None)
        .await
        .unwrap();
    (reply, agent.metrics.render(), refused)
}

#[tokio::test]
async fn nx_health_nonok_iserror_flags_a_degraded_answer_as_an_error() {
    let d = Defects::take().await;
    for (defects, flagged) in [(&[][..], false), (&["nx-health-nonok-iserror"][..], true)] {
        d.set(defects);
        let (reply, _, _) = half_down().await;
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], "degraded");
        assert_eq!(reply.is_error(), flagged, "{defects:?}");
    }
}

#[tokio::test]
async fn nx_downstream_up_labelled_by_url_labels_the_gauge_with_the_url() {
    let d = Defects::take().await;
    let (_, clean, _) = half_down().await;
    assert!(clean.contains("pallas_downstream_up{agent=\"jarvis\",server=\"neo4j_cypher\"} 0"));
    d.set(&["nx-downstream-up-labelled-by-url"]);
    let (_, broken, refused) = half_down().await;
    let line = format!("pallas_downstream_up{{agent=\"jarvis\",server=\"{refused}\"}} 0");
    assert!(broken.contains(&line), "{line}");
    assert!(!broken.contains("server=\"neo4j_cypher\""));
}

// ---------------------------------------------------------------- progress

/// One `send_message` of `message` with progress token `token` to an agent with `argos`.
async fn progress_of(message: &str) -> Vec<Value> {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": message}),
            Some(json!("t1")),
            None,
        )
        .await
        .unwrap();
    reply.progress()
}

fn messages(progress: &[Value], suffix: &str) -> Vec<Value> {
    progress
        .iter()
        .filter(|p| p["message"].as_str().is_some_and(|m| m.ends_with(suffix)))
        .cloned()
        .collect()
}

#[tokio::test]
async fn nx_parallel_same_tool_one_completion_announces_one_end_of_two_calls() {
    let d = Defects::take().await;
    let twice = "CALL_TOOL argos__echo {\"a\":1}\nCALL_TOOL argos__echo {\"a\":2}";
    for (defects, completed) in [
        (&[][..], 2),
        (&["nx-parallel-same-tool-one-completion"][..], 1),
    ] {
        d.set(defects);
        let progress = progress_of(twice).await;
        assert_eq!(messages(&progress, "argos/echo: started").len(), 2);
        assert_eq!(
            messages(&progress, "argos/echo: completed").len(),
            completed,
            "{defects:?}: {progress:?}"
        );
    }
}

#[tokio::test]
async fn nx_tool_start_total_one_gives_the_start_a_total() {
    let d = Defects::take().await;
    for (defects, total) in [
        (&[][..], Value::Null),
        (&["nx-tool-start-total-one"][..], json!(1.0)),
    ] {
        d.set(defects);
        let progress = progress_of("CALL_TOOL argos__echo {}").await;
        let started = messages(&progress, "argos/echo: started");
        assert_eq!(started.len(), 1);
        assert_eq!(
            started[0].get("total").cloned().unwrap_or(Value::Null),
            total
        );
    }
}

#[tokio::test]
async fn nx_failed_progress_with_error_appends_the_error_text() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "argos/fail: failed"),
        (
            &["nx-failed-progress-with-error"][..],
            "argos/fail: failed: it failed",
        ),
    ] {
        d.set(defects);
        let progress = progress_of("CALL_TOOL argos__fail {}").await;
        let last = progress
            .iter()
            .filter_map(|p| p["message"].as_str())
            .find(|m| m.starts_with("argos/fail: f"))
            .unwrap();
        assert_eq!(last, expected, "{defects:?}");
    }
}

#[tokio::test]
async fn nx_progress_token_first_call_reuses_the_first_token() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "t2"),
        (&["nx-progress-token-first-call"][..], "t1"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        for token in ["t1", "t2"] {
            let reply = client
                .call(
                    "send_message",
                    json!({"message": "hi"}),
                    Some(json!(token)),
                    None,
                )
                .await
                .unwrap();
            assert!(!reply.is_error());
            let progress = reply.progress();
            assert!(!progress.is_empty());
            if token == "t2" {
                assert!(
                    progress.iter().all(|p| p["progressToken"] == expected),
                    "{defects:?}: {progress:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------- messages and bearers

async fn whoami(client: &mut RawClient, bearer: Option<&str>) -> String {
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL mnemosyne__whoami {}"}),
            None,
            bearer,
        )
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    reply.text()
}

async fn forwarding_agent() -> (crate::fixtures::Agent, McpServer, MockOpenAi) {
    let llm = MockOpenAi::start().await;
    let mnemosyne = McpServer::start("mnemosyne").await;
    let mut server = DownstreamSettings::new("mnemosyne", &mnemosyne.url);
    server.forward_inbound_auth = true;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![server];
    (start_agent(s).await, mnemosyne, llm)
}

#[tokio::test]
async fn nx_forwarded_bearer_without_scheme_drops_bearer_from_the_header() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "tool results: mnemosyne:Bearer tok-1"),
        (
            &["nx-forwarded-bearer-without-scheme"][..],
            "tool results: mnemosyne:tok-1",
        ),
    ] {
        d.set(defects);
        let (agent, _mnemosyne, _llm) = forwarding_agent().await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert_eq!(whoami(&mut client, Some("tok-1")).await, expected);
    }
}

#[tokio::test]
async fn nx_bearer_never_revoked_forwards_the_previous_bearer_to_a_call_without_one() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], "tool results: mnemosyne:none"),
        (
            &["nx-bearer-never-revoked"][..],
            "tool results: mnemosyne:Bearer tok-A",
        ),
    ] {
        d.set(defects);
        let (agent, _mnemosyne, _llm) = forwarding_agent().await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert_eq!(
            whoami(&mut client, Some("tok-A")).await,
            "tool results: mnemosyne:Bearer tok-A"
        );
        assert_eq!(whoami(&mut client, None).await, expected, "{defects:?}");
    }
}

#[tokio::test]
async fn nx_images_separate_message_sends_the_images_as_a_second_user_message() {
    let d = Defects::take().await;
    for (defects, users) in [(&[][..], 1), (&["nx-images-separate-message"][..], 2)] {
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
        let user: Vec<Value> = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .cloned()
            .collect();
        assert_eq!(user.len(), users, "{defects:?}: {user:?}");
        let parts: usize = user
            .iter()
            .map(|m| m["content"].as_array().map_or(1, Vec::len))
            .sum();
        assert_eq!(parts, 2, "{user:?}");
    }
}

// ---------------------------------------------------------------- metrics

#[tokio::test]
async fn nx_token_kind_openai_names_counts_prompt_and_completion() {
    let d = Defects::take().await;
    for (defects, kind) in [
        (&[][..], "input"),
        (&["nx-token-kind-openai-names"][..], "prompt"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert!(!client.send("hi").await.unwrap().is_error());
        let text = agent.metrics.render();
        let line = format!(
            "pallas_llm_tokens_total{{agent=\"jarvis\",kind=\"{kind}\",model=\"mock-model\"}} 11"
        );
        assert!(text.contains(&line), "{defects:?}: {text}");
        assert_eq!(
            text.contains("kind=\"output\""),
            defects.is_empty(),
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn nx_metrics_openmetrics_negotiated_answers_openmetrics_to_prometheus() {
    let d = Defects::take().await;
    let ct = CancellationToken::new();
    let _stop = ct.clone().drop_guard();
    let metrics = Metrics::new();
    metrics.observe_send_message("jarvis", true, Duration::from_millis(3));
    let addr = serve(registry::router(RegistryState::new(metrics)), ct).await;
    let scrape = || async {
        let response = pallas_reference::net::builder()
            .build()
            .unwrap()
            .get(format!("http://{addr}/metrics"))
            .header("accept", "application/openmetrics-text;version=1.0.0")
            .send()
            .await
            .unwrap();
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        (content_type, response.text().await.unwrap())
    };
    let (content_type, body) = scrape().await;
    assert_eq!(content_type, "text/plain; version=0.0.4");
    assert!(!body.contains("# EOF"));
    d.set(&["nx-metrics-openmetrics-negotiated"]);
    let (content_type, body) = scrape().await;
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    assert!(
        body.contains("# TYPE pallas_send_message counter\n"),
        "{body}"
    );
    assert!(body.contains("pallas_send_message_created{"), "{body}");
}

// ---------------------------------------------------------------- a whole Pallas

/// Starts the project in `dir` bound to `0.0.0.0`; answers (the agent's listen address, the
/// status of `GET /metrics` on the agent's port, the metrics before any `get_health`).
async fn started(dir: &Path) -> (std::net::SocketAddr, u16, String) {
    let options = StartOptions {
        bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        load: LoadOptions {
            agents_config: None,
            env: Some(HashMap::new()),
        },
        watch: false,
        ready_timeout: Duration::from_secs(10),
        ..StartOptions::default()
    };
    let running = runtime::start(dir, options).await.unwrap();
    let addr = running.agent_addrs().await["research"];
    let status = pallas_reference::net::loopback_client()
        .get(format!("http://{}/metrics", runtime::loopback(addr)))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    let metrics = running.metrics().render();
    running.shutdown().await;
    (addr, status, metrics)
}

#[tokio::test]
async fn nx_whole_pallas_defects_bind_metrics_and_provider_gauge() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    // `bad-model` is not listed: the startup preflight fails.
    let dir = project(
        &format!(
            "default_model: openai.bad-model\nopenai:\n  base_url: {}\n  api_key: sk-x\n",
            llm.url
        ),
        "",
    );
    let (addr, status, metrics) = started(dir.path()).await;
    assert!(addr.ip().is_unspecified(), "{addr}");
    assert_eq!(status, 200);
    assert!(metrics.contains("pallas_llm_provider_up{provider=\"openai\"} 0"));

    d.set(&["nx-agent-binds-registry-host"]);
    let (addr, _, _) = started(dir.path()).await;
    assert!(addr.ip().is_loopback(), "{addr}");

    d.set(&["nx-agent-port-no-metrics"]);
    let (_, status, _) = started(dir.path()).await;
    assert_eq!(status, 404);

    d.set(&["nx-provider-up-set-by-health-only"]);
    let (_, _, metrics) = started(dir.path()).await;
    assert!(!metrics.contains("pallas_llm_provider_up{"), "{metrics}");
}

// ---------------------------------------------------------------- logs

#[tokio::test]
async fn nx_log_keys_stdlib_names_renames_time_level_and_logger() {
    let d = Defects::take().await;
    let line = "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"level\":\"WARN\",\"target\":\"pallas_reference::config\",\"message\":\"m\"}\n";
    let record: Value =
        serde_json::from_str(&pallas_reference::logging::seed_record(line)).unwrap();
    assert_eq!(
        (&record["time"], &record["level"], &record["logger"]),
        (
            &json!("2026-01-01T00:00:00Z"),
            &json!("WARNING"),
            &json!("pallas.config")
        )
    );
    d.set(&["nx-log-keys-stdlib-names"]);
    let record: Value =
        serde_json::from_str(&pallas_reference::logging::seed_record(line)).unwrap();
    assert!(
        record.get("time").is_none() && record.get("logger").is_none(),
        "{record}"
    );
    assert_eq!(
        (
            &record["asctime"],
            &record["levelname"],
            &record["name"],
            &record["message"]
        ),
        (
            &json!("2026-01-01T00:00:00Z"),
            &json!("WARNING"),
            &json!("pallas.config"),
            &json!("m")
        )
    );
}

/// A downstream whose only tool, `boom`, answers every call with a JSON-RPC error.
#[derive(Clone)]
struct Boom;

impl ServerHandler for Boom {
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
            "boom".to_owned(),
            "Always raises".to_owned(),
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Err(McpError::internal_error("kaboom", None))
    }
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The JSON records logged while a `send_message` calls a downstream tool that raises.
fn logged_raise() -> Vec<Value> {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ct = CancellationToken::new();
        let _stop = ct.clone().drop_guard();
        let service = StreamableHttpService::new(
            || Ok(Boom),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
        );
        let addr = serve(axum::Router::new().nest_service("/mcp", service), ct).await;
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new(
            "boomer",
            format!("http://{addr}/mcp"),
        )];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client.send("CALL_TOOL boomer__boom {}").await.unwrap();
        assert!(reply.text().contains("kaboom"), "{:?}", reply.messages);
    });
    drop(runtime);
    String::from_utf8(captured.0.lock().unwrap().clone())
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn by_target<'a>(records: &'a [Value], target: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["target"] == target).collect()
}

#[test]
fn nx_log_traceback_dropped_keeps_the_message_without_the_error() {
    let d = Defects::take_blocking();
    let records = logged_raise();
    let trace = by_target(&records, "pallas::forward::trace");
    assert_eq!(trace.len(), 1, "{records:?}");
    assert!(trace[0]["error"].as_str().unwrap().contains("kaboom"));
    d.set(&["nx-log-traceback-dropped"]);
    let records = logged_raise();
    let trace = by_target(&records, "pallas::forward::trace");
    assert_eq!(trace.len(), 1, "{records:?}");
    assert_eq!(trace[0]["message"], "downstream call raised");
    assert!(trace[0].get("error").is_none(), "{:?}", trace[0]);
    assert!(!trace[0].to_string().contains("kaboom"), "{:?}", trace[0]);
}

#[test]
fn nx_trace_logger_module_name_logs_under_the_patch_module() {
    let d = Defects::take_blocking();
    let records = logged_raise();
    assert_eq!(by_target(&records, "pallas::forward::trace").len(), 1);
    assert!(by_target(&records, "pallas::_fastagent_patch").is_empty());
    d.set(&["nx-trace-logger-module-name"]);
    let records = logged_raise();
    assert!(by_target(&records, "pallas::forward::trace").is_empty());
    let module = by_target(&records, "pallas::_fastagent_patch");
    assert_eq!(module.len(), 1, "{records:?}");
    assert!(module[0]["error"].as_str().unwrap().contains("kaboom"));
    // The file's `logger` key: the target dotted.
    let line = pallas_reference::logging::seed_record(&module[0].to_string());
    assert!(
        line.contains("\"logger\":\"pallas._fastagent_patch\""),
        "{line}"
    );
}
