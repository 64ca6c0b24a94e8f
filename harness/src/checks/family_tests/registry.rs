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
    kept(run("REG-004", &CheckSpec::default(), &o));
    // A remote that is no live endpoint breaks the SHOULD "treated as an MCP endpoint".
    let endpoint = "s000.registry-remote-is-endpoint";
    o.steps[0] = registry(entry("http://localhost:9999/mcp"));
    assert!(breaks(&run("REG-004", &CheckSpec::default(), &o), endpoint));
    // No streamable-http remote: the required `remotes` (MUST, the first rule).
    o.steps[0] = registry(
        json!([{"server": {"name": "a/research", "remotes": [{"type": "sse", "url": "http://x/sse"}]}}]),
    );
    assert!(matches!(
        run("REG-004", &CheckSpec::default(), &o),
        Outcome::Fail(..)
    ));
    o.steps[0] = registry(entry("http://localhost:8301/mcp"));
    o.steps[1].set_output(json!({"status": 502}));
    assert!(breaks(&run("REG-004", &CheckSpec::default(), &o), endpoint));
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
    kept(run("REG-006", &CheckSpec::default(), &o));
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

#[test]
fn reg_002_and_reg_003_name_the_rule_each_break_is_of() {
    let fetch = |out: serde_json::Value| obs(vec![step("registry", "registry", 0, 1, out)]);
    let json_ct = "application/json";
    let ok = fetch(json!({"status": 200, "content_type": json_ct, "body": {"servers": []}}));
    kept(run("REG-002", &CheckSpec::default(), &ok));
    let auth = fetch(json!({"status": 401, "content_type": json_ct}));
    assert!(breaks(
        &run("REG-002", &CheckSpec::default(), &auth),
        "s000.registry-no-auth"
    ));
    let down = fetch(json!({"status": 500, "content_type": json_ct}));
    assert!(breaks(
        &run("REG-002", &CheckSpec::default(), &down),
        "s000.registry-servers-required"
    ));
    let no_servers = fetch(json!({"status": 200, "content_type": json_ct, "body": {"items": []}}));
    assert!(breaks(
        &run("REG-002", &CheckSpec::default(), &no_servers),
        "s000.registry-servers-required"
    ));
    let text = fetch(json!({"status": 200, "content_type": "text/html", "body": {"servers": []}}));
    assert!(matches!(
        run("REG-002", &CheckSpec::default(), &text),
        Outcome::Fail(..)
    ));
    // REG-003 over a deployment of `research` in namespace `a`.
    let deployed = |servers: serde_json::Value| {
        let mut o = obs(vec![registry(servers)]);
        o.deployment = Some(deployment(
            json!({"namespace": "a", "agents": {"research": {}}}),
        ));
        o
    };
    let good = deployed(json!([{"server": {"name": "a/research"}}]));
    kept(run("REG-003", &CheckSpec::default(), &good));
    let nameless = deployed(json!([{"server": {"title": "Research"}}]));
    assert!(breaks(
        &run("REG-003", &CheckSpec::default(), &nameless),
        "s000.registry-name-required"
    ));
    let flat = deployed(json!([{"server": {"name": "research"}}]));
    assert!(breaks(
        &run("REG-003", &CheckSpec::default(), &flat),
        "schema.server-name-one-slash"
    ));
    let other = deployed(json!([{"server": {"name": "a/research_x"}}]));
    assert!(matches!(
        run("REG-003", &CheckSpec::default(), &other),
        Outcome::Fail(..)
    ));
}
