//! Target profiles: the message tool's argument template.

use pallas_conformance::target::{self, Target};
use serde_json::json;

fn profile(extra: &str) -> Result<Target, String> {
    let text = format!("name: t\ncommand: [x]\nagent_url: \"http://127.0.0.1:1/mcp\"\n{extra}");
    target::parse_str("t.yaml", &text)
        .map(|spec| Target {
            spec,
            path: "t.yaml".into(),
            workspace: ".".into(),
            env_overrides: Default::default(),
        })
        .map_err(|e| e.render_plain())
}

#[test]
fn without_a_template_the_message_tool_gets_the_message_alone() {
    let t = profile("").unwrap();
    assert_eq!(t.message_arguments("a", "hi"), json!({"message": "hi"}));
    assert_eq!(t.message_tool("a"), "send_message");
}

#[test]
fn a_template_fills_message_and_agent_at_any_depth_and_keeps_other_values() {
    let t = profile(
        "message_tool: run_agent\nmessage_arguments:\n  agent_id: \"{agent}\"\n  input: \"{message}\"\n  \
         options: {stream: false, tags: [\"from {agent}\"]}\n",
    )
    .unwrap();
    assert_eq!(
        t.message_arguments("research", "say {agent} {x}"),
        json!({"agent_id": "research", "input": "say {agent} {x}",
               "options": {"stream": false, "tags": ["from research"]}})
    );
}

#[test]
fn a_template_that_sends_no_message_is_refused_at_load() {
    let err = profile("message_arguments:\n  agent_id: \"{agent}\"\n").unwrap_err();
    assert!(err.contains("sends no `{message}`"), "{err}");
    assert!(err.contains("t.yaml:4"), "{err}");
    let err = profile("message_arguments: [\"{message}\"]\n").unwrap_err();
    assert!(err.contains("message_arguments"), "{err}");
}

#[test]
fn every_profile_in_scenarios_targets_loads_and_sends_the_message() {
    let dir = super::common::scenarios_dir().join("targets");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let t = target::load(&p).unwrap_or_else(|e| panic!("{}", e.render_plain()));
            let args = t.message_arguments("agent-x", "the-message-text");
            assert!(
                args.to_string().contains("the-message-text"),
                "{}: {args}",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 8, "{n} profiles");
}
