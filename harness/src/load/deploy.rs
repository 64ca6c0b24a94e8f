//! Deploying a target for a load run through its profile: a mock OpenAI model (pallas-mocks,
//! answering every request with final text at once), a deployment of one agent using it, the
//! target's files rendered into a run directory, the command started (optionally pinned to CPUs
//! with `taskset`) and readiness measured.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pallas_mocks::{Dialect, LlmMock, LlmMockSpec};
use serde_json::json;

use super::LoadError;
use super::session::Session;
use crate::deploy::{Deployment, RunDir};
use crate::redact::Redactor;
use crate::scenario::DeploymentSpec;
use crate::target::Target;

/// The agent every load deployment serves.
pub const AGENT: &str = "loadagent";
/// How often the agent endpoint is polled while the target starts.
const STARTUP_POLL: Duration = Duration::from_millis(2);

/// How to deploy.
#[derive(Debug, Clone, Default)]
pub struct DeployOptions {
    /// `instance_scope` of the agent (`shared`, `connection`, `request`); `None`: the target's
    /// default.
    pub instance_scope: Option<String>,
    /// Run the target under `taskset -c CPUS`.
    pub pin_cpus: Option<String>,
    /// Keep the run directory here instead of a temporary one.
    pub keep: Option<PathBuf>,
}

/// A started target and its mock model.
#[derive(Debug)]
pub struct Deployed {
    /// The agent's MCP endpoint.
    pub url: String,
    /// The message tool's name.
    pub tool: String,
    /// The registry URL the profile renders, if it has one (`watch` probes through it).
    pub registry_url: Option<String>,
    /// The target's process id.
    pub pid: Option<u32>,
    /// Spawn → the agent endpoint answering `initialize`.
    pub startup: Duration,
    /// The mock model.
    pub llm: Arc<LlmMock>,
    deployment: Deployment,
}

impl Deployed {
    /// Stops the target (SIGTERM, then SIGKILL after the deployment's grace) and the mock.
    pub async fn stop(mut self) {
        self.deployment.stop().await;
        if let Ok(llm) = Arc::try_unwrap(self.llm) {
            llm.shutdown().await;
        }
    }
}

/// The minimal deployment: one agent on `openai.mock-model`, no downstream servers.
pub fn deployment(opts: &DeployOptions) -> Result<DeploymentSpec, LoadError> {
    let mut agent = json!({
        "description": "Load test agent",
        "instruction": "You are a load test agent. Answer briefly.",
    });
    if let Some(scope) = &opts.instance_scope {
        agent["instance_scope"] = json!(scope);
    }
    serde_json::from_value(json!({
        "name": "load",
        "model": "openai.mock-model",
        "providers": {"openai": {"mock": "llm"}},
        "agents": {AGENT: agent},
    }))
    .map_err(|e| LoadError::Setup(format!("internal deployment is invalid: {e}")))
}

/// Starts the mock model and the target; returns once the agent answers MCP `initialize` and
/// every readiness probe of the profile passes.
pub async fn deploy(target: &Target, opts: &DeployOptions) -> Result<Deployed, LoadError> {
    let d = deployment(opts)?;
    if let Some(why) = target.scope_unavailable(&d) {
        return Err(LoadError::Setup(why));
    }
    target.build()?;
    let spec = LlmMockSpec {
        dialect: Dialect::Openai,
        port: None,
        api_key: None,
        models: vec!["mock-model".into()],
        script: Vec::new(),
        on_exhausted: Default::default(),
        fault: None,
        usage: None,
        tls: false,
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let llm = LlmMock::start_named("llm", spec, addr)
        .await
        .map_err(|e| LoadError::Setup(format!("mock model did not start: {e}")))?;
    let mocks: BTreeMap<String, String> = [("llm".to_owned(), llm.url())].into();
    let run_dir = RunDir::create(opts.keep.as_deref(), "pallas-load-")
        .map_err(|e| LoadError::Setup(e.message))?;
    let mut redactor = Redactor::new();
    let mut deployment = Deployment::render(target, &d, &mocks, run_dir, &mut redactor)
        .map_err(|e| LoadError::Setup(e.message))?;
    let url = deployment
        .rendered()
        .agent_urls
        .get(AGENT)
        .cloned()
        .ok_or_else(|| LoadError::Setup("the profile rendered no agent URL".into()))?;
    let registry_url = deployment.rendered().registry_url.clone();
    let mut launch = deployment.rendered().launch.clone();
    if let Some(cpus) = &opts.pin_cpus {
        let mut args = vec!["-c".to_owned(), cpus.clone(), launch.program.clone()];
        args.append(&mut launch.args);
        launch.program = "taskset".into();
        launch.args = args;
    }
    let spawned = Instant::now();
    deployment
        .spawn_with(&launch)
        .await
        .map_err(|e| LoadError::Setup(e.message))?;
    let deadline = deployment.startup_timeout();
    let http = pallas_mocks::http_client::builder()
        .no_proxy()
        .build()
        .map_err(|e| LoadError::Setup(e.to_string()))?;
    // Startup is measured to the first answered `initialize`, polled tightly; the profile's
    // readiness probes must pass too.
    let startup = loop {
        if let Ok(s) = Session::open(http.clone(), &url, Duration::from_secs(2)).await {
            let startup = spawned.elapsed();
            let _ = s.close().await;
            break startup;
        }
        let exited = deployment
            .process_mut()
            .is_none_or(|p| p.exited().is_some());
        if exited || spawned.elapsed() > deadline {
            let e = deployment
                .wait_ready(Duration::ZERO)
                .await
                .err()
                .map_or_else(|| "not ready".to_owned(), |e| e.message);
            deployment.stop().await;
            return Err(LoadError::Setup(redactor.text(&e)));
        }
        tokio::time::sleep(STARTUP_POLL).await;
    };
    if let Err(e) = deployment
        .wait_ready(deadline.saturating_sub(spawned.elapsed()))
        .await
    {
        return Err(LoadError::Setup(redactor.text(&e.message)));
    }
    Ok(Deployed {
        url,
        tool: target.message_tool(AGENT),
        registry_url,
        pid: deployment.pid(),
        startup,
        llm: Arc::new(llm),
        deployment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deployment_has_one_agent_with_the_chosen_scope() {
        let d = deployment(&DeployOptions {
            instance_scope: Some("request".into()),
            ..DeployOptions::default()
        })
        .unwrap();
        assert_eq!(d.agents.len(), 1);
        assert_eq!(
            d.agents[AGENT].instance_scope,
            Some(crate::scenario::InstanceScope::Request)
        );
        assert_eq!(d.providers["openai"].mock.as_deref(), Some("llm"));
        assert!(d.servers.is_empty());
    }
}
