//! HTTPS to the LLM provider and to downstream MCP servers: the mocks serve HTTPS with a generated
//! CA; trusted through `SSL_CERT_FILE`, a tool-calling turn runs through both; untrusted, the
//! errors name the certificate problem.

use std::collections::HashMap;

use pallas_mocks::Ecosystem;
use pallas_reference::config::LoadOptions;
use pallas_reference::runtime::{self, StartOptions};
use serde_json::json;

use crate::support::{API_KEY, McpSession, Project, options, text_of};

const HTTPS_ECOSYSTEM: &str = r#"
tls: true
llms:
  openai:
    dialect: openai
    api_key: sk-test-key-1234567890
    models: [mock-model]
mcp_servers:
  argos:
    tools:
      - name: search_web
        description: Search the web
        input_schema: {type: object, properties: {query: {type: string}}}
        result: {text: "found over https"}
"#;

async fn https_ecosystem() -> Ecosystem {
    let spec = pallas_mocks::parse_ecosystem("https.yaml", HTTPS_ECOSYSTEM).unwrap();
    Ecosystem::start(&spec).await.unwrap()
}

fn project(eco: &Ecosystem) -> Project {
    let urls = eco.urls();
    assert!(urls["openai"].starts_with("https://"), "{urls:?}");
    assert!(urls["argos"].starts_with("https://"), "{urls:?}");
    let p = Project::new();
    p.write(
        "agents.yaml",
        "name: tls-test\nregistry_port: 0\nagents:\n  scout:\n    module: agents.scout\n    port: 0\n",
    );
    p.write(
        "fastagent.config.yaml",
        &format!(
            "default_model: openai.mock-model\nopenai:\n  base_url: \"{}\"\nmcp:\n  servers:\n    argos:\n      url: \"{}\"\n",
            urls["openai"], urls["argos"]
        ),
    );
    p.write(
        "agents/scout.md",
        "---\nname: scout\nservers: [argos]\n---\nYou scout.\n",
    );
    p
}

fn options_with(env: HashMap<String, String>) -> StartOptions {
    StartOptions {
        load: LoadOptions {
            agents_config: None,
            env: Some(env),
        },
        ..options()
    }
}

const TURN: &str = "CALL_TOOL argos__search_web {\"query\": \"pallas\"}";

#[tokio::test]
async fn a_tool_calling_turn_runs_over_https_with_the_ca_from_ssl_cert_file() {
    let eco = https_ecosystem().await;
    let project = project(&eco);
    let ca = project.file("mock-ca.pem");
    eco.tls().unwrap().write_ca(&ca).unwrap();
    let env = HashMap::from([
        ("OPENAI_API_KEY".to_owned(), API_KEY.to_owned()),
        ("SSL_CERT_FILE".to_owned(), ca.display().to_string()),
    ]);
    let pallas = runtime::start(project.path(), options_with(env))
        .await
        .expect("pallas starts");
    let url = format!("http://{}/mcp", pallas.agent_addrs().await["scout"]);
    let mut session = McpSession::open(&url, None).await;

    let result = session
        .call_tool("send_message", json!({"message": TURN}))
        .await;
    assert_ne!(result["isError"], true, "{result}");
    assert!(text_of(&result).contains("found over https"), "{result}");
    // Both hops really happened: the model asked twice, the tool was called once.
    assert!(eco.llm("openai").unwrap().journal().len() >= 2);
    let calls = eco.mcp("argos").unwrap().journal();
    assert!(
        calls
            .iter()
            .any(|e| e.tool.as_deref() == Some("search_web")),
        "{calls:?}"
    );
    let health = session.call_tool("get_health", json!({})).await;
    assert!(text_of(&health).contains("\"ok\""), "{health}");

    session.close().await;
    pallas.shutdown().await;
}

#[tokio::test]
async fn without_the_ca_the_errors_name_the_unknown_issuer() {
    let eco = https_ecosystem().await;
    let project = project(&eco);
    let env = HashMap::from([("OPENAI_API_KEY".to_owned(), API_KEY.to_owned())]);
    let pallas = runtime::start(project.path(), options_with(env))
        .await
        .expect("pallas starts (preflight only warns)");
    let url = format!("http://{}/mcp", pallas.agent_addrs().await["scout"]);
    let mut session = McpSession::open(&url, None).await;

    let result = session
        .call_tool("send_message", json!({"message": TURN}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(text.contains("unknown issuer"), "{text}");
    assert!(!text.contains(API_KEY), "{text}");

    let health = text_of(&session.call_tool("get_health", json!({})).await);
    assert!(health.contains("unknown issuer"), "{health}");
    assert!(!health.contains(API_KEY), "{health}");

    session.close().await;
    pallas.shutdown().await;
}
