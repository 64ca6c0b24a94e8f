//! Progress checks PROG-001 to PROG-007: each judges one walk over the progress notifications
//! of each `send` or `call` (listed in `progress.rs`'s `CHECKS`).

use regex::Regex;
use serde_json::Value;

use super::common::*;
use super::read::excerpt;
use super::verdict::{Evidence, Outcome, Witness};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec};

/// PROG-003's reason when progress falls back at a sub-task's own note — to 0 at a tool's
/// `started`, or to a finished sub-task's `1/1`: seed versus MCP. One text for both, so the
/// reports group every such fall as one finding.
pub(super) const SEED_PRESCRIBED_RESET: &str = "progress fell back at a sub-task's own note (to 0 at a `…: started`, or to `progress: 1, total: 1` at a `…: completed`): the sequence seed 000's example shows for a Pallas (0 at each tool's start, 1/1 at its end), but MCP binds every bridge: `progress` MUST increase with each notification";

/// What a walk over the calls concludes when no call of the right kind was in scope.
fn no_call_judged() -> Outcome {
    Outcome::Inconclusive("no step of the right kind (with or without a progress token)".into())
}

/// PROG-001: a call that carried no progress token gets no progress notification.
pub(super) fn prog_no_token(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Send, ActionKind::Call]);
    if steps.is_empty() {
        return na("send or call");
    }
    let mut kept = Vec::new();
    for s in steps.into_iter().filter(|s| s.progress_token.is_none()) {
        let p = progress_of(s);
        if !p.is_empty() {
            return fail(
                format!(
                    "`{}` sent no token but got {} progress notification(s)",
                    s.name,
                    p.len()
                ),
                vec![Evidence::new(&s.name, "no progress", excerpt(p[0], 200))],
            );
        }
        // Only a stream that was read can show that no notification came.
        if let Some(x) = s.observation.exchange() {
            kept.push(Witness::new(
                &s.name,
                format!(
                    "no progress token sent; {} message(s) received, no progress notification",
                    x.messages.len()
                ),
            ));
        }
    }
    // A bridge that sent no progress in the whole scenario tells nothing of how it treats a
    // call without a token.
    let any_progress = o.steps.iter().any(|s| !progress_of(s).is_empty());
    if kept.is_empty() {
        no_call_judged()
    } else if !any_progress {
        Outcome::Inconclusive(
            "no progress notification arrived in this scenario, with a token or without: a call without one cannot be told apart".into(),
        )
    } else {
        Outcome::Kept(kept)
    }
}

/// Each `send` or `call` in scope that carried a progress token and got notifications, judged by
/// `judge` with its token and its progress notifications (the first failure decides). A call
/// that got none has nothing to judge: when no call in scope got any, the verdict is
/// inconclusive, never a pass.
fn per_token_call(
    c: &CheckSpec,
    o: &Observed,
    min_notes: usize,
    mut judge: impl FnMut(&StepRecord, &Value, &[JsonRef<'_>]) -> Option<Outcome>,
) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Send, ActionKind::Call]);
    if steps.is_empty() {
        return na("send or call");
    }
    let (mut with_token, mut kept) = (Vec::new(), Vec::new());
    for s in steps {
        let Some(token) = &s.progress_token else {
            continue;
        };
        with_token.push(s.name.as_str());
        let notes = progress_of(s);
        // Fewer notifications than the clause needs for one call (two to see an increase)
        // judge nothing for that call.
        if notes.len() < min_notes.max(1) {
            continue;
        }
        match judge(s, token, &notes) {
            // The clause's own account of what it saw in this call.
            Some(Outcome::Kept(own)) => {
                kept.extend(own);
                continue;
            }
            Some(stop) => return stop,
            None => {}
        }
        kept.push(Witness::new(
            format!("`{}` (token {token})", s.name),
            format!(
                "{} progress notification(s), the first {}{}",
                notes.len(),
                excerpt(notes[0].get("params").unwrap_or_else(JsonRef::null), 120),
                notes
                    .last()
                    .filter(|_| notes.len() > 1)
                    .map_or_else(String::new, |l| format!(
                        ", the last {}",
                        excerpt(l.get("params").unwrap_or_else(JsonRef::null), 120)
                    ))
            ),
        ));
    }
    match (!kept.is_empty(), with_token.is_empty()) {
        (true, _) => Outcome::Kept(kept),
        (false, true) => no_call_judged(),
        (false, false) => Outcome::Inconclusive(format!(
            "no call with a progress token ({}) got {} to judge",
            with_token.join(", "),
            if min_notes > 1 {
                format!("{min_notes} progress notifications")
            } else {
                "a progress notification".to_owned()
            }
        )),
    }
}

/// A progress notification's fields.
struct Note<'a> {
    params: JsonRef<'a>,
    progress: Option<f64>,
    total: Option<f64>,
    message: &'a str,
}

impl<'a> Note<'a> {
    fn of(n: &JsonRef<'a>) -> Self {
        let params = n.get("params").unwrap_or_else(JsonRef::null);
        Self {
            params,
            progress: params.get("progress").and_then(JsonRef::as_f64),
            total: params.get("total").and_then(JsonRef::as_f64),
            message: params
                .get("message")
                .and_then(JsonRef::as_str)
                .unwrap_or(""),
        }
    }

    /// Evidence naming notification `i` of step `s`.
    fn evidence(&self, s: &StepRecord, i: usize) -> Evidence {
        Evidence {
            what: format!("{} progress #{i}", s.name),
            expected: None,
            seen: Some(excerpt(self.params, 240)),
            path: Some(format!("/progress/{i}")),
        }
    }
}

/// `{agent} step N (llm|tool)` or `{server}/{tool}: started|completed|failed`.
fn message_format() -> Option<Regex> {
    Regex::new(r"^(?:(?P<tool>[^\s/]+/\S+): (?P<state>started|completed|failed)|(?P<agent>[^\s/:]+) step (?P<n>\d+) \((?:llm|tool)\))$").ok()
}

/// `{server}/{tool}:` and the rest of the message.
fn tool_prefix() -> Option<Regex> {
    Regex::new(r"^(?P<tool>[^\s/:]+/[^\s:]+):(?P<rest>.*)$").ok()
}

/// PROG-002: every notification echoes the request's token exactly.
pub(super) fn prog_token_echoed(c: &CheckSpec, o: &Observed) -> Outcome {
    per_token_call(c, o, 1, |s, token, p| {
        p.iter().enumerate().find_map(|(i, n)| {
            let n = Note::of(n);
            (n.params.get("progressToken").is_none_or(|t| t != *token)).then(|| {
                fail(
                    "the progress token was not echoed exactly",
                    vec![Evidence {
                        expected: Some(token.to_string()),
                        seen: n.params.get("progressToken").map(|t| t.to_string()),
                        ..n.evidence(s, i)
                    }],
                )
            })
        })
    })
}

/// PROG-003: `progress` strictly increases per token.
pub(super) fn prog_increases(c: &CheckSpec, o: &Observed) -> Outcome {
    per_token_call(c, o, 2, |s, _, p| {
        let mut last: Option<f64> = None;
        for (i, n) in p.iter().enumerate() {
            let n = Note::of(n);
            if let (Some(prev), Some(cur)) = (last, n.progress)
                && cur <= prev
            {
                let evidence = vec![Evidence {
                    expected: Some(format!("> {prev}")),
                    ..n.evidence(s, i)
                }];
                // A finished sub-task's note at `1/1` after a higher step: the very sequence
                // seed 000's own example shows. The reason is the same wherever it happens, so
                // reports group it as one finding.
                let tool_started =
                    cur == 0.0 && n.total.is_none() && n.message.ends_with(": started");
                if (n.total == Some(1.0) && cur == 1.0) || tool_started {
                    return Some(fail(SEED_PRESCRIBED_RESET, evidence));
                }
                return Some(fail(
                    format!("progress went from {prev} to {cur}"),
                    evidence,
                ));
            }
            last = n.progress.or(last);
        }
        None
    })
}

/// PROG-004: the numbers follow the seed's pattern (not the wording: PROG-005).
pub(super) fn prog_seed_numbers(c: &CheckSpec, o: &Observed) -> Outcome {
    let prefix = tool_prefix();
    per_token_call(c, o, 1, |s, token, p| {
        let mut step_last: Option<f64> = None;
        let (mut started, mut steps, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        for (i, n) in p.iter().enumerate() {
            let n = Note::of(n);
            // `started` with no total, loop steps increasing with no total, ends at
            // total = progress.
            let started_note = prefix
                .as_ref()
                .and_then(|r| r.captures(n.message))
                .is_some_and(|cp| cp["rest"].trim() == "started");
            let ok = match (n.progress, n.total) {
                (None, _) => false,
                (Some(cur), None) if started_note => {
                    started.push(cur.to_string());
                    true
                }
                (Some(cur), Some(t)) => {
                    ends.push(format!("{cur}/{t}"));
                    t == cur
                }
                (Some(cur), None) => {
                    let good = step_last.is_none_or(|prev| cur > prev);
                    step_last = Some(cur);
                    steps.push(cur);
                    good
                }
            };
            if !ok {
                return Some(fail("progress does not follow the seed's pattern", vec![Evidence { expected: Some("started: 0; step N: increasing, total null; completed/failed: progress = total".into()), ..n.evidence(s, i) }]));
            }
        }
        let steps = match (steps.first(), steps.last()) {
            (Some(a), Some(b)) => {
                format!("{} step(s) increasing {a} → {b} without total", steps.len())
            }
            _ => "no step".to_owned(),
        };
        Some(Outcome::Kept(vec![Witness::new(
            format!("`{}` (token {token})", s.name),
            format!(
                "{} notification(s): {} `started` without total{}; {steps}; {} end(s) at progress = total ({})",
                p.len(),
                started.len(),
                if started.is_empty() {
                    String::new()
                } else {
                    format!(" (at {})", started.join(", "))
                },
                ends.len(),
                if ends.is_empty() {
                    "none".to_owned()
                } else {
                    ends.join(", ")
                }
            ),
        )]))
    })
}

/// PROG-005: messages follow the seed's two patterns.
pub(super) fn prog_messages(c: &CheckSpec, o: &Observed) -> Outcome {
    let fmt = message_format();
    per_token_call(c, o, 1, |s, _, p| {
        p.iter().enumerate().find_map(|(i, n)| {
            let n = Note::of(n);
            (!fmt.as_ref().is_some_and(|r| r.is_match(n.message))).then(|| {
                fail(format!("unexpected progress message {:?}", n.message), vec![Evidence { expected: Some("{server}/{tool}: started|completed|failed or {agent} step N (llm|tool)".into()), ..n.evidence(s, i) }])
            })
        })
    })
}

/// PROG-006: for each downstream tool, `started` precedes its end. A call's witness is the pairs
/// it showed (`{server}/{tool}`'s `started` and its closing note, each by its position in the
/// call's stream and its progress value); a call whose
/// notes name no downstream tool judges nothing, and when no call showed a pair the verdict is
/// inconclusive.
pub(super) fn prog_started_before_ended(c: &CheckSpec, o: &Observed) -> Outcome {
    let fmt = message_format();
    let prefix = tool_prefix();
    let outcome = per_token_call(c, o, 1, |s, token, p| {
        let mut started: Vec<(String, String)> = Vec::new();
        let mut pairs = Vec::new();
        for (i, n) in p.iter().enumerate() {
            let n = Note::of(n);
            // `{server}/{tool}: started` opens; a `{server}/{tool}:` note at total = progress
            // (or worded completed/failed) closes, whatever its text (an error message counts).
            let Some(cp) = prefix.as_ref().and_then(|r| r.captures(n.message)) else {
                continue;
            };
            let tool = cp["tool"].to_owned();
            let rest = cp["rest"].trim();
            let worded_end = fmt
                .as_ref()
                .and_then(|r| r.captures(n.message))
                .is_some_and(|c| c.name("state").is_some_and(|m| m.as_str() != "started"));
            let terminal = worded_end || (n.progress.is_some() && n.total == n.progress);
            // Where the note stands in the call's stream (1-based), with its progress value.
            let at = format!(
                "notification {} (progress {})",
                i + 1,
                n.progress.map_or_else(|| "?".to_owned(), |v| v.to_string())
            );
            if rest == "started" {
                started.push((tool, at));
            } else if terminal {
                if let Some(pos) = started.iter().position(|(t, _)| *t == tool) {
                    let (_, opened) = started.remove(pos);
                    pairs.push(format!(
                        "`{tool}` started at {opened}, ended at {at} ({rest})"
                    ));
                } else {
                    return Some(fail(
                        format!("`{tool}` ended before it started"),
                        vec![n.evidence(s, i)],
                    ));
                }
            }
        }
        if !started.is_empty() {
            let open: Vec<&str> = started.iter().map(|(t, _)| t.as_str()).collect();
            return Some(fail(
                format!("started but never completed: {open:?}"),
                vec![],
            ));
        }
        // The pairs are the call's witness; a call whose notes name no downstream tool adds none.
        // Beside them, the tool calls the mock servers journaled while the call ran (calls of
        // other steps running at the same time included), for the reader to set against them.
        let journaled = o
            .mcp_journals
            .values()
            .flatten()
            .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call") && within(&e.time, s))
            .count();
        Some(Outcome::Kept(
            (!pairs.is_empty())
                .then(|| {
                    Witness::new(
                        format!("`{}` (token {token})", s.name),
                        format!(
                            "{journaled} `tools/call` journaled by the mock servers while it ran; {}",
                            pairs.join("; ")
                        ),
                    )
                })
                .into_iter()
                .collect(),
        ))
    });
    match outcome {
        // Calls with a token got notifications, none naming a downstream tool's start and end.
        Outcome::Inconclusive(why) if why.starts_with("no call with a progress token") => {
            Outcome::Inconclusive(format!(
                "{why}: no call's progress named a downstream tool's `started` and its end, nothing to order"
            ))
        }
        other => other,
    }
}

/// PROG-007: no progress notification after the request's result.
pub(super) fn prog_none_after_result(c: &CheckSpec, o: &Observed) -> Outcome {
    // What each judged call showed around its result, in the order `per_token_call` keeps them.
    let mut order = Vec::new();
    let outcome = per_token_call(c, o, 1, |s, _, notes| {
        let exchange = s.observation.exchange();
        let after: Vec<JsonRef<'_>> = exchange
            .into_iter()
            .flat_map(|x| x.after_response())
            .map(|m| m.message.root())
            .collect();
        if let Some(first) = after.first() {
            return Some(fail(
                format!("{} message(s) after the result", after.len()),
                vec![Evidence::new(
                    &s.name,
                    "nothing after the result",
                    excerpt(*first, 240),
                )],
            ));
        }
        let ended = exchange.is_some_and(|x| x.stream_ended);
        order.push(format!(
            "{} progress notification(s), all before the result; after it {}",
            notes.len(),
            if ended {
                "the stream's end was read with nothing between"
            } else {
                "nothing arrived while the client read on (the stream stayed open)"
            }
        ));
        None
    });
    match outcome {
        Outcome::Kept(witnesses) => Outcome::Kept(
            witnesses
                .into_iter()
                .zip(order)
                .map(|(w, seen)| Witness::new(w.what, seen))
                .collect(),
        ),
        other => other,
    }
}
