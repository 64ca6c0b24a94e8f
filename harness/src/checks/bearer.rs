//! Bearer checks (AUTH-*): where an inbound bearer goes and must not go, and secrets in logs.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Deserialize;

use super::common::*;
use super::params::OneOrMany;
use super::premise;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use crate::observation::{Observed, StepRecord};
use crate::scenario::template::render;
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("AUTH-001", auth_forwarded)
        .premise(premise::downstream_call)
        .params::<AuthForwarded>()
        .by_default("— (`server` is required)"),
    Check::new("AUTH-002", auth_not_leaked)
        .premise(premise::downstream_call)
        .params::<AuthNotLeaked>()
        .by_default("every server without `forward_inbound_auth` or an explicit `Authorization`"),
    Check::new("AUTH-003", auth_explicit)
        .premise(premise::downstream_call)
        .params::<AuthExplicit>()
        .by_default("every server with an explicit `Authorization` header; that header, templated"),
    Check::new("AUTH-004", auth_isolation)
        .premise(premise::downstream_call)
        .by_default("(use `steps:` with `for_each`) selected bearer-carrying calls: headers echoed in their result are their own; every bearer in the journals belongs to a call running at that time"),
    Check::new("AUTH-005", auth_none)
        .premise(premise::downstream_call)
        .params::<AuthNone>()
        .by_default("every bearer-less send; every `forward_inbound_auth` server; requests that overlap a bearer-carrying call are not attributed"),
    Check::new("AUTH-006", auth_probes).premise(premise::health_probe),
    Check::new("AUTH-007", |_, o| logs_clean(o)),
    Check::new("AUTH-008", auth_not_to_llm),
];

pub(super) fn bearers(o: &Observed) -> Vec<String> {
    o.steps.iter().filter_map(|s| s.bearer.clone()).collect()
}

pub(super) fn auth_forwarded(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: AuthForwarded = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let Some(server) = p.server.as_deref() else {
        return Outcome::Error("AUTH-001 needs `with: {server: NAME}`".into());
    };
    let Some(entries) = o.mcp_journals.get(server) else {
        return Outcome::Error(format!("no journal for `{server}`"));
    };
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send, ActionKind::Call])
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
        Outcome::kept(
            format!("journal of `{server}`"),
            format!(
                "{n} tools/call request(s) during bearer-carrying steps, each with that step's bearer"
            ),
        )
    }
}

pub(super) fn auth_not_leaked(c: &CheckSpec, o: &Observed) -> Outcome {
    let tokens = bearers(o);
    if tokens.is_empty() {
        return na("bearer-carrying");
    }
    let p: AuthNotLeaked = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let servers: Vec<String> = match p.server.as_deref() {
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
    let mut kept = Vec::new();
    for server in servers {
        let entries = o.mcp_journals.get(&server).into_iter().flatten();
        if let Some(evidence) = bearer_leak(&server, entries, &tokens, "no Authorization") {
            return fail(
                format!("`{server}` received an inbound bearer"),
                vec![evidence],
            );
        }
        let n = o.mcp_journals.get(&server).map_or(0, Vec::len);
        if n > 0 {
            kept.push(Witness::new(
                format!("journal of `{server}`"),
                format!("{n} request(s), none carrying an inbound bearer"),
            ));
        }
    }
    if kept.is_empty() {
        return Outcome::Inconclusive(
            "no request reached a server that does not opt in: nothing could carry a bearer there"
                .into(),
        );
    }
    Outcome::Kept(kept)
}

/// Evidence for the first journal entry whose `Authorization` carries one of the inbound bearers.
pub(super) fn bearer_leak<'a>(
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

/// AUTH-006: a health probe carries no bearer of another request. Seed 001's forwarding reads a
/// request's bearer "with the ContextVar as a fallback for non-persistent probe paths", so a probe
/// made for a `get_health` call that carries a bearer may carry that call's own bearer, and one
/// made while a bearer-carrying call runs may carry that call's: neither is judged. A bearer of a
/// request that had ended before the health call began (or began after it ended) is none of the
/// auth headers the probe is made with, and is a finding.
pub(super) fn auth_probes(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Health]);
    if steps.is_empty() {
        return na("health");
    }
    let mut judged = 0;
    for h in &steps {
        let others: Vec<String> = o
            .steps
            .iter()
            .filter(|x| x.bearer.is_some() && x.bearer != h.bearer && !overlap(x, h))
            .filter_map(|x| x.bearer.clone())
            .collect();
        if others.is_empty() {
            continue;
        }
        judged += 1;
        for (server, entries) in &o.mcp_journals {
            let during = entries.iter().filter(|e| within(&e.time, h));
            if let Some(evidence) = bearer_leak(server, during, &others, "no inbound bearer") {
                return fail(
                    format!(
                        "a health probe to `{server}` during `{}` carried the bearer of another request, which was not running",
                        h.name
                    ),
                    vec![evidence],
                );
            }
        }
    }
    if judged == 0 {
        return Outcome::Inconclusive(
            "no request carried a bearer before or after a health step (the bearer of the health call itself, or of a call running with it, may ride its probes: seed 001's ContextVar fallback for probe paths)".into(),
        );
    }
    let probes: usize = o
        .mcp_journals
        .values()
        .flatten()
        .filter(|e| steps.iter().any(|h| within(&e.time, h)))
        .count();
    if probes == 0 {
        return Outcome::Inconclusive(
            "no downstream request was made during a health step: no probe to carry a bearer"
                .into(),
        );
    }
    Outcome::kept(
        format!("downstream requests during {judged} health step(s)"),
        format!("{probes} request(s), none carrying the bearer of another request"),
    )
}

/// AUTH-008: no model request made while a bearer-carrying call ran carries an inbound bearer
/// in any header (the provider's configured key authenticates it).
pub(super) fn auth_not_to_llm(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send, ActionKind::Call])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    if steps.is_empty() {
        return na("send with a bearer");
    }
    let tokens = bearers(o);
    let mut seen = 0;
    for (llm, entries) in &o.llm_journals {
        for e in entries.iter().filter(|e| {
            e.method == "POST"
                && !e.path.contains("/models")
                && steps.iter().any(|s| within(&e.time, s))
        }) {
            seen += 1;
            let leak = e
                .headers
                .iter()
                .find(|(_, v)| tokens.iter().any(|t| v.contains(t.as_str())));
            if let Some((name, value)) = leak {
                return fail(
                    format!("a model request to `{llm}` carried the inbound bearer"),
                    vec![Evidence::new(
                        format!("{llm} {} {} header `{name}`", e.method, e.path),
                        "the provider's configured key, never the inbound bearer",
                        value.as_str(),
                    )],
                );
            }
        }
    }
    if seen == 0 {
        return Outcome::Inconclusive(
            "no model request was made while a bearer-carrying call ran".into(),
        );
    }
    Outcome::kept(
        "model requests during bearer-carrying calls",
        format!("{seen} request(s), none with the inbound bearer in a header"),
    )
}

pub(super) fn logs_clean(o: &Observed) -> Outcome {
    if !o.logs_available {
        return Outcome::Error("the implementation's logs are not available".into());
    }
    let secrets: Vec<&String> = o
        .vars
        .iter()
        .filter(|(k, _)| k.starts_with("secret."))
        .map(|(_, v)| v)
        .collect();
    if secrets.is_empty() {
        return Outcome::NotApplicable("the scenario holds no secret to look for".into());
    }
    if o.logs.trim().is_empty() {
        return Outcome::Inconclusive(
            "the implementation wrote no output: nothing to scan for secrets".into(),
        );
    }
    for sct in &secrets {
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
    Outcome::kept(
        format!(
            "the implementation's output, scanned for {} secret(s)",
            secrets.len()
        ),
        format!(
            "{} line(s), {} byte(s), none holding a secret",
            o.logs.lines().count(),
            o.logs.len()
        ),
    )
}

/// AUTH-003: an explicitly configured `Authorization` header wins over the inbound bearer.
pub(super) fn auth_explicit(c: &CheckSpec, o: &Observed) -> Outcome {
    let explicit_of = |mock: &str| -> Option<String> {
        let d = o.deployment.as_ref()?;
        d.servers
            .values()
            .filter(|s| s.mock.as_deref() == Some(mock))
            .flat_map(|s| s.headers.iter())
            .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| d.expand_placeholders(&render(v, &o.vars).unwrap_or_else(|_| v.clone())))
    };
    let p: AuthExplicit = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let targets: Vec<(String, String)> = match p.server.as_deref() {
        Some(server) => {
            let Some(h) = p
                .header
                .as_deref()
                .map(|h| render(h, &o.vars).unwrap_or_else(|_| h.to_owned()))
                .or_else(|| explicit_of(server))
            else {
                return Outcome::Error(format!(
                    "AUTH-003 needs `with: {{server, header}}`: `{server}` has no configured Authorization header"
                ));
            };
            vec![(server.to_owned(), h)]
        }
        None => o
            .deployment
            .iter()
            .flat_map(|d| d.servers.values())
            .filter_map(|s| s.mock.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter_map(|m| explicit_of(&m).map(|h| (m, h)))
            .collect(),
    };
    if targets.is_empty() {
        return Outcome::NotApplicable("no server has an explicit Authorization header".into());
    }
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send, ActionKind::Call])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    if steps.is_empty() {
        return na("send with a bearer");
    }
    let mut kept = Vec::new();
    for (server, want) in targets {
        let mut n = 0;
        for e in o.mcp_journals.get(&server).into_iter().flatten() {
            if e.jsonrpc_method.as_deref() != Some("tools/call")
                || !steps.iter().any(|s| within(&e.time, s))
            {
                continue;
            }
            n += 1;
            if e.authorization() != Some(want.as_str()) {
                return fail(
                    format!("`{server}` did not receive its configured Authorization header"),
                    vec![Evidence::new(
                        format!("{server} tools/call {}", e.tool.as_deref().unwrap_or("")),
                        format!("the configured {}", crate::redact::fingerprint(&want)),
                        e.authorization()
                            .map_or_else(|| "absent".to_owned(), crate::redact::fingerprint),
                    )],
                );
            }
        }
        if n == 0 {
            return fail(
                format!("`{server}` received no tool call while a bearer-carrying step ran"),
                vec![],
            );
        }
        kept.push(Witness::new(
            format!("journal of `{server}`"),
            format!(
                "{n} tools/call request(s), each with its configured Authorization ({})",
                crate::redact::fingerprint(&want)
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// AUTH-004: concurrent calls with distinct bearers never see each other's bearer downstream
/// (judged on the journals, and on headers echoed back in the step's own result).
pub(super) fn auth_isolation(c: &CheckSpec, o: &Observed) -> Outcome {
    let all: Vec<&StepRecord> = o.steps.iter().filter(|s| s.bearer.is_some()).collect();
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send, ActionKind::Call])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    let concurrent = steps
        .iter()
        .any(|s| all.iter().any(|x| x.bearer != s.bearer && overlap(x, s)));
    if !concurrent {
        return Outcome::Inconclusive(
            "no bearer-carrying step overlapped another with a different bearer".into(),
        );
    }
    let known: BTreeSet<&str> = all.iter().filter_map(|s| s.bearer.as_deref()).collect();
    let mut attributed = 0;
    for s in &steps {
        let own = s.bearer.as_deref().unwrap_or("");
        // Every text of the result, the answer a profile's `reply_path` reads, and a JSON-RPC
        // error (its message and data) — wherever a bearer could come back.
        let text = format!(
            "{}\n{}\n{}",
            result_text(s),
            s.observation.text().unwrap_or(""),
            s.observation
                .jsonrpc_error()
                .map(|e| e.to_value().to_string())
                .unwrap_or_default()
        );
        let echoed = bearer_tokens(&text);
        if !echoed.is_empty() {
            attributed += 1;
        }
        if let Some(other) = echoed
            .into_iter()
            .find(|t| t != own && known.contains(t.as_str()))
        {
            return fail(
                format!("`{}` saw another call's bearer downstream", s.name),
                vec![Evidence::new(
                    format!("{} result (echoed headers)", s.name),
                    format!("Bearer {own}"),
                    format!("Bearer {other}"),
                )],
            );
        }
    }
    // Each journal entry once: a known bearer must belong to a call running at that time.
    let mut owners: std::collections::BTreeMap<&str, Vec<&StepRecord>> = Default::default();
    for x in &all {
        if let Some(b) = x.bearer.as_deref() {
            owners.entry(b).or_default().push(x);
        }
    }
    for (server, entries) in &o.mcp_journals {
        for e in entries {
            let Some(a) = e.authorization() else { continue };
            let Some(s) = steps.iter().find(|s| within(&e.time, s)) else {
                continue;
            };
            for t in bearer_tokens(a) {
                let Some(own) = owners.get(t.as_str()) else {
                    continue;
                };
                attributed += 1;
                if !own.iter().any(|x| within(&e.time, x)) {
                    return fail(
                        format!(
                            "`{server}` got the bearer of a call that was not running during `{}`",
                            s.name
                        ),
                        vec![Evidence::new(
                            format!(
                                "{server} {} at {}",
                                e.jsonrpc_method.as_deref().unwrap_or(&e.method),
                                e.time
                            ),
                            "a bearer of a call running at that time",
                            a,
                        )],
                    );
                }
            }
        }
    }
    if attributed == 0 {
        return Outcome::Inconclusive(
            "no downstream request during the concurrent calls carried a known bearer, and no result echoed one: nothing to attribute".into(),
        );
    }
    Outcome::kept(
        "bearers seen downstream (journals and echoed headers) during the concurrent calls",
        format!("{attributed} seen, each the bearer of a call running at that time"),
    )
}

/// AUTH-005: a call without a bearer forwards none, even after calls that had one
/// (`with: {step, server}`; default: every bearer-less send and every opted-in server).
pub(super) fn auth_none(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: AuthNone = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let steps: Vec<&StepRecord> = named_steps(o, p.step.as_ref())
        .unwrap_or_else(|| steps_of(o, c, &[ActionKind::Send, ActionKind::Call]))
        .into_iter()
        .filter(|s| {
            s.bearer.is_none()
                && matches!(s.action(), Some(StepAction::Send(_) | StepAction::Call(_)))
        })
        .collect();
    if steps.is_empty() {
        return na("send without a bearer");
    }
    let servers: Vec<(String, bool)> = match p.server.as_deref() {
        Some(s) => {
            let explicit = o
                .deployment
                .iter()
                .flat_map(|d| d.servers.values())
                .any(|x| {
                    x.mock.as_deref() == Some(s)
                        && x.headers
                            .keys()
                            .any(|h| h.eq_ignore_ascii_case("authorization"))
                });
            vec![(s.to_owned(), explicit)]
        }
        None => {
            let Some(d) = &o.deployment else {
                return Outcome::Error("AUTH-005 needs `with: {server}` in attach mode".into());
            };
            d.servers
                .values()
                .filter(|s| s.forward_inbound_auth)
                .filter_map(|s| {
                    let explicit = s
                        .headers
                        .keys()
                        .any(|h| h.eq_ignore_ascii_case("authorization"));
                    s.mock.clone().map(|m| (m, explicit))
                })
                .collect()
        }
    };
    if servers.is_empty() {
        return Outcome::NotApplicable("no server forwards the inbound bearer".into());
    }
    let bearer_steps: Vec<&StepRecord> = o.steps.iter().filter(|s| s.bearer.is_some()).collect();
    let tokens: Vec<&str> = bearer_steps
        .iter()
        .filter_map(|s| s.bearer.as_deref())
        .collect();
    let (mut n, mut overlapped) = (0, 0);
    for (server, explicit) in &servers {
        for e in o.mcp_journals.get(server).into_iter().flatten() {
            if !steps.iter().any(|s| within(&e.time, s)) {
                continue;
            }
            if bearer_steps.iter().any(|b| within(&e.time, b)) {
                // A bearer-carrying call ran too: the entry cannot be attributed by time.
                overlapped += 1;
                continue;
            }
            n += 1;
            let Some(a) = e.authorization() else { continue };
            let leaked = if *explicit {
                tokens.iter().any(|t| a.contains(t))
            } else {
                true
            };
            if leaked {
                return fail(
                    format!(
                        "`{server}` received an Authorization header during a call without a bearer"
                    ),
                    vec![Evidence::new(
                        format!(
                            "{server} {} at {}",
                            e.jsonrpc_method.as_deref().unwrap_or(&e.method),
                            e.time
                        ),
                        if *explicit {
                            "only the configured header"
                        } else {
                            "no Authorization"
                        },
                        a,
                    )],
                );
            }
        }
    }
    if n == 0 && overlapped > 0 {
        return Outcome::Inconclusive(format!(
            "all {overlapped} downstream request(s) during bearer-less steps overlapped bearer-carrying calls; attribute them with an `assert: journal` filter"
        ));
    }
    if n == 0 {
        return Outcome::Inconclusive(format!(
            "no request reached {:?} during a step without a bearer ({})",
            servers.iter().map(|s| &s.0).collect::<Vec<_>>(),
            steps
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Outcome::kept(
        "downstream requests during bearer-less steps",
        format!("{n} request(s), none with a forwarded bearer"),
    )
}

/// The `with:` parameters of `AUTH-001`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthForwarded {
    /// The downstream server (mock name) that must receive each inbound bearer (required).
    pub(super) server: Option<String>,
}

/// The `with:` parameters of `AUTH-002`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthNotLeaked {
    /// The server that must never see an inbound bearer.
    pub(super) server: Option<String>,
}

/// The `with:` parameters of `AUTH-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthExplicit {
    /// The server with an explicit `Authorization` header.
    pub(super) server: Option<String>,
    /// The header value it must receive (templated); default: the configured one.
    pub(super) header: Option<String>,
}

/// The `with:` parameters of `AUTH-005`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthNone {
    /// Bearer-less steps to judge (names or globs).
    pub(super) step: Option<OneOrMany>,
    /// The forwarding server that must receive no bearer.
    pub(super) server: Option<String>,
}
