//! Executing scenario steps with the scripted client: templating, captures, `until` polling,
//! repeats and parallel groups, reloads.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serde_json_path::JsonPath;
use tokio::sync::Mutex;

use crate::client::{CallOptions, ClientError, Era, Exchange, McpConnection, WireClient};
use crate::deploy::Deployment;
use crate::observation::Observation;
use crate::observation::StepRecord;
use crate::redact::Redactor;
use crate::scenario::template::{Vars, render_json};
use crate::scenario::{EraSpec, Scenario, ScenarioSpec, StepAction, StepSpec};
use crate::target::Target;

/// What the steps of one scenario share: the scenario's fixed context, held once; the state
/// the steps change, behind one session lock; the deployment, behind its own.
pub struct Shared {
    /// The fixed context (immutable).
    pub cx: Arc<ScenarioContext>,
    /// What the steps change. Held only for short, clone-out sections (and across a reload).
    pub session: Mutex<Session>,
    /// The deployed implementation (none in attach mode).
    pub deployment: Mutex<Option<Deployment>>,
    pub(super) counter: AtomicUsize,
}

/// The state a scenario's steps change as they run.
pub struct Session {
    pub vars: Vars,
    pub redactor: Redactor,
    /// Open MCP connections, by agent or connection alias.
    pub conns: BTreeMap<String, McpConnection>,
    pub agent_urls: BTreeMap<String, String>,
    /// The finished steps, in the order they finished.
    pub records: Vec<StepRecord>,
    /// The protocol version negotiated on each connection.
    pub versions: BTreeMap<String, String>,
    /// Connection alias → the agent it is connected to.
    pub alias_agents: BTreeMap<String, String>,
}

/// Where a scenario's `step_done` events go, live.
#[derive(Clone)]
pub struct StepSink {
    /// The scenario's index in the run.
    pub index: usize,
    /// The scenario's id.
    pub scenario: String,
    /// The run's event channel.
    pub tx: tokio::sync::mpsc::UnboundedSender<super::RunEvent>,
}

/// The fixed context a scenario's steps run in.
pub struct ScenarioContext {
    pub client: WireClient,
    pub registry_url: Option<String>,
    pub target: Target,
    /// The scenario: its spec, its file and the line of each step.
    pub scenario: Scenario,
    pub step_timeout: Duration,
    /// Where the deployment's files are (an empty directory in attach mode).
    pub run_dir: PathBuf,
    /// Where each finished step is reported as it finishes.
    pub steps: Option<StepSink>,
    /// The scenario's mocks, for the steps that wait on what they received (never kept alive
    /// by a step: the scenario shuts them down).
    pub mocks: std::sync::Weak<pallas_mocks::Ecosystem>,
}

impl ScenarioContext {
    /// The scenario's steps as written.
    pub fn spec(&self) -> &ScenarioSpec {
        &self.scenario.spec
    }

    /// `file:line` of top-level step `index` in its scenario file.
    pub fn step_location(&self, index: usize) -> String {
        format!(
            "{}:{}",
            self.scenario.path.display(),
            self.scenario.step_lines.get(index).copied().unwrap_or(0)
        )
    }
}

/// The state a scenario's steps start from.
pub struct Start {
    pub vars: Vars,
    pub redactor: Redactor,
    pub agent_urls: BTreeMap<String, String>,
}

impl Shared {
    /// The shared state of a scenario about to run its steps on `deployment`.
    pub fn new(cx: Arc<ScenarioContext>, start: Start, deployment: Option<Deployment>) -> Self {
        Self {
            cx,
            session: Mutex::new(Session {
                vars: start.vars,
                redactor: start.redactor,
                conns: BTreeMap::new(),
                agent_urls: start.agent_urls,
                records: Vec::new(),
                versions: BTreeMap::new(),
                alias_agents: BTreeMap::new(),
            }),
            deployment: Mutex::new(deployment),
            counter: AtomicUsize::new(0),
        }
    }
}

/// A step's error as reports show it: at the step's `file:line`, redacted, and bounded with
/// its full size stated.
pub(super) fn step_error(redactor: &Redactor, record: &StepRecord) -> Option<String> {
    let error = record.error.as_deref()?;
    let located = if record.source.is_empty() {
        error.to_owned()
    } else {
        format!("{}: {error}", record.source)
    };
    Some(crate::client::evidence::bounded_text(
        &redactor.text(&located),
        crate::client::evidence::EVIDENCE_MAX,
    ))
}

/// The agent a connection name stands for: the agent an alias was connected
/// to, or the name itself when it is not an alias.
pub fn agent_of_alias<'a>(aliases: &'a BTreeMap<String, String>, name: &'a str) -> &'a str {
    aliases.get(name).map_or(name, String::as_str)
}

/// Why the steps cannot go on (a step's own failure is its record's error), or a step cannot
/// reach its agent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StepError {
    /// A step could not be read back as JSON.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// A step's templates do not render.
    #[error("{at}: step `{step}`: {source}")]
    Template {
        /// The step's `file:line`.
        at: String,
        /// The step's name.
        step: String,
        /// Why.
        source: crate::scenario::template::TemplateError,
    },
    /// A rendered step is no longer a step.
    #[error("{at}: step `{step}`: {source}")]
    Shape {
        /// The step's `file:line`.
        at: String,
        /// The step's name.
        step: String,
        /// Why.
        source: serde_json::Error,
    },
    /// The agent has no endpoint.
    #[error("no endpoint for agent `{0}`")]
    NoEndpoint(String),
    /// The agent's connection could not be opened.
    #[error(transparent)]
    Connect(#[from] ClientError),
}

/// How far past its timeout a step may end before it counts as an overrun (the client's own
/// deadline ends reading at the timeout; this covers the bookkeeping after it).
const STEP_OVERRUN_GRACE: Duration = Duration::from_millis(3000);

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs steps.
#[derive(Clone)]
pub struct Exec(pub Arc<Shared>);

pub(super) struct ActionOutput {
    pub(super) observation: Observation,
    pub(super) error: Option<String>,
    pub(super) timed_out: bool,
}

impl ActionOutput {
    /// A step that observed `observation`.
    pub(super) fn observed(observation: Observation) -> Self {
        Self {
            observation,
            error: None,
            timed_out: false,
        }
    }

    /// A step that could not run.
    pub(super) fn failed(error: String, timed_out: bool) -> Self {
        Self {
            observation: Observation::Nothing,
            error: Some(error),
            timed_out,
        }
    }
}

pub(super) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A plain HTTP fetch (registry, metrics) as an action output: what it observed, or its error
/// (a timeout marked as one).
pub(super) fn from_fetch<T>(
    r: Result<T, ClientError>,
    observation: impl FnOnce(T) -> Observation,
) -> ActionOutput {
    match r {
        Ok(v) => ActionOutput::observed(observation(v)),
        Err(e) => ActionOutput::failed(e.to_string(), matches!(e, ClientError::Timeout { .. })),
    }
}

/// An MCP exchange as an action output, observed as `observation` of it.
pub(super) fn from_client(
    r: Result<Exchange, ClientError>,
    observation: impl FnOnce(Exchange) -> Observation,
) -> ActionOutput {
    match r {
        Ok(x) => ActionOutput {
            timed_out: x.timed_out,
            // What a timeout hid: an answer to another id, a cut connection, an unreadable event.
            // An HTTP error status is itself the answer a step observes (a 406 for a wrong
            // Accept, a 404 for an unknown session): its body's id is judged by the checks
            // (MCP-001, MCP-009), it does not stop the step.
            error: (x.response.is_none() && !(400..600).contains(&x.status))
                .then(|| x.problem.clone())
                .flatten(),
            observation: observation(x),
        },
        Err(e) => ActionOutput::failed(e.to_string(), matches!(e, ClientError::Timeout { .. })),
    }
}

pub(super) fn era_of(e: EraSpec) -> Era {
    match e {
        EraSpec::V2025_11_25 => Era::V2025_11_25,
        EraSpec::V2026_07_28 => Era::V2026_07_28,
    }
}

impl Exec {
    /// Runs the scenario's steps in order, each at its `file:line`.
    pub(crate) async fn run_all(&self) -> Result<(), StepError> {
        let cx = self.0.cx.clone();
        for (i, step) in cx.spec().steps.iter().enumerate() {
            self.run_step(step, None, "", &cx.step_location(i)).await?;
        }
        Ok(())
    }

    /// Runs the `steps` of a group at `source` (the group's `file:line`) in order; `iter` is
    /// the repeat index (`{{i}}`), `suffix` names expansions.
    fn run_steps<'a>(
        &'a self,
        steps: &'a [StepSpec],
        iter: Option<u32>,
        suffix: &'a str,
        source: &'a str,
    ) -> BoxFut<'a, Result<(), StepError>> {
        Box::pin(async move {
            for step in steps {
                self.run_step(step, iter, suffix, source).await?;
            }
            Ok(())
        })
    }

    /// Runs a `repeat` or `parallel` group; `None` for a step that is not one.
    async fn run_group(
        &self,
        step: &StepSpec,
        iter: Option<u32>,
        suffix: &str,
        source: &str,
    ) -> Option<Result<(), StepError>> {
        if let Some(StepAction::Repeat(r)) = step.action() {
            let futs: Vec<_> = (0..r.count)
                .map(|i| (i, format!("{suffix}[{i}]")))
                .collect();
            if r.concurrent {
                let results = futures::future::join_all(
                    futs.iter()
                        .map(|(i, sfx)| self.run_steps(&r.steps, Some(*i), sfx, source)),
                )
                .await;
                return Some(
                    results
                        .into_iter()
                        .collect::<Result<Vec<_>, _>>()
                        .map(|_| ()),
                );
            }
            for (i, sfx) in &futs {
                if let Err(e) = self.run_steps(&r.steps, Some(*i), sfx, source).await {
                    return Some(Err(e));
                }
            }
            return Some(Ok(()));
        }
        if let Some(StepAction::Parallel(p)) = step.action() {
            let results =
                futures::future::join_all(p.iter().map(|s| self.run_step(s, iter, suffix, source)))
                    .await;
            return Some(
                results
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map(|_| ()),
            );
        }
        None
    }

    /// Runs the step's action under its timeout, again until its `until` predicate holds (or
    /// its `within` passes); returns the last output and when its attempt started.
    async fn attempt(
        &self,
        rendered: &StepSpec,
        name: &str,
        timeout: Duration,
        t0: Instant,
    ) -> (ActionOutput, Instant) {
        let mut out;
        let mut attempt_started;
        loop {
            attempt_started = Instant::now();
            out = match tokio::time::timeout(
                timeout + Duration::from_millis(3000),
                self.action(rendered, name, timeout),
            )
            .await
            {
                Ok(o) => o,
                Err(_) => ActionOutput::failed(
                    format!(
                        "step `{name}` exceeded its {} ms timeout",
                        timeout.as_millis()
                    ),
                    true,
                ),
            };
            let Some(u) = &rendered.until else { break };
            let light = out.observation.to_light_json();
            let (root, query) =
                crate::observation::output_query(&light, &out.observation, &u.that.path);
            if crate::checks::assert_predicate_on(&u.that, &root, &query).is_ok() {
                break;
            }
            if t0.elapsed() >= u.within {
                out.error = Some(format!(
                    "`until` did not hold within {} ms",
                    u.within.as_millis()
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (out, attempt_started)
    }

    /// Stores each `capture:` of the step's output as `capture.NAME`; a path that selects
    /// nothing is the step's error.
    async fn capture(&self, rendered: &StepSpec, output: &Value, out: &mut ActionOutput) {
        for (cap, path) in &rendered.capture {
            let (root, query) = crate::observation::output_query(output, &out.observation, path);
            let value = JsonPath::parse(&query)
                .ok()
                .and_then(|p| p.query(&root).first().cloned());
            if let Some(v) = value {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                self.0
                    .session
                    .lock()
                    .await
                    .vars
                    .insert(format!("capture.{cap}"), text);
            } else if out.error.is_none() {
                out.error = Some(format!("capture `{cap}`: `{path}` selected nothing"));
            }
        }
    }

    /// Runs one step at `source` (its `file:line`; a group's steps share the group's).
    fn run_step<'a>(
        &'a self,
        step: &'a StepSpec,
        iter: Option<u32>,
        suffix: &'a str,
        source: &'a str,
    ) -> BoxFut<'a, Result<(), StepError>> {
        Box::pin(async move {
            if step.requires.iter().any(|c| !self.0.cx.target.claims(*c)) {
                return Ok(()); // guarded step: the target does not claim what it needs
            }
            let n = self.0.counter.fetch_add(1, Ordering::SeqCst) + 1;
            let action = step.action().map_or("none", |a| a.key());
            let name = format!(
                "{}{suffix}",
                step.name.clone().unwrap_or_else(|| format!("{action}#{n}"))
            );
            if let Some(grouped) = self.run_group(step, iter, suffix, source).await {
                return grouped;
            }
            // Render templates.
            let mut vars = self.0.session.lock().await.vars.clone();
            if let Some(i) = iter {
                vars.insert("i".into(), i.to_string());
            }
            let mut rendered: StepSpec = {
                let v = serde_json::to_value(step).map_err(StepError::Encode)?;
                let v = render_json(&v, &vars).map_err(|e| StepError::Template {
                    at: source.to_owned(),
                    step: name.clone(),
                    source: e,
                })?;
                serde_json::from_value(v).map_err(|e| StepError::Shape {
                    at: source.to_owned(),
                    step: name.clone(),
                    source: e,
                })?
            };
            // A call of the message tool carries the profile's fixed arguments (recorded as
            // sent, so the checks judge what the target received).
            if let Some(call) = rendered.call.as_mut() {
                let agent = agent_of_alias(&self.0.session.lock().await.alias_agents, &call.agent)
                    .to_owned();
                call.arguments =
                    self.0
                        .cx
                        .target
                        .call_arguments(&agent, &call.tool, call.arguments.take());
            }
            let timeout = rendered.timeout.unwrap_or(self.0.cx.step_timeout);
            let started_ms = self.0.cx.client.recorder().now_ms();
            let started_at = now_rfc3339();
            let t0 = Instant::now();
            let (mut out, attempt_started) = self.attempt(&rendered, &name, timeout, t0).await;
            let mut output = out.observation.to_light_json();
            // The timeout covers the step's processing too: an answer read in time but parsed
            // and recorded for longer is an overrun, reported as one.
            let took = attempt_started.elapsed();
            if took > timeout + STEP_OVERRUN_GRACE && !out.timed_out {
                out.timed_out = true;
                let overrun = format!(
                    "step `{name}` took {} ms, over its {} ms timeout (reading and processing the answer)",
                    took.as_millis(),
                    timeout.as_millis()
                );
                out.error = Some(match out.error.take() {
                    Some(e) => format!("{overrun}; {e}"),
                    None => overrun,
                });
            }
            self.capture(&rendered, &output, &mut out).await;
            if rendered.expect_error {
                // The failure is what the scenario observes: it becomes part of the output.
                let e = out.error.take();
                output = match output {
                    Value::Object(m) => Value::Object(m),
                    Value::Null => json!({}),
                    other => json!({"value": other}),
                };
                if let Some(e) = e {
                    output["error"] = json!(e);
                }
            }
            let typed = rendered.action();
            let bearer = typed.and_then(StepAction::bearer).map(str::to_owned);
            if let Some(b) = &bearer {
                self.0.session.lock().await.redactor.add(b.clone());
            }
            let progress_token = typed.and_then(StepAction::progress_token).cloned();
            let record = StepRecord {
                name,
                action: action.to_owned(),
                agent: rendered.agent().map(str::to_owned),
                started_ms,
                ended_ms: self.0.cx.client.recorder().now_ms(),
                started_at,
                ended_at: now_rfc3339(),
                elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
                observation: out.observation,
                output,
                error: out.error,
                timed_out: out.timed_out,
                bearer,
                progress_token,
                spec: rendered,
                source: source.to_owned(),
            };
            let stalled_agent = record.timed_out.then(|| record.agent.clone()).flatten();
            let mut session = self.0.session.lock().await;
            if let Some(sink) = &self.0.cx.steps {
                // Sent under the session lock: the events keep the records' order.
                let redactor = &session.redactor;
                let _ = sink.tx.send(super::RunEvent::StepDone(super::StepDone {
                    index: sink.index,
                    scenario: sink.scenario.clone(),
                    step: super::StepSummary::of(&record, redactor),
                }));
            }
            session.records.push(record);
            drop(session);
            if let Some(agent) = stalled_agent {
                self.refresh_if_unusable(&agent).await;
            }
            Ok(())
        })
    }

    /// After a step on `agent`'s connection timed out (and its request was cancelled): if the
    /// session no longer answers a `ping`, drop it so the next step opens a fresh one — no
    /// knock-on verdicts from a session a stalled call left unusable.
    async fn refresh_if_unusable(&self, agent: &str) {
        let Some(conn) = self.0.session.lock().await.conns.get(agent).cloned() else {
            return;
        };
        let opts = CallOptions {
            timeout: Some(Duration::from_secs(2)),
            ..CallOptions::default()
        };
        let usable = conn.request("ping", json!({}), &opts).await.is_ok_and(|x| {
            x.response
                .as_ref()
                .is_some_and(|r| r.get("result").is_some())
        });
        if !usable {
            self.0.session.lock().await.conns.remove(agent);
        }
    }

    pub(super) async fn connection(&self, agent: &str) -> Result<McpConnection, StepError> {
        if let Some(c) = self.0.session.lock().await.conns.get(agent) {
            return Ok(c.clone());
        }
        let url = self
            .0
            .session
            .lock()
            .await
            .agent_urls
            .get(agent)
            .cloned()
            .ok_or_else(|| StepError::NoEndpoint(agent.to_owned()))?;
        let era = era_of(
            self.0
                .cx
                .spec()
                .eras
                .first()
                .copied()
                .unwrap_or(EraSpec::V2025_11_25),
        );
        let (conn, _) =
            McpConnection::connect(&self.0.cx.client, agent, &url, era, &CallOptions::default())
                .await?;
        let mut session = self.0.session.lock().await;
        session
            .versions
            .insert(agent.to_owned(), conn.protocol_version().to_owned());
        session.conns.insert(agent.to_owned(), conn.clone());
        drop(session);
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_resolves_to_the_agent_it_is_connected_to() {
        let aliases = BTreeMap::from([("second".to_owned(), "assistant".to_owned())]);
        assert_eq!(agent_of_alias(&aliases, "second"), "assistant");
        assert_eq!(agent_of_alias(&aliases, "assistant"), "assistant");
        assert_eq!(agent_of_alias(&BTreeMap::new(), "other"), "other");
    }
}
