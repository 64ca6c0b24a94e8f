//! Tests of the registry checks.

use serde_json::json;

use super::*;
use crate::checks::registry::*;
use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};

#[test]
fn reg_004_wants_a_streamable_http_remote_at_a_deployed_live_endpoint() {
    let entry = |url: &str| json!([{"server": {"name": "a/research", "remotes": [{"type": "streamable-http", "url": url}]}}]);
    let mut connect = step("connect", "connect", 1, 2, json!({"status": 200}));
    connect.agent = Some("research".into());
    let mut o = obs(vec![registry(entry("http://localhost:8301/mcp")), connect]);
    o.agent_urls
        .insert("research".into(), "http://127.0.0.1:8301/mcp".into());
    assert_eq!(run("REG-004", &CheckSpec::default(), &o), Outcome::Pass);
    o.steps[0] = registry(entry("http://localhost:9999/mcp"));
    assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
    o.steps[0] = registry(
        json!([{"server": {"name": "a/research", "remotes": [{"type": "sse", "url": "http://x/sse"}]}}]),
    );
    assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
    o.steps[0] = registry(entry("http://localhost:8301/mcp"));
    o.steps[1].set_output(json!({"status": 502}));
    assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
    assert!(skipped(&run(
        "REG-004",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn reg_006_applies_the_documented_title_and_version_defaults() {
    assert_eq!(python_title("tech_research"), "Tech_Research");
    assert_eq!(python_title("a1b c"), "A1B C");
    let mut o = obs(vec![registry(json!([
        {"server": {"name": "ns/research", "title": "Research Agent", "description": "Web", "version": "1.0.0"}},
        {"server": {"name": "ns/tech-research", "title": "Tech_Research", "version": "1.0.0"}}
    ]))]);
    o.deployment = Some(deployment(json!({"namespace": "ns", "agents": {
        "research": {"title": "Research Agent", "description": "Web"}, "tech_research": {}}})));
    assert_eq!(run("REG-006", &CheckSpec::default(), &o), Outcome::Pass);
    o.steps[0] = registry(
        json!([{"server": {"name": "ns/tech-research", "title": "tech-research", "version": "1.0.0"}}]),
    );
    let Outcome::Fail(reason, _) = run("REG-006", &CheckSpec::default(), &o) else {
        panic!("a slug is not the default title")
    };
    assert!(reason.contains("title"), "{reason}");
    o.steps[0] = registry(
        json!([{"server": {"name": "ns/tech-research", "title": "Tech_Research", "version": "0.1.0"}}]),
    );
    assert!(fails(&run("REG-006", &CheckSpec::default(), &o)));
    o.deployment = None;
    assert!(skipped(&run("REG-006", &CheckSpec::default(), &o)));
}
