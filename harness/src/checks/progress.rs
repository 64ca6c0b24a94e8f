//! Progress checks (PROG-*): `notifications/progress` tokens, ordering, coverage, totals and cancellation.

use regex::Regex;
use serde_json::{Value, json};

use super::common::*;
use super::{Check, Evidence, Observed, Outcome, StepRecord, excerpt, premise};
use crate::catalog::params;
use crate::client::TimedMessage;
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("PROG-001", prog_no_token).premise(premise::llm_or_downstream_call),
    Check::new("PROG-002", prog_token_echoed).premise(premise::progress_seen),
    Check::new("PROG-003", prog_increases).premise(premise::progress_twice),
    Check::new("PROG-004", prog_seed_numbers).premise(premise::progress_seen),
    Check::new("PROG-005", prog_messages).premise(premise::progress_seen),
    Check::new("PROG-006", prog_started_before_ended).premise(premise::downstream_call),
    Check::new("PROG-007", prog_none_after_result).premise(premise::progress_seen),
    Check::new("PROG-008", prog_coverage).premise(premise::downstream_call),
    Check::new("PROG-009", prog_totals).premise(premise::progress_seen),
    Check::new("PROG-010", prog_cancel).premise(premise::cancelled_after_progress),
];

/// What a walk over the calls concludes when no call of the right kind was in scope.
fn no_call_judged() -> Outcome {
    Outcome::NotApplicable("no step of the right kind (with or without a progress token)".into())
}

/// PROG-001: a call that carried no progress token gets no progress notification.
pub(super) fn prog_no_token(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Send, ActionKind::Call]);
    if steps.is_empty() {
        return na("send or call");
    }
    let mut judged = false;
    for s in steps.into_iter().filter(|s| s.progress_token.is_none()) {
        judged = true;
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
    }
    if judged {
        Outcome::Pass
    } else {
        no_call_judged()
    }
}

/// Each `send` or `call` in scope that carried a progress token, judged by `judge` with its
/// token and its progress notifications (the first failure decides).
fn per_token_call(
    c: &CheckSpec,
    o: &Observed,
    mut judge: impl FnMut(&StepRecord, &Value, &[&Value]) -> Option<Outcome>,
) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Send, ActionKind::Call]);
    if steps.is_empty() {
        return na("send or call");
    }
    let mut judged = false;
    for s in steps {
        let Some(token) = &s.progress_token else {
            continue;
        };
        judged = true;
        if let Some(stop) = judge(s, token, &progress_of(s)) {
            return stop;
        }
    }
    if judged {
        Outcome::Pass
    } else {
        no_call_judged()
    }
}

/// A progress notification's fields.
struct Note<'a> {
    params: &'a Value,
    progress: Option<f64>,
    total: Option<f64>,
    message: &'a str,
}

impl<'a> Note<'a> {
    fn of(n: &'a Value) -> Self {
        let params = n.get("params").unwrap_or(&Value::Null);
        Self {
            params,
            progress: params.get("progress").and_then(Value::as_f64),
            total: params.get("total").and_then(Value::as_f64),
            message: params.get("message").and_then(Value::as_str).unwrap_or(""),
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
    Regex::new(r"^(?:(?P<tool>[^\s/]+/\S+): (?P<state>started|completed|failed)|(?P<agent>\S+) step (?P<n>\d+) \((?:llm|tool)\))$").ok()
}

/// `{server}/{tool}:` and the rest of the message.
fn tool_prefix() -> Option<Regex> {
    Regex::new(r"^(?P<tool>[^\s/:]+/[^\s:]+):(?P<rest>.*)$").ok()
}

/// PROG-002: every notification echoes the request's token exactly.
pub(super) fn prog_token_echoed(c: &CheckSpec, o: &Observed) -> Outcome {
    per_token_call(c, o, |s, token, p| {
        p.iter().enumerate().find_map(|(i, n)| {
            let n = Note::of(n);
            (n.params.get("progressToken") != Some(token)).then(|| {
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
    per_token_call(c, o, |s, _, p| {
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
                if n.total == Some(1.0) && cur == 1.0 {
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
    per_token_call(c, o, |s, _, p| {
        let mut step_last: Option<f64> = None;
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
                (Some(_), None) if started_note => true,
                (Some(cur), Some(t)) => t == cur,
                (Some(cur), None) => {
                    let good = step_last.is_none_or(|prev| cur > prev);
                    step_last = Some(cur);
                    good
                }
            };
            if !ok {
                return Some(fail("progress does not follow the seed's pattern", vec![Evidence { expected: Some("started: 0; step N: increasing, total null; completed/failed: progress = total".into()), ..n.evidence(s, i) }]));
            }
        }
        None
    })
}

/// PROG-005: messages follow the seed's two patterns.
pub(super) fn prog_messages(c: &CheckSpec, o: &Observed) -> Outcome {
    let fmt = message_format();
    per_token_call(c, o, |s, _, p| {
        p.iter().enumerate().find_map(|(i, n)| {
            let n = Note::of(n);
            (!fmt.as_ref().is_some_and(|r| r.is_match(n.message))).then(|| {
                fail(format!("unexpected progress message {:?}", n.message), vec![Evidence { expected: Some("{server}/{tool}: started|completed|failed or {agent} step N (llm|tool)".into()), ..n.evidence(s, i) }])
            })
        })
    })
}

/// PROG-006: for each downstream tool, `started` precedes its end.
pub(super) fn prog_started_before_ended(c: &CheckSpec, o: &Observed) -> Outcome {
    let fmt = message_format();
    let prefix = tool_prefix();
    per_token_call(c, o, |s, _, p| {
        let mut started: Vec<String> = Vec::new();
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
            if rest == "started" {
                started.push(tool);
            } else if terminal {
                if let Some(pos) = started.iter().position(|t| *t == tool) {
                    started.remove(pos);
                } else {
                    return Some(fail(
                        format!("`{tool}` ended before it started"),
                        vec![n.evidence(s, i)],
                    ));
                }
            }
        }
        (!started.is_empty())
            .then(|| fail(format!("started but never completed: {started:?}"), vec![]))
    })
}

/// PROG-007: no progress notification after the request's result.
pub(super) fn prog_none_after_result(c: &CheckSpec, o: &Observed) -> Outcome {
    per_token_call(c, o, |s, _, _| {
        let after: Vec<&Value> = s
            .observation
            .exchange()
            .into_iter()
            .flat_map(|x| x.after_response())
            .map(|m| &m.message)
            .collect();
        after.first().map(|first| {
            fail(
                format!("{} message(s) after the result", after.len()),
                vec![Evidence::new(
                    &s.name,
                    "nothing after the result",
                    excerpt(first, 240),
                )],
            )
        })
    })
}

// ---------------------------------------------------------------- progress

/// PROG-003's reason when progress falls back to a finished sub-task's `1/1`: seed versus MCP.
pub(super) const SEED_PRESCRIBED_RESET: &str = "progress fell back to 1 at a finished sub-task's note (`progress: 1, total: 1`): seed 000 prescribes this sequence — its example (seed 000 §4 \"How It Works\", lines 237-245) sends progress 0 (`started`), 1 and 2 (loop steps), then `progress: 1, total: 1` for each `completed`, and its table says `1.0` = task finished — but MCP's rule binds: `progress` MUST increase with each notification. The seed's example breaks MCP here; the verdict follows MCP";

pub(super) fn tool_message_re() -> Option<Regex> {
    Regex::new(r"^(?P<server>[^\s/]+)/(?P<tool>\S+): (?P<state>started|completed|failed)$").ok()
}

/// Whether a progress message's `{server}/{tool}` names `server`/`tool` (fast-agent
/// namespaces tools as `{server}__{tool}`).
pub(super) fn names_tool(msg_server: &str, msg_tool: &str, server: &str, tool: &str) -> bool {
    msg_server == server
        && (msg_tool == tool
            || msg_tool.ends_with(&format!("__{tool}"))
            || msg_tool.ends_with(&format!("-{tool}")))
}

/// The `send` and `call` steps in scope that carried a progress token.
fn token_steps<'a>(o: &'a Observed, c: &CheckSpec) -> Vec<&'a StepRecord> {
    steps_of(o, c, &[ActionKind::Send, ActionKind::Call])
        .into_iter()
        .filter(|s| s.progress_token.is_some())
        .collect()
}

/// PROG-008: at least one `started` and one `completed|failed` per downstream tool invoked.
#[expect(
    clippy::too_many_lines,
    reason = "one walk attributes each journaled tool call to the progress that announces it, with the evidence of what is missing"
)]
pub(super) fn prog_coverage(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = token_steps(o, c);
    if steps.is_empty() {
        return na("send or call with a progress token");
    }
    let (Some(re), Ok(prefix)) = (
        tool_message_re(),
        Regex::new(r"^(?P<server>[^\s/:]+)/(?P<tool>[^\s:]+):"),
    ) else {
        return Outcome::Error("progress message pattern did not compile".into());
    };
    let mut wording = None;
    let p: params::ProgressTools = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let listed: Vec<(String, String)> = params::strings(p.tools.as_ref())
        .iter()
        .filter_map(|t| t.split_once('/'))
        .map(|(s, t)| (s.to_owned(), t.to_owned()))
        .collect();
    // Mock name → the deployment's server keys using it.
    let servers_of = |mock: &str| -> Vec<String> {
        match &o.deployment {
            Some(d) => {
                let v: Vec<String> = d
                    .servers
                    .iter()
                    .filter(|(_, s)| s.mock.as_deref() == Some(mock))
                    .map(|(k, _)| k.clone())
                    .collect();
                if v.is_empty() {
                    vec![mock.to_owned()]
                } else {
                    v
                }
            }
            None => vec![mock.to_owned()],
        }
    };
    let mut judged = 0;
    for s in steps {
        let invoked: Vec<(Vec<String>, String)> = if listed.is_empty() {
            if o.steps.iter().any(|x| {
                x.name != s.name
                    && matches!(x.action(), Some(StepAction::Send(_) | StepAction::Call(_)))
                    && overlap(x, s)
            }) {
                continue; // downstream calls cannot be attributed to one of overlapping steps
            }
            o.mcp_journals
                .iter()
                .flat_map(|(mock, entries)| {
                    entries
                        .iter()
                        .filter(|e| {
                            e.jsonrpc_method.as_deref() == Some("tools/call") && within(&e.time, s)
                        })
                        .filter_map(|e| e.tool.clone())
                        .map(|t| (servers_of(mock), t))
                        .collect::<Vec<_>>()
                })
                .collect()
        } else {
            listed
                .iter()
                .map(|(s, t)| (vec![s.clone()], t.clone()))
                .collect()
        };
        // (server, tool, state); `ended` marks a `{server}/{tool}:` note at total = progress
        // that is not worded `completed|failed` (e.g. an error text).
        let notes: Vec<(String, String, String)> = progress_of(s)
            .iter()
            .filter_map(|n| {
                let m = n.pointer("/params/message").and_then(Value::as_str)?;
                if let Some(cp) = re.captures(m) {
                    return Some((
                        cp["server"].to_owned(),
                        cp["tool"].to_owned(),
                        cp["state"].to_owned(),
                    ));
                }
                let cp = prefix.captures(m)?;
                let progress = n.pointer("/params/progress").and_then(Value::as_f64)?;
                let total = n.pointer("/params/total").and_then(Value::as_f64)?;
                (total == progress).then(|| {
                    (
                        cp["server"].to_owned(),
                        cp["tool"].to_owned(),
                        "ended".to_owned(),
                    )
                })
            })
            .collect();
        let seen = || {
            format!(
                "{:?}",
                notes
                    .iter()
                    .map(|(a, b, c)| format!("{a}/{b}: {c}"))
                    .collect::<Vec<_>>()
            )
        };
        for (servers, tool) in invoked {
            judged += 1;
            let has = |states: &[&str]| {
                notes.iter().any(|(ms, mt, st)| {
                    states.contains(&st.as_str())
                        && servers.iter().any(|sv| names_tool(ms, mt, sv, &tool))
                })
            };
            for (states, label) in [
                (&["started"][..], "started"),
                (&["completed", "failed"][..], "completed|failed"),
            ] {
                if has(states) {
                    continue;
                }
                let evidence = vec![Evidence::new(
                    &s.name,
                    format!("`{}/{tool}: {label}`", servers[0]),
                    seen(),
                )];
                if label != "started" && has(&["ended"]) {
                    // It ended (total = progress); only the word is missing: wording.
                    wording.get_or_insert(Outcome::Should(
                        format!(
                            "`{}/{tool}` ended during `{}` without the word `completed` or `failed`",
                            servers.join("|"),
                            s.name
                        ),
                        evidence,
                    ));
                    continue;
                }
                return fail(
                    format!(
                        "no `{}/{tool}: {label}` progress during `{}`",
                        servers.join("|"),
                        s.name
                    ),
                    evidence,
                );
            }
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable(
            "no downstream tool call could be attributed to a token-carrying step (name them with `with: {tools: [server/tool]}`)".into(),
        );
    }
    wording.unwrap_or(Outcome::Pass)
}

/// PROG-009: `total` absent/null for loop steps, equal to `progress` for finished sub-tasks.
pub(super) fn prog_totals(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = token_steps(o, c);
    if steps.is_empty() {
        return na("send or call with a progress token");
    }
    let (Some(tool_re), Ok(step_re)) = (
        tool_message_re(),
        Regex::new(r"^\S+ step \d+ \((?:llm|tool)\)$"),
    ) else {
        return Outcome::Error("progress message patterns did not compile".into());
    };
    let mut judged = 0;
    for s in steps {
        for (i, n) in progress_of(s).iter().enumerate() {
            let p = n.get("params").unwrap_or(&Value::Null);
            let msg = p.get("message").and_then(Value::as_str).unwrap_or("");
            let total = p.get("total").filter(|t| !t.is_null());
            let progress = p.get("progress");
            let ev = |expected: &str| Evidence {
                path: Some(format!("/progress/{i}")),
                ..Evidence::new(
                    format!("{} progress #{i}", s.name),
                    expected,
                    excerpt(p, 240),
                )
            };
            if step_re.is_match(msg) {
                judged += 1;
                if total.is_some() {
                    return fail(
                        format!("loop step {msg:?} carries a total"),
                        vec![ev("total absent or null")],
                    );
                }
            } else if let Some(cp) = tool_re.captures(msg)
                && &cp["state"] != "started"
            {
                judged += 1;
                let same = match (
                    total.and_then(Value::as_f64),
                    progress.and_then(Value::as_f64),
                ) {
                    (Some(t), Some(v)) => (t - v).abs() < f64::EPSILON,
                    _ => false,
                };
                if !same {
                    return fail(
                        format!("finished sub-task {msg:?} has total ≠ progress"),
                        vec![ev("total = progress (1/1)")],
                    );
                }
            }
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable("no loop-step or finished-tool progress message".into());
    }
    Outcome::Pass
}

/// PROG-010: after `notifications/cancelled`, no further progress (beyond `grace_ms`, default
/// 250, for notifications already in flight).
pub(super) fn prog_cancel(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send])
        .into_iter()
        .filter(|s| cancelled(s))
        .collect();
    if steps.is_empty() {
        return na("send with `cancel_after_progress`");
    }
    let p: params::ProgressCancel = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let grace = p.grace_ms.unwrap_or(250.0);
    for s in steps {
        let Some(at) = s.observation.cancelled_at_ms() else {
            return Outcome::Error(format!(
                "`{}` never sent its cancellation ({} progress notification(s) arrived)",
                s.name,
                progress_of(s).len()
            ));
        };
        let late: Vec<&TimedMessage> = s
            .observation
            .exchange()
            .into_iter()
            .flat_map(|x| x.progress())
            .filter(|m| m.at_ms > at + grace)
            .collect();
        if let Some(first) = late.first() {
            return fail(
                format!(
                    "{} progress notification(s) more than {grace:.0} ms after the cancellation of `{}`",
                    late.len(),
                    s.name
                ),
                vec![Evidence::new(
                    &s.name,
                    "no progress after notifications/cancelled",
                    excerpt(&json!(first), 240),
                )],
            );
        }
    }
    Outcome::Pass
}

/// PROG-012 folded into PROG-005 (one cause, one finding): when the scenario's PROG-005 entry
/// failed and no progress message uses the seed's `{agent} step N (llm|tool)` wording, a
/// PROG-012 failure has no step numbers to judge and only repeats the wording PROG-005 reports.
pub(super) fn folded_into_prog_005(o: &Observed, prog_005_failed: bool) -> Option<Outcome> {
    if !prog_005_failed {
        return None;
    }
    // The whole message is `{agent} step N (llm|tool)`; an agent name has no `/`, `:` or space
    // (`harper/agent_loop: step 1 (llm)` is another wording).
    let step = Regex::new(r"^[^\s/:]+ step \d+ \((?:llm|tool)\)$").ok()?;
    let worded = o.steps.iter().any(|s| {
        progress_of(s).iter().any(|p| {
            p.get("params")
                .and_then(|q| q.get("message"))
                .and_then(Value::as_str)
                .is_some_and(|m| step.is_match(m))
        })
    });
    (!worded).then(|| {
        Outcome::NotApplicable(
            "no progress message uses the seed's `{agent} step N (llm|tool)` wording, so there are no step numbers to judge: one cause, reported as this scenario's PROG-005 finding".into(),
        )
    })
}
