//! Rendering a deployment for a target: free ports, template variables, config files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::agent_module::{AgentRef, agent_module, agent_ref, per_agent_path};
use super::launch::{launch_spec, readiness_probes};
use super::{Generator, ScopeSetting, Target};
use crate::process::{LaunchSpec, ReadinessProbe, free_port};
use crate::redact::Redactor;
use crate::scenario::template::{Vars, render};
use crate::scenario::{AgentSpec, DEFAULT_REGISTRY_PORT, DeploymentSpec, InstanceScope};

/// What rendering produced: where to reach things, how to launch, what is secret.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Template variables (`registry.url`, `agents.NAME.url`, `mocks.NAME.url`, `run.dir`…).
    pub vars: Vars,
    /// Agent key → MCP endpoint URL.
    pub agent_urls: BTreeMap<String, String>,
    /// Agent key → port.
    pub agent_ports: BTreeMap<String, u16>,
    /// Registry URL, when the target has one.
    pub registry_url: Option<String>,
    /// How to launch.
    pub launch: LaunchSpec,
    /// Readiness probes.
    pub probes: Vec<ReadinessProbe>,
    /// Log files to read (absolute).
    pub log_files: Vec<PathBuf>,
    /// Files written (relative paths).
    pub files: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
/// Why a deployment could not be rendered.
pub enum RenderError {
    /// A template variable has no value.
    #[error("target `{target}`: {source}")]
    Template {
        /// Target name.
        target: String,
        /// The template error.
        #[source]
        source: crate::scenario::template::TemplateError,
    },
    /// I/O.
    #[error("cannot write {path}: {reason}")]
    Io {
        /// File.
        path: String,
        /// Why.
        reason: String,
    },
}

impl RenderError {
    /// Wraps a template error of `target`'s profile.
    fn template(
        target: &Target,
    ) -> impl Fn(crate::scenario::template::TemplateError) -> Self + Copy + '_ {
        |source| Self::Template {
            target: target.spec.name.clone(),
            source,
        }
    }

    /// A file of the run folder could not be written.
    fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        }
    }
}

fn slug(agent: &str) -> String {
    agent.replace('_', "-")
}

/// The templates a profile may use outside any deployment: `{{workspace}}`,
/// `{{cargo_target_dir}}` and, with a `fast_start`, `{{python}}`.
pub fn static_vars(target: &Target) -> Vars {
    let mut vars = Vars::new();
    vars.insert("workspace".into(), target.workspace.display().to_string());
    let target_dir = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| target.workspace.join("target"));
    let target_dir = if target_dir.is_absolute() {
        target_dir
    } else {
        target.workspace.join(target_dir)
    };
    vars.insert("cargo_target_dir".into(), target_dir.display().to_string());
    if let Some(python) = target.python.clone().or_else(|| {
        target
            .spec
            .fast_start
            .as_ref()
            .and_then(|f| f.python.clone())
    }) {
        vars.insert("python".into(), python);
    }
    vars
}

/// Renders `deployment` for `target` into `run_dir`. `mock_urls` maps mock names to URLs;
/// `ports` reuses earlier port choices (reload keeps ports stable), new agents get free ports.
pub fn render_deployment(
    target: &Target,
    deployment: &DeploymentSpec,
    mock_urls: &BTreeMap<String, String>,
    run_dir: &Path,
    ports: &mut BTreeMap<String, u16>,
    redactor: &mut Redactor,
) -> Result<Rendered, RenderError> {
    let terr = RenderError::template(target);
    let io = RenderError::io;
    let mut vars = static_vars(target);
    vars.insert("run.dir".into(), run_dir.display().to_string());
    for (name, url) in mock_urls {
        vars.insert(format!("mocks.{name}.url"), url.clone());
    }
    if deployment.default_registry_port {
        // Left out of agents.yaml: the implementation's own default is the registry's port.
        ports.insert("@registry".to_owned(), DEFAULT_REGISTRY_PORT);
    }
    let mut port_for = |key: &str| -> Result<u16, RenderError> {
        if let Some(p) = ports.get(key) {
            return Ok(*p);
        }
        let p = free_port().map_err(|e| RenderError::Io {
            path: "127.0.0.1:0".into(),
            reason: e.to_string(),
        })?;
        ports.insert(key.to_owned(), p);
        Ok(p)
    };
    let registry_port = port_for("@registry")?;
    vars.insert("ports.registry".into(), registry_port.to_string());
    let mut agent_urls = BTreeMap::new();
    let mut agent_ports = BTreeMap::new();
    for name in deployment.agents.keys() {
        let port = port_for(name)?;
        agent_ports.insert(name.clone(), port);
        let mut v = vars.clone();
        v.insert("agent.name".into(), name.clone());
        v.insert("agent.port".into(), port.to_string());
        let url = render(&target.spec.agent_url, &v).map_err(terr)?;
        vars.insert(format!("agents.{name}.url"), url.clone());
        vars.insert(format!("agents.{name}.port"), port.to_string());
        // As Linux writes ports in /proc/net/tcp (a listening socket's local address).
        vars.insert(format!("agents.{name}.port_hex"), format!("{port:04X}"));
        agent_urls.insert(name.clone(), url);
    }
    let registry_url = match &target.spec.registry_url {
        Some(t) => Some(render(t, &vars).map_err(terr)?),
        None => None,
    };
    if let Some(r) = &registry_url {
        vars.insert("registry.url".into(), r.clone());
    }
    for (k, v) in &deployment.env {
        vars.insert(format!("env.{k}"), v.clone());
    }

    add_secrets(deployment, redactor);

    std::fs::create_dir_all(run_dir).map_err(|e| io(run_dir, e))?;
    let files = write_files(
        target,
        deployment,
        &vars,
        &agent_ports,
        registry_port,
        mock_urls,
        run_dir,
    )?;

    let launch = launch_spec(target, deployment, &vars, run_dir).map_err(terr)?;

    let probes =
        readiness_probes(target, deployment, &vars, &agent_urls, &agent_ports).map_err(terr)?;
    let log_files = target
        .spec
        .log_files
        .iter()
        .map(|l| render(l, &vars).map(PathBuf::from))
        .collect::<Result<_, _>>()
        .map_err(terr)?;
    Ok(Rendered {
        vars,
        agent_urls,
        agent_ports,
        registry_url,
        launch,
        probes,
        log_files,
        files,
    })
}

/// Writes the profile's config files (built-in generators or templates, per agent where the
/// path holds `{agent}`) and the deployment's own files into `run_dir`; their relative paths.
fn write_files(
    target: &Target,
    deployment: &DeploymentSpec,
    vars: &Vars,
    agent_ports: &BTreeMap<String, u16>,
    registry_port: u16,
    mock_urls: &BTreeMap<String, String>,
    run_dir: &Path,
) -> Result<Vec<String>, RenderError> {
    let terr = RenderError::template(target);
    let io = RenderError::io;
    let mut files = Vec::new();
    for f in &target.spec.files {
        let per_agent = f.path.contains("{agent}");
        let agents: Vec<Option<&String>> = if per_agent {
            deployment.agents.keys().map(Some).collect()
        } else {
            vec![None]
        };
        for agent in agents {
            let rel = match agent {
                Some(a) => per_agent_path(
                    &f.path,
                    f.generate,
                    a,
                    deployment.agents.get(a).and_then(|s| s.module.as_deref()),
                ),
                None => f.path.clone(),
            };
            let text = match (&f.generate, &f.template) {
                (Some(g), _) => generate(
                    *g,
                    target,
                    deployment,
                    vars,
                    agent_ports,
                    registry_port,
                    mock_urls,
                    agent.map(String::as_str),
                ),
                (None, Some(t)) => {
                    let mut v = vars.clone();
                    if let Some(a) = agent {
                        v.insert("agent.name".into(), a.clone());
                    }
                    render(t, &v).map_err(terr)?
                }
                (None, None) => String::new(),
            };
            let path = run_dir.join(&rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
            files.push(rel);
        }
    }

    for (rel, text) in &deployment.files {
        let path = run_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let text = render(text, vars).map_err(terr)?;
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        if !files.contains(rel) {
            files.push(rel.clone());
        }
    }
    for (rel, fill) in &deployment.prefill {
        let path = run_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let mut line = render(&fill.line, vars).map_err(terr)?;
        if !line.ends_with('\n') {
            line.push('\n');
        }
        let copies = usize::try_from(fill.bytes / line.len() as u64).unwrap_or(0);
        std::fs::write(&path, line.repeat(copies)).map_err(|e| io(&path, e))?;
        if !files.contains(rel) {
            files.push(rel.clone());
        }
    }
    Ok(files)
}

/// Adds the secrets the deployment carries (API keys, auth headers) to `redactor`.
fn add_secrets(deployment: &DeploymentSpec, redactor: &mut Redactor) {
    for p in deployment.providers.values() {
        if let Some(k) = &p.api_key {
            redactor.add(k.clone());
        }
    }
    for s in deployment.servers.values() {
        for (h, v) in &s.headers {
            if h.eq_ignore_ascii_case("authorization") || h.to_ascii_lowercase().contains("key") {
                redactor.add(v.clone());
            }
        }
    }
}

/// The instance scope `a` asks for, when the target's profile sets it in the file `setting`
/// names.
fn scope_in(target: &Target, setting: ScopeSetting, a: &AgentSpec) -> Option<InstanceScope> {
    (target.spec.instance_scope.set == Some(setting))
        .then_some(a.instance_scope)
        .flatten()
}

fn yaml(value: &Value) -> String {
    serde_saphyr::to_string(value)
        .unwrap_or_else(|_| serde_json::to_string_pretty(value).unwrap_or_default())
}

fn provider_url(
    deployment: &DeploymentSpec,
    name: &str,
    mock_urls: &BTreeMap<String, String>,
    vars: &Vars,
) -> Option<String> {
    let p = deployment.providers.get(name)?;
    if let Some(m) = &p.mock {
        return mock_urls.get(m).cloned();
    }
    p.base_url
        .as_ref()
        .map(|u| render(u, vars).unwrap_or_else(|_| u.clone()))
}

#[allow(clippy::too_many_arguments)]
#[expect(
    clippy::too_many_lines,
    reason = "one arm per built-in file generator of the profile format"
)]
fn generate(
    g: Generator,
    target: &Target,
    d: &DeploymentSpec,
    vars: &Vars,
    agent_ports: &BTreeMap<String, u16>,
    registry_port: u16,
    mock_urls: &BTreeMap<String, String>,
    agent: Option<&str>,
) -> String {
    match g {
        Generator::AgentsYaml => {
            let mut agents = Map::new();
            for (name, a) in &d.agents {
                let mut e = Map::new();
                match agent_ref(target, name, a.module.as_deref()) {
                    AgentRef::Module(m) => {
                        e.insert("module".into(), json!(m));
                    }
                    AgentRef::Card(c) => {
                        e.insert("card".into(), json!(c));
                    }
                }
                if let Some(s) = scope_in(target, ScopeSetting::AgentsYaml, a) {
                    e.insert("instance_scope".into(), json!(s.as_str()));
                }
                e.insert("port".into(), json!(agent_ports.get(name)));
                if let Some(t) = &a.title {
                    e.insert("title".into(), json!(t));
                }
                if let Some(t) = &a.description {
                    e.insert("description".into(), json!(t));
                }
                if !a.depends_on.is_empty() {
                    e.insert("depends_on".into(), json!(a.depends_on));
                }
                agents.insert(name.clone(), Value::Object(e));
            }
            let mut top = Map::new();
            top.insert("name".into(), json!(d.name));
            if let Some(v) = &d.version {
                top.insert("version".into(), json!(v));
            }
            if let Some(n) = &d.namespace {
                top.insert("namespace".into(), json!(n));
            }
            top.insert("host".into(), json!("127.0.0.1"));
            if !d.default_registry_port {
                top.insert("registry_port".into(), json!(registry_port));
            }
            top.insert("agents".into(), Value::Object(agents));
            yaml(&Value::Object(top))
        }
        Generator::FastagentConfig => {
            let mut top = Map::new();
            top.insert("default_model".into(), json!(d.model));
            if let Some(c) = &d.model_capabilities {
                top.insert(
                    "model_capabilities".into(),
                    serde_json::to_value(c).unwrap_or_default(),
                );
            }
            for p in crate::scenario::PROVIDERS {
                if let Some(url) = provider_url(d, p, mock_urls, vars) {
                    top.insert(p.into(), json!({"base_url": url}));
                }
            }
            let mut servers = Map::new();
            for (name, s) in &d.servers {
                let url = match (&s.mock, &s.url) {
                    (Some(m), _) => mock_urls.get(m).cloned().unwrap_or_default(),
                    (None, Some(u)) => render(u, vars).unwrap_or_else(|_| u.clone()),
                    _ => String::new(),
                };
                let mut e = Map::new();
                e.insert("transport".into(), json!("http"));
                e.insert("url".into(), json!(url));
                if !s.headers.is_empty() {
                    e.insert("headers".into(), json!(s.headers));
                }
                if s.forward_inbound_auth {
                    e.insert("forward_inbound_auth".into(), json!(true));
                }
                servers.insert(name.clone(), Value::Object(e));
            }
            top.insert("mcp".into(), json!({"servers": servers}));
            top.insert(
                "logger".into(),
                json!({"level": d.log_level.clone().unwrap_or_else(|| "info".into())}),
            );
            yaml(&Value::Object(top))
        }
        Generator::FastagentSecrets => {
            let mut top = Map::new();
            for (name, p) in &d.providers {
                if let Some(k) = &p.api_key {
                    top.insert(name.clone(), json!({"api_key": k}));
                }
            }
            yaml(&Value::Object(top))
        }
        Generator::AgentCard => {
            let name = agent.unwrap_or_default();
            let a = d.agents.get(name).cloned().unwrap_or_default();
            let mut fm = Map::new();
            fm.insert("name".into(), json!(name));
            if let Some(t) = &a.description {
                fm.insert("description".into(), json!(t));
            }
            if let Some(m) = &a.model {
                fm.insert("model".into(), json!(m));
            }
            fm.insert("servers".into(), json!(a.servers));
            if let Some(r) = &a.request_params {
                fm.insert("request_params".into(), r.clone());
            }
            if let Some(s) = scope_in(target, ScopeSetting::AgentCard, &a) {
                fm.insert("instance_scope".into(), json!(s.as_str()));
            }
            format!(
                "---\n{}---\n{}\n",
                yaml(&Value::Object(fm)),
                a.instruction
                    .as_deref()
                    .unwrap_or("You are a helpful agent.")
            )
        }
        Generator::AgentModule => {
            let name = agent.unwrap_or_default();
            let a = d.agents.get(name).cloned().unwrap_or_default();
            agent_module(&d.name, name, &a)
        }
        Generator::Dotenv => d
            .env
            .iter()
            .filter(|(k, _)| !d.dotenv.contains_key(*k))
            .chain(d.dotenv.iter())
            .map(|(k, v)| format!("{k}={}\n", render(v, vars).unwrap_or_else(|_| v.clone())))
            .collect(),
        Generator::MockAgentsEcosystem => {
            let mut servers = Map::new();
            for name in d.agents.keys() {
                let tool = target.message_tool(name);
                servers.insert(
                    name.clone(),
                    json!({
                        "port": agent_ports.get(name),
                        "server_name": format!("{}/{}", d.namespace.clone().unwrap_or_else(|| d.name.clone()), slug(name)),
                        "tools": [
                            {"name": tool, "description": "Send a message to the agent.",
                             "input_schema": {"type": "object", "properties": {"message": {"type": "string"}, "images": {"type": "array"}}, "required": ["message"]},
                             "result": "echo_args", "progress": 2},
                            {"name": target.spec.health_tool, "description": "Returns the health status of this agent and its downstream dependencies.",
                             "input_schema": {"type": "object", "properties": {}, "additionalProperties": false},
                             "result": {"text": "{\"status\":\"ok\"}"}}
                        ]
                    }),
                );
            }
            yaml(&json!({"mcp_servers": servers}))
        }
    }
}
