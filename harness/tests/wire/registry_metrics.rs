//! Registry fetch and `/metrics` scrape against fixtures.

use std::time::Duration;

use pallas_conformance::client::{
    ClientError, Recorder, WireClient, WireEventKind, fetch_registry, scrape_metrics,
    streamable_http_url,
};
use serde_json::json;

use crate::fixture::{Fixture, Reply};

fn registry_doc() -> serde_json::Value {
    json!({"servers": [
        {"server": {"name": "com.example/pallas-research", "title": "Research Agent",
            "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}]}},
        {"server": {"name": "com.example/infra",
            "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:2/mcp"}]}}
    ]})
}

#[tokio::test]
async fn the_registry_is_fetched_from_the_well_known_path_and_parsed() {
    let fx = Fixture::start(|req| {
        if req.path == "/.well-known/mcp/server.json" {
            Reply::json(registry_doc())
        } else {
            Reply::status(404, "text/plain", "no")
        }
    })
    .await;
    let client = WireClient::new(Recorder::new(), Duration::from_secs(5)).unwrap();
    let fetch = fetch_registry(&client, &fx.base).await.unwrap();
    assert_eq!(fetch.status, 200);
    assert_eq!(fetch.content_type.as_deref(), Some("application/json"));
    assert_eq!(fetch.body.as_ref(), Some(&registry_doc()));
    let servers = fetch.servers();
    assert_eq!(servers.len(), 2);
    assert_eq!(
        streamable_http_url(servers[1]),
        Some("http://127.0.0.1:2/mcp")
    );
    assert_eq!(fx.captured()[0].header("accept"), Some("application/json"));
    // The registry document is not a JSON-RPC message and is not recorded as one.
    let snap = client.recorder().snapshot();
    assert_eq!(snap.len(), 1);
    assert!(
        matches!(&snap[0].kind, WireEventKind::Http(h) if h.response_body.as_deref().is_some_and(|b| b.contains("pallas-research")))
    );
    assert_eq!(snap[0].label, "registry");
}

#[tokio::test]
async fn a_registry_that_is_not_json_is_reported_with_its_text() {
    let fx = Fixture::start(|_| Reply::status(200, "text/html", "<html>hi</html>")).await;
    let client = WireClient::new(Recorder::new(), Duration::from_secs(5)).unwrap();
    let fetch = fetch_registry(&client, &fx.base).await.unwrap();
    assert_eq!(fetch.body, None);
    assert_eq!(fetch.text, "<html>hi</html>");
    assert!(fetch.servers().is_empty());
}

#[tokio::test]
async fn a_hanging_registry_is_a_timeout_error() {
    let fx = Fixture::start(|_| {
        let mut r = Reply::json(json!({}));
        r.chunks.clear();
        r.hang = true;
        r
    })
    .await;
    let client = WireClient::new(Recorder::new(), Duration::from_millis(300)).unwrap();
    let err = fetch_registry(&client, &fx.base).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Timeout { after_ms: 300, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn metrics_are_scraped_and_parsed_into_families() {
    let text = "# HELP pallas_up up\n# TYPE pallas_up gauge\npallas_up 1\n\
                # TYPE pallas_agent_health_status gauge\n\
                pallas_agent_health_status{agent=\"harper\"} 0.5\n\
                pallas_agent_health_status{agent=\"research\"} 1\n\
                broken{ 3\n";
    let fx = Fixture::start(move |req| {
        assert_eq!(req.path, "/metrics");
        Reply::status(200, "text/plain; version=0.0.4", text)
    })
    .await;
    let client = WireClient::new(Recorder::new(), Duration::from_secs(5)).unwrap();
    let scrape = scrape_metrics(&client, &fx.base).await.unwrap();
    assert_eq!(scrape.status, 200);
    assert_eq!(
        scrape.content_type.as_deref(),
        Some("text/plain; version=0.0.4")
    );
    assert_eq!(scrape.value("pallas_up", &[]), Some(1.0));
    assert_eq!(
        scrape.value("pallas_agent_health_status", &[("agent", "harper")]),
        Some(0.5)
    );
    assert_eq!(
        scrape.value("pallas_agent_health_status", &[]),
        None,
        "two samples match"
    );
    assert_eq!(
        scrape.family("pallas_agent_health_status").unwrap().kind,
        "gauge"
    );
    assert_eq!(scrape.parse_errors.len(), 1);
    assert!(
        scrape.parse_errors[0].starts_with("line 7:"),
        "{:?}",
        scrape.parse_errors
    );
}
