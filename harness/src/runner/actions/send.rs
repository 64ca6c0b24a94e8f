//! The `send` step: the message tool, optionally cancelled, or its stream dropped, after N progress
//! notifications.

use super::*;
use crate::client::{ClientError, Exchange, TimedMessage};

impl Exec {
    pub(super) async fn send(&self, m: &SendStep, timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &m.agent);
        let agent = agent_of_alias(&self.0.session.lock().await.alias_agents, &m.agent).to_owned();
        let mut args = self.0.cx.target.message_arguments(&agent, &m.message);
        if !m.images.is_empty() {
            args["images"] = json!(m.images);
        }
        let tool = self.0.cx.target.message_tool(&agent);
        let mut o = opts(&m.bearer, &m.progress_token);
        if let (Some(scheme), Some(bearer)) = (&m.bearer_scheme, &m.bearer) {
            o.headers
                .push(("authorization".to_owned(), format!("{scheme} {bearer}")));
        }
        // The profile's `reply_path`: where the answer stands in the reply's text.
        let reply_path = self.0.cx.target.reply_path();
        let reply_path = reply_path.as_ref();
        let sent = |cancellation| {
            move |exchange| {
                Observation::MessageSent(MessageSent::new(Some(exchange), cancellation, reply_path))
            }
        };
        if let Some(after) = m.drop_after_progress {
            return drop_after(c, tool, args, o, after, reply_path).await;
        }
        let Some(after) = m.cancel_after_progress else {
            return from_client(c.call_tool(&tool, args, &o).await, sent(None));
        };
        // Cancel mid-call: stream, count progress, send notifications/cancelled.
        let id = c.next_id();
        let o = CallOptions {
            id: Some(id.clone()),
            ..o
        };
        let (call, mut rx) = start_streaming(&c, &tool, args, o);
        let mut seen = 0u32;
        let mut cancelled_at = None;
        while let Some(msg) = rx.recv().await {
            if msg.method() == Some("notifications/progress") {
                seen += 1;
                if seen >= after && cancelled_at.is_none() {
                    if let Some(called) = &m.cancel_once_called {
                        self.until_called(called, timeout).await;
                    }
                    // When the cancellation leaves: what came before it was sent before it.
                    let sent_at = self.0.cx.client.recorder().now_ms();
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
                    cancelled_at = Some(sent_at.max(msg.at_ms));
                }
            }
        }
        let mut out = match call.await {
            Ok(r) => from_client(r, sent(Some(cancelled_at))),
            Err(e) => err(e.to_string()),
        };
        if matches!(out.observation, Observation::Nothing) {
            out.observation =
                Observation::MessageSent(MessageSent::new(None, Some(cancelled_at), None));
        }
        if out.timed_out {
            // A cancelled request may legitimately never answer (MCP cancellation).
            out.error = None;
        }
        out
    }
}

/// Calls the message tool and closes its response stream once `after` progress notifications
/// arrived (no `notifications/cancelled`). A call that ends before that is observed whole.
async fn drop_after(
    c: McpConnection,
    tool: String,
    args: Value,
    o: CallOptions,
    after: u32,
    reply_path: Option<&serde_json_path::JsonPath>,
) -> ActionOutput {
    let (call, mut rx) = start_streaming(&c, &tool, args, o);
    let mut seen = 0u32;
    let mut dropped = None;
    while let Some(msg) = rx.recv().await {
        if msg.method() == Some("notifications/progress") {
            seen += 1;
            if seen >= after {
                dropped = Some(msg.at_ms);
                break;
            }
        }
    }
    if dropped.is_some() {
        // Ending the task drops the response body, which closes the connection under it.
        call.abort();
        let _ = call.await;
        return ActionOutput::observed(Observation::MessageSent(MessageSent {
            dropped,
            ..MessageSent::new(None, None, None)
        }));
    }
    let sent =
        |exchange| Observation::MessageSent(MessageSent::new(Some(exchange), None, reply_path));
    match call.await {
        Ok(r) => from_client(r, sent),
        Err(e) => ActionOutput::failed(e.to_string(), false),
    }
}

/// Starts a `tools/call` of `tool` whose response stream is read as it arrives: the task ends with
/// the whole exchange, the receiver yields each message of the stream meanwhile.
fn start_streaming(
    c: &McpConnection,
    tool: &str,
    args: Value,
    o: CallOptions,
) -> (
    tokio::task::JoinHandle<Result<Exchange, ClientError>>,
    tokio::sync::mpsc::UnboundedReceiver<TimedMessage>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let params = json!({"name": tool, "arguments": args});
    let c = c.clone();
    let call = tokio::spawn(async move { c.request_streaming("tools/call", params, &o, tx).await });
    (call, rx)
}

impl Exec {
    /// Returns once the scenario's mock MCP server `server` has received a call of `tool`
    /// (`server/tool`), or when the step's `timeout` less a second has passed: a cancellation
    /// that waited for it then finds the downstream call in flight.
    async fn until_called(&self, called: &str, timeout: Duration) {
        let Some((server, tool)) = called.split_once('/') else {
            return;
        };
        let Some(mocks) = self.0.cx.mocks.upgrade() else {
            return;
        };
        let Some(mock) = mocks.mcp(server) else {
            return;
        };
        let patience = timeout.saturating_sub(Duration::from_secs(1));
        let _ = tokio::time::timeout(patience, mock.called(tool)).await;
    }
}
