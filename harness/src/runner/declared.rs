//! What an implementation said about itself on the wire, as the run saw it: the capabilities of
//! its `initialize` results, whether it issued `Mcp-Session-Id`, the tools it listed, and whether a
//! message-tool call that carried a `progressToken` got any `notifications/progress` on its
//! stream. Each scenario records its part; a run's is their sum ([`super::RunResult::declared`]).
//! The matrix sets it beside what the profile claims (`matrix::capabilities`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::observation::{Observation, Observed};

/// What the implementation declared in one scenario, or in a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    /// `initialize` results received.
    #[serde(default)]
    pub initialized: usize,
    /// Each key of those results' `capabilities`, with how many results declared it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capabilities: BTreeMap<String, usize>,
    /// `connect` steps that completed an `initialize` in the 2025-11-25 era (the one with
    /// sessions).
    #[serde(default)]
    pub connections: usize,
    /// Of those, how many got an `Mcp-Session-Id`.
    #[serde(default)]
    pub session_ids: usize,
    /// Message-tool calls that carried a `progressToken` and were answered on their stream.
    #[serde(default)]
    pub calls_with_token: usize,
    /// Of those, how many received at least one `notifications/progress` there.
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
        for m in &observed.received {
            let Some(result) = m.message.get("result") else {
                continue;
            };
            match m.request_method.as_deref() {
                Some("initialize") => {
                    d.initialized += 1;
                    if let Some(caps) = result.get("capabilities").and_then(|c| c.as_object()) {
                        for key in caps.keys() {
                            *d.capabilities.entry(key.to_owned()).or_default() += 1;
                        }
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
                Observation::MessageSent(sent) if step.progress_token.is_some() => {
                    let Some(exchange) = sent.exchange.as_ref().filter(|e| e.response.is_some())
                    else {
                        continue;
                    };
                    d.calls_with_token += 1;
                    d.calls_with_progress += usize::from(exchange.messages.iter().any(|m| {
                        m.message.get("method").and_then(|v| v.as_str())
                            == Some("notifications/progress")
                    }));
                }
                _ => {}
            }
        }
        d
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

    fn call(token: bool, progress: bool) -> StepRecord {
        let mut messages = Vec::new();
        if progress {
            messages.push(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}}));
        }
        messages.push(json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}));
        StepRecord {
            observation: Observation::MessageSent(MessageSent::new(
                Some(exchange(&messages)),
                None,
                None,
            )),
            progress_token: token.then(|| json!("t")),
            ..StepRecord::default()
        }
    }

    #[test]
    fn initialize_capabilities_sessions_tools_and_progress_for_a_token_are_counted() {
        let observed = Observed {
            received: vec![
                received(
                    "initialize",
                    json!({"capabilities": {"tools": {}, "logging": {}}}),
                ),
                received("initialize", json!({"capabilities": {"tools": {}}})),
                received(
                    "tools/list",
                    json!({"tools": [{"name": "ask"}, {"name": "b"}]}),
                ),
                received("tools/call", json!({"content": []})),
            ],
            steps: vec![
                connected(Some("s1")),
                connected(None),
                call(true, true),
                call(true, false),
                call(false, true),
            ],
            ..Observed::default()
        };
        let d = Declared::of(&observed);
        assert_eq!(d.initialized, 2);
        assert_eq!(
            d.capabilities,
            [("logging".to_owned(), 1), ("tools".to_owned(), 2)].into()
        );
        assert_eq!((d.connections, d.session_ids), (2, 1));
        assert_eq!((d.calls_with_token, d.calls_with_progress), (2, 1));
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
