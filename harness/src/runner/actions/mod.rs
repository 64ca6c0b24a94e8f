//! What each step action does on the wire, one file per family: [`mcp`] (connect, list_tools,
//! call, history, request, raw, delete), [`send`], [`health`], [`http`] (http, registry,
//! metrics) and [`deployment`] (reload, process, file). Each returns an [`ActionOutput`] the step
//! runner records; [`Exec::action`] dispatches with an exhaustive match.

mod deployment;
mod health;
mod http;
mod mcp;
mod send;

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use super::exec::*;
use crate::client::{
    CallOptions, McpConnection, chat_gate, metrics::scrape_metrics_with_timeout, parse_health,
    registry::fetch_registry_with_timeout,
};
use crate::deploy::Deployment;
use crate::observation::FileRead;
use crate::observation::{Connected, HealthAnswered, MessageSent, Observation};
use crate::scenario::template::render;
use crate::scenario::{
    AgentRef, CallStep, ConnectStep, EraSpec, FileStep, HttpStep, ListenStep, MetricsStep,
    ProcessStep, RawStep, RegistryStep, RequestStep, SendStep, StepAction, StepSpec, ToolCallStep,
};

/// The connection of `agent`, or the step's failure.
macro_rules! conn {
    ($exec:expr, $agent:expr) => {
        match $exec.connection($agent).await {
            Ok(c) => c,
            Err(e) => return ActionOutput::failed(e.to_string(), false),
        }
    };
}
use conn;

/// Call options of a step: its bearer, progress token and timeout.
fn call_options(bearer: &Option<String>, token: &Option<Value>, timeout: Duration) -> CallOptions {
    CallOptions {
        bearer: bearer.clone(),
        progress_token: token.clone(),
        timeout: Some(timeout),
        ..CallOptions::default()
    }
}

impl Exec {
    pub(super) async fn action(&self, s: &StepSpec, name: &str, timeout: Duration) -> ActionOutput {
        let Some(action) = s.action() else {
            return ActionOutput::failed(format!("step `{name}` has no action"), false);
        };
        match action {
            StepAction::Http(h) => self.http(h, timeout).await,
            StepAction::Registry(r) => self.registry(r, timeout).await,
            StepAction::Metrics(m) => self.metrics(m, timeout).await,
            StepAction::Connect(c) => self.connect(c, timeout).await,
            StepAction::ListTools(a) => self.list_tools(a, timeout).await,
            StepAction::Call(t) => self.call(t, timeout).await,
            StepAction::History(a) => self.history(a, timeout).await,
            StepAction::Request(r) => self.request(r, timeout).await,
            StepAction::Raw(r) => self.raw(r, timeout).await,
            StepAction::Delete(a) => self.delete(a, timeout).await,
            StepAction::Listen(l) => self.listen(l).await,
            StepAction::Health(h) => self.health(h, timeout).await,
            StepAction::Send(m) => self.send(m, timeout).await,
            StepAction::Reload(r) => self
                .reload(r)
                .await
                .unwrap_or_else(|e| ActionOutput::failed(e.to_string(), false)),
            StepAction::Process(p) => self.process(p, timeout).await,
            StepAction::File(f) => self.file(f, timeout).await,
            StepAction::Wait(d) => {
                tokio::time::sleep(d).await;
                ActionOutput::observed(Observation::Waited(d))
            }
            StepAction::Repeat(_) | StepAction::Parallel(_) => ActionOutput::failed(
                format!(
                    "step `{name}`: `{}` groups steps and is run by the step runner",
                    action.key()
                ),
                false,
            ),
        }
    }
}
