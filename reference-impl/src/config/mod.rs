//! Configuration files: `agents.yaml`, `fastagent.config.yaml`, secrets, `.env`, agent cards.
//!
//! [`load`] reads every file of a project directory, applies the defaults of seed 001's
//! "Configuration Reference", expands `${VAR}` references and validates the whole deployment, so
//! that every error is reported (file, line, column, hint) before anything listens.

mod cards;
mod checks;
mod env;
mod error;
mod files;
mod merge;
mod network;
mod pymodule;
mod source;

use cards::*;
use checks::*;
use merge::*;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_saphyr::Spanned;

pub use env::Env;
pub use error::{ConfigError, ConfigErrorDetails, Position};
pub use files::IconSpec;

use crate::settings::{
    AgentSettings, HealthSettings, InstanceScope, ModelCapabilities, ModelRef, Provider,
    ProviderSettings, RequestParams,
};
use files::{AgentsFileSpec, CardSpec};
use source::SourceFile;

/// Default `version` of registry entries.
pub const DEFAULT_VERSION: &str = "1.0.0";
/// Default `host` of registry URLs.
pub const DEFAULT_HOST: &str = "localhost";
/// Default registry port.
pub const DEFAULT_REGISTRY_PORT: u16 = 24200;
/// Default OpenAI base URL (`OPENAI_BASE_URL` unset).
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default Anthropic base URL (`ANTHROPIC_BASE_URL` unset).
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// fast-agent's HuggingFace router, the `hf` provider's base URL when none is configured.
pub const DEFAULT_HF_BASE_URL: &str = "https://router.huggingface.co/v1";
/// The registry's limit on `title` and `description` (characters).
pub const REGISTRY_TEXT_LIMIT: usize = 100;

/// The default names of the files [`load`] reads.
pub const AGENTS_FILE: &str = "agents.yaml";
/// fast-agent's configuration file.
pub const FASTAGENT_CONFIG_FILE: &str = "fastagent.config.yaml";
/// fast-agent's secrets file.
pub const FASTAGENT_SECRETS_FILE: &str = "fastagent.secrets.yaml";

/// Where [`load`] looks and what it sees of the environment.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `agents.yaml` path (absolute or relative to the project directory); when absent,
    /// `PALLAS_AGENTS_CONFIG`, then `agents.yaml`.
    pub agents_config: Option<PathBuf>,
    /// Stand-in for the process environment (tests); `None` reads the real one.
    pub env: Option<HashMap<String, String>>,
}

/// A whole validated deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    /// Project directory (where `.env` and the fast-agent files are).
    pub dir: PathBuf,
    /// The `agents.yaml` in use.
    pub agents_file: PathBuf,
    /// Project name.
    pub name: String,
    /// Version published in registry entries.
    pub version: String,
    /// Host used in registry URLs.
    pub host: String,
    /// Reverse-DNS namespace of registry names.
    pub namespace: String,
    /// Registry port (0: ephemeral).
    pub registry_port: u16,
    /// Agents, in file order.
    pub agents: Vec<AgentEntry>,
    /// The LLM providers with an API key configured, whether an agent makes them active or not
    /// (the startup preflight checks the others once: seed 001's "Key set, not active").
    pub keyed_providers: Vec<(Provider, ProviderSettings)>,
    /// Whether `model_capabilities` is configured (the registry then publishes `capabilities`).
    pub publish_capabilities: bool,
    /// `logger.level` of `fastagent.config.yaml`.
    pub log_level: Option<String>,
    /// Files whose change triggers a reload.
    pub watched_files: Vec<PathBuf>,
    /// Extra CAs and proxies of outbound requests (read at start; a change needs a restart).
    pub network: crate::net::NetworkSettings,
}

/// One agent of the deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEntry {
    /// What the agent server runs with.
    pub settings: Arc<AgentSettings>,
    /// Port (0: ephemeral).
    pub port: u16,
    /// Registry title.
    pub title: String,
    /// Registry description.
    pub description: String,
    /// Registry icons.
    pub icons: Vec<IconSpec>,
    /// Agents that must be ready first.
    pub depends_on: Vec<String>,
    /// The file defining the agent (its card or its module).
    pub card: PathBuf,
}

impl AgentEntry {
    /// The agent key.
    pub fn name(&self) -> &str {
        &self.settings.name
    }
}

impl Deployment {
    /// The agent called `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentEntry> {
        self.agents.iter().find(|a| a.name() == name)
    }

    /// Agents in start order: every agent after the agents it depends on (file order otherwise).
    pub fn start_order(&self) -> Vec<&AgentEntry> {
        let mut done: HashSet<&str> = HashSet::new();
        let mut order = Vec::with_capacity(self.agents.len());
        // The graph is acyclic (checked by `load`), so each pass places at least one agent.
        while order.len() < self.agents.len() {
            let before = order.len();
            for a in &self.agents {
                if !done.contains(a.name())
                    && a.depends_on.iter().all(|d| done.contains(d.as_str()))
                {
                    done.insert(a.name());
                    order.push(a);
                }
            }
            if order.len() == before {
                break;
            }
        }
        order
    }
}

/// Reads and validates the deployment in `dir`.
#[expect(
    clippy::too_many_lines,
    reason = "seed 001's loading order, file by file, each step validated before the next reads it"
)]
pub fn load(dir: &Path, options: &LoadOptions) -> Result<Deployment, ConfigError> {
    // `rx-unset-header-var-blocks-agent`: this load says which servers have an unset variable.
    #[cfg(feature = "defects")]
    crate::defects::forget_unset_header_servers();
    let read_env = |dir: &Path| match &options.env {
        Some(vars) => Env::with_vars(vars.clone(), dir),
        None => Env::from_process(dir),
    };
    let env = read_env(dir)?;
    let agents_path = options
        .agents_config
        .clone()
        .or_else(|| {
            // `px-dotenv-loaded-only-in-preflight`: `.env` is read later, by the preflight, so
            // only the process environment can choose the deployment file.
            let from_env = if crate::defect!("px-dotenv-loaded-only-in-preflight") {
                match &options.env {
                    Some(vars) => vars.get("PALLAS_AGENTS_CONFIG").cloned(),
                    None => std::env::var("PALLAS_AGENTS_CONFIG").ok(),
                }
                .filter(|v| !v.is_empty())
            } else {
                env.get("PALLAS_AGENTS_CONFIG").map(str::to_owned)
            };
            from_env
                .filter(|_| !crate::defect!("agents-config-env-ignored"))
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from(AGENTS_FILE));
    let agents_path = if agents_path.is_absolute() {
        agents_path
    } else {
        dir.join(agents_path)
    };
    // `ms-project-dir-from-agents-config`: the project is taken to be where agents.yaml is.
    let fa_dir = match agents_path.parent() {
        Some(parent) if crate::defect!("ms-project-dir-from-agents-config") => parent,
        _ => dir,
    };
    let env = if fa_dir == dir {
        env
    } else {
        read_env(fa_dir)?
    };
    let agents_src = SourceFile::read(
        &agents_path,
        "the deployment file",
        "create agents.yaml in the working directory, or point PALLAS_AGENTS_CONFIG at it",
    )?;
    let defaulted = required_keys_defaulted(&agents_src.text);
    let spec: AgentsFileSpec = agents_src.parse(
        defaulted.as_deref().unwrap_or(&agents_src.text),
        "see the agents.yaml reference in reference-impl/README.md",
    )?;

    let mut watched = vec![agents_path.clone()];
    let (fa_spec, fa_src) = read_fast_agent(&fa_dir.join(FASTAGENT_CONFIG_FILE), &mut watched)?;
    let (secrets_spec, secrets_src) =
        read_fast_agent(&fa_dir.join(FASTAGENT_SECRETS_FILE), &mut watched)?;
    // `qx-placeholders-expanded-before-dotenv`: the environment as it is before `.env` is read.
    #[cfg(feature = "defects")]
    let process_env = Env::without_dotenv(match &options.env {
        Some(vars) => vars.clone(),
        None => std::env::vars().collect(),
    });
    let fa = Merged {
        config: &fa_spec,
        config_src: fa_src.as_ref(),
        secrets: &secrets_spec,
        secrets_src: secrets_src.as_ref(),
        env: &env,
        #[cfg(feature = "defects")]
        process_env: &process_env,
    };

    let name = spec.name.value.trim().to_owned();
    if name.is_empty() {
        return Err(at(&agents_src, &spec.name, "`name` is empty")
            .with_hint("give the project a name, e.g. `name: my-project`"));
    }
    let version = spec.version.as_ref().map_or_else(
        || {
            if crate::defect!("registry-version-default-0.1.0") {
                "0.1.0".to_owned()
            } else if crate::defect!("px-version-default-package-version") {
                // `px-version-default-package-version`: "version" read as the runtime's own.
                env!("CARGO_PKG_VERSION").to_owned()
            } else {
                DEFAULT_VERSION.to_owned()
            }
        },
        |v| v.value.clone(),
    );
    if let Some(v) = spec
        .version
        .as_ref()
        .filter(|_| version.is_empty() || version.len() > 255)
    {
        return Err(at(&agents_src, v, "`version` must be 1 to 255 characters")
            .with_hint("use a semantic version such as 1.0.0"));
    }
    // `ms-version-yaml-scalar`: an unquoted `version` is kept as the scalar YAML resolves it to.
    #[cfg(feature = "defects")]
    if crate::defect!("ms-version-yaml-scalar") {
        let plain = spec.version.as_ref().filter(|v| {
            agents_src
                .position(&v.referenced)
                .and_then(|pos| agents_src.text.get(agents_src.span_at(pos).0..))
                .is_some_and(|at| !at.starts_with(['"', '\'', '|', '>']))
        });
        crate::defects::remember_plain_version(plain.map(|v| v.value.as_str()));
    }
    let host = spec.host.as_ref().map_or_else(
        || {
            if crate::defect!("host-default-127") {
                "127.0.0.1".to_owned()
            } else if crate::defect!("ms-host-default-machine-hostname") {
                // `ms-host-default-machine-hostname`: `socket.gethostname()`.
                machine_hostname()
            } else {
                DEFAULT_HOST.to_owned()
            }
        },
        |h| h.value.clone(),
    );
    // `rx-registry-name-without-namespace`: whether the file sets `namespace`.
    #[cfg(feature = "defects")]
    crate::defects::remember_namespace_configured(spec.namespace.is_some());
    let namespace = match spec
        .namespace
        .as_ref()
        .filter(|_| !crate::defect!("registry-namespace-ignored"))
    {
        Some(ns) => {
            if !valid_namespace(&ns.value) {
                return Err(at(
                    &agents_src,
                    ns,
                    format!("namespace `{}` is not a reverse-DNS name", ns.value),
                )
                .with_hint(
                    "use letters, digits, dots and hyphens only, e.g. com.example.project",
                ));
            }
            ns.value.clone()
        }
        None => default_namespace(&name),
    };
    let default_port = if crate::defect!("registry-default-port-wrong") {
        DEFAULT_REGISTRY_PORT + 1
    } else if crate::defect!("px-registry-port-default-from-contract") {
        // `px-registry-port-default-from-contract`: the port of seed 000's example registry URL.
        23030
    } else {
        DEFAULT_REGISTRY_PORT
    };
    let registry_port = spec
        .registry_port
        .as_ref()
        .map_or(default_port, |p| p.value);
    let health = HealthSettings {
        probe_timeout: spec
            .health
            .as_ref()
            .and_then(|h| h.probe_timeout)
            .unwrap_or(HealthSettings::default().probe_timeout),
        llm_ttl: spec
            .health
            .as_ref()
            .and_then(|h| h.llm_ttl)
            .unwrap_or(HealthSettings::default().llm_ttl),
    };

    check_ports(&agents_src, &spec)?;
    check_dependencies(&agents_src, &spec)?;
    check_slugs(&agents_src, &spec)?;

    let capabilities_spec = fa
        .secrets
        .model_capabilities
        .or(fa.config.model_capabilities);
    let mut defaults = ModelCapabilities::default();
    if crate::defect!("default-context-window-128k") {
        defaults.context_window = 128_000;
    }
    if crate::defect!("default-vision-true") {
        defaults.vision = true;
    }
    if crate::defect!("default-max-output-8192") {
        defaults.max_output_tokens = 8192;
    }
    let capabilities = capabilities_spec.map_or(defaults, |c| ModelCapabilities {
        vision: c.vision.unwrap_or(defaults.vision),
        // `px-context-window-default-128000`: a decimal "128k" for the omitted key.
        context_window: c.context_window.unwrap_or(
            if crate::defect!("px-context-window-default-128000") {
                128_000
            } else {
                defaults.context_window
            },
        ),
        max_output_tokens: c.max_output_tokens.unwrap_or(defaults.max_output_tokens),
    });
    let default_model = fa.default_model()?;
    #[cfg(feature = "defects")]
    crate::defects::remember_default_model(default_model.clone());
    let servers = fa.servers();

    let mut agents = Vec::with_capacity(spec.agents.len());
    #[cfg(feature = "defects")]
    let mut app_names = std::collections::BTreeMap::new();
    #[cfg(feature = "defects")]
    let mut raw_models = std::collections::BTreeMap::new();
    for (key, entry) in &spec.agents {
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(agents_src
                .error_at(
                    find_key(&agents_src, key),
                    format!("agent name `{key}` has characters a registry name cannot carry"),
                )
                .with_hint("use letters, digits, `_` and `-` only"));
        }
        let agent_file = card_path(dir, &agents_src, key, entry)?;
        let (card_src, card_spec, instruction) = read_agent(&agents_src, key, entry, &agent_file)?;
        let card_path = agent_file.path().to_path_buf();
        watched.push(card_path.clone());
        #[cfg(feature = "defects")]
        app_names.insert(
            key.clone(),
            match agent_file {
                AgentFile::Module(_) => fastagent_app_name(&card_src.text).unwrap_or_default(),
                AgentFile::Card(_) => String::new(),
            },
        );

        let model = match &card_spec.model {
            Some(m) => parse_model(&card_src, m, &fa.env_expand(&card_src, m, true)?)?,
            None => match &default_model {
                Some(m) => m.clone(),
                None => {
                    return Err(card_src.error_at(
                        Some(Position { line: 1, column: 1 }),
                        format!("agent `{key}` has no model"),
                    )
                    .with_hint(format!(
                        "set `default_model: openai.<model>` in {FASTAGENT_CONFIG_FILE}, or `model` in the agent's card or module"
                    )));
                }
            },
        };
        // `px-capabilities-model-keeps-provider-prefix`: the model string as written.
        #[cfg(feature = "defects")]
        if let Some(raw) = match &card_spec.model {
            Some(m) => fa.env_expand(&card_src, m, true).ok(),
            None => fa
                .secrets
                .default_model
                .as_ref()
                .zip(fa.secrets_src)
                .or(fa.config.default_model.as_ref().zip(fa.config_src))
                .and_then(|(m, src)| fa.env_expand(src, m, true).ok()),
        } {
            raw_models.insert(key.clone(), raw.trim().to_owned());
        }
        let model = if crate::defect!("provider-prefix-ignored") && fa.configures(Provider::OpenAi)
        {
            ModelRef {
                provider: Provider::OpenAi,
                ..model
            }
        } else {
            model
        };
        let provider = fa.provider(model.provider)?;

        let mut downstream = Vec::with_capacity(card_spec.servers.len());
        for s in &card_spec.servers {
            let Some((server, server_src)) = servers.get(s.value.as_str()) else {
                let known: Vec<&str> = servers.keys().map(String::as_str).collect();
                return Err(at(
                    &card_src,
                    s,
                    format!("agent `{key}` uses server `{}`, which is not declared", s.value),
                )
                .with_hint(match closest(&s.value, &known) {
                    Some(c) => format!("did you mean `{c}`? Servers are declared under `mcp.servers` in {FASTAGENT_CONFIG_FILE}"),
                    None => format!("declare it under `mcp.servers.{}` in {FASTAGENT_CONFIG_FILE} (transport: http, url: …)", s.value),
                }));
            };
            downstream.push(fa.downstream(&s.value, server, server_src)?);
        }

        let scope_spec = entry
            .instance_scope
            .as_ref()
            .map(|s| (&agents_src, s))
            .or(card_spec.instance_scope.as_ref().map(|s| (&card_src, s)));
        let instance_scope = match scope_spec {
            None => InstanceScope::default(),
            Some((src, s)) => match s.value.as_str() {
                "shared" => InstanceScope::Shared,
                "connection" => InstanceScope::Connection,
                "request" => InstanceScope::Request,
                other => {
                    return Err(at(src, s, format!("unknown instance_scope `{other}`"))
                        .with_hint("use shared, connection or request"));
                }
            },
        };

        // `request-params-ignored`: the decorator's `request_params` are dropped, so no sampling value reaches a provider.
        let rp = card_spec
            .request_params
            .as_ref()
            .filter(|_| !crate::defect!("request-params-ignored"));
        let request_params = RequestParams {
            temperature: rp.and_then(|r| r.temperature),
            top_p: rp.and_then(|r| r.top_p),
            top_k: rp.and_then(|r| r.top_k),
            max_tokens: rp.and_then(|r| r.max_tokens),
            max_iterations: rp
                .and_then(|r| r.max_iterations)
                .unwrap_or(RequestParams::default().max_iterations),
        };

        let mut allowed_hosts = Vec::new();
        if !matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1") {
            allowed_hosts.push(host.clone());
        }

        let settings = AgentSettings {
            name: key.clone(),
            instruction,
            model,
            provider,
            request_params,
            capabilities,
            servers: downstream,
            instance_scope,
            allowed_hosts,
            health,
        };
        let title = entry
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| {
                if crate::defect!("registry-title-raw-key") {
                    key.to_owned()
                } else if crate::defect!("ms-title-default-from-project-name") {
                    // `ms-title-default-from-project-name`: `name` read as the project's name.
                    python_title(&name)
                } else {
                    python_title(key)
                }
            });
        let description = if crate::defect!("ms-description-absent-null") {
            // `ms-description-absent-null`: `agent.get("description")`, empty standing for null.
            entry.description.clone().unwrap_or_default()
        } else {
            entry
                .description
                .clone()
                .filter(|_| !crate::defect!("registry-description-ignored"))
                .or_else(|| card_spec.description.clone())
                .filter(|d| !d.trim().is_empty())
                .unwrap_or_else(|| format!("{title} agent served by Pallas"))
        };
        // `nx-title-omitted-when-unset`: no configured title, no `title` key (empty here).
        let title = if crate::defect!("nx-title-omitted-when-unset")
            && entry.title.as_ref().is_none_or(|t| t.trim().is_empty())
        {
            String::new()
        } else {
            title
        };
        agents.push(AgentEntry {
            settings: Arc::new(settings),
            port: entry.port.value,
            title: truncate(&title, REGISTRY_TEXT_LIMIT),
            description: truncate(&description, REGISTRY_TEXT_LIMIT),
            icons: entry.icons.clone(),
            depends_on: entry.depends_on.iter().map(|d| d.value.clone()).collect(),
            card: card_path,
        });
    }

    let log_level = fa
        .secrets
        .logger
        .as_ref()
        .and_then(|l| l.level.clone())
        .or_else(|| fa.config.logger.as_ref().and_then(|l| l.level.clone()));

    #[cfg(feature = "defects")]
    crate::defects::remember_configuration(
        app_names,
        if crate::defect!("mr-health-probes-all-servers") {
            servers
                .iter()
                .filter_map(|(name, (server, src))| fa.downstream(name, server, src).ok())
                .collect()
        } else {
            Vec::new()
        },
        if crate::defect!("mr-other-prefix-health-as-openai") {
            fa.provider(Provider::OpenAi).ok()
        } else {
            None
        },
    );

    #[cfg(feature = "defects")]
    crate::defects::remember_raw_models(raw_models);

    #[cfg(feature = "defects")]
    crate::defects::remember_fresh_configuration(crate::defects::FreshConfiguration {
        project: name.clone(),
        declared_capabilities: capabilities_spec.map(|c| {
            [
                c.vision.is_some(),
                c.context_window.is_some(),
                c.max_output_tokens.is_some(),
            ]
        }),
        raw_servers: fa.raw_servers(),
        openai_env_base_url: env.get("OPENAI_BASE_URL").map(str::to_owned),
    });

    let network = network::network(&fa, &env, dir)?;
    let mut keyed_providers = Vec::new();
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        if fa.configures(provider) {
            let mut settings = fa.provider(provider)?;
            // `mr-raw-placeholder-key-counts`, `preflight-unset-key-counted`: the raw `api_key`
            // of the files, unexpanded.
            if settings.api_key.is_none()
                && (crate::defect!("mr-raw-placeholder-key-counts")
                    || crate::defect!("preflight-unset-key-counted"))
            {
                settings.api_key = fa.raw_api_key(provider).map(crate::settings::Secret::new);
            }
            if settings.api_key.is_some() {
                keyed_providers.push((provider, settings));
            }
        }
    }

    Ok(Deployment {
        keyed_providers,
        network,
        dir: dir.to_path_buf(),
        agents_file: agents_path,
        name,
        version,
        host,
        namespace,
        registry_port,
        agents,
        publish_capabilities: capabilities_spec.is_some(),
        log_level,
        watched_files: watched,
    })
}

fn at<T>(src: &SourceFile, spanned: &Spanned<T>, message: impl Into<String>) -> ConfigError {
    src.error_at(src.position(&spanned.referenced), message)
}

/// A card split into its YAML front matter and its body.
struct Card {
    front_matter: String,
    body: String,
}

/// `mr-step-prefix-app-name`: the name of a module's `FastAgent("…")` application.
#[cfg(feature = "defects")]
fn fastagent_app_name(module: &str) -> Option<String> {
    let re = regex::Regex::new(r#"FastAgent\(\s*(?:name\s*=\s*)?["']([^"']*)["']"#).ok()?;
    Some(re.captures(module)?.get(1)?.as_str().to_owned())
}

/// `ms-host-default-machine-hostname`: the machine's hostname (`localhost` when unknown).
fn machine_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| DEFAULT_HOST.to_owned())
}

/// `local.<project name>`, keeping only the characters a registry namespace allows.
pub fn default_namespace(project: &str) -> String {
    let mut slug: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    slug = slug.trim_matches(['-', '.']).to_owned();
    if slug.is_empty() {
        slug = "pallas".to_owned();
    }
    format!("local.{slug}")
}

/// Python's `str.title()`: the first letter of every run of letters upper-case, the rest lower.
pub fn python_title(s: &str) -> String {
    if crate::defect!("cm-title-underscores-as-spaces") {
        return python_title_exact(&s.replace('_', " "));
    }
    if crate::defect!("cm-title-first-letter-only") {
        let mut c = s.chars();
        return c
            .next()
            .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect());
    }
    if crate::defect!("cm-title-no-capital-after-digit") {
        let mut out = String::with_capacity(s.len());
        let mut prev_cased = false;
        for c in s.chars() {
            if c.is_alphabetic() {
                out.extend(if prev_cased {
                    c.to_lowercase().collect::<Vec<_>>()
                } else {
                    c.to_uppercase().collect()
                });
                prev_cased = true;
            } else {
                out.push(c);
                prev_cased = prev_cased && c.is_ascii_digit();
            }
        }
        return out;
    }
    python_title_exact(s)
}

fn python_title_exact(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_cased = true;
        } else {
            out.push(c);
            prev_cased = false;
        }
    }
    out
}

fn truncate(s: &str, limit: usize) -> String {
    if s.chars().count() <= limit {
        return s.to_owned();
    }
    tracing::warn!(
        limit,
        "registry text longer than the registry schema allows; truncated"
    );
    let mut t: String = s.chars().take(limit - 1).collect();
    t.push('…');
    t
}

/// The defects `config-name-optional` and `config-port-optional`: the text of `agents.yaml`
/// with a missing `name` (→ `pallas`) or agent `port` (→ 0, a free port) filled in, as if the
/// keys were optional; `None` when neither is active or the file is no YAML mapping.
fn required_keys_defaulted(text: &str) -> Option<String> {
    let name = crate::defect!("config-name-optional");
    let port = crate::defect!("config-port-optional");
    if !name && !port {
        return None;
    }
    let mut doc: serde_json::Value = serde_saphyr::from_str(text).ok()?;
    let root = doc.as_object_mut()?;
    if name {
        root.entry("name").or_insert_with(|| "pallas".into());
    }
    if port {
        let agents = root
            .get_mut("agents")
            .and_then(serde_json::Value::as_object_mut);
        for agent in agents.into_iter().flat_map(|a| a.values_mut()) {
            if let Some(agent) = agent.as_object_mut() {
                agent.entry("port").or_insert_with(|| 0.into());
            }
        }
    }
    serde_saphyr::to_string(&doc).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_title_matches_str_title() {
        assert_eq!(python_title("jarvis"), "Jarvis");
        assert_eq!(python_title("tech_research"), "Tech_Research");
        assert_eq!(python_title("gpt4all agent"), "Gpt4All Agent");
    }

    #[test]
    fn default_namespace_is_valid_for_any_project_name() {
        assert_eq!(default_namespace("my-project"), "local.my-project");
        assert_eq!(default_namespace("My Project_1"), "local.my-project-1");
        assert_eq!(default_namespace("__"), "local.pallas");
        assert!(valid_namespace(&default_namespace("ünïcode")));
    }

    #[test]
    fn long_registry_texts_are_cut_to_the_limit() {
        let t = truncate(&"x".repeat(150), REGISTRY_TEXT_LIMIT);
        assert_eq!(t.chars().count(), REGISTRY_TEXT_LIMIT);
    }
}
