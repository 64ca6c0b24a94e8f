//! Health checks (HEALTH-*): the `get_health` tool, its answer, its probes and its timing.

use crate::client::JsonRef;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::*;
use super::premise;
use super::read::excerpt;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use crate::client::HealthReport;
use crate::observation::{HealthAnswered, Observation};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec};
use pallas_mocks::McpJournalEntry;

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("HEALTH-001", health_listed),
    Check::new("HEALTH-002", health_status_known),
    Check::new("HEALTH-003", health_message_present),
    Check::new("HEALTH-004", health_status_expected).params::<HealthStatus>(),
    Check::new("HEALTH-005", health_no_llm),
    Check::new("HEALTH-006", health_fast)
        .params::<HealthFast>()
        .by_default("1000 ms"),
    Check::new("HEALTH-007", sessions_closed).premise(premise::health_probe),
    Check::new("HEALTH-008", health_no_progress),
    Check::new("HEALTH-009", health_gate).params::<HealthGate>(),
    Check::assertion("HEALTH-010").premise(premise::health_probe),
    Check::new("HEALTH-011", health_timestamp_iso8601),
    Check::assertion("HEALTH-012").premise(premise::health_probe),
    Check::assertion("HEALTH-013").premise(premise::health_answered),
    Check::assertion("HEALTH-014").premise(premise::health_answered),
    Check::assertion("HEALTH-015").premise(premise::health_answered),
    Check::assertion("HEALTH-016").premise(premise::health_probe),
    Check::assertion("HEALTH-017").premise(premise::health_answered),
    Check::assertion("HEALTH-018").premise(premise::health_answered),
    Check::assertion("HEALTH-019").premise(premise::health_answered),
    Check::assertion("HEALTH-020").premise(premise::health_answered),
    Check::assertion("HEALTH-021").premise(premise::tools_listed),
    Check::assertion("HEALTH-022").premise(premise::tools_listed),
    Check::assertion("HEALTH-023").premise(premise::tools_listed),
    Check::assertion("HEALTH-024").premise(premise::health_answered),
    Check::assertion("HEALTH-025").premise(premise::health_answered),
    Check::assertion("HEALTH-026").premise(premise::health_answered),
    Check::assertion("HEALTH-027").premise(premise::health_answered),
    Check::new("HEALTH-028", health_no_llm),
    Check::new("HEALTH-029", health_no_llm),
    Check::new("HEALTH-030", health_no_llm),
];

pub(super) const HEALTH_DESCRIPTION: &str =
    "Returns the health status of this agent and its downstream dependencies.";

/// The tools a `tools/list` answer listed.
pub(super) fn tools_listed(s: &StepRecord) -> Vec<JsonRef<'_>> {
    s.observation
        .result()
        .and_then(|r| r.get("tools"))
        .and_then(JsonRef::as_array)
        .map_or_else(Vec::new, |a| a.iter().collect())
}

pub(super) fn health_listed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::ListTools]);
    if steps.is_empty() {
        return na("list_tools");
    }
    let mut kept = Vec::new();
    for s in steps {
        let Some(t) = tools_listed(s)
            .into_iter()
            .find(|t| t.get("name").and_then(JsonRef::as_str) == Some(o.health_tool.as_str()))
        else {
            return fail(
                format!("`{}` is not listed", o.health_tool),
                vec![Evidence::new(
                    &s.name,
                    format!("a tool named `{}`", o.health_tool),
                    "none",
                )],
            );
        };
        let desc = t.get("description").and_then(JsonRef::as_str).unwrap_or("");
        if desc != HEALTH_DESCRIPTION {
            return Outcome::breaks(
                "s000.health-tool-definition",
                "wrong `get_health` description",
                vec![Evidence::new(&s.name, HEALTH_DESCRIPTION, desc)],
            );
        }
        let schema = t.get("inputSchema").map_or(Value::Null, JsonRef::to_value);
        let ok = schema.get("type") == Some(&json!("object"))
            && schema
                .get("properties")
                .is_none_or(|p| p.as_object().is_some_and(|m| m.is_empty()))
            && schema.get("additionalProperties") == Some(&json!(false));
        if !ok {
            return Outcome::breaks(
                "s000.health-no-arguments",
                "`get_health` input schema is not the empty object",
                vec![Evidence::new(
                    &s.name,
                    r#"{"type":"object","properties":{},"additionalProperties":false}"#,
                    excerpt(&schema, 200),
                )],
            );
        }
        kept.push(Witness::new(
            format!("`{}` as `{}` listed it", o.health_tool, s.name),
            format!(
                "description {desc:?}, inputSchema {}",
                excerpt(&schema, 160)
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// HEALTH-009: Daedalus's gate over each `get_health` answer (`with: {gate}`).
pub(super) fn health_gate(c: &CheckSpec, o: &Observed) -> Outcome {
    let gate_param: HealthGate = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let Some(want) = gate_param.gate.as_deref() else {
        return Outcome::NotApplicable("no `gate` was given to compare the answers with".into());
    };
    let mut kept = Vec::new();
    for s in steps {
        let Observation::HealthAnswered(h) = &s.observation else {
            return Outcome::Error(format!(
                "`{}` observed no `get_health` answer: nothing to gate",
                s.name
            ));
        };
        let gate = h.gate.as_str();
        if !gate.starts_with(want) {
            return fail(
                format!("Daedalus would gate chat as `{gate}`"),
                vec![Evidence::new(&s.name, want, gate)],
            );
        }
        kept.push(Witness::new(
            &s.name,
            format!("Daedalus gates chat as `{gate}`"),
        ));
    }
    Outcome::Kept(kept)
}

/// Each `get_health` answer in scope, read as health JSON, judged by `judge` (the first
/// failure decides); a step that could not run is an error, an unreadable answer a failure.
fn health_answers(
    c: &CheckSpec,
    o: &Observed,
    judge: impl Fn(&StepRecord, &HealthReport) -> Option<Outcome>,
) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let mut kept = Vec::new();
    for s in steps {
        if let Some(e) = &s.error {
            return Outcome::Error(format!("`{}` could not run: {e}", s.name));
        }
        let Some(h) = s.observation.health() else {
            let why = match &s.observation {
                Observation::HealthAnswered(HealthAnswered { health: Err(e), .. }) => {
                    excerpt(&json!(e), 200)
                }
                _ => "no result".into(),
            };
            return fail(
                format!("`get_health` result is not one text block of health JSON: {why}"),
                vec![Evidence::new(
                    &s.name,
                    "one text block holding {status,…}",
                    excerpt(result_or_null(s), 300),
                )],
            );
        };
        if let Some(stop) = judge(s, h) {
            return stop;
        }
        kept.push(Witness::new(&s.name, excerpt(&json!(h), 200)));
    }
    Outcome::Kept(kept)
}

/// HEALTH-002: the status is `ok`, `degraded` or `error`.
pub(super) fn health_status_known(c: &CheckSpec, o: &Observed) -> Outcome {
    health_answers(c, o, |s, h| {
        let status = h.status.as_str();
        (!["ok", "degraded", "error"].contains(&status)).then(|| {
            fail(
                format!("status `{status}`"),
                vec![Evidence::new(&s.name, "ok|degraded|error", status)],
            )
        })
    })
}

/// HEALTH-003: a message whenever the status is not `ok`.
pub(super) fn health_message_present(c: &CheckSpec, o: &Observed) -> Outcome {
    let not_ok = std::cell::Cell::new(false);
    let outcome = health_answers(c, o, |s, h| {
        let status = h.status.as_str();
        if status == "ok" {
            return None;
        }
        not_ok.set(true);
        if h.message.as_deref().is_none_or(str::is_empty) {
            return Some(fail(
                format!("status `{status}` without a message"),
                vec![Evidence::new(&s.name, "a message", excerpt(&json!(h), 200))],
            ));
        }
        None
    });
    if outcome.is_kept() && !not_ok.get() {
        return Outcome::NotApplicable(
            "every `get_health` answer was `ok`: the rule binds the answers that are not".into(),
        );
    }
    outcome
}

/// HEALTH-011: a timestamp, when present, is ISO 8601 (RFC 3339); without any timestamp in the
/// answers there is nothing to judge.
pub(super) fn health_timestamp_iso8601(c: &CheckSpec, o: &Observed) -> Outcome {
    let seen = std::cell::Cell::new(false);
    let outcome = health_answers(c, o, |s, h| {
        let ts = h.timestamp.as_deref()?;
        seen.set(true);
        if chrono::DateTime::parse_from_rfc3339(ts).is_err() {
            return Some(fail(
                "timestamp is not ISO 8601",
                vec![Evidence::new(&s.name, "RFC 3339 timestamp", ts)],
            ));
        }
        None
    });
    if outcome.is_kept() && !seen.get() {
        return Outcome::Inconclusive("no `get_health` answer carried a `timestamp`".into());
    }
    outcome
}

/// HEALTH-004: the status and message match the situation (`with: {status, mentions}`).
pub(super) fn health_status_expected(c: &CheckSpec, o: &Observed) -> Outcome {
    let status_param: HealthStatus = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    health_answers(c, o, |s, h| {
        let status = h.status.as_str();
        if let Some(want) = status_param.status.as_deref()
            && status != want
        {
            return Some(fail(
                format!("status `{status}`, expected `{want}`"),
                vec![Evidence::new(&s.name, want, excerpt(&json!(h), 300))],
            ));
        }
        let msg = h.message.as_deref().unwrap_or("");
        status_param
            .mentions
            .iter()
            .find(|m| !msg.contains(m.as_str()))
            .map(|m| {
                fail(
                    format!("the message does not name `{m}`"),
                    vec![Evidence::new(
                        &s.name,
                        format!("message mentioning {m:?}"),
                        msg,
                    )],
                )
            })
    })
}

pub(super) fn health_no_llm(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    if o.llm_journals.is_empty() {
        return Outcome::Inconclusive(
            "no mock LLM journal: a model request during `get_health` is not observable".into(),
        );
    }
    for (llm, entries) in &o.llm_journals {
        // Seed 001 describes a TTL re-probe of the provider inside `get_health` ("The LLM gauge
        // is also set at startup preflight and on the TTL re-probe inside `get_health`"), made
        // with the preflight's requests: `GET /v1/models/{model}` (Anthropic) and
        // `GET {base_url}/models` (OpenAI). Those list or look up models; they invoke nothing.
        for e in entries
            .iter()
            .filter(|e| !is_provider_probe(&e.method, &e.path))
        {
            if let Some(s) = steps.iter().find(|s| within(&e.time, s)) {
                return fail(
                    format!(
                        "mock LLM `{llm}` got {} {} during `{}`",
                        e.method, e.path, s.name
                    ),
                    vec![Evidence::new(
                        format!("journal of `{llm}`"),
                        "no request during get_health",
                        format!("{} {} at {}", e.method, e.path, e.time),
                    )],
                );
            }
        }
    }
    let requests: usize = o.llm_journals.values().map(Vec::len).sum();
    Outcome::kept(
        format!(
            "the journals of {} mock LLM(s) over {} `get_health` step(s)",
            o.llm_journals.len(),
            steps.len()
        ),
        format!("{requests} request(s) in the run, none but a models probe during `get_health`"),
    )
}

/// A request of seed 001's provider preflight (and of its TTL re-probe): a `GET` of the models
/// endpoint (`…/models` or `…/models/{model}`).
fn is_provider_probe(method: &str, path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    method.eq_ignore_ascii_case("GET")
        && (path.ends_with("/models")
            || path
                .rsplit_once("/models/")
                .is_some_and(|(_, m)| !m.is_empty() && !m.contains('/')))
}

pub(super) fn health_fast(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let p: HealthFast = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let max = p.max_ms.unwrap_or(1000.0);
    let mut kept = Vec::new();
    for s in steps {
        if s.elapsed_ms > max || s.timed_out {
            return fail(
                format!("`{}` took {:.0} ms", s.name, s.elapsed_ms),
                vec![Evidence::new(
                    &s.name,
                    format!("<= {max:.0} ms"),
                    format!("{:.0} ms", s.elapsed_ms),
                )],
            );
        }
        kept.push(Witness::new(
            &s.name,
            format!("answered in {:.0} ms", s.elapsed_ms),
        ));
    }
    Outcome::Kept(kept)
}

/// Probe sessions opened during `get_health` must be deleted: `initialize` requests a mock saw
/// while a health step ran are matched against the `DELETE`s it received from then on (a
/// session the agent keeps for its own tool calls is not a probe).
pub(super) fn sessions_closed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let mut kept = Vec::new();
    for (name, entries) in &o.mcp_journals {
        // Each probe's own session, by the id its `initialize` answer gave; a DELETE the server
        // refused as unauthenticated (401, 403) closed nothing.
        let probes: Vec<&McpJournalEntry> = entries
            .iter()
            .filter(|e| {
                e.jsonrpc_method.as_deref() == Some("initialize")
                    && e.status.is_some_and(|s| s < 300)
                    && e.opened_session.is_some()
            })
            .filter(|e| steps.iter().any(|s| within(&e.time, s)))
            .collect();
        if probes.is_empty() {
            continue;
        }
        let deletes_of = |sid: &str| {
            entries
                .iter()
                .filter(|e| e.method == "DELETE" && e.session_id.as_deref() == Some(sid))
                .fold((0, 0), |(ok, refused), e| {
                    if matches!(e.status, Some(401 | 403)) {
                        (ok, refused + 1)
                    } else {
                        (ok + 1, refused)
                    }
                })
        };
        for p in &probes {
            let sid = p.opened_session.as_deref().unwrap_or_default();
            let (closed, refused) = deletes_of(sid);
            if closed == 0 {
                let how = if refused > 0 {
                    format!("its {refused} DELETE(s) refused as unauthenticated (401/403)")
                } else {
                    "no DELETE of it".to_owned()
                };
                // The reason names no time or id (one cause, one finding across scenarios); the
                // evidence does.
                return fail(
                    format!(
                        "`{name}`: a probe session opened during get_health was not closed: {how}"
                    ),
                    vec![Evidence::new(
                        format!("journal of `{name}`"),
                        "a DELETE of the probe's session the server did not refuse",
                        format!("session {sid}, opened at {}: {how}", p.time),
                    )],
                );
            }
        }
        let mut answers: Vec<String> = probes
            .iter()
            .flat_map(|p| {
                let sid = p.opened_session.as_deref();
                entries
                    .iter()
                    .filter(move |e| e.method == "DELETE" && e.session_id.as_deref() == sid)
                    .map(|e| e.status.map_or("no answer".to_owned(), |s| s.to_string()))
            })
            .collect();
        answers.sort();
        kept.push(Witness::new(
            format!("journal of `{name}`"),
            format!(
                "{} probe session(s) opened during get_health, each ended by a DELETE of its own session id that the server did not refuse as unauthenticated (answers: {})",
                probes.len(),
                answers.join(", ")
            ),
        ));
    }
    if kept.is_empty() {
        return Outcome::NotApplicable(
            "no mock MCP server saw a session opened during `get_health`: no probe session to close"
                .into(),
        );
    }
    Outcome::Kept(kept)
}

pub(super) fn health_no_progress(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let mut kept = Vec::new();
    for s in steps {
        let p = progress_of(s);
        if !p.is_empty() {
            return fail(
                format!(
                    "`get_health` ({}) sent {} progress notification(s)",
                    s.name,
                    p.len()
                ),
                vec![Evidence::new(&s.name, "no progress", excerpt(p[0], 200))],
            );
        }
        if let Some(x) = s.observation.exchange() {
            kept.push(Witness::new(
                &s.name,
                format!(
                    "{} message(s) received, no progress notification",
                    x.messages.len()
                ),
            ));
        }
    }
    if kept.is_empty() {
        return Outcome::Inconclusive("no `get_health` exchange was observed".into());
    }
    Outcome::Kept(kept)
}

/// The `with:` parameters of `HEALTH-004`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HealthStatus {
    /// The status every health answer must report (`ok`, `degraded`, `error`).
    pub(super) status: Option<String>,
    /// Words the health message must contain (server names).
    #[serde(default)]
    pub(super) mentions: Vec<String>,
}

/// The `with:` parameters of `HEALTH-006`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HealthFast {
    /// The budget of one `get_health` answer, in milliseconds (default 1000).
    pub(super) max_ms: Option<f64>,
}

/// The `with:` parameters of `HEALTH-009`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HealthGate {
    /// How Daedalus must gate chat (`enabled`, `disabled`…; a prefix).
    pub(super) gate: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::is_provider_probe;

    #[test]
    fn the_seeds_provider_probes_are_not_inference() {
        assert!(is_provider_probe("GET", "/v1/models"));
        assert!(is_provider_probe("GET", "/v1/models/claude-sonnet-4-5"));
        assert!(is_provider_probe("get", "/models?limit=5"));
        assert!(!is_provider_probe("POST", "/v1/chat/completions"));
        assert!(!is_provider_probe("POST", "/v1/models"));
        assert!(!is_provider_probe("GET", "/v1/models/x/generate"));
        assert!(!is_provider_probe("POST", "/v1/messages"));
    }
}
