//! The metrics `watch` exports (Prometheus text format, `prometheus` crate) and the `/metrics`
//! endpoint that serves them. Every series is named `pallas_watch_*`; the agent label is the
//! registry entry's server id (or the deployment's agent key).

use std::net::SocketAddr;
use std::sync::Arc;

use prometheus::{
    Encoder, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts,
    Registry, TextEncoder,
};

use super::probe::{AgentProbe, HealthState, RegistryProbe};
use crate::checks::Verdict;

/// Latency buckets, seconds: from a local bridge's milliseconds to an LLM-backed agent's
/// seconds.
const BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Every metric of a watch.
#[derive(Clone)]
pub struct WatchMetrics {
    registry: Registry,
    rounds: IntCounter,
    probe_success: GaugeVec,
    probe_duration: GaugeVec,
    op_duration: HistogramVec,
    health_status: GaugeVec,
    sessions_closed: IntCounterVec,
    sessions_left_open: IntCounterVec,
    registry_up: GaugeVec,
    registry_duration: HistogramVec,
    registry_schema_valid: GaugeVec,
    registry_agents: GaugeVec,
    check: GaugeVec,
    canary_success: GaugeVec,
    canary_duration: HistogramVec,
    canary_progress: GaugeVec,
    last_round: Gauge,
    names: Vec<String>,
}

/// A registry that remembers the names it registered.
struct Reg {
    registry: Registry,
    names: Vec<String>,
}

impl Reg {
    fn add<C: prometheus::core::Collector + Clone + 'static>(
        &mut self,
        name: &str,
        c: C,
    ) -> prometheus::Result<C> {
        self.registry.register(Box::new(c.clone()))?;
        self.names.push(name.to_owned());
        Ok(c)
    }

    fn gauge(&mut self, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<GaugeVec> {
        self.add(name, GaugeVec::new(Opts::new(name, help), labels)?)
    }

    fn counter(
        &mut self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::Result<IntCounterVec> {
        self.add(name, IntCounterVec::new(Opts::new(name, help), labels)?)
    }

    fn histogram(
        &mut self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::Result<HistogramVec> {
        let opts = HistogramOpts::new(name, help).buckets(BUCKETS.to_vec());
        self.add(name, HistogramVec::new(opts, labels)?)
    }
}

impl WatchMetrics {
    /// Registers every metric.
    pub fn new() -> prometheus::Result<Self> {
        let mut r = Reg {
            registry: Registry::new(),
            names: Vec::new(),
        };
        let name = "pallas_watch_rounds_total";
        let rounds = r.add(name, IntCounter::new(name, "Probe rounds completed")?)?;
        let name = "pallas_watch_last_round_timestamp_seconds";
        let last_round = r.add(name, Gauge::new(name, "Unix time the last round ended")?)?;
        Ok(Self {
            rounds,
            last_round,
            probe_success: r.gauge(
                "pallas_watch_probe_success",
                "1 when the last probe of the agent succeeded: initialize, tools/list and (when listed) get_health answering ok or degraded",
                &["agent"],
            )?,
            probe_duration: r.gauge(
                "pallas_watch_probe_duration_seconds",
                "Duration of the last probe of the agent, session DELETE included",
                &["agent"],
            )?,
            op_duration: r.histogram(
                "pallas_watch_operation_duration_seconds",
                "Latency of the probe's MCP operations (initialize, tools/list, get_health) that answered",
                &["agent", "operation"],
            )?,
            health_status: r.gauge(
                "pallas_watch_health_status",
                "1 for the status the agent's get_health reported last (ok, degraded, error), or invalid (not a seed 000 health answer) or unanswered; all 0 when the agent does not list get_health",
                &["agent", "status"],
            )?,
            sessions_closed: r.counter(
                "pallas_watch_sessions_closed_total",
                "Probe sessions ended by DELETE (or never issued by a stateless server)",
                &["agent"],
            )?,
            sessions_left_open: r.counter(
                "pallas_watch_sessions_left_open_total",
                "Probe sessions whose DELETE failed",
                &["agent"],
            )?,
            registry_up: r.gauge(
                "pallas_watch_registry_up",
                "1 when the registry document answered 200 with a servers array (REG-002)",
                &["registry"],
            )?,
            registry_duration: r.histogram(
                "pallas_watch_registry_fetch_duration_seconds",
                "Latency of the registry document fetch",
                &["registry"],
            )?,
            registry_schema_valid: r.gauge(
                "pallas_watch_registry_schema_valid",
                "1 when every registry entry validates against the official server.schema.json (REG-001), 0 when one does not; absent while there is no entry to judge",
                &["registry"],
            )?,
            registry_agents: r.gauge(
                "pallas_watch_registry_agents",
                "Registry entries with a streamable-http remote",
                &["registry"],
            )?,
            check: r.gauge(
                "pallas_watch_check",
                "1 for the last verdict of a kit check (REG-* on the registry, PROG-* on the canary call); one series per verdict",
                &["scope", "check", "verdict"],
            )?,
            canary_success: r.gauge(
                "pallas_watch_canary_success",
                "1 when the canary message answered and its progress stream passed the kit's progress checks (none failed or warned, at least one passed)",
                &["agent"],
            )?,
            canary_duration: r.histogram(
                "pallas_watch_canary_duration_seconds",
                "Latency of the canary message call",
                &["agent"],
            )?,
            canary_progress: r.gauge(
                "pallas_watch_canary_progress_notifications",
                "Progress notifications received during the last canary call",
                &["agent"],
            )?,
            registry: r.registry,
            names: r.names,
        })
    }

    /// The name of every metric family (histograms without their `_bucket`, `_sum`, `_count`).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The exposition text.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    }

    fn checks(&self, scope: &str, checks: &[crate::checks::CheckResult]) {
        for c in checks {
            for v in Verdict::ALL {
                let value = if c.verdict == v { 1.0 } else { 0.0 };
                self.check
                    .with_label_values(&[scope, &c.id, v.as_str()])
                    .set(value);
            }
        }
    }

    /// Records the registry fetch of a round.
    pub fn registry(&self, url: &str, r: &RegistryProbe, agents: usize) {
        self.registry_up
            .with_label_values(&[url])
            .set(if r.up() { 1.0 } else { 0.0 });
        if let Some(s) = r.seconds {
            self.registry_duration.with_label_values(&[url]).observe(s);
        }
        match r.verdict("REG-001") {
            Some(Verdict::Pass) => self
                .registry_schema_valid
                .with_label_values(&[url])
                .set(1.0),
            Some(Verdict::Fail | Verdict::Warn) => {
                self.registry_schema_valid
                    .with_label_values(&[url])
                    .set(0.0);
            }
            _ => {
                let _ = self.registry_schema_valid.remove_label_values(&[url]);
            }
        }
        self.registry_agents
            .with_label_values(&[url])
            .set(agents as f64);
        self.checks("registry", &r.checks);
    }

    /// Records one agent's probe.
    pub fn agent(&self, p: &AgentProbe) {
        let a = p.agent.name.as_str();
        self.probe_success
            .with_label_values(&[a])
            .set(if p.success { 1.0 } else { 0.0 });
        self.probe_duration.with_label_values(&[a]).set(p.seconds);
        for (op, s) in [
            ("initialize", p.initialize),
            ("tools/list", p.tools_list),
            ("get_health", p.get_health),
        ] {
            if let Some(s) = s {
                self.op_duration.with_label_values(&[a, op]).observe(s);
            }
        }
        for state in HealthState::EXPORTED {
            let value = if p.health == state { 1.0 } else { 0.0 };
            self.health_status
                .with_label_values(&[a, state.as_str()])
                .set(value);
        }
        match p.closed {
            Some(true) => self.sessions_closed.with_label_values(&[a]).inc(),
            Some(false) => self.sessions_left_open.with_label_values(&[a]).inc(),
            None => {}
        }
        if let Some(c) = &p.canary {
            self.canary_success
                .with_label_values(&[a])
                .set(if c.passed() { 1.0 } else { 0.0 });
            if let Some(s) = c.seconds {
                self.canary_duration.with_label_values(&[a]).observe(s);
            }
            self.canary_progress
                .with_label_values(&[a])
                .set(c.progress as f64);
            self.checks(&format!("canary:{a}"), &c.checks);
        }
    }

    /// Marks the end of a round.
    pub fn round_done(&self) {
        self.rounds.inc();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.last_round.set(now);
    }

    /// Rounds completed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds.get()
    }
}

/// Serves `GET /metrics` on `listener` until the task is dropped or aborted.
pub fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<WatchMetrics>,
) -> tokio::task::JoinHandle<()> {
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let m = metrics.clone();
            async move {
                (
                    [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
                    m.encode(),
                )
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    })
}

/// The address `--listen` asked for, bound.
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}
