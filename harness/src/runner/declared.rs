//! What an implementation showed of itself on the wire, as the run saw it: the capabilities of
//! its `initialize` and `server/discover` results, whether it issued `Mcp-Session-Id`, the tools it
//! listed, and whether a message-tool call that carried a `progressToken` got a
//! `notifications/progress` with that token on its own stream before its response (or only
//! elsewhere). Each scenario records its part; a run's is their sum ([`super::RunResult::declared`]).
//! The matrix sets it beside what the profile claims (`matrix::capabilities`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::observation::{Observation, Observed};

/// What the implementation declared in one scenario, or in a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    /// `initialize` (2025-11-25) and `server/discover` (2026-07-28) results received.
    #[serde(default)]
    pub initialized: usize,
    /// Each key of those results' `capabilities`, with how many results declared it; the
    /// members of `experimental` and `extensions` by name (`experimental.NAME`), an empty one
    /// declaring nothing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capabilities: BTreeMap<String, usize>,
    /// `connect` steps that completed an `initialize` in the 2025-11-25 era (the one with
    /// sessions).
    #[serde(default)]
    pub connections: usize,
    /// Of those, how many got an `Mcp-Session-Id`.
    #[serde(default)]
    pub session_ids: usize,
    /// Message-tool calls that carried a `progressToken` and were answered.
    #[serde(default)]
    pub calls_with_token: usize,
    /// Of those, how many had a `notifications/progress` with their token on their own stream,
    /// before their response.
    #[serde(default)]
    pub calls_with_progress: usize,
    /// Of the others, how many had one only elsewhere: on another stream, or after the response.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_with_progress_elsewhere: usize,
    /// The tool names of every `tools/list` result.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tools: BTreeSet<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The token of a `notifications/progress`, as JSON text.
fn progress_token(message: &crate::compact::JsonDoc) -> Option<String> {
    if message.get("method").and_then(|v| v.as_str()) != Some("notifications/progress") {
        return None;
    }
    let token = message.get("params")?.get("progressToken")?;
    Some(token.to_value().to_string())
}

impl Declared {
    /// What one scenario's observations show.
    pub fn of(observed: &Observed) -> Self {
        let mut d = Self::default();
        let mut progress_tokens: BTreeSet<String> = BTreeSet::new();
        for m in &observed.received {
            if let Some(token) = progress_token(&m.message) {
                progress_tokens.insert(token);
            }
            let Some(result) = m.message.get("result") else {
                continue;
            };
            match m.request_method.as_deref() {
                Some("initialize" | "server/discover") => {
                    d.initialized += 1;
                    let caps = result.get("capabilities").and_then(|c| c.as_object());
                    for (key, value) in caps.into_iter().flat_map(|c| c.iter()) {
                        d.add_capability(key, value);
                    }
                }
                Some("tools/list") => {
                    let tools = result.get("tools").and_then(|t| t.as_array());
                    for tool in tools.into_iter().flat_map(|t| t.iter()) {
                        if let Some(name) = tool.get("name").and_then(|n| n.as_str()) {
                            d.tools.insert(name.to_owned());
                        }
                    }
                }
                _ => {}
            }
        }
        for step in &observed.steps {
            match &step.observation {
                Observation::Connected(c)
                    if c.exchange.response.is_some() && c.era == "2025-11-25" =>
                {
                    d.connections += 1;
                    d.session_ids += usize::from(c.session_id.is_some());
                }
                Observation::MessageSent(sent) => {
                    let Some(token) = &step.progress_token else {
                        continue;
                    };
                    let Some(exchange) = sent.exchange.as_ref().filter(|e| e.response.is_some())
                    else {
                        continue;
                    };
                    let token = token.to_string();
                    d.calls_with_token += 1;
                    // On the call's own stream, before its response: where both eras of MCP
                    // put a request's progress, and before "Progress notifications MUST stop
                    // after completion".
                    let before_response = exchange
                        .messages
                        .iter()
                        .take_while(|m| {
                            m.message.get("result").is_none() && m.message.get("error").is_none()
                        })
                        .any(|m| progress_token(&m.message).as_deref() == Some(&token));
                    if before_response {
                        d.calls_with_progress += 1;
                    } else if progress_tokens.contains(&token) {
                        d.calls_with_progress_elsewhere += 1;
                    }
                }
                _ => {}
            }
        }
        d
    }

    /// Counts one member of a `capabilities` object: its key, or for `experimental` and
    /// `extensions` (objects of names, which declare nothing when empty) each name inside as
    /// `experimental.NAME`.
    fn add_capability(&mut self, key: &str, value: crate::compact::JsonRef<'_>) {
        if matches!(key, "experimental" | "extensions") {
            for name in value.as_object().into_iter().flat_map(|o| o.keys()) {
                *self
                    .capabilities
                    .entry(format!("{key}.{name}"))
                    .or_default() += 1;
            }
        } else {
            *self.capabilities.entry(key.to_owned()).or_default() += 1;
        }
    }

    /// Adds another scenario's part.
    pub fn add(&mut self, other: &Self) {
        self.initialized += other.initialized;
        for (key, n) in &other.capabilities {
            *self.capabilities.entry(key.clone()).or_default() += n;
        }
        self.connections += other.connections;
        self.session_ids += other.session_ids;
        self.calls_with_token += other.calls_with_token;
        self.calls_with_progress += other.calls_with_progress;
        self.calls_with_progress_elsewhere += other.calls_with_progress_elsewhere;
        self.tools.extend(other.tools.iter().cloned());
    }

    /// Nothing was observed.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::client::{Exchange, JsonDoc, TimedMessage};
    use crate::observation::{Connected, MessageSent, ReceivedMessage, StepRecord};

    fn exchange(messages: &[Value]) -> Exchange {
        let messages: Vec<TimedMessage> = messages
            .iter()
            .map(|m| TimedMessage {
                at_ms: 0.0,
                message: JsonDoc::shared(m),
                sse_event_id: None,
            })
            .collect();
        Exchange {
            status: 200,
            headers: Vec::new(),
            content_type: Some("text/event-stream".into()),
            elapsed_ms: 1.0,
            response: messages.last().map(|m| m.message.clone()),
            messages,
            body_text: None,
            body_bytes: 1,
            timed_out: false,
            problem: None,
            stream_ended: false,
        }
    }

    fn received(method: &str, result: Value) -> ReceivedMessage {
        ReceivedMessage {
            label: "research".into(),
            version: "2025-11-25".into(),
            message: JsonDoc::shared(&json!({"jsonrpc": "2.0", "id": 1, "result": result})),
            request_method: Some(method.into()),
        }
    }

    fn connected(session_id: Option<&str>) -> StepRecord {
        StepRecord {
            observation: Observation::Connected(Connected {
                exchange: exchange(&[json!({"jsonrpc": "2.0", "id": 1, "result": {}})]),
                session_id: session_id.map(str::to_owned),
                protocol_version: "2025-11-25".into(),
                era: "2025-11-25",
                initialized: None,
            }),
            ..StepRecord::default()
        }
    }

    /// A message-tool call answered on its stream, with a progress note there if `progress`.
    /// Its messages are also what the scenario received, as in a run.
    fn call(token: Option<&str>, progress: bool) -> (StepRecord, Vec<ReceivedMessage>) {
        let mut messages = Vec::new();
        if progress {
            messages.push(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token.unwrap_or("none"), "progress": 1}}));
        }
        messages.push(json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}));
        let received = messages
            .iter()
            .map(|m| ReceivedMessage {
                label: "research".into(),
                version: "2025-11-25".into(),
                message: JsonDoc::shared(m),
                request_method: None,
            })
            .collect();
        let step = StepRecord {
            observation: Observation::MessageSent(MessageSent::new(
                Some(exchange(&messages)),
                None,
                None,
            )),
            progress_token: token.map(|t| json!(t)),
            ..StepRecord::default()
        };
        (step, received)
    }

    /// A progress note for `token` on another stream (the session's GET stream).
    fn progress_elsewhere(token: &str) -> ReceivedMessage {
        ReceivedMessage {
            label: "research".into(),
            version: "2025-11-25".into(),
            message: JsonDoc::shared(
                &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}),
            ),
            request_method: None,
        }
    }

    #[test]
    fn initialize_capabilities_sessions_tools_and_progress_for_a_token_are_counted() {
        let calls = [
            call(Some("t"), true),
            call(Some("t2"), false),
            call(Some("t3"), false),
            call(None, true),
        ];
        let mut received_messages = vec![
            received(
                "initialize",
                json!({"capabilities": {"tools": {}, "logging": {}, "experimental": {}}}),
            ),
            received(
                "server/discover",
                json!({"capabilities": {"tools": {}, "extensions": {"io.x/y": {}}}}),
            ),
            received(
                "tools/list",
                json!({"tools": [{"name": "ask"}, {"name": "b"}]}),
            ),
            progress_elsewhere("t2"),
        ];
        let mut steps = vec![connected(Some("s1")), connected(None)];
        for (step, messages) in calls {
            steps.push(step);
            received_messages.extend(messages);
        }
        // A call whose progress comes only after its answer, on its own stream.
        let late = [
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t5", "progress": 1}}),
        ];
        steps.push(StepRecord {
            observation: Observation::MessageSent(MessageSent::new(
                Some(exchange(&late)),
                None,
                None,
            )),
            progress_token: Some(json!("t5")),
            ..StepRecord::default()
        });
        received_messages.push(ReceivedMessage {
            label: "research".into(),
            version: "2025-11-25".into(),
            message: JsonDoc::shared(&late[1]),
            request_method: None,
        });
        let observed = Observed {
            received: received_messages,
            steps,
            ..Observed::default()
        };
        let d = Declared::of(&observed);
        assert_eq!(d.initialized, 2);
        // An empty `experimental` declares nothing; an extension counts by its name.
        assert_eq!(
            d.capabilities,
            [
                ("extensions.io.x/y".to_owned(), 1),
                ("logging".to_owned(), 1),
                ("tools".to_owned(), 2)
            ]
            .into()
        );
        assert_eq!((d.connections, d.session_ids), (2, 1));
        // The call with token "t" got progress on its stream, the one with "t2" only on another
        // stream, "t5" only after its answer, "t3" none; the call without a token is not
        // counted.
        assert_eq!(
            (
                d.calls_with_token,
                d.calls_with_progress,
                d.calls_with_progress_elsewhere
            ),
            (4, 1, 2)
        );
        assert_eq!(d.tools, ["ask".to_owned(), "b".to_owned()].into());
        let mut sum = d.clone();
        sum.add(&d);
        assert_eq!(
            (sum.initialized, sum.session_ids, sum.calls_with_progress),
            (4, 2, 2)
        );
        assert_eq!(sum.capabilities.get("tools"), Some(&4));
        assert!(Declared::of(&Observed::default()).is_empty());
    }
}
