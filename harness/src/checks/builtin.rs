//! Built-in evaluators of catalogued checks.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Value, json};

use super::{Evidence, Observed, Outcome, StepRecord, excerpt, rules, select_steps, wire};
use crate::scenario::CheckSpec;

const HEALTH_DESCRIPTION: &str =
    "Returns the health status of this agent and its downstream dependencies.";

/// The seed's metrics: name, type, label names.
pub const SEED_METRICS: &[(&str, &str, &[&str])] = &[
    ("pallas_up", "gauge", &[]),
    ("pallas_agent_info", "gauge", &["agent", "port"]),
    (
        "pallas_send_message_total",
        "counter",
        &["agent", "outcome"],
    ),
    (
        "pallas_send_message_duration_seconds",
        "histogram",
        &["agent"],
    ),
    ("pallas_llm_turns_total", "counter", &["agent", "model"]),
    (
        "pallas_llm_tokens_total",
        "counter",
        &["agent", "model", "kind"],
    ),
    (
        "pallas_tool_calls_total",
        "counter",
        &["agent", "server", "operation", "outcome"],
    ),
    (
        "pallas_tool_call_duration_seconds",
        "histogram",
        &["agent", "server", "operation"],
    ),
    ("pallas_downstream_up", "gauge", &["agent", "server"]),
    ("pallas_llm_provider_up", "gauge", &["provider"]),
    ("pallas_agent_health_status", "gauge", &["agent"]),
];

pub(super) fn steps_of<'a>(
    o: &'a Observed,
    c: &CheckSpec,
    actions: &[&str],
) -> Vec<&'a StepRecord> {
    select_steps(&o.steps, &c.steps)
        .into_iter()
        .filter(|s| actions.contains(&s.action.as_str()))
        .collect()
}

pub(super) fn na(what: &str) -> Outcome {
    Outcome::NotApplicable(format!("no {what} step ran"))
}

pub(super) fn fail(reason: impl Into<String>, ev: Vec<Evidence>) -> Outcome {
    Outcome::Fail(reason.into(), ev)
}

pub(super) fn param<'a>(c: &'a CheckSpec, key: &str) -> Option<&'a Value> {
    c.with.as_ref().and_then(|w| w.get(key))
}

pub(super) fn progress_of(s: &StepRecord) -> Vec<Value> {
    s.output
        .get("progress")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn health_of(s: &StepRecord) -> Option<&Value> {
    s.output.get("health").filter(|h| !h.is_null())
}

pub(super) fn within(time: &str, s: &StepRecord) -> bool {
    time >= s.started_at.as_str() && time <= s.ended_at.as_str()
}

/// Runs the evaluator of `id`.
pub fn run(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    match id {
        "REG-001" => reg_schema(c, o),
        "REG-002" => reg_http(c, o),
        "REG-003" | "REG-005" | "REG-007" => reg_vs_deployment(id, c, o),
        "HEALTH-001" => health_listed(c, o),
        "HEALTH-002" | "HEALTH-003" | "HEALTH-004" | "HEALTH-009" => health_body(id, c, o),
        "HEALTH-005" => health_no_llm(c, o),
        "HEALTH-006" => health_fast(c, o),
        "HEALTH-007" => sessions_closed(c, o),
        "HEALTH-008" => {
            let steps = steps_of(o, c, &["health"]);
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
                        vec![Evidence::new(&s.name, "no progress", excerpt(&p[0], 200))],
                    );
                }
            }
            Outcome::Pass
        }
        "PROG-001" | "PROG-002" | "PROG-003" | "PROG-004" | "PROG-005" | "PROG-006"
        | "PROG-007" => progress(id, c, o),
        "AUTH-001" => auth_forwarded(c, o),
        "AUTH-002" => auth_not_leaked(c, o),
        "AUTH-006" => auth_probes(c, o),
        "AUTH-007" => logs_clean(o),
        "MET-001" | "MET-002" => metrics(id, c, o),
        "MSG-001" => message_tool_listed(c, o),
        "MCP-001" => wire_valid(o),
        "MCP-002" => handshake(c, o),
        "MCP-004" => content_types(c, o),
        "MCP-009" => responses(c, o),
        "REG-004" => rules::reg_remotes(c, o),
        "REG-006" => rules::reg_defaults(c, o),
        "PROG-008" => rules::prog_coverage(c, o),
        "PROG-009" => rules::prog_totals(c, o),
        "PROG-010" => rules::prog_cancel(c, o),
        "AUTH-003" => rules::auth_explicit(c, o),
        "AUTH-004" => rules::auth_isolation(c, o),
        "AUTH-005" => rules::auth_none(c, o),
        "MET-003" => rules::met_moves(c, o),
        "MET-004" => rules::met_health_gauges(c, o),
        "MSG-002" => rules::msg_round_trip(c, o),
        "MSG-003" => rules::msg_images(c, o),
        "MSG-004" => rules::msg_provider_failure(c, o),
        "MSG-005" => rules::msg_history(c, o),
        "MCP-003" => rules::mcp_delete(c, o),
        "MCP-005" => rules::mcp_accept(c, o),
        "MCP-006" => rules::mcp_sessions(c, o),
        "MCP-007" => rules::mcp_tool_errors(c, o),
        "MCP-008" => rules::mcp_sse(c, o),
        other => Outcome::Error(format!("check `{other}` has no built-in evaluator")),
    }
}

fn reg_schema(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["registry"]);
    if steps.is_empty() {
        return na("registry");
    }
    let mut ev = Vec::new();
    for s in steps {
        let Some(servers) = s.output.pointer("/body/servers").and_then(Value::as_array) else {
            continue;
        };
        for (i, entry) in servers.iter().enumerate() {
            let server = entry.get("server").unwrap_or(&Value::Null);
            match wire::validate_registry_server(server) {
                Ok(v) => ev.extend(v.into_iter().map(|v| Evidence {
                    what: format!("{} servers[{i}].server", s.name),
                    expected: Some("valid against server.schema.json".into()),
                    seen: Some(format!("{} — {}", v.message, v.excerpt)),
                    path: Some(format!("/servers/{i}/server{}", v.path)),
                })),
                Err(e) => return Outcome::Error(e),
            }
        }
    }
    if ev.is_empty() {
        Outcome::Pass
    } else {
        fail(format!("{} registry schema violation(s)", ev.len()), ev)
    }
}

fn reg_http(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["registry"]);
    if steps.is_empty() {
        return na("registry");
    }
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("registry fetch failed: {e}"), vec![]);
        }
        let status = s.output.get("status").and_then(Value::as_u64).unwrap_or(0);
        let ct = s
            .output
            .get("content_type")
            .and_then(Value::as_str)
            .unwrap_or("");
        if status != 200 {
            return fail(
                format!("registry answered HTTP {status}"),
                vec![Evidence::new(&s.name, "200", status.to_string())],
            );
        }
        if !ct.to_ascii_lowercase().starts_with("application/json") {
            return fail(
                "wrong Content-Type",
                vec![Evidence::new(&s.name, "application/json", ct)],
            );
        }
        if !s
            .output
            .pointer("/body/servers")
            .is_some_and(Value::is_array)
        {
            return fail(
                "no `servers` array",
                vec![Evidence::new(
                    &s.name,
                    "{\"servers\": [...]}",
                    excerpt(s.output.get("text").unwrap_or(&Value::Null), 200),
                )],
            );
        }
    }
    Outcome::Pass
}

fn reg_vs_deployment(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["registry"]);
    let Some(s) = steps.last() else {
        return na("registry");
    };
    let Some(d) = &o.deployment else {
        return Outcome::NotApplicable("no deployment (attach mode)".into());
    };
    let Some(servers) = s.output.pointer("/body/servers").and_then(Value::as_array) else {
        return fail("the registry body has no `servers` array", vec![]);
    };
    let ns = d.namespace.clone().unwrap_or_default();
    let expected: BTreeMap<String, &String> = d
        .agents
        .keys()
        .map(|k| {
            (
                if ns.is_empty() {
                    k.replace('_', "-")
                } else {
                    format!("{ns}/{}", k.replace('_', "-"))
                },
                k,
            )
        })
        .collect();
    let names: Vec<String> = servers
        .iter()
        .filter_map(|e| e.pointer("/server/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    match id {
        "REG-003" => {
            for n in &names {
                if !expected.contains_key(n) {
                    return fail(
                        format!("unexpected registry name `{n}`"),
                        vec![Evidence::new(
                            &s.name,
                            format!("one of {:?}", expected.keys().collect::<Vec<_>>()),
                            n.clone(),
                        )],
                    );
                }
            }
            Outcome::Pass
        }
        "REG-005" => {
            let mut seen = names.clone();
            seen.sort();
            let want: Vec<String> = expected.keys().cloned().collect();
            if seen == want {
                Outcome::Pass
            } else {
                fail(
                    "the registry does not list exactly the deployed agents",
                    vec![Evidence::new(
                        &s.name,
                        format!("{want:?}"),
                        format!("{seen:?}"),
                    )],
                )
            }
        }
        _ => {
            for e in servers {
                let caps = e.pointer("/server/capabilities");
                let name = e
                    .pointer("/server/name")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                match (&d.model_capabilities, caps) {
                    (None, Some(c)) => {
                        return fail(
                            format!("`{name}` publishes capabilities without `model_capabilities`"),
                            vec![Evidence::new(name, "no `capabilities`", excerpt(c, 200))],
                        );
                    }
                    (Some(_), None) => {
                        return fail(
                            format!("`{name}` lacks `capabilities`"),
                            vec![Evidence::new(name, "`capabilities`", "absent")],
                        );
                    }
                    (Some(mc), Some(c)) => {
                        let model = d.model.split_once('.').map_or(d.model.as_str(), |(_, m)| m);
                        let mut want = json!({"model": model});
                        if let Some(v) = mc.vision {
                            want["vision"] = json!(v);
                        }
                        if let Some(v) = mc.context_window {
                            want["context_window"] = json!(v);
                        }
                        if let Some(v) = mc.max_output_tokens {
                            want["max_output_tokens"] = json!(v);
                        }
                        for (k, v) in want.as_object().into_iter().flatten() {
                            if c.get(k) != Some(v) {
                                return fail(
                                    format!("`{name}` capabilities.{k} differs"),
                                    vec![Evidence::new(
                                        format!("{name} capabilities.{k}"),
                                        v.to_string(),
                                        c.get(k).map_or("absent".into(), |x| x.to_string()),
                                    )],
                                );
                            }
                        }
                    }
                    (None, None) => {}
                }
            }
            Outcome::Pass
        }
    }
}

fn health_listed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["list_tools"]);
    if steps.is_empty() {
        return na("list_tools");
    }
    for s in steps {
        let tools = s
            .output
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(t) = tools
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

fn health_body(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["health"]);
    if steps.is_empty() {
        return na("health");
    }
    for s in steps {
        if id == "HEALTH-009" {
            let gate = s.output.get("gate").and_then(Value::as_str).unwrap_or("");
            if let Some(want) = param(c, "gate").and_then(Value::as_str)
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
        let Some(h) = health_of(s) else {
            let why = s
                .output
                .get("health_error")
                .map(|e| excerpt(e, 200))
                .unwrap_or_else(|| "no result".into());
            return fail(
                format!("`get_health` result is not one text block of health JSON: {why}"),
                vec![Evidence::new(
                    &s.name,
                    "one text block holding {status,…}",
                    excerpt(s.output.get("result").unwrap_or(&Value::Null), 300),
                )],
            );
        };
        let status = h.get("status").and_then(Value::as_str).unwrap_or("");
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
                if status != "ok"
                    && h.get("message")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    return fail(
                        format!("status `{status}` without a message"),
                        vec![Evidence::new(&s.name, "a message", excerpt(h, 200))],
                    );
                }
                if let Some(ts) = h.get("timestamp").and_then(Value::as_str)
                    && chrono::DateTime::parse_from_rfc3339(ts).is_err()
                {
                    return fail(
                        "timestamp is not ISO 8601",
                        vec![Evidence::new(&s.name, "RFC 3339 timestamp", ts)],
                    );
                }
            }
            _ => {
                if let Some(want) = param(c, "status").and_then(Value::as_str)
                    && status != want
                {
                    return fail(
                        format!("status `{status}`, expected `{want}`"),
                        vec![Evidence::new(&s.name, want, excerpt(h, 300))],
                    );
                }
                let msg = h.get("message").and_then(Value::as_str).unwrap_or("");
                for m in param(c, "mentions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
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

fn health_no_llm(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["health"]);
    if steps.is_empty() {
        return na("health");
    }
    for (llm, entries) in &o.llm_journals {
        for e in entries {
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

fn health_fast(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["health"]);
    if steps.is_empty() {
        return na("health");
    }
    let max = param(c, "max_ms").and_then(Value::as_f64).unwrap_or(1000.0);
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
fn sessions_closed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["health"]);
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

#[allow(clippy::collapsible_match)]
fn progress(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["send", "call"]);
    if steps.is_empty() {
        return na("send or call");
    }
    let fmt = Regex::new(r"^(?:(?P<tool>[^\s/]+/\S+): (?P<state>started|completed|failed)|(?P<agent>\S+) step (?P<n>\d+) \((?:llm|tool)\))$").ok();
    let prefix = Regex::new(r"^(?P<tool>[^\s/:]+/[^\s:]+):(?P<rest>.*)$").ok();
    let mut judged = false;
    for s in steps {
        let p = progress_of(s);
        match (&s.progress_token, id) {
            (None, "PROG-001") => {
                judged = true;
                if !p.is_empty() {
                    return fail(
                        format!(
                            "`{}` sent no token but got {} progress notification(s)",
                            s.name,
                            p.len()
                        ),
                        vec![Evidence::new(&s.name, "no progress", excerpt(&p[0], 200))],
                    );
                }
            }
            (None, _) | (Some(_), "PROG-001") => {}
            (Some(token), _) => {
                judged = true;
                let mut last: Option<f64> = None;
                let mut step_last: Option<f64> = None;
                let mut started: Vec<String> = Vec::new();
                for (i, n) in p.iter().enumerate() {
                    let params = n.get("params").unwrap_or(&Value::Null);
                    let progress = params.get("progress").and_then(Value::as_f64);
                    let total = params.get("total").and_then(Value::as_f64);
                    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                    let ev = || Evidence {
                        what: format!("{} progress #{i}", s.name),
                        expected: None,
                        seen: Some(excerpt(params, 240)),
                        path: Some(format!("/progress/{i}")),
                    };
                    match id {
                        "PROG-002" => {
                            if params.get("progressToken") != Some(token) {
                                return fail(
                                    "the progress token was not echoed exactly",
                                    vec![Evidence {
                                        expected: Some(token.to_string()),
                                        seen: params.get("progressToken").map(|t| t.to_string()),
                                        ..ev()
                                    }],
                                );
                            }
                        }
                        "PROG-003" => {
                            if let (Some(prev), Some(cur)) = (last, progress)
                                && cur <= prev
                            {
                                return fail(
                                    format!("progress went from {prev} to {cur}"),
                                    vec![Evidence {
                                        expected: Some(format!("> {prev}")),
                                        ..ev()
                                    }],
                                );
                            }
                            last = progress.or(last);
                        }
                        "PROG-004" => {
                            // The numbers, not the wording (PROG-005): `started` with no total,
                            // loop steps increasing with no total, ends at total = progress.
                            let started_note = prefix
                                .as_ref()
                                .and_then(|r| r.captures(message))
                                .is_some_and(|cp| cp["rest"].trim() == "started");
                            let ok = match (progress, total) {
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
                                return fail("progress does not follow the seed's pattern", vec![Evidence { expected: Some("started: 0; step N: increasing, total null; completed/failed: progress = total".into()), ..ev() }]);
                            }
                        }
                        "PROG-005" => {
                            if !fmt.as_ref().is_some_and(|r| r.is_match(message)) {
                                return fail(format!("unexpected progress message {message:?}"), vec![Evidence { expected: Some("{server}/{tool}: started|completed|failed or {agent} step N (llm|tool)".into()), ..ev() }]);
                            }
                        }
                        "PROG-006" => {
                            // `{server}/{tool}: started` opens; a `{server}/{tool}:` note at
                            // total = progress (or worded completed/failed) closes, whatever
                            // its text (an error message counts).
                            if let Some(cp) = prefix.as_ref().and_then(|r| r.captures(message)) {
                                let tool = cp["tool"].to_owned();
                                let rest = cp["rest"].trim();
                                let worded_end = fmt
                                    .as_ref()
                                    .and_then(|r| r.captures(message))
                                    .is_some_and(|c| {
                                        c.name("state").is_some_and(|m| m.as_str() != "started")
                                    });
                                let terminal =
                                    worded_end || (progress.is_some() && total == progress);
                                if rest == "started" {
                                    started.push(tool);
                                } else if terminal {
                                    if let Some(pos) = started.iter().position(|t| *t == tool) {
                                        started.remove(pos);
                                    } else {
                                        return fail(
                                            format!("`{tool}` ended before it started"),
                                            vec![ev()],
                                        );
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
                if id == "PROG-006" && !started.is_empty() {
                    return fail(format!("started but never completed: {started:?}"), vec![]);
                }
                if id == "PROG-007" {
                    let after = s
                        .output
                        .get("after_response")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    if let Some(first) = after.first() {
                        return fail(
                            format!("{} message(s) after the result", after.len()),
                            vec![Evidence::new(
                                &s.name,
                                "nothing after the result",
                                excerpt(first, 240),
                            )],
                        );
                    }
                }
            }
        }
    }
    if judged {
        Outcome::Pass
    } else {
        Outcome::NotApplicable(
            "no step of the right kind (with or without a progress token)".into(),
        )
    }
}

fn bearers(o: &Observed) -> Vec<String> {
    o.steps.iter().filter_map(|s| s.bearer.clone()).collect()
}

fn auth_forwarded(c: &CheckSpec, o: &Observed) -> Outcome {
    let Some(server) = param(c, "server").and_then(Value::as_str) else {
        return Outcome::Error("AUTH-001 needs `with: {server: NAME}`".into());
    };
    let Some(entries) = o.mcp_journals.get(server) else {
        return Outcome::Error(format!("no journal for `{server}`"));
    };
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send", "call"])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    if steps.is_empty() {
        return na("send with a bearer");
    }
    let mut n = 0;
    for s in &steps {
        let overlapping = o.steps.iter().any(|x| {
            x.name != s.name
                && x.started_at < s.ended_at
                && s.started_at < x.ended_at
                && x.bearer.is_some()
        });
        if overlapping {
            continue;
        }
        let want = format!("Bearer {}", s.bearer.as_deref().unwrap_or(""));
        for e in entries
            .iter()
            .filter(|e| e.jsonrpc_method.as_deref() == Some("tools/call") && within(&e.time, s))
        {
            n += 1;
            if e.authorization() != Some(want.as_str()) {
                return fail(
                    format!(
                        "`{server}` did not receive the inbound bearer of `{}`",
                        s.name
                    ),
                    vec![Evidence::new(
                        format!("{server} tools/call {}", e.tool.as_deref().unwrap_or("")),
                        want.clone(),
                        e.authorization().unwrap_or("absent"),
                    )],
                );
            }
        }
    }
    if n == 0 {
        fail(
            format!("`{server}` received no tool call while a bearer-carrying step ran"),
            vec![],
        )
    } else {
        Outcome::Pass
    }
}

fn auth_not_leaked(c: &CheckSpec, o: &Observed) -> Outcome {
    let tokens = bearers(o);
    if tokens.is_empty() {
        return na("bearer-carrying");
    }
    let servers: Vec<String> = match param(c, "server").and_then(Value::as_str) {
        Some(s) => vec![s.to_owned()],
        None => {
            let Some(d) = &o.deployment else {
                return Outcome::NotApplicable("no deployment".into());
            };
            d.servers
                .values()
                .filter(|s| {
                    !s.forward_inbound_auth
                        && !s
                            .headers
                            .keys()
                            .any(|h| h.eq_ignore_ascii_case("authorization"))
                })
                .filter_map(|s| s.mock.clone())
                .collect()
        }
    };
    for server in servers {
        let entries = o.mcp_journals.get(&server).into_iter().flatten();
        if let Some(evidence) = bearer_leak(&server, entries, &tokens, "no Authorization") {
            return fail(
                format!("`{server}` received an inbound bearer"),
                vec![evidence],
            );
        }
    }
    Outcome::Pass
}

/// Evidence for the first journal entry whose `Authorization` carries one of the inbound bearers.
fn bearer_leak<'a>(
    server: &str,
    entries: impl IntoIterator<Item = &'a pallas_mocks::McpJournalEntry>,
    tokens: &[String],
    expected: &str,
) -> Option<Evidence> {
    entries.into_iter().find_map(|e| {
        let a = e.authorization()?;
        tokens.iter().any(|t| a.contains(t.as_str())).then(|| {
            Evidence::new(
                format!(
                    "{server} {}",
                    e.jsonrpc_method.as_deref().unwrap_or(&e.method)
                ),
                expected,
                a,
            )
        })
    })
}

fn auth_probes(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["health"]);
    if steps.is_empty() {
        return na("health");
    }
    let tokens = bearers(o);
    for (server, entries) in &o.mcp_journals {
        let during_health = entries
            .iter()
            .filter(|e| steps.iter().any(|s| within(&e.time, s)));
        if let Some(evidence) = bearer_leak(server, during_health, &tokens, "no inbound bearer") {
            return fail(
                format!("a health probe to `{server}` carried an inbound bearer"),
                vec![evidence],
            );
        }
    }
    Outcome::Pass
}

fn logs_clean(o: &Observed) -> Outcome {
    if !o.logs_available {
        return Outcome::Error("the implementation's logs are not available".into());
    }
    let secrets: Vec<&String> = o
        .vars
        .iter()
        .filter(|(k, _)| k.starts_with("secret."))
        .map(|(_, v)| v)
        .collect();
    for sct in secrets {
        if let Some(line) = o.logs.lines().find(|l| l.contains(sct.as_str())) {
            return fail(
                "a secret appears in the implementation's output",
                vec![Evidence::new(
                    "log line",
                    "no secret",
                    line.chars().take(300).collect::<String>(),
                )],
            );
        }
    }
    Outcome::Pass
}

fn metrics(id: &str, c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["metrics"]);
    if steps.is_empty() {
        return na("metrics");
    }
    for s in steps {
        let status = s.output.get("status").and_then(Value::as_u64).unwrap_or(0);
        if id == "MET-001" {
            let ct = s
                .output
                .get("content_type")
                .and_then(Value::as_str)
                .unwrap_or("");
            if status != 200 {
                return fail(
                    format!("/metrics answered HTTP {status}"),
                    vec![Evidence::new(&s.name, "200", status.to_string())],
                );
            }
            if !ct.starts_with("text/plain") {
                return fail(
                    "wrong Content-Type",
                    vec![Evidence::new(&s.name, "text/plain; version=0.0.4", ct)],
                );
            }
            if let Some(e) = s
                .output
                .get("parse_errors")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
            {
                return fail(
                    "the exposition does not parse",
                    vec![Evidence::new(
                        &s.name,
                        "valid Prometheus text",
                        excerpt(e, 200),
                    )],
                );
            }
            continue;
        }
        let families = s
            .output
            .get("families")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut absent = Vec::new();
        for (name, kind, labels) in SEED_METRICS {
            // A counter may be declared under its base name (OpenMetrics style).
            let base = name.strip_suffix("_total").unwrap_or(name);
            let Some(f) = families.iter().find(|f| {
                f.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n == *name || n == base)
            }) else {
                absent.push(*name);
                continue;
            };
            // A family declared by `# HELP`/`# TYPE` without samples (a labelled metric
            // nothing has touched yet) is present: its declared type still has to match.
            let k = f.get("kind").and_then(Value::as_str).unwrap_or("");
            if k != *kind {
                return fail(
                    format!("`{name}` has type {k}"),
                    vec![Evidence::new(name.to_string(), kind.to_string(), k)],
                );
            }
            for sample in f
                .get("samples")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let sname = sample.get("name").and_then(Value::as_str).unwrap_or("");
                // Histogram series carry `le` besides the family labels.
                let have: Vec<&str> = sample
                    .get("labels")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.keys()
                            .map(String::as_str)
                            .filter(|k| *k != "le")
                            .collect()
                    })
                    .unwrap_or_default();
                for l in *labels {
                    if !have.contains(l) {
                        return fail(
                            format!("`{sname}` lacks label `{l}`"),
                            vec![Evidence::new(
                                sname,
                                format!("labels {labels:?}"),
                                format!("{have:?}"),
                            )],
                        );
                    }
                }
            }
        }
        if !absent.is_empty() {
            return fail(
                format!(
                    "{} seed metric famil{} absent altogether (neither samples nor HELP/TYPE): {}",
                    absent.len(),
                    if absent.len() == 1 { "y is" } else { "ies are" },
                    absent.join(", ")
                ),
                absent
                    .iter()
                    .map(|name| {
                        let kind = SEED_METRICS
                            .iter()
                            .find(|(n, _, _)| n == name)
                            .map_or("", |m| m.1);
                        Evidence::new(&s.name, format!("{name} ({kind})"), "absent")
                    })
                    .collect(),
            );
        }
    }
    Outcome::Pass
}

fn message_tool_listed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["list_tools"]);
    if steps.is_empty() {
        return na("list_tools");
    }
    for s in steps {
        let agent = s.agent.clone().unwrap_or_default();
        let want = o
            .message_tools
            .get(&agent)
            .cloned()
            .unwrap_or_else(|| "send_message".into());
        let tools = s
            .output
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(t) = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(want.as_str()))
        else {
            return fail(
                format!("`{want}` is not listed"),
                vec![Evidence::new(
                    &s.name,
                    format!("a tool named `{want}`"),
                    "none",
                )],
            );
        };
        let schema = t.get("inputSchema").cloned().unwrap_or(Value::Null);
        let msg_type = schema
            .pointer("/properties/message/type")
            .and_then(Value::as_str);
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.contains(&json!("message")));
        if msg_type != Some("string") || !required {
            return fail(
                "`message` is not a required string",
                vec![Evidence::new(
                    &s.name,
                    "properties.message.type = string, required",
                    excerpt(&schema, 300),
                )],
            );
        }
        if let Some(images) = schema.pointer("/properties/images")
            && images.get("type").is_some_and(|t| {
                t != "array" && !t.as_array().is_some_and(|a| a.contains(&json!("array")))
            })
        {
            return fail(
                "`images` is not an array",
                vec![Evidence::new(
                    &s.name,
                    "images: array",
                    excerpt(images, 200),
                )],
            );
        }
    }
    Outcome::Pass
}

fn wire_valid(o: &Observed) -> Outcome {
    if o.received.is_empty() {
        return Outcome::NotApplicable("no JSON-RPC message received".into());
    }
    let mut ev = Vec::new();
    // JSON-RPC 2.0 §5: an error to a request that could not be parsed or attributed
    // carries `"id": null`; the MCP schema lacks that shape, so it is a SHOULD matter.
    let mut null_id = Vec::new();
    for m in &o.received {
        let sink = if is_null_id_error(&m.message) {
            &mut null_id
        } else {
            &mut ev
        };
        match wire::validate_mcp(&m.version, &m.message, m.request_method.as_deref()) {
            Ok(v) => sink.extend(v.into_iter().map(|v| Evidence {
                what: format!(
                        "{} message {}",
                        m.label,
                        m.message
                            .get("method")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .or_else(|| m.message.get("id").map(|i| format!("id {i}")))
                            .unwrap_or_default()
                    ),
                expected: Some(format!("valid against MCP {} schema", m.version)),
                seen: Some(format!("{} — {}", v.message, v.excerpt)),
                path: Some(v.path),
            })),
            Err(e) => return Outcome::Error(e),
        }
        if ev.len() >= 10 {
            break;
        }
    }
    if !ev.is_empty() {
        fail(format!("{} schema violation(s)", ev.len()), ev)
    } else if !null_id.is_empty() {
        Outcome::Should(
            format!(
                "{} error response(s) with \"id\": null (JSON-RPC 2.0 §5 for an unattributable request; not in the MCP schema)",
                null_id.len()
            ),
            null_id,
        )
    } else {
        Outcome::Pass
    }
}

/// A JSON-RPC error response whose `id` is `null`.
fn is_null_id_error(m: &Value) -> bool {
    m.get("id").is_some_and(Value::is_null) && m.get("error").is_some()
}

fn handshake(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["connect"]);
    if steps.is_empty() {
        return na("connect");
    }
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("`{}` failed: {e}", s.name), vec![]);
        }
        let v = s
            .output
            .get("protocol_version")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !["2025-11-25", "2026-07-28", "2025-06-18", "2025-03-26"].contains(&v) {
            return fail(
                format!("negotiated `{v}`"),
                vec![Evidence::new(&s.name, "a supported revision", v)],
            );
        }
        // Issuing a session is optional (MCP transports: a server MAY assign one); an issued
        // id MUST only contain visible ASCII (0x21–0x7E).
        if let Some(id) = s.output.get("session_id").and_then(Value::as_str)
            && (id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        {
            return fail(
                "the `Mcp-Session-Id` is not visible ASCII",
                vec![Evidence::new(
                    &s.name,
                    "characters 0x21–0x7E",
                    format!("{id:?}"),
                )],
            );
        }
    }
    Outcome::Pass
}

fn content_types(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(
        o,
        c,
        &["list_tools", "health", "send", "call", "history", "connect"],
    );
    if steps.is_empty() {
        return na("MCP request");
    }
    for s in steps {
        let status = s.output.get("status").and_then(Value::as_u64).unwrap_or(0);
        if status != 200 {
            continue;
        }
        let ct = s
            .output
            .get("content_type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        if !(ct.starts_with("application/json") || ct.starts_with("text/event-stream")) {
            return fail(
                format!("`{}` answered Content-Type {ct:?}", s.name),
                vec![Evidence::new(
                    &s.name,
                    "application/json or text/event-stream",
                    ct,
                )],
            );
        }
    }
    Outcome::Pass
}

fn responses(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["list_tools", "health", "send", "call", "history"]);
    if steps.is_empty() {
        return na("MCP request");
    }
    for s in steps {
        if s.timed_out {
            return Outcome::Error(format!(
                "`{}` got no response before its step timeout: nothing observed to judge (a timeout is not a failure)",
                s.name
            ));
        }
        if s.output
            .get("cancelled_at_ms")
            .is_some_and(|v| !v.is_null())
        {
            continue; // the client cancelled it: the receiver should not answer
        }
        if s.error.is_none()
            && s.output.get("response").is_none_or(Value::is_null)
            && s.output.get("status").and_then(Value::as_u64) == Some(200)
        {
            return fail(
                format!("`{}` got no JSON-RPC response", s.name),
                vec![Evidence::new(
                    &s.name,
                    "a response with the request id",
                    "none",
                )],
            );
        }
    }
    Outcome::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Observed;

    fn step(
        name: &str,
        token: Option<Value>,
        progress: Vec<Value>,
        after: Vec<Value>,
    ) -> StepRecord {
        StepRecord {
            name: name.into(),
            action: "send".into(),
            agent: Some("research".into()),
            started_at: "2026-01-01T00:00:00.000000Z".into(),
            ended_at: "2026-01-01T00:00:01.000000Z".into(),
            output: json!({"progress": progress, "after_response": after}),
            progress_token: token,
            ..StepRecord::default()
        }
    }

    fn note(token: Value, progress: f64, total: Option<f64>, message: &str) -> Value {
        let mut p = json!({"progressToken": token, "progress": progress, "message": message});
        if let Some(t) = total {
            p["total"] = json!(t);
        }
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p})
    }

    fn observed(steps: Vec<StepRecord>) -> Observed {
        Observed {
            steps,
            ..Observed::default()
        }
    }

    fn verdict(id: &str, o: &Observed) -> Outcome {
        run(id, &CheckSpec::default(), o)
    }

    fn seed_pattern(token: Value) -> Vec<Value> {
        vec![
            note(
                token.clone(),
                0.0,
                None,
                "research/research__research: started",
            ),
            note(token.clone(), 1.0, None, "harper step 1 (tool)"),
            note(token.clone(), 2.0, None, "harper step 2 (llm)"),
            note(
                token,
                1.0,
                Some(1.0),
                "research/research__research: completed",
            ),
        ]
    }

    #[test]
    fn the_seeds_pattern_is_pallas_compatible_but_not_spec_strict() {
        let o = observed(vec![step(
            "s",
            Some(json!("abc")),
            seed_pattern(json!("abc")),
            vec![],
        )]);
        assert_eq!(verdict("PROG-004", &o), Outcome::Pass);
        assert_eq!(verdict("PROG-005", &o), Outcome::Pass);
        assert_eq!(verdict("PROG-006", &o), Outcome::Pass);
        assert!(matches!(verdict("PROG-003", &o), Outcome::Fail(..)));
    }

    #[test]
    fn prog_004_and_006_judge_the_numbers_not_the_wording() {
        let t = json!("t");
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![
                note(t.clone(), 0.0, None, "research/search: started"),
                note(t.clone(), 1.0, None, "harper: thinking (turn 1)"),
                note(t.clone(), 2.0, Some(2.0), "research/search: Error: quota"),
                note(t.clone(), 3.0, Some(3.0), "harper finished"),
            ],
            vec![],
        )]);
        assert_eq!(verdict("PROG-004", &o), Outcome::Pass);
        assert_eq!(verdict("PROG-006", &o), Outcome::Pass);
        assert!(matches!(verdict("PROG-005", &o), Outcome::Fail(..)));
        // Numbers still count: a step that goes backwards, an end below its total.
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![
                note(t.clone(), 2.0, None, "harper step 2 (llm)"),
                note(t.clone(), 1.0, None, "harper step 1 (llm)"),
            ],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-004", &o), Outcome::Fail(..)));
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![note(
                t.clone(),
                1.0,
                Some(2.0),
                "research/search: completed",
            )],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-004", &o), Outcome::Fail(..)));
        // A tool whose only later note is not terminal never ended.
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![
                note(t.clone(), 0.0, None, "research/search: started"),
                note(t, 1.0, None, "research/search: Error: quota"),
            ],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-006", &o), Outcome::Fail(..)));
    }

    #[test]
    fn an_error_with_a_null_id_is_a_should_matter_for_mcp_001() {
        let msg = |m: Value| crate::checks::ReceivedMessage {
            label: "a".into(),
            version: "2025-11-25".into(),
            message: m,
            request_method: None,
        };
        let mut o = observed(vec![]);
        o.received = vec![msg(
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "bad session"}}),
        )];
        let Outcome::Should(reason, _) = verdict("MCP-001", &o) else {
            panic!("JSON-RPC 2.0 allows a null id here")
        };
        assert!(reason.contains("null"), "{reason}");
        o.received.push(msg(json!({"jsonrpc": "2.0", "id": 1})));
        assert!(matches!(verdict("MCP-001", &o), Outcome::Fail(..)));
    }

    #[test]
    fn a_token_of_another_type_is_not_an_exact_echo() {
        let o = observed(vec![step(
            "s",
            Some(json!(42)),
            seed_pattern(json!("42")),
            vec![],
        )]);
        let Outcome::Fail(reason, ev) = verdict("PROG-002", &o) else {
            panic!("should fail")
        };
        assert!(reason.contains("not echoed exactly"));
        assert_eq!(ev[0].expected.as_deref(), Some("42"));
        assert_eq!(ev[0].seen.as_deref(), Some("\"42\""));
    }

    #[test]
    fn progress_without_a_token_fails_prog_001() {
        let o = observed(vec![step(
            "s",
            None,
            vec![note(json!("x"), 0.0, None, "a/b: started")],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-001", &o), Outcome::Fail(..)));
        let o = observed(vec![step("s", None, vec![], vec![])]);
        assert_eq!(verdict("PROG-001", &o), Outcome::Pass);
    }

    #[test]
    fn a_notification_after_the_result_fails_prog_007() {
        let late = note(json!("t"), 5.0, None, "harper step 5 (llm)");
        let o = observed(vec![step(
            "s",
            Some(json!("t")),
            vec![late.clone()],
            vec![late],
        )]);
        assert!(matches!(verdict("PROG-007", &o), Outcome::Fail(..)));
    }

    #[test]
    fn completed_before_started_fails_prog_006_and_bad_messages_fail_prog_005() {
        let t = json!("t");
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![note(t.clone(), 1.0, Some(1.0), "a/b: completed")],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-006", &o), Outcome::Fail(..)));
        let o = observed(vec![step(
            "s",
            Some(t.clone()),
            vec![note(t, 1.0, None, "working…")],
            vec![],
        )]);
        assert!(matches!(verdict("PROG-005", &o), Outcome::Fail(..)));
    }

    #[test]
    fn a_bearer_reaching_a_plain_server_fails_auth_002() {
        let mut s = step("s", None, vec![], vec![]);
        s.bearer = Some("tok-9".into());
        let mut o = observed(vec![s]);
        let entry: pallas_mocks::McpJournalEntry = serde_json::from_value(json!({
            "time": "2026-01-01T00:00:00.500000Z", "method": "POST",
            "headers": {"authorization": "Bearer tok-9"}, "jsonrpc_method": "tools/call", "tool": "forecast"
        }))
        .unwrap();
        o.mcp_journals.insert("weather".into(), vec![entry]);
        let c = CheckSpec {
            with: Some(json!({"server": "weather"})),
            ..CheckSpec::default()
        };
        assert!(matches!(run("AUTH-002", &c, &o), Outcome::Fail(..)));
        o.mcp_journals.get_mut("weather").unwrap()[0]
            .headers
            .clear();
        assert_eq!(run("AUTH-002", &c, &o), Outcome::Pass);
    }

    #[test]
    fn an_unhealthy_answer_fails_the_status_expectation_and_the_message_rule() {
        let mut s = step("h", None, vec![], vec![]);
        s.action = "health".into();
        s.output = json!({"health": {"status": "degraded"}, "gate": "warning: "});
        let o = observed(vec![s]);
        assert!(matches!(verdict("HEALTH-003", &o), Outcome::Fail(..)));
        let c = CheckSpec {
            with: Some(json!({"status": "ok"})),
            ..CheckSpec::default()
        };
        assert!(matches!(run("HEALTH-004", &c, &o), Outcome::Fail(..)));
        let c = CheckSpec {
            with: Some(json!({"gate": "allowed"})),
            ..CheckSpec::default()
        };
        assert!(matches!(run("HEALTH-009", &c, &o), Outcome::Fail(..)));
    }
}
