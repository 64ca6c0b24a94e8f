//! One probe round: the registry fetched and judged (REG-001, REG-002), then per agent a fresh
//! session — `initialize`, `tools/list`, `get_health` when listed, the canary message when
//! asked for (its progress stream judged by the kit's progress checks) — always ended with
//! `DELETE`. Every round uses a fresh recorder, so a long watch holds nothing from old rounds.

use std::time::{Duration, Instant};

use crate::client::JsonRef;
use serde_json::{Value, json};

use crate::checks::{self, CheckResult, Verdict};
use crate::client::registry::fetch_registry_with_timeout;
use crate::client::{
    CallOptions, ClientError, Era, Exchange, McpConnection, Recorder, WireClient, parse_health,
    server_id, streamable_http_url,
};
use crate::observation::{MessageSent, Observation, Observed, StepRecord};
use crate::redact::Redactor;
use crate::scenario::{RegistryStep, SendStep, StepSpec};

/// The registry checks a round judges: the document's HTTP answer and each entry against the
/// official registry schema.
pub const REGISTRY_CHECKS: &[&str] = &["REG-002", "REG-001"];
/// The progress checks a canary call is judged by: those that need only the call's own
/// stream (the others need a mock's journal, which a live deployment does not have).
pub const CANARY_CHECKS: &[&str] = &["PROG-002", "PROG-003", "PROG-004", "PROG-005", "PROG-007"];
/// The progress token of every canary call.
pub const CANARY_TOKEN: &str = "pallas-watch-canary";

/// One agent endpoint to probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The agent's name (the registry entry's server id, or the deployment's key).
    pub name: String,
    /// Its MCP endpoint.
    pub url: String,
}

/// How the agents' tools are named and called.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The message tool (`{agent}` stands for the agent's name).
    pub message_tool: String,
    /// The health tool.
    pub health_tool: String,
    /// The target profile when there is one (its `message_tool` and `message_arguments`).
    pub target: Option<Box<crate::target::Target>>,
}

impl Tools {
    fn message_tool(&self, agent: &str) -> String {
        match &self.target {
            Some(t) => t.message_tool(agent),
            None => self.message_tool.replace("{agent}", agent),
        }
    }

    fn message_arguments(&self, agent: &str, text: &str) -> Value {
        match &self.target {
            Some(t) => t.message_arguments(agent, text),
            None => json!({ "message": text }),
        }
    }
}

/// What the registry fetch of a round showed.
#[derive(Debug, Clone)]
pub struct RegistryProbe {
    /// Fetch time, seconds (`None` when no answer came).
    pub seconds: Option<f64>,
    /// REG-002 and REG-001, judged.
    pub checks: Vec<CheckResult>,
    /// Why the fetch failed, when it did.
    pub error: Option<String>,
}

impl RegistryProbe {
    /// The verdict of check `id`.
    pub fn verdict(&self, id: &str) -> Option<Verdict> {
        self.checks.iter().find(|c| c.id == id).map(|c| c.verdict)
    }

    /// The registry answered 200 with a `servers` array (REG-002 passed).
    pub fn up(&self) -> bool {
        self.verdict("REG-002") == Some(Verdict::Pass)
    }
}

/// The health an agent reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthState {
    /// `status: ok`.
    Ok,
    /// `status: degraded`.
    Degraded,
    /// `status: error`.
    Error,
    /// An answer that is not a health report (seed 000 §2's shape).
    Invalid,
    /// No answer (transport error, HTTP or JSON-RPC error, timeout).
    Unanswered,
    /// The agent does not list the health tool.
    NotOffered,
}

impl HealthState {
    /// Every state exported as a `status` label (all but [`HealthState::NotOffered`]).
    pub const EXPORTED: [HealthState; 5] = [
        HealthState::Ok,
        HealthState::Degraded,
        HealthState::Error,
        HealthState::Invalid,
        HealthState::Unanswered,
    ];

    /// The `status` label.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::Ok => "ok",
            HealthState::Degraded => "degraded",
            HealthState::Error => "error",
            HealthState::Invalid => "invalid",
            HealthState::Unanswered => "unanswered",
            HealthState::NotOffered => "not_offered",
        }
    }
}

/// The canary call of one agent.
#[derive(Debug, Clone)]
pub struct CanaryProbe {
    /// Call time, seconds (`None` when no answer came).
    pub seconds: Option<f64>,
    /// The call returned a result without `isError`.
    pub answered: bool,
    /// Progress notifications received.
    pub progress: usize,
    /// The progress checks, judged.
    pub checks: Vec<CheckResult>,
}

impl CanaryProbe {
    /// The canary passed: answered, no progress check failed or warned, and at least one
    /// passed (a stream with nothing to judge is not a pass).
    pub fn passed(&self) -> bool {
        self.answered
            && self
                .checks
                .iter()
                .all(|c| !matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error))
            && self.checks.iter().any(|c| c.verdict == Verdict::Pass)
    }
}

/// What probing one agent showed.
#[derive(Debug, Clone)]
pub struct AgentProbe {
    /// The agent.
    pub agent: Agent,
    /// `initialize` succeeded, `tools/list` answered, and the health tool (when listed)
    /// answered `ok` or `degraded`.
    pub success: bool,
    /// Why the probe failed, when it did.
    pub failure: Option<String>,
    /// `initialize` + `notifications/initialized`, seconds.
    pub initialize: Option<f64>,
    /// `tools/list`, seconds.
    pub tools_list: Option<f64>,
    /// The health tool's call, seconds.
    pub get_health: Option<f64>,
    /// The health it reported.
    pub health: HealthState,
    /// The canary call, when asked for and reached.
    pub canary: Option<CanaryProbe>,
    /// The session was ended (`DELETE` answered 2xx or 405, or the server issued no session);
    /// `None` when no session was opened.
    pub closed: Option<bool>,
    /// The whole probe, seconds.
    pub seconds: f64,
}

/// What a round probes and how.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// Tool names and arguments.
    pub tools: Tools,
    /// The canary message, if any.
    pub canary: Option<String>,
    /// Limit of each exchange.
    pub timeout: Duration,
    /// Bearer sent to the agents (a secret: never exported or printed).
    pub bearer: Option<String>,
}

fn client(timeout: Duration) -> Result<WireClient, ClientError> {
    WireClient::new(Recorder::new(), timeout)
}

fn secs(started: Instant) -> f64 {
    started.elapsed().as_secs_f64()
}

/// A step record for the checks: one step of `spec`, with what it observed.
fn record(
    name: &str,
    spec: StepSpec,
    observation: Observation,
    error: Option<String>,
) -> StepRecord {
    StepRecord {
        name: name.to_owned(),
        action: spec
            .actions()
            .first()
            .copied()
            .unwrap_or_default()
            .to_owned(),
        observation,
        error,
        spec,
        ..StepRecord::default()
    }
}

/// Fetches the registry and judges it; the agents it lists (each entry's first
/// `streamable-http` remote).
pub async fn probe_registry(
    url: &str,
    timeout: Duration,
    redactor: &Redactor,
) -> (RegistryProbe, Vec<Agent>) {
    let started = Instant::now();
    let fetched = match client(timeout) {
        Ok(c) => fetch_registry_with_timeout(&c, url, Some(timeout)).await,
        Err(e) => Err(e),
    };
    let seconds = fetched.as_ref().ok().map(|_| secs(started));
    let agents = fetched
        .as_ref()
        .map(|f| {
            f.servers()
                .into_iter()
                .filter_map(|s| {
                    let name = s.get("name").and_then(Value::as_str)?;
                    Some(Agent {
                        name: server_id(name).to_owned(),
                        url: streamable_http_url(s)?.to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let spec = StepSpec {
        registry: Some(RegistryStep::default()),
        ..StepSpec::default()
    };
    let (observation, error) = match fetched {
        Ok(f) => (Observation::RegistryFetched(f), None),
        Err(e) => (Observation::Nothing, Some(redactor.text(&e.to_string()))),
    };
    let observed = Observed {
        steps: vec![record("registry", spec, observation, error.clone())],
        ..Observed::default()
    };
    let checks = checks::judge_builtin(REGISTRY_CHECKS, &observed, redactor);
    (
        RegistryProbe {
            seconds,
            checks,
            error,
        },
        agents,
    )
}

/// Probes one agent on a fresh session, and ends the session whatever happened.
pub async fn probe_agent(agent: &Agent, plan: &ProbePlan, redactor: &Redactor) -> AgentProbe {
    let started = Instant::now();
    let mut probe = AgentProbe {
        agent: agent.clone(),
        success: false,
        failure: None,
        initialize: None,
        tools_list: None,
        get_health: None,
        health: HealthState::Unanswered,
        canary: None,
        closed: None,
        seconds: 0.0,
    };
    let opts = CallOptions {
        bearer: plan.bearer.clone(),
        timeout: Some(plan.timeout),
        ..CallOptions::default()
    };
    let wire = match client(plan.timeout) {
        Ok(c) => c,
        Err(e) => {
            probe.failure = Some(e.to_string());
            return probe;
        }
    };
    let t = Instant::now();
    let conn = match McpConnection::connect(&wire, &agent.name, &agent.url, Era::V2025_11_25, &opts)
        .await
    {
        Ok((conn, _)) => {
            probe.initialize = Some(secs(t));
            conn
        }
        Err(e) => {
            probe.failure = Some(format!("initialize: {}", redactor.text(&e.to_string())));
            probe.seconds = secs(started);
            return probe;
        }
    };
    let failure = exercise(&conn, agent, plan, &opts, redactor, &mut probe).await;
    probe.closed = Some(match conn.session_id() {
        None => true,
        Some(_) => conn
            .delete(&opts)
            .await
            .is_ok_and(|x| (200..300).contains(&x.status) || x.status == 405),
    });
    probe.success = failure.is_none();
    probe.failure = failure;
    probe.seconds = secs(started);
    probe
}

/// `tools/list`, the health tool, the canary; the first failure.
async fn exercise(
    conn: &McpConnection,
    agent: &Agent,
    plan: &ProbePlan,
    opts: &CallOptions,
    redactor: &Redactor,
    probe: &mut AgentProbe,
) -> Option<String> {
    let t = Instant::now();
    let listed = conn.list_tools(opts).await;
    let tools: Vec<String> = match &listed {
        Ok(x) if x.result().is_some() => {
            probe.tools_list = Some(secs(t));
            x.result()
                .and_then(|r| r.get("tools"))
                .and_then(JsonRef::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.get("name").and_then(JsonRef::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        }
        Ok(x) => return Some(format!("tools/list: {}", unanswered(x))),
        Err(e) => return Some(format!("tools/list: {}", redactor.text(&e.to_string()))),
    };
    let mut failure = None;
    if tools.contains(&plan.tools.health_tool) {
        let t = Instant::now();
        let answer = conn
            .call_tool(&plan.tools.health_tool, json!({}), opts)
            .await;
        (probe.health, failure) = match &answer {
            Ok(x) => match x.result() {
                Some(result) => {
                    probe.get_health = Some(secs(t));
                    match parse_health(&result.to_value()) {
                        Ok(h) if h.status == "ok" => (HealthState::Ok, None),
                        Ok(h) if h.status == "degraded" => (HealthState::Degraded, None),
                        Ok(h) => (
                            HealthState::Error,
                            Some(format!("health: status `{}`", h.status)),
                        ),
                        Err(e) => (HealthState::Invalid, Some(format!("health: {e}"))),
                    }
                }
                None => (
                    HealthState::Unanswered,
                    Some(format!("health: {}", unanswered(x))),
                ),
            },
            Err(e) => (
                HealthState::Unanswered,
                Some(format!("health: {}", redactor.text(&e.to_string()))),
            ),
        };
    } else {
        probe.health = HealthState::NotOffered;
    }
    if let Some(text) = &plan.canary {
        probe.canary = Some(canary(conn, agent, plan, opts, text, redactor).await);
    }
    failure
}

fn unanswered(x: &Exchange) -> String {
    match x.error() {
        Some(e) => format!("JSON-RPC error {e}"),
        None if x.timed_out => "timed out".into(),
        None => format!("HTTP {} without a result", x.status),
    }
}

/// The canary message with a progress token; its stream judged by [`CANARY_CHECKS`].
async fn canary(
    conn: &McpConnection,
    agent: &Agent,
    plan: &ProbePlan,
    opts: &CallOptions,
    text: &str,
    redactor: &Redactor,
) -> CanaryProbe {
    let token = json!(CANARY_TOKEN);
    let call_opts = CallOptions {
        progress_token: Some(token.clone()),
        ..opts.clone()
    };
    let tool = plan.tools.message_tool(&agent.name);
    let arguments = plan.tools.message_arguments(&agent.name, text);
    let t = Instant::now();
    let answer = conn.call_tool(&tool, arguments, &call_opts).await;
    let seconds = answer
        .as_ref()
        .ok()
        .filter(|x| !x.timed_out)
        .map(|_| secs(t));
    let answered = answer.as_ref().is_ok_and(|x| {
        x.result()
            .is_some_and(|r| r.get("isError").and_then(JsonRef::as_bool) != Some(true))
    });
    let progress = answer.as_ref().map_or(0, |x| x.progress().count());
    let timed_out = answer.as_ref().is_ok_and(|x| x.timed_out);
    let spec = StepSpec {
        send: Some(SendStep {
            agent: agent.name.clone(),
            message: text.to_owned(),
            progress_token: Some(token.clone()),
            ..SendStep::default()
        }),
        ..StepSpec::default()
    };
    let (exchange, error) = match answer {
        Ok(x) => (Some(x), None),
        Err(e) => (None, Some(redactor.text(&e.to_string()))),
    };
    let mut step = record(
        "canary",
        spec,
        Observation::MessageSent(MessageSent::new(
            exchange,
            None,
            plan.tools
                .target
                .as_ref()
                .and_then(|t| t.reply_path())
                .as_ref(),
        )),
        error,
    );
    step.progress_token = Some(token);
    step.timed_out = timed_out;
    let observed = Observed {
        steps: vec![step],
        ..Observed::default()
    };
    CanaryProbe {
        seconds,
        answered,
        progress,
        checks: checks::judge_builtin(CANARY_CHECKS, &observed, redactor),
    }
}
