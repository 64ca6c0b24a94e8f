//! The kit's self-test of its own passes (`run --self-test`): each pass is judged again over
//! perturbed copies of what the scenario observed — everything absent, every value null, every
//! value of the wrong type with the breaking values a rule forbids — and a pass that survives
//! every perturbation could not have failed on what was seen. That is a defect of its check, not
//! a verdict on the implementation: the entry becomes an `error` that names it.
//!
//! Each entry is re-judged on its own (a scenario premise that the perturbation breaks does not
//! hide the entries it gates); automatic checks that find nothing to look at, and entries whose
//! `given:` no longer holds, are not passes over the perturbed copy.

use serde_json::Value;

use crate::observation::{Observation, Observed};

/// One way of taking away, or breaking, what a pass rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perturbation {
    /// Nothing observed: each step ran and brought back nothing (no observation, a null
    /// output), no message received, empty journals and session accounting, no output from
    /// the implementation, steps that took no time.
    Absent,
    /// The shapes kept, every value null: step outputs with null leaves, journals without
    /// headers or bodies, no typed observation, no message received, no output.
    Null,
    /// Every value of another type, and the breaking values: step outputs with swapped leaf
    /// types, steps that took a billion milliseconds, every journal request doubled with a 599
    /// status and an `Authorization` carrying every bearer and secret of the run, one more
    /// request (a tool call, an inference POST) at every mock during every step, a session left
    /// open on every mock, the implementation's output holding every secret.
    WrongType,
}

impl Perturbation {
    /// Every perturbation, in the order they are tried.
    pub const ALL: [Self; 3] = [Self::Absent, Self::Null, Self::WrongType];

    /// Its name in a reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Absent => "absent",
            Self::Null => "null",
            Self::WrongType => "wrong type / breaking value",
        }
    }

    /// A perturbed copy of `o`.
    #[cfg(test)]
    pub fn apply(self, o: &Observed) -> Observed {
        self.apply_breaking(o, &[])
    }

    /// A perturbed copy of `o`; the inference requests [`Self::WrongType`] adds carry each of
    /// `texts` in their body (the texts the scenario's assertions look for in a request body:
    /// the breaking value of "no request carried it").
    pub fn apply_breaking(self, o: &Observed, texts: &[String]) -> Observed {
        let mut p = o.clone();
        p.received.clear();
        for s in &mut p.steps {
            // The whole output, received messages included, is what is perturbed: the typed
            // observation it was read from is taken away.
            let whole = s.output_query("$").0.into_owned();
            s.output = whole;
            s.observation = Observation::Nothing;
            match self {
                Self::Absent => {
                    s.output = Value::Null;
                    s.error = None;
                    s.elapsed_ms = 0.0;
                }
                Self::Null => {
                    s.output = null_leaves(std::mem::take(&mut s.output));
                    s.error = None;
                }
                Self::WrongType => {
                    s.output = wrong_types(std::mem::take(&mut s.output));
                    s.error = None;
                    s.elapsed_ms = 1e9;
                }
            }
            s.timed_out = false;
        }
        let breaking = breaking_header(o);
        for entries in p.mcp_journals.values_mut() {
            match self {
                Self::Absent => entries.clear(),
                Self::Null => {
                    for e in entries.iter_mut() {
                        e.headers.clear();
                        e.arguments = None;
                        e.status = None;
                    }
                }
                Self::WrongType => {
                    for e in entries.iter_mut() {
                        e.headers.insert("authorization".into(), breaking.clone());
                        e.arguments = e.arguments.take().map(wrong_types);
                        e.status = Some(599);
                    }
                    let doubled = entries.clone();
                    entries.extend(doubled);
                    // The breaking value of an absence: a request during every step.
                    entries.extend(o.steps.iter().map(|s| pallas_mocks::McpJournalEntry {
                        time: s.started_at.clone(),
                        method: "POST".into(),
                        headers: [("authorization".to_owned(), breaking.clone())].into(),
                        jsonrpc_method: Some("tools/call".into()),
                        tool: Some("self-test".into()),
                        arguments: None,
                        session_id: None,
                        status: Some(599),
                        opened_session: None,
                    }));
                }
            }
        }
        for entries in p.llm_journals.values_mut() {
            match self {
                Self::Absent => entries.clear(),
                Self::Null => {
                    for e in entries.iter_mut() {
                        e.headers.clear();
                        e.body = None;
                        e.status = None;
                    }
                }
                Self::WrongType => {
                    for e in entries.iter_mut() {
                        e.headers.insert("authorization".into(), breaking.clone());
                        e.body = e.body.take().map(wrong_types);
                        e.status = Some(599);
                    }
                    let doubled = entries.clone();
                    entries.extend(doubled);
                    // The breaking value of an absence: an inference request of each dialect
                    // (OpenAI's, Anthropic's) during every step.
                    let paths = ["/v1/chat/completions", "/v1/messages"];
                    entries.extend(
                        o.steps
                            .iter()
                            .flat_map(|s| paths.map(|path| (s, path)))
                            .map(|(s, path)| pallas_mocks::LlmJournalEntry {
                                time: s.started_at.clone(),
                                method: "POST".into(),
                                path: path.into(),
                                headers: [("authorization".to_owned(), breaking.clone())].into(),
                                body: (!texts.is_empty()).then(|| breaking_body(texts)),
                                model: None,
                                matched_turn: None,
                                status: Some(599),
                                abandoned: None,
                            }),
                    );
                }
            }
        }
        for st in p.sessions.values_mut() {
            match self {
                Self::Absent | Self::Null => *st = Default::default(),
                Self::WrongType => {
                    st.opened += 1;
                    st.open_now += 1;
                }
            }
        }
        p.logs = match self {
            Self::Absent | Self::Null => String::new(),
            Self::WrongType => o
                .vars
                .values()
                .chain(o.steps.iter().filter_map(|s| s.bearer.as_ref()))
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
        };
        p
    }
}

/// A request body that, written out, contains each of `texts`: a text that is itself a JSON
/// string (`"temperature"`, a key looked for) is a key of the body, any other a value.
fn breaking_body(texts: &[String]) -> Value {
    let mut body = serde_json::Map::new();
    for (i, t) in texts.iter().enumerate() {
        match serde_json::from_str::<Value>(t) {
            Ok(Value::String(key)) => body.insert(key, Value::from("self-test")),
            _ => body.insert(format!("self-test-{i}"), Value::String(t.clone())),
        };
    }
    Value::Object(body)
}

/// An `Authorization` value holding every bearer the run sent and every secret it holds.
fn breaking_header(o: &Observed) -> String {
    let mut tokens: Vec<&str> = o
        .steps
        .iter()
        .filter_map(|s| s.bearer.as_deref())
        .chain(
            o.vars
                .iter()
                .filter(|(k, _)| k.starts_with("secret."))
                .map(|(_, v)| v.as_str()),
        )
        .collect();
    tokens.sort_unstable();
    tokens.dedup();
    format!("Bearer {}", tokens.join(" Bearer "))
}

/// `v` with its structure kept and every leaf null.
fn null_leaves(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, null_leaves(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(null_leaves).collect()),
        _ => Value::Null,
    }
}

/// `v` with its structure kept and every leaf of another type: a string becomes its length, a
/// number or a boolean its text, null an empty object.
fn wrong_types(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, wrong_types(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(wrong_types).collect()),
        Value::String(s) => Value::from(s.len()),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        Value::Null => Value::Object(serde_json::Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::observation::StepRecord;
    use serde_json::json;

    #[test]
    fn the_breaking_body_holds_every_text_looked_for_as_written() {
        let texts = [
            "\"temperature\"".to_owned(),
            "stuck-finished-7f3".to_owned(),
        ];
        let written = breaking_body(&texts).to_string();
        for t in &texts {
            assert!(written.contains(t.as_str()), "{written} lacks {t}");
        }
    }

    fn observed() -> Observed {
        let mut s = StepRecord {
            name: "ask".into(),
            action: "send".into(),
            elapsed_ms: 12.0,
            output: json!({"text": "hello", "count": 2, "ok": true, "none": null}),
            bearer: Some("tok-1".into()),
            ..StepRecord::default()
        };
        s.started_at = "2026-01-01T00:00:00Z".into();
        s.ended_at = "2026-01-01T00:00:01Z".into();
        let mut o = Observed {
            steps: vec![s],
            logs: "started\n".into(),
            logs_available: true,
            ..Observed::default()
        };
        o.vars.insert("secret.key".into(), "sk-1".into());
        o.mcp_journals.insert(
            "argos".into(),
            vec![pallas_mocks::McpJournalEntry {
                time: "2026-01-01T00:00:00.5Z".into(),
                method: "POST".into(),
                headers: Default::default(),
                jsonrpc_method: Some("tools/call".into()),
                tool: Some("search".into()),
                arguments: Some(json!({"q": "x"})),
                session_id: None,
                status: Some(200),
                opened_session: None,
            }],
        );
        o
    }

    #[test]
    fn each_perturbation_takes_away_or_breaks_what_was_observed() {
        let o = observed();
        let absent = Perturbation::Absent.apply(&o);
        assert!(absent.steps[0].output.is_null() && absent.steps[0].error.is_none());
        assert!(absent.mcp_journals["argos"].is_empty() && absent.logs.is_empty());
        let null = Perturbation::Null.apply(&o);
        assert_eq!(
            null.steps[0].output,
            json!({"text": null, "count": null, "ok": null, "none": null})
        );
        let wrong = Perturbation::WrongType.apply(&o);
        assert_eq!(
            wrong.steps[0].output,
            json!({"text": 5, "count": "2", "ok": "true", "none": {}})
        );
        let journal = &wrong.mcp_journals["argos"];
        assert_eq!(
            journal.len(),
            3,
            "every request doubled, one more during the step"
        );
        let auth = &journal[0].headers["authorization"];
        assert!(auth.contains("tok-1") && auth.contains("sk-1"), "{auth}");
        assert!(wrong.logs.contains("sk-1") && wrong.logs.contains("tok-1"));
        assert!(wrong.steps[0].elapsed_ms > 1e6);
    }

    /// A deliberately vacuous evaluator survives every perturbation; a real one does not.
    #[test]
    fn a_check_that_cannot_fail_survives_every_perturbation_and_a_real_one_does_not() {
        let o = observed();
        let vacuous = |_: &Observed| Outcome::kept("ask", "anything");
        assert!(
            Perturbation::ALL
                .iter()
                .all(|p| vacuous(&p.apply(&o)).is_kept())
        );
        let real = |o: &Observed| {
            let text = o.steps[0].output.get("text");
            match text.and_then(Value::as_str) {
                Some(t) if !t.is_empty() => Outcome::kept("ask", t),
                _ => Outcome::Fail("no text".into(), vec![]),
            }
        };
        assert!(real(&o).is_kept());
        assert!(
            !Perturbation::ALL
                .iter()
                .all(|p| real(&p.apply(&o)).is_kept())
        );
    }
}
