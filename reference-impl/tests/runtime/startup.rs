//! Startup: bind-first, `depends_on` readiness, single-agent mode, the agent servers, shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use pallas_reference::runtime::{self, AgentFactory, RuntimeError};
use pallas_reference::settings::AgentSettings;
use serde_json::json;

use crate::support::{self, McpSession, Project, ecosystem, options, start, text_of};

/// A factory whose `research` answers `initialize` with 503 `fail_first` times, then 200; it
/// records, for each agent built, how many successful `initialize` research had answered by then.
/// Agents built, each with the successful `initialize` count of research at that moment.
type Built = Arc<Mutex<Vec<(String, usize)>>>;

fn recording_factory(fail_first: usize) -> (AgentFactory, Built, Arc<AtomicUsize>) {
    let built = Arc::new(Mutex::new(Vec::new()));
    let ok_answers = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let (b, ok) = (built.clone(), ok_answers.clone());
    let factory: AgentFactory = Arc::new(move |settings: Arc<AgentSettings>, _deps, _token| {
        b.lock()
            .unwrap()
            .push((settings.name.clone(), ok.load(Ordering::SeqCst)));
        let (ok, seen) = (ok.clone(), seen.clone());
        Router::new().route(
            "/mcp",
            post(move || {
                let (ok, seen) = (ok.clone(), seen.clone());
                async move {
                    if seen.fetch_add(1, Ordering::SeqCst) < fail_first {
                        (StatusCode::SERVICE_UNAVAILABLE, String::new())
                    } else {
                        ok.fetch_add(1, Ordering::SeqCst);
                        (
                            StatusCode::OK,
                            json!({"jsonrpc": "2.0", "id": 0, "result": {}}).to_string(),
                        )
                    }
                }
            }),
        )
    });
    (factory, built, ok_answers)
}

#[tokio::test]
async fn depends_on_agents_answer_before_their_dependants_start() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let (factory, built, _) = recording_factory(3);
    let mut opts = options();
    opts.agent_factory = Some(factory);
    let pallas = runtime::start(project.path(), opts).await.unwrap();
    let built = built.lock().unwrap().clone();
    assert_eq!(built.len(), 2);
    assert_eq!(built[0], ("research".to_owned(), 0));
    assert_eq!(built[1].0, "jarvis");
    assert!(
        built[1].1 >= 1,
        "jarvis was built before research answered initialize: {built:?}"
    );
    pallas.shutdown().await;
}

#[tokio::test]
async fn a_dependency_that_never_answers_stops_startup_with_a_clear_error() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let (factory, built, _) = recording_factory(usize::MAX);
    let mut opts = options();
    opts.agent_factory = Some(factory);
    opts.ready_timeout = Duration::from_millis(300);
    let err = runtime::start(project.path(), opts).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, RuntimeError::DependencyNotReady { .. }),
        "{text}"
    );
    assert!(text.contains("`jarvis` depends on `research`"), "{text}");
    assert!(text.contains("300ms"), "{text}");
    assert!(text.contains("503"), "{text}");
    assert_eq!(built.lock().unwrap().len(), 1, "jarvis must not start");
}

#[tokio::test]
async fn single_agent_mode_serves_one_agent_and_no_registry() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let mut opts = options();
    opts.agent = Some("jarvis".into());
    let pallas = runtime::start(project.path(), opts).await.unwrap();
    assert!(pallas.registry_addr.is_none());
    let agents = pallas.agent_addrs().await;
    assert_eq!(agents.keys().collect::<Vec<_>>(), ["jarvis"]);
    pallas.shutdown().await;

    let mut opts = options();
    opts.agent = Some("jarvsi".into());
    let err = runtime::start(project.path(), opts).await.unwrap_err();
    assert!(matches!(err, RuntimeError::UnknownAgent { .. }), "{err}");
    assert!(err.to_string().contains("jarvsi"));
}

#[tokio::test]
async fn a_taken_port_fails_startup_before_anything_serves() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let registry_port = free.local_addr().unwrap().port();
    drop(free);
    project.write(
        "agents.yaml",
        &support::STANDARD_AGENTS
            .replace(
                "registry_port: 0",
                &format!("registry_port: {registry_port}"),
            )
            .replace(
                "  research:\n    module: agents.research\n    port: 0",
                &format!("  research:\n    module: agents.research\n    port: {taken_port}"),
            ),
    );
    let err = runtime::start(project.path(), options()).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RuntimeError::Bind { .. }), "{text}");
    assert!(text.contains("agent `research`"), "{text}");
    assert!(text.contains(&taken_port.to_string()), "{text}");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", registry_port)).is_err(),
        "the registry must not be listening after a failed start"
    );
}

#[tokio::test]
async fn agents_serve_mcp_with_both_tools_and_answer_through_the_mock_llm() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let agents = pallas.agent_addrs().await;
    let url = format!("http://{}/mcp", agents["jarvis"]);
    let mut session = McpSession::open(&url, None).await;
    let tools = session.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"send_message"), "{names:?}");
    assert!(names.contains(&"get_health"), "{names:?}");
    let result = session
        .call_tool(
            "send_message",
            json!({"message": "hello from the runtime tests"}),
        )
        .await;
    assert_ne!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("hello from the runtime tests"),
        "{result}"
    );
    // The mock LLM saw the configured API key.
    let journal = eco.llm("openai").unwrap().journal();
    assert!(
        journal
            .iter()
            .any(|e| e.headers.get("authorization").map(String::as_str)
                == Some(&format!("Bearer {}", support::API_KEY))),
        "the API key from fastagent.secrets.yaml must reach the provider"
    );
    session.close().await;
    pallas.shutdown().await;
}

#[tokio::test]
async fn shutdown_releases_every_port() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let mut addrs: Vec<_> = pallas.agent_addrs().await.into_values().collect();
    addrs.push(pallas.registry_addr.unwrap());
    let url = format!("http://{}/mcp", addrs[0]);
    let session = McpSession::open(&url, None).await;
    tokio::time::timeout(Duration::from_secs(15), pallas.shutdown())
        .await
        .expect("shutdown finishes even with an open MCP session");
    drop(session);
    for addr in addrs {
        std::net::TcpListener::bind(addr)
            .unwrap_or_else(|e| panic!("{addr} still held after shutdown: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_an_in_flight_call_promptly_and_closes_downstream_sessions() {
    let spec = pallas_mocks::parse_ecosystem(
        "slow.yaml",
        &support::ECOSYSTEM.replace(
            "      - name: search_web\n        description: Search the web\n        result: echo_headers",
            "      - name: search_web\n        description: Search the web\n        delay: 30s\n        result: {text: slow answer}",
        ),
    )
    .unwrap();
    let eco = pallas_mocks::Ecosystem::start(&spec).await.unwrap();
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let url = format!("http://{}/mcp", pallas.agent_addrs().await["jarvis"]);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "send_message",
        "arguments": {"message": "CALL_TOOL argos__search_web {\"q\":\"x\"}"}}});
    let session = McpSession::open(&url, None).await;
    let sid = session.session.clone().unwrap();
    let call = tokio::spawn(async move {
        let resp = support::client()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", sid)
            .json(&body)
            .send()
            .await
            .unwrap();
        resp.text().await.unwrap_or_default()
    });
    support::eventually(
        Duration::from_secs(5),
        "the tool call to reach argos",
        || async {
            eco.mcp("argos")
                .unwrap()
                .journal()
                .iter()
                .any(|e| e.jsonrpc_method.as_deref() == Some("tools/call"))
                .then_some(())
        },
    )
    .await;
    let started = std::time::Instant::now();
    pallas.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown waited {:?} for a call whose tool takes 30 s",
        started.elapsed()
    );
    // The caller's stream ends (cancelled) instead of hanging until the tool answers.
    let text = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the in-flight call ends with the shutdown")
        .unwrap();
    assert!(!text.contains("slow answer"), "{text}");
    // The agent's own session with the downstream server is closed (DELETE) on the way out.
    assert!(eco.mcp("argos").unwrap().sessions().opened >= 1);
    support::eventually(
        Duration::from_secs(5),
        "argos sessions to close",
        || async { (eco.mcp("argos").unwrap().sessions().open_now == 0).then_some(()) },
    )
    .await;
}
