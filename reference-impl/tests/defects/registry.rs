//! Registry defects: the catalogue document, its names, remotes, capabilities, removals and
//! Content-Type.

use chrono::Utc;
use pallas_reference::metrics::Metrics;
use pallas_reference::registry::{self, PublishedAgent, RegistryState};
use serde_json::{Value, json};

use crate::Defects;
use crate::fixtures::serve;

const SCHEMA: &str = include_str!("../../schemas/server.schema.2025-12-11.json");

fn agent(capabilities: Option<Value>) -> PublishedAgent {
    PublishedAgent {
        agent: "tech_research".into(),
        name: registry::registry_name("com.example.demo", "tech_research"),
        title: "Tech_Research".into(),
        description: "Research agent".into(),
        version: "1.0.0".into(),
        icons: Vec::new(),
        url: "http://localhost:24201/mcp".into(),
        capabilities,
        updated_at: Utc::now(),
    }
}

#[tokio::test]
async fn registry_invalid_entry_breaks_the_official_schema() {
    let d = Defects::take().await;
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    assert!(validator.is_valid(&agent(None).to_json()["server"]));
    d.set(&["registry-invalid-entry"]);
    assert!(!validator.is_valid(&agent(None).to_json()["server"]));
}

#[tokio::test]
async fn registry_name_keeps_underscores_in_the_slug() {
    let d = Defects::take().await;
    assert_eq!(
        registry::registry_name("ns", "tech_research"),
        "ns/tech-research"
    );
    d.set(&["registry-name-keeps-underscores"]);
    assert_eq!(
        registry::registry_name("ns", "tech_research"),
        "ns/tech_research"
    );
}

#[tokio::test]
async fn registry_remote_dead_points_remotes_away_from_the_endpoint() {
    let d = Defects::take().await;
    let url = || agent(None).to_json()["server"]["remotes"][0]["url"].clone();
    assert_eq!(url(), json!("http://localhost:24201/mcp"));
    d.set(&["registry-remote-dead"]);
    assert_eq!(url(), json!("http://localhost:24201/mcp-dead"));
}

#[tokio::test]
async fn registry_capabilities_always_publishes_unconfigured_capabilities() {
    let d = Defects::take().await;
    assert!(
        agent(None).to_json()["server"]
            .get("capabilities")
            .is_none()
    );
    d.set(&["registry-capabilities-always"]);
    assert!(
        agent(None).to_json()["server"]
            .get("capabilities")
            .is_some()
    );
}

#[tokio::test]
async fn registry_keeps_removed_agent_after_withdrawal() {
    let d = Defects::take().await;
    for (defects, left) in [(&[][..], 0), (&["registry-keeps-removed-agent"][..], 1)] {
        d.set(defects);
        let state = RegistryState::new(Metrics::new());
        state.publish(agent(None));
        state.withdraw("tech_research");
        assert_eq!(state.agents().len(), left, "{defects:?}");
    }
}

#[tokio::test]
async fn registry_wrong_content_type_serves_text_plain() {
    let d = Defects::take().await;
    let ct = tokio_util::sync::CancellationToken::new();
    let _stop = ct.clone().drop_guard();
    let state = RegistryState::new(Metrics::new());
    state.publish(agent(None));
    let addr = serve(registry::router(state), ct).await;
    let content_type = || async {
        let response = pallas_reference::net::loopback_client()
            .get(format!("http://{addr}{}", registry::SERVER_JSON_PATH))
            .send()
            .await
            .unwrap();
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(content_type().await, "application/json");
    d.set(&["registry-wrong-content-type"]);
    assert_eq!(content_type().await, "text/plain");
}
