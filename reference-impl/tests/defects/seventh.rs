//! The seventh set of contract mutants (`qx-…`): each test observes the same exchange with no
//! defect and with the defect, the rule holding in the first and broken in the second.
//!
//! One idea: the proof that each defect of one set of misreadings does what its row says, one
//! test per defect over the same few fixtures (a mock model, mock downstreams, a started agent
//! or a whole Pallas); where the exchange needs more machinery, the changed function itself.

use std::collections::HashMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::routing::get;
use pallas_reference::config::LoadOptions;
use pallas_reference::llm;
use pallas_reference::logging::LogSettings;
use pallas_reference::metrics::{Metrics, TokenUsage};
use pallas_reference::registry::RegistryState;
use pallas_reference::runtime::{self, AgentFactory, RunningPallas, StartOptions};
use pallas_reference::settings::{
    AgentSettings, DownstreamSettings, ModelRef, Provider, ProviderSettings,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Level;

use crate::Defects;
use crate::fixtures::{
    McpServer, MockOpenAi, RawClient, blackhole_url, refused_url, serve, settings, start_agent,
};
use crate::projects::{
    NO_SERVERS, ONE_AGENT, TWO_AGENTS, load, load_with, project, published, write,
};

// ---------------------------------------------------------------- projects on disk

/// The settings of the first agent of the project in `dir`.
fn first_agent(dir: &Path) -> AgentSettings {
    (*load(dir).agents[0].settings).clone()
}

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

/// The header `name` of the first server of `settings`.
fn header(settings: &AgentSettings, name: &str) -> Option<String> {
    settings.servers[0]
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.expose().to_owned())
}

// ---------------------------------------------------------------- registry

#[tokio::test]
async fn qx_schema_on_first_entry_only_drops_schema_from_later_entries() {
    let d = Defects::take().await;
    let dir = project(
        TWO_AGENTS,
        &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
        "default_model: openai.my-model-name\n",
    );
    let deployment = load(dir.path());
    let registry = RegistryState::new(Metrics::new());
    registry.publish(published(&deployment, 0));
    registry.publish(published(&deployment, 1));
    let schemas = |registry: &RegistryState| -> Vec<bool> {
        registry.document()["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["server"].get("$schema").is_some())
            .collect()
    };
    assert_eq!(schemas(&registry), [true, true]);
    d.set(&["qx-schema-on-first-entry-only"]);
    assert_eq!(schemas(&registry), [true, false]);
    let second = registry.document()["servers"][1]["server"].clone();
    assert_eq!(second["name"], "com.example.project/jarvis");
    assert_eq!(second["remotes"][0]["url"], "http://localhost:8250/mcp");
}

#[tokio::test]
async fn qx_remotes_url_trailing_slash_advertises_mcp_slash() {
    let d = Defects::take().await;
    let dir = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        "default_model: openai.my-model-name\n",
    );
    let url =
        |dir: &Path| published(&load(dir), 0).to_json()["server"]["remotes"][0]["url"].clone();
    assert_eq!(url(dir.path()), "http://localhost:8250/mcp");
    d.set(&["qx-remotes-url-trailing-slash"]);
    assert_eq!(url(dir.path()), "http://localhost:8250/mcp/");
}

// ---------------------------------------------------------------- metrics

#[tokio::test]
async fn qx_duration_observed_in_milliseconds_records_a_thousand_times_the_seconds() {
    let d = Defects::take().await;
    for (defects, sum, in_five_seconds) in [
        (&[][..], 2.5, 1.0),
        (&["qx-duration-observed-in-milliseconds"][..], 2500.0, 0.0),
    ] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics
            .agent_series("jarvis", "mock-model")
            .observe_send_message(true, Duration::from_millis(2500));
        let text = metrics.render();
        let value = |line: &str| series(&text, line);
        assert_eq!(
            value("pallas_send_message_duration_seconds_sum{agent=\"jarvis\"}"),
            Some(sum),
            "{defects:?}: {text}"
        );
        assert_eq!(
            value("pallas_send_message_duration_seconds_bucket{agent=\"jarvis\",le=\"5\"}"),
            Some(in_five_seconds),
            "{defects:?}: {text}"
        );
        assert_eq!(
            value("pallas_send_message_duration_seconds_count{agent=\"jarvis\"}"),
            Some(1.0)
        );
        assert_eq!(
            value("pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"}"),
            Some(1.0)
        );
    }
}

#[tokio::test]
async fn qx_reasoning_tokens_folded_into_output_has_no_reasoning_series() {
    let d = Defects::take().await;
    // OpenAI's usage: `completion_tokens` 5, of which 2 reasoning.
    let usage = TokenUsage {
        input: 11,
        output: 5,
        reasoning: 2,
        ..TokenUsage::default()
    };
    for (defects, reasoning) in [
        (&[][..], Some(2.0)),
        (&["qx-reasoning-tokens-folded-into-output"][..], None),
    ] {
        d.set(defects);
        let metrics = Metrics::new();
        metrics
            .agent_series("jarvis", "mock-model")
            .observe_llm_turn(&usage);
        let text = metrics.render();
        let tokens = |kind: &str| {
            series(
                &text,
                &format!(
                    "pallas_llm_tokens_total{{agent=\"jarvis\",kind=\"{kind}\",model=\"mock-model\"}}"
                ),
            )
        };
        assert_eq!(tokens("reasoning"), reasoning, "{defects:?}: {text}");
        assert_eq!(tokens("output"), Some(5.0), "{defects:?}: {text}");
        assert_eq!(tokens("input"), Some(11.0), "{defects:?}: {text}");
        assert!(text.contains("pallas_llm_turns_total{agent=\"jarvis\",model=\"mock-model\"} 1"));
    }
}

#[tokio::test]
async fn qx_model_label_from_default_model_labels_the_default_not_the_model_called() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        ONE_AGENT,
        &[("research", "model: openai.mock-model\nservers: []\n")],
        &format!(
            "default_model: openai.default-model\nopenai:\n  base_url: {}\n",
            llm.url
        ),
    );
    for (defects, label) in [
        (&[][..], "mock-model"),
        (&["qx-model-label-from-default-model"][..], "default-model"),
    ] {
        d.set(defects);
        let agent = start_agent(first_agent(dir.path())).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        assert!(!client.send("hi").await.unwrap().is_error());
        let request = llm.requests().pop().unwrap();
        assert_eq!(request["model"], "mock-model", "the model called");
        let text = agent.metrics.render();
        let turns = format!("pallas_llm_turns_total{{agent=\"research\",model=\"{label}\"}} 1");
        assert!(text.contains(&turns), "{defects:?}: {text}");
        let tokens = format!(
            "pallas_llm_tokens_total{{agent=\"research\",kind=\"input\",model=\"{label}\"}} 11"
        );
        assert!(text.contains(&tokens), "{defects:?}: {text}");
    }
}

// ---------------------------------------------------------------- health

#[tokio::test]
async fn qx_health_message_null_when_ok_writes_a_null_message() {
    let d = Defects::take().await;
    for (defects, written) in [
        (&[][..], false),
        (&["qx-health-message-null-when-ok"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], "ok");
        assert_eq!(
            report.get("message").is_some(),
            written,
            "{defects:?}: {report}"
        );
        assert!(report["message"].is_null());
        // A degraded answer keeps its message.
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", refused_url().await)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], "degraded");
        assert_eq!(report["message"], "Unreachable: argos", "{defects:?}");
    }
}

#[tokio::test]
async fn qx_probe_accept_json_only_makes_a_strict_server_unreachable() {
    let d = Defects::take().await;
    for (defects, status, accept) in [
        (&[][..], "ok", "application/json, text/event-stream"),
        (
            &["qx-probe-accept-json-only"][..],
            "degraded",
            "application/json",
        ),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        // rmcp's Streamable HTTP server answers 406 to a POST that does not accept both types.
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], status, "{defects:?}: {report}");
        let probe = argos
            .journal
            .records()
            .into_iter()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .unwrap();
        assert_eq!(probe.accept.as_deref(), Some(accept));
    }
}

#[tokio::test]
async fn qx_probe_timeout_connect_only_hangs_on_a_silent_server() {
    let d = Defects::take().await;
    for (defects, hangs) in [
        (&[][..], false),
        (&["qx-probe-timeout-connect-only"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let (silent, _task) = blackhole_url().await;
        let mut s = settings("jarvis", &llm.url);
        s.health.probe_timeout = Duration::from_millis(300);
        s.servers = vec![DownstreamSettings::new("argos", &silent)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let answer = tokio::time::timeout(
            Duration::from_secs(2),
            client.call("get_health", json!({}), None, None),
        )
        .await;
        assert_eq!(answer.is_err(), hangs, "{defects:?}");
        if let Ok(reply) = answer {
            let report: Value = serde_json::from_str(&reply.unwrap().text()).unwrap();
            assert_eq!(report["message"], "Unreachable: argos");
        }
        // A refused connection is reported at once either way.
        let mut s = settings("jarvis", &llm.url);
        s.health.probe_timeout = Duration::from_millis(300);
        s.servers = vec![DownstreamSettings::new("argos", refused_url().await)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = tokio::time::timeout(
            Duration::from_secs(2),
            client.call("get_health", json!({}), None, None),
        )
        .await
        .expect("answered")
        .unwrap();
        let report: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(report["status"], "degraded", "{defects:?}");
    }
}

#[tokio::test]
async fn qx_probe_pings_persistent_session_never_initializes_a_probe_session() {
    let d = Defects::take().await;
    for (defects, initializes, deletes, pings) in [
        (&[][..], 2, 2, 0),
        (&["qx-probe-pings-persistent-session"][..], 1, 0, 2),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        for _ in 0..2 {
            let reply = client
                .call("get_health", json!({}), None, None)
                .await
                .unwrap();
            let report: Value = serde_json::from_str(&reply.text()).unwrap();
            assert_eq!(report["status"], "ok", "{defects:?}: {report}");
        }
        let journal = &argos.journal;
        assert_eq!(
            journal.count("POST", Some("initialize")),
            initializes,
            "{defects:?}"
        );
        assert_eq!(journal.count("DELETE", None), deletes, "{defects:?}");
        assert_eq!(journal.count("POST", Some("ping")), pings, "{defects:?}");
        if pings > 0 {
            // On the one long-lived session.
            let sessions: std::collections::HashSet<Option<String>> = journal
                .records()
                .into_iter()
                .filter(|r| r.rpc_method.as_deref() == Some("ping"))
                .map(|r| r.session)
                .collect();
            assert_eq!(sessions.len(), 1);
            assert!(sessions.iter().all(Option::is_some));
        }
    }
}

// ---------------------------------------------------------------- preflight

#[derive(Clone)]
struct Pallas {
    ready_timeout: Duration,
    factory: Option<AgentFactory>,
}

impl Pallas {
    fn new() -> Self {
        Self {
            ready_timeout: Duration::from_secs(10),
            factory: None,
        }
    }

    async fn start(&self, dir: &Path) -> Result<RunningPallas, runtime::RuntimeError> {
        let options = StartOptions {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            load: LoadOptions {
                agents_config: None,
                env: Some(HashMap::new()),
            },
            watch: false,
            ready_timeout: self.ready_timeout,
            agent_factory: self.factory.clone(),
            ..StartOptions::default()
        };
        runtime::start(dir, options).await
    }
}

#[tokio::test]
async fn qx_preflight_runs_once_per_agent_lists_the_models_once_per_agent() {
    let d = Defects::take().await;
    for (defects, rounds) in [(&[][..], 1), (&["qx-preflight-runs-once-per-agent"][..], 2)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let dir = project(
            TWO_AGENTS,
            &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
            &mock_model_config(&llm),
        );
        let running = Pallas::new().start(dir.path()).await.unwrap();
        let agents = running.agent_addrs().await.len();
        running.shutdown().await;
        assert_eq!(agents, 2);
        assert_eq!(*llm.state.list_calls.lock().unwrap(), rounds, "{defects:?}");
    }
}

#[tokio::test]
async fn qx_dotless_default_model_aborts_startup_without_a_default_model() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let own_model = "model: openai.mock-model\nservers: []\n";
    let without = project(
        ONE_AGENT,
        &[("research", own_model)],
        &format!("openai:\n  base_url: {}\n", llm.url),
    );
    let with = project(
        ONE_AGENT,
        &[("research", own_model)],
        &mock_model_config(&llm),
    );
    let running = Pallas::new().start(without.path()).await.unwrap();
    running.shutdown().await;
    d.set(&["qx-dotless-default-model-aborts-startup"]);
    let error = Pallas::new().start(without.path()).await.unwrap_err();
    assert!(error.to_string().contains("default_model"), "{error}");
    assert!(matches!(error, runtime::RuntimeError::Config(_)));
    // A `provider.model-name` default is handled as specified.
    let running = Pallas::new().start(with.path()).await.unwrap();
    running.shutdown().await;
}

/// An Anthropic API knowing `claude-sonnet-4-5` only.
async fn anthropic() -> (String, CancellationToken) {
    let ct = CancellationToken::new();
    let router = axum::Router::new().route(
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
                        Json(
                            json!({"type": "error", "error": {"type": "not_found_error", "message": "model not found"}}),
                        ),
                    )
                }
            },
        ),
    );
    let addr = serve(router, ct.clone()).await;
    (format!("http://{addr}"), ct)
}

#[tokio::test]
async fn qx_inactive_anthropic_probes_configured_model_asks_for_the_default_model() {
    let d = Defects::take().await;
    let (url, ct) = anthropic().await;
    let _stop = ct.drop_guard();
    let dir = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        "default_model: openai.my-model-name\n",
    );
    load(dir.path());
    let http = pallas_reference::net::builder().build().unwrap();
    let mut keyed = ProviderSettings::new(&url);
    keyed.api_key = Some(pallas_reference::settings::Secret::new("sk-ant"));
    let key_only = || llm::preflight_key_only(Provider::Anthropic, &keyed, &http);
    assert_eq!(key_only().await, None);
    d.set(&["qx-inactive-anthropic-probes-configured-model"]);
    assert_eq!(
        key_only().await.as_deref(),
        Some("model 'my-model-name' not found")
    );
    // The active Anthropic check is unchanged.
    let sonnet = ModelRef {
        provider: Provider::Anthropic,
        model: "claude-sonnet-4-5".into(),
    };
    assert!(llm::preflight(&keyed, &sonnet, &http).await.is_ok());
}

#[tokio::test]
async fn qx_models_url_via_urljoin_drops_the_v1_segment() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let http = pallas_reference::net::builder().build().unwrap();
    let model = ModelRef {
        provider: Provider::OpenAi,
        model: "mock-model".into(),
    };
    let dir = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        &mock_model_config(&llm),
    );
    let provider = first_agent(dir.path()).provider;
    assert_eq!(provider.base_url, llm.url);
    assert!(llm::preflight(&provider, &model, &http).await.is_ok());
    d.set(&["qx-models-url-via-urljoin"]);
    let status = llm::preflight(&provider, &model, &http).await;
    let problem = status.describe().unwrap_or_default();
    assert!(problem.contains("HTTP 404"), "{problem}");
    assert_eq!(*llm.state.list_calls.lock().unwrap(), 1);
    // A base URL written with its trailing slash is probed at the right path.
    let slashed = project(
        ONE_AGENT,
        &[("research", NO_SERVERS)],
        &format!(
            "default_model: openai.mock-model\nopenai:\n  base_url: {}/\n",
            llm.url
        ),
    );
    let provider = first_agent(slashed.path()).provider;
    assert!(llm::preflight(&provider, &model, &http).await.is_ok());
    assert_eq!(*llm.state.list_calls.lock().unwrap(), 2);
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
async fn qx_root_level_min_not_max_puts_the_root_at_debug() {
    let d = Defects::take().await;
    let root = |level: &str| {
        LogSettings::from_lookup(lookup(&[("PALLAS_LOG_LEVEL", level)]), None)
            .unwrap()
            .root_level
    };
    assert_eq!(root("debug"), Level::INFO);
    assert_eq!(root("warning"), Level::WARN);
    assert_eq!(root("info"), Level::INFO);
    d.set(&["qx-root-level-min-not-max"]);
    assert_eq!(root("debug"), Level::DEBUG);
    assert_eq!(root("warning"), Level::INFO);
    assert_eq!(root("info"), Level::INFO);
    let filter = LogSettings::from_lookup(lookup(&[("PALLAS_LOG_LEVEL", "debug")]), None)
        .unwrap()
        .filter()
        .to_string();
    // The root directive (no target) at DEBUG.
    assert!(filter.split(',').any(|d| d == "debug"), "{filter}");
}

#[tokio::test]
async fn qx_empty_log_level_env_counts_as_set_ignores_logger_level() {
    let d = Defects::take().await;
    let level = |pairs: &[(&str, &str)]| {
        LogSettings::from_lookup(lookup(pairs), Some("debug"))
            .unwrap()
            .level
    };
    assert_eq!(level(&[("PALLAS_LOG_LEVEL", "")]), Level::DEBUG);
    d.set(&["qx-empty-log-level-env-counts-as-set"]);
    assert_eq!(level(&[("PALLAS_LOG_LEVEL", "")]), Level::INFO);
    assert_eq!(level(&[]), Level::DEBUG);
    assert_eq!(level(&[("PALLAS_LOG_LEVEL", "warning")]), Level::WARN);
}

/// Log output captured by a scoped subscriber.
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

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// What `config::load` of `dir` logs at WARN.
fn load_warnings(dir: &Path, env: &[(&str, &str)]) -> String {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(Level::WARN)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || load_with(dir, env));
    String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned()
}

#[test]
fn qx_warns_on_servers_without_auth_warns_about_a_public_server() {
    let d = Defects::take_blocking();
    let dir = project(
        ONE_AGENT,
        &[("research", "servers: [weather, mnemosyne]\n")],
        "default_model: openai.my-model-name\nmcp:\n  servers:\n    weather:\n      transport: http\n      url: https://weather.example/mcp/\n    mnemosyne:\n      transport: http\n      url: https://mnemosyne.example/mcp/\n      headers:\n        Authorization: \"Bearer ${MNEMOSYNE_TOKEN}\"\n",
    );
    let env = [("MNEMOSYNE_TOKEN", "tok")];
    let logged = load_warnings(dir.path(), &env);
    assert!(!logged.contains("no auth header"), "{logged}");
    d.set(&["qx-warns-on-servers-without-auth"]);
    let logged = load_warnings(dir.path(), &env);
    assert!(
        logged.contains("downstream server `weather` has no auth header configured"),
        "{logged}"
    );
    assert!(!logged.contains("`mnemosyne`"), "{logged}");
    // An unset variable is still warned about.
    let logged = load_warnings(dir.path(), &[]);
    assert!(logged.contains("MNEMOSYNE_TOKEN is not set"), "{logged}");
}

// ---------------------------------------------------------------- progress

#[tokio::test]
async fn qx_progress_send_failure_aborts_call_fails_the_call_of_a_closed_stream() {
    let d = Defects::take().await;
    for (defects, outcome) in [
        (&[][..], "ok"),
        (&["qx-progress-send-failure-aborts-call"][..], "error"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let client = RawClient::connect(&agent.url).await.unwrap();
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "send_message",
            "arguments": {"message": "CALL_TOOL argos__slow {\"ms\": 600}"},
            "_meta": {"progressToken": "t"}}});
        let mut response = client
            .http
            .post(&client.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", client.session.clone().unwrap())
            .json(&call)
            .send()
            .await
            .unwrap();
        // The client goes away once the tool call has started.
        let mut seen = String::new();
        while !seen.contains("argos/slow: started") {
            let chunk = response.chunk().await.unwrap().expect("more events");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        drop(response);
        let line = |outcome: &str| {
            format!("pallas_send_message_total{{agent=\"jarvis\",outcome=\"{outcome}\"}} 1")
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let text = loop {
            let text = agent.metrics.render();
            if text.contains(&line("ok")) || text.contains(&line("error")) {
                break text;
            }
            assert!(tokio::time::Instant::now() < deadline, "{text}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(text.contains(&line(outcome)), "{defects:?}: {text}");
        let tool = format!(
            "pallas_tool_calls_total{{agent=\"jarvis\",operation=\"tool\",outcome=\"{outcome}\",server=\"argos\"}} 1"
        );
        assert!(text.contains(&tool), "{defects:?}: {text}");
        // The downstream call itself ran (its start notification went out).
        assert_eq!(argos.journal.calls().len(), 1);
    }
}

#[tokio::test]
async fn qx_loop_steps_numbered_from_zero_starts_at_step_0() {
    let d = Defects::take().await;
    for (defects, first) in [
        (&[][..], "jarvis step 1 (llm)"),
        (
            &["qx-loop-steps-numbered-from-zero"][..],
            "jarvis step 0 (llm)",
        ),
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
        let steps: Vec<&String> = messages.iter().filter(|m| m.contains(" step ")).collect();
        assert_eq!(steps[0], first, "{defects:?}: {messages:?}");
        assert_eq!(steps.len(), 3, "{messages:?}");
        for word in ["started", "completed"] {
            assert!(messages.contains(&format!("argos/echo: {word}")));
        }
    }
}

// ---------------------------------------------------------------- bearer and messages

#[tokio::test]
async fn qx_forward_flag_read_from_parsed_config_forwards_no_bearer() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let argos = McpServer::start("argos").await;
    let dir = project(
        ONE_AGENT,
        &[("research", "servers: [argos]\n")],
        &format!(
            "{}mcp:\n  servers:\n    argos:\n      transport: http\n      url: {}\n      forward_inbound_auth: true\n",
            mock_model_config(&llm),
            argos.url
        ),
    );
    for (defects, seen) in [
        (&[][..], "Bearer tok-1"),
        (&["qx-forward-flag-read-from-parsed-config"][..], "none"),
    ] {
        d.set(defects);
        let agent = start_agent(first_agent(dir.path())).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call(
                "send_message",
                json!({"message": "CALL_TOOL argos__whoami {}"}),
                None,
                Some("tok-1"),
            )
            .await
            .unwrap();
        assert!(!reply.is_error(), "{:?}", reply.messages);
        assert_eq!(
            reply.text(),
            format!("tool results: argos:{seen}"),
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn qx_image_mime_allowlist_refuses_a_webp_image() {
    let d = Defects::take().await;
    for (defects, refused) in [(&[][..], false), (&["qx-image-mime-allowlist"][..], true)] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let mut s = settings("jarvis", &llm.url);
        s.capabilities.vision = true;
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let image = |mime_type: &str| json!({"message": "look", "images": [{"data": "AAAA", "mime_type": mime_type}]});
        let webp = client
            .call("send_message", image("image/webp"), None, None)
            .await
            .unwrap();
        assert_eq!(webp.is_error(), refused, "{defects:?}: {:?}", webp.messages);
        if refused {
            assert!(webp.text().contains("image/webp"), "{}", webp.text());
        } else {
            assert_eq!(webp.text(), "echo: look (images: 1)");
        }
        let png = client
            .call("send_message", image("image/png"), None, None)
            .await
            .unwrap();
        assert!(!png.is_error(), "{defects:?}: {:?}", png.messages);
    }
}

#[tokio::test]
async fn qx_history_prompt_registered_lazily_hides_the_prompt_until_a_message() {
    let d = Defects::take().await;
    for (defects, lazy) in [
        (&[][..], false),
        (&["qx-history-prompt-registered-lazily"][..], true),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let name = pallas_reference::agent::tools::history_prompt_name("jarvis");
        let listed = |reply: &crate::fixtures::Exchange| -> bool {
            reply.result()["result"]["prompts"]
                .as_array()
                .is_some_and(|prompts| prompts.iter().any(|p| p["name"] == name.as_str()))
        };
        let list = client
            .request("prompts/list", json!({}), None)
            .await
            .unwrap();
        assert_eq!(listed(&list), !lazy, "{defects:?}: {:?}", list.messages);
        let get = client
            .request("prompts/get", json!({"name": name}), None)
            .await
            .unwrap();
        assert_eq!(
            get.result().get("error").is_some(),
            lazy,
            "{defects:?}: {:?}",
            get.messages
        );
        assert!(!client.send("one").await.unwrap().is_error());
        let list = client
            .request("prompts/list", json!({}), None)
            .await
            .unwrap();
        assert!(listed(&list), "{defects:?}");
        let get = client
            .request("prompts/get", json!({"name": name}), None)
            .await
            .unwrap();
        let messages = get.result()["result"]["messages"].as_array().unwrap().len();
        assert_eq!(messages, 2, "{defects:?}: {:?}", get.messages);
    }
}

// ---------------------------------------------------------------- startup

#[tokio::test]
async fn qx_dependents_of_late_subagent_skipped_goes_on_without_the_dependant() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let dir = project(
        TWO_AGENTS,
        &[("research", NO_SERVERS), ("jarvis", NO_SERVERS)],
        &mock_model_config(&llm),
    );
    // `research` never answers `initialize`.
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
    };
    let error = pallas.start(dir.path()).await.unwrap_err();
    assert!(
        matches!(error, runtime::RuntimeError::DependencyNotReady { .. }),
        "{error}"
    );
    d.set(&["qx-dependents-of-late-subagent-skipped"]);
    let running = pallas.start(dir.path()).await.unwrap();
    let served: Vec<String> = running.agent_addrs().await.into_keys().collect();
    let listed: Vec<String> = running
        .registry()
        .agents()
        .into_iter()
        .map(|a| a.agent)
        .collect();
    running.shutdown().await;
    assert_eq!(served, ["research"]);
    assert_eq!(listed, ["research", "jarvis"]);
}

// ---------------------------------------------------------------- environment

const TOKEN_SERVER: &str = "default_model: openai.my-model-name\nmcp:\n  servers:\n    neo4j:\n      transport: http\n      url: https://neo4j.example/mcp\n      headers:\n        Authorization: \"Bearer ${NEO4J_TOKEN}\"\n";

#[tokio::test]
async fn qx_dotenv_splits_on_every_equals_cuts_base64_padding() {
    let d = Defects::take().await;
    let dir = project(
        ONE_AGENT,
        &[("research", "servers: [neo4j]\n")],
        TOKEN_SERVER,
    );
    write(
        dir.path(),
        ".env",
        "NEO4J_TOKEN=abc==\nOPENAI_BASE_URL=http://llm:8080/v1?api-version=1\n",
    );
    let loaded = |dir: &Path| {
        let settings = first_agent(dir);
        (
            header(&settings, "Authorization").unwrap(),
            settings.provider.base_url,
        )
    };
    assert_eq!(
        loaded(dir.path()),
        (
            "Bearer abc==".to_owned(),
            "http://llm:8080/v1?api-version=1".to_owned()
        )
    );
    d.set(&["qx-dotenv-splits-on-every-equals"]);
    assert_eq!(
        loaded(dir.path()),
        (
            "Bearer abc".to_owned(),
            "http://llm:8080/v1?api-version".to_owned()
        )
    );
    // A line with one `=` loads as written.
    write(dir.path(), ".env", "NEO4J_TOKEN=abc\n");
    assert_eq!(loaded(dir.path()).0, "Bearer abc");
}

#[tokio::test]
async fn qx_placeholders_expanded_before_dotenv_sends_an_empty_bearer() {
    let d = Defects::take().await;
    let dir = project(
        ONE_AGENT,
        &[("research", "servers: [neo4j]\n")],
        TOKEN_SERVER,
    );
    write(dir.path(), ".env", "NEO4J_TOKEN=from-dotenv\n");
    let authorization = |env: &[(&str, &str)]| {
        header(
            &(*load_with(dir.path(), env).agents[0].settings).clone(),
            "Authorization",
        )
        .unwrap()
    };
    assert_eq!(authorization(&[]), "Bearer from-dotenv");
    d.set(&["qx-placeholders-expanded-before-dotenv"]);
    assert_eq!(authorization(&[]), "Bearer ");
    // A variable of the process environment expands.
    assert_eq!(
        authorization(&[("NEO4J_TOKEN", "from-shell")]),
        "Bearer from-shell"
    );
}
