//! The `send` step: the message tool, optionally cancelled after N progress notifications.

use super::*;

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
        let call =
            tokio::spawn(async move { c2.request_streaming("tools/call", params, &o, tx).await });
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
}
