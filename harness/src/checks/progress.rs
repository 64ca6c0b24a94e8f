//! Progress checks (PROG-*): `notifications/progress` tokens, ordering, coverage, totals and cancellation.

use crate::client::JsonRef;
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::common::*;
use super::params::{OneOrMany, strings};
use super::premise;
use super::progress_walk as walk;
use super::read::excerpt;
use super::value::Check;
use super::value::Fold;
use super::verdict::{Evidence, Outcome, Witness};
use crate::client::TimedMessage;
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("PROG-001", walk::prog_no_token).premise(premise::llm_or_downstream_call),
    Check::new("PROG-002", walk::prog_token_echoed).premise(premise::progress_seen),
    Check::new("PROG-003", walk::prog_increases)
        .premise(premise::progress_twice)
        .mode("spec-strict"),
    Check::new("PROG-004", walk::prog_seed_numbers)
        .premise(premise::progress_seen)
        .mode("pallas-compatible"),
    Check::new("PROG-005", walk::prog_messages).premise(premise::progress_seen),
    Check::new("PROG-006", walk::prog_started_before_ended).premise(premise::downstream_call),
    Check::new("PROG-007", walk::prog_none_after_result).premise(premise::progress_seen),
    Check::new("PROG-008", prog_coverage)
        .premise(premise::downstream_call)
        .params::<ProgressTools>()
        .by_default("tool calls the mock journals saw during each token-carrying step (steps overlapping another send are not attributed)"),
    Check::new("PROG-009", prog_totals).premise(premise::progress_seen),
    Check::new("PROG-010", prog_cancel)
        .premise(premise::cancelled_after_progress)
        .params::<ProgressCancel>()
        .by_default("250 ms after the client sent `notifications/cancelled`"),
    Check::assertion("PROG-012").folds(Fold {
        into: "PROG-005",
        when: folded_into_prog_005,
    }),
];

// ---------------------------------------------------------------- progress

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

/// The deployment's server keys that use mock `mock` (the mock's own name when none does).
fn servers_of(o: &Observed, mock: &str) -> Vec<String> {
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
}

/// The downstream tools invoked during step `s` (server keys, tool): the `listed` ones, else
/// the tool calls the mock journals saw during it; `None` when another send or call overlaps
/// it (its calls cannot be attributed).
fn invoked_during(
    o: &Observed,
    s: &StepRecord,
    listed: &[(String, String)],
) -> Option<Vec<(Vec<String>, String)>> {
    if !listed.is_empty() {
        return Some(
            listed
                .iter()
                .map(|(s, t)| (vec![s.clone()], t.clone()))
                .collect(),
        );
    }
    if o.steps.iter().any(|x| {
        x.name != s.name
            && matches!(x.action(), Some(StepAction::Send(_) | StepAction::Call(_)))
            && overlap(x, s)
    }) {
        return None;
    }
    Some(
        o.mcp_journals
            .iter()
            .flat_map(|(mock, entries)| {
                entries
                    .iter()
                    .filter(|e| {
                        e.jsonrpc_method.as_deref() == Some("tools/call") && within(&e.time, s)
                    })
                    .filter_map(|e| e.tool.clone())
                    .map(|t| (servers_of(o, mock), t))
                    .collect::<Vec<_>>()
            })
            .collect(),
    )
}

/// Step `s`'s `{server}/{tool}` progress notes as (server, tool, state); `ended` marks a
/// `{server}/{tool}:` note at total = progress that is not worded `completed|failed` (e.g. an
/// error text).
fn tool_notes(s: &StepRecord, re: &Regex, prefix: &Regex) -> Vec<(String, String, String)> {
    progress_of(s)
        .iter()
        .filter_map(|n| {
            let m = n.pointer("/params/message").and_then(JsonRef::as_str)?;
            if let Some(cp) = re.captures(m) {
                return Some((
                    cp["server"].to_owned(),
                    cp["tool"].to_owned(),
                    cp["state"].to_owned(),
                ));
            }
            let cp = prefix.captures(m)?;
            let progress = n.pointer("/params/progress").and_then(JsonRef::as_f64)?;
            let total = n.pointer("/params/total").and_then(JsonRef::as_f64)?;
            (total == progress).then(|| {
                (
                    cp["server"].to_owned(),
                    cp["tool"].to_owned(),
                    "ended".to_owned(),
                )
            })
        })
        .collect()
}

/// PROG-008: at least one `started` and one `completed|failed` per downstream tool invoked.
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
    let p: ProgressTools = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let listed: Vec<(String, String)> = strings(p.tools.as_ref())
        .iter()
        .filter_map(|t| t.split_once('/'))
        .map(|(s, t)| (s.to_owned(), t.to_owned()))
        .collect();
    let mut judged = 0;
    let mut kept = Vec::new();
    for s in steps {
        let Some(invoked) = invoked_during(o, s, &listed) else {
            continue; // downstream calls cannot be attributed to one of overlapping steps
        };
        let notes = tool_notes(s, &re, &prefix);
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
            kept.push(Witness::new(
                format!(
                    "`{}`: downstream `{}/{tool}` invoked",
                    s.name,
                    servers.join("|")
                ),
                format!("progress seen: {}", seen()),
            ));
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
                    wording.get_or_insert(Outcome::breaks(
                        "s000.progress-completed-pattern",
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
        return Outcome::Inconclusive(
            "no downstream tool call could be attributed to a token-carrying step (name them with `with: {tools: [server/tool]}`)".into(),
        );
    }
    wording.unwrap_or(Outcome::Kept(kept))
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
    let mut kept = Vec::new();
    for s in steps {
        for (i, n) in progress_of(s).iter().enumerate() {
            let p = n.get("params").unwrap_or_else(JsonRef::null);
            let msg = p.get("message").and_then(JsonRef::as_str).unwrap_or("");
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
            if step_re.is_match(msg) || tool_re.is_match(msg) {
                // A loop step, or a tool's note: what the next lines judge (a `started` note
                // is not judged and not shown).
                if step_re.is_match(msg)
                    || tool_re
                        .captures(msg)
                        .is_some_and(|cp| &cp["state"] != "started")
                {
                    kept.push(Witness::new(
                        format!("{} progress #{i}", s.name),
                        excerpt(p, 200),
                    ));
                }
            }
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
                    total.and_then(JsonRef::as_f64),
                    progress.and_then(JsonRef::as_f64),
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
        return Outcome::Inconclusive("no loop-step or finished-tool progress message".into());
    }
    Outcome::Kept(kept)
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
    let p: ProgressCancel = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let grace = p.grace_ms.unwrap_or(250.0);
    let mut kept = Vec::new();
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
            // Progress after the request's own response breaks "MUST stop after completion";
            // before it, the receiver only did not stop processing (SHOULD).
            let answered_at = s
                .observation
                .exchange()
                .into_iter()
                .flat_map(|x| x.messages.iter())
                .find(|m| {
                    m.message.get("id").is_some()
                        && (m.message.get("result").is_some() || m.message.get("error").is_some())
                })
                .map(|m| m.at_ms);
            let rule = match answered_at {
                Some(done) if late.iter().any(|m| m.at_ms > done) => {
                    "mcp.progress-stops-after-completion"
                }
                _ => "mcp.cancel-stop-processing",
            };
            return Outcome::breaks(
                rule,
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
        let after = s
            .observation
            .exchange()
            .into_iter()
            .flat_map(|x| x.progress())
            .filter(|m| m.at_ms > at)
            .count();
        let received = s.observation.exchange().map_or(0, |x| x.messages.len());
        kept.push(Witness::new(
            &s.name,
            format!(
                "cancelled at {at:.0} ms, then {after} progress notification(s) within the {grace:.0} ms grace and none later while the call's stream was read, until {ended:.0} ms ({watched:.0} ms after the cancellation); {received} message(s) on the stream",
                ended = s.ended_ms,
                watched = (s.ended_ms - at).max(0.0),
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// PROG-012 folded into PROG-005 (one cause, one finding): when the scenario's PROG-005 entry
/// failed and no progress message uses the seed's `{agent} step N (llm|tool)` wording, a
/// PROG-012 failure has no step numbers to judge and only repeats the wording PROG-005 reports.
fn folded_into_prog_005(o: &Observed, prog_005_failed: bool) -> Option<Outcome> {
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
                .and_then(JsonRef::as_str)
                .is_some_and(|m| step.is_match(m))
        })
    });
    (!worded).then(|| {
        Outcome::NotApplicable(
            "no progress message uses the seed's `{agent} step N (llm|tool)` wording, so there are no step numbers to judge: one cause, reported as this scenario's PROG-005 finding".into(),
        )
    })
}

/// The `with:` parameters of `PROG-008`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ProgressTools {
    /// The tool calls progress must announce, as `server/tool`.
    pub(super) tools: Option<OneOrMany>,
}

/// The `with:` parameters of `PROG-010`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ProgressCancel {
    /// How long after the cancellation progress may still arrive, in milliseconds (default 250).
    pub(super) grace_ms: Option<f64>,
}
