//! Configuration files: defaults, expansion, cards, and errors located at file:line:col.

use std::collections::HashMap;
use std::time::Duration;

use pallas_reference::config::{self, ConfigError, LoadOptions};
use pallas_reference::settings::{InstanceScope, Provider};

use crate::support::Project;

fn load_with(project: &Project, env: &[(&str, &str)]) -> Result<config::Deployment, ConfigError> {
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    config::load(
        project.path(),
        &LoadOptions {
            agents_config: None,
            env: Some(env),
        },
    )
}

fn minimal() -> Project {
    let p = Project::new();
    p.write(
        "agents.yaml",
        "name: my-project\nagents:\n  tech_research:\n    module: agents.tech_research\n    port: 8201\n",
    );
    p.write("fastagent.config.yaml", "default_model: openai.my-model\n");
    p.write(
        "agents/tech_research.md",
        "---\nname: tech_research\n---\nDo research.\n",
    );
    p
}

fn error_of(project: &Project) -> ConfigError {
    load_with(project, &[]).expect_err("the configuration must be rejected")
}

fn assert_located(e: &ConfigError, file: &str, line: usize) {
    assert!(
        e.path.ends_with(file),
        "error names {} instead of {file}: {e}",
        e.path.display()
    );
    let pos = e.position.unwrap_or_else(|| panic!("no position in: {e}"));
    assert_eq!(pos.line, line, "wrong line in: {e}");
    assert!(pos.column >= 1);
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("{file}:{line}:{}", pos.column)),
        "Display lacks file:line:col: {shown}"
    );
    assert!(e.hint.is_some(), "no hint in: {e}");
}

#[test]
fn seed_defaults_apply_when_fields_are_absent() {
    let d = load_with(&minimal(), &[]).unwrap();
    assert_eq!(d.version, "1.0.0");
    assert_eq!(d.host, "localhost");
    assert_eq!(d.registry_port, 24200);
    assert_eq!(d.namespace, "local.my-project");
    let a = d.agent("tech_research").unwrap();
    assert_eq!(
        a.title, "Tech_Research",
        "title defaults to Python's name.title()"
    );
    assert_eq!(a.description, "Tech_Research agent served by Pallas");
    assert_eq!(a.port, 8201);
    let s = &a.settings;
    assert_eq!(s.instruction, "Do research.");
    assert_eq!(s.model.provider, Provider::OpenAi);
    assert_eq!(s.model.model, "my-model");
    assert_eq!(s.provider.base_url, "https://api.openai.com/v1");
    assert_eq!(s.provider.api_key, None);
    assert_eq!(s.capabilities.context_window, 131_072);
    assert_eq!(s.capabilities.max_output_tokens, 16_384);
    assert!(!s.capabilities.vision);
    assert_eq!(s.request_params.max_iterations, 20);
    assert_eq!(s.instance_scope, InstanceScope::Shared);
    assert_eq!(s.health.probe_timeout, Duration::from_secs(3));
    assert_eq!(s.health.llm_ttl, Duration::from_secs(60));
    assert!(!d.publish_capabilities);
}

#[test]
fn every_agents_yaml_field_and_card_field_is_read() {
    let p = Project::new();
    p.write(
        "agents.yaml",
        "name: proj\nversion: \"2.3.4\"\nhost: puck.incus\nnamespace: ca.helu.ouranos\nregistry_port: 23030\nhealth:\n  probe_timeout: 2s\n  llm_ttl: 30s\nagents:\n  research:\n    card: cards/r.md\n    port: 23031\n    title: Research Agent\n    description: Web search\n    instance_scope: connection\n    icons:\n      - src: https://example.com/r.svg\n        sizes: any\n  jarvis:\n    module: agents.jarvis\n    port: 23032\n    depends_on: [research]\n",
    );
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.base-model\nmodel_capabilities:\n  vision: true\n  context_window: 200000\n  max_output_tokens: 32000\nlogger:\n  level: debug\nanthropic:\n  base_url: http://anthropic.local\nmcp:\n  servers:\n    mnemosyne:\n      transport: http\n      url: http://m.local/mcp\n      headers:\n        X-Team: blue\n      forward_inbound_auth: true\n",
    );
    p.write(
        "cards/r.md",
        "---\nname: research\nmodel: anthropic.claude-sonnet-4-5\nservers: [mnemosyne]\nrequest_params:\n  temperature: 0.6\n  top_p: 0.9\n  top_k: 40\n  maxTokens: 1000\n  max_iterations: 7\n---\nYou research.\n",
    );
    p.write(
        "agents/jarvis.md",
        "---\ninstruction: From the front matter\n---\n",
    );
    let d = load_with(&p, &[("ANTHROPIC_API_KEY", "sk-ant-xyz")]).unwrap();
    assert_eq!(
        (
            d.version.as_str(),
            d.host.as_str(),
            d.namespace.as_str(),
            d.registry_port
        ),
        ("2.3.4", "puck.incus", "ca.helu.ouranos", 23030)
    );
    assert!(d.publish_capabilities);
    assert_eq!(d.log_level.as_deref(), Some("debug"));
    let r = d.agent("research").unwrap();
    assert_eq!(r.title, "Research Agent");
    assert_eq!(r.description, "Web search");
    assert_eq!(r.icons[0].sizes, vec!["any".to_owned()]);
    let s = &r.settings;
    assert_eq!(s.model.provider, Provider::Anthropic);
    assert_eq!(s.model.model, "claude-sonnet-4-5");
    assert_eq!(s.provider.base_url, "http://anthropic.local");
    assert_eq!(s.provider.api_key.as_ref().unwrap().expose(), "sk-ant-xyz");
    assert_eq!(s.instance_scope, InstanceScope::Connection);
    assert_eq!(s.request_params.temperature, Some(0.6));
    assert_eq!(s.request_params.top_p, Some(0.9));
    assert_eq!(s.request_params.top_k, Some(40));
    assert_eq!(s.request_params.max_tokens, Some(1000));
    assert_eq!(s.request_params.max_iterations, 7);
    assert!(s.capabilities.vision);
    assert_eq!(s.capabilities.context_window, 200_000);
    assert_eq!(s.health.probe_timeout, Duration::from_secs(2));
    assert_eq!(s.allowed_hosts, vec!["puck.incus".to_owned()]);
    let m = &s.servers[0];
    assert_eq!(
        (m.name.as_str(), m.url.as_str()),
        ("mnemosyne", "http://m.local/mcp")
    );
    assert!(
        m.forward_inbound_auth,
        "forward_inbound_auth must survive parsing"
    );
    assert_eq!(m.headers[0].0, "X-Team");
    assert_eq!(m.headers[0].1.expose(), "blue");
    let j = d.agent("jarvis").unwrap();
    assert_eq!(j.settings.instruction, "From the front matter");
    assert_eq!(j.depends_on, vec!["research".to_owned()]);
    let order: Vec<&str> = d.start_order().iter().map(|a| a.name()).collect();
    assert_eq!(order, ["research", "jarvis"]);
}

#[test]
fn secrets_expand_variables_and_override_the_config() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.my-model\nopenai:\n  api_key: from-config\nmcp:\n  servers:\n    argos:\n      url: http://argos.local/mcp\n      headers:\n        Authorization: \"Bearer ${ARGOS_TOKEN}\"\n        X-Unset: \"${NOT_SET_ANYWHERE}\"\n",
    );
    p.write(
        "fastagent.secrets.yaml",
        "openai:\n  api_key: \"${OPENAI_API_KEY}\"\n  base_url: \"${OPENAI_BASE_URL}\"\n",
    );
    p.write("agents/tech_research.md", "---\nservers: [argos]\n---\nx\n");
    p.write(
        ".env",
        "OPENAI_API_KEY=sk-from-dotenv\nARGOS_TOKEN=tok-dotenv\n",
    );
    let d = load_with(&p, &[("ARGOS_TOKEN", "tok-env")]).unwrap();
    let s = &d.agents[0].settings;
    assert_eq!(
        s.provider.api_key.as_ref().unwrap().expose(),
        "sk-from-dotenv"
    );
    assert_eq!(
        s.provider.base_url, "https://api.openai.com/v1",
        "an unset OPENAI_BASE_URL falls back to the default"
    );
    let headers: Vec<(&str, &str)> = s.servers[0]
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.expose()))
        .collect();
    assert_eq!(
        headers,
        [("Authorization", "Bearer tok-env")],
        ".env never overrides the environment, and a header with an unset variable is left out"
    );
    assert!(!s.servers[0].forward_inbound_auth);
}

#[test]
fn openai_base_url_comes_from_the_environment_when_the_config_has_none() {
    let d = load_with(
        &minimal(),
        &[("OPENAI_BASE_URL", "http://llm.local:8080/v1/")],
    )
    .unwrap();
    assert_eq!(
        d.agents[0].settings.provider.base_url,
        "http://llm.local:8080/v1"
    );
}

#[test]
fn an_unknown_downstream_server_is_an_error_in_the_card_with_a_suggestion() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.m\nmcp:\n  servers:\n    argos:\n      url: http://a/mcp\n",
    );
    p.write(
        "agents/tech_research.md",
        "---\nname: t\nservers:\n  - argso\n---\nbody\n",
    );
    let e = error_of(&p);
    assert_located(&e, "tech_research.md", 4);
    assert!(e.message.contains("argso"), "{e}");
    assert!(
        e.hint.as_deref().unwrap().contains("did you mean `argos`"),
        "{:?}",
        e.hint
    );
}

#[test]
fn a_port_clash_names_both_users() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nregistry_port: 9000\nagents:\n  a:\n    card: a.md\n    port: 9001\n  b:\n    card: a.md\n    port: 9001\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 9);
    assert!(e.message.contains("agent `a` (line 6)"), "{e}");
    p.write(
        "agents.yaml",
        "name: p\nregistry_port: 9000\nagents:\n  a:\n    card: a.md\n    port: 9000\n",
    );
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 6);
    assert!(e.message.contains("the registry"), "{e}");
}

#[test]
fn a_missing_module_says_which_file_to_create() {
    let p = minimal();
    std::fs::remove_file(p.file("agents/tech_research.md")).unwrap();
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 4);
    assert!(e.message.contains("agents/tech_research.py"), "{e}");
    assert!(e.hint.as_deref().unwrap().contains("@fast.agent"));
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  a:\n    card: agents/a.md\n    port: 1\n",
    );
    let e = error_of(&p);
    assert!(e.message.contains("agents/a.md"), "{e}");
    assert!(e.hint.as_deref().unwrap().contains("front matter"));
}

#[test]
fn a_module_is_read_from_its_fast_agent_decorator_and_wins_over_a_card() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.my-model\nmcp:\n  servers:\n    argos: {transport: http, url: 'http://127.0.0.1:1/mcp'}\n",
    );
    p.write(
        "agents/tech_research.py",
        "from fast_agent import FastAgent\nfrom fast_agent.types import RequestParams\n\nfast = FastAgent(\"Research\", parse_cli_args=False)\n\n\n@fast.agent(\n    name=\"tech_research\",\n    instruction=\"Research \"\n    \"from the module.\",\n    servers=[\"argos\"],\n    model=\"openai.other-model\",\n    request_params=RequestParams(temperature=0.25),\n)\nasync def main():\n    pass\n",
    );
    let d = load_with(&p, &[]).unwrap();
    let s = &d.agent("tech_research").unwrap().settings;
    assert_eq!(s.instruction, "Research from the module.");
    assert_eq!(s.model.model, "other-model");
    assert_eq!(s.servers.len(), 1);
    assert_eq!(s.request_params.temperature, Some(0.25));
    // An unknown server is reported at its line of the module.
    p.write(
        "agents/tech_research.py",
        "fast = FastAgent('r')\n@fast.agent(\n    name='tech_research',\n    servers=['nope'],\n)\n",
    );
    let e = error_of(&p);
    assert_located(&e, "agents/tech_research.py", 4);
    assert!(e.message.contains("nope"), "{e}");
}

#[test]
fn a_dependency_cycle_is_reported_with_its_path() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  a:\n    card: a.md\n    port: 1\n    depends_on: [b]\n  b:\n    card: a.md\n    port: 2\n    depends_on: [a]\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 10);
    assert!(e.message.contains("a → b → a"), "{e}");
}

#[test]
fn an_unknown_dependency_is_an_error() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  alpha:\n    card: a.md\n    port: 1\n    depends_on: [alpah]\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 6);
    assert!(e.hint.as_deref().unwrap().contains("alpha"));
}

#[test]
fn an_unset_variable_in_a_server_url_is_an_error() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.m\nmcp:\n  servers:\n    argos:\n      transport: http\n      url: \"${ARGOS_URL}\"\n",
    );
    p.write("agents/tech_research.md", "---\nservers: [argos]\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "fastagent.config.yaml", 6);
    assert!(e.message.contains("ARGOS_URL"), "{e}");
    // With the variable set, the same file loads.
    let d = load_with(&p, &[("ARGOS_URL", "http://argos.local/mcp")]).unwrap();
    assert_eq!(
        d.agents[0].settings.servers[0].url,
        "http://argos.local/mcp"
    );
}

#[test]
fn a_misspelt_forwarding_switch_is_rejected_not_dropped() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.m\nmcp:\n  servers:\n    mnemosyne:\n      url: http://m/mcp\n      forward_inbound_auht: true\n",
    );
    let e = error_of(&p);
    assert_located(&e, "fastagent.config.yaml", 6);
    assert!(
        e.hint.as_deref().unwrap().contains("forward_inbound_auth"),
        "{:?}",
        e.hint
    );
}

#[test]
fn fast_agent_server_keys_the_reference_does_not_use_are_accepted() {
    let p = minimal();
    p.write(
        "fastagent.config.yaml",
        "default_model: openai.m\nexecution_engine: asyncio\nmcp:\n  servers:\n    m:\n      transport: http\n      url: http://m/mcp\n      read_timeout_seconds: 30\n      load_on_start: true\n      forward_inbound_auth: true\n",
    );
    p.write("agents/tech_research.md", "---\nservers: [m]\n---\nx\n");
    let d = load_with(&p, &[]).unwrap();
    assert!(d.agents[0].settings.servers[0].forward_inbound_auth);
}

#[test]
fn malformed_yaml_is_reported_at_its_line() {
    let p = minimal();
    p.write("agents.yaml", "name: p\nagents:\n  a:\n    port: [1\n");
    let e = error_of(&p);
    assert!(e.path.ends_with("agents.yaml"));
    assert!(e.position.is_some(), "{e}");
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  a:\n    module: agents.a\n    port: eighty\n",
    );
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 5);
}

#[test]
fn an_unknown_agents_yaml_key_gets_a_suggestion() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  a:\n    module: agents.a\n    port: 1\n    depend_on: [b]\n",
    );
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 6);
    assert!(
        e.hint.as_deref().unwrap().contains("depends_on"),
        "{:?}",
        e.hint
    );
}

#[test]
fn card_errors_point_into_the_card() {
    let p = minimal();
    p.write(
        "agents/tech_research.md",
        "---\nname: t\nmodel: gpt-4.1\n---\nbody\n",
    );
    let e = error_of(&p);
    assert_located(&e, "tech_research.md", 3);
    assert!(e.hint.as_deref().unwrap().contains("openai."));
    p.write("agents/tech_research.md", "no front matter\n");
    let e = error_of(&p);
    assert_located(&e, "tech_research.md", 1);
}

#[test]
fn an_agent_without_any_model_is_an_error() {
    let p = minimal();
    p.write("fastagent.config.yaml", "logger:\n  level: info\n");
    let e = error_of(&p);
    assert!(e.message.contains("no model"), "{e}");
    assert!(e.hint.as_deref().unwrap().contains("default_model"));
}

#[test]
fn pallas_agents_config_points_at_another_file() {
    let p = minimal();
    let text = std::fs::read_to_string(p.file("agents.yaml")).unwrap();
    std::fs::remove_file(p.file("agents.yaml")).unwrap();
    p.write("deploy/prod.yaml", &text);
    // Cards given by `module` resolve from the project directory.
    let d = load_with(&p, &[("PALLAS_AGENTS_CONFIG", "deploy/prod.yaml")]).unwrap();
    assert!(d.agents_file.ends_with("deploy/prod.yaml"));
    assert_eq!(d.agents.len(), 1);
    let e = load_with(&p, &[]).unwrap_err();
    assert!(e.message.contains("cannot read"), "{e}");
}

#[test]
fn the_miette_rendering_shows_the_line_and_the_hint() {
    let p = minimal();
    p.write("agents/tech_research.md", "---\nservers: [nope]\n---\nx\n");
    let e = error_of(&p);
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, &e)
        .unwrap();
    assert!(out.contains("servers: [nope]"), "{out}");
    assert!(out.contains("mcp.servers"), "{out}");
}

#[test]
fn agents_whose_registry_names_collide_are_rejected() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  tech_research:\n    card: a.md\n    port: 1\n  tech-research:\n    card: a.md\n    port: 2\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 6);
    assert!(e.message.contains("…/tech-research"), "{e}");
}

mod properties {
    use proptest::prelude::*;

    use super::{load_with, minimal};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever agents.yaml holds, loading answers with a deployment or a located error.
        #[test]
        fn any_agents_yaml_loads_or_fails_cleanly(text in "(name: p\n)?(agents:\n)?([ a-z_:\\-\\[\\]{},.0-9\"'#\n]{0,80})") {
            let p = minimal();
            p.write("agents.yaml", &text);
            if let Err(e) = load_with(&p, &[]) {
                prop_assert!(e.to_string().contains("agents.yaml"));
                let mut out = String::new();
                miette::GraphicalReportHandler::new().render_report(&mut out, &e).unwrap();
            }
        }
    }
}

#[test]
fn a_clash_with_the_default_registry_port_names_no_line() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  a:\n    card: a.md\n    port: 24200\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 5);
    assert!(
        e.message
            .ends_with("is already used by the registry (default port)"),
        "{e}"
    );
}

#[test]
fn agent_keys_that_publish_the_same_name_are_located_at_the_second_key() {
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nagents:\n  tech_research:\n    card: a.md\n    port: 1\n  \"tech-research\":\n    card: a.md\n    port: 2\n",
    );
    p.write("a.md", "---\n---\nx\n");
    let e = error_of(&p);
    assert_located(&e, "agents.yaml", 6);
    assert_eq!(e.position.map(|pos| pos.column), Some(3), "{e}");
}

#[test]
fn a_namespace_outside_the_registry_name_pattern_is_rejected() {
    for namespace in ["bad namespace!", &"a".repeat(151)] {
        let p = minimal();
        p.write(
            "agents.yaml",
            &format!(
                "name: p\nnamespace: \"{namespace}\"\nagents:\n  tech_research:\n    module: agents.tech_research\n    port: 8201\n"
            ),
        );
        let e = error_of(&p);
        assert!(e.message.contains("namespace"), "{namespace}: {e}");
    }
    let p = minimal();
    p.write(
        "agents.yaml",
        "name: p\nnamespace: ca.helu-x.b2\nagents:\n  tech_research:\n    module: agents.tech_research\n    port: 8201\n",
    );
    assert_eq!(load_with(&p, &[]).unwrap().namespace, "ca.helu-x.b2");
}
