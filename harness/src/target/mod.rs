//! Target profiles: how to deploy and start one implementation under test — files rendered
//! from a scenario's deployment, the command, readiness probes, the message tool's name and the
//! capabilities claimed.

mod agent_module;
mod launch;
mod message_key;
mod render;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use message_key::MessageKey;
pub use render::{Rendered, render_deployment, static_vars};

use crate::log_format::LogFormat;
use crate::scenario::{Capability, DeploymentSpec, InstanceScope, InvalidFiles, from_yaml};

/// A target profile file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Short name shown in reports.
    pub name: String,
    /// What the target is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Run once before any scenario (e.g. `cargo build`), in the workspace directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
    /// Program and arguments, templated (`{{workspace}}`, `{{run.dir}}`, `{{ports.registry}}`).
    /// The deployment's per-run arguments go where `{{run.args}}` stands (an element of its
    /// own: one argument each; inside a `sh -c` script: shell-quoted), else at the end.
    pub command: Vec<String>,
    /// Environment, templated. The command line's `--target-env K=V` adds to it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Files rendered into the run directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileSpec>,
    /// The registry URL (templated); absent for targets without a registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_url: Option<String>,
    /// An agent's MCP endpoint (templated with `{{agent.name}}`, `{{agent.port}}`).
    pub agent_url: String,
    /// `/metrics` URL of the registry port (templated); absent: no metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_url: Option<String>,
    /// `/metrics` URL of an agent port (templated with `{{agent.port}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_metrics_url: Option<String>,
    /// Readiness probes, all of which must pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readiness: Vec<ProbeSpec>,
    /// Name of the message tool: `send_message`, or a template such as `{agent}`.
    #[serde(default = "default_message_tool")]
    pub message_tool: String,
    /// The message tool's arguments, templated: an object whose string values may hold
    /// `{message}` (the message sent) and `{agent}` (the agent's name), at any depth; other
    /// values are sent as written. Absent: `{"message": "{message}"}`. At least one string
    /// must hold `{message}`. The message key (what MSG-001 wants the listed tool's
    /// `inputSchema` to declare a required string) is the path of keys to the string that is
    /// exactly `{message}`, at any depth (`{run_args: {message: "{message}"}}`:
    /// `run_args.message`); none such: `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_arguments: Option<BTreeMap<String, serde_json::Value>>,
    /// Where the answer stands in the message tool's reply, when its text block is not the
    /// answer itself but a JSON document that carries it: a JSONPath (RFC 9535) that selects
    /// exactly one string in that document, e.g. `$.text` for `{"text": "…", "usage": {…}}`.
    /// Absent: the first text block is the answer. Read only on the message tool's results
    /// that are not `isError`; a text that is not such JSON is observed as no answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_path: Option<String>,
    /// Name of the health tool.
    #[serde(default = "default_health_tool")]
    pub health_tool: String,
    /// Capabilities the target claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<Capability>,
    /// How the implementation is told an agent's instance scope, and the scope it runs at when
    /// told none. Absent: no scope can be set and the default is unknown.
    #[serde(default, skip_serializing_if = "ScopeSpec::is_unset")]
    pub instance_scope: ScopeSpec,
    /// Log files the implementation writes (templated), read by log checks with stdout/stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_files: Vec<String>,
    /// How its JSON log records read, when not as seed 001's (`time`, `level`, `logger`,
    /// `message`, Python level names): field names, level names, logger separator.
    #[serde(default, skip_serializing_if = "crate::target::is_seed_log_format")]
    pub logs: LogFormat,
    /// Startup deadline (default 30s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub startup_timeout: Option<Duration>,
    /// How a reload is triggered after the files are rewritten: `sighup` (default) or `restart`.
    #[serde(default)]
    pub reload: ReloadMode,
    /// A fast start for a Python bridge: every launch is forked from an interpreter that has
    /// already imported the bridge's libraries, and runs as `python -m MODULE ARGS` would. The
    /// command names the interpreter `{{python}}` (`["{{python}}", "-m", "my_bridge"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_start: Option<FastStart>,
    /// Default step timeout for this target (the command line's `--step-timeout` is the
    /// fallback; a scenario's `timeouts.step` wins over both).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub step_timeout: Option<Duration>,
    /// The longest retry back-off the target documents (e.g. an SDK retrying a failed model
    /// request after 10 s): added to every step timeout, so a retry is observed, not cut off, and
    /// to the scenario deadline once per message the scenario sends.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub retry_backoff: Option<Duration>,
    /// How much the harness reads of each answer, registry, scrape and log (MiB); the command
    /// line's `--max-*-mib` options win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::client::ReadLimits>,
}

fn is_seed_log_format(f: &LogFormat) -> bool {
    *f == LogFormat::default()
}

fn default_message_tool() -> String {
    "send_message".to_owned()
}

fn default_health_tool() -> String {
    "get_health".to_owned()
}

/// Where a target sets the instance scope a scenario's agent asks for (seed 001 names
/// `instance_scope` for the history prompt without saying where a deployment sets it: each
/// implementation has its own place).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeSpec {
    /// The file that carries it: `agents_yaml` (`agents.<name>.instance_scope` of the
    /// `agents_yaml` file) or `agent_card` (`instance_scope` in the front matter of the
    /// `agent_card` file). Absent: the target cannot be told a scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<ScopeSetting>,
    /// The scope the implementation runs at when the deployment sets none. A scenario asking for
    /// a scope that cannot be set runs when this is the scope it asks for, and is skipped
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<InstanceScope>,
}

impl ScopeSpec {
    fn is_unset(&self) -> bool {
        *self == Self::default()
    }
}

/// The file a target's instance scope is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScopeSetting {
    /// `agents.<name>.instance_scope` in the `agents_yaml` file.
    AgentsYaml,
    /// `instance_scope` in the front matter of the agent's `agent_card` file.
    AgentCard,
}

/// How the implementation picks up a changed deployment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReloadMode {
    /// Send SIGHUP to the process.
    #[default]
    Sighup,
    /// Stop it and start it again.
    Restart,
}

/// One rendered file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Path relative to the run directory; `{agent}` makes one file per agent (in an
    /// `agent_module` file, the agent's module name: its key with hyphens as underscores).
    pub path: String,
    /// Built-in generator: `agents_yaml`, `fastagent_config`, `fastagent_secrets`,
    /// `agent_card`, `agent_module`, `dotenv`, `mock_agents_ecosystem`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<Generator>,
    /// Literal template text (`{{…}}` variables), instead of a generator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// Built-in renderers of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// Pallas `agents.yaml`.
    AgentsYaml,
    /// `fastagent.config.yaml` (model, capabilities, providers, MCP servers, logger).
    FastagentConfig,
    /// `fastagent.secrets.yaml` (API keys).
    FastagentSecrets,
    /// `agents/{agent}.md` agent card (front matter + instruction).
    AgentCard,
    /// `agents/{agent}.py` agent module (seed 001): a `fast = FastAgent(...)` instance and an
    /// `@fast.agent(...)` decorated function with the agent's name, instruction, servers, model.
    AgentModule,
    /// `.env` with the deployment's `env`.
    Dotenv,
    /// A `pallas-mocks up` ecosystem where each agent is a mock MCP server offering the
    /// message tool and `get_health` (a stand-in implementation that proves the harness).
    MockAgentsEcosystem,
}

/// A readiness probe, templated. `each_agent` repeats it for every agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// HTTP GET answering 2xx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<String>,
    /// MCP initialize answering a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_initialize: Option<String>,
    /// TCP connect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<String>,
    /// Repeat for every agent (`{{agent.url}}`, `{{agent.port}}`).
    #[serde(default)]
    pub each_agent: bool,
}

/// `fast_start:` of a profile (`harness/docs/fast-start.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FastStart {
    /// A Python bridge's interpreter: a path, or shell words (`${VENV}/bin/python`) expanded
    /// in the profile's environment. Launches through `{{python}}` fork from a warm server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Modules imported once before any launch: the bridge's libraries, never its own code (a
    /// module that reads its configuration when imported would read it once for every launch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preload: Vec<String>,
    /// A Node bridge (Node 22.1 or later): every launch gets `NODE_COMPILE_CACHE`, a directory
    /// kept per target where Node stores the code it compiled from the bridge's modules, so a
    /// launch loads what an earlier one compiled instead of compiling it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub node: bool,
}

/// A loaded profile and where it lives (relative paths resolve against the workspace root:
/// the nearest ancestor of the profile holding a `Cargo.toml` with `[workspace]`).
#[derive(Debug, Clone)]
pub struct Target {
    /// The profile.
    pub spec: TargetSpec,
    /// The profile file.
    pub path: PathBuf,
    /// The workspace root (`{{workspace}}`).
    pub workspace: PathBuf,
    /// Extra environment from the command line (wins over the profile's `env`).
    pub env_overrides: BTreeMap<String, String>,
    /// What `{{python}}` names when the profile has a `fast_start`: the warm launcher of the
    /// run's warm server, or (a cold run) the profile's interpreter.
    pub python: Option<String>,
}

impl Target {
    /// The message tool's name for an agent.
    pub fn message_tool(&self, agent: &str) -> String {
        self.spec.message_tool.replace("{agent}", agent)
    }

    /// The message tool's arguments for `message` sent to `agent` (the profile's
    /// `message_arguments`, default `{"message": message}`).
    pub fn message_arguments(&self, agent: &str, message: &str) -> serde_json::Value {
        match &self.spec.message_arguments {
            None => serde_json::json!({ "message": message }),
            Some(template) => serde_json::Value::Object(
                template
                    .iter()
                    .map(|(k, v)| (k.clone(), fill_message_template(v, agent, message)))
                    .collect(),
            ),
        }
    }

    /// The arguments of a `call` step of `tool` on `agent`, as sent: when `tool` is the
    /// target's message tool, a value the step writes under `message` (seed 001's argument) is
    /// moved to where the profile's `message_arguments` carries the message (its
    /// [`message_key`](Self::message_key), e.g. `input` or `run_args.message`), so that a call
    /// with a wrong or missing message exercises the target's own argument; and the profile's
    /// fixed `message_arguments` (the top-level keys whose value holds no `{message}`, `{agent}`
    /// filled) are added to `arguments` (absent or `null`: `{}`), except the keys the step sets
    /// itself. Any other tool, and arguments that are not an object, are sent as written.
    pub fn call_arguments(
        &self,
        agent: &str,
        tool: &str,
        arguments: Option<serde_json::Value>,
    ) -> Option<serde_json::Value> {
        use serde_json::Value;
        let Some(template) = &self.spec.message_arguments else {
            return arguments;
        };
        if tool != self.message_tool(agent) {
            return arguments;
        }
        let mut args = match arguments {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => return Some(other),
        };
        let key = self.message_key();
        if key != MessageKey::default()
            && !template.contains_key("message")
            && let Some(message) = args.remove("message")
        {
            insert_at(&mut args, key.keys(), message);
        }
        for (k, v) in template.iter().filter(|(_, v)| !holds_message(v)) {
            args.entry(k.clone())
                .or_insert_with(|| fill_message_template(v, agent, ""));
        }
        Some(Value::Object(args))
    }

    /// Where the message tool's arguments carry the message: the path of keys, at any depth of
    /// `message_arguments`, to the string that is exactly `{message}` (the shallowest; see
    /// [`MessageKey::of_template`]), default `message`.
    pub fn message_key(&self) -> MessageKey {
        self.spec
            .message_arguments
            .as_ref()
            .and_then(MessageKey::of_template)
            .unwrap_or_default()
    }

    /// The profile's `reply_path`, parsed (checked when the profile was loaded).
    pub fn reply_path(&self) -> Option<serde_json_path::JsonPath> {
        self.spec
            .reply_path
            .as_deref()
            .and_then(|p| serde_json_path::JsonPath::parse(p).ok())
    }

    /// Whether the target claims a capability.
    pub fn claims(&self, cap: Capability) -> bool {
        self.spec.capabilities.contains(&cap)
    }

    /// Whether the target presents itself as a Pallas: it claims a Pallas-only capability.
    pub fn is_pallas(&self) -> bool {
        self.spec.capabilities.iter().any(|c| c.is_pallas_only())
    }

    /// Why `deployment` cannot be deployed as it asks, if it cannot: an agent asks for an
    /// instance scope the profile has no way to set, other than the scope the implementation
    /// runs at by default.
    pub fn scope_unavailable(&self, deployment: &DeploymentSpec) -> Option<String> {
        let profile = &self.spec.instance_scope;
        if profile.set.is_some() {
            return None;
        }
        let (agent, scope) = deployment
            .agents
            .iter()
            .filter_map(|(name, a)| a.instance_scope.map(|s| (name, s)))
            .find(|(_, s)| profile.default != Some(*s))?;
        let default = match profile.default {
            Some(d) => format!("runs at `{}` by default", d.as_str()),
            None => "declares no default scope".to_owned(),
        };
        Some(format!(
            "agent `{agent}` needs `instance_scope: {}`: the target profile has no place to set it (`instance_scope.set`; seed 001 names the scope, not where a deployment sets it) and the target {default}",
            scope.as_str()
        ))
    }

    /// Runs the `build` command once, in the workspace; returns its output on failure.
    pub fn build(&self) -> Result<(), BuildError> {
        let Some((program, args)) = self.spec.build.split_first() else {
            return Ok(());
        };
        let mut command = std::process::Command::new(program);
        command.args(args).current_dir(&self.workspace);
        without_cargo_package_vars(&mut command);
        let out = command.output().map_err(|source| BuildError::Run {
            program: program.clone(),
            source,
        })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(BuildError::Failed {
                command: self.spec.build.join(" "),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
        }
    }
}

/// Removes from `command` the variables that cargo sets for one package's process (`cargo run`,
/// `cargo test`) and that a build script may declare with `rerun-if-env-changed` (ring's, through
/// the `cc` crate, names `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`). A profile's `build` running
/// `cargo` under them (the kit itself started by `cargo run`) would see them changed, rebuild ring
/// and every crate above it, and leave the next plain `cargo` to rebuild them back: so `command`
/// does not get them.
pub fn without_cargo_package_vars(command: &mut std::process::Command) {
    const EXACT: &[&str] = &[
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    const PREFIXES: &[&str] = &[
        "CARGO_MANIFEST_",
        "CARGO_PKG_",
        "CARGO_BIN_EXE_",
        "CARGO_CFG_",
    ];
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| {
            EXACT.contains(&n) || PREFIXES.iter().any(|prefix| n.starts_with(prefix))
        }) {
            command.env_remove(name);
        }
    }
}

/// Why the profile's `build` command failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// It could not be started.
    #[error("cannot run `{program}`: {source}")]
    Run {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// It exited unsuccessfully.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        /// The command line, joined by spaces.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last 20 lines of its stderr.
        stderr: String,
    },
}

/// Replaces `{agent}` and `{message}` in every string of `v`, in one pass (a message holding
/// `{agent}` is sent as written).
fn fill_message_template(v: &serde_json::Value, agent: &str, message: &str) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let mut out = String::with_capacity(s.len() + message.len());
            let mut rest = s.as_str();
            while let Some(i) = rest.find('{') {
                out.push_str(&rest[..i]);
                let tail = &rest[i..];
                if let Some(after) = tail.strip_prefix("{message}") {
                    out.push_str(message);
                    rest = after;
                } else if let Some(after) = tail.strip_prefix("{agent}") {
                    out.push_str(agent);
                    rest = after;
                } else {
                    out.push('{');
                    rest = &tail[1..];
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| fill_message_template(i, agent, message))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_message_template(v, agent, message)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Puts `value` at the path `keys` of `args` (never empty), making the objects on the way; a
/// non-object on the way is replaced.
fn insert_at(
    args: &mut serde_json::Map<String, serde_json::Value>,
    keys: &[String],
    value: serde_json::Value,
) {
    let Some((last, outer)) = keys.split_last() else {
        return;
    };
    let mut at = args;
    for k in outer {
        let slot = at
            .entry(k.clone())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if !slot.is_object() {
            *slot = serde_json::Value::Object(serde_json::Map::new());
        }
        let Some(inner) = slot.as_object_mut() else {
            return;
        };
        at = inner;
    }
    at.insert(last.clone(), value);
}

/// Whether some string of `v`, at any depth, holds `{message}`.
fn holds_message(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains("{message}"),
        serde_json::Value::Array(items) => items.iter().any(holds_message),
        serde_json::Value::Object(map) => map.values().any(holds_message),
        _ => false,
    }
}

/// Finds the workspace root above `start`.
pub fn workspace_root(start: &Path) -> PathBuf {
    let abs = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if abs.is_dir() {
        abs.clone()
    } else {
        abs.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    loop {
        let manifest = dir.join("Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("[workspace]")) {
            return dir;
        }
        if !dir.pop() {
            return abs.parent().map(Path::to_path_buf).unwrap_or_default();
        }
    }
}

/// Parses a profile from text.
pub fn parse_str(file: &str, text: &str) -> Result<TargetSpec, InvalidFiles> {
    let spec: TargetSpec = from_yaml(file, text).map_err(|e| InvalidFiles { errors: vec![e] })?;
    let mut errors = Vec::new();
    if spec.command.is_empty() {
        errors.push(crate::scenario::SpecError::at(
            file,
            text,
            1,
            1,
            "`command` is empty",
            Some("e.g. `command: [\"{{workspace}}/target/debug/pallas\"]`".into()),
        ));
    }
    for (i, f) in spec.files.iter().enumerate() {
        if f.generate.is_some() == f.template.is_some() {
            let line = text
                .lines()
                .position(|l| l.contains(&f.path))
                .map_or(0, |p| p + 1);
            errors.push(crate::scenario::SpecError::at(
                file,
                text,
                line,
                1,
                format!(
                    "file {} (`{}`) needs exactly one of `generate` or `template`",
                    i + 1,
                    f.path
                ),
                None,
            ));
        }
    }
    let packs: Vec<&str> = spec
        .capabilities
        .iter()
        .filter(|c| c.is_pack())
        .map(|c| c.as_str())
        .collect();
    let pallas: Vec<&str> = spec
        .capabilities
        .iter()
        .filter(|c| c.is_pallas_only())
        .map(|c| c.as_str())
        .collect();
    // An error at the line of a top-level key (0 when the key is not written).
    let at_key = |key: &str, message: String, hint: &str| {
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("{key}:")))
            .map_or(0, |p| p + 1);
        crate::scenario::SpecError::at(file, text, line, 1, message, Some(hint.into()))
    };
    if packs.len() > 1 || (!packs.is_empty() && !pallas.is_empty()) {
        errors.push(at_key(
            "capabilities",
            format!(
                "a target implements one system: it claims the packs {packs:?} and the Pallas-only capabilities {pallas:?}"
            ),
            "a pack target claims its pack and no other pack or Pallas-only capability",
        ));
    }
    if spec.capabilities.contains(&Capability::PallasProgress)
        && !spec.capabilities.contains(&Capability::Progress)
    {
        errors.push(at_key(
            "capabilities",
            "`pallas_progress` is claimed without `progress`: seed 000's wording is judged on progress notifications".into(),
            "add `progress` to `capabilities`, or leave `pallas_progress` out",
        ));
    }
    if let Some(template) = &spec.message_arguments
        && !template.values().any(holds_message)
    {
        errors.push(at_key(
            "message_arguments",
            "`message_arguments` sends no `{message}`: no string value holds it".into(),
            "e.g. `message_arguments: {message: \"{message}\"}`",
        ));
    }
    if let Some(fast) = &spec.fast_start {
        if fast.python.is_none() && !fast.node {
            errors.push(at_key(
                "fast_start",
                "`fast_start` names no runtime: neither `python` nor `node: true`".into(),
                "a Python bridge: `fast_start: {python: PATH, preload: [...]}`; a Node bridge: `fast_start: {node: true}`",
            ));
        } else if fast.python.is_none() && !fast.preload.is_empty() {
            errors.push(at_key(
                "fast_start",
                "`fast_start.preload` without `python`: only a Python warm server imports modules"
                    .into(),
                "add the bridge's interpreter as `python`, or remove `preload`",
            ));
        }
    }
    if let Some(path) = &spec.reply_path
        && let Err(e) = serde_json_path::JsonPath::parse(path)
    {
        errors.push(at_key(
            "reply_path",
            format!("`reply_path` is not a JSONPath: {e}"),
            "e.g. `reply_path: \"$.text\"` for a reply `{\"text\": \"…\"}`",
        ));
    }
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(InvalidFiles { errors })
    }
}

/// Loads a profile file.
pub fn load(path: &Path) -> Result<Target, InvalidFiles> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| InvalidFiles {
        errors: vec![crate::scenario::SpecError::at(
            &file,
            "",
            0,
            0,
            format!("cannot read: {e}"),
            None,
        )],
    })?;
    let spec = parse_str(&file, &text)?;
    Ok(Target {
        spec,
        path: path.to_path_buf(),
        workspace: workspace_root(path),
        env_overrides: BTreeMap::new(),
        python: None,
    })
}
