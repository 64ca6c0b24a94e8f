//! What an implementation showed of itself on the wire, as the run saw it: the capabilities of
//! its `initialize` and `server/discover` results, whether it issued `Mcp-Session-Id`, the tools it
//! listed, and whether a message-tool call that carried a `progressToken` got any
//! `notifications/progress` with that token, on any stream. Each scenario records its part; a run's is their sum ([`super::RunResult::declared`]).
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
    /// Of those, how many had a `notifications/progress` with their token, on any stream.
    #[serde(default)]
    pub calls_with_progress: usize,
    /// The tool names of every `tools/list` result.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tools: BTreeSet<String>,
}

impl Declared {
    /// What one scenario's observations show.
    pub fn of(observed: &Observed) -> Self {
        let mut d = Self::default();
        let mut progress_tokens: BTreeSet<String> = BTreeSet::new();
        for m in &observed.received {
            if m.message.get("method").and_then(|v| v.as_str()) == Some("notifications/progress")
                && let Some(token) = m.message.get("params").and_then(|p| p.get("progressToken"))
            {
                progress_tokens.insert(token.to_value().to_string());
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
                    if sent.exchange.as_ref().is_none_or(|e| e.response.is_none()) {
                        continue;
                    }
                    d.calls_with_token += 1;
                    d.calls_with_progress +=
                        usize::from(progress_tokens.contains(&token.to_string()));
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
        // The call with token "t" got progress on its stream, the one with "t2" on another
        // stream, the one with "t3" none; the call without a token is not counted.
        assert_eq!((d.calls_with_token, d.calls_with_progress), (3, 2));
        assert_eq!(d.tools, ["ask".to_owned(), "b".to_owned()].into());
        let mut sum = d.clone();
        sum.add(&d);
        assert_eq!(
            (sum.initialized, sum.session_ids, sum.calls_with_progress),
            (4, 2, 4)
        );
        assert_eq!(sum.capabilities.get("tools"), Some(&4));
        assert!(Declared::of(&Observed::default()).is_empty());
    }
}
