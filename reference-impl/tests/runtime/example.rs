//! The example project of the README (`reference-impl/example/`) runs against the example mock
//! ecosystem (`mocks/examples/ecosystem.yaml`) as documented.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::Duration;

use pallas_mocks::Ecosystem;
use pallas_reference::config::LoadOptions;
use pallas_reference::runtime::{self, StartOptions};
use serde_json::json;

use crate::support::{McpSession, registry_doc, text_of};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_readme_example_serves_against_the_example_mocks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let eco_text = std::fs::read_to_string(root.join("../mocks/examples/ecosystem.yaml")).unwrap();
    let spec = pallas_mocks::parse_ecosystem("ecosystem.yaml", &eco_text).unwrap();
    let eco = Ecosystem::start(&spec).await.unwrap();
    let urls = eco.urls();

    // The example with its fixed ports swapped for free ones (tests never use fixed ports).
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root.join("example"), dir.path());
    let (registry, research, jarvis) = (free_port(), free_port(), free_port());
    let agents = std::fs::read_to_string(dir.path().join("agents.yaml"))
        .unwrap()
        .replace("24200", &registry.to_string())
        .replace("24201", &research.to_string())
        .replace("24202", &jarvis.to_string());
    std::fs::write(dir.path().join("agents.yaml"), agents).unwrap();
    let env = HashMap::from([
        ("OPENAI_BASE_URL".to_owned(), urls["openai"].clone()),
        ("ARGOS_URL".to_owned(), urls["argos"].clone()),
        ("NEO4J_URL".to_owned(), urls["neo4j"].clone()),
        ("MNEMOSYNE_URL".to_owned(), urls["mnemosyne"].clone()),
        (
            "RESEARCH_URL".to_owned(),
            format!("http://localhost:{research}/mcp"),
        ),
    ]);
    let pallas = runtime::start(
        dir.path(),
        StartOptions {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            load: LoadOptions {
                agents_config: None,
                env: Some(env),
            },
            watch: false,
            ready_timeout: Duration::from_secs(10),
            ..StartOptions::default()
        },
    )
    .await
    .unwrap();

    let doc = registry_doc(pallas.registry_addr.unwrap()).await;
    assert_eq!(
        doc["servers"][0]["server"]["name"],
        "com.example.demo/research"
    );
    assert_eq!(
        doc["servers"][1]["server"]["name"],
        "com.example.demo/jarvis"
    );
    assert_eq!(
        doc["servers"][1]["server"]["remotes"][0]["url"],
        format!("http://localhost:{jarvis}/mcp")
    );

    // Research searches the web through Argos.
    let mut s = McpSession::open(&format!("http://127.0.0.1:{research}/mcp"), None).await;
    let r = s
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL argos__search_web {\"query\":\"pallas\"}"}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("Pallas Athena"), "{r}");
    let h = s.call_tool("get_health", json!({})).await;
    assert!(text_of(&h).contains("\"status\":\"ok\""), "{h}");
    s.close().await;

    // Jarvis reaches the research agent as an ordinary downstream server.
    let url = format!("http://127.0.0.1:{jarvis}/mcp");
    let mut s = McpSession::open(&url, None).await;
    let r = s
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL research__send_message {\"message\":\"hello research\"}"}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("hello research"), "{r}");
    s.close().await;

    // Mnemosyne demands the caller's bearer on every request, `initialize` and `tools/list`
    // included: with `forward_inbound_auth` Jarvis still reaches it with the caller's bearer.
    let mut s = McpSession::open(&url, Some("dev-token")).await;
    let r = s
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL mnemosyne__search {\"query\":\"notes\"}"}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    assert!(
        text_of(&r).contains(r#""authorization":"Bearer dev-token""#),
        "{r}"
    );
    s.close().await;
    // Without a bearer Mnemosyne offers no tools, and no earlier bearer is reused.
    let mut s = McpSession::open(&url, None).await;
    let r = s
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL mnemosyne__search {\"query\":\"notes\"}"}),
        )
        .await;
    assert!(!text_of(&r).contains("dev-token"), "{r}");
    assert!(text_of(&r).contains("unknown tool"), "{r}");
    s.close().await;
    pallas.shutdown().await;
    eco.shutdown().await;
}
