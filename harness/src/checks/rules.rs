//! Built-in evaluators of the registry remote and default rules, progress coverage and
//! cancellation, explicit, concurrent and absent bearers, metric movement, messages, history and
//! the MCP session, Accept, tool-error and SSE rules.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::builtin::{fail, na, param, progress_of, steps_of, within};
use super::{Evidence, Observed, Outcome, StepRecord, excerpt, select_steps};
use crate::scenario::CheckSpec;
use crate::scenario::template::render;

/// Step actions that talk MCP to an agent.
const MCP_ACTIONS: &[&str] = &[
    "connect",
    "list_tools",
    "health",
    "send",
    "call",
    "history",
    "request",
    "raw",
    "delete",
];

/// A parameter that may be one string or a list of strings.
fn param_strs(c: &CheckSpec, key: &str) -> Vec<String> {
    match param(c, key) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Steps named by `with: {key: …}` (globs), when the key is present.
fn named_steps<'a>(o: &'a Observed, c: &CheckSpec, key: &str) -> Option<Vec<&'a StepRecord>> {
    let names = param_strs(c, key);
    (!names.is_empty()).then(|| select_steps(&o.steps, &names))
}

fn status(s: &StepRecord) -> u64 {
    s.output.get("status").and_then(Value::as_u64).unwrap_or(0)
}

fn is_error_result(s: &StepRecord) -> bool {
    s.output
        .pointer("/result/isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn jsonrpc_error(s: &StepRecord) -> Option<&Value> {
    s.output.get("error").filter(|e| !e.is_null())
}

fn result_text(s: &StepRecord) -> String {
    let mut out = String::new();
    collect_text(s.output.get("result").unwrap_or(&Value::Null), &mut out);
    out
}

/// Every `text` string inside a value, newline-separated.
fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "text"
                    && let Some(t) = x.as_str()
                {
                    out.push_str(t);
                    out.push('\n');
                } else {
                    collect_text(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        _ => {}
    }
}

/// Whether two steps ran at the same time.
fn overlap(a: &StepRecord, b: &StepRecord) -> bool {
    a.started_at < b.ended_at && b.started_at < a.ended_at
}

fn header<'a>(request: &'a Value, name: &str) -> Option<&'a str> {
    request
        .get("headers")
        .and_then(Value::as_object)?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_str())
}

// ---------------------------------------------------------------- registry

/// REG-004: every entry has a `streamable-http` remote pointing at a deployed, live endpoint.
pub(super) fn reg_remotes(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &["registry"]);
    if steps.is_empty() {
        return na("registry");
    }
    for s in steps {
        let Some(servers) = s.output.pointer("/body/servers").and_then(Value::as_array) else {
            continue; // REG-002 reports the missing array
        };
        for (i, e) in servers.iter().enumerate() {
            let name = e
                .pointer("/server/name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let remotes = e
                .pointer("/server/remotes")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let Some(url) = remotes
                .iter()
                .find(|r| r.get("type").and_then(Value::as_str) == Some("streamable-http"))
                .and_then(|r| r.get("url").and_then(Value::as_str))
            else {
                return fail(
                    format!("`{name}` has no `streamable-http` remote with a URL"),
                    vec![Evidence {
                        path: Some(format!("/servers/{i}/server/remotes")),
                        ..Evidence::new(
                            &s.name,
                            "{\"type\": \"streamable-http\", \"url\": …}",
                            excerpt(&json!(remotes), 300),
                        )
                    }],
                );
            };
            let parsed = match reqwest::Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => u,
                _ => {
                    return fail(
                        format!("`{name}` remote URL {url:?} is not an http(s) URL"),
                        vec![Evidence::new(&s.name, "an http(s) URL", url)],
                    );
                }
            };
            if o.agent_urls.is_empty() {
                continue;
            }
            let same = |u: &str| {
                reqwest::Url::parse(u).is_ok_and(|a| {
                    a.port_or_known_default() == parsed.port_or_known_default()
                        && a.path().trim_end_matches('/') == parsed.path().trim_end_matches('/')
                })
            };
            let Some((agent, _)) = o.agent_urls.iter().find(|(_, u)| same(u)) else {
                return fail(
                    format!("`{name}` remote {url} is no deployed agent endpoint"),
                    vec![Evidence::new(
                        &s.name,
                        format!(
                            "one of {:?} (port and path)",
                            o.agent_urls.values().collect::<Vec<_>>()
                        ),
                        url,
                    )],
                );
            };
            let talks: Vec<&StepRecord> = o
                .steps
                .iter()
                .filter(|x| x.agent.as_deref() == Some(agent.as_str()))
                .filter(|x| {
                    ["connect", "list_tools", "health", "send", "call"].contains(&x.action.as_str())
                })
                .collect();
            if !talks.is_empty() && !talks.iter().any(|x| x.error.is_none() && status(x) == 200) {
                return fail(
                    format!("`{name}` remote {url} never answered an MCP request"),
                    vec![Evidence::new(
                        &talks[0].name,
                        "HTTP 200 from the endpoint",
                        talks[0]
                            .error
                            .clone()
                            .unwrap_or_else(|| format!("HTTP {}", status(talks[0]))),
                    )],
                );
            }
        }
    }
    Outcome::Pass
}

/// Python's `str.title()`: the documented default title of an agent key.
pub fn python_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for ch in s.chars() {
        if ch.is_alphabetic() {
            if prev_cased {
                out.extend(ch.to_lowercase());
            } else {
                out.extend(ch.to_uppercase());
            }
            prev_cased = true;
        } else {
            out.push(ch);
            prev_cased = false;
        }
    }
    out
}

/// REG-006: title, description and version follow the configuration and its defaults.
pub(super) fn reg_defaults(c: &CheckSpec, o: &Observed) -> Outcome {
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
    let version = d.version.clone().unwrap_or_else(|| "1.0.0".into());
    let mut judged = 0;
    for (key, a) in &d.agents {
        let slug = key.replace('_', "-");
        let Some(entry) = servers.iter().find(|e| {
            e.pointer("/server/name")
                .and_then(Value::as_str)
                .is_some_and(|n| n == slug || n.ends_with(&format!("/{slug}")))
        }) else {
            continue; // REG-005 reports missing agents
        };
        judged += 1;
        let mut want = vec![
            (
                "title",
                a.title.clone().unwrap_or_else(|| python_title(key)),
            ),
            ("version", version.clone()),
        ];
        if let Some(desc) = &a.description {
            want.push(("description", desc.clone()));
        }
        for (field, expected) in want {
            let seen = entry.pointer(&format!("/server/{field}"));
            if seen.and_then(Value::as_str) != Some(expected.as_str()) {
                return fail(
                    format!("`{key}` registry {field} differs from the configuration"),
                    vec![Evidence {
                        path: Some(format!("/server/{field}")),
                        ..Evidence::new(
                            format!("{} entry of `{key}`", s.name),
                            expected,
                            seen.map_or("absent".into(), |v| excerpt(v, 200)),
                        )
                    }],
                );
            }
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable("no deployed agent is listed".into());
    }
    Outcome::Pass
}

// ---------------------------------------------------------------- progress

fn tool_message_re() -> Option<Regex> {
    Regex::new(r"^(?P<server>[^\s/]+)/(?P<tool>\S+): (?P<state>started|completed|failed)$").ok()
}

/// Whether a progress message's `{server}/{tool}` names `server`/`tool` (fast-agent
/// namespaces tools as `{server}__{tool}`).
fn names_tool(msg_server: &str, msg_tool: &str, server: &str, tool: &str) -> bool {
    msg_server == server
        && (msg_tool == tool
            || msg_tool.ends_with(&format!("__{tool}"))
            || msg_tool.ends_with(&format!("-{tool}")))
}

/// PROG-008: at least one `started` and one `completed|failed` per downstream tool invoked.
pub(super) fn prog_coverage(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send", "call"])
        .into_iter()
        .filter(|s| s.progress_token.is_some())
        .collect();
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
    let listed: Vec<(String, String)> = param_strs(c, "tools")
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
                x.name != s.name && ["send", "call"].contains(&x.action.as_str()) && overlap(x, s)
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
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send", "call"])
        .into_iter()
        .filter(|s| s.progress_token.is_some())
        .collect();
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
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send"])
        .into_iter()
        .filter(|s| {
            s.request
                .get("cancel_after_progress")
                .is_some_and(|v| !v.is_null())
                || s.output.get("cancelled_at_ms").is_some()
        })
        .collect();
    if steps.is_empty() {
        return na("send with `cancel_after_progress`");
    }
    let grace = param(c, "grace_ms")
        .and_then(Value::as_f64)
        .unwrap_or(250.0);
    for s in steps {
        let Some(at) = s.output.get("cancelled_at_ms").and_then(Value::as_f64) else {
            return Outcome::Error(format!(
                "`{}` never sent its cancellation ({} progress notification(s) arrived)",
                s.name,
                progress_of(s).len()
            ));
        };
        let late: Vec<&Value> = s
            .output
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| m.pointer("/message/method") == Some(&json!("notifications/progress")))
            .filter(|m| {
                m.get("at_ms")
                    .and_then(Value::as_f64)
                    .is_some_and(|t| t > at + grace)
            })
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
                    excerpt(first, 240),
                )],
            );
        }
    }
    Outcome::Pass
}

// ---------------------------------------------------------------- bearer

static BEARER_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"Bearer ([A-Za-z0-9._~+/=-]+)").ok());

fn bearer_tokens(text: &str) -> Vec<String> {
    BEARER_RE
        .as_ref()
        .map(|re| re.captures_iter(text).map(|c| c[1].to_owned()).collect())
        .unwrap_or_default()
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
            .map(|(_, v)| render(v, &o.vars).unwrap_or_else(|_| v.clone()))
    };
    let targets: Vec<(String, String)> = match param(c, "server").and_then(Value::as_str) {
        Some(server) => {
            let Some(h) = param(c, "header")
                .and_then(Value::as_str)
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
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send", "call"])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    if steps.is_empty() {
        return na("send with a bearer");
    }
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
                        want,
                        e.authorization().unwrap_or("absent"),
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
    }
    Outcome::Pass
}

/// AUTH-004: concurrent calls with distinct bearers never see each other's bearer downstream
/// (judged on the journals, and on headers echoed back in the step's own result).
pub(super) fn auth_isolation(c: &CheckSpec, o: &Observed) -> Outcome {
    let all: Vec<&StepRecord> = o.steps.iter().filter(|s| s.bearer.is_some()).collect();
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send", "call"])
        .into_iter()
        .filter(|s| s.bearer.is_some())
        .collect();
    let concurrent = steps
        .iter()
        .any(|s| all.iter().any(|x| x.bearer != s.bearer && overlap(x, s)));
    if !concurrent {
        return Outcome::NotApplicable(
            "no bearer-carrying step overlapped another with a different bearer".into(),
        );
    }
    let known: BTreeSet<&str> = all.iter().filter_map(|s| s.bearer.as_deref()).collect();
    for s in &steps {
        let own = s.bearer.as_deref().unwrap_or("");
        let text = format!(
            "{}\n{}",
            result_text(s),
            s.output.get("text").and_then(Value::as_str).unwrap_or("")
        );
        if let Some(other) = bearer_tokens(&text)
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
    Outcome::Pass
}

/// AUTH-005: a call without a bearer forwards none, even after calls that had one
/// (`with: {step, server}`; default: every bearer-less send and every opted-in server).
pub(super) fn auth_none(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = named_steps(o, c, "step")
        .unwrap_or_else(|| steps_of(o, c, &["send", "call"]))
        .into_iter()
        .filter(|s| s.bearer.is_none() && ["send", "call"].contains(&s.action.as_str()))
        .collect();
    if steps.is_empty() {
        return na("send without a bearer");
    }
    let servers: Vec<(String, bool)> = match param(c, "server").and_then(Value::as_str) {
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
        return Outcome::NotApplicable(format!(
            "all {overlapped} downstream request(s) during bearer-less steps overlapped bearer-carrying calls; attribute them with an `assert: journal` filter"
        ));
    }
    if n == 0 {
        return Outcome::NotApplicable(format!(
            "no request reached {:?} during a step without a bearer ({})",
            servers.iter().map(|s| &s.0).collect::<Vec<_>>(),
            steps
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Outcome::Pass
}

// ---------------------------------------------------------------- metrics

/// The value of a metric in a scrape: the sum over matching samples (a histogram counts its
/// `_count` series, a counter its `_total` series).
pub fn metric_value(
    scrape: &Value,
    metric: &str,
    labels: &serde_json::Map<String, Value>,
) -> Option<f64> {
    let families = scrape.get("families").and_then(Value::as_array)?;
    let base = metric.strip_suffix("_total").unwrap_or(metric);
    let f = families.iter().find(|f| {
        let n = f.get("name").and_then(Value::as_str).unwrap_or("");
        n == metric || n == base
    })?;
    let kind = f.get("kind").and_then(Value::as_str).unwrap_or("");
    let samples = f.get("samples").and_then(Value::as_array)?;
    let mut sum = None;
    for s in samples {
        let name = s.get("name").and_then(Value::as_str).unwrap_or("");
        let counted = match kind {
            "histogram" | "summary" => name.ends_with("_count"),
            _ => !name.ends_with("_created"),
        };
        let matches = labels
            .iter()
            .all(|(k, v)| s.pointer(&format!("/labels/{k}")).and_then(Value::as_str) == v.as_str());
        if counted && matches {
            *sum.get_or_insert(0.0) += s.get("value").and_then(Value::as_f64).unwrap_or(0.0);
        }
    }
    sum
}

/// MET-003: counters and histograms move after calls (`with: {metric, before, after, labels}`).
pub(super) fn met_moves(c: &CheckSpec, o: &Observed) -> Outcome {
    let mut metrics = param_strs(c, "metric");
    if metrics.is_empty() {
        metrics = vec![
            "pallas_send_message_total".into(),
            "pallas_send_message_duration_seconds".into(),
        ];
    }
    let labels = param(c, "labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let scrapes = steps_of(o, c, &["metrics"]);
    let find = |key: &str| -> Result<Option<&StepRecord>, Outcome> {
        match param(c, key).and_then(Value::as_str) {
            None => Ok(None),
            Some(n) => o
                .steps
                .iter()
                .find(|s| s.name == n && s.action == "metrics")
                .map(Some)
                .ok_or_else(|| Outcome::Error(format!("no metrics step named `{n}`"))),
        }
    };
    let (before, after) = match (find("before"), find("after")) {
        (Err(e), _) | (_, Err(e)) => return e,
        (Ok(b), Ok(a)) => (b, a),
    };
    let sends = |from: &str, to: &str| {
        o.steps.iter().any(|s| {
            ["send", "call"].contains(&s.action.as_str())
                && s.started_at.as_str() >= from
                && s.ended_at.as_str() <= to
        })
    };
    let (before, after) = match (before, after) {
        (b, Some(a)) => (b, a),
        (b, None) => {
            let mut sorted = scrapes.clone();
            sorted.sort_by(|x, y| x.started_at.cmp(&y.started_at));
            match (b.or(sorted.first().copied()), sorted.last().copied()) {
                (Some(f), Some(l)) if f.name != l.name && sends(&f.ended_at, &l.started_at) => {
                    (Some(f), l)
                }
                (_, Some(l)) if sends("", &l.started_at) => (None, l),
                _ => return Outcome::NotApplicable("no metrics scrape after a send".into()),
            }
        }
    };
    for m in &metrics {
        let after_v = metric_value(&after.output, m, &labels);
        let before_v = before
            .map(|b| metric_value(&b.output, m, &labels).unwrap_or(0.0))
            .unwrap_or(0.0);
        let moved = after_v.is_some_and(|a| a > before_v);
        if !moved {
            return fail(
                format!("`{m}` did not move after the calls"),
                vec![Evidence::new(
                    format!(
                        "{} → {}",
                        before.map_or("start", |b| b.name.as_str()),
                        after.name
                    ),
                    format!("> {before_v}"),
                    after_v.map_or("absent".into(), |v| v.to_string()),
                )],
            );
        }
    }
    Outcome::Pass
}

/// MET-004: health gauges follow the last `get_health` before each scrape.
pub(super) fn met_health_gauges(c: &CheckSpec, o: &Observed) -> Outcome {
    let scrapes = steps_of(o, c, &["metrics"]);
    if scrapes.is_empty() {
        return na("metrics");
    }
    let mut judged = 0;
    for m in scrapes {
        let mut last: std::collections::BTreeMap<&str, &StepRecord> = Default::default();
        for h in o
            .steps
            .iter()
            .filter(|h| h.action == "health" && h.ended_at <= m.started_at)
        {
            let Some(agent) = h.agent.as_deref() else {
                continue;
            };
            if last.get(agent).is_none_or(|p| p.ended_at < h.ended_at) {
                last.insert(agent, h);
            }
        }
        for (agent, h) in last {
            let Some(st) = h.output.pointer("/health/status").and_then(Value::as_str) else {
                continue;
            };
            let want = match st {
                "ok" => 1.0,
                "degraded" => 0.5,
                "error" => 0.0,
                _ => continue,
            };
            judged += 1;
            let mut l = serde_json::Map::new();
            l.insert("agent".into(), json!(agent));
            let seen = metric_value(&m.output, "pallas_agent_health_status", &l);
            if seen != Some(want) {
                return fail(
                    format!(
                        "`pallas_agent_health_status{{agent=\"{agent}\"}}` does not follow `{}` ({st})",
                        h.name
                    ),
                    vec![Evidence::new(
                        &m.name,
                        want.to_string(),
                        seen.map_or("absent".into(), |v| v.to_string()),
                    )],
                );
            }
            if st == "ok" {
                let down: Vec<String> = m
                    .output
                    .get("families")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|f| f.get("name") == Some(&json!("pallas_downstream_up")))
                    .flat_map(|f| {
                        f.get("samples")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                    })
                    .filter(|s| s.pointer("/labels/agent").and_then(Value::as_str) == Some(agent))
                    .filter(|s| s.get("value").and_then(Value::as_f64) != Some(1.0))
                    .map(|s| excerpt(&s, 200))
                    .collect();
                if let Some(first) = down.first() {
                    return fail(
                        format!("`{agent}` is ok but a downstream gauge is not 1"),
                        vec![Evidence::new(
                            &m.name,
                            "pallas_downstream_up = 1",
                            first.clone(),
                        )],
                    );
                }
            }
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable("no metrics scrape after a get_health".into());
    }
    Outcome::Pass
}

// ---------------------------------------------------------------- messages

fn cancelled(s: &StepRecord) -> bool {
    s.request
        .get("cancel_after_progress")
        .is_some_and(|v| !v.is_null())
        || s.output.get("cancelled_at_ms").is_some()
}

fn llm_requests_during(o: &Observed, s: &StepRecord) -> Vec<String> {
    o.llm_journals
        .values()
        .flatten()
        .filter(|e| within(&e.time, s))
        .map(|e| e.body.as_ref().map(Value::to_string).unwrap_or_default())
        .collect()
}

/// MSG-002: a message round-trips through the agent loop to a text result (`with: {contains}`
/// for its text; `with: {via_model: true}` also wants a mock LLM request during the step).
pub(super) fn msg_round_trip(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send"])
        .into_iter()
        .filter(|s| !cancelled(s))
        .collect();
    if steps.is_empty() {
        return na("send");
    }
    let contains = param(c, "contains").and_then(Value::as_str);
    let via_model = param(c, "via_model").and_then(Value::as_bool) == Some(true);
    if via_model && o.llm_journals.is_empty() {
        return Outcome::Error("`via_model: true` needs a mock LLM in the ecosystem".into());
    }
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("`{}` failed: {e}", s.name), vec![]);
        }
        if let Some(e) = jsonrpc_error(s) {
            return fail(
                format!("`{}` got a JSON-RPC error", s.name),
                vec![Evidence::new(&s.name, "a tool result", excerpt(e, 240))],
            );
        }
        let text = s.output.get("text").and_then(Value::as_str).unwrap_or("");
        if is_error_result(s) || text.is_empty() {
            return fail(
                format!("`{}` did not come back as a text result", s.name),
                vec![Evidence::new(
                    &s.name,
                    "isError false, a non-empty text block",
                    excerpt(s.output.get("result").unwrap_or(&Value::Null), 300),
                )],
            );
        }
        if let Some(want) = contains
            && !text.contains(want)
        {
            return fail(
                format!("`{}` text lacks {want:?}", s.name),
                vec![Evidence::new(
                    &s.name,
                    format!("contains {want:?}"),
                    excerpt(&json!(text), 300),
                )],
            );
        }
        if via_model && llm_requests_during(o, s).is_empty() {
            return fail(
                format!("`{}` answered without asking the model", s.name),
                vec![Evidence::new(
                    &s.name,
                    "a request to the mock LLM",
                    "none during the step",
                )],
            );
        }
    }
    Outcome::Pass
}

/// MSG-003: images reach the model when vision is on and are refused clearly when off, or when
/// they are not base64 `image/*` data (`with: {vision}`; default: the deployment's
/// `model_capabilities.vision`).
pub(super) fn msg_images(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &["send"])
        .into_iter()
        .filter(|s| {
            s.request
                .get("images")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        })
        .collect();
    if steps.is_empty() {
        return na("send with images");
    }
    let vision = param(c, "vision").and_then(Value::as_bool).or_else(|| {
        o.deployment
            .as_ref()
            .and_then(|d| d.model_capabilities.as_ref())
            .and_then(|m| m.vision)
    });
    let Some(vision) = vision else {
        return Outcome::Error(
            "MSG-003 needs `with: {vision}` or `model_capabilities.vision`".into(),
        );
    };
    if o.llm_journals.is_empty() {
        return Outcome::Error("no mock LLM journal to see what reached the model".into());
    }
    for s in steps {
        let data: Vec<String> = s
            .request
            .get("images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("data").and_then(Value::as_str))
            .map(|d| d.chars().take(64).collect())
            .collect();
        let bodies = llm_requests_during(o, s);
        let reached = data
            .iter()
            .all(|d| bodies.iter().any(|b| b.contains(d.as_str())));
        let refused = is_error_result(s) || jsonrpc_error(s).is_some();
        // An image that is not base64 or not an `image/*` type is refused even with vision.
        let all_valid = s
            .request
            .get("images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .all(image_is_valid);
        if vision && all_valid {
            if refused || !reached {
                return fail(
                    format!("the images of `{}` did not reach the model", s.name),
                    vec![Evidence::new(
                        &s.name,
                        "every image's data in a model request, a normal result",
                        if refused {
                            "refused".to_owned()
                        } else {
                            format!("{} model request(s) without it", bodies.len())
                        },
                    )],
                );
            }
        } else {
            let why = format!(
                "{}{}",
                result_text(s),
                jsonrpc_error(s).map(Value::to_string).unwrap_or_default()
            )
            .to_lowercase();
            if !refused || !(why.contains("image") || why.contains("vision")) || reached {
                let what = if vision {
                    "invalid images"
                } else {
                    "images without vision"
                };
                return fail(
                    format!("{what} sent to `{}` were not refused clearly", s.name),
                    vec![Evidence::new(
                        &s.name,
                        "an isError result or JSON-RPC error naming images/vision, nothing sent to the model",
                        format!(
                            "{}; reached the model: {reached}",
                            excerpt(
                                s.output
                                    .get("result")
                                    .or(s.output.get("error"))
                                    .unwrap_or(&Value::Null),
                                240
                            )
                        ),
                    )],
                );
            }
        }
    }
    Outcome::Pass
}

/// Whether an `images` item is base64 data of an `image/*` type.
fn image_is_valid(i: &Value) -> bool {
    use base64::Engine as _;
    let mime = i
        .get("mime_type")
        .or_else(|| i.get("mimeType"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let data = i.get("data").and_then(Value::as_str).unwrap_or("");
    mime.starts_with("image/")
        && !data.is_empty()
        && base64::engine::general_purpose::STANDARD
            .decode(data)
            .is_ok()
}

/// MSG-004: a provider failure gives an `isError` result and the agent stays healthy
/// (`with: {step}`; default: sends during which a mock LLM answered an error status).
pub(super) fn msg_provider_failure(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = named_steps(o, c, "step").unwrap_or_else(|| {
        steps_of(o, c, &["send"])
            .into_iter()
            .filter(|s| {
                o.llm_journals
                    .values()
                    .flatten()
                    .any(|e| within(&e.time, s) && e.status.is_some_and(|st| st >= 400))
            })
            .collect()
    });
    if steps.is_empty() {
        return Outcome::NotApplicable("no send step met a provider failure".into());
    }
    for s in &steps {
        if !is_error_result(s) {
            let seen = match jsonrpc_error(s) {
                Some(e) => format!("JSON-RPC error {}", excerpt(e, 200)),
                None => s.error.clone().unwrap_or_else(|| {
                    excerpt(s.output.get("result").unwrap_or(&Value::Null), 200)
                }),
            };
            return fail(
                format!(
                    "the provider failure during `{}` is not an isError result",
                    s.name
                ),
                vec![Evidence::new(&s.name, "result.isError = true", seen)],
            );
        }
        for later in o
            .steps
            .iter()
            .filter(|x| x.agent == s.agent && x.started_at >= s.ended_at)
        {
            let dead = later.error.is_some()
                || later
                    .output
                    .pointer("/health/status")
                    .and_then(Value::as_str)
                    == Some("error");
            if dead {
                return fail(
                    format!("the agent did not stay healthy after `{}`", s.name),
                    vec![Evidence::new(
                        &later.name,
                        "answers; health not `error`",
                        later
                            .error
                            .clone()
                            .unwrap_or_else(|| excerpt(&later.output["health"], 200)),
                    )],
                );
            }
        }
    }
    Outcome::Pass
}

/// MSG-005: `{agent}_history` holds every earlier message and reply sent to the agent (a
/// request-scoped agent has none).
pub(super) fn msg_history(c: &CheckSpec, o: &Observed) -> Outcome {
    // `history:` steps, and `request:` steps getting a `*_history` prompt.
    let steps: Vec<&StepRecord> = steps_of(o, c, &["history", "request"])
        .into_iter()
        .filter(|s| {
            s.action == "history"
                || (s.request.get("method") == Some(&json!("prompts/get"))
                    && s.request
                        .pointer("/params/name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.ends_with("_history")))
        })
        .collect();
    if steps.is_empty() {
        return na("history");
    }
    // Connection alias → agent key (from `connect` steps); a history is shared by every
    // connection to the agent unless its `instance_scope` keeps one per connection.
    let agent_of = |conn: &Option<String>| -> Option<String> {
        let conn = conn.as_deref()?;
        Some(
            o.steps
                .iter()
                .find(|s| s.action == "connect" && s.agent.as_deref() == Some(conn))
                .and_then(|s| s.request.get("agent").and_then(Value::as_str))
                .unwrap_or(conn)
                .to_owned(),
        )
    };
    let scope_of = |agent: &Option<String>| -> Option<String> {
        o.deployment
            .as_ref()
            .zip(agent.as_ref())
            .and_then(|(d, a)| d.agents.get(a))
            .and_then(|a| a.instance_scope.clone())
    };
    let mut judged = 0;
    for h in steps {
        let h_agent = agent_of(&h.agent);
        let scope = scope_of(&h_agent);
        if scope.as_deref() == Some("request") {
            // Seed 001: no history prompt for request-scoped agents, so nothing is stored.
            judged += 1;
            let messages = h
                .output
                .pointer("/result/messages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if messages > 0 {
                return fail(
                    format!(
                        "`{}`: a request-scoped agent serves a stored conversation",
                        h.name
                    ),
                    vec![Evidence::new(
                        &h.name,
                        "no history prompt (a JSON-RPC error)",
                        format!("{messages} message(s)"),
                    )],
                );
            }
            continue;
        }
        if h.error.is_some() || h.output.get("result").is_none_or(Value::is_null) {
            return fail(
                format!("`{}` got no prompt", h.name),
                vec![Evidence::new(
                    &h.name,
                    "a prompts/get result",
                    h.error
                        .clone()
                        .unwrap_or_else(|| excerpt(&h.output["error"], 200)),
                )],
            );
        }
        let history = result_text(h);
        let scoped = scope.as_deref().is_some_and(|sc| sc != "shared");
        for s in o.steps.iter().filter(|s| {
            s.action == "send"
                && (if scoped {
                    s.agent == h.agent
                } else {
                    agent_of(&s.agent) == h_agent
                })
                && s.ended_at <= h.started_at
                && s.error.is_none()
                && !is_error_result(s)
                && !cancelled(s)
        }) {
            judged += 1;
            let msg = s
                .request
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("");
            let reply = s.output.get("text").and_then(Value::as_str).unwrap_or("");
            for (what, text) in [("message", msg), ("reply", reply)] {
                if !text.is_empty() && !history.contains(text) {
                    return fail(
                        format!("`{}` lacks the {what} of `{}`", h.name, s.name),
                        vec![Evidence::new(
                            &h.name,
                            excerpt(&json!(text), 200),
                            excerpt(&json!(history), 300),
                        )],
                    );
                }
            }
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable("no message was sent before the history step".into());
    }
    Outcome::Pass
}

// ---------------------------------------------------------------- MCP

fn sends_session(s: &StepRecord) -> bool {
    match s.action.as_str() {
        "raw" => {
            s.request
                .get("with_session")
                .and_then(Value::as_bool)
                .unwrap_or(true)
                && header(&s.request, "mcp-session-id").is_none()
        }
        "connect" => false,
        a => MCP_ACTIONS.contains(&a),
    }
}

/// MCP-003: `DELETE` ends the session; the old session id then gets 404.
pub(super) fn mcp_delete(c: &CheckSpec, o: &Observed) -> Outcome {
    let deletes = steps_of(o, c, &["delete"]);
    if deletes.is_empty() {
        return na("delete");
    }
    for d in deletes {
        let st = status(d);
        if st == 405 {
            return Outcome::NotApplicable(format!(
                "`{}` got 405: the server does not let clients end sessions (allowed by the spec)",
                d.name
            ));
        }
        if !(200..300).contains(&st) {
            return fail(
                format!("DELETE `{}` answered HTTP {st}", d.name),
                vec![Evidence::new(
                    &d.name,
                    "2xx",
                    d.error.clone().unwrap_or_else(|| st.to_string()),
                )],
            );
        }
        let mut later: Vec<&StepRecord> = o
            .steps
            .iter()
            .filter(|x| x.agent == d.agent && x.started_at >= d.ended_at)
            .collect();
        later.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        if let Some(next) = later
            .into_iter()
            .take_while(|x| x.action != "connect")
            .find(|x| sends_session(x))
            && status(next) != 404
        {
            return fail(
                format!(
                    "`{}` reused the deleted session and got HTTP {}",
                    next.name,
                    status(next)
                ),
                vec![Evidence::new(&next.name, "404", status(next).to_string())],
            );
        }
    }
    Outcome::Pass
}

/// MCP-005: a POST whose `Accept` lacks `application/json` or `text/event-stream` gets 406.
pub(super) fn mcp_accept(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &["raw"])
        .into_iter()
        .filter(|s| {
            header(&s.request, "accept").is_some_and(|a| {
                let a = a.to_ascii_lowercase();
                !(a.contains("application/json") && a.contains("text/event-stream"))
            })
        })
        .collect();
    if steps.is_empty() {
        return na("raw step with an incomplete Accept");
    }
    for s in steps {
        if status(s) != 406 {
            return fail(
                format!(
                    "`{}` (Accept {:?}) got HTTP {}",
                    s.name,
                    header(&s.request, "accept").unwrap_or(""),
                    status(s)
                ),
                vec![Evidence::new(&s.name, "406", status(s).to_string())],
            );
        }
    }
    Outcome::Pass
}

fn raw_method(s: &StepRecord) -> Option<String> {
    let body: Value = serde_json::from_str(s.request.get("body")?.as_str()?).ok()?;
    body.get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// MCP-006: a non-initialize request without a session gets 400; an unknown session 404
/// (`with: {missing_session: [steps], unknown_session: [steps]}`; default: raw steps with
/// `with_session: false`, and raw steps sending their own `Mcp-Session-Id`).
pub(super) fn mcp_sessions(c: &CheckSpec, o: &Observed) -> Outcome {
    let missing = named_steps(o, c, "missing_session").unwrap_or_else(|| {
        steps_of(o, c, &["raw"])
            .into_iter()
            .filter(|s| {
                s.request.get("with_session").and_then(Value::as_bool) == Some(false)
                    && header(&s.request, "mcp-session-id").is_none()
                    && raw_method(s).is_some_and(|m| m != "initialize")
            })
            .collect()
    });
    let unknown = named_steps(o, c, "unknown_session").unwrap_or_else(|| {
        steps_of(o, c, &["raw"])
            .into_iter()
            .filter(|s| header(&s.request, "mcp-session-id").is_some())
            .collect()
    });
    if missing.is_empty() && unknown.is_empty() {
        return na("raw step without a session or with an unknown one");
    }
    for (steps, want, what) in [
        (missing, 400, "without a session"),
        (unknown, 404, "with an unknown session"),
    ] {
        for s in steps {
            if status(s) != want {
                return fail(
                    format!("`{}` ({what}) got HTTP {}", s.name, status(s)),
                    vec![Evidence::new(
                        &s.name,
                        want.to_string(),
                        status(s).to_string(),
                    )],
                );
            }
        }
    }
    Outcome::Pass
}

/// The tool name and arguments a `call` or raw `tools/call` step sent.
fn tool_call_of(s: &StepRecord) -> Option<(String, Value)> {
    match s.action.as_str() {
        "call" => Some((
            s.request.get("tool")?.as_str()?.to_owned(),
            s.request
                .get("arguments")
                .cloned()
                .filter(|a| !a.is_null())
                .unwrap_or(json!({})),
        )),
        "raw" => {
            let body: Value = serde_json::from_str(s.request.get("body")?.as_str()?).ok()?;
            (body.get("method")? == "tools/call").then_some(())?;
            Some((
                body.pointer("/params/name")?.as_str()?.to_owned(),
                body.pointer("/params/arguments")
                    .cloned()
                    .unwrap_or(json!({})),
            ))
        }
        _ => None,
    }
}

/// MCP-007: an unknown tool gets a JSON-RPC error; invalid arguments an `isError` result or
/// -32602 (`with: {unknown_tool: [steps], invalid_arguments: [steps]}`; default: calls of tools
/// no `tools/list` listed, and calls whose arguments break the listed input schema).
pub(super) fn mcp_tool_errors(c: &CheckSpec, o: &Observed) -> Outcome {
    let listed: Vec<(Option<String>, Value)> = o
        .steps
        .iter()
        .filter(|s| s.action == "list_tools")
        .flat_map(|s| {
            s.output
                .pointer("/result/tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|t| (s.agent.clone(), t))
                .collect::<Vec<_>>()
        })
        .collect();
    let named_unknown = named_steps(o, c, "unknown_tool");
    let named_invalid = named_steps(o, c, "invalid_arguments");
    let (mut unknown, mut invalid) = (Vec::new(), Vec::new());
    if named_unknown.is_none() && named_invalid.is_none() {
        for s in steps_of(o, c, &["call", "raw"]) {
            let Some((tool, args)) = tool_call_of(s) else {
                continue;
            };
            let of_agent: Vec<&Value> = listed
                .iter()
                .filter(|(a, _)| *a == s.agent)
                .map(|(_, t)| t)
                .collect();
            if of_agent.is_empty() {
                continue; // nothing to classify the call against
            }
            match of_agent
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(tool.as_str()))
            {
                None => unknown.push(s),
                Some(t) => {
                    let schema = t.get("inputSchema").cloned().unwrap_or(json!({}));
                    if jsonschema::validator_for(&schema).is_ok_and(|v| !v.is_valid(&args)) {
                        invalid.push(s);
                    }
                }
            }
        }
    }
    let unknown = named_unknown.unwrap_or(unknown);
    let invalid = named_invalid.unwrap_or(invalid);
    if unknown.is_empty() && invalid.is_empty() {
        return na("call of an unknown tool or with invalid arguments");
    }
    // An unknown tool "should be reported as an MCP error response": SHOULD.
    let mut should = None;
    for s in unknown {
        if jsonrpc_error(s).is_none() && should.is_none() {
            should = Some(Outcome::Should(
                format!(
                    "`{}` called an unknown tool without a JSON-RPC error",
                    s.name
                ),
                vec![Evidence::new(
                    &s.name,
                    "a JSON-RPC error",
                    s.error.clone().unwrap_or_else(|| {
                        excerpt(s.output.get("result").unwrap_or(&Value::Null), 200)
                    }),
                )],
            ));
        }
    }
    for s in invalid {
        let code = jsonrpc_error(s)
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64);
        if !(is_error_result(s) || code == Some(-32602)) {
            return fail(
                format!(
                    "`{}` sent invalid arguments without an isError result or -32602",
                    s.name
                ),
                vec![Evidence::new(
                    &s.name,
                    "result.isError = true or error.code = -32602",
                    s.error
                        .clone()
                        .unwrap_or_else(|| excerpt(&s.output["response"], 240)),
                )],
            );
        }
    }
    should.unwrap_or(Outcome::Pass)
}

/// MCP-008: SSE events carry ids and one JSON-RPC message per `data:`.
pub(super) fn mcp_sse(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, MCP_ACTIONS)
        .into_iter()
        .filter(|s| {
            s.output
                .get("content_type")
                .and_then(Value::as_str)
                .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
        })
        .collect();
    if steps.is_empty() {
        return Outcome::NotApplicable("no SSE response was received".into());
    }
    for s in steps {
        if let Some(b) = s.output.get("body_text").filter(|b| !b.is_null()) {
            return fail(
                format!("`{}` SSE data that is not a JSON-RPC message", s.name),
                vec![Evidence::new(
                    &s.name,
                    "one JSON-RPC message per data:",
                    excerpt(b, 240),
                )],
            );
        }
        for (i, m) in s
            .output
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if m.get("sse_event_id").is_none_or(Value::is_null) {
                return fail(
                    format!("an SSE event of `{}` has no id", s.name),
                    vec![Evidence {
                        path: Some(format!("/messages/{i}")),
                        ..Evidence::new(&s.name, "an `id:` field", excerpt(&m["message"], 200))
                    }],
                );
            }
        }
    }
    Outcome::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::builtin::run;
    use crate::scenario::DeploymentSpec;
    use pallas_mocks::{LlmJournalEntry, McpJournalEntry};

    fn at(sec: u32, frac: u32) -> String {
        format!("2026-01-01T00:00:{sec:02}.{frac:06}Z")
    }

    fn step(name: &str, action: &str, from: u32, to: u32, output: Value) -> StepRecord {
        StepRecord {
            name: name.into(),
            action: action.into(),
            agent: Some("research".into()),
            started_at: at(from, 0),
            ended_at: at(to, 0),
            output,
            ..StepRecord::default()
        }
    }

    fn with(v: Value) -> CheckSpec {
        CheckSpec {
            with: Some(v),
            ..CheckSpec::default()
        }
    }

    fn mcp(time: String, method: &str, tool: Option<&str>, auth: Option<&str>) -> McpJournalEntry {
        let mut headers = serde_json::Map::new();
        if let Some(a) = auth {
            headers.insert("authorization".into(), json!(a));
        }
        serde_json::from_value(json!({
            "time": time, "method": "POST", "headers": headers,
            "jsonrpc_method": method, "tool": tool, "status": 200
        }))
        .unwrap()
    }

    fn llm(time: String, body: Value, status: u16) -> LlmJournalEntry {
        serde_json::from_value(json!({
            "time": time, "method": "POST", "path": "/v1/chat/completions",
            "headers": {}, "body": body, "status": status
        }))
        .unwrap()
    }

    fn deployment(v: Value) -> DeploymentSpec {
        serde_json::from_value(v).unwrap()
    }

    fn obs(steps: Vec<StepRecord>) -> Observed {
        Observed {
            steps,
            ..Observed::default()
        }
    }

    fn fails(o: &Outcome) -> bool {
        matches!(o, Outcome::Fail(..))
    }

    fn skipped(o: &Outcome) -> bool {
        matches!(o, Outcome::NotApplicable(_))
    }

    fn note(token: Value, progress: f64, total: Option<f64>, message: &str) -> Value {
        let mut p = json!({"progressToken": token, "progress": progress, "message": message});
        if let Some(t) = total {
            p["total"] = json!(t);
        }
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p})
    }

    fn registry(servers: Value) -> StepRecord {
        step(
            "registry",
            "registry",
            0,
            1,
            json!({"status": 200, "body": {"servers": servers}}),
        )
    }

    #[test]
    fn reg_004_wants_a_streamable_http_remote_at_a_deployed_live_endpoint() {
        let entry = |url: &str| json!([{"server": {"name": "a/research", "remotes": [{"type": "streamable-http", "url": url}]}}]);
        let mut connect = step("connect", "connect", 1, 2, json!({"status": 200}));
        connect.agent = Some("research".into());
        let mut o = obs(vec![registry(entry("http://localhost:8301/mcp")), connect]);
        o.agent_urls
            .insert("research".into(), "http://127.0.0.1:8301/mcp".into());
        assert_eq!(run("REG-004", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[0] = registry(entry("http://localhost:9999/mcp"));
        assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
        o.steps[0] = registry(
            json!([{"server": {"name": "a/research", "remotes": [{"type": "sse", "url": "http://x/sse"}]}}]),
        );
        assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
        o.steps[0] = registry(entry("http://localhost:8301/mcp"));
        o.steps[1].output = json!({"status": 502});
        assert!(fails(&run("REG-004", &CheckSpec::default(), &o)));
        assert!(skipped(&run(
            "REG-004",
            &CheckSpec::default(),
            &obs(vec![])
        )));
    }

    #[test]
    fn reg_006_applies_the_documented_title_and_version_defaults() {
        assert_eq!(python_title("tech_research"), "Tech_Research");
        assert_eq!(python_title("a1b c"), "A1B C");
        let mut o = obs(vec![registry(json!([
            {"server": {"name": "ns/research", "title": "Research Agent", "description": "Web", "version": "1.0.0"}},
            {"server": {"name": "ns/tech-research", "title": "Tech_Research", "version": "1.0.0"}}
        ]))]);
        o.deployment = Some(deployment(json!({"namespace": "ns", "agents": {
            "research": {"title": "Research Agent", "description": "Web"}, "tech_research": {}}})));
        assert_eq!(run("REG-006", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[0] = registry(
            json!([{"server": {"name": "ns/tech-research", "title": "tech-research", "version": "1.0.0"}}]),
        );
        let Outcome::Fail(reason, _) = run("REG-006", &CheckSpec::default(), &o) else {
            panic!("a slug is not the default title")
        };
        assert!(reason.contains("title"), "{reason}");
        o.steps[0] = registry(
            json!([{"server": {"name": "ns/tech-research", "title": "Tech_Research", "version": "0.1.0"}}]),
        );
        assert!(fails(&run("REG-006", &CheckSpec::default(), &o)));
        o.deployment = None;
        assert!(skipped(&run("REG-006", &CheckSpec::default(), &o)));
    }

    fn token_step(notes: Vec<Value>) -> StepRecord {
        let mut s = step("call", "send", 0, 3, json!({"progress": notes}));
        s.progress_token = Some(json!("t"));
        s
    }

    #[test]
    fn prog_008_wants_started_and_completed_for_every_journalled_tool_call() {
        let t = json!("t");
        let good = vec![
            note(t.clone(), 0.0, None, "argos/argos__search: started"),
            note(t.clone(), 1.0, Some(1.0), "argos/argos__search: completed"),
        ];
        let mut o = obs(vec![token_step(good.clone())]);
        o.mcp_journals.insert(
            "argos".into(),
            vec![mcp(at(1, 0), "tools/call", Some("search"), None)],
        );
        assert_eq!(run("PROG-008", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[0] = token_step(vec![good[0].clone()]);
        assert!(fails(&run("PROG-008", &CheckSpec::default(), &o)));
        // Named with `with: {tools}` instead of the journal.
        let c = with(json!({"tools": ["weather/forecast"]}));
        o.steps[0] = token_step(good);
        assert!(fails(&run("PROG-008", &c, &o)));
        o.mcp_journals.clear();
        assert!(skipped(&run("PROG-008", &CheckSpec::default(), &o)));
    }

    #[test]
    fn prog_008_warns_when_a_tool_ends_without_the_word_and_fails_when_it_never_ends() {
        let t = json!("t");
        let started = note(t.clone(), 0.0, None, "argos/argos__search: started");
        let mut o = obs(vec![token_step(vec![
            started.clone(),
            note(
                t.clone(),
                1.0,
                Some(1.0),
                "argos/argos__search: Error: timed out",
            ),
        ])]);
        o.mcp_journals.insert(
            "argos".into(),
            vec![mcp(at(1, 0), "tools/call", Some("search"), None)],
        );
        let Outcome::Should(reason, _) = run("PROG-008", &CheckSpec::default(), &o) else {
            panic!("an unworded end is a SHOULD matter")
        };
        assert!(reason.contains("without the word"), "{reason}");
        // A note that is not at total = progress does not end the tool.
        o.steps[0] = token_step(vec![
            started,
            note(t, 1.0, None, "argos/argos__search: Error: timed out"),
        ]);
        assert!(fails(&run("PROG-008", &CheckSpec::default(), &o)));
    }

    #[test]
    fn prog_009_wants_null_totals_on_loop_steps_and_one_of_one_when_finished() {
        let t = json!("t");
        let o = obs(vec![token_step(vec![
            note(t.clone(), 1.0, None, "harper step 1 (llm)"),
            note(t.clone(), 1.0, Some(1.0), "argos/search: failed"),
        ])]);
        assert_eq!(run("PROG-009", &CheckSpec::default(), &o), Outcome::Pass);
        let o = obs(vec![token_step(vec![note(
            t.clone(),
            2.0,
            Some(5.0),
            "harper step 2 (tool)",
        )])]);
        assert!(fails(&run("PROG-009", &CheckSpec::default(), &o)));
        let o = obs(vec![token_step(vec![note(
            t,
            1.0,
            None,
            "argos/search: completed",
        )])]);
        assert!(fails(&run("PROG-009", &CheckSpec::default(), &o)));
        assert!(skipped(&run(
            "PROG-009",
            &CheckSpec::default(),
            &obs(vec![])
        )));
    }

    #[test]
    fn prog_010_fails_on_progress_well_after_the_cancellation() {
        let msg = |ms: f64| json!({"at_ms": ms, "message": {"method": "notifications/progress"}});
        let mut s = step(
            "cancel",
            "send",
            0,
            2,
            json!({"cancelled_at_ms": 100.0, "messages": [msg(90.0), msg(150.0)]}),
        );
        s.request = json!({"message": "m", "cancel_after_progress": 1});
        let mut o = obs(vec![s]);
        assert_eq!(run("PROG-010", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[0].output["messages"] = json!([msg(90.0), msg(900.0)]);
        assert!(fails(&run("PROG-010", &CheckSpec::default(), &o)));
        o.steps[0].output["cancelled_at_ms"] = Value::Null;
        assert!(matches!(
            run("PROG-010", &CheckSpec::default(), &o),
            Outcome::Error(_)
        ));
        assert!(skipped(&run(
            "PROG-010",
            &CheckSpec::default(),
            &obs(vec![])
        )));
    }

    fn bearer_step(name: &str, from: u32, to: u32, bearer: Option<&str>) -> StepRecord {
        let mut s = step(name, "send", from, to, json!({"status": 200}));
        s.bearer = bearer.map(str::to_owned);
        s
    }

    #[test]
    fn auth_003_wants_the_configured_header_not_the_inbound_bearer() {
        let mut o = obs(vec![bearer_step("call", 0, 2, Some("inbound"))]);
        o.deployment = Some(deployment(json!({"agents": {"research": {}}, "servers": {
            "mnemosyne": {"mock": "mnemosyne", "forward_inbound_auth": true,
                          "headers": {"Authorization": "Bearer configured"}}}})));
        o.mcp_journals.insert(
            "mnemosyne".into(),
            vec![mcp(
                at(1, 0),
                "tools/call",
                Some("s"),
                Some("Bearer configured"),
            )],
        );
        assert_eq!(run("AUTH-003", &CheckSpec::default(), &o), Outcome::Pass);
        let c = with(json!({"server": "mnemosyne", "header": "Bearer configured"}));
        assert_eq!(run("AUTH-003", &c, &o), Outcome::Pass);
        o.mcp_journals.get_mut("mnemosyne").unwrap()[0] =
            mcp(at(1, 0), "tools/call", Some("s"), Some("Bearer inbound"));
        assert!(fails(&run("AUTH-003", &CheckSpec::default(), &o)));
        o.deployment = Some(deployment(json!({"agents": {"research": {}}})));
        assert!(skipped(&run("AUTH-003", &CheckSpec::default(), &o)));
    }

    #[test]
    fn auth_004_catches_a_bearer_lent_to_a_concurrent_call() {
        let mut a = bearer_step("call[0]", 0, 3, Some("tok-0"));
        let b = bearer_step("call[1]", 1, 4, Some("tok-1"));
        a.output = json!({"text": "headers: Authorization: Bearer tok-0"});
        let mut o = obs(vec![a, b]);
        assert_eq!(run("AUTH-004", &CheckSpec::default(), &o), Outcome::Pass);
        // The echoed headers of call[0] show call[1]'s bearer (tok-1 is not a prefix match of tok-10).
        o.steps[0].output = json!({"text": "Authorization: Bearer tok-1"});
        assert!(fails(&run("AUTH-004", &CheckSpec::default(), &o)));
        // A stale bearer downstream: tok-9 belongs to a call that had ended.
        o.steps[0].output = json!({});
        o.steps.push(bearer_step("old", 10, 11, Some("tok-9")));
        o.mcp_journals.insert(
            "m".into(),
            vec![mcp(at(2, 0), "tools/call", Some("s"), Some("Bearer tok-9"))],
        );
        assert!(fails(&run("AUTH-004", &CheckSpec::default(), &o)));
        let o = obs(vec![bearer_step("solo", 0, 1, Some("tok"))]);
        assert!(skipped(&run("AUTH-004", &CheckSpec::default(), &o)));
    }

    #[test]
    fn auth_005_wants_no_authorization_on_a_bearer_less_call() {
        let mut o = obs(vec![
            bearer_step("with", 0, 1, Some("tok")),
            bearer_step("without", 2, 3, None),
        ]);
        o.deployment = Some(deployment(json!({"agents": {"research": {}}, "servers": {
            "argos": {"mock": "argos", "forward_inbound_auth": true}}})));
        o.mcp_journals.insert(
            "argos".into(),
            vec![
                mcp(at(0, 500000), "tools/call", Some("s"), Some("Bearer tok")),
                mcp(at(2, 500000), "tools/call", Some("s"), None),
            ],
        );
        assert_eq!(run("AUTH-005", &CheckSpec::default(), &o), Outcome::Pass);
        let c = with(json!({"step": "without", "server": "argos"}));
        assert_eq!(run("AUTH-005", &c, &o), Outcome::Pass);
        o.mcp_journals.get_mut("argos").unwrap()[1] =
            mcp(at(2, 500000), "tools/call", Some("s"), Some("Bearer tok"));
        assert!(fails(&run("AUTH-005", &c, &o)));
        o.mcp_journals.clear();
        assert!(skipped(&run("AUTH-005", &c, &o)));
    }

    fn scrape(name: &str, from: u32, families: Value) -> StepRecord {
        step(
            name,
            "metrics",
            from,
            from + 1,
            json!({"status": 200, "families": families}),
        )
    }

    fn counter(v: f64) -> Value {
        json!([
            {"name": "pallas_send_message_total", "kind": "counter", "samples": [
                {"name": "pallas_send_message_total", "labels": {"agent": "research", "outcome": "ok"}, "value": v}]},
            {"name": "pallas_send_message_duration_seconds", "kind": "histogram", "samples": [
                {"name": "pallas_send_message_duration_seconds_count", "labels": {"agent": "research"}, "value": v}]}
        ])
    }

    #[test]
    fn met_003_wants_counters_to_move_between_scrapes_around_a_call() {
        let o = obs(vec![
            scrape("before", 0, counter(1.0)),
            bearer_step("send", 2, 3, None),
            scrape("after", 4, counter(2.0)),
        ]);
        assert_eq!(run("MET-003", &CheckSpec::default(), &o), Outcome::Pass);
        let c = with(
            json!({"metric": "pallas_send_message_total", "before": "before", "after": "after", "labels": {"agent": "research"}}),
        );
        assert_eq!(run("MET-003", &c, &o), Outcome::Pass);
        let o = obs(vec![
            scrape("before", 0, counter(1.0)),
            bearer_step("send", 2, 3, None),
            scrape("after", 4, counter(1.0)),
        ]);
        assert!(fails(&run("MET-003", &CheckSpec::default(), &o)));
        let c = with(json!({"before": "nope", "after": "after"}));
        assert!(matches!(run("MET-003", &c, &o), Outcome::Error(_)));
        let o = obs(vec![scrape("only", 0, counter(0.0))]);
        assert!(skipped(&run("MET-003", &CheckSpec::default(), &o)));
    }

    #[test]
    fn met_004_wants_the_health_gauge_of_the_last_get_health() {
        let gauge = |v: f64| {
            json!([{"name": "pallas_agent_health_status", "kind": "gauge", "samples": [
            {"name": "pallas_agent_health_status", "labels": {"agent": "research"}, "value": v}]}])
        };
        let health = step(
            "h",
            "health",
            0,
            1,
            json!({"health": {"status": "degraded"}}),
        );
        let o = obs(vec![health.clone(), scrape("m", 2, gauge(0.5))]);
        assert_eq!(run("MET-004", &CheckSpec::default(), &o), Outcome::Pass);
        let o = obs(vec![health, scrape("m", 2, gauge(1.0))]);
        assert!(fails(&run("MET-004", &CheckSpec::default(), &o)));
        let o = obs(vec![scrape("m", 2, gauge(1.0))]);
        assert!(skipped(&run("MET-004", &CheckSpec::default(), &o)));
    }

    #[test]
    fn msg_002_wants_a_text_result_produced_by_the_model() {
        let send = |out: Value| step("send", "send", 0, 2, out);
        let mut o = obs(vec![send(
            json!({"status": 200, "text": "hello back", "result": {"content": []}}),
        )]);
        o.llm_journals
            .insert("openai".into(), vec![llm(at(1, 0), json!({}), 200)]);
        assert_eq!(
            run("MSG-002", &with(json!({"contains": "hello"})), &o),
            Outcome::Pass
        );
        o.steps[0] = send(json!({"status": 200, "text": "boom", "result": {"isError": true}}));
        assert!(fails(&run("MSG-002", &CheckSpec::default(), &o)));
        o.steps[0] = send(json!({"status": 200, "text": "hello back"}));
        assert_eq!(
            run("MSG-002", &with(json!({"via_model": true})), &o),
            Outcome::Pass
        );
        o.llm_journals.insert("openai".into(), vec![]);
        assert!(fails(&run(
            "MSG-002",
            &with(json!({"via_model": true})),
            &o
        )));
        assert_eq!(run("MSG-002", &CheckSpec::default(), &o), Outcome::Pass);
        assert!(skipped(&run(
            "MSG-002",
            &CheckSpec::default(),
            &obs(vec![])
        )));
    }

    #[test]
    fn msg_003_wants_images_at_the_model_with_vision_and_a_clear_refusal_without() {
        let mut s = step(
            "img",
            "send",
            0,
            2,
            json!({"status": 200, "text": "a cat", "result": {"content": []}}),
        );
        s.request = json!({"message": "what is this", "images": [{"data": "iVBORw0KGgoAAAANSUhEUg==", "mime_type": "image/png"}]});
        let mut o = obs(vec![s]);
        o.llm_journals.insert(
            "openai".into(),
            vec![llm(
                at(1, 0),
                json!({"image_url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}),
                200,
            )],
        );
        assert_eq!(
            run("MSG-003", &with(json!({"vision": true})), &o),
            Outcome::Pass
        );
        assert!(fails(&run("MSG-003", &with(json!({"vision": false})), &o)));
        o.steps[0].output = json!({"status": 200, "result": {"isError": true, "content": [{"type": "text", "text": "this model has no vision: images refused"}]}});
        o.llm_journals.insert("openai".into(), vec![]);
        assert_eq!(
            run("MSG-003", &with(json!({"vision": false})), &o),
            Outcome::Pass
        );
        assert!(fails(&run("MSG-003", &with(json!({"vision": true})), &o)));
        assert!(matches!(
            run("MSG-003", &CheckSpec::default(), &o),
            Outcome::Error(_)
        ));
    }

    #[test]
    fn msg_004_wants_is_error_on_a_provider_failure_and_a_live_agent_after() {
        let failed = step(
            "fail",
            "send",
            0,
            2,
            json!({"status": 200, "result": {"isError": true}}),
        );
        let later = step(
            "h",
            "health",
            3,
            4,
            json!({"health": {"status": "degraded"}}),
        );
        let mut o = obs(vec![failed, later]);
        o.llm_journals
            .insert("openai".into(), vec![llm(at(1, 0), json!({}), 500)]);
        assert_eq!(run("MSG-004", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[1].error = Some("connection refused".into());
        assert!(fails(&run("MSG-004", &CheckSpec::default(), &o)));
        o.steps[1].error = None;
        o.steps[0].output =
            json!({"status": 200, "error": {"code": -32603, "message": "provider"}});
        assert!(fails(&run("MSG-004", &CheckSpec::default(), &o)));
        o.llm_journals.clear();
        assert!(skipped(&run("MSG-004", &CheckSpec::default(), &o)));
    }

    #[test]
    fn msg_005_wants_every_earlier_message_and_reply_in_the_history() {
        let mut s = step(
            "send",
            "send",
            0,
            1,
            json!({"status": 200, "text": "hi there"}),
        );
        s.request = json!({"message": "hello"});
        let h = |text: &str| {
            step(
                "history",
                "history",
                2,
                3,
                json!({"status": 200, "result": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}}),
            )
        };
        let o = obs(vec![s.clone(), h("hello\nhi there")]);
        assert_eq!(run("MSG-005", &CheckSpec::default(), &o), Outcome::Pass);
        let o = obs(vec![s, h("hello")]);
        assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
        let o = obs(vec![h("")]);
        assert!(skipped(&run("MSG-005", &CheckSpec::default(), &o)));
    }

    #[test]
    fn mcp_003_wants_404_for_the_deleted_session() {
        let del = step("delete", "delete", 0, 1, json!({"status": 200}));
        let mut after = step("after", "raw", 2, 3, json!({"status": 404}));
        after.request = json!({"body": "{}", "with_session": true});
        let mut o = obs(vec![del, after]);
        assert_eq!(run("MCP-003", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[1].output = json!({"status": 200});
        assert!(fails(&run("MCP-003", &CheckSpec::default(), &o)));
        o.steps[0].output = json!({"status": 405});
        assert!(skipped(&run("MCP-003", &CheckSpec::default(), &o)));
        o.steps[0].output = json!({"status": 500});
        assert!(fails(&run("MCP-003", &CheckSpec::default(), &o)));
    }

    #[test]
    fn mcp_005_and_006_judge_raw_posts_by_their_headers() {
        let raw = |status: u64, request: Value| {
            let mut s = step("raw", "raw", 0, 1, json!({"status": status}));
            s.request = request;
            s
        };
        let accept =
            json!({"body": "{}", "headers": {"Accept": "application/json"}, "with_session": true});
        assert_eq!(
            run(
                "MCP-005",
                &CheckSpec::default(),
                &obs(vec![raw(406, accept.clone())])
            ),
            Outcome::Pass
        );
        assert!(fails(&run(
            "MCP-005",
            &CheckSpec::default(),
            &obs(vec![raw(200, accept)])
        )));
        let missing = json!({"body": r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "with_session": false});
        assert_eq!(
            run(
                "MCP-006",
                &CheckSpec::default(),
                &obs(vec![raw(400, missing.clone())])
            ),
            Outcome::Pass
        );
        assert!(fails(&run(
            "MCP-006",
            &CheckSpec::default(),
            &obs(vec![raw(200, missing)])
        )));
        let unknown =
            json!({"body": "{}", "headers": {"Mcp-Session-Id": "nope"}, "with_session": true});
        assert!(fails(&run(
            "MCP-006",
            &CheckSpec::default(),
            &obs(vec![raw(400, unknown)])
        )));
        assert!(skipped(&run(
            "MCP-006",
            &CheckSpec::default(),
            &obs(vec![])
        )));
    }

    #[test]
    fn mcp_007_classifies_calls_against_the_listed_tools() {
        let tools = step(
            "tools",
            "list_tools",
            0,
            1,
            json!({"result": {"tools": [{"name": "echo",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]}}),
        );
        let call = |tool: &str, args: Value, out: Value| {
            let mut s = step("call", "call", 2, 3, out);
            s.request = json!({"tool": tool, "arguments": args});
            s
        };
        let err = json!({"status": 200, "error": {"code": -32602, "message": "unknown tool"}});
        let o = obs(vec![tools.clone(), call("nope", json!({}), err.clone())]);
        assert_eq!(run("MCP-007", &CheckSpec::default(), &o), Outcome::Pass);
        let o = obs(vec![
            tools.clone(),
            call(
                "nope",
                json!({}),
                json!({"status": 200, "result": {"isError": true}}),
            ),
        ]);
        // "should be reported as an MCP error response": a SHOULD.
        assert!(matches!(
            run("MCP-007", &CheckSpec::default(), &o),
            Outcome::Should(..)
        ));
        let o = obs(vec![
            tools.clone(),
            call(
                "echo",
                json!({"n": "x"}),
                json!({"status": 200, "result": {"isError": true}}),
            ),
        ]);
        assert_eq!(run("MCP-007", &CheckSpec::default(), &o), Outcome::Pass);
        let o = obs(vec![
            tools.clone(),
            call(
                "echo",
                json!({"n": "x"}),
                json!({"status": 200, "result": {"content": []}}),
            ),
        ]);
        assert!(fails(&run("MCP-007", &CheckSpec::default(), &o)));
        let o = obs(vec![
            tools,
            call(
                "echo",
                json!({"n": 1}),
                json!({"status": 200, "result": {}}),
            ),
        ]);
        assert!(skipped(&run("MCP-007", &CheckSpec::default(), &o)));
    }

    #[test]
    fn mcp_008_wants_event_ids_on_sse_messages() {
        let sse = |id: Value| {
            step(
                "s",
                "send",
                0,
                1,
                json!({"status": 200, "content_type": "text/event-stream",
            "messages": [{"at_ms": 1.0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}, "sse_event_id": id}]}),
            )
        };
        assert_eq!(
            run(
                "MCP-008",
                &CheckSpec::default(),
                &obs(vec![sse(json!("0"))])
            ),
            Outcome::Pass
        );
        assert!(fails(&run(
            "MCP-008",
            &CheckSpec::default(),
            &obs(vec![sse(Value::Null)])
        )));
        let json_only = step(
            "s",
            "send",
            0,
            1,
            json!({"status": 200, "content_type": "application/json"}),
        );
        assert!(skipped(&run(
            "MCP-008",
            &CheckSpec::default(),
            &obs(vec![json_only])
        )));
    }

    #[test]
    fn met_002_accepts_families_declared_without_samples_and_names_every_absent_one() {
        use crate::checks::builtin::SEED_METRICS;
        let family = |name: &str, kind: &str| json!({"name": name, "kind": kind, "samples": []});
        let all: Vec<Value> = SEED_METRICS.iter().map(|(n, k, _)| family(n, k)).collect();
        let o = obs(vec![scrape("m", 0, json!(all))]);
        assert_eq!(run("MET-002", &CheckSpec::default(), &o), Outcome::Pass);
        // Declared under a wrong type: still judged.
        let mut wrong = all.clone();
        wrong[2] = family("pallas_send_message_total", "gauge");
        assert!(fails(&run(
            "MET-002",
            &CheckSpec::default(),
            &obs(vec![scrape("m", 0, json!(wrong))])
        )));
        // Two families missing altogether: both are named.
        let some: Vec<Value> = all[2..].to_vec();
        let Outcome::Fail(reason, ev) = run(
            "MET-002",
            &CheckSpec::default(),
            &obs(vec![scrape("m", 0, json!(some))]),
        ) else {
            panic!("absent families must fail")
        };
        assert!(
            reason.contains("pallas_up") && reason.contains("pallas_agent_info"),
            "{reason}"
        );
        assert_eq!(ev.len(), 2);
    }

    #[test]
    fn mcp_002_accepts_a_session_less_server_but_not_an_invisible_session_id() {
        let connect = |id: Value| {
            step(
                "connect",
                "connect",
                0,
                1,
                json!({"status": 200,
            "protocol_version": "2025-11-25", "era": "2025-11-25", "session_id": id}),
            )
        };
        assert_eq!(
            run(
                "MCP-002",
                &CheckSpec::default(),
                &obs(vec![connect(Value::Null)])
            ),
            Outcome::Pass
        );
        assert_eq!(
            run(
                "MCP-002",
                &CheckSpec::default(),
                &obs(vec![connect(json!("a1-b2"))])
            ),
            Outcome::Pass
        );
        assert!(fails(&run(
            "MCP-002",
            &CheckSpec::default(),
            &obs(vec![connect(json!("a b"))])
        )));
    }

    #[test]
    fn msg_003_wants_invalid_images_refused_even_with_vision() {
        let mut s = step(
            "bad",
            "send",
            0,
            2,
            json!({"status": 200, "result": {"isError": true,
            "content": [{"type": "text", "text": "images[0] is not valid base64"}]}}),
        );
        s.request = json!({"message": "look", "images": [{"data": "not *base64*!", "mime_type": "image/png"}]});
        let mut o = obs(vec![s]);
        o.llm_journals.insert("openai".into(), vec![]);
        assert_eq!(
            run("MSG-003", &with(json!({"vision": true})), &o),
            Outcome::Pass
        );
        o.steps[0].request =
            json!({"message": "look", "images": [{"data": "aGVsbG8=", "mime_type": "text/plain"}]});
        assert_eq!(
            run("MSG-003", &with(json!({"vision": true})), &o),
            Outcome::Pass
        );
        o.steps[0].output = json!({"status": 200, "text": "a picture", "result": {"content": []}});
        assert!(fails(&run("MSG-003", &with(json!({"vision": true})), &o)));
    }

    #[test]
    fn msg_005_reads_a_history_shared_by_two_connections_through_prompts_get() {
        let mut connect = step("c", "connect", 0, 1, json!({"status": 200}));
        connect.agent = Some("bob".into());
        connect.request = json!({"agent": "research", "alias": "bob"});
        let mut alice = step(
            "a",
            "send",
            1,
            2,
            json!({"status": 200, "text": "hi alice"}),
        );
        alice.request = json!({"agent": "research", "message": "first from alice"});
        let mut h = step(
            "h",
            "request",
            3,
            4,
            json!({"status": 200, "result": {"messages": [
            {"role": "user", "content": {"type": "text", "text": "first from alice"}},
            {"role": "assistant", "content": {"type": "text", "text": "hi alice"}}]}}),
        );
        h.agent = Some("bob".into());
        h.request = json!({"agent": "bob", "method": "prompts/get", "params": {"name": "research_history"}});
        let o = obs(vec![connect.clone(), alice.clone(), h.clone()]);
        assert_eq!(run("MSG-005", &CheckSpec::default(), &o), Outcome::Pass);
        h.output = json!({"status": 200, "result": {"messages": []}});
        let o = obs(vec![connect, alice, h]);
        assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
    }

    #[test]
    fn msg_005_wants_no_stored_conversation_for_a_request_scoped_agent() {
        let mut h = step(
            "h",
            "history",
            3,
            4,
            json!({"status": 200, "error": {"code": -32602}}),
        );
        h.request = json!({"agent": "research"});
        let mut o = obs(vec![h]);
        o.deployment = Some(deployment(
            json!({"agents": {"research": {"instance_scope": "request"}}}),
        ));
        assert_eq!(run("MSG-005", &CheckSpec::default(), &o), Outcome::Pass);
        o.steps[0].output = json!({"status": 200, "result": {"messages": [{"role": "user"}]}});
        assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
    }
}
