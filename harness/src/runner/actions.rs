//! What each step action does on the wire (registry, connect, send, call, health, raw, metrics,
//! reload, process…), as an [`ActionOutput`] the step runner records.

use crate::client::{
    CallOptions, McpConnection, chat_gate, metrics::scrape_metrics_with_timeout, parse_health,
    registry::fetch_registry_with_timeout,
};
use crate::observation::{Connected, HealthAnswered, MessageSent, Observation};
use crate::process::{FileRead, ImplProcess};
use crate::scenario::template::render;
use crate::scenario::{EraSpec, StepAction, StepSpec};
use crate::target::{ReloadMode, render_deployment};
use bytes::Bytes;
use serde_json::{Value, json};
use std::time::Duration;

use super::exec::*;

impl Exec {
    pub(super) async fn action(&self, s: &StepSpec, name: &str, timeout: Duration) -> ActionOutput {
        let opts = |bearer: &Option<String>, token: &Option<Value>| CallOptions {
            bearer: bearer.clone(),
            progress_token: token.clone(),
            timeout: Some(timeout),
            ..CallOptions::default()
        };
        let err = |e: String| ActionOutput::failed(e, false);
        macro_rules! conn {
            ($agent:expr) => {
                match self.connection($agent).await {
                    Ok(c) => c,
                    Err(e) => return err(e),
                }
            };
        }
        let Some(action) = s.action() else {
            return err(format!("step `{name}` has no action"));
        };
        match action {
            StepAction::Http(h) => {
                let agent_url = match &h.agent {
                    Some(a) => self.0.agent_urls.lock().await.get(a).cloned(),
                    None => None,
                };
                let url = match crate::client::http::target_url(h, agent_url.as_deref()) {
                    Ok(u) => u,
                    Err(e) => return err(e),
                };
                return match crate::client::http::send(h, &url, timeout).await {
                    Ok(answer) => ActionOutput::observed(Observation::HttpAnswered(answer)),
                    Err((e, timed_out)) => ActionOutput::failed(e, timed_out),
                };
            }
            StepAction::Registry(_) => {
                let Some(url) = &self.0.registry_url else {
                    return err("the target has no registry".into());
                };
                return from_fetch(
                    fetch_registry_with_timeout(&self.0.client, url, Some(timeout)).await,
                    Observation::RegistryFetched,
                );
            }
            StepAction::Connect(c) => {
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
                    Ok((conn, exchange)) => {
                        let connected = Connected {
                            exchange,
                            session_id: conn.session_id().map(str::to_owned),
                            protocol_version: conn.protocol_version().to_owned(),
                            era: era.as_str(),
                        };
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
                        ActionOutput::observed(Observation::Connected(connected))
                    }
                    Err(e) => err(e.to_string()),
                };
            }
            StepAction::ListTools(a) => {
                let c = conn!(&a.agent);
                return from_client(
                    c.list_tools(&opts(&a.bearer, &None)).await,
                    Observation::Exchanged,
                );
            }
            StepAction::Health(h) => {
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
                let answered = |exchange| {
                    Observation::HealthAnswered(HealthAnswered {
                        exchange,
                        health: health.clone(),
                        gate: gate.clone(),
                    })
                };
                let mut out = from_client(r, |x| answered(Some(x)));
                if matches!(out.observation, Observation::Nothing) {
                    // No answer: Daedalus still reads it (as blocked), so the reading is kept.
                    out.observation = answered(None);
                }
                out
            }
            StepAction::Send(m) => {
                let c = conn!(&m.agent);
                let mut args = json!({"message": m.message});
                if !m.images.is_empty() {
                    args["images"] = json!(m.images);
                }
                let agent = agent_of_alias(&*self.0.alias_agents.lock().await, &m.agent).to_owned();
                let tool = self.0.target.message_tool(&agent);
                let o = opts(&m.bearer, &m.progress_token);
                let sent = |cancellation| {
                    move |exchange| {
                        Observation::MessageSent(MessageSent {
                            exchange: Some(exchange),
                            cancellation,
                        })
                    }
                };
                let Some(after) = m.cancel_after_progress else {
                    return from_client(c.call_tool(&tool, args, &o).await, sent(None));
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
                let call = tokio::spawn(async move {
                    c2.request_streaming("tools/call", params, &o, tx).await
                });
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
                    Ok(r) => from_client(r, sent(Some(cancelled_at))),
                    Err(e) => err(e.to_string()),
                };
                if matches!(out.observation, Observation::Nothing) {
                    out.observation = Observation::MessageSent(MessageSent {
                        exchange: None,
                        cancellation: Some(cancelled_at),
                    });
                }
                if out.timed_out {
                    // A cancelled request may legitimately never answer (MCP cancellation).
                    out.error = None;
                }
                out
            }
            StepAction::Call(t) => {
                let c = conn!(&t.agent);
                return from_client(
                    c.call_tool(
                        &t.tool,
                        t.arguments.clone().unwrap_or(json!({})),
                        &opts(&t.bearer, &t.progress_token),
                    )
                    .await,
                    Observation::Exchanged,
                );
            }
            StepAction::History(a) => {
                let c = conn!(&a.agent);
                return from_client(
                    c.get_prompt(
                        &format!("{}_history", a.agent),
                        Value::Null,
                        &opts(&a.bearer, &None),
                    )
                    .await,
                    Observation::Exchanged,
                );
            }
            StepAction::Request(r) => {
                let c = conn!(&r.agent);
                let params = r.params.clone().unwrap_or(json!({}));
                let o = opts(&r.bearer, &None);
                let x = if r.notification {
                    c.notify(&r.method, params, &o).await
                } else {
                    c.request(&r.method, params, &o).await
                };
                from_client(x, Observation::Exchanged)
            }
            StepAction::Raw(r) => {
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
                    Observation::Exchanged,
                );
            }
            StepAction::Delete(a) => {
                let c = conn!(&a.agent);
                return from_client(
                    c.delete(&opts(&a.bearer, &None)).await,
                    Observation::Exchanged,
                );
            }
            StepAction::Metrics(m) => {
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
                return from_fetch(
                    scrape_metrics_with_timeout(&self.0.client, &url, Some(timeout)).await,
                    Observation::MetricsScraped,
                );
            }
            StepAction::Reload(r) => {
                return self.reload(r).await.unwrap_or_else(err);
            }
            StepAction::Process(p) => {
                let mut guard = self.0.process.lock().await;
                let Some(proc) = guard.as_mut() else {
                    return err("no implementation process was launched".into());
                };
                if let Some(within) = p.wait_exit {
                    proc.wait_exit(within).await;
                }
                let mut out = proc.output_so_far();
                out.log_format = self.0.target.spec.logs.clone();
                ActionOutput::observed(Observation::ProcessRead(out))
            }
            StepAction::File(f) => {
                let vars = self.0.vars.lock().await.clone();
                let rel = match render(&f.path, &vars) {
                    Ok(r) => r,
                    Err(e) => return err(e.to_string()),
                };
                ActionOutput::observed(Observation::FileRead(
                    FileRead::read(&self.0.run_dir.join(rel))
                        .with_format(self.0.target.spec.logs.clone()),
                ))
            }
            StepAction::Wait(d) => {
                tokio::time::sleep(d).await;
                ActionOutput::observed(Observation::Waited(d))
            }
            StepAction::Repeat(_) | StepAction::Parallel(_) => err(format!(
                "step `{name}`: `{}` groups steps and is run by the step runner",
                action.key()
            )),
        }
    }

    pub(super) async fn reload(
        &self,
        r: &crate::scenario::ReloadStep,
    ) -> Result<ActionOutput, String> {
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
        Ok(ActionOutput::observed(Observation::Reloaded(files)))
    }
}
