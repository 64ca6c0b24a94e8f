//! The agent module of a Pallas deployment (seed 001: `agents.<name>.module`, "Importable Python
//! module path containing a `fast` instance"), written as the seed's example writes it: a
//! `fast = FastAgent(...)` instance and an `@fast.agent(...)` decorated function.

use serde_json::Value;

use super::{Generator, Target};
use crate::scenario::AgentSpec;

/// How `agents.yaml` points at an agent's definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AgentRef {
    /// `module: agents.jarvis` (the seed's required key).
    Module(String),
    /// `card: agents/jarvis.md` (an AgentCard, for profiles that render one instead).
    Card(String),
}

/// What `agents.yaml` writes for `agent`: the module the profile's `agent_module` file is
/// (`agents/{agent}.py` → `agents.<agent>`), else the profile's `agent_card` file, else the
/// seed's form `agents.<agent>`.
pub(super) fn agent_ref(target: &Target, agent: &str, module: Option<&str>) -> AgentRef {
    let file = |g: Generator| {
        target
            .spec
            .files
            .iter()
            .find(|f| f.generate == Some(g) && f.path.contains("{agent}"))
            .map(|f| per_agent_path(&f.path, f.generate, agent, module))
    };
    if let Some(p) = file(Generator::AgentModule)
        && let Some(stem) = p.strip_suffix(".py")
    {
        let module = stem.strip_suffix("/__init__").unwrap_or(stem);
        return AgentRef::Module(module.trim_start_matches("./").replace('/', "."));
    }
    if let Some(p) = file(Generator::AgentCard) {
        return AgentRef::Card(p);
    }
    AgentRef::Module(format!("agents.{}", module_name(agent, module)))
}

/// A per-agent file's path for `agent` (whose deployment may name its module, `module`): an
/// agent module's `{agent}` is the agent's module name ([`module_name`]), any other file's the
/// key itself.
pub(super) fn per_agent_path(
    path: &str,
    generate: Option<Generator>,
    agent: &str,
    module: Option<&str>,
) -> String {
    if generate == Some(Generator::AgentModule) {
        path.replace("{agent}", &module_name(agent, module))
    } else {
        path.replace("{agent}", agent)
    }
}

/// The Python module name of an agent: the one its deployment names, else its key; hyphens
/// written as underscores (an agent key may hold a hyphen, a module name may not; two keys
/// differing only there would also share a registry slug).
fn module_name(agent: &str, module: Option<&str>) -> String {
    module.unwrap_or(agent).replace('-', "_")
}

/// A Python literal for a JSON value (strings in JSON's escaping, which Python reads alike).
fn py(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(py).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py(&Value::String(k.clone())), py(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The module text for `name`.
pub(super) fn agent_module(project: &str, name: &str, a: &AgentSpec) -> String {
    let s = |t: &str| py(&Value::String(t.to_owned()));
    let mut args = vec![
        format!("name={}", s(name)),
        format!(
            "instruction={}",
            s(a.instruction
                .as_deref()
                .unwrap_or("You are a helpful agent."))
        ),
        format!(
            "servers={}",
            py(&Value::Array(
                a.servers.iter().map(|x| Value::String(x.clone())).collect()
            ))
        ),
    ];
    if let Some(m) = &a.model {
        args.push(format!("model={}", s(m)));
    }
    // No `description=`: fast-agent's `@fast.agent` takes none; the agent's description is
    // `agents.<name>.description` in agents.yaml (seed 001), which the agents_yaml generator writes.
    let mut imports = String::from("from fast_agent import FastAgent\n");
    if let Some(Value::Object(rp)) = &a.request_params {
        imports.push_str("from fast_agent.types import RequestParams\n");
        let kw: Vec<String> = rp.iter().map(|(k, v)| format!("{k}={}", py(v))).collect();
        args.push(format!("request_params=RequestParams({})", kw.join(", ")));
    }
    let func: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    format!(
        "{imports}\nfast = FastAgent({}, parse_cli_args=False)\n\n\n@fast.agent(\n{})\nasync def _{func}():\n    pass\n",
        s(project),
        args.iter()
            .map(|a| format!("    {a},\n"))
            .collect::<String>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_has_the_seeds_shape() {
        let a = AgentSpec {
            instruction: Some("Say \"hi\".\nTwice.".into()),
            servers: vec!["argos".into()],
            model: Some("openai.kit-model".into()),
            request_params: Some(serde_json::json!({"temperature": 0.5, "use_history": false})),
            ..AgentSpec::default()
        };
        let text = agent_module("kit", "tech-research", &a);
        assert!(
            text.contains("fast = FastAgent(\"kit\", parse_cli_args=False)"),
            "{text}"
        );
        assert!(text.contains("    name=\"tech-research\",\n"), "{text}");
        assert!(
            text.contains("    instruction=\"Say \\\"hi\\\".\\nTwice.\",\n"),
            "{text}"
        );
        assert!(text.contains("    servers=[\"argos\"],\n"), "{text}");
        assert!(
            text.contains("request_params=RequestParams(temperature=0.5, use_history=False)"),
            "{text}"
        );
        assert!(
            text.contains("from fast_agent.types import RequestParams\n"),
            "{text}"
        );
        assert!(text.contains("async def _tech_research():"), "{text}");
    }

    #[test]
    fn a_key_with_a_hyphen_gets_a_module_a_python_can_import() {
        assert_eq!(
            per_agent_path(
                "agents/{agent}.py",
                Some(Generator::AgentModule),
                "tech-writer",
                None
            ),
            "agents/tech_writer.py"
        );
        assert_eq!(
            per_agent_path(
                "agents/{agent}.md",
                Some(Generator::AgentCard),
                "tech-writer",
                None
            ),
            "agents/tech-writer.md"
        );
        assert_eq!(module_name("Data_Agent-2", None), "Data_Agent_2");
        assert_eq!(module_name("jarvis", Some("impl-j")), "impl_j");
    }
}
