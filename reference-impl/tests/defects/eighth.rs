//! The eighth set of contract mutants (`rx-…`): each test observes the same exchange with no
//! defect and with the defect, the rule holding in the first and broken in the second.
//!
//! One idea: the proof that each defect of one set of misreadings does what its row says, one
//! test per defect over the same few fixtures (a mock model, mock downstreams, a started agent,
//! a whole Pallas or the `pallas` binary); where the exchange needs more machinery, the changed
//! function itself.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::{get, post};
use pallas_reference::config::LoadOptions;
use pallas_reference::llm;
use pallas_reference::metrics::Metrics;
use pallas_reference::runtime::{self, AgentFactory, RunningPallas, StartOptions};
use pallas_reference::settings::{
    DownstreamSettings, ModelRef, Provider, ProviderSettings, Secret,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Defects;
use crate::fixtures::{McpServer, MockOpenAi, RawClient, serve, settings, start_agent};
use crate::projects::{
    NO_SERVERS, ONE_AGENT, TWO_AGENTS, load, load_with, project, published, write,
};

// ---------------------------------------------------------------- projects on disk

/// Two agents that do not depend on each other.
const TWO_INDEPENDENT: &str = "name: my-project\nnamespace: com.example.project\nregistry_port: 0\nagents:\n  research:\n    module: agents.research\n    port: 0\n  jarvis:\n    module: agents.jarvis\n    port: 0\n";

const SOME_MODEL: &str = "default_model: openai.my-model-name\n";

fn mock_model_config(llm: &MockOpenAi) -> String {
    format!(
        "default_model: openai.mock-model\nopenai:\n  base_url: {}\n",
        llm.url
    )
}

/// The value of the series `line` (`name{labels}`) in `text`, if present.
fn series(text: &str, line: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(line))
        .and_then(|rest| rest.trim().parse().ok())
}

/// How to start a whole Pallas in process.
#[derive(Clone)]
struct Pallas {
    agent: Option<String>,
    ready_timeout: Duration,
    factory: Option<AgentFactory>,
}

impl Pallas {
    fn new() -> Self {
        Self {
            agent: None,
            ready_timeout: Duration::from_secs(10),
            factory: None,
        }
    }

    async fn start(&self, dir: &Path) -> Result<RunningPallas, runtime::RuntimeError> {
        self.start_with(dir, &[]).await
    }

    async fn start_with(
        &self,
        dir: &Path,
        env: &[(&str, &str)],
    ) -> Result<RunningPallas, runtime::RuntimeError> {
        let options = StartOptions {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            agent: self.agent.clone(),
            load: LoadOptions {
                agents_config: None,
                env: Some(
                    env.iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
            },
            watch: false,
            ready_timeout: self.ready_timeout,
            agent_factory: self.factory.clone(),
            ..StartOptions::default()
        };
        runtime::start(dir, options).await
    }
}

/// The agents a running Pallas serves, and those its registry lists.
async fn served_and_listed(running: &RunningPallas) -> (BTreeSet<String>, BTreeSet<String>) {
    let served = running.agent_addrs().await.into_keys().collect();
    let listed = running.registry().document()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let name = entry["server"]["name"].as_str().unwrap();
            name.rsplit('/').next().unwrap().to_owned()
        })
        .collect();
    (served, listed)
}

fn names(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// An agent `jarvis` on the mock model with the mock downstream `argos`.
async fn jarvis_with_argos() -> (MockOpenAi, McpServer, crate::fixtures::Agent) {
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
    let agent = start_agent(s).await;
    (llm, argos, agent)
}

async fn health(client: &mut RawClient) -> Value {
    let reply = client
        .call("get_health", json!({}), None, None)
        .await
        .unwrap();
    serde_json::from_str(&reply.text()).unwrap()
}

/// Waits until `what` holds, for at most 10 s.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---------------------------------------------------------------- registry

#[tokio::test]
async fn rx_remotes_type_http_names_the_remote_http() {
    let d = Defects::take().await;
    let dir = project(ONE_AGENT, &[("research", NO_SERVERS)], SOME_MODEL);
    let remote = |dir: &Path| published(&load(dir), 0).to_json()["server"]["remotes"][0].clone();
    assert_eq!(remote(dir.path())["type"], "streamable-http");
    d.set(&["rx-remotes-type-http"]);
    let broken = remote(dir.path());
    assert_eq!(broken["type"], "http");
    assert_eq!(broken["url"], "http://localhost:8250/mcp");
}

#[tokio::test]
async fn rx_registry_hides_unhealthy_agents_leaves_out_an_agent_that_does_not_answer() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_INDEPENDENT,
        &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
        &mock_model_config(&llm),
    );
    // `research` serves, but never answers `initialize`.
    let inner = runtime::default_agent_factory();
    let factory: AgentFactory = Arc::new(move |settings, deps, shutdown| {
        if settings.name == "research" {
            axum::Router::new().route(
                "/mcp",
                axum::routing::any(|| async { axum::http::StatusCode::SERVICE_UNAVAILABLE }),
            )
        } else {
            inner(settings, deps, shutdown)
        }
    });
    let pallas = Pallas {
        ready_timeout: Duration::from_millis(300),
        factory: Some(factory),
        ..Pallas::new()
    };
    for (defects, listed) in [
        (&[][..], names(&["research", "jarvis"])),
        (
            &["rx-registry-hides-unhealthy-agents"][..],
            names(&["jarvis"]),
        ),
    ] {
        d.set(defects);
        let running = pallas.start(dir.path()).await.unwrap();
        let (served, seen) = served_and_listed(&running).await;
        running.shutdown().await;
        assert_eq!(served, names(&["research", "jarvis"]), "{defects:?}");
        assert_eq!(seen, listed, "{defects:?}");
    }
}

#[tokio::test]
async fn rx_registry_name_without_namespace_publishes_the_bare_slug() {
    let d = Defects::take().await;
    let without = project(
        "name: my-project\nregistry_port: 0\nagents:\n  tech_research:\n    module: agents.tech_research\n    port: 0\n",
        &[("tech_research", NO_SERVERS)],
        SOME_MODEL,
    );
    let with = project(ONE_AGENT, &[("research", NO_SERVERS)], SOME_MODEL);
    let name = |dir: &Path| published(&load(dir), 0).name;
    assert_eq!(name(without.path()), "local.my-project/tech-research");
    d.set(&["rx-registry-name-without-namespace"]);
    assert_eq!(name(without.path()), "tech-research");
    // A configured namespace is used as specified.
    assert_eq!(name(with.path()), "com.example.project/research");
}

// ---------------------------------------------------------------- configuration and startup

#[tokio::test]
async fn rx_empty_base_url_placeholder_no_default_uses_an_empty_base_url() {
    let d = Defects::take().await;
    let dir = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        "default_model: openai.mock-model\n",
    );
    write(
        dir.path(),
        "fastagent.secrets.yaml",
        "openai:\n  api_key: sk-test\n  base_url: \"${OPENAI_BASE_URL}\"\n",
    );
    let base_url = |env: &[(&str, &str)]| {
        load_with(dir.path(), env).agents[0]
            .settings
            .provider
            .clone()
    };
    assert_eq!(base_url(&[]).base_url, "https://api.openai.com/v1");
    d.set(&["rx-empty-base-url-placeholder-no-default"]);
    let provider = base_url(&[]);
    assert_eq!(provider.base_url, "");
    let http = pallas_reference::net::builder().build().unwrap();
    let model = ModelRef {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
    };
    let status = llm::preflight(&provider, &model, &http).await;
    assert!(!status.is_ok(), "{status:?}");
    // With the variable set, its value is the base URL.
    let llm = MockOpenAi::start().await;
    let provider = base_url(&[("OPENAI_BASE_URL", &llm.url)]);
    assert_eq!(provider.base_url, llm.url);
    assert!(llm::preflight(&provider, &model, &http).await.is_ok());
}

#[tokio::test]
async fn rx_unset_header_var_blocks_agent_leaves_its_agent_unserved_but_listed() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_INDEPENDENT,
        &[("research", "servers: [neo4j]\n"), ("jarvis", NO_SERVERS)],
        &format!(
            "{}mcp:\n  servers:\n    neo4j:\n      transport: http\n      url: https://neo4j.example/mcp\n      headers:\n        Authorization: \"Bearer ${{NEO4J_TOKEN}}\"\n",
            mock_model_config(&llm)
        ),
    );
    for (defects, served) in [
        (&[][..], names(&["research", "jarvis"])),
        (
            &["rx-unset-header-var-blocks-agent"][..],
            names(&["jarvis"]),
        ),
    ] {
        d.set(defects);
        let running = Pallas::new().start(dir.path()).await.unwrap();
        let (seen, listed) = served_and_listed(&running).await;
        running.shutdown().await;
        assert_eq!(seen, served, "{defects:?}");
        assert_eq!(listed, names(&["research", "jarvis"]), "{defects:?}");
    }
    // With the variable set, both agents serve.
    let running = Pallas::new()
        .start_with(dir.path(), &[("NEO4J_TOKEN", "tok")])
        .await
        .unwrap();
    let (seen, _) = served_and_listed(&running).await;
    running.shutdown().await;
    assert_eq!(seen, names(&["research", "jarvis"]));
}

#[tokio::test]
async fn rx_unknown_agent_name_starts_all_serves_everything_for_a_typo() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_INDEPENDENT,
        &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
        &mock_model_config(&llm),
    );
    let typo = Pallas {
        agent: Some("reserch".into()),
        ..Pallas::new()
    };
    let error = typo.start(dir.path()).await.unwrap_err();
    assert!(
        matches!(error, runtime::RuntimeError::UnknownAgent { .. }),
        "{error}"
    );
    d.set(&["rx-unknown-agent-name-starts-all"]);
    let running = typo.start(dir.path()).await.unwrap();
    let registry = running.registry_addr;
    let (served, _) = served_and_listed(&running).await;
    running.shutdown().await;
    assert!(registry.is_some());
    assert_eq!(served, names(&["research", "jarvis"]));
    // A valid name starts that agent alone, without registry.
    let one = Pallas {
        agent: Some("research".into()),
        ..Pallas::new()
    };
    let running = one.start(dir.path()).await.unwrap();
    let registry = running.registry_addr;
    let (served, _) = served_and_listed(&running).await;
    running.shutdown().await;
    assert!(registry.is_none());
    assert_eq!(served, names(&["research"]));
}

#[tokio::test]
async fn rx_readiness_probe_uses_public_host_waits_out_the_timeout() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let agents = TWO_AGENTS.replace(
        "registry_port: 0\n",
        "registry_port: 0\nhost: pallas-host.invalid\n",
    );
    let dir = project(
        &agents,
        &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
        &mock_model_config(&llm),
    );
    let pallas = Pallas {
        ready_timeout: Duration::from_millis(1500),
        ..Pallas::new()
    };
    for (defects, waits) in [
        (&[][..], false),
        (&["rx-readiness-probe-uses-public-host"][..], true),
    ] {
        d.set(defects);
        let started = Instant::now();
        let running = pallas.start(dir.path()).await.unwrap();
        let took = started.elapsed();
        let (served, _) = served_and_listed(&running).await;
        running.shutdown().await;
        assert_eq!(served, names(&["research", "jarvis"]), "{defects:?}");
        assert_eq!(
            took >= Duration::from_millis(1500),
            waits,
            "{defects:?}: {took:?}"
        );
    }
}

// ---------------------------------------------------------------- get_health

#[tokio::test]
async fn rx_health_json_in_structured_content_answers_a_sentence_as_text() {
    let d = Defects::take().await;
    for (defects, structured) in [
        (&[][..], false),
        (&["rx-health-json-in-structured-content"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let result = &reply.result()["result"];
        assert_eq!(result["content"].as_array().unwrap().len(), 1);
        let parsed = serde_json::from_str::<Value>(&reply.text());
        assert_eq!(parsed.is_err(), structured, "{defects:?}: {result}");
        if structured {
            assert_eq!(reply.text(), "Agent healthy");
            assert_eq!(result["structuredContent"]["status"], "ok");
        } else {
            assert_eq!(parsed.unwrap()["status"], "ok");
            assert!(result.get("structuredContent").is_none());
        }
        let tools = client.request("tools/list", json!({}), None).await.unwrap();
        let listed = tools.result()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "get_health")
            .unwrap()
            .clone();
        assert_eq!(listed.get("outputSchema").is_some(), structured);
    }
}

#[tokio::test]
async fn rx_health_requires_arguments_object_refuses_a_call_without_arguments() {
    let d = Defects::take().await;
    for (defects, refused) in [
        (&[][..], false),
        (&["rx-health-requires-arguments-object"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        // `session.call_tool("get_health")`: no `arguments` at all.
        let bare = client
            .request("tools/call", json!({"name": "get_health"}), None)
            .await
            .unwrap();
        assert_eq!(
            bare.result().get("error").is_some(),
            refused,
            "{defects:?}: {:?}",
            bare.messages
        );
        if !refused {
            let report: Value = serde_json::from_str(&bare.text()).unwrap();
            assert_eq!(report["status"], "ok");
        }
        // `"arguments": {}` is answered either way.
        assert_eq!(health(&mut client).await["status"], "ok");
    }
}

#[tokio::test]
async fn rx_llm_reprobe_by_completion_asks_the_model_for_a_token() {
    let d = Defects::take().await;
    for (defects, lists, completions) in [
        (&[][..], 1, 0),
        (&["rx-llm-reprobe-by-completion"][..], 0, 1),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert_eq!(health(&mut client).await["status"], "ok");
        assert_eq!(*llm.state.list_calls.lock().unwrap(), lists, "{defects:?}");
        let requests = llm.requests();
        assert_eq!(requests.len(), completions, "{defects:?}: {requests:?}");
        if let Some(request) = requests.first() {
            assert_eq!(request["max_tokens"], 1);
            assert_eq!(request["messages"][0]["content"], "ping");
        }
        assert!(
            agent
                .metrics
                .render()
                .contains("pallas_llm_provider_up{provider=\"openai\"} 1")
        );
    }
}

#[tokio::test]
async fn rx_initialize_probe_minimal_params_makes_an_sdk_server_unreachable() {
    let d = Defects::take().await;
    for (defects, status) in [
        (&[][..], "ok"),
        (&["rx-initialize-probe-minimal-params"][..], "degraded"),
    ] {
        d.set(defects);
        let (llm, argos, agent) = jarvis_with_argos().await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let report = health(&mut client).await;
        assert_eq!(report["status"], status, "{defects:?}: {report}");
        if status == "degraded" {
            assert_eq!(report["message"], "Unreachable: argos");
        }
        let probe = argos
            .journal
            .records()
            .into_iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"));
        assert!(probe.is_some(), "the probe reached the server");
        // A lenient, hand-written server answers the minimal `initialize` too.
        let (lenient, ct) = slow_server(Duration::ZERO).await;
        let _stop = ct.drop_guard();
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &lenient)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert_eq!(health(&mut client).await["status"], "ok", "{defects:?}");
    }
}

/// A downstream that answers `initialize` after `delay`.
async fn slow_server(delay: Duration) -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new().route(
        "/mcp",
        post(move || async move {
            tokio::time::sleep(delay).await;
            Json(json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "slow", "version": "0"}}}))
        }),
    );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}/mcp"), ct)
}

#[tokio::test]
async fn rx_slow_probe_reported_degraded_degrades_a_reachable_slow_server() {
    let d = Defects::take().await;
    let (url, ct) = slow_server(Duration::from_millis(1200)).await;
    let _stop = ct.drop_guard();
    for (defects, slow) in [
        (&[][..], false),
        (&["rx-slow-probe-reported-degraded"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let report = health(&mut client).await;
        if slow {
            assert_eq!(report["status"], "degraded", "{report}");
            let message = report["message"].as_str().unwrap();
            assert!(
                message.starts_with("argos slow (1.") && message.ends_with("s)"),
                "{message}"
            );
        } else {
            assert_eq!(report["status"], "ok", "{report}");
        }
        let text = agent.metrics.render();
        assert_eq!(
            series(
                &text,
                "pallas_downstream_up{agent=\"jarvis\",server=\"argos\"}"
            ),
            Some(1.0),
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn rx_health_queued_behind_send_message_waits_for_a_running_message() {
    let d = Defects::take().await;
    for (defects, queued) in [
        (&[][..], false),
        (&["rx-health-queued-behind-send-message"][..], true),
    ] {
        d.set(defects);
        let (_llm, argos, agent) = jarvis_with_argos().await;
        let client = RawClient::connect(&agent.url).await.unwrap();
        let mut sender = client.fork(50);
        let send = tokio::spawn(async move {
            sender
                .send("CALL_TOOL argos__slow {\"ms\": 1500}")
                .await
                .unwrap()
        });
        until("the downstream call started", || {
            !argos.journal.calls().is_empty()
        })
        .await;
        let mut checker = client.fork(90);
        let started = Instant::now();
        let report = health(&mut checker).await;
        let took = started.elapsed();
        assert_eq!(report["status"], "ok");
        assert_eq!(
            took > Duration::from_millis(700),
            queued,
            "{defects:?}: {took:?}"
        );
        assert!(!send.await.unwrap().is_error());
    }
}

#[tokio::test]
async fn rx_probe_forwards_bearer_to_all_servers_sends_the_health_bearer_to_a_public_server() {
    let d = Defects::take().await;
    for (defects, seen) in [
        (&[][..], None),
        (
            &["rx-probe-forwards-bearer-to-all-servers"][..],
            Some("Bearer tok-h".to_owned()),
        ),
    ] {
        d.set(defects);
        let (_llm, argos, agent) = jarvis_with_argos().await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, Some("tok-h"))
            .await
            .unwrap();
        assert!(!reply.is_error());
        let records = argos.journal.records();
        let probe = records
            .iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .unwrap();
        assert_eq!(probe.authorization, seen, "{defects:?}");
        let delete = records.iter().find(|r| r.method == "DELETE").unwrap();
        assert_eq!(delete.authorization, seen, "{defects:?}");
        // A `get_health` without a bearer leaks nothing.
        let before = records.len();
        assert_eq!(health(&mut client).await["status"], "ok");
        let later = argos.journal.records();
        assert!(later[before..].iter().all(|r| r.authorization.is_none()));
    }
}

// ---------------------------------------------------------------- metrics

#[tokio::test]
async fn rx_agent_info_as_info_metric_exposes_pallas_agent_info_info() {
    let d = Defects::take().await;
    for (defects, name) in [
        (&[][..], "pallas_agent_info"),
        (
            &["rx-agent-info-as-info-metric"][..],
            "pallas_agent_info_info",
        ),
    ] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics.set_agent_info("jarvis", 8201);
        let text = metrics.render();
        assert_eq!(
            series(&text, &format!("{name}{{agent=\"jarvis\",port=\"8201\"}}")),
            Some(1.0),
            "{defects:?}: {text}"
        );
        assert!(text.contains(&format!("# TYPE {name} gauge")), "{text}");
        if name != "pallas_agent_info" {
            assert!(!text.contains("pallas_agent_info{"), "{text}");
        }
    }
}

/// Starts `send_message` of `CALL_TOOL argos__{tool}` (with a progress token) as request 77 and
/// cancels it once the downstream call started; returns when its stream ended.
async fn cancelled_send(agent: &crate::fixtures::Agent, argos: &McpServer, tool: &str) {
    let client = RawClient::connect(&agent.url).await.unwrap();
    let mut caller = client.fork(77);
    let message = format!("CALL_TOOL argos__{tool}");
    let call = tokio::spawn(async move {
        caller
            .call(
                "send_message",
                json!({ "message": message }),
                Some(json!("c")),
                None,
            )
            .await
    });
    until("the downstream call started", || {
        !argos.journal.calls().is_empty()
    })
    .await;
    client
        .notify("notifications/cancelled", json!({"requestId": 77}))
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), call).await;
    assert!(ended.is_ok(), "the cancelled call's stream did not end");
}

#[tokio::test]
async fn rx_cancelled_send_message_not_counted_records_nothing_for_a_cancelled_call() {
    let d = Defects::take().await;
    for (defects, counted) in [
        (&[][..], true),
        (&["rx-cancelled-send-message-not-counted"][..], false),
    ] {
        d.set(defects);
        let (_llm, argos, agent) = jarvis_with_argos().await;
        agent.metrics.set_agent_info("jarvis", 1);
        cancelled_send(&agent, &argos, "hang {}").await;
        until("the downstream call was cancelled", || {
            argos.journal.count("POST", Some("notifications/cancelled")) > 0
        })
        .await;
        let error = "pallas_send_message_total{agent=\"jarvis\",outcome=\"error\"}";
        let count = "pallas_send_message_duration_seconds_count{agent=\"jarvis\"}";
        if counted {
            until("the cancelled call was counted", || {
                series(&agent.metrics.render(), error) == Some(1.0)
            })
            .await;
        } else {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let text = agent.metrics.render();
        let expected = if counted { 1.0 } else { 0.0 };
        assert_eq!(series(&text, error), Some(expected), "{defects:?}: {text}");
        assert_eq!(series(&text, count), Some(expected), "{defects:?}: {text}");
        assert_eq!(
            series(
                &text,
                "pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"}"
            ),
            Some(0.0)
        );
    }
}

#[tokio::test]
async fn rx_duration_histogram_outcome_label_adds_an_outcome_label() {
    let d = Defects::take().await;
    for (defects, ok_count, error_count) in [
        (
            &[][..],
            "pallas_send_message_duration_seconds_count{agent=\"jarvis\"}",
            None,
        ),
        (
            &["rx-duration-histogram-outcome-label"][..],
            "pallas_send_message_duration_seconds_count{agent=\"jarvis\",outcome=\"ok\"}",
            Some("pallas_send_message_duration_seconds_count{agent=\"jarvis\",outcome=\"error\"}"),
        ),
    ] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics.set_agent_info("jarvis", 8201);
        let calls = metrics.agent_series("jarvis", "mock-model");
        calls.observe_send_message(true, Duration::from_millis(2500));
        let text = metrics.render();
        assert_eq!(series(&text, ok_count), Some(1.0), "{defects:?}: {text}");
        // The error series appears only with the first failure.
        if let Some(error_count) = error_count {
            assert_eq!(series(&text, error_count), None, "{text}");
            calls.observe_send_message(false, Duration::from_millis(10));
            assert_eq!(series(&metrics.render(), error_count), Some(1.0));
        }
        assert_eq!(
            series(
                &text,
                "pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"}"
            ),
            Some(1.0)
        );
    }
}

#[tokio::test]
async fn rx_private_registry_drops_process_metrics_has_no_process_series() {
    let d = Defects::take().await;
    for (defects, process) in [
        (&[][..], true),
        (&["rx-private-registry-drops-process-metrics"][..], false),
    ] {
        d.set(defects);
        let text = Metrics::new().render();
        for name in ["process_resident_memory_bytes", "process_cpu_seconds_total"] {
            assert_eq!(text.contains(name), process, "{defects:?}: {text}");
        }
        assert_eq!(series(&text, "pallas_up"), Some(1.0));
    }
}

#[tokio::test]
async fn rx_health_gauge_copies_daedalus_labels_adds_an_instance_label() {
    let d = Defects::take().await;
    let dir = project(ONE_AGENT, &[("research", NO_SERVERS)], SOME_MODEL);
    for (defects, line) in [
        (&[][..], "pallas_agent_health_status{agent=\"jarvis\"}"),
        (
            &["rx-health-gauge-copies-daedalus-labels"][..],
            "pallas_agent_health_status{agent=\"jarvis\",instance=\"my-project\"}",
        ),
    ] {
        d.set(defects);
        load(dir.path());
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert_eq!(health(&mut client).await["status"], "ok");
        let text = agent.metrics.render();
        assert_eq!(series(&text, line), Some(1.0), "{defects:?}: {text}");
    }
}

// ---------------------------------------------------------------- the pallas binary

/// Runs the `pallas` binary on a one-agent project with `defects` and `env` until it is ready,
/// stops it with SIGTERM and returns its exit code and its stderr lines.
fn run_and_terminate(defects: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<String>) {
    let dir = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        "default_model: openai.mock-model\nopenai:\n  base_url: http://127.0.0.1:9/v1\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_pallas"))
        .current_dir(dir.path())
        .args(["--bind", "127.0.0.1", "--no-watch"])
        .env("PALLAS_DEFECTS", defects.join(","))
        .env("PALLAS_LOG_FILE", dir.path().join("pallas.log"))
        .env_remove("PALLAS_LOG_STDERR")
        .env_remove("PALLAS_LOG_LEVEL")
        .env_remove("PALLAS_ROOT_LOG_LEVEL")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no ready line: {lines:?}"));
        let ready = line.starts_with("pallas ready:");
        lines.push(line);
        if ready {
            break;
        }
    }
    // The ready record follows the ready line.
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    lines.extend(rx.iter());
    (status.code(), lines)
}

#[test]
fn rx_stderr_handler_plain_text_writes_text_lines_to_stderr() {
    let d = Defects::take_blocking();
    let json_ready = |lines: &[String]| {
        lines.iter().any(|line| {
            serde_json::from_str::<Value>(line).is_ok_and(|record| {
                record["message"] == "pallas ready" && record["level"] == "INFO"
            })
        })
    };
    let text_ready = |lines: &[String]| {
        lines
            .iter()
            .any(|line| line.starts_with("INFO pallas") && line.ends_with(": pallas ready"))
    };
    let (code, lines) = run_and_terminate(&[], &[("PALLAS_LOG_STDERR", "1")]);
    assert_eq!(code, Some(0));
    assert!(json_ready(&lines) && !text_ready(&lines), "{lines:?}");
    let defects = ["rx-stderr-handler-plain-text"];
    d.set(&["rx-stderr-handler-plain-text"]);
    let (code, lines) = run_and_terminate(&defects, &[("PALLAS_LOG_STDERR", "1")]);
    assert_eq!(code, Some(0));
    assert!(!json_ready(&lines) && text_ready(&lines), "{lines:?}");
    // Without PALLAS_LOG_STDERR, stderr carries no log record either way.
    let (_, lines) = run_and_terminate(&defects, &[]);
    assert!(!json_ready(&lines) && !text_ready(&lines), "{lines:?}");
}

#[test]
fn rx_sigterm_exits_with_traceback_exits_1_on_sigterm() {
    let d = Defects::take_blocking();
    let (code, lines) = run_and_terminate(&[], &[]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("Traceback")), "{lines:?}");
    let defects = ["rx-sigterm-exits-with-traceback"];
    d.set(&["rx-sigterm-exits-with-traceback"]);
    let (code, lines) = run_and_terminate(&defects, &[]);
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("Traceback")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("CancelledError")),
        "{lines:?}"
    );
}

// ---------------------------------------------------------------- send_message

#[tokio::test]
async fn rx_empty_text_dropped_with_images_sends_images_alone() {
    let d = Defects::take().await;
    for (defects, empty_text) in [
        (&[][..], vec!["text", "image_url"]),
        (
            &["rx-empty-text-dropped-with-images"][..],
            vec!["image_url"],
        ),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.capabilities.vision = true;
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let kinds = |request: &Value| -> Vec<String> {
            let user = request["messages"]
                .as_array()
                .unwrap()
                .iter()
                .rfind(|m| m["role"] == "user")
                .unwrap()
                .clone();
            user["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["type"].as_str().unwrap().to_owned())
                .collect()
        };
        for (message, expected) in [
            ("", empty_text.clone()),
            ("look", vec!["text", "image_url"]),
        ] {
            let reply = client
                .call(
                    "send_message",
                    json!({"message": message, "images": [{"data": "AAAA", "mime_type": "image/png"}]}),
                    None,
                    None,
                )
                .await
                .unwrap();
            assert!(!reply.is_error(), "{:?}", reply.messages);
            let request = llm.requests().pop().unwrap();
            assert_eq!(kinds(&request), expected, "{defects:?} {message:?}");
        }
    }
}

#[tokio::test]
async fn rx_json_response_mode_drops_progress_answers_one_json_body() {
    let d = Defects::take().await;
    for (defects, notified) in [
        (&[][..], true),
        (&["rx-json-response-mode-drops-progress"][..], false),
    ] {
        d.set(defects);
        let (_llm, _argos, agent) = jarvis_with_argos().await;
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
        assert_eq!(reply.text(), "tool results: {}");
        assert_eq!(
            !reply.progress().is_empty(),
            notified,
            "{defects:?}: {:?}",
            reply.messages
        );
        if !notified {
            assert_eq!(reply.messages.len(), 1);
        }
    }
}

#[tokio::test]
async fn rx_cancel_does_not_stop_loop_runs_the_cancelled_loop_to_its_end() {
    let d = Defects::take().await;
    for (defects, stops) in [
        (&[][..], true),
        (&["rx-cancel-does-not-stop-loop"][..], false),
    ] {
        d.set(defects);
        let (llm, argos, agent) = jarvis_with_argos().await;
        cancelled_send(&agent, &argos, "slow {\"ms\": 600}").await;
        if stops {
            until("the downstream call was cancelled", || {
                argos.journal.count("POST", Some("notifications/cancelled")) > 0
            })
            .await;
            tokio::time::sleep(Duration::from_millis(900)).await;
            assert_eq!(llm.requests().len(), 1, "{defects:?}");
        } else {
            // The model is asked again with the tool's result.
            until("the loop's second model turn", || llm.requests().len() == 2).await;
            assert_eq!(
                argos.journal.count("POST", Some("notifications/cancelled")),
                0
            );
        }
    }
}

#[tokio::test]
async fn rx_default_temperature_injected_sends_a_temperature_nobody_set() {
    let d = Defects::take().await;
    for (defects, default) in [
        (&[][..], None),
        (&["rx-default-temperature-injected"][..], Some(0.7)),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert!(!client.send("hi").await.unwrap().is_error());
        let request = llm.requests().pop().unwrap();
        assert_eq!(
            request.get("temperature").and_then(Value::as_f64),
            default,
            "{defects:?}: {request}"
        );
        // An agent with its own sampling parameters sends them.
        let mut s = settings("jarvis", &llm.url);
        s.request_params.temperature = Some(0.2);
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert!(!client.send("hi").await.unwrap().is_error());
        let request = llm.requests().pop().unwrap();
        assert_eq!(request["temperature"], 0.2);
    }
}

#[tokio::test]
async fn rx_auth_middleware_on_pallas_tools_refuses_a_chat_without_bearer() {
    let d = Defects::take().await;
    for (defects, refused) in [
        (&[][..], false),
        (&["rx-auth-middleware-on-pallas-tools"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let anonymous = client.send("hi").await.unwrap();
        assert_eq!(anonymous.status == 401, refused, "{defects:?}");
        let name = pallas_reference::agent::tools::history_prompt_name("jarvis");
        let prompt = client
            .request("prompts/get", json!({"name": name}), None)
            .await
            .unwrap();
        assert_eq!(prompt.status == 401, refused, "{defects:?}");
        // A bearer opens both; `get_health` needs none.
        let with_bearer = client
            .call("send_message", json!({"message": "hi"}), None, Some("tok"))
            .await
            .unwrap();
        assert_eq!(with_bearer.status, 200);
        assert_eq!(with_bearer.text(), "echo: hi (images: 0)");
        assert_eq!(health(&mut client).await["status"], "ok");
    }
}

/// An Anthropic API that knows `claude-sonnet-4-5` and accepts only `x-api-key: sk-ant` with an
/// `anthropic-version`.
async fn strict_anthropic() -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new().route(
        "/v1/models/{model}",
        get(|headers: axum::http::HeaderMap| async move {
            let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
            if key == Some("sk-ant") && headers.contains_key("anthropic-version") {
                (
                    axum::http::StatusCode::OK,
                    Json(json!({"id": "claude-sonnet-4-5", "type": "model"})),
                )
            } else {
                (
                    axum::http::StatusCode::UNAUTHORIZED,
                    Json(
                        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
                    ),
                )
            }
        }),
    );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}"), ct)
}

#[tokio::test]
async fn rx_anthropic_preflight_bearer_auth_gets_a_valid_key_rejected() {
    let d = Defects::take().await;
    let (url, ct) = strict_anthropic().await;
    let _stop = ct.drop_guard();
    let http = pallas_reference::net::builder().build().unwrap();
    let mut keyed = ProviderSettings::new(&url);
    keyed.api_key = Some(Secret::new("sk-ant"));
    let sonnet = ModelRef {
        provider: Provider::Anthropic,
        model: "claude-sonnet-4-5".into(),
    };
    assert!(llm::preflight(&keyed, &sonnet, &http).await.is_ok());
    d.set(&["rx-anthropic-preflight-bearer-auth"]);
    let status = llm::preflight(&keyed, &sonnet, &http).await;
    assert!(!status.is_ok(), "{status:?}");
}

#[tokio::test]
async fn rx_shared_scope_history_not_kept_forgets_the_first_exchange() {
    let d = Defects::take().await;
    for (defects, second_sees, history) in [
        (&[][..], 4, 4),
        (&["rx-shared-scope-history-not-kept"][..], 2, 2),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert!(!client.send("one").await.unwrap().is_error());
        assert!(!client.send("two").await.unwrap().is_error());
        let request = llm.requests().pop().unwrap();
        // The instruction, then the conversation the model is given.
        let given = request["messages"].as_array().unwrap().len();
        assert_eq!(given, second_sees, "{defects:?}: {request}");
        let name = pallas_reference::agent::tools::history_prompt_name("jarvis");
        let get = client
            .request("prompts/get", json!({"name": name}), None)
            .await
            .unwrap();
        let messages = get.result()["result"]["messages"].as_array().unwrap().len();
        assert_eq!(messages, history, "{defects:?}: {:?}", get.messages);
    }
}

#[tokio::test]
async fn rx_final_result_last_turn_only_drops_what_the_model_said_beside_its_tool_calls() {
    let d = Defects::take().await;
    for (defects, kept) in [
        (&[][..], true),
        (&["rx-final-result-last-turn-only"][..], false),
    ] {
        d.set(defects);
        let (llm, _argos, agent) = jarvis_with_argos().await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .send("SAY Let me look into that...\nCALL_TOOL argos__search_web {}")
            .await
            .unwrap();
        assert!(!reply.is_error(), "{defects:?}");
        let text = reply.text();
        assert!(text.contains("tool results:"), "{defects:?}: {text}");
        assert_eq!(
            text.contains("Let me look into that..."),
            kept,
            "{defects:?}: {text}"
        );
        // The model did say it: the second request carries it in the assistant turn.
        assert_eq!(llm.requests().len(), 2);
    }
}
