//! Live reload: added agents start, removed ones stop, the others keep serving untouched.

use std::time::Duration;

use pallas_reference::runtime;
use serde_json::json;

use crate::support::{
    self, McpSession, Project, ecosystem, eventually, options, registry_doc, start,
};

const RELOADED: &str = "\
name: test-project
namespace: com.example.test
registry_port: 0
agents:
  research:
    module: agents.research
    port: 0
  scout_bot:
    module: agents.jarvis
    port: 0
    title: Scout
";

#[tokio::test]
async fn reload_adds_and_removes_agents_and_leaves_the_others_untouched() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let before = pallas.agent_addrs().await;
    let research_url = format!("http://{}/mcp", before["research"]);
    let mut session = McpSession::open(&research_url, None).await;

    project.write("agents.yaml", RELOADED);
    let summary = pallas.reload().await.unwrap();
    assert_eq!(summary.added, ["scout_bot"]);
    assert_eq!(summary.removed, ["jarvis"]);
    assert_eq!(summary.unchanged, ["research"]);
    assert!(summary.restarted.is_empty());

    let after = pallas.agent_addrs().await;
    assert_eq!(
        after["research"], before["research"],
        "research keeps its port"
    );
    assert!(!after.contains_key("jarvis"));
    // The MCP session opened before the reload still works: research was not restarted.
    let tools = session.request("tools/list", json!({})).await;
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    // jarvis no longer listens.
    assert!(std::net::TcpStream::connect(before["jarvis"]).is_err());

    let doc = registry_doc(pallas.registry_addr.unwrap()).await;
    assert_eq!(
        support::names(&doc),
        ["com.example.test/research", "com.example.test/scout-bot"]
    );
    assert_eq!(doc["servers"][1]["server"]["title"], "Scout");
    let scout = format!("http://{}/mcp", after["scout_bot"]);
    McpSession::open(&scout, None).await.close().await;
    session.close().await;
    pallas.shutdown().await;
}

#[tokio::test]
async fn a_changed_card_restarts_only_its_agent() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    project.write(
        "agents/jarvis.md",
        "---\nservers: [argos]\n---\nYou are a different Jarvis.\n",
    );
    let summary = pallas.reload().await.unwrap();
    assert_eq!(summary.restarted, ["jarvis"]);
    assert_eq!(summary.unchanged, ["research"]);
    let d = pallas.deployment().await;
    assert_eq!(
        d.agent("jarvis").unwrap().settings.instruction,
        "You are a different Jarvis."
    );
    pallas.shutdown().await;
}

#[tokio::test]
async fn an_invalid_configuration_on_reload_keeps_the_running_one() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    project.write("agents.yaml", "name: [broken\n");
    let err = pallas.reload().await.unwrap_err();
    assert!(err.to_string().contains("agents.yaml:"), "{err}");
    let doc = registry_doc(pallas.registry_addr.unwrap()).await;
    assert_eq!(support::names(&doc).len(), 2);
    assert_eq!(pallas.agent_addrs().await.len(), 2);
    pallas.shutdown().await;
}

#[tokio::test]
async fn a_file_change_is_picked_up_without_a_signal() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let mut opts = options();
    opts.watch = true;
    opts.watch_interval = Duration::from_millis(50);
    let pallas = runtime::start(project.path(), opts).await.unwrap();
    let registry = pallas.registry_addr.unwrap();
    project.write("agents.yaml", RELOADED);
    let names = eventually(
        Duration::from_secs(10),
        "the registry to show scout_bot",
        || async {
            let names = support::names(&registry_doc(registry).await);
            names
                .contains(&"com.example.test/scout-bot".to_owned())
                .then_some(names)
        },
    )
    .await;
    assert!(!names.contains(&"com.example.test/jarvis".to_owned()));
    pallas.shutdown().await;
}
