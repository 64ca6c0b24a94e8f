//! Executing scenario steps with the scripted client: templating, captures, `until` polling,
//! repeats and parallel groups, reloads.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use serde_json_path::JsonPath;
use tokio::sync::Mutex;

use crate::checks::StepRecord;
use crate::client::{
    CallOptions, ClientError, Era, Exchange, McpConnection, WireClient, chat_gate,
    metrics::scrape_metrics_with_timeout, parse_health, registry::fetch_registry_with_timeout,
};
use crate::process::ImplProcess;
use crate::redact::Redactor;
use crate::scenario::template::{Vars, render, render_json};
use crate::scenario::{DeploymentSpec, EraSpec, ScenarioSpec, StepSpec};
use crate::target::{ReloadMode, Rendered, Target, render_deployment};

/// State shared by the steps of one scenario.
pub struct Shared {
    pub client: WireClient,
    pub vars: Mutex<Vars>,
    pub conns: Mutex<BTreeMap<String, McpConnection>>,
    pub agent_urls: Mutex<BTreeMap<String, String>>,
    pub registry_url: Option<String>,
    pub redactor: Mutex<Redactor>,
    pub target: Target,
    pub spec: ScenarioSpec,
    pub step_timeout: Duration,
    pub process: Mutex<Option<ImplProcess>>,
    pub rendered: Mutex<Option<Rendered>>,
    pub ports: Mutex<BTreeMap<String, u16>>,
    pub mock_urls: BTreeMap<String, String>,
    pub run_dir: PathBuf,
    pub deployment: Mutex<Option<DeploymentSpec>>,
    pub records: Mutex<Vec<StepRecord>>,
    pub versions: Mutex<BTreeMap<String, String>>,
    /// Connection alias → the agent it is connected to.
    pub alias_agents: Mutex<BTreeMap<String, String>>,
    counter: AtomicUsize,
}

impl Shared {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: WireClient,
        vars: Vars,
        agent_urls: BTreeMap<String, String>,
        registry_url: Option<String>,
        redactor: Redactor,
        target: Target,
        spec: ScenarioSpec,
        step_timeout: Duration,
        process: Option<ImplProcess>,
        rendered: Option<Rendered>,
        ports: BTreeMap<String, u16>,
        mock_urls: BTreeMap<String, String>,
        run_dir: PathBuf,
    ) -> Self {
        let deployment = spec.deployment.clone();
        Self {
            client,
            vars: Mutex::new(vars),
            conns: Mutex::new(BTreeMap::new()),
            agent_urls: Mutex::new(agent_urls),
            registry_url,
            redactor: Mutex::new(redactor),
            target,
            spec,
            step_timeout,
            process: Mutex::new(process),
            rendered: Mutex::new(rendered),
            ports: Mutex::new(ports),
            mock_urls,
            run_dir,
            deployment: Mutex::new(deployment),
            records: Mutex::new(Vec::new()),
            versions: Mutex::new(BTreeMap::new()),
            alias_agents: Mutex::new(BTreeMap::new()),
            counter: AtomicUsize::new(0),
        }
    }
}

/// The agent a connection name stands for: the agent an alias was connected
/// to, or the name itself when it is not an alias.
pub fn agent_of_alias<'a>(aliases: &'a BTreeMap<String, String>, name: &'a str) -> &'a str {
    aliases.get(name).map_or(name, String::as_str)
}

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs steps.
#[derive(Clone)]
pub struct Exec(pub Arc<Shared>);

struct ActionOutput {
    output: Value,
    error: Option<String>,
    timed_out: bool,
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn exchange_json(x: &Exchange) -> Value {
    let headers: serde_json::Map<String, Value> = x
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), Value::String(v.clone())))
        .collect();
    let text = x
        .result()
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|b| b.get("type") == Some(&json!("text"))))
        .and_then(|b| b.get("text"))
        .cloned();
    json!({
        "status": x.status,
        "content_type": x.content_type,
        "headers": headers,
        "elapsed_ms": x.elapsed_ms,
        "timed_out": x.timed_out,
        "response": x.response,
        "result": x.result(),
        "error": x.error(),
        "text": text,
        "messages": x.messages.iter().map(|m| json!({"at_ms": m.at_ms, "message": m.message, "sse_event_id": m.sse_event_id})).collect::<Vec<_>>(),
        "notifications": x.notifications().map(|m| m.message.clone()).collect::<Vec<_>>(),
        "progress": x.progress().map(|m| m.message.clone()).collect::<Vec<_>>(),
        "after_response": x.after_response().map(|m| m.message.clone()).collect::<Vec<_>>(),
        "body_text": x.body_text,
    })
}

fn from_client(r: Result<Exchange, ClientError>) -> ActionOutput {
    match r {
        Ok(x) => ActionOutput {
            timed_out: x.timed_out,
            output: exchange_json(&x),
            error: None,
        },
        Err(e) => ActionOutput {
            timed_out: matches!(e, ClientError::Timeout { .. }),
            output: Value::Null,
            error: Some(e.to_string()),
        },
    }
}

fn era_of(e: EraSpec) -> Era {
    match e {
        EraSpec::V2025_11_25 => Era::V2025_11_25,
        EraSpec::V2026_07_28 => Era::V2026_07_28,
    }
}

impl Exec {
    /// Runs `steps` in order; `iter` is the repeat index (`{{i}}`), `suffix` names expansions.
    pub fn run_steps<'a>(
        &'a self,
        steps: &'a [StepSpec],
        iter: Option<u32>,
        suffix: &'a str,
    ) -> BoxFut<'a, Result<(), String>> {
        Box::pin(async move {
            for step in steps {
                self.run_step(step, iter, suffix).await?;
            }
            Ok(())
        })
    }

    fn run_step<'a>(
        &'a self,
        step: &'a StepSpec,
        iter: Option<u32>,
        suffix: &'a str,
    ) -> BoxFut<'a, Result<(), String>> {
        Box::pin(async move {
            if step.requires.iter().any(|c| !self.0.target.claims(*c)) {
                return Ok(()); // guarded step: the target does not claim what it needs
            }
            let n = self.0.counter.fetch_add(1, Ordering::SeqCst) + 1;
            let action = step.actions().first().copied().unwrap_or("none");
            let name = format!(
                "{}{suffix}",
                step.name.clone().unwrap_or_else(|| format!("{action}#{n}"))
            );
            if let Some(r) = &step.repeat {
                let futs: Vec<_> = (0..r.count)
                    .map(|i| (i, format!("{suffix}[{i}]")))
                    .collect();
                if r.concurrent {
                    let results = futures::future::join_all(
                        futs.iter()
                            .map(|(i, sfx)| self.run_steps(&r.steps, Some(*i), sfx)),
                    )
                    .await;
                    return results
                        .into_iter()
                        .collect::<Result<Vec<_>, _>>()
                        .map(|_| ());
                }
                for (i, sfx) in &futs {
                    self.run_steps(&r.steps, Some(*i), sfx).await?;
                }
                return Ok(());
            }
            if let Some(p) = &step.parallel {
                let results =
                    futures::future::join_all(p.iter().map(|s| self.run_step(s, iter, suffix)))
                        .await;
                return results
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map(|_| ());
            }
            // Render templates.
            let mut vars = self.0.vars.lock().await.clone();
            if let Some(i) = iter {
                vars.insert("i".into(), i.to_string());
            }
            let rendered: StepSpec = {
                let v = serde_json::to_value(step).map_err(|e| e.to_string())?;
                let v = render_json(&v, &vars).map_err(|e| format!("step `{name}`: {e}"))?;
                serde_json::from_value(v).map_err(|e| format!("step `{name}`: {e}"))?
            };
            let timeout = rendered.timeout.unwrap_or(self.0.step_timeout);
            let started_ms = self.0.client.recorder().now_ms();
            let started_at = now_rfc3339();
            let t0 = Instant::now();
            let mut out;
            loop {
                out = match tokio::time::timeout(
                    timeout + Duration::from_millis(3000),
                    self.action(&rendered, &name, timeout),
                )
                .await
                {
                    Ok(o) => o,
                    Err(_) => ActionOutput {
                        output: Value::Null,
                        error: Some(format!(
                            "step `{name}` exceeded its {} ms timeout",
                            timeout.as_millis()
                        )),
                        timed_out: true,
                    },
                };
                let Some(u) = &rendered.until else { break };
                if crate::checks::assert_predicate(&u.that, &out.output).is_ok() {
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
            // Captures.
            for (cap, path) in &rendered.capture {
                let value = JsonPath::parse(path)
                    .ok()
                    .and_then(|p| p.query(&out.output).first().cloned());
                if let Some(v) = value {
                    let text = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    self.0
                        .vars
                        .lock()
                        .await
                        .insert(format!("capture.{cap}"), text);
                } else if out.error.is_none() {
                    out.error = Some(format!("capture `{cap}`: `{path}` selected nothing"));
                }
            }
            let bearer = [
                rendered.send.as_ref().and_then(|s| s.bearer.clone()),
                rendered.call.as_ref().and_then(|s| s.bearer.clone()),
                rendered.health.as_ref().and_then(|s| s.bearer.clone()),
                rendered.connect.as_ref().and_then(|s| s.bearer.clone()),
                rendered.request.as_ref().and_then(|s| s.bearer.clone()),
                rendered.list_tools.as_ref().and_then(|s| s.bearer.clone()),
            ]
            .into_iter()
            .flatten()
            .next();
            if let Some(b) = &bearer {
                self.0.redactor.lock().await.add(b.clone());
            }
            let progress_token = rendered
                .send
                .as_ref()
                .and_then(|s| s.progress_token.clone())
                .or(rendered
                    .call
                    .as_ref()
                    .and_then(|s| s.progress_token.clone()))
                .or(rendered
                    .health
                    .as_ref()
                    .and_then(|s| s.progress_token.clone()));
            let request = serde_json::to_value(&rendered)
                .ok()
                .and_then(|v| v.get(action).cloned())
                .unwrap_or(Value::Null);
            let record = StepRecord {
                name,
                request,
                action: action.to_owned(),
                agent: rendered.agent().map(str::to_owned),
                started_ms,
                ended_ms: self.0.client.recorder().now_ms(),
                started_at,
                ended_at: now_rfc3339(),
                elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
                output: out.output,
                error: out.error,
                timed_out: out.timed_out,
                bearer,
                progress_token,
            };
            let stalled_agent = record.timed_out.then(|| record.agent.clone()).flatten();
            self.0.records.lock().await.push(record);
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
        let Some(conn) = self.0.conns.lock().await.get(agent).cloned() else {
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
            self.0.conns.lock().await.remove(agent);
        }
    }

    async fn connection(&self, agent: &str) -> Result<McpConnection, String> {
        if let Some(c) = self.0.conns.lock().await.get(agent) {
            return Ok(c.clone());
        }
        let url = self
            .0
            .agent_urls
            .lock()
            .await
            .get(agent)
            .cloned()
            .ok_or_else(|| format!("no endpoint for agent `{agent}`"))?;
        let era = era_of(
            self.0
                .spec
                .eras
                .first()
                .copied()
                .unwrap_or(EraSpec::V2025_11_25),
        );
        let (conn, _) =
            McpConnection::connect(&self.0.client, agent, &url, era, &CallOptions::default())
                .await
                .map_err(|e| e.to_string())?;
        self.0
            .versions
            .lock()
            .await
            .insert(agent.to_owned(), conn.protocol_version().to_owned());
        self.0
            .conns
            .lock()
            .await
            .insert(agent.to_owned(), conn.clone());
        Ok(conn)
    }

    async fn action(&self, s: &StepSpec, name: &str, timeout: Duration) -> ActionOutput {
        let opts = |bearer: &Option<String>, token: &Option<Value>| CallOptions {
            bearer: bearer.clone(),
            progress_token: token.clone(),
            timeout: Some(timeout),
            ..CallOptions::default()
        };
        let err = |e: String| ActionOutput {
            output: Value::Null,
            error: Some(e),
            timed_out: false,
        };
        macro_rules! conn {
            ($agent:expr) => {
                match self.connection($agent).await {
                    Ok(c) => c,
                    Err(e) => return err(e),
                }
            };
        }
        if s.registry.is_some() {
            let Some(url) = &self.0.registry_url else {
                return err("the target has no registry".into());
            };
            return match fetch_registry_with_timeout(&self.0.client, url, Some(timeout)).await {
                Ok(f) => ActionOutput {
                    output: json!({"url": f.url, "status": f.status, "content_type": f.content_type, "body": f.body, "text": f.text, "elapsed_ms": f.elapsed_ms}),
                    error: None,
                    timed_out: false,
                },
                Err(e) => ActionOutput {
                    timed_out: matches!(e, ClientError::Timeout { .. }),
                    output: Value::Null,
                    error: Some(e.to_string()),
                },
            };
        }
        if let Some(c) = &s.connect {
            let alias = c.alias.clone().unwrap_or_else(|| c.agent.clone());
            let Some(url) = self.0.agent_urls.lock().await.get(&c.agent).cloned() else {
                return err(format!("no endpoint for agent `{}`", c.agent));
            };
            let era = era_of(
                c.era
                    .or(self.0.spec.eras.first().copied())
                    .unwrap_or(EraSpec::V2025_11_25),
            );
            return match McpConnection::connect(
                &self.0.client,
                &alias,
                &url,
                era,
                &opts(&c.bearer, &None),
            )
            .await
            {
                Ok((conn, x)) => {
                    let mut o = exchange_json(&x);
                    o["session_id"] = json!(conn.session_id());
                    o["protocol_version"] = json!(conn.protocol_version());
                    o["era"] = json!(era.as_str());
                    self.0
                        .versions
                        .lock()
                        .await
                        .insert(alias.clone(), conn.protocol_version().to_owned());
                    self.0
                        .alias_agents
                        .lock()
                        .await
                        .insert(alias.clone(), c.agent.clone());
                    self.0.conns.lock().await.insert(alias, conn);
                    ActionOutput {
                        output: o,
                        error: None,
                        timed_out: false,
                    }
                }
                Err(e) => err(e.to_string()),
            };
        }
        if let Some(a) = &s.list_tools {
            let c = conn!(&a.agent);
            return from_client(c.list_tools(&opts(&a.bearer, &None)).await);
        }
        if let Some(h) = &s.health {
            let c = conn!(&h.agent);
            let r = c
                .call_tool(
                    &self.0.target.spec.health_tool,
                    json!({}),
                    &opts(&h.bearer, &h.progress_token),
                )
                .await;
            let health = match &r {
                Ok(x) => match x.result() {
                    Some(res) => parse_health(res).map_err(|e| e.to_string()),
                    None => Err(format!(
                        "no result (HTTP {}{})",
                        x.status,
                        x.error()
                            .map(|e| format!(", error {e}"))
                            .unwrap_or_default()
                    )),
                },
                Err(e) => Err(e.to_string()),
            };
            let gate = match chat_gate(health.as_ref()) {
                crate::client::ChatGate::Allowed => "allowed".to_owned(),
                crate::client::ChatGate::AllowedWithWarning(w) => format!("warning: {w}"),
                crate::client::ChatGate::Blocked503(w) => format!("blocked: {w}"),
            };
            let mut out = from_client(r);
            if out.output.is_null() {
                out.output = json!({});
            }
            match health {
                Ok(h) => out.output["health"] = serde_json::to_value(h).unwrap_or_default(),
                Err(e) => out.output["health_error"] = json!(e),
            }
            out.output["gate"] = json!(gate);
            return out;
        }
        if let Some(m) = &s.send {
            let c = conn!(&m.agent);
            let mut args = json!({"message": m.message});
            if !m.images.is_empty() {
                args["images"] = json!(m.images);
            }
            let agent = agent_of_alias(&*self.0.alias_agents.lock().await, &m.agent).to_owned();
            let tool = self.0.target.message_tool(&agent);
            let o = opts(&m.bearer, &m.progress_token);
            let Some(after) = m.cancel_after_progress else {
                return from_client(c.call_tool(&tool, args, &o).await);
            };
            // Cancel mid-call: stream, count progress, send notifications/cancelled.
            let id = c.next_id();
            let o = CallOptions {
                id: Some(id.clone()),
                ..o
            };
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let c2 = c.clone();
            let params = json!({"name": tool, "arguments": args});
            let call =
                tokio::spawn(
                    async move { c2.request_streaming("tools/call", params, &o, tx).await },
                );
            let mut seen = 0u32;
            let mut cancelled_at = None;
            while let Some(msg) = rx.recv().await {
                if msg.method() == Some("notifications/progress") {
                    seen += 1;
                    if seen >= after && cancelled_at.is_none() {
                        let _ = c
                            .cancel(
                                &id,
                                Some("cancelled by the conformance client"),
                                &CallOptions {
                                    bearer: m.bearer.clone(),
                                    timeout: Some(timeout),
                                    ..CallOptions::default()
                                },
                            )
                            .await;
                        cancelled_at = Some(msg.at_ms);
                    }
                }
            }
            let mut out = match call.await {
                Ok(r) => from_client(r),
                Err(e) => err(e.to_string()),
            };
            if out.output.is_null() {
                out.output = json!({});
            }
            out.output["cancelled_at_ms"] = json!(cancelled_at);
            if let Some(at) = cancelled_at
                && let Some(msgs) = out
                    .output
                    .get("messages")
                    .and_then(Value::as_array)
                    .cloned()
            {
                let after: Vec<Value> = msgs
                    .into_iter()
                    .filter(|m| {
                        m.get("at_ms")
                            .and_then(Value::as_f64)
                            .is_some_and(|t| t > at)
                    })
                    .filter(|m| {
                        m.pointer("/message/method") == Some(&json!("notifications/progress"))
                    })
                    .map(|m| m["message"].clone())
                    .collect();
                out.output["progress_after_cancel"] = json!(after);
            }
            if out.timed_out {
                // A cancelled request may legitimately never answer (MCP cancellation).
                out.error = None;
            }
            return out;
        }
        if let Some(t) = &s.call {
            let c = conn!(&t.agent);
            return from_client(
                c.call_tool(
                    &t.tool,
                    t.arguments.clone().unwrap_or(json!({})),
                    &opts(&t.bearer, &t.progress_token),
                )
                .await,
            );
        }
        if let Some(a) = &s.history {
            let c = conn!(&a.agent);
            return from_client(
                c.get_prompt(
                    &format!("{}_history", a.agent),
                    Value::Null,
                    &opts(&a.bearer, &None),
                )
                .await,
            );
        }
        if let Some(r) = &s.request {
            let c = conn!(&r.agent);
            let params = r.params.clone().unwrap_or(json!({}));
            let o = opts(&r.bearer, &None);
            return from_client(if r.notification {
                c.notify(&r.method, params, &o).await
            } else {
                c.request(&r.method, params, &o).await
            });
        }
        if let Some(r) = &s.raw {
            let c = conn!(&r.agent);
            let headers = r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            return from_client(
                c.post_raw(
                    Bytes::from(r.body.clone()),
                    headers,
                    r.with_session,
                    &opts(&None, &None),
                )
                .await,
            );
        }
        if let Some(a) = &s.delete {
            let c = conn!(&a.agent);
            return from_client(c.delete(&opts(&a.bearer, &None)).await);
        }
        if let Some(m) = &s.metrics {
            let vars = self.0.vars.lock().await.clone();
            let url = match &m.agent {
                None => self
                    .0
                    .target
                    .spec
                    .metrics_url
                    .as_ref()
                    .map(|t| render(t, &vars)),
                Some(a) => self.0.target.spec.agent_metrics_url.as_ref().map(|t| {
                    let mut v = vars.clone();
                    v.insert(
                        "agent.port".into(),
                        vars.get(&format!("agents.{a}.port"))
                            .cloned()
                            .unwrap_or_default(),
                    );
                    v.insert("agent.name".into(), a.clone());
                    render(t, &v)
                }),
            };
            let url = match url {
                None => return err("the target declares no metrics URL".into()),
                Some(Err(e)) => return err(e.to_string()),
                Some(Ok(u)) => u,
            };
            return match scrape_metrics_with_timeout(&self.0.client, &url, Some(timeout)).await {
                Ok(sc) => ActionOutput {
                    output: serde_json::to_value(&sc).unwrap_or_default(),
                    error: None,
                    timed_out: false,
                },
                Err(e) => ActionOutput {
                    timed_out: matches!(e, ClientError::Timeout { .. }),
                    output: Value::Null,
                    error: Some(e.to_string()),
                },
            };
        }
        if let Some(r) = &s.reload {
            return self.reload(r).await.unwrap_or_else(err);
        }
        if let Some(d) = s.wait {
            tokio::time::sleep(d).await;
            return ActionOutput {
                output: json!({"waited_ms": d.as_millis() as u64}),
                error: None,
                timed_out: false,
            };
        }
        err(format!("step `{name}` has no action"))
    }

    async fn reload(&self, r: &crate::scenario::ReloadStep) -> Result<ActionOutput, String> {
        let mut dep = self
            .0
            .deployment
            .lock()
            .await
            .clone()
            .ok_or("no deployment to reload")?;
        if let Some(d) = &r.deployment {
            dep = d.clone();
        }
        for (k, a) in &r.add_agents {
            dep.agents.insert(k.clone(), a.clone());
        }
        for k in &r.remove_agents {
            dep.agents.remove(k);
        }
        let rendered = {
            let mut ports = self.0.ports.lock().await;
            let mut red = self.0.redactor.lock().await;
            render_deployment(
                &self.0.target,
                &dep,
                &self.0.mock_urls,
                &self.0.run_dir,
                &mut ports,
                &mut red,
            )
            .map_err(|e| e.to_string())?
        };
        {
            let mut vars = self.0.vars.lock().await;
            vars.extend(rendered.vars.clone());
            let mut urls = self.0.agent_urls.lock().await;
            *urls = rendered.agent_urls.clone();
        }
        self.0
            .conns
            .lock()
            .await
            .retain(|k, _| dep.agents.contains_key(k));
        let mut proc = self.0.process.lock().await;
        match self.0.target.spec.reload {
            ReloadMode::Sighup => {
                let pid = proc
                    .as_ref()
                    .and_then(|p| p.pid())
                    .ok_or("the implementation is not running")?;
                let status = std::process::Command::new("kill")
                    .args(["-HUP", &pid.to_string()])
                    .status()
                    .map_err(|e| e.to_string())?;
                if !status.success() {
                    return Err(format!("kill -HUP {pid} failed: {status}"));
                }
            }
            ReloadMode::Restart => {
                if let Some(p) = proc.take() {
                    p.stop(Duration::from_secs(3)).await;
                }
                let mut p = ImplProcess::spawn(&rendered.launch)
                    .await
                    .map_err(|e| e.to_string())?;
                p.wait_ready(
                    &rendered.probes,
                    self.0
                        .target
                        .spec
                        .startup_timeout
                        .unwrap_or(Duration::from_secs(30)),
                )
                .await
                .map_err(|e| e.to_string())?;
                *proc = Some(p);
            }
        }
        let files = rendered.files.clone();
        *self.0.rendered.lock().await = Some(rendered);
        *self.0.deployment.lock().await = Some(dep);
        Ok(ActionOutput {
            output: json!({"files": files}),
            error: None,
            timed_out: false,
        })
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
