//! `/metrics` on the registry port and on every agent port; the exposition parses and passes the
//! lints of `promtool check metrics` (in-process, and with promtool itself when it is on `PATH`).

use std::io::Write;

use serde_json::json;

use crate::exposition;
use crate::support::{McpSession, Project, client, ecosystem, start};

async fn scrape(addr: std::net::SocketAddr) -> (String, String) {
    let resp = client()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    (ct, resp.text().await.unwrap())
}

#[tokio::test]
async fn every_port_serves_the_seed_metrics_after_traffic() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let agents = pallas.agent_addrs().await;
    let mut session = McpSession::open(&format!("http://{}/mcp", agents["jarvis"]), None).await;
    let r = session
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL argos__search_web {\"q\":\"x\"}"}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    let h = session.call_tool("get_health", json!({})).await;
    assert_ne!(h["isError"], true, "{h}");
    session.close().await;

    let mut bodies = Vec::new();
    for addr in [
        pallas.registry_addr.unwrap(),
        agents["jarvis"],
        agents["research"],
    ] {
        let (ct, body) = scrape(addr).await;
        assert_eq!(ct, "text/plain; version=0.0.4", "{addr}");
        bodies.push(body);
    }
    let text = &bodies[0];
    for needle in [
        "pallas_up 1",
        &format!(
            "pallas_agent_info{{agent=\"jarvis\",port=\"{}\"}} 1",
            agents["jarvis"].port()
        ),
        &format!(
            "pallas_agent_info{{agent=\"research\",port=\"{}\"}} 1",
            agents["research"].port()
        ),
        "pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"} 1",
        "pallas_send_message_duration_seconds_count{agent=\"jarvis\"} 1",
        "pallas_llm_turns_total{agent=\"jarvis\",model=\"mock-model\"} 2",
        "pallas_llm_tokens_total{agent=\"jarvis\",kind=\"input\",model=\"mock-model\"}",
        "pallas_tool_calls_total{agent=\"jarvis\",operation=\"tool\",outcome=\"ok\",server=\"argos\"} 1",
        "pallas_tool_call_duration_seconds_bucket{agent=\"jarvis\",operation=\"tool\",server=\"argos\",le=\"+Inf\"} 1",
        "pallas_downstream_up{agent=\"jarvis\",server=\"argos\"} 1",
        "pallas_downstream_up{agent=\"jarvis\",server=\"weather\"} 1",
        "pallas_llm_provider_up{provider=\"openai\"} 1",
        "pallas_agent_health_status{agent=\"jarvis\"} 1",
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
        "process_open_fds",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    // Agent ports serve the same process-wide snapshot.
    for body in &bodies[1..] {
        assert!(body.contains("pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"} 1"));
    }
    pallas.shutdown().await;
}

#[tokio::test]
async fn the_metrics_are_a_valid_exposition() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let agents = pallas.agent_addrs().await;
    let mut session = McpSession::open(&format!("http://{}/mcp", agents["jarvis"]), None).await;
    session
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL argos__search_web {\"q\":\"x\"}"}),
        )
        .await;
    session.call_tool("get_health", json!({})).await;
    session.close().await;
    let (_, body) = scrape(pallas.registry_addr.unwrap()).await;
    pallas.shutdown().await;

    let problems = exposition::lint(&body);
    assert!(
        problems.is_empty(),
        "the exposition has problems:\n{}\n---\n{body}",
        problems.join("\n")
    );
    match exposition::promtool_check(&body) {
        exposition::Promtool::Accepted => {}
        exposition::Promtool::Rejected(why) => {
            panic!("promtool rejected the metrics:\n{why}\n---\n{body}")
        }
        exposition::Promtool::Missing => {
            assert!(
                std::env::var_os("PALLAS_REQUIRE_PROMTOOL").is_none(),
                "PALLAS_REQUIRE_PROMTOOL is set but promtool is not on PATH \
                 (Debian package `prometheus`: apt-get install -y prometheus)"
            );
            // Written past the test harness's capture, so that a passing run shows it too.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: `promtool check metrics` (promtool not on PATH; the in-process \
                 exposition checks ran; set PALLAS_REQUIRE_PROMTOOL=1 to require it)"
            );
        }
    }
}
