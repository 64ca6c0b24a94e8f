//! Turn selection: the scripted turns, their guards and faults, and the in-band directives used
//! when no turn matches.

use regex::Regex;
use serde_json::Value;

use super::conversation::Conversation;
use crate::spec::{Exhausted, FaultSpec, LlmMockSpec, MatchSpec, TurnSpec, UsageSpec};

/// A tool call to render.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    /// `Value::Null` renders as empty arguments.
    pub(crate) arguments: Value,
}

/// A model answer, provider-neutral.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Reply {
    pub(crate) text: Option<String>,
    pub(crate) tool_calls: Vec<Call>,
    pub(crate) usage: Option<UsageSpec>,
}

/// What a completion request gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// An answer, possibly preceded or shaped by a turn fault.
    Answer {
        turn: Option<usize>,
        fault: Option<FaultSpec>,
        reply: Reply,
    },
    /// A turn fault with nothing to answer after it.
    FaultOnly { turn: usize, fault: FaultSpec },
    /// No turn matched and the mock is configured to fail.
    Exhausted,
}

/// A script compiled once at start (regexes included).
#[derive(Debug)]
pub(crate) struct Script {
    turns: Vec<TurnSpec>,
    regexes: Vec<Option<Regex>>,
    on_exhausted: Exhausted,
}

/// Mutable script progress: which turns were used, fault counters, request index.
#[derive(Debug, Default)]
pub(crate) struct ScriptState {
    used: Vec<bool>,
    turn_fault_hits: Vec<u32>,
    pub(crate) mock_fault_hits: u32,
    completions: u32,
}

impl Script {
    pub(crate) fn compile(spec: &LlmMockSpec) -> Result<Self, String> {
        let regexes = spec
            .script
            .iter()
            .enumerate()
            .map(|(i, t)| {
                t.when
                    .as_ref()
                    .and_then(|w| w.last_user_regex.as_ref())
                    .map(|r| Regex::new(r).map_err(|e| format!("script[{i}]: bad regex: {e}")))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            turns: spec.script.clone(),
            regexes,
            on_exhausted: spec.on_exhausted,
        })
    }

    pub(crate) fn fresh_state(&self) -> ScriptState {
        ScriptState {
            used: vec![false; self.turns.len()],
            turn_fault_hits: vec![0; self.turns.len()],
            mock_fault_hits: 0,
            completions: 0,
        }
    }

    fn matches(&self, i: usize, when: &MatchSpec, conv: &Conversation, index: u32) -> bool {
        let last = conv.last_user.as_deref().unwrap_or("");
        when.last_user_contains
            .as_ref()
            .is_none_or(|s| last.contains(s.as_str()))
            && self.regexes[i].as_ref().is_none_or(|r| r.is_match(last))
            && when.model.as_ref().is_none_or(|m| *m == conv.model)
            && when
                .tool_offered
                .as_ref()
                .is_none_or(|t| conv.tools_offered.iter().any(|o| o == t))
            && when
                .has_tool_result
                .is_none_or(|h| h != conv.tool_results.is_empty())
            && when.turn_index.is_none_or(|n| n == index)
            && when.last_user_is.as_ref().is_none_or(|s| *s == last)
            && when.user_messages.is_none_or(|n| n == conv.user_messages)
            && when.round.is_none_or(|n| n == conv.round)
            && when
                .tool_results
                .as_ref()
                .is_none_or(|r| *r == conv.tool_results)
    }

    /// Picks the answer for `conv`, advancing `state`. Never awaits: callers hold a lock.
    pub(crate) fn select(&self, state: &mut ScriptState, conv: &Conversation) -> Outcome {
        let index = state.completions;
        state.completions = state.completions.saturating_add(1);
        for (i, turn) in self.turns.iter().enumerate() {
            if state.used[i] && !turn.repeat {
                continue;
            }
            if let Some(when) = &turn.when
                && !self.matches(i, when, conv, index)
            {
                continue;
            }
            let has_answer = turn.text.is_some() || !turn.tool_calls.is_empty();
            if let Some(fault) = &turn.fault {
                let live = fault.times.is_none_or(|n| state.turn_fault_hits[i] < n);
                if live {
                    state.turn_fault_hits[i] = state.turn_fault_hits[i].saturating_add(1);
                    // "fail N times then succeed": a counted fault keeps the turn for later.
                    if fault.times.is_none() {
                        state.used[i] = true;
                    }
                    if fault.status.is_some() || fault.hang || fault.malformed || !has_answer {
                        return Outcome::FaultOnly {
                            turn: i,
                            fault: fault.clone(),
                        };
                    }
                    return Outcome::Answer {
                        turn: Some(i),
                        fault: Some(fault.clone()),
                        reply: render_turn(turn, conv),
                    };
                }
                if !has_answer {
                    // Spent fault-only turn: skip it from now on.
                    state.used[i] = true;
                    continue;
                }
            }
            state.used[i] = true;
            return Outcome::Answer {
                turn: Some(i),
                fault: None,
                reply: render_turn(turn, conv),
            };
        }
        match self.on_exhausted {
            Exhausted::Error => Outcome::Exhausted,
            Exhausted::Echo => Outcome::Answer {
                turn: None,
                fault: None,
                reply: directive_reply(conv),
            },
        }
    }
}

fn render_turn(turn: &TurnSpec, conv: &Conversation) -> Reply {
    Reply {
        text: turn.text.as_ref().map(|t| {
            t.replace("{{tool_results}}", &conv.tool_results.join("\n"))
                .replace("{{last_user}}", conv.last_user.as_deref().unwrap_or(""))
        }),
        tool_calls: turn
            .tool_calls
            .iter()
            .map(|c| Call {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect(),
        usage: turn.usage,
    }
}

/// The in-band behaviour: tool results present → final text containing them; `CALL_TOOL` lines
/// in the last user message → those tool calls; otherwise echo the last user message.
pub(crate) fn directive_reply(conv: &Conversation) -> Reply {
    if !conv.tool_results.is_empty() {
        return Reply {
            text: Some(format!("Tool results:\n{}", conv.tool_results.join("\n"))),
            ..Reply::default()
        };
    }
    let last = conv.last_user.as_deref().unwrap_or("");
    let mut calls = Vec::new();
    for line in last.lines() {
        let Some(rest) = line.trim_start().strip_prefix("CALL_TOOL") else {
            continue;
        };
        let rest = rest.trim();
        let (name, json) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if name.is_empty() {
            return text_reply(format!(
                "invalid CALL_TOOL directive: missing tool name in `{line}`"
            ));
        }
        let json = json.trim();
        let arguments = if json.is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str::<Value>(json) {
                Ok(v @ Value::Object(_)) => v,
                Ok(_) => {
                    return text_reply(format!(
                        "invalid CALL_TOOL directive: arguments of `{name}` must be a JSON object"
                    ));
                }
                Err(e) => {
                    return text_reply(format!(
                        "invalid CALL_TOOL directive: arguments of `{name}` are not JSON: {e}"
                    ));
                }
            }
        };
        calls.push(Call {
            id: None,
            name: name.to_owned(),
            arguments,
        });
    }
    if calls.is_empty() {
        text_reply(last.to_owned())
    } else {
        Reply {
            tool_calls: calls,
            ..Reply::default()
        }
    }
}

fn text_reply(text: String) -> Reply {
    Reply {
        text: Some(text),
        ..Reply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Dialect, ToolCallSpec};
    use serde_json::json;

    fn conv(last_user: &str, results: &[&str]) -> Conversation {
        Conversation {
            model: "mock-model".into(),
            last_user: Some(last_user.into()),
            tool_results: results.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn spec(script: Vec<TurnSpec>) -> LlmMockSpec {
        LlmMockSpec {
            dialect: Dialect::Openai,
            port: None,
            api_key: None,
            models: vec!["mock-model".into()],
            script,
            on_exhausted: Exhausted::Echo,
            fault: None,
            usage: None,
            tls: false,
        }
    }

    fn text_turn(text: &str) -> TurnSpec {
        TurnSpec {
            when: None,
            text: Some(text.into()),
            tool_calls: vec![],
            fault: None,
            usage: None,
            repeat: false,
        }
    }

    #[test]
    fn call_tool_directive_makes_one_call_per_line() {
        let r = directive_reply(&conv("CALL_TOOL a__b {\"q\":1}\nCALL_TOOL c__d", &[]));
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].name, "a__b");
        assert_eq!(r.tool_calls[0].arguments, json!({"q":1}));
        assert_eq!(r.tool_calls[1].arguments, json!({}));
    }

    #[test]
    fn tool_results_turn_into_final_text_containing_them() {
        let r = directive_reply(&conv("CALL_TOOL a__b {}", &["42 apples"]));
        assert!(r.tool_calls.is_empty());
        assert!(r.text.unwrap().contains("42 apples"));
    }

    #[test]
    fn bad_directive_json_answers_an_explanation_instead_of_failing() {
        let r = directive_reply(&conv("CALL_TOOL a__b {nope", &[]));
        assert!(r.text.unwrap().contains("not JSON"));
    }

    #[test]
    fn turns_are_used_in_order_and_then_the_default_applies() {
        let s = Script::compile(&spec(vec![text_turn("one"), text_turn("two")])).unwrap();
        let mut st = s.fresh_state();
        let texts: Vec<_> = (0..3)
            .map(|_| match s.select(&mut st, &conv("hi", &[])) {
                Outcome::Answer { reply, .. } => reply.text.unwrap(),
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(texts, vec!["one", "two", "hi"]);
    }

    #[test]
    fn guarded_turn_waits_for_a_matching_request() {
        let mut guarded = text_turn("found {{tool_results}}");
        guarded.when = Some(MatchSpec {
            has_tool_result: Some(true),
            ..Default::default()
        });
        let mut first = text_turn("calling");
        first.tool_calls = vec![ToolCallSpec {
            name: "x__y".into(),
            arguments: json!({}),
            id: None,
        }];
        first.text = None;
        let s = Script::compile(&spec(vec![guarded, first])).unwrap();
        let mut st = s.fresh_state();
        match s.select(&mut st, &conv("go", &[])) {
            Outcome::Answer { turn, reply, .. } => {
                assert_eq!(turn, Some(1));
                assert_eq!(reply.tool_calls[0].name, "x__y");
            }
            o => panic!("{o:?}"),
        }
        match s.select(&mut st, &conv("go", &["R"])) {
            Outcome::Answer { turn, reply, .. } => {
                assert_eq!(turn, Some(0));
                assert_eq!(reply.text.as_deref(), Some("found R"));
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn fault_with_times_fails_n_times_then_the_turn_answers() {
        let mut t = text_turn("finally");
        t.fault = Some(FaultSpec {
            status: Some(500),
            times: Some(2),
            ..Default::default()
        });
        let s = Script::compile(&spec(vec![t])).unwrap();
        let mut st = s.fresh_state();
        let c = conv("x", &[]);
        assert!(matches!(s.select(&mut st, &c), Outcome::FaultOnly { .. }));
        assert!(matches!(s.select(&mut st, &c), Outcome::FaultOnly { .. }));
        match s.select(&mut st, &c) {
            Outcome::Answer { reply, fault, .. } => {
                assert_eq!(reply.text.as_deref(), Some("finally"));
                assert!(fault.is_none());
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn regex_and_turn_index_guards_apply() {
        let mut t = text_turn("regex");
        t.when = Some(MatchSpec {
            last_user_regex: Some("^ab+c$".into()),
            turn_index: Some(1),
            ..Default::default()
        });
        let mut sp = spec(vec![t]);
        sp.on_exhausted = Exhausted::Error;
        let s = Script::compile(&sp).unwrap();
        let mut st = s.fresh_state();
        assert_eq!(s.select(&mut st, &conv("abbc", &[])), Outcome::Exhausted);
        assert!(matches!(
            s.select(&mut st, &conv("abbc", &[])),
            Outcome::Answer { turn: Some(0), .. }
        ));
    }

    #[test]
    fn recorded_keys_tell_apart_calls_with_the_same_user_message() {
        let keyed = |results: &[&str], round: u32, text: &str| {
            let mut t = text_turn(text);
            t.repeat = true;
            t.when = Some(MatchSpec {
                last_user_is: Some("go".into()),
                user_messages: Some(1),
                round: Some(round),
                tool_results: Some(results.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            });
            t
        };
        let mut sp = spec(vec![
            keyed(&[], 0, "first"),
            keyed(&["A"], 1, "after A"),
            keyed(&["B"], 1, "after B"),
        ]);
        sp.on_exhausted = Exhausted::Error;
        let s = Script::compile(&sp).unwrap();
        let mut st = s.fresh_state();
        let mut c = conv("go", &["B"]);
        c.user_messages = 1;
        c.round = 1;
        let text = |o: Outcome| match o {
            Outcome::Answer { reply, .. } => reply.text,
            o => panic!("{o:?}"),
        };
        assert_eq!(text(s.select(&mut st, &c)).as_deref(), Some("after B"));
        c.tool_results = vec!["A".into()];
        assert_eq!(text(s.select(&mut st, &c)).as_deref(), Some("after A"));
        c.round = 2;
        assert_eq!(s.select(&mut st, &c), Outcome::Exhausted);
        let mut first = conv("go", &[]);
        first.user_messages = 1;
        assert_eq!(text(s.select(&mut st, &first)).as_deref(), Some("first"));
        first.last_user = Some("go on".into());
        assert_eq!(s.select(&mut st, &first), Outcome::Exhausted);
    }

    #[test]
    fn bad_regex_fails_compilation() {
        let mut t = text_turn("x");
        t.when = Some(MatchSpec {
            last_user_regex: Some("(".into()),
            ..Default::default()
        });
        assert!(Script::compile(&spec(vec![t])).is_err());
    }
}
