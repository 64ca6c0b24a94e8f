//! Progress notifications for one `tools/call`.
//!
//! One [`Progress`] per request. It sends nothing when the request carried no
//! `_meta.progressToken`; otherwise every notification echoes that token unchanged, takes the
//! next value of one strictly increasing counter (sends are serialized so the wire order is the
//! counter order), and a finished sub-task carries `total` equal to its `progress`. After
//! [`Progress::close`] nothing more is sent. Sending is best-effort: a failed send is logged and
//! the loop goes on.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

/// How long one notification send may block the loop.
const SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// Where notifications go (a seam so tests and defects can observe or alter sending).
pub trait ProgressSink: Send + Sync + 'static {
    /// Sends one notification.
    fn send(
        &self,
        param: ProgressNotificationParam,
    ) -> futures::future::BoxFuture<'_, Result<(), String>>;
}

impl ProgressSink for Peer<RoleServer> {
    fn send(
        &self,
        param: ProgressNotificationParam,
    ) -> futures::future::BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            if crate::defect!("progress-on-standalone-stream") {
                // A notification rmcp cannot tie to the call: it takes the session's GET stream.
                let params = serde_json::to_value(&param).map_err(|e| e.to_string())?;
                let notification =
                    rmcp::model::CustomNotification::new("notifications/progress", Some(params));
                return self
                    .send_notification(rmcp::model::ServerNotification::CustomNotification(
                        notification,
                    ))
                    .await
                    .map_err(|error| error.to_string());
            }
            self.notify_progress(param)
                .await
                .map_err(|error| error.to_string())
        })
    }
}

struct State {
    next: u64,
    closed: bool,
    /// Notifications the defect `progress-held-until-done` keeps back until [`Progress::close`].
    held: Vec<ProgressNotificationParam>,
}

/// The progress reporter of one request.
pub struct Progress {
    target: Option<(ProgressToken, Arc<dyn ProgressSink>)>,
    state: tokio::sync::Mutex<State>,
    /// `qx-progress-send-failure-aborts-call`: why the last failed send failed, until taken.
    #[cfg(feature = "defects")]
    failure: std::sync::Mutex<Option<String>>,
}

impl Progress {
    /// A reporter that sends nothing (no token).
    pub fn disabled() -> Self {
        Self {
            target: None,
            state: tokio::sync::Mutex::new(State {
                next: 0,
                closed: true,
                held: Vec::new(),
            }),
            #[cfg(feature = "defects")]
            failure: std::sync::Mutex::new(None),
        }
    }

    /// A reporter for `token`, sending through `sink`; disabled without a token.
    pub fn new(token: Option<ProgressToken>, sink: impl ProgressSink) -> Self {
        let token = token.filter(|t| {
            !(crate::defect!("cm-progress-token-zero-absent")
                && t.0 == rmcp::model::NumberOrString::Number(0))
        });
        match token {
            None => Self::disabled(),
            Some(token) => Self {
                target: Some((token, Arc::new(sink))),
                state: tokio::sync::Mutex::new(State {
                    next: u64::from(crate::defect!("progress-starts-at-one")),
                    closed: false,
                    held: Vec::new(),
                }),
                #[cfg(feature = "defects")]
                failure: std::sync::Mutex::new(None),
            },
        }
    }

    /// Whether notifications can be sent (the request carried a token): a caller may skip
    /// building the message of a notification that would not go anywhere.
    pub fn is_enabled(&self) -> bool {
        self.target.is_some()
    }

    /// A step of the running loop: `total` absent.
    pub async fn step(&self, message: String) {
        self.emit(message, false).await;
    }

    /// A finished sub-task: `total` equal to `progress`.
    pub async fn finished(&self, message: String) {
        self.emit(message, true).await;
    }

    /// Stops all further notifications (call before the result is returned).
    pub async fn close(&self) {
        if self.target.is_none() {
            // Nothing is ever held or sent without a token.
            return;
        }
        let mut state = self.state.lock().await;
        for param in std::mem::take(&mut state.held) {
            self.send(param).await;
        }
        state.closed = true;
    }

    async fn emit(&self, message: String, finished: bool) {
        let Some((token, _)) = &self.target else {
            return;
        };
        let mut state = self.state.lock().await;
        if state.closed {
            return;
        }
        let mut progress = state.next as f64;
        state.next += 1;
        // `progress-counter-stalls`: the second notification repeats the first one's value.
        if state.next == 2 && crate::defect!("progress-counter-stalls") {
            progress -= 1.0;
        }
        if crate::defect!("progress-not-monotonic") {
            progress = 1000.0 - progress;
        }
        // `fm-step-total-set`: loop steps (`… (llm)`, `… (tool)`) carry a `total`.
        let loop_step = message.ends_with(" (llm)") || message.ends_with(" (tool)");
        // `nx-tool-start-total-one`: a tool call is a one-unit task, its start `0/1`.
        let tool_start = !finished && message.ends_with(": started");
        let message = reworded(message);
        let mut param =
            ProgressNotificationParam::new(token.clone(), progress).with_message(message);
        if (finished && crate::defect!("progress-completed-total-one"))
            || (tool_start && crate::defect!("nx-tool-start-total-one"))
        {
            param = param.with_total(1.0);
        } else if (finished && !crate::defect!("progress-completed-without-total"))
            || crate::defect!("progress-total-on-steps")
            || (loop_step && crate::defect!("fm-step-total-set"))
        {
            param = param.with_total(progress);
        }
        if crate::defect!("progress-held-until-done") {
            state.held.push(param);
            return;
        }
        self.send(param).await;
    }

    /// Sends one notification, best-effort: a failed or slow send is logged and dropped.
    async fn send(&self, param: ProgressNotificationParam) {
        let Some((_, sink)) = &self.target else {
            return;
        };
        // `px-progress-sent-fire-and-forget`: the send is scheduled on its own task and never
        // awaited, so that it cannot block the loop. The task runs when the runtime gets to it;
        // here it is held 100 ms, so that the late sends land after the call's result every
        // time rather than by chance.
        if crate::defect!("px-progress-sent-fire-and-forget") {
            let sink = sink.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let _ = sink.send(param).await;
            });
            return;
        }
        match tokio::time::timeout(SEND_TIMEOUT, sink.send(param)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                #[cfg(feature = "defects")]
                self.failed(&error);
                tracing::debug!(target: "pallas::progress", %error, "progress notification not sent");
            }
            Err(_) => {
                #[cfg(feature = "defects")]
                self.failed("send timed out");
                tracing::debug!(target: "pallas::progress", "progress notification send timed out");
            }
        }
    }

    /// `qx-progress-send-failure-aborts-call`: keeps why a send failed, for the caller to raise.
    #[cfg(feature = "defects")]
    fn failed(&self, error: &str) {
        if crate::defect!("qx-progress-send-failure-aborts-call")
            && let Ok(mut failure) = self.failure.lock()
        {
            *failure = Some(error.to_owned());
        }
    }

    /// `qx-progress-send-failure-aborts-call`: why the last failed send failed, if one failed
    /// since the last call.
    #[cfg(feature = "defects")]
    pub fn take_send_failure(&self) -> Option<String> {
        self.failure.lock().ok()?.take()
    }
}

/// The progress wording of a bridge that is not a Pallas: correct MCP progress, other words than
/// seed 000's (`Calling tool search on argos`, `Agent research is thinking (turn 1)`). As a
/// Pallas it breaks seed 000's message table; as a generic bridge it breaks nothing, which is what
/// the kit's generic-wording test proves. Three variants:
/// - `progress-generic-wording`: every message reworded, each naming what it reports;
/// - `progress-generic-failed-completed`: the same, but a failed tool is announced as
///   `Tool call completed: {tool}` (the wording of a bridge that reports every finished call so);
/// - `progress-generic-nameless`: every message is `Agent working`, naming no tool.
///
/// `message` in the active variant's words (unchanged when none is active).
fn reworded(message: String) -> String {
    let generic = crate::defect!("progress-generic-wording");
    let failed_completed = crate::defect!("progress-generic-failed-completed");
    if crate::defect!("progress-generic-nameless") {
        return "Agent working".to_owned();
    }
    if !generic && !failed_completed {
        return message;
    }
    if let Some((label, state)) = message.rsplit_once(": ")
        && let Some((server, tool)) = label.split_once('/')
    {
        return match state {
            "started" => format!("Calling tool {tool} on {server}"),
            "failed" if failed_completed => format!("Tool call completed: {tool}"),
            "failed" => format!("Tool {tool} on {server} returned an error"),
            _ => format!("Tool {tool} on {server} returned"),
        };
    }
    if let Some((agent, rest)) = message.split_once(" step ")
        && let Some((n, kind)) = rest.split_once(' ')
    {
        let doing = if kind == "(tool)" {
            "is running tools"
        } else {
            "is thinking"
        };
        return format!("Agent {agent} {doing} (turn {n})");
    }
    message
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use rmcp::model::NumberOrString;

    use super::*;

    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>, bool);

    impl ProgressSink for Recorder {
        fn send(
            &self,
            param: ProgressNotificationParam,
        ) -> futures::future::BoxFuture<'_, Result<(), String>> {
            let fail = self.1;
            self.0.lock().unwrap().push(param);
            Box::pin(async move {
                if fail {
                    Err("closed".to_owned())
                } else {
                    Ok(())
                }
            })
        }
    }

    #[tokio::test]
    async fn notifications_increase_strictly_and_completions_carry_total_equal_progress() {
        let recorder = Recorder::default();
        let token = ProgressToken(NumberOrString::Number(7));
        let progress = Progress::new(Some(token.clone()), recorder.clone());
        progress.step("a step 1 (llm)".into()).await;
        progress.step("s/t: started".into()).await;
        progress.finished("s/t: completed".into()).await;
        progress.close().await;
        progress.step("after".into()).await;
        let sent = recorder.0.lock().unwrap().clone();
        assert_eq!(sent.len(), 3);
        assert!(sent.iter().all(|param| param.progress_token == token));
        assert!(sent.windows(2).all(|w| w[1].progress > w[0].progress));
        assert_eq!(sent[0].total, None);
        assert_eq!(sent[2].total, Some(sent[2].progress));
    }

    #[tokio::test]
    async fn nothing_is_sent_without_a_token_and_failed_sends_do_not_stop_later_ones() {
        let recorder = Recorder::default();
        let progress = Progress::new(None, recorder.clone());
        progress.step("x".into()).await;
        assert!(recorder.0.lock().unwrap().is_empty());
        let failing = Recorder(Arc::default(), true);
        let token = ProgressToken(NumberOrString::String("t".into()));
        let progress = Progress::new(Some(token), failing.clone());
        progress.step("one".into()).await;
        progress.step("two".into()).await;
        assert_eq!(failing.0.lock().unwrap().len(), 2);
    }
}
