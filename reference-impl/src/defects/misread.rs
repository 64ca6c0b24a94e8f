//! What the third set of contract mutants (`mr-…`) remembers from the configuration or between
//! calls: the module's application names, every configured downstream server, the OpenAI
//! provider settings and the agents of the deployment.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use crate::settings::{DownstreamSettings, ProviderSettings};

/// `mr-step-prefix-app-name`: agent key → the `FastAgent("…")` name of its module.
static APP_NAMES: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
/// `mr-health-probes-all-servers`: every server under `mcp.servers`.
static ALL_SERVERS: Mutex<Vec<DownstreamSettings>> = Mutex::new(Vec::new());
/// `mr-other-prefix-health-as-openai`: the deployment's OpenAI provider settings.
static OPENAI: Mutex<Option<ProviderSettings>> = Mutex::new(None);
/// `mr-progress-subagent-tools-only`: the agent keys of the deployment.
static AGENTS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// What a configuration load found (kept for the defects that read it later).
pub fn remember_configuration(
    app_names: BTreeMap<String, String>,
    servers: Vec<DownstreamSettings>,
    openai: Option<ProviderSettings>,
) {
    if let Ok(mut agents) = AGENTS.lock() {
        agents.extend(app_names.keys().cloned());
    }
    if let Ok(mut names) = APP_NAMES.lock() {
        names.extend(app_names.into_iter().filter(|(_, app)| !app.is_empty()));
    }
    if let Ok(mut all) = ALL_SERVERS.lock() {
        *all = servers;
    }
    if let Ok(mut slot) = OPENAI.lock() {
        *slot = openai;
    }
}

/// `mr-step-prefix-app-name`: the application name of `agent`'s module, if it has one.
pub fn app_name(agent: &str) -> Option<String> {
    APP_NAMES.lock().ok()?.get(agent).cloned()
}

/// `mr-health-probes-all-servers`: every configured downstream server.
pub fn all_servers() -> Vec<DownstreamSettings> {
    ALL_SERVERS.lock().map(|s| s.clone()).unwrap_or_default()
}

/// `mr-other-prefix-health-as-openai`: the OpenAI provider settings of the deployment.
pub fn openai_settings() -> Option<ProviderSettings> {
    OPENAI.lock().ok()?.clone()
}

/// `mr-progress-subagent-tools-only`: whether `name` is an agent of the deployment.
pub fn is_agent(name: &str) -> bool {
    AGENTS.lock().is_ok_and(|agents| agents.contains(name))
}
