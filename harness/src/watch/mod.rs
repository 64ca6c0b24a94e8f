//! `pallas-conformance watch`: a long-running probe of a deployment, serving Prometheus
//! metrics, the way blackbox_exporter probes HTTP endpoints.
//!
//! Every `--interval` a round fetches the registry (judged by REG-002 and REG-001, the kit's own
//! checks) and probes each agent it lists — or the one agent of `--url` — on a fresh session:
//! `initialize`, `tools/list`, `get_health` when listed, the `--canary` message when asked for
//! (its progress stream judged by the kit's progress checks), then `DELETE`, whatever happened
//! ([`probe`]). The results become `pallas_watch_*` series on `/metrics` ([`metrics`]).
//! With `--target`, the profile is deployed as `load` deploys it (a mock model, one agent).

pub mod metrics;
pub mod probe;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::load::deploy::{self, DeployOptions, Deployed};
use crate::redact::Redactor;
use crate::{exit, target};
pub use metrics::WatchMetrics;
pub use probe::{Agent, AgentProbe, HealthState, ProbePlan, RegistryProbe, Tools};

/// `watch` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Registry base URL (or document URL) of a running Pallas: every agent it lists is probed.
    #[arg(long, conflicts_with_all = ["target", "url"])]
    pub registry: Option<String>,
    /// Target profile to deploy and start as `load` does (one agent on a mock model); its
    /// registry is watched when the profile has one, else its agent endpoint.
    #[arg(long, conflicts_with = "url")]
    pub target: Option<PathBuf>,
    /// MCP endpoint of one agent of a bridge without a registry (e.g. fast-agent).
    #[arg(long)]
    pub url: Option<String>,
    /// The agent label of `--url`.
    #[arg(long, default_value = "agent", requires = "url")]
    pub agent: String,
    /// Time between the starts of two rounds (e.g. `30s`).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub interval: Duration,
    /// Address to serve `/metrics` on (port 0: a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:9465")]
    pub listen: SocketAddr,
    /// Send this message to each agent every round, with a progress token, and judge its
    /// progress stream.
    #[arg(long)]
    pub canary: Option<String>,
    /// The message tool (`{agent}` stands for the agent's name; with --target: the profile's).
    #[arg(long, default_value = "send_message")]
    pub tool: String,
    /// The health tool (with --target: the profile's).
    #[arg(long, default_value = "get_health")]
    pub health_tool: String,
    /// Environment variable holding a bearer token sent to the agents (never printed).
    #[arg(long)]
    pub bearer_env: Option<String>,
    /// Limit of each exchange.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Stop after this many rounds (default: run until interrupted).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// Extra environment for the target (`K=V`, repeatable).
    #[arg(long = "target-env", value_parser = crate::args::key_value, requires = "target")]
    pub target_env: Vec<(String, String)>,
}

/// What a watch probes: a registry, or fixed agents.
#[derive(Debug, Clone)]
pub enum Source {
    /// Every agent the registry lists (the last list is kept while the registry is down).
    Registry(String),
    /// These agents.
    Agents(Vec<Agent>),
}

/// A validated watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// What to probe.
    pub source: Source,
    /// How.
    pub plan: ProbePlan,
    /// Time between the starts of two rounds.
    pub interval: Duration,
    /// Stop after this many rounds.
    pub rounds: Option<u64>,
}

/// Why a watch cannot start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// Its metrics could not be registered.
    #[error(transparent)]
    Metrics(#[from] prometheus::Error),
}

/// A watch: its options, its metrics, the agents last listed.
pub struct Watcher {
    opts: WatchOptions,
    metrics: Arc<WatchMetrics>,
    known: Vec<Agent>,
    redactor: Redactor,
}

impl Watcher {
    /// A watcher with fresh metrics.
    pub fn new(opts: WatchOptions) -> Result<Self, WatchError> {
        let metrics = WatchMetrics::new()?;
        let mut redactor = Redactor::new();
        if let Some(b) = &opts.plan.bearer {
            redactor.add(b);
        }
        Ok(Self {
            opts,
            metrics: Arc::new(metrics),
            known: Vec::new(),
            redactor,
        })
    }

    /// Its metrics (to serve them).
    pub fn metrics(&self) -> Arc<WatchMetrics> {
        self.metrics.clone()
    }

    /// One round; returns the agents' probes.
    pub async fn round(&mut self) -> Vec<AgentProbe> {
        let agents = match &self.opts.source {
            Source::Agents(a) => a.clone(),
            Source::Registry(url) => {
                let (r, listed) =
                    probe::probe_registry(url, self.opts.plan.timeout, &self.redactor).await;
                self.metrics.registry(url, &r, listed.len());
                if r.up() {
                    self.known = listed;
                }
                self.known.clone()
            }
        };
        let probes = futures::future::join_all(
            agents
                .iter()
                .map(|a| probe::probe_agent(a, &self.opts.plan, &self.redactor)),
        )
        .await;
        for p in &probes {
            self.metrics.agent(p);
        }
        self.metrics.round_done();
        probes
    }

    /// Rounds every interval until `opts.rounds` are done (forever without it); a line per
    /// round on `out`.
    pub async fn run(&mut self, out: &mut impl Write) {
        let mut ticker = tokio::time::interval(self.opts.interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let probes = self.round().await;
            let _ = writeln!(out, "{}", round_line(self.metrics.rounds(), &probes));
            let _ = out.flush();
            if self.opts.rounds.is_some_and(|n| self.metrics.rounds() >= n) {
                return;
            }
        }
    }
}

/// `round N: agent ok 12 ms health ok; …`
fn round_line(n: u64, probes: &[AgentProbe]) -> String {
    let parts: Vec<String> = probes
        .iter()
        .map(|p| {
            let mut s = format!(
                "{} {} {:.0} ms health {}",
                p.agent.name,
                if p.success { "ok" } else { "FAILED" },
                p.seconds * 1000.0,
                p.health.as_str()
            );
            if let Some(c) = &p.canary {
                s.push_str(if c.passed() {
                    " canary pass"
                } else {
                    " canary FAIL"
                });
            }
            if let Some(f) = &p.failure {
                s.push_str(&format!(" ({f})"));
            }
            s
        })
        .collect();
    if parts.is_empty() {
        format!("round {n}: no agent to probe")
    } else {
        format!("round {n}: {}", parts.join("; "))
    }
}

/// Runs `watch`: deploys when asked, serves `/metrics`, rounds until done or interrupted.
pub async fn run_command(args: &WatchArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    if args.interval.is_zero() {
        let _ = writeln!(err, "error: --interval must be positive");
        return exit::INVALID_INPUT;
    }
    let bearer = match &args.bearer_env {
        Some(var) => match std::env::var(var) {
            Ok(v) => Some(v),
            Err(_) => {
                let _ = writeln!(err, "error: --bearer-env {var}: the variable is not set");
                return exit::INVALID_INPUT;
            }
        },
        None => None,
    };
    let mut tools = Tools {
        message_tool: args.tool.clone(),
        health_tool: args.health_tool.clone(),
        target: None,
    };
    let mut deployed: Option<Deployed> = None;
    let source = match (&args.registry, &args.target, &args.url) {
        (Some(r), _, _) => Source::Registry(r.clone()),
        (None, None, Some(url)) => Source::Agents(vec![Agent {
            name: args.agent.clone(),
            url: url.clone(),
        }]),
        (None, Some(path), _) => {
            let mut t = match target::load(path) {
                Ok(t) => t,
                Err(e) => {
                    let _ = writeln!(err, "error: {}", e.render_plain());
                    return exit::INVALID_INPUT;
                }
            };
            t.env_overrides = args.target_env.iter().cloned().collect();
            let d = match deploy::deploy(&t, &DeployOptions::default()).await {
                Ok(d) => d,
                Err(e) => {
                    let _ = writeln!(err, "error: {e}");
                    return exit::HARNESS_ERROR;
                }
            };
            let _ = writeln!(
                out,
                "deployed {} in {:.2}s",
                t.spec.name,
                d.startup.as_secs_f64()
            );
            tools.health_tool = t.spec.health_tool.clone();
            tools.target = Some(Box::new(t));
            let source = match &d.registry_url {
                Some(r) => Source::Registry(r.clone()),
                None => Source::Agents(vec![Agent {
                    name: deploy::AGENT.to_owned(),
                    url: d.url.clone(),
                }]),
            };
            deployed = Some(d);
            source
        }
        (None, None, None) => {
            let _ = writeln!(
                err,
                "error: give --registry URL, --target PROFILE or --url URL"
            );
            return exit::INVALID_INPUT;
        }
    };
    let code = watch(args, source, tools, bearer, out, err).await;
    if let Some(d) = deployed {
        d.stop().await;
    }
    code
}

async fn watch(
    args: &WatchArgs,
    source: Source,
    tools: Tools,
    bearer: Option<String>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    let opts = WatchOptions {
        source,
        plan: ProbePlan {
            tools,
            canary: args.canary.clone(),
            timeout: args.timeout,
            bearer,
        },
        interval: args.interval,
        rounds: args.rounds,
    };
    let mut watcher = match Watcher::new(opts) {
        Ok(w) => w,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::HARNESS_ERROR;
        }
    };
    let listener = match metrics::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(err, "error: cannot listen on {}: {e}", args.listen);
            return exit::HARNESS_ERROR;
        }
    };
    let addr = listener.local_addr().map_or(args.listen, |a| a);
    let server = metrics::serve(listener, watcher.metrics());
    let _ = writeln!(out, "serving metrics on http://{addr}/metrics");
    let _ = out.flush();
    tokio::select! {
        () = watcher.run(out) => {}
        _ = tokio::signal::ctrl_c() => {
            let _ = writeln!(err, "interrupted after {} round(s)", watcher.metrics().rounds());
        }
    }
    server.abort();
    exit::SUCCESS
}
