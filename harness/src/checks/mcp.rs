//! MCP wire checks (MCP-*): schema validity, handshake, sessions, content types, tool errors, SSE and responses.

use crate::client::JsonRef;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::*;
use super::params::OneOrMany;
use super::read::excerpt;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use super::wire;
use crate::observation::Observation;
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("MCP-001", |_, o| wire_valid(o)),
    Check::new("MCP-002", handshake),
    Check::new("MCP-003", mcp_delete)
        .by_default("DELETE answers 2xx (405 is a skip) and the next request on the old session gets 404"),
    Check::new("MCP-004", content_types),
    Check::new("MCP-005", mcp_accept)
        .by_default("raw steps whose `Accept` does not accept one of the two types get 406 (media ranges as RFC 9110 reads them: `*/*` or `application/*` accepts `application/json`, `q=0` refuses)"),
    Check::new("MCP-006", mcp_sessions)
        .params::<McpSessions>()
        .by_default("raw steps with `with_session: false` (not `initialize`) get 400 (a session id the server never issued is no case of the rule: no sentence of MCP gives its status)"),
    Check::new("MCP-007", super::mcp_tools::mcp_tool_errors)
        .params::<super::mcp_tools::McpToolErrors>()
        .by_default("`call`/raw `tools/call` steps of tools no `list_tools` listed get a JSON-RPC error"),
    Check::new("MCP-011", super::mcp_tools::mcp_tool_inputs)
        .params::<super::mcp_tools::McpToolErrors>()
        .by_default("`call`/raw `tools/call` steps whose arguments the target's own listed `inputSchema` rejects get `isError` or -32602 with no model request at a mock LLM while they run (a model request then fails; no model request anywhere in the run, or another step running beside the call, is inconclusive); a step named in `invalid_arguments` that the schema accepts is not judged"),
    Check::new("MCP-008", mcp_sse)
        .by_default("every message of an SSE response carries an event id; no non-JSON data"),
    Check::new("MCP-009", responses),
    Check::new("MCP-010", one_response),
    Check::new("MCP-012", super::mcp_http::mcp_get)
        .by_default("`listen` steps (a GET of the MCP endpoint, with the session when one was issued): `Content-Type: text/event-stream` with a 2xx status, or 405"),
    Check::new("MCP-013", super::mcp_http::mcp_accepted)
        .by_default("the `notifications/initialized` of `connect` steps, `request` steps with `notification: true`, raw steps POSTing a notification or a response: when answered 2xx, 202 with no body (an HTTP error status is not judged)"),
];

/// The actions that send an MCP request and expect its response (a `request` step that sends a
/// notification aside: [`requests_of`]).
const REQUESTS: &[ActionKind] = &[
    ActionKind::ListTools,
    ActionKind::Health,
    ActionKind::Send,
    ActionKind::Call,
    ActionKind::History,
    ActionKind::Request,
];

/// [`REQUESTS`] and `connect`'s `initialize`.
const REQUESTS_AND_CONNECT: &[ActionKind] = &[
    ActionKind::ListTools,
    ActionKind::Health,
    ActionKind::Send,
    ActionKind::Call,
    ActionKind::History,
    ActionKind::Request,
    ActionKind::Connect,
];

/// The steps of `kinds` the check selects that sent a request (a `request` step with
/// `notification: true` expects no response).
fn requests_of<'a>(o: &'a Observed, c: &CheckSpec, kinds: &[ActionKind]) -> Vec<&'a StepRecord> {
    steps_of(o, c, kinds)
        .into_iter()
        .filter(|s| !matches!(s.action(), Some(StepAction::Request(r)) if r.notification))
        .collect()
}

pub(super) fn wire_valid(o: &Observed) -> Outcome {
    if o.received.is_empty() {
        return Outcome::Inconclusive("no JSON-RPC message received".into());
    }
    let mut ev = Vec::new();
    // JSON-RPC 2.0 §5 gives an error to a request whose id could not be determined
    // `"id": null`; MCP's error responses may omit the id "in error cases where the ID could
    // not be read". Such an error is judged as the id-less error MCP's schema describes, so
    // the null id alone is no violation. An id answering no request is MCP-009's matter.
    for m in &o.received {
        // Read in place: only a (small) null-id error is rewritten.
        let rewritten = is_null_id_error(m.message.root()).then(|| {
            let mut copy = m.message.to_value();
            if let Some(obj) = copy.as_object_mut() {
                obj.remove("id");
            }
            JsonDoc::from_value(&copy)
        });
        let message = rewritten.as_ref().unwrap_or(&m.message).root();
        match wire::validate_mcp(&m.version, message, m.request_method.as_deref()) {
            Ok(v) => ev.extend(v.into_iter().map(|v| Evidence {
                what: format!(
                    "{} message {}",
                    m.label,
                    m.message
                        .get("method")
                        .and_then(JsonRef::as_str)
                        .map(str::to_owned)
                        .or_else(|| m.message.get("id").map(|i| format!("id {i}")))
                        .unwrap_or_default()
                ),
                expected: Some(format!("valid against MCP {} schema", m.version)),
                seen: Some(format!("{} — {}", v.message, v.excerpt)),
                path: Some(v.path),
            })),
            Err(e) => return Outcome::Error(e.to_string()),
        }
        if ev.len() >= 10 {
            break;
        }
    }
    if !ev.is_empty() {
        fail(format!("{} schema violation(s)", ev.len()), ev)
    } else {
        let first = &o.received[0];
        let null_ids = o
            .received
            .iter()
            .filter(|m| is_null_id_error(m.message.root()))
            .count();
        let read_as = if null_ids == 0 {
            String::new()
        } else {
            format!(
                " ({null_ids} error(s) with id null read as the schema's id-less error; whether the id had to be echoed is MCP-009's)"
            )
        };
        Outcome::kept(
            format!(
                "{} JSON-RPC message(s) received, each valid against its MCP schema{read_as}; the first ({})",
                o.received.len(),
                first.label
            ),
            excerpt(first.message.root(), 200),
        )
    }
}

/// A JSON-RPC error response whose `id` is `null`.
pub(super) fn is_null_id_error(m: JsonRef<'_>) -> bool {
    m.get("id").is_some_and(JsonRef::is_null) && m.get("error").is_some()
}

pub(super) fn handshake(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Connect]);
    if steps.is_empty() {
        return na("connect");
    }
    let mut kept = Vec::new();
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("`{}` failed: {e}", s.name), vec![]);
        }
        let Observation::Connected(connected) = &s.observation else {
            return fail(
                format!("`{}` observed no `initialize` answer", s.name),
                vec![],
            );
        };
        if connected.era == "2026-07-28" {
            // `server/discover` negotiates nothing: the revision is the one the client sent.
            continue;
        }
        let v = connected.protocol_version.as_str();
        if !["2025-11-25", "2026-07-28", "2025-06-18", "2025-03-26"].contains(&v) {
            return fail(
                format!("negotiated `{v}`"),
                vec![Evidence::new(&s.name, "a supported revision", v)],
            );
        }
        // Issuing a session is optional (MCP transports: a server MAY assign one); an issued
        // id MUST only contain visible ASCII (0x21–0x7E).
        if let Some(id) = connected.session_id.as_deref()
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
        kept.push(Witness::new(
            &s.name,
            format!(
                "protocol version {v}; {}",
                connected.session_id.as_deref().map_or_else(
                    || "no session id".to_owned(),
                    |id| format!("a session id of {} visible-ASCII character(s)", id.len())
                )
            ),
        ));
    }
    if kept.is_empty() {
        return Outcome::NotApplicable(
            "every handshake was `server/discover` (2026-07-28): no `initialize` negotiated a revision"
                .to_owned(),
        );
    }
    Outcome::Kept(kept)
}

pub(super) fn content_types(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = requests_of(o, c, REQUESTS_AND_CONNECT);
    if steps.is_empty() {
        return na("MCP request");
    }
    let mut kept = Vec::new();
    for s in steps {
        if status(s) != 200 {
            continue;
        }
        let ct = s
            .observation
            .content_type()
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
        kept.push(Witness::new(
            &s.name,
            format!("HTTP 200, Content-Type {ct}"),
        ));
    }
    if kept.is_empty() {
        return Outcome::Inconclusive("no request was answered HTTP 200".into());
    }
    Outcome::Kept(kept)
}

pub(super) fn responses(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = requests_of(o, c, REQUESTS);
    let raw = raw_requests(o, c);
    if steps.is_empty() && raw.is_empty() {
        return na("MCP request");
    }
    // A raw request is judged by the responses it got: with no other request, the check needs
    // one that got any (a raw step may be answered by an HTTP error without a body).
    if steps.is_empty() && !raw.iter().any(|(s, _)| got_response(s)) {
        return Outcome::NotApplicable(
            "every request was a raw step answered without a JSON-RPC response (an HTTP error without a body): no response id to judge".into(),
        );
    }
    let mut kept = match raw_witnesses(&raw) {
        Ok(w) => w,
        Err(breach) => return breach,
    };
    for s in &steps {
        if let Some(stray) = s.observation.exchange().and_then(stray_response) {
            return stray_fail(
                s,
                stray,
                "of those the step sent",
                "a response with the request's id".to_owned(),
            );
        }
    }
    for s in steps {
        if s.timed_out {
            let cause = s
                .error
                .as_deref()
                .map_or_else(String::new, |e| format!(" ({e})"));
            return Outcome::Error(format!(
                "`{}` got no response before its step timeout{cause}: nothing observed to judge (a timeout is not a failure)",
                s.name
            ));
        }
        let answer = s.observation.exchange().and_then(|x| x.response.as_ref());
        let cancelled = s.observation.cancelled_at_ms().is_some();
        if cancelled && answer.is_none_or(|r| r.root().is_null()) {
            // The client cancelled it and it went unanswered, as MCP asks of the receiver.
            kept.push(Witness::new(&s.name, CANCELLED));
            continue;
        }
        if s.error.is_none()
            && s.observation.exchange().is_some_and(|x| {
                x.response.as_deref().is_none_or(|r| r.root().is_null()) && x.status == 200
            })
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
        if let Some(r) = answer {
            kept.push(Witness::new(
                &s.name,
                format!(
                    "a response with the request's id {}{}",
                    r.get("id")
                        .map_or_else(|| "(none)".to_owned(), |i| i.to_string()),
                    if cancelled {
                        " (answered though the client had cancelled it)"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    if kept
        .iter()
        .all(|w| w.seen.ends_with(NOT_JUDGED) || w.seen == CANCELLED)
    {
        return Outcome::Inconclusive("no request got a JSON-RPC response to judge".into());
    }
    Outcome::Kept(kept)
}

/// The witness row of a request the client cancelled, which MCP-009 leaves out (shown beside the
/// judged ones, never a witness alone).
const CANCELLED: &str = "cancelled by the client (notifications/cancelled): not judged (MCP: the receiver should not answer it)";

/// The end of a witness row that names a request MCP-009 left out (shown beside the judged ones,
/// never a witness alone).
const NOT_JUDGED: &str = ": not judged (no response id)";

/// MCP-009 over the raw requests: the witnesses of those answered with their id, or the breach.
fn raw_witnesses(raw: &[(&StepRecord, Value)]) -> Result<Vec<Witness>, Outcome> {
    let mut kept = Vec::new();
    for (s, sent) in raw {
        if let Some(stray) = raw_stray_response(s, sent) {
            return Err(stray_fail(
                s,
                stray,
                "(an error response carries the request's id, or null when the id could not be read)",
                format!("a response with id {sent} (or null, for an error)"),
            ));
        }
        if null_id_errors_only(s) {
            // The request's id was readable, so its error had to echo it, whatever the HTTP
            // status: MCP transports allow an id-less error body only for a refused notification
            // or response (and a rejected Origin), where there is no id to echo. An HTTP error
            // without a JSON-RPC body is not judged here (`got_response` is false).
            // One reason for every such answer (the step, id and status are the evidence), so a
            // bridge refusing several requests this way has one finding, not one per scenario.
            return Err(Outcome::breaks(
                "mcp.error-response-same-id",
                format!(
                    "the error answering a well-formed request carries id null, not the request's id ({})",
                    if status(s) >= 400 {
                        "on an HTTP error status"
                    } else {
                        "on a 2xx answer"
                    }
                ),
                vec![Evidence::new(
                    &s.name,
                    format!("an error response with id {sent}"),
                    format!("id null, HTTP {}", status(s)),
                )],
            ));
        }
        if got_response(s) {
            let ids: Vec<String> = responses_of(s)
                .into_iter()
                .map(|m| {
                    let kind = if m.get("error").is_some() {
                        "an error"
                    } else {
                        "a result"
                    };
                    format!(
                        "{kind} with id {}",
                        m.get("id")
                            .map_or_else(|| "(none)".to_owned(), |i| i.to_string())
                    )
                })
                .collect();
            kept.push(Witness::new(
                &s.name,
                format!("request id {sent}; response(s): {}", ids.join(", ")),
            ));
        } else if status(s) >= 400 {
            kept.push(Witness::new(
                &s.name,
                format!(
                    "request id {sent}; HTTP {} without a JSON-RPC response{NOT_JUDGED}",
                    status(s)
                ),
            ));
        }
    }
    Ok(kept)
}

/// The JSON-RPC responses a step got, in order.
fn responses_of(s: &StepRecord) -> Vec<JsonRef<'_>> {
    s.observation
        .exchange()
        .into_iter()
        .flat_map(|x| x.messages.iter())
        .map(|m| m.message.root())
        .filter(|m| is_response(*m))
        .collect()
}

/// Whether every JSON-RPC response a step got is an error with id null (at least one).
fn null_id_errors_only(s: &StepRecord) -> bool {
    let responses = responses_of(s);
    !responses.is_empty()
        && responses
            .iter()
            .all(|m| m.get("error").is_some() && m.get("id").is_none_or(JsonRef::is_null))
}

/// MCP-009's failure for a response whose id answers no request: "a request was answered by a
/// response with id X, which matches no request {tail}", the step in the evidence. An error response breaks the error-response rule
/// (`mcp.error-response-same-id`), a result response the result-response rule (the check's
/// first).
fn stray_fail(s: &StepRecord, stray: JsonRef<'_>, tail: &str, expected: String) -> Outcome {
    let id = stray
        .get("id")
        .map_or_else(|| "(none)".to_owned(), |i| i.to_string());
    let (kind, rule) = if stray.get("error").is_some() {
        ("an error response", "mcp.error-response-same-id")
    } else {
        ("a response", "mcp.response-same-id")
    };
    Outcome::breaks(
        rule,
        // The step and the id it sent are the evidence: one cause reads the same in every
        // scenario, so it is one finding.
        format!("a request was answered by {kind} with id {id}, which matches no request {tail}"),
        vec![Evidence::new(&s.name, expected, excerpt(stray, 300))],
    )
}

/// A JSON-RPC response: no `method`, a `result` or an `error`.
fn is_response(m: JsonRef<'_>) -> bool {
    m.get("jsonrpc").and_then(JsonRef::as_str) == Some("2.0")
        && m.get("method").is_none()
        && (m.get("result").is_some() || m.get("error").is_some())
}

/// The first response an exchange carried that answers another id than the request's (every
/// response, when none answered the request's id).
fn stray_response(x: &crate::client::Exchange) -> Option<JsonRef<'_>> {
    let id = x.response.as_ref().and_then(|r| r.get("id"));
    x.messages
        .iter()
        .map(|m| m.message.root())
        .find(|m| is_response(*m) && (id.is_none() || m.get("id") != id))
}

/// The step's exchange carried at least one JSON-RPC response.
fn got_response(s: &StepRecord) -> bool {
    s.observation
        .exchange()
        .is_some_and(|x| x.messages.iter().any(|m| is_response(m.message.root())))
}

/// The raw steps that sent one JSON-RPC request (a `method` and a number or string `id`), with
/// that id. Batches, notifications and bodies that are not JSON are left out.
fn raw_requests<'a>(o: &'a Observed, c: &CheckSpec) -> Vec<(&'a StepRecord, Value)> {
    steps_of(o, c, &[ActionKind::Raw])
        .into_iter()
        .filter_map(|s| {
            let body = raw_body(s)?;
            body.get("method")?;
            let id = body.get("id").filter(|i| i.is_number() || i.is_string())?;
            Some((s, id.clone()))
        })
        .collect()
}

/// The first response a raw request got whose id is neither the request's nor null (JSON-RPC
/// 2.0 gives an error whose request id could not be read `"id": null`).
fn raw_stray_response<'a>(s: &'a StepRecord, sent: &Value) -> Option<JsonRef<'a>> {
    s.observation
        .exchange()?
        .messages
        .iter()
        .map(|m| m.message.root())
        .find(|m| is_response(*m) && m.get("id").is_some_and(|id| !id.is_null() && id != *sent))
}

/// MCP-010: one response per request; the stream carries nothing after it, least of all a
/// second response to the same id.
pub(super) fn one_response(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = requests_of(o, c, REQUESTS);
    if steps.is_empty() {
        return na("MCP request");
    }
    let mut answered = false;
    let mut kept = Vec::new();
    let mut open_streams = 0;
    for s in steps {
        let Some(x) = s.observation.exchange() else {
            continue;
        };
        let Some(first) = &x.response else {
            continue;
        };
        answered = true;
        // A JSON body is one message: only a stream can carry a second response.
        if !x
            .content_type
            .as_deref()
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
        {
            continue;
        }
        let id = first.get("id");
        let again: Vec<JsonRef<'_>> = x
            .messages
            .iter()
            .map(|m| m.message.root())
            .filter(|m| is_response(*m) && m.get("id") == id)
            .skip(1)
            .collect();
        if let Some(&second) = again.first() {
            let differs = if second == first.root() {
                ""
            } else {
                ", the second different from the first"
            };
            return fail(
                format!(
                    "`{}` got {} responses to id {}{differs}",
                    s.name,
                    again.len() + 1,
                    id.map_or_else(|| "(none)".to_owned(), |i| i.to_string())
                ),
                vec![Evidence::new(
                    &s.name,
                    format!(
                        "one response, then the end of the stream: {}",
                        excerpt(first.root(), 300)
                    ),
                    format!("another response: {}", excerpt(second, 300)),
                )],
            );
        }
        // The stream kept open past the client's reading: whether the server would have ended
        // it is not observed (no timing of the kit's own is a rule).
        if !x.stream_ended {
            open_streams += 1;
            continue;
        }
        kept.push(Witness::new(
            &s.name,
            format!(
                "an SSE stream of {} message(s) with one response, to id {}, then the end of the stream",
                x.messages.len(),
                id.map_or_else(|| "(none)".to_owned(), |i| i.to_string())
            ),
        ));
    }
    match (answered, kept.is_empty()) {
        (_, false) => Outcome::Kept(kept),
        (true, true) if open_streams > 0 => Outcome::Inconclusive(format!(
            "{open_streams} SSE stream(s) were still open when the client stopped reading after the response: their end was not observed"
        )),
        (true, true) => Outcome::NotApplicable(
            "every answer was an `application/json` body, which holds one message and is no stream to end".into(),
        ),
        (false, true) => Outcome::Inconclusive("no request was answered".into()),
    }
}

/// MCP-003: `DELETE` ends the session; the old session id then gets 404.
pub(super) fn mcp_delete(c: &CheckSpec, o: &Observed) -> Outcome {
    let deletes = steps_of(o, c, &[ActionKind::Delete]);
    if deletes.is_empty() {
        return na("delete");
    }
    let mut kept = Vec::new();
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
        let next = later
            .into_iter()
            .take_while(|x| !matches!(x.action(), Some(StepAction::Connect(_))))
            .find(|x| sends_session(x));
        kept.push(Witness::new(
            &d.name,
            match next {
                Some(n) => format!(
                    "DELETE answered HTTP {st}; `{}` on the old session then got HTTP {}",
                    n.name,
                    status(n)
                ),
                None => format!("DELETE answered HTTP {st}"),
            },
        ));
        if let Some(next) = next
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
    Outcome::Kept(kept)
}

/// Whether an `Accept` value accepts the media type `mime` (RFC 9110 §12.5.1): the most
/// specific media range matching it (`type/subtype`, then `type/*`, then `*/*`) decides, and
/// its weight `q=0` means "not acceptable". So `*/*` accepts every media type.
fn accepts(accept: &str, mime: &str) -> bool {
    let mime = mime.to_ascii_lowercase();
    let any_subtype = mime
        .split_once('/')
        .map_or_else(String::new, |(t, _)| format!("{t}/*"));
    let mut best: Option<(u8, f64)> = None;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let specificity = if media == mime {
            2
        } else if media == any_subtype {
            1
        } else if media == "*/*" {
            0
        } else {
            continue;
        };
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, v)| v.trim().parse::<f64>().ok())
            .unwrap_or(1.0);
        if best.is_none_or(|(b, _)| specificity > b) {
            best = Some((specificity, q));
        }
    }
    best.is_some_and(|(_, q)| q > 0.0)
}

/// MCP-005: a POST whose `Accept` does not accept `application/json` or `text/event-stream`
/// gets 406. Media ranges count as RFC 9110 defines them: `*/*` or `application/*` accepts
/// `application/json`, so a request with `Accept: */*` accepts both and is not judged.
pub(super) fn mcp_accept(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Raw])
        .into_iter()
        .filter(|s| {
            raw_header(s, "accept").is_some_and(|a| {
                !(accepts(a, "application/json") && accepts(a, "text/event-stream"))
            })
        })
        .collect();
    if steps.is_empty() {
        return na("raw step with an incomplete Accept");
    }
    let mut kept = Vec::new();
    for s in steps {
        if status(s) != 406 {
            return fail(
                format!(
                    "`{}` (Accept {:?}) got HTTP {}",
                    s.name,
                    raw_header(s, "accept").unwrap_or(""),
                    status(s)
                ),
                vec![Evidence::new(&s.name, "406", status(s).to_string())],
            );
        }
        kept.push(Witness::new(
            &s.name,
            format!(
                "Accept {:?}: HTTP {}",
                raw_header(s, "accept").unwrap_or(""),
                status(s)
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// MCP-006: a non-initialize request without a session gets 400; an unknown session 404
/// (`with: {missing_session: [steps], unknown_session: [steps]}`; default: raw steps with
/// `with_session: false`, and raw steps sending their own `Mcp-Session-Id`).
pub(super) fn mcp_sessions(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: McpSessions = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let missing = named_steps(o, p.missing_session.as_ref()).unwrap_or_else(|| {
        steps_of(o, c, &[ActionKind::Raw])
            .into_iter()
            .filter(|s| {
                matches!(s.action(), Some(StepAction::Raw(r)) if !r.with_session)
                    && raw_header(s, "mcp-session-id").is_none()
                    && raw_method(s).is_some_and(|m| m != "initialize")
            })
            .collect()
    });
    if missing.is_empty() {
        return na("raw step without a session");
    }
    let mut kept = Vec::new();
    for (steps, want, what) in [(missing, 400, "without a session")] {
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
            kept.push(Witness::new(&s.name, format!("{what}: HTTP {}", status(s))));
        }
    }
    Outcome::Kept(kept)
}

/// MCP-008: SSE events carry ids and one JSON-RPC message per `data:`.
pub(super) fn mcp_sse(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, MCP_ACTIONS)
        .into_iter()
        .filter(|s| {
            s.observation
                .content_type()
                .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
        })
        .collect();
    if steps.is_empty() {
        return Outcome::NotApplicable("no SSE response was received".into());
    }
    let mut kept = Vec::new();
    for s in steps {
        let Some(x) = s.observation.exchange() else {
            continue;
        };
        if let Some(b) = &x.body_text {
            return fail(
                format!("`{}` SSE data that is not a JSON-RPC message", s.name),
                vec![Evidence::new(
                    &s.name,
                    "one JSON-RPC message per data:",
                    excerpt(&json!(b), 240),
                )],
            );
        }
        for (i, m) in x.messages.iter().enumerate() {
            if m.sse_event_id.is_none() {
                return fail(
                    format!("an SSE event of `{}` has no id", s.name),
                    vec![Evidence {
                        path: Some(format!("/messages/{i}")),
                        ..Evidence::new(&s.name, "an `id:` field", excerpt(m.message.root(), 200))
                    }],
                );
            }
        }
        if let Some(m) = x.messages.first() {
            kept.push(Witness::new(
                &s.name,
                format!(
                    "{} SSE event(s), each one JSON-RPC message with an id; the first id {:?}",
                    x.messages.len(),
                    m.sse_event_id.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    if kept.is_empty() {
        return Outcome::Inconclusive("no SSE stream carried a message".into());
    }
    Outcome::Kept(kept)
}

/// The `with:` parameters of `MCP-006`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct McpSessions {
    /// Raw steps sent without a session (names or globs).
    pub(super) missing_session: Option<OneOrMany>,
}
