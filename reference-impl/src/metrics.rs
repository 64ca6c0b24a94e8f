//! Prometheus metrics of seed 001 "Metrics": one process-wide set, rendered in the text format on
//! the registry port and on every agent port, with the standard process metrics beside them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use prometheus::{
    Counter, CounterVec, Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, Opts,
    Registry, TextEncoder,
};

/// The `Content-Type` of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4";

/// Buckets of `pallas_send_message_duration_seconds`: a whole agent loop, milliseconds to minutes.
const SEND_MESSAGE_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Buckets of `pallas_tool_call_duration_seconds`: one downstream MCP operation.
const TOOL_CALL_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Token counts of one LLM round-trip, read from the provider's `usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Prompt / input tokens (not counting cache reads and writes).
    pub input: u64,
    /// Completion / output tokens.
    pub output: u64,
    /// Tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// Tokens written to the provider's prompt cache.
    pub cache_write: u64,
    /// Cache hits as the provider reports them.
    pub cache_hit: u64,
    /// Reasoning tokens (part of the output on providers that report them).
    pub reasoning: u64,
}

/// The `kind` label of `pallas_llm_tokens_total`, in the order of [`TokenUsage::counts`].
const TOKEN_KINDS: [&str; 6] = [
    "input",
    "output",
    "cache_read",
    "cache_write",
    "cache_hit",
    "reasoning",
];

impl TokenUsage {
    /// The counts in the order of [`TOKEN_KINDS`].
    fn counts(&self) -> [u64; 6] {
        [
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            self.cache_hit,
            self.reasoning,
        ]
    }

    /// Adds `other` to this usage, kind by kind.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cache_hit += other.cache_hit;
        self.reasoning += other.reasoning;
    }
}

/// The process-wide metrics. Cheap to clone: clones share the same series.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    registry: Registry,
    /// `px-pallas-up-only-after-startup`: `pallas_up`, set once startup is over.
    #[cfg(feature = "defects")]
    up: Gauge,
    agent_info: GaugeVec,
    agent_ports: Mutex<HashMap<String, u16>>,
    /// `ms-agent-info-frozen-at-startup`: `pallas_agent_info` no longer changes.
    agent_info_frozen: std::sync::atomic::AtomicBool,
    send_message_total: CounterVec,
    send_message_duration: HistogramVec,
    llm_turns_total: CounterVec,
    llm_tokens_total: CounterVec,
    tool_calls_total: CounterVec,
    tool_call_duration: HistogramVec,
    downstream_up: GaugeVec,
    llm_provider_up: GaugeVec,
    agent_health_status: GaugeVec,
    /// `rx-duration-histogram-outcome-label`: the histogram was declared with `outcome`.
    duration_by_outcome: bool,
    /// `rx-health-gauge-copies-daedalus-labels`: the health gauge was declared with `instance`.
    health_by_instance: bool,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn outcome(ok: bool) -> &'static str {
    if ok { "ok" } else { "error" }
}

fn flag(up: bool) -> f64 {
    if up { 1.0 } else { 0.0 }
}

impl Metrics {
    /// A fresh set of metrics with `pallas_up` at 1 and the process collector registered.
    ///
    /// Every name, label set and bucket list is a constant that the unit tests render, so
    /// [`Metrics::try_new`] cannot fail here.
    pub fn new() -> Metrics {
        Self::try_new().unwrap_or_else(|e| unreachable!("constant metric definitions: {e}"))
    }

    /// Like [`Metrics::new`], reporting a rejected definition instead of panicking.
    pub fn try_new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| -> prometheus::Result<CounterVec> {
            let c = CounterVec::new(Opts::new(name, help), labels)?;
            registry.register(Box::new(c.clone()))?;
            Ok(c)
        };
        let gauge = |name: &str, help: &str, labels: &[&str]| -> prometheus::Result<GaugeVec> {
            let g = GaugeVec::new(Opts::new(name, help), labels)?;
            registry.register(Box::new(g.clone()))?;
            Ok(g)
        };
        let histogram = |name: &str,
                         help: &str,
                         labels: &[&str],
                         buckets: &[f64]|
         -> prometheus::Result<HistogramVec> {
            let opts = HistogramOpts::new(name, help).buckets(buckets.to_vec());
            let h = HistogramVec::new(opts, labels)?;
            registry.register(Box::new(h.clone()))?;
            Ok(h)
        };

        let up = Gauge::new("pallas_up", "1 while the Pallas process is running")?;
        up.set(if crate::defect!("metrics-up-zero") {
            0.0
        } else {
            1.0
        });
        registry.register(Box::new(up.clone()))?;
        // `rx-private-registry-drops-process-metrics`: a private `CollectorRegistry()`, without
        // the default collectors.
        #[cfg(target_os = "linux")]
        if !crate::defect!("metrics-no-process-collector")
            && !crate::defect!("rx-private-registry-drops-process-metrics")
        {
            registry.register(Box::new(
                prometheus::process_collector::ProcessCollector::for_self(),
            ))?;
        }

        let duration_by_outcome = crate::defect!("rx-duration-histogram-outcome-label");
        let health_by_instance = crate::defect!("rx-health-gauge-copies-daedalus-labels");
        let inner = Inner {
            #[cfg(feature = "defects")]
            up,
            agent_info: gauge(
                "pallas_agent_info",
                "1 per configured agent; a label join source",
                &["agent", "port"],
            )?,
            agent_ports: Mutex::new(HashMap::new()),
            agent_info_frozen: std::sync::atomic::AtomicBool::new(false),
            send_message_total: counter(
                "pallas_send_message_total",
                "send_message MCP calls by outcome (ok or error)",
                &["agent", "outcome"],
            )?,
            send_message_duration: histogram(
                "pallas_send_message_duration_seconds",
                "End-to-end wall-clock duration of send_message, the whole agent loop included",
                // `rx-duration-histogram-outcome-label`: the counter's labels, mirrored.
                if duration_by_outcome {
                    &["agent", "outcome"][..]
                } else {
                    &["agent"][..]
                },
                // `ms-send-duration-default-buckets`: prometheus_client's defaults (0.005 … 10 s).
                if crate::defect!("ms-send-duration-default-buckets") {
                    prometheus::DEFAULT_BUCKETS
                } else {
                    SEND_MESSAGE_BUCKETS
                },
            )?,
            llm_turns_total: counter(
                "pallas_llm_turns_total",
                "LLM provider round-trips per agent and model",
                &["agent", "model"],
            )?,
            llm_tokens_total: counter(
                "pallas_llm_tokens_total",
                "Tokens consumed, from the provider's usage (kind: input, output, cache_read, cache_write, cache_hit, reasoning)",
                &["agent", "model", "kind"],
            )?,
            tool_calls_total: counter(
                "pallas_tool_calls_total",
                "Downstream MCP operations dispatched by the agent, by operation type and outcome",
                &["agent", "server", "operation", "outcome"],
            )?,
            tool_call_duration: histogram(
                "pallas_tool_call_duration_seconds",
                "Duration of one downstream MCP operation",
                &["agent", "server", "operation"],
                TOOL_CALL_BUCKETS,
            )?,
            downstream_up: gauge(
                "pallas_downstream_up",
                "1 when the downstream MCP server passed the last get_health probe",
                &["agent", "server"],
            )?,
            llm_provider_up: gauge(
                "pallas_llm_provider_up",
                "1 when the LLM provider passed its last preflight or runtime re-probe",
                &["provider"],
            )?,
            agent_health_status: gauge(
                "pallas_agent_health_status",
                "Aggregate of the last get_health: 1 ok, 0.5 degraded, 0 error",
                // `rx-health-gauge-copies-daedalus-labels`: Daedalus's `{instance, agent}`.
                if health_by_instance {
                    &["instance", "agent"][..]
                } else {
                    &["agent"][..]
                },
            )?,
            duration_by_outcome,
            health_by_instance,
            registry,
        };
        Ok(Metrics(Arc::new(inner)))
    }

    /// Every metric in the Prometheus text exposition format (serve it with [`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let families = self.0.registry.gather();
        let mut buf = Vec::with_capacity(8 * 1024);
        if let Err(e) = TextEncoder::new().encode(&families, &mut buf) {
            tracing::error!(error = %e, "metrics could not be encoded");
        }
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        self.declare_unused_families(&families, &mut text);
        // `rx-agent-info-as-info-metric`: a `prometheus_client.Info`, whose samples take `_info`.
        if crate::defect!("rx-agent-info-as-info-metric") {
            text = text
                .replace("pallas_agent_info{", "pallas_agent_info_info{")
                .replace("pallas_agent_info ", "pallas_agent_info_info ");
        }
        if crate::defect!("metrics-missing-metric") {
            return text
                .lines()
                .filter(|line| !line.contains("pallas_send_message_total"))
                .map(|line| format!("{line}\n"))
                .collect();
        }
        text
    }

    /// A labelled family with no series yet (no downstream tool called, no `get_health` asked)
    /// is left out by the encoder; it is declared with its `# HELP` and `# TYPE` lines instead,
    /// so a scrape always shows every metric of the seed's table with its type.
    fn declare_unused_families(
        &self,
        gathered: &[prometheus::proto::MetricFamily],
        text: &mut String,
    ) {
        let inner = &self.0;
        let families: [(&dyn prometheus::core::Collector, &str); 10] = [
            (&inner.agent_info, "gauge"),
            (&inner.send_message_total, "counter"),
            (&inner.send_message_duration, "histogram"),
            (&inner.llm_turns_total, "counter"),
            (&inner.llm_tokens_total, "counter"),
            (&inner.tool_calls_total, "counter"),
            (&inner.tool_call_duration, "histogram"),
            (&inner.downstream_up, "gauge"),
            (&inner.llm_provider_up, "gauge"),
            (&inner.agent_health_status, "gauge"),
        ];
        for (collector, kind) in families {
            for desc in collector.desc() {
                if gathered.iter().any(|f| f.name() == desc.fq_name) {
                    continue;
                }
                let help = desc.help.replace('\\', "\\\\").replace('\n', "\\n");
                text.push_str(&format!(
                    "# HELP {name} {help}\n# TYPE {name} {kind}\n",
                    name = desc.fq_name
                ));
            }
        }
    }

    /// `px-pallas-up-only-after-startup`: `pallas_up` 0 while starting, 1 once every agent
    /// started ("running" read as "fully started").
    #[cfg(feature = "defects")]
    pub fn set_up_if_defective(&self, started: bool) {
        if crate::defect!("px-pallas-up-only-after-startup") {
            self.0.up.set(if started { 1.0 } else { 0.0 });
        }
    }

    /// `ms-agent-info-frozen-at-startup`: from now on `pallas_agent_info` is left as it is.
    pub fn freeze_agent_info_if_defective(&self) {
        if crate::defect!("ms-agent-info-frozen-at-startup") {
            self.0
                .agent_info_frozen
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn agent_info_frozen(&self) -> bool {
        self.0
            .agent_info_frozen
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Publishes `pallas_agent_info{agent, port} 1`, replacing an earlier port of the same agent.
    pub fn set_agent_info(&self, agent: &str, port: u16) {
        if crate::defect!("metrics-agent-info-first-only")
            && self
                .0
                .agent_ports
                .lock()
                .is_ok_and(|ports| !ports.is_empty() && !ports.contains_key(agent))
        {
            return;
        }
        if !self.agent_info_frozen() {
            self.publish_agent_info(agent, port);
        }
        // Zero-valued series from the start, so rates and ratios exist before the first call.
        for outcome in ["ok", "error"] {
            self.0
                .send_message_total
                .with_label_values(&[agent, outcome]);
        }
        // `rx-duration-histogram-outcome-label`: a series per outcome appears with its first call.
        if !crate::defect!("metrics-duration-never-sampled") && !self.0.duration_by_outcome {
            self.0.send_message_duration.with_label_values(&[agent]);
        }
    }

    fn publish_agent_info(&self, agent: &str, port: u16) {
        let previous = self
            .0
            .agent_ports
            .lock()
            .map(|mut ports| ports.insert(agent.to_owned(), port))
            .unwrap_or(None);
        if let Some(old) = previous.filter(|old| *old != port) {
            let _ = self
                .0
                .agent_info
                .remove_label_values(&[agent, &old.to_string()]);
        }
        self.0
            .agent_info
            .with_label_values(&[agent, &port.to_string()])
            .set(1.0);
    }

    /// Drops the gauges of an agent that is no longer served (its counters keep their totals).
    pub fn remove_agent(&self, agent: &str) {
        let port = self
            .0
            .agent_ports
            .lock()
            .map(|mut ports| ports.remove(agent))
            .unwrap_or(None);
        if let Some(port) = port.filter(|_| !self.agent_info_frozen()) {
            let _ = self
                .0
                .agent_info
                .remove_label_values(&[agent, &port.to_string()]);
        }
        if self.0.health_by_instance {
            let instance = health_instance();
            let _ = self
                .0
                .agent_health_status
                .remove_label_values(&[instance.as_str(), agent]);
        } else {
            let _ = self.0.agent_health_status.remove_label_values(&[agent]);
        }
    }

    /// `send-duration-model-only`: the seconds `agent`'s downstream operations took so far.
    #[cfg(feature = "defects")]
    fn tool_seconds(&self, agent: &str) -> f64 {
        use prometheus::core::Collector;
        self.0
            .tool_call_duration
            .collect()
            .iter()
            .flat_map(|family| family.get_metric())
            .filter(|m| {
                m.get_label()
                    .iter()
                    .any(|l| l.name() == "agent" && l.value() == agent)
            })
            .map(|m| m.get_histogram().get_sample_sum())
            .sum()
    }

    /// The series one agent's calls update, looked up on first use and then kept: the same
    /// series, created at the same moment, as [`Metrics::observe_send_message`] and
    /// [`Metrics::observe_llm_turn`] with that agent and model.
    pub fn agent_series(&self, agent: &str, model: &str) -> AgentSeries {
        AgentSeries {
            metrics: self.clone(),
            agent: agent.to_owned(),
            model: model.to_owned(),
            sent_ok: OnceLock::new(),
            sent_error: OnceLock::new(),
            duration: OnceLock::new(),
            turns: OnceLock::new(),
            tokens: OnceLock::new(),
        }
    }

    /// Counts one `send_message` call and records its wall-clock duration.
    pub fn observe_send_message(&self, agent: &str, ok: bool, elapsed: Duration) {
        if crate::defect!("metrics-frozen-counters")
            || (!ok && crate::defect!("metrics-send-error-uncounted"))
        {
            return;
        }
        let label = if crate::defect!("cm-send-metric-label-slug") {
            agent.replace('_', "-")
        } else {
            agent.to_owned()
        };
        let counter = self
            .0
            .send_message_total
            .with_label_values(&[label.as_str(), outcome(ok)]);
        counter.inc();
        if ok && crate::defect!("metrics-send-counted-twice") {
            counter.inc();
        }
        if crate::defect!("metrics-duration-never-sampled")
            || (!ok && crate::defect!("fm-duration-success-only"))
        {
            return;
        }
        let seconds = if crate::defect!("metrics-send-duration-zero") {
            0.0
        } else if crate::defect!("qx-duration-observed-in-milliseconds") {
            // `qx-duration-observed-in-milliseconds`: the unit of the log lines, milliseconds.
            elapsed.as_secs_f64() * 1000.0
        } else {
            elapsed.as_secs_f64()
        };
        #[cfg(feature = "defects")]
        let seconds = if crate::defect!("send-duration-model-only") {
            let tools = self.tool_seconds(agent);
            (seconds - crate::defects::tool_seconds_since_last_send(agent, tools)).max(0.0)
        } else {
            seconds
        };
        if self.0.duration_by_outcome {
            self.0
                .send_message_duration
                .with_label_values(&[agent, outcome(ok)])
                .observe(seconds);
            return;
        }
        self.0
            .send_message_duration
            .with_label_values(&[agent])
            .observe(seconds);
    }

    /// Counts one LLM round-trip and the tokens its `usage` reported.
    pub fn observe_llm_turn(&self, agent: &str, model: &str, usage: &TokenUsage) {
        self.0
            .llm_turns_total
            .with_label_values(&[agent, model])
            .inc();
        self.observe_llm_tokens(agent, model, usage);
    }

    /// Counts the tokens one LLM round-trip's `usage` reported.
    pub fn observe_llm_tokens(&self, agent: &str, model: &str, usage: &TokenUsage) {
        for (kind, n) in TOKEN_KINDS.into_iter().zip(usage.counts()) {
            // `qx-reasoning-tokens-folded-into-output`: reasoning left inside `output` (OpenAI's
            // `completion_tokens` already counts it), with no series of its own.
            if kind == "reasoning"
                && (crate::defect!("metrics-tokens-drop-reasoning")
                    || crate::defect!("qx-reasoning-tokens-folded-into-output"))
            {
                continue;
            }
            // Precision loss above 2^53 tokens is irrelevant for a counter.
            #[allow(clippy::cast_precision_loss)]
            self.0
                .llm_tokens_total
                .with_label_values(&[agent, model, kind])
                .inc_by(n as f64);
        }
    }

    /// `nx-token-kind-openai-names`: counts one LLM round-trip and its tokens under the given
    /// `kind` labels.
    #[cfg(feature = "defects")]
    pub fn observe_llm_turn_kinds(&self, agent: &str, model: &str, kinds: &[(&str, u64)]) {
        self.0
            .llm_turns_total
            .with_label_values(&[agent, model])
            .inc();
        for (kind, n) in kinds {
            // Precision loss above 2^53 tokens is irrelevant for a counter.
            #[allow(clippy::cast_precision_loss)]
            self.0
                .llm_tokens_total
                .with_label_values(&[agent, model, kind])
                .inc_by(*n as f64);
        }
    }

    /// Counts one downstream MCP operation (`tool`, `prompt`, `resource`, `list_tools`…).
    pub fn observe_tool_call(
        &self,
        agent: &str,
        server: &str,
        operation: &str,
        ok: bool,
        elapsed: Duration,
    ) {
        if crate::defect!("metrics-frozen-counters") {
            return;
        }
        let operation = if operation == "tool" && crate::defect!("metrics-tool-operation-method") {
            "tools/call"
        } else {
            operation
        };
        self.0
            .tool_calls_total
            .with_label_values(&[
                agent,
                server,
                operation,
                outcome(ok || crate::defect!("cm-tool-error-counted-ok")),
            ])
            .inc();
        let seconds = if crate::defect!("metrics-tool-duration-zero") {
            0.0
        } else {
            elapsed.as_secs_f64()
        };
        self.0
            .tool_call_duration
            .with_label_values(&[agent, server, operation])
            .observe(seconds);
    }

    /// Records the outcome of the last `get_health` probe of one downstream server.
    pub fn set_downstream_up(&self, agent: &str, server: &str, up: bool) {
        let up = up || crate::defect!("metrics-downstream-up-always");
        self.0
            .downstream_up
            .with_label_values(&[agent, server])
            .set(flag(up));
    }

    /// Records the outcome of the last preflight or re-probe of an LLM provider.
    pub fn set_llm_provider_up(&self, provider: &str, up: bool) {
        let up = up || crate::defect!("metrics-llm-provider-up-always");
        self.0
            .llm_provider_up
            .with_label_values(&[provider])
            .set(flag(up));
    }

    /// Records the aggregate of the last `get_health`: `ok` → 1, `degraded` → 0.5, anything else → 0.
    pub fn set_agent_health(&self, agent: &str, status: &str) {
        if crate::defect!("metrics-health-gauge-stale") {
            return;
        }
        let value = match status {
            "ok" => 1.0,
            "degraded" if !crate::defect!("metrics-degraded-as-zero") => 0.5,
            _ => 0.0,
        };
        let label = if crate::defect!("cm-health-gauge-label-lowercased") {
            agent.to_lowercase()
        } else {
            agent.to_owned()
        };
        if self.0.health_by_instance {
            let instance = health_instance();
            self.0
                .agent_health_status
                .with_label_values(&[instance.as_str(), label.as_str()])
                .set(value);
            return;
        }
        self.0
            .agent_health_status
            .with_label_values(&[label.as_str()])
            .set(value);
    }
}

/// `rx-health-gauge-copies-daedalus-labels`: the `instance` label, the `agents.yaml` `name`.
#[cfg(feature = "defects")]
fn health_instance() -> String {
    Some(crate::defects::project_name())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "pallas".to_owned())
}

#[cfg(not(feature = "defects"))]
fn health_instance() -> String {
    String::new()
}

/// One agent's `send_message` and model-turn series ([`Metrics::agent_series`]), so that a call
/// does not look its labels up again. A named defect that changes what is counted goes through
/// [`Metrics`]' own methods instead.
pub struct AgentSeries {
    metrics: Metrics,
    agent: String,
    model: String,
    sent_ok: OnceLock<Counter>,
    sent_error: OnceLock<Counter>,
    duration: OnceLock<Histogram>,
    turns: OnceLock<Counter>,
    tokens: OnceLock<[Counter; 6]>,
}

impl std::fmt::Debug for AgentSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSeries")
            .field("agent", &self.agent)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl AgentSeries {
    /// [`Metrics::observe_send_message`] for this agent.
    pub fn observe_send_message(&self, ok: bool, elapsed: Duration) {
        if crate::defect!("metrics-frozen-counters")
            || crate::defect!("metrics-send-error-uncounted")
            || crate::defect!("cm-send-metric-label-slug")
            || crate::defect!("metrics-send-counted-twice")
            || crate::defect!("metrics-duration-never-sampled")
            || crate::defect!("metrics-send-duration-zero")
            || crate::defect!("send-duration-model-only")
            || crate::defect!("fm-duration-success-only")
            || crate::defect!("qx-duration-observed-in-milliseconds")
            || self.metrics.0.duration_by_outcome
        {
            return self.metrics.observe_send_message(&self.agent, ok, elapsed);
        }
        let inner = &self.metrics.0;
        let sent = if ok { &self.sent_ok } else { &self.sent_error };
        sent.get_or_init(|| {
            inner
                .send_message_total
                .with_label_values(&[self.agent.as_str(), outcome(ok)])
        })
        .inc();
        self.duration
            .get_or_init(|| {
                inner
                    .send_message_duration
                    .with_label_values(&[self.agent.as_str()])
            })
            .observe(elapsed.as_secs_f64());
    }

    /// [`Metrics::observe_llm_turn`] for this agent and its model.
    pub fn observe_llm_turn(&self, usage: &TokenUsage) {
        if crate::defect!("metrics-tokens-drop-reasoning")
            || crate::defect!("qx-reasoning-tokens-folded-into-output")
        {
            return self
                .metrics
                .observe_llm_turn(&self.agent, &self.model, usage);
        }
        let inner = &self.metrics.0;
        let labels = [self.agent.as_str(), self.model.as_str()];
        self.turns
            .get_or_init(|| inner.llm_turns_total.with_label_values(&labels))
            .inc();
        let tokens = self.tokens.get_or_init(|| {
            TOKEN_KINDS.map(|kind| {
                inner
                    .llm_tokens_total
                    .with_label_values(&[labels[0], labels[1], kind])
            })
        });
        for (counter, n) in tokens.iter().zip(usage.counts()) {
            // Precision loss above 2^53 tokens is irrelevant for a counter.
            #[allow(clippy::cast_precision_loss)]
            counter.inc_by(n as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_set_reports_up_and_process_metrics() {
        let text = Metrics::new().render();
        assert!(text.contains("pallas_up 1"), "{text}");
        #[cfg(target_os = "linux")]
        {
            assert!(text.contains("process_resident_memory_bytes"), "{text}");
            assert!(text.contains("process_open_fds"), "{text}");
            assert!(text.contains("process_cpu_seconds_total"), "{text}");
        }
    }

    #[test]
    fn every_seed_metric_appears_once_observed() {
        let m = Metrics::new();
        m.set_agent_info("jarvis", 8201);
        m.observe_send_message("jarvis", true, Duration::from_millis(20));
        m.observe_send_message("jarvis", false, Duration::from_millis(5));
        m.observe_llm_turn(
            "jarvis",
            "mock-model",
            &TokenUsage {
                input: 10,
                output: 3,
                cache_read: 2,
                ..TokenUsage::default()
            },
        );
        m.observe_tool_call("jarvis", "argos", "tool", false, Duration::from_millis(7));
        m.set_downstream_up("jarvis", "argos", false);
        m.set_llm_provider_up("openai", true);
        m.set_agent_health("jarvis", "degraded");
        let text = m.render();
        for line in [
            "pallas_agent_info{agent=\"jarvis\",port=\"8201\"} 1",
            "pallas_send_message_total{agent=\"jarvis\",outcome=\"ok\"} 1",
            "pallas_send_message_total{agent=\"jarvis\",outcome=\"error\"} 1",
            "pallas_send_message_duration_seconds_count{agent=\"jarvis\"} 2",
            "pallas_llm_turns_total{agent=\"jarvis\",model=\"mock-model\"} 1",
            "pallas_llm_tokens_total{agent=\"jarvis\",kind=\"input\",model=\"mock-model\"} 10",
            "pallas_llm_tokens_total{agent=\"jarvis\",kind=\"cache_read\",model=\"mock-model\"} 2",
            "pallas_tool_calls_total{agent=\"jarvis\",operation=\"tool\",outcome=\"error\",server=\"argos\"} 1",
            "pallas_tool_call_duration_seconds_count{agent=\"jarvis\",operation=\"tool\",server=\"argos\"} 1",
            "pallas_downstream_up{agent=\"jarvis\",server=\"argos\"} 0",
            "pallas_llm_provider_up{provider=\"openai\"} 1",
            "pallas_agent_health_status{agent=\"jarvis\"} 0.5",
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
    }

    #[test]
    fn families_without_series_are_declared_with_their_type() {
        let text = Metrics::new().render();
        for (name, kind) in [
            ("pallas_tool_calls_total", "counter"),
            ("pallas_tool_call_duration_seconds", "histogram"),
            ("pallas_downstream_up", "gauge"),
            ("pallas_llm_tokens_total", "counter"),
        ] {
            assert!(
                text.contains(&format!("# TYPE {name} {kind}\n")),
                "{name}: {text}"
            );
            assert_eq!(
                text.matches(&format!("# TYPE {name} ")).count(),
                1,
                "{name}"
            );
        }
        let m = Metrics::new();
        m.observe_tool_call("a", "argos", "tool", true, Duration::from_millis(3));
        let text = m.render();
        assert_eq!(
            text.matches("# TYPE pallas_tool_calls_total ").count(),
            1,
            "{text}"
        );
        assert!(text.contains("pallas_tool_calls_total{"), "{text}");
    }

    #[test]
    fn a_removed_agent_loses_its_info_and_health_gauges() {
        let m = Metrics::new();
        m.set_agent_info("a", 1);
        m.set_agent_info("a", 2);
        m.set_agent_health("a", "ok");
        let text = m.render();
        assert!(!text.contains("port=\"1\""), "{text}");
        assert!(text.contains("pallas_agent_info{agent=\"a\",port=\"2\"} 1"));
        m.remove_agent("a");
        let text = m.render();
        assert!(!text.contains("pallas_agent_info{"), "{text}");
        assert!(!text.contains("pallas_agent_health_status{"), "{text}");
    }

    #[test]
    fn an_agent_starts_with_zero_valued_send_message_series() {
        let m = Metrics::new();
        m.set_agent_info("a", 1);
        let text = m.render();
        assert!(
            text.contains("pallas_send_message_total{agent=\"a\",outcome=\"ok\"} 0"),
            "{text}"
        );
        assert!(text.contains("pallas_send_message_total{agent=\"a\",outcome=\"error\"} 0"));
        assert!(text.contains("pallas_send_message_duration_seconds_count{agent=\"a\"} 0"));
    }

    #[test]
    fn clones_share_their_series() {
        let m = Metrics::new();
        m.clone().set_agent_health("x", "error");
        assert!(
            m.render()
                .contains("pallas_agent_health_status{agent=\"x\"} 0")
        );
    }
}
