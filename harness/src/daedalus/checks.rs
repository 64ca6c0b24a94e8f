//! The client checks: each reads the mock Pallas's journal of what the client sent (and the
//! scenario's script, for what the mock answered) and concludes an [`Outcome`].
//!
//! One idea: the client checks, one evaluator per check over the same journal and its few
//! shared readings (sessions opened, health answers, what followed a request), with their tests.

use std::collections::{BTreeMap, BTreeSet};

use pallas_mocks::pallas::SERVER_JSON_PATH;
use pallas_mocks::pallas::spec::HealthStatus;
use pallas_mocks::{MockPallasSpec, PallasJournalEntry};
use serde_json::Value;

use crate::checks::{Evidence, Outcome, Witness};

/// What a client did in one scenario, as the mock Pallas saw it.
#[derive(Debug)]
pub struct Seen<'a> {
    /// Every request, in arrival order.
    pub journal: &'a [PallasJournalEntry],
    /// The mock's script.
    pub spec: &'a MockPallasSpec,
    /// Agent key → the URL its registry entry gave.
    pub agent_urls: &'a BTreeMap<String, String>,
    /// When the client's process ended (RFC 3339): the end of a call still streaming then.
    pub ended: String,
    /// The agent the task named, and how many messages it asked for.
    pub task: (Option<&'a str>, usize),
    /// Each change of the registry's listing: the journal's length when it was made, and the
    /// agents listed from then on.
    pub changes: &'a [(usize, BTreeSet<String>)],
    /// The user's bearer token the client was given, if any.
    pub bearer: Option<&'a str>,
}

/// One journal entry with its position, for evidence.
fn label(i: usize, e: &PallasJournalEntry) -> String {
    let at = e.agent.as_deref().map_or_else(
        || format!("registry {}", e.path),
        |a| format!("agent `{a}` {}", e.path),
    );
    let what = match (&e.jsonrpc_method, &e.tool) {
        (Some(m), Some(t)) => format!(" {m} `{t}`"),
        (Some(m), None) => format!(" {m}"),
        _ => String::new(),
    };
    format!("request #{} {} {at}{what}", i + 1, e.method)
}

fn header<'e>(e: &'e PallasJournalEntry, name: &str) -> Option<&'e str> {
    e.headers.get(name).map(String::as_str)
}

fn path_only(path: &str) -> &str {
    path.split('?').next().unwrap_or(path)
}

fn is_registry_fetch(e: &PallasJournalEntry) -> bool {
    e.agent.is_none() && e.method == "GET" && path_only(&e.path) == SERVER_JSON_PATH
}

fn is_call(e: &PallasJournalEntry) -> bool {
    e.agent.is_some() && e.jsonrpc_method.as_deref() == Some("tools/call")
}

fn is_health(e: &PallasJournalEntry) -> bool {
    is_call(e) && e.tool.as_deref() == Some("get_health")
}

fn is_initialize(e: &PallasJournalEntry) -> bool {
    e.agent.is_some() && e.jsonrpc_method.as_deref() == Some("initialize")
}

fn ok(e: &PallasJournalEntry) -> bool {
    e.status.is_some_and(|s| (200..300).contains(&s))
}

fn token_text(t: &Value) -> String {
    t.to_string()
}

/// Microseconds since the epoch of an RFC 3339 time (0 when unreadable).
fn micros(t: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(t).map_or(0, |d| d.timestamp_micros())
}

/// Sessions each agent opened: `(agent, initialize index, session id)`.
fn sessions(seen: &Seen<'_>) -> Vec<(String, usize, String)> {
    seen.journal
        .iter()
        .enumerate()
        .filter(|(_, e)| is_initialize(e) && ok(e))
        .filter_map(|(i, e)| Some((e.agent.clone()?, i, e.answered_session_id.clone()?)))
        .collect()
}

/// The requests that follow a successful `initialize` on the same agent (the handshake's own
/// `initialize` requests excluded).
fn after_initialize<'a>(seen: &'a Seen<'_>) -> Vec<(usize, &'a PallasJournalEntry)> {
    let first: BTreeMap<&str, usize> = sessions(seen).iter().fold(BTreeMap::new(), |mut m, s| {
        let key: &str = seen.journal[s.1].agent.as_deref().unwrap_or_default();
        m.entry(key).or_insert(s.1);
        m
    });
    seen.journal
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            !is_initialize(e)
                && e.agent
                    .as_deref()
                    .and_then(|a| first.get(a))
                    .is_some_and(|f| f < i)
        })
        .collect()
}

/// The client's agent tool calls other than `get_health` (the user's messages), or the
/// inconclusive outcome of a run without any.
fn message_calls<'a>(seen: &'a Seen<'_>) -> Result<Vec<(usize, &'a PallasJournalEntry)>, Outcome> {
    let calls: Vec<(usize, &PallasJournalEntry)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| is_call(e) && !is_health(e))
        .collect();
    if calls.is_empty() {
        return Err(Outcome::Inconclusive(
            "the client called no agent tool other than `get_health`".into(),
        ));
    }
    Ok(calls)
}

/// DAE-001: a progress token on every agent tool call but `get_health`.
pub fn progress_token_sent(seen: &Seen<'_>) -> Outcome {
    let calls = match message_calls(seen) {
        Ok(c) => c,
        Err(none) => return none,
    };
    let missing: Vec<Evidence> = calls
        .iter()
        .filter(|(_, e)| e.progress_token.is_none())
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                "`params._meta.progressToken`",
                "no progress token",
            )
        })
        .collect();
    if !missing.is_empty() {
        return Outcome::Fail(
            format!(
                "{} of {} agent tool call(s) carried no `_meta.progressToken`",
                missing.len(),
                calls.len()
            ),
            missing,
        );
    }
    Outcome::Kept(
        calls
            .iter()
            .map(|(i, e)| {
                Witness::new(
                    label(*i, e),
                    format!(
                        "progressToken {}",
                        e.progress_token
                            .as_ref()
                            .map_or_else(String::new, token_text)
                    ),
                )
            })
            .collect(),
    )
}

/// DAE-002: every progress token is a string or an integer.
pub fn progress_token_type(seen: &Seen<'_>) -> Outcome {
    let with: Vec<(usize, &PallasJournalEntry, &Value)> = seen
        .journal
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e, e.progress_token.as_ref()?)))
        .collect();
    if with.is_empty() {
        return Outcome::Inconclusive("no request carried a progress token".into());
    }
    let bad: Vec<Evidence> = with
        .iter()
        .filter(|(_, _, t)| !(t.is_string() || t.is_i64() || t.is_u64()))
        .map(|(i, e, t)| Evidence::new(label(*i, e), "a string or an integer", token_text(t)))
        .collect();
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} progress token(s) are neither a string nor an integer",
                bad.len()
            ),
            bad,
        );
    }
    Outcome::Kept(
        with.iter()
            .map(|(i, e, t)| Witness::new(label(*i, e), format!("progressToken {}", token_text(t))))
            .collect(),
    )
}

/// DAE-003: no two calls active at once on one agent share a token.
pub fn progress_token_unique(seen: &Seen<'_>) -> Outcome {
    let end = micros(&seen.ended);
    let calls: Vec<(usize, &PallasJournalEntry, &Value, i64, i64)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| is_call(e))
        .filter_map(|(i, e)| {
            let t = e.progress_token.as_ref()?;
            let finished = e.finished.as_deref().map_or(end, micros);
            Some((i, e, t, micros(&e.time), finished))
        })
        .collect();
    let mut overlapping = Vec::new();
    for (n, a) in calls.iter().enumerate() {
        for b in &calls[n + 1..] {
            if a.1.agent == b.1.agent && a.3 < b.4 && b.3 < a.4 {
                overlapping.push((a, b));
            }
        }
    }
    if overlapping.is_empty() {
        return Outcome::NotApplicable(format!(
            "no two calls with a progress token were active at once on one agent ({} call(s) with a token for the task's {} message(s), each answered before the next began)",
            calls.len(),
            seen.task.1
        ));
    }
    let reused: Vec<Evidence> = overlapping
        .iter()
        .filter(|(a, b)| a.2 == b.2)
        .map(|(a, b)| {
            Evidence::new(
                format!("{} and {}", label(a.0, a.1), label(b.0, b.1)),
                "a different token for each active request",
                format!("both {}", token_text(a.2)),
            )
        })
        .collect();
    if !reused.is_empty() {
        return Outcome::Fail(
            format!(
                "{} pair(s) of calls active at once carried the same progress token",
                reused.len()
            ),
            reused,
        );
    }
    Outcome::Kept(
        overlapping
            .iter()
            .map(|(a, b)| {
                Witness::new(
                    format!(
                        "{} and {}, active at once",
                        label(a.0, a.1),
                        label(b.0, b.1)
                    ),
                    format!("tokens {} and {}", token_text(a.2), token_text(b.2)),
                )
            })
            .collect(),
    )
}

/// DAE-004: the registry document is fetched before any agent is contacted.
pub fn registry_fetched_first(seen: &Seen<'_>) -> Outcome {
    let fetch = seen.journal.iter().position(is_registry_fetch);
    let first_agent = seen.journal.iter().position(|e| e.agent.is_some());
    match (fetch, first_agent) {
        (None, None) => Outcome::Inconclusive(
            "the client reached neither the registry document nor an agent".into(),
        ),
        (None, Some(a)) => Outcome::Fail(
            "the client contacted an agent without fetching the registry document".into(),
            vec![Evidence::new(
                label(a, &seen.journal[a]),
                format!("an earlier `GET {SERVER_JSON_PATH}`"),
                "no request for the registry document at all",
            )],
        ),
        (Some(r), Some(a)) if a < r => Outcome::Fail(
            "the client contacted an agent before fetching the registry document".into(),
            vec![Evidence::new(
                label(a, &seen.journal[a]),
                format!("after `GET {SERVER_JSON_PATH}`"),
                format!("before it ({})", label(r, &seen.journal[r])),
            )],
        ),
        (Some(r), a) => Outcome::kept(
            label(r, &seen.journal[r]),
            match a {
                Some(a) => format!(
                    "the registry document, before the first agent request (#{})",
                    a + 1
                ),
                None => "the registry document (no agent contacted)".to_owned(),
            },
        ),
    }
}

/// DAE-005: every MCP request goes to an endpoint the registry gave.
pub fn endpoint_from_registry(seen: &Seen<'_>) -> Outcome {
    let mcp: Vec<(usize, &PallasJournalEntry)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| !is_registry_fetch(e))
        .collect();
    if mcp.is_empty() {
        return Outcome::Inconclusive("the client sent no MCP request".into());
    }
    let listed_path = |agent: &str| {
        seen.agent_urls
            .get(agent)
            .and_then(|u| reqwest::Url::parse(u).ok())
            .map(|u| u.path().to_owned())
    };
    let mut bad = Vec::new();
    let mut good: BTreeMap<String, String> = BTreeMap::new();
    let first_fetch = seen.journal.iter().position(is_registry_fetch);
    for (i, e) in &mcp {
        match &e.agent {
            None => bad.push(Evidence::new(
                label(*i, e),
                "an agent endpoint from a registry entry's `remotes`",
                format!(
                    "{} {} on the registry's own port, which serves no agent",
                    e.method, e.path
                ),
            )),
            Some(a) => {
                let want = listed_path(a);
                if want.as_deref() != Some(path_only(&e.path)) {
                    bad.push(Evidence::new(
                        label(*i, e),
                        format!(
                            "the path of `{}`",
                            seen.agent_urls.get(a).map_or("?", String::as_str)
                        ),
                        e.path.clone(),
                    ));
                } else if first_fetch.is_none_or(|f| f > *i) {
                    bad.push(Evidence::new(
                        label(*i, e),
                        "an endpoint read from the registry first",
                        "the agent was reached before any registry document was fetched",
                    ));
                } else if let Some(u) = seen.agent_urls.get(a) {
                    let decoy = seen
                        .spec
                        .agents
                        .get(a)
                        .filter(|s| s.sse_remote_first)
                        .map(|_| {
                            format!(
                                "; its `sse` remote {} listed first, not used",
                                pallas_mocks::pallas::sse_remote_url(u)
                            )
                        })
                        .unwrap_or_default();
                    good.insert(
                        a.clone(),
                        format!(
                            "reached at {u}, its registry entry's `streamable-http` remote{decoy}"
                        ),
                    );
                }
            }
        }
    }
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} request(s) went to an endpoint no registry entry gave",
                bad.len()
            ),
            bad,
        );
    }
    Outcome::Kept(
        good.into_iter()
            .map(|(a, text)| Witness::new(format!("agent `{a}`"), text))
            .collect(),
    )
}

/// DAE-006: `get_health` is a `tools/call` with no arguments.
pub fn health_call_shape(seen: &Seen<'_>) -> Outcome {
    let calls: Vec<(usize, &PallasJournalEntry)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| is_health(e))
        .collect();
    if calls.is_empty() {
        return Outcome::Inconclusive("the client never called `get_health`".into());
    }
    let empty = |v: &Option<Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    };
    let bad: Vec<Evidence> = calls
        .iter()
        .filter(|(_, e)| !empty(&e.arguments))
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                "no arguments (`{}` or none)",
                e.arguments
                    .as_ref()
                    .map_or_else(String::new, Value::to_string),
            )
        })
        .collect();
    if !bad.is_empty() {
        return Outcome::breaks(
            "s000.daedalus-health-no-arguments",
            format!("{} `get_health` call(s) passed arguments", bad.len()),
            bad,
        );
    }
    Outcome::Kept(
        calls
            .iter()
            .map(|(i, e)| {
                Witness::new(
                    label(*i, e),
                    e.arguments
                        .as_ref()
                        .map_or_else(|| "no `arguments`".to_owned(), |a| format!("arguments {a}")),
                )
            })
            .collect(),
    )
}

/// What a `get_health` call answered, as the mock's script and the journal tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HealthAnswer {
    Ok,
    Degraded,
    Error,
    /// No health answer: an HTTP error, a scripted fault (seed 000: "fails entirely").
    Failed,
}

impl HealthAnswer {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "`ok`",
            Self::Degraded => "`degraded`",
            Self::Error => "`error`",
            Self::Failed => "no answer (the check failed)",
        }
    }
}

/// The answer of the `get_health` at `i`: `None` when the agent's scripted health changes over
/// time or is a raw text (the answer is then not known from the script).
fn health_answer(seen: &Seen<'_>, e: &PallasJournalEntry) -> Option<HealthAnswer> {
    if !ok(e) || e.fault.is_some() {
        return Some(HealthAnswer::Failed);
    }
    let agent = seen.spec.agents.get(e.agent.as_deref()?)?;
    let first = agent.health.first().map_or(HealthStatus::Ok, |p| p.status);
    if agent
        .health
        .iter()
        .any(|p| p.status != first || p.raw.is_some())
    {
        return None;
    }
    Some(match first {
        HealthStatus::Ok => HealthAnswer::Ok,
        HealthStatus::Degraded => HealthAnswer::Degraded,
        HealthStatus::Error => HealthAnswer::Error,
    })
}

/// DAE-007: no message to an agent whose last health check answered `error` or failed.
pub fn chat_blocked_on_error(seen: &Seen<'_>) -> Outcome {
    let mut blocking = Vec::new();
    let mut bad = Vec::new();
    for (i, e) in seen.journal.iter().enumerate().filter(|(_, e)| is_call(e)) {
        if is_health(e) {
            continue;
        }
        // The last health check of this agent before the message.
        let last = seen.journal[..i]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, h)| is_health(h) && h.agent == e.agent);
        if let Some((h, he)) = last
            && let Some(answer @ (HealthAnswer::Error | HealthAnswer::Failed)) =
                health_answer(seen, he)
        {
            let rule = if answer == HealthAnswer::Error {
                "s000.daedalus-chat-blocked"
            } else {
                "s000.daedalus-health-failure-is-error"
            };
            bad.push((
                rule,
                Evidence::new(
                    label(i, e),
                    format!(
                        "no message: the last health check of the agent (request #{}) gave {}",
                        h + 1,
                        answer.as_str()
                    ),
                    "a message was sent",
                ),
            ));
        }
    }
    for (h, he) in seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| is_health(e))
    {
        if let Some(answer @ (HealthAnswer::Error | HealthAnswer::Failed)) = health_answer(seen, he)
        {
            blocking.push(Witness::new(
                label(h, he),
                format!(
                    "gave {}; no message to agent `{}` followed it",
                    answer.as_str(),
                    he.agent.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    if let Some((rule, _)) = bad.first() {
        let rule = *rule;
        return Outcome::breaks(
            rule,
            format!(
                "{} message(s) sent to an agent whose last health check gave `error` or failed",
                bad.len()
            ),
            bad.into_iter().map(|(_, e)| e).collect(),
        );
    }
    if blocking.is_empty() {
        return Outcome::Inconclusive(
            "no health check of the client answered `error` or failed".into(),
        );
    }
    Outcome::Kept(blocking)
}

/// DAE-014: the message asked for is sent to a `degraded` agent.
pub fn degraded_allows_chat(seen: &Seen<'_>) -> Outcome {
    let (Some(agent), n) = seen.task else {
        return Outcome::Inconclusive("the task names no agent".into());
    };
    if n == 0 {
        return Outcome::Inconclusive("the task asks for no message".into());
    }
    let Some((h, he)) = seen.journal.iter().enumerate().find(|(_, e)| {
        is_health(e)
            && e.agent.as_deref() == Some(agent)
            && health_answer(seen, e) == Some(HealthAnswer::Degraded)
    }) else {
        return Outcome::Inconclusive(format!("no health check of `{agent}` answered `degraded`"));
    };
    match seen
        .journal
        .iter()
        .enumerate()
        .skip(h + 1)
        .find(|(_, e)| is_call(e) && !is_health(e) && e.agent.as_deref() == Some(agent))
    {
        Some((m, me)) => Outcome::kept(
            label(h, he),
            format!("gave `degraded`; the message followed ({})", label(m, me)),
        ),
        None => Outcome::Fail(
            format!("no message was sent to `{agent}`, whose health was `degraded`"),
            vec![Evidence::new(
                label(h, he),
                "the message the task asked for, after a `degraded` health answer",
                "no message call to the agent",
            )],
        ),
    }
}

/// DAE-015: a client started after an agent left the registry does not call it.
pub fn removed_agent_not_called(seen: &Seen<'_>) -> Outcome {
    let all: BTreeSet<String> = seen.spec.agents.keys().cloned().collect();
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for (at, listed) in seen.changes {
        let (before, after) = seen.journal.split_at((*at).min(seen.journal.len()));
        // The agents that left and that the client had called: the premise.
        let left: Vec<&String> = all
            .difference(listed)
            .filter(|k| before.iter().any(|e| e.agent.as_ref() == Some(*k)))
            .collect();
        if left.is_empty() || after.is_empty() {
            continue;
        }
        let names = left
            .iter()
            .map(|r| format!("`{r}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let called: Vec<Evidence> = after
            .iter()
            .enumerate()
            .filter(|(_, e)| e.agent.as_ref().is_some_and(|a| left.contains(&a)))
            .map(|(n, e)| {
                Evidence::new(
                    label(at + n, e),
                    format!("no request to {names}, which the registry no longer lists"),
                    "a request to it",
                )
            })
            .collect();
        if called.is_empty() {
            let reread = after.iter().position(is_registry_fetch).map_or_else(
                || "without reading the registry again".to_owned(),
                |n| format!("reading the registry again (request #{})", at + n + 1),
            );
            good.push(Witness::new(
                format!("{names}, called before it left the registry (requests #1–#{at})"),
                format!(
                    "started again, the client sent {} request(s), {reread}, none to {names}",
                    after.len()
                ),
            ));
        }
        bad.extend(called);
    }
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} request(s) went to an agent the registry no longer lists",
                bad.len()
            ),
            bad,
        );
    }
    if good.is_empty() {
        return Outcome::Inconclusive(
            "no agent the client had called left the registry before the client sent more requests"
                .into(),
        );
    }
    Outcome::Kept(good)
}

/// The media types an `Accept` value lists.
fn accepted(value: &str) -> BTreeSet<String> {
    value
        .split(',')
        .filter_map(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// DAE-008: `Accept` lists both types on every POST, `text/event-stream` on every GET.
pub fn accept_header(seen: &Seen<'_>) -> Outcome {
    let sent: Vec<(usize, &PallasJournalEntry)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| e.agent.is_some() && (e.method == "POST" || e.method == "GET"))
        .collect();
    if sent.is_empty() {
        return Outcome::Inconclusive("the client sent no POST or GET to an agent".into());
    }
    let lists = |e: &PallasJournalEntry, t: &str| {
        header(e, "accept")
            .map(accepted)
            .unwrap_or_default()
            .contains(t)
    };
    let seen_value = |e: &PallasJournalEntry| {
        header(e, "accept").map_or_else(
            || "no `Accept` header".to_owned(),
            |v| format!("Accept: {v}"),
        )
    };
    let bad_posts: Vec<Evidence> = sent
        .iter()
        .filter(|(_, e)| {
            e.method == "POST" && !(lists(e, "application/json") && lists(e, "text/event-stream"))
        })
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                "`Accept` listing `application/json` and `text/event-stream`",
                seen_value(e),
            )
        })
        .collect();
    if !bad_posts.is_empty() {
        return Outcome::breaks(
            "mcp.client-accept",
            format!(
                "{} POST(s) did not list both types in `Accept`",
                bad_posts.len()
            ),
            bad_posts,
        );
    }
    let bad_gets: Vec<Evidence> = sent
        .iter()
        .filter(|(_, e)| e.method == "GET" && !lists(e, "text/event-stream"))
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                "`Accept` listing `text/event-stream`",
                seen_value(e),
            )
        })
        .collect();
    if !bad_gets.is_empty() {
        return Outcome::breaks(
            "mcp.client-get-accept",
            format!(
                "{} GET(s) did not list `text/event-stream` in `Accept`",
                bad_gets.len()
            ),
            bad_gets,
        );
    }
    let mut values: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (_, e) in &sent {
        *values
            .entry((e.method.as_str(), header(e, "accept").unwrap_or_default()))
            .or_default() += 1;
    }
    Outcome::Kept(
        values
            .into_iter()
            .map(|((m, v), n)| Witness::new(format!("`Accept` of {n} {m}(s)"), v.to_owned()))
            .collect(),
    )
}

/// For each session opened `(agent, initialize index, id)`: the first later request on that
/// session that `wanted` accepts. A witness (`words.0`, with its request number) where there is
/// one, else evidence (`words.1` expected, `words.2` seen).
fn each_session_followed(
    seen: &Seen<'_>,
    opened: &[(String, usize, String)],
    wanted: impl Fn(&PallasJournalEntry) -> bool,
    words: (&str, &str, &str),
) -> (Vec<Witness>, Vec<Evidence>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (agent, i, sid) in opened {
        let found = seen.journal.iter().enumerate().skip(i + 1).find(|(_, e)| {
            e.agent.as_deref() == Some(agent.as_str())
                && e.session_id.as_deref() == Some(sid.as_str())
                && wanted(e)
        });
        let at = label(*i, &seen.journal[*i]);
        match found {
            Some((j, _)) => good.push(Witness::new(
                at,
                format!("{} (request #{})", words.0, j + 1),
            )),
            None => bad.push(Evidence::new(at, words.1, words.2)),
        }
    }
    (good, bad)
}

/// DAE-009: `notifications/initialized` follows each successful `initialize`.
pub fn initialized_sent(seen: &Seen<'_>) -> Outcome {
    let opened = sessions(seen);
    if opened.is_empty() {
        return Outcome::Inconclusive("no `initialize` was answered with a session".into());
    }
    let (good, bad) = each_session_followed(
        seen,
        &opened,
        |e| e.jsonrpc_method.as_deref() == Some("notifications/initialized"),
        (
            "`notifications/initialized` followed",
            "`notifications/initialized` on the session",
            "none was sent on it",
        ),
    );
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} session(s) never got `notifications/initialized`",
                bad.len()
            ),
            bad,
        );
    }
    Outcome::Kept(good)
}

/// DAE-010: `MCP-Protocol-Version` on every request after `initialize`.
pub fn protocol_version_header(seen: &Seen<'_>) -> Outcome {
    let later = after_initialize(seen);
    if later.is_empty() {
        return Outcome::Inconclusive("no request followed a successful `initialize`".into());
    }
    let bad: Vec<Evidence> = later
        .iter()
        .filter(|(_, e)| header(e, "mcp-protocol-version").is_none())
        .map(|(i, e)| Evidence::new(label(*i, e), "an `MCP-Protocol-Version` header", "none"))
        .collect();
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} of {} request(s) after `initialize` carried no `MCP-Protocol-Version`",
                bad.len(),
                later.len()
            ),
            bad,
        );
    }
    let values: BTreeSet<&str> = later
        .iter()
        .filter_map(|(_, e)| header(e, "mcp-protocol-version"))
        .collect();
    Outcome::Kept(
        values
            .into_iter()
            .map(|v| {
                Witness::new(
                    format!("`MCP-Protocol-Version` of {} request(s)", later.len()),
                    v.to_owned(),
                )
            })
            .collect(),
    )
}

/// DAE-011: the session's `MCP-Session-Id` on every request after `initialize`.
pub fn session_id_echoed(seen: &Seen<'_>) -> Outcome {
    let issued: BTreeSet<(String, String)> =
        sessions(seen).into_iter().map(|(a, _, s)| (a, s)).collect();
    let later = after_initialize(seen);
    if later.is_empty() {
        return Outcome::Inconclusive(
            "no request followed an `initialize` that returned `MCP-Session-Id`".into(),
        );
    }
    let bad: Vec<Evidence> = later
        .iter()
        .filter(|(_, e)| {
            let agent = e.agent.clone().unwrap_or_default();
            !e.session_id
                .as_ref()
                .is_some_and(|s| issued.contains(&(agent, s.clone())))
        })
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                "the `MCP-Session-Id` the agent's `initialize` returned",
                e.session_id.as_deref().map_or_else(
                    || "no `MCP-Session-Id`".to_owned(),
                    |s| format!("MCP-Session-Id: {s} (never issued by this agent)"),
                ),
            )
        })
        .collect();
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} of {} request(s) after `initialize` did not carry the session's id",
                bad.len(),
                later.len()
            ),
            bad,
        );
    }
    Outcome::kept(
        format!("{} request(s) after `initialize`", later.len()),
        format!(
            "each carried an `MCP-Session-Id` its agent issued ({} session(s))",
            issued.len()
        ),
    )
}

/// What the client sent to `agent` after request `i`: up to three requests, in order.
fn sent_after(seen: &Seen<'_>, i: usize, agent: Option<&str>) -> String {
    let next: Vec<String> = seen
        .journal
        .iter()
        .enumerate()
        .skip(i + 1)
        .filter(|(_, e)| e.agent.as_deref() == agent)
        .take(3)
        .map(|(j, e)| {
            let sid = if e.session_id.is_some() {
                " with the session id"
            } else {
                ""
            };
            match e.jsonrpc_method.as_deref() {
                Some(m) => format!("#{} {} {m}{sid}", j + 1, e.method),
                None => format!("#{} {}{sid}", j + 1, e.method),
            }
        })
        .collect();
    if next.is_empty() {
        "nothing more to this agent".to_owned()
    } else {
        format!("then {}", next.join(", "))
    }
}

/// DAE-012: after each 404 on its session, a later `initialize` without a session id.
pub fn new_session_after_404(seen: &Seen<'_>) -> Outcome {
    let expired: Vec<(usize, &PallasJournalEntry)> = seen
        .journal
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.agent.is_some()
                && e.method == "POST"
                && e.status == Some(404)
                && e.session_id.is_some()
        })
        .collect();
    if expired.is_empty() {
        return Outcome::Inconclusive(
            "no POST of the client was answered 404 on its session (a DELETE answered 404 ends a session the client no longer needs: not counted)".into(),
        );
    }
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for (i, e) in &expired {
        let fresh = seen
            .journal
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, x)| x.agent == e.agent && is_initialize(x) && x.session_id.is_none());
        match fresh {
            Some((j, _)) => good.push(Witness::new(
                label(*i, e),
                format!("answered 404; a new `initialize` without a session id followed (request #{}; {})", j + 1, sent_after(seen, *i, e.agent.as_deref())),
            )),
            None => bad.push(Evidence::new(
                label(*i, e),
                "answered 404: a later `initialize` without `MCP-Session-Id` to this agent",
                sent_after(seen, *i, e.agent.as_deref()),
            )),
        }
    }
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "no new session was started after {} of {} 404(s) answered to the client's POSTs on its session",
                bad.len(),
                expired.len()
            ),
            bad,
        );
    }
    Outcome::Kept(good)
}

/// DAE-013: every session the client opened is ended with `DELETE`.
pub fn sessions_deleted(seen: &Seen<'_>) -> Outcome {
    let dead: BTreeSet<&str> = seen
        .journal
        .iter()
        .filter(|e| e.status == Some(404))
        .filter_map(|e| e.session_id.as_deref())
        .collect();
    let opened: Vec<(String, usize, String)> = sessions(seen)
        .into_iter()
        .filter(|(_, _, s)| !dead.contains(s.as_str()))
        .collect();
    if opened.is_empty() {
        return Outcome::Inconclusive("the client opened no session that stayed alive".into());
    }
    let (good, bad) = each_session_followed(
        seen,
        &opened,
        |e| e.method == "DELETE",
        (
            "its session ended with DELETE",
            "`DELETE` with the session's `MCP-Session-Id` before the client exits",
            "the session was left open",
        ),
    );
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} of {} session(s) were never ended with DELETE",
                bad.len(),
                opened.len()
            ),
            bad,
        );
    }
    Outcome::Kept(good)
}

/// DAE-016: each message's `tools/call` carries the user's bearer as `Authorization: Bearer`
/// (the scheme in any case, RFC 9110 §11.1). The journal keeps a credential only as its
/// fingerprint, so the fingerprints are compared.
pub fn bearer_sent(seen: &Seen<'_>) -> Outcome {
    let Some(bearer) = seen.bearer else {
        return Outcome::NotApplicable("the client was given no user bearer".into());
    };
    let calls = match message_calls(seen) {
        Ok(c) => c,
        Err(none) => return none,
    };
    let want = pallas_mocks::redact::fingerprint(bearer);
    let carries = |e: &PallasJournalEntry| {
        header(e, "authorization").is_some_and(|v| {
            let (scheme, token) = pallas_mocks::redact::strip_scheme(v);
            !scheme.is_empty() && token == want
        })
    };
    let shown = |e: &PallasJournalEntry| {
        header(e, "authorization").map_or_else(
            || "no `Authorization` header".to_owned(),
            |v| format!("Authorization: {v}"),
        )
    };
    let bad: Vec<Evidence> = calls
        .iter()
        .filter(|(_, e)| !carries(e))
        .map(|(i, e)| {
            Evidence::new(
                label(*i, e),
                format!("Authorization: Bearer {want} (the user's bearer)"),
                shown(e),
            )
        })
        .collect();
    if !bad.is_empty() {
        return Outcome::Fail(
            format!(
                "{} of {} message call(s) did not carry the user's bearer",
                bad.len(),
                calls.len()
            ),
            bad,
        );
    }
    let mut good = vec![Witness::new(
        "the message calls",
        format!(
            "{} call(s) for the task's {} message(s), each compared with the task's bearer ({want})",
            calls.len(),
            seen.task.1
        ),
    )];
    good.extend(
        calls
            .iter()
            .map(|(i, e)| Witness::new(label(*i, e), shown(e))),
    );
    Outcome::Kept(good)
}

/// The evaluator of a client check.
pub fn evaluator(id: &str) -> Option<fn(&Seen<'_>) -> Outcome> {
    Some(match id {
        "DAE-001" => progress_token_sent,
        "DAE-002" => progress_token_type,
        "DAE-003" => progress_token_unique,
        "DAE-004" => registry_fetched_first,
        "DAE-005" => endpoint_from_registry,
        "DAE-006" => health_call_shape,
        "DAE-007" => chat_blocked_on_error,
        "DAE-008" => accept_header,
        "DAE-009" => initialized_sent,
        "DAE-010" => protocol_version_header,
        "DAE-011" => session_id_echoed,
        "DAE-012" => new_session_after_404,
        "DAE-013" => sessions_deleted,
        "DAE-014" => degraded_allows_chat,
        "DAE-015" => removed_agent_not_called,
        "DAE-016" => bearer_sent,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(agent: Option<&str>, method: &str, rpc: Option<&str>) -> PallasJournalEntry {
        PallasJournalEntry {
            time: "2026-11-29T10:00:00.000000Z".into(),
            agent: agent.map(str::to_owned),
            method: method.into(),
            path: if agent.is_some() {
                "/mcp".into()
            } else {
                SERVER_JSON_PATH.into()
            },
            headers: BTreeMap::new(),
            jsonrpc_method: rpc.map(str::to_owned),
            progress_token: None,
            tool: None,
            arguments: None,
            session_id: None,
            status: Some(200),
            fault: None,
            answered_session_id: None,
            finished: None,
        }
    }

    /// A well-behaved session: registry, initialize, initialized, tools/list, with headers.
    fn good() -> Vec<PallasJournalEntry> {
        let mut init = entry(Some("research"), "POST", Some("initialize"));
        init.answered_session_id = Some("s1".into());
        let later = |rpc: &str| {
            let mut e = entry(Some("research"), "POST", Some(rpc));
            e.session_id = Some("s1".into());
            e.headers
                .insert("mcp-protocol-version".into(), "2025-11-25".into());
            e
        };
        vec![
            entry(None, "GET", None),
            init,
            later("notifications/initialized"),
            later("tools/list"),
        ]
    }

    fn judge(f: fn(&Seen<'_>) -> Outcome, journal: &[PallasJournalEntry]) -> Outcome {
        let spec = MockPallasSpec::two_agents();
        let urls = BTreeMap::from([("research".to_owned(), "http://127.0.0.1:9/mcp".to_owned())]);
        f(&Seen {
            journal,
            spec: &spec,
            agent_urls: &urls,
            ended: "2026-11-29T10:00:01.000000Z".into(),
            task: (Some("research"), 1),
            changes: &[],
            bearer: Some("user-jwt"),
        })
    }

    fn failed(o: &Outcome) -> bool {
        o.broken_reason().is_some()
    }

    #[test]
    fn dae_004_fails_an_agent_reached_before_the_registry() {
        assert!(judge(registry_fetched_first, &good()).is_kept());
        let mut j = good();
        j.remove(0);
        assert!(failed(&judge(registry_fetched_first, &j)));
        j.push(entry(None, "GET", None));
        assert!(failed(&judge(registry_fetched_first, &j)));
    }

    #[test]
    fn dae_009_fails_a_session_without_initialized() {
        assert!(judge(initialized_sent, &good()).is_kept());
        let mut j = good();
        j.remove(2);
        assert!(failed(&judge(initialized_sent, &j)));
    }

    #[test]
    fn dae_010_fails_a_request_without_the_protocol_version() {
        assert!(judge(protocol_version_header, &good()).is_kept());
        let mut j = good();
        j[3].headers.clear();
        assert!(failed(&judge(protocol_version_header, &j)));
    }

    #[test]
    fn dae_011_fails_a_missing_or_foreign_session_id() {
        assert!(judge(session_id_echoed, &good()).is_kept());
        let mut j = good();
        j[3].session_id = None;
        assert!(failed(&judge(session_id_echoed, &j)));
        j[3].session_id = Some("s-from-elsewhere".into());
        assert!(failed(&judge(session_id_echoed, &j)));
    }

    #[test]
    fn dae_005_fails_a_request_on_the_registry_port_or_another_path() {
        assert!(judge(endpoint_from_registry, &good()).is_kept());
        let mut j = good();
        j[3].path = "/agents/research/mcp".into();
        assert!(failed(&judge(endpoint_from_registry, &j)));
        let mut j = good();
        let mut guess = entry(None, "POST", Some("initialize"));
        guess.path = "/mcp".into();
        j.push(guess);
        assert!(failed(&judge(endpoint_from_registry, &j)));
    }

    #[test]
    fn dae_008_fails_a_get_without_event_stream_in_accept() {
        let mut j = good();
        j[3].headers.insert(
            "accept".into(),
            "application/json, text/event-stream".into(),
        );
        j[2].headers.insert(
            "accept".into(),
            "application/json, text/event-stream".into(),
        );
        j[1].headers.insert(
            "accept".into(),
            "application/json, text/event-stream".into(),
        );
        let mut get = entry(Some("research"), "GET", None);
        get.session_id = Some("s1".into());
        get.headers
            .insert("accept".into(), "text/event-stream".into());
        j.push(get);
        assert!(judge(accept_header, &j).is_kept());
        j[4].headers
            .insert("accept".into(), "application/json".into());
        let o = judge(accept_header, &j);
        assert!(
            matches!(&o, Outcome::Breaks { rule, .. } if rule == "mcp.client-get-accept"),
            "{o:?}"
        );
    }

    #[test]
    fn dae_016_compares_the_bearer_by_fingerprint_on_every_message() {
        let call = |auth: Option<&str>| {
            let mut e = entry(Some("research"), "POST", Some("tools/call"));
            e.tool = Some("send_message".into());
            if let Some(a) = auth {
                e.headers.insert("authorization".into(), a.into());
            }
            e
        };
        let right = pallas_mocks::redact::redact_value("Bearer user-jwt");
        let other = pallas_mocks::redact::redact_value("Bearer someone-else");
        let mut j = good();
        j.push(call(Some(&right)));
        assert!(judge(bearer_sent, &j).is_kept());
        j.push(call(None));
        assert!(failed(&judge(bearer_sent, &j)));
        let mut j = good();
        j.push(call(Some(&other)));
        assert!(failed(&judge(bearer_sent, &j)));
        let mut j = good();
        j.push(call(Some(&pallas_mocks::redact::redact_value(
            "Basic user-jwt",
        ))));
        assert!(failed(&judge(bearer_sent, &j)));
        assert!(matches!(
            judge(bearer_sent, &good()),
            Outcome::Inconclusive(_)
        ));
    }

    #[test]
    fn dae_012_judges_every_404() {
        let mut j = good();
        let mut gone = entry(Some("research"), "POST", Some("tools/call"));
        gone.session_id = Some("s1".into());
        gone.status = Some(404);
        j.push(gone.clone());
        j.push(entry(Some("research"), "POST", Some("initialize")));
        assert!(judge(new_session_after_404, &j).is_kept());
        // A second session dies and nothing follows it.
        j.push(gone);
        assert!(failed(&judge(new_session_after_404, &j)));
    }

    #[test]
    fn nothing_observed_is_never_a_pass() {
        let j = vec![entry(None, "GET", None)];
        for f in [
            progress_token_sent,
            progress_token_type,
            health_call_shape,
            chat_blocked_on_error,
            accept_header,
            degraded_allows_chat,
            initialized_sent,
            protocol_version_header,
            session_id_echoed,
            new_session_after_404,
            sessions_deleted,
            removed_agent_not_called,
        ] {
            assert!(matches!(judge(f, &j), Outcome::Inconclusive(_)));
        }
        assert!(matches!(
            judge(progress_token_unique, &j),
            Outcome::NotApplicable(_)
        ));
    }
}
