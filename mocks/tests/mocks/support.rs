//! Helpers shared by the test modules.

use std::net::SocketAddr;
use std::time::Duration;

use pallas_mocks::{LlmMock, LlmMockSpec, McpMock, McpMockSpec};
use serde_json::Value;

pub fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

pub fn client() -> reqwest::Client {
    pallas_mocks::http_client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

pub fn llm_spec(yaml: &str) -> LlmMockSpec {
    pallas_mocks::yaml::from_str("test.yaml", yaml).unwrap()
}

pub async fn llm(yaml: &str) -> LlmMock {
    LlmMock::start(llm_spec(yaml), any_port()).await.unwrap()
}

pub async fn mcp(yaml: &str) -> McpMock {
    let spec: McpMockSpec = pallas_mocks::yaml::from_str("test.yaml", yaml).unwrap();
    McpMock::start("test", spec, any_port()).await.unwrap()
}

/// The JSON payloads of an SSE body's `data:` lines (empty data and `[DONE]` skipped).
pub fn sse_data(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .flat_map(|event| event.lines())
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty() && *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad SSE data {d}: {e}")))
        .collect()
}

/// `event:` names of an SSE body, in order.
pub fn sse_event_names(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .map(str::to_owned)
        .collect()
}
