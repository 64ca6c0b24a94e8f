//! Health checks (HEALTH-*): the `get_health` tool, its answer, its probes and its timing.

use serde_json::{Value, json};

use super::common::*;
use super::{Evidence, Observed, Outcome, StepRecord, excerpt};
use crate::catalog::params;
use crate::observation::{HealthAnswered, Observation};
use crate::scenario::{ActionKind, CheckSpec};

/// The evaluators of this family, by check ID.
pub(super) const EVALUATORS: &[(&str, super::Evaluator)] = &[
    ("HEALTH-001", health_listed),
    ("HEALTH-002", |c, o| health_body("HEALTH-002", c, o)),
    ("HEALTH-003", |c, o| health_body("HEALTH-003", c, o)),
    ("HEALTH-004", |c, o| health_body("HEALTH-004", c, o)),
    ("HEALTH-005", health_no_llm),
    ("HEALTH-006", health_fast),
    ("HEALTH-007", sessions_closed),
    ("HEALTH-008", health_no_progress),
    ("HEALTH-009", |c, o| health_body("HEALTH-009", c, o)),
];

pub(super) const HEALTH_DESCRIPTION: &str =
    "Returns the health status of this agent and its downstream dependencies.";

/// The tools a `tools/list` answer listed.
pub(super) fn tools_listed(s: &StepRecord) -> &[Value] {
    s.observation
        .result()
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(super) fn health_listed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::ListTools]);
    if steps.is_empty() {
        return na("list_tools");
    }
    for s in steps {
        let Some(t) = tools_listed(s)
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(o.health_tool.as_str()))
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
        let desc = t.get("description").and_then(Value::as_str).unwrap_or("");
        if desc != HEALTH_DESCRIPTION {
            return fail(
                "wrong `get_health` description",
                vec![Evidence::new(&s.name, HEALTH_DESCRIPTION, desc)],
            );
        }
        let schema = t.get("inputSchema").cloned().unwrap_or(Value::Null);
        let ok = schema.get("type") == Some(&json!("object"))
            && schema
                .get("properties")
                .is_none_or(|p| p.as_object().is_some_and(|m| m.is_empty()))
            && schema.get("additionalProperties") == Some(&json!(false));
        if !ok {
            return fail(
                "`get_health` input schema is not the empty object",
                vec![Evidence::new(
                    &s.name,
                    r#"{"type":"object","properties":{},"additionalProperties":false}"#,
                    excerpt(&schema, 200),
                )],
            );
        }
    }
    Outcome::Pass
}

pub(super) fn health_body(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    // HEALTH-009 takes the gate, HEALTH-004 the status and mentions (catalog::params).
    let gate_param: params::HealthGate = match id {
        "HEALTH-009" => match params(c) {
            Ok(p) => p,
            Err(o) => return o,
        },
        _ => Default::default(),
    };
    let status_param: params::HealthStatus = match id {
        "HEALTH-004" => match params(c) {
            Ok(p) => p,
            Err(o) => return o,
        },
        _ => Default::default(),
    };
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    for s in steps {
        if id == "HEALTH-009" {
            let gate = match &s.observation {
                Observation::HealthAnswered(h) => h.gate.as_str(),
                _ => "",
            };
            if let Some(want) = gate_param.gate.as_deref()
                && !gate.starts_with(want)
            {
                return fail(
                    format!("Daedalus would gate chat as `{gate}`"),
                    vec![Evidence::new(&s.name, want, gate)],
                );
            }
            continue;
        }
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
        let status = h.status.as_str();
        match id {
            "HEALTH-002" => {
                if !["ok", "degraded", "error"].contains(&status) {
                    return fail(
                        format!("status `{status}`"),
                        vec![Evidence::new(&s.name, "ok|degraded|error", status)],
                    );
                }
            }
            "HEALTH-003" => {
                if status != "ok" && h.message.as_deref().is_none_or(str::is_empty) {
                    return fail(
                        format!("status `{status}` without a message"),
                        vec![Evidence::new(&s.name, "a message", excerpt(&json!(h), 200))],
                    );
                }
                if let Some(ts) = h.timestamp.as_deref()
                    && chrono::DateTime::parse_from_rfc3339(ts).is_err()
                {
                    return fail(
                        "timestamp is not ISO 8601",
                        vec![Evidence::new(&s.name, "RFC 3339 timestamp", ts)],
                    );
                }
            }
            _ => {
                if let Some(want) = status_param.status.as_deref()
                    && status != want
                {
                    return fail(
                        format!("status `{status}`, expected `{want}`"),
                        vec![Evidence::new(&s.name, want, excerpt(&json!(h), 300))],
                    );
                }
                let msg = h.message.as_deref().unwrap_or("");
                for m in &status_param.mentions {
                    if !msg.contains(m) {
                        return fail(
                            format!("the message does not name `{m}`"),
                            vec![Evidence::new(
                                &s.name,
                                format!("message mentioning {m:?}"),
                                msg,
                            )],
                        );
                    }
                }
            }
        }
    }
    Outcome::Pass
}

pub(super) fn health_no_llm(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
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
    Outcome::Pass
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
    let p: params::HealthFast = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let max = p.max_ms.unwrap_or(1000.0);
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
    }
    Outcome::Pass
}

/// Probe sessions opened during `get_health` must be deleted: `initialize` requests a mock saw
/// while a health step ran are matched against the `DELETE`s it received from then on (a
/// session the agent keeps for its own tool calls is not a probe).
pub(super) fn sessions_closed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    let Some(first) = steps.iter().map(|s| s.started_at.as_str()).min() else {
        return na("health");
    };
    for (name, entries) in &o.mcp_journals {
        let inits = entries
            .iter()
            .filter(|e| {
                e.jsonrpc_method.as_deref() == Some("initialize")
                    && e.status.is_some_and(|s| s < 300)
            })
            .filter(|e| steps.iter().any(|s| within(&e.time, s)))
            .count();
        let deletes = entries
            .iter()
            .filter(|e| e.method == "DELETE" && e.time.as_str() >= first)
            .count();
        if deletes < inits {
            let st = o
                .sessions
                .get(name)
                .map(|s| json!(s).to_string())
                .unwrap_or_default();
            return fail(
                format!(
                    "`{name}` got {inits} probe initialize(s) during get_health but only {deletes} DELETE(s)"
                ),
                vec![Evidence::new(
                    format!("journal of `{name}`"),
                    format!(">= {inits} DELETE"),
                    format!("{deletes} DELETE; sessions {st}"),
                )],
            );
        }
    }
    Outcome::Pass
}

pub(super) fn health_no_progress(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
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
    }
    Outcome::Pass
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
