//! HTTP statuses and media types of the Streamable HTTP transport (MCP 2025-11-25
//! basic/transports): a GET of the MCP endpoint gets an SSE stream or 405 (MCP-012), and a
//! POSTed notification or response the server accepts gets 202 Accepted with no body (MCP-013).

use serde_json::Value;

use super::common::*;
use super::read::excerpt;
use super::verdict::{Evidence, Outcome, Witness};
use crate::client::Exchange;
use crate::observation::Observation;
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The media type of an answer's `Content-Type` (lower case, without parameters).
fn mime(x: &Exchange) -> String {
    x.content_type
        .as_deref()
        .and_then(|c| c.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// What an answer carried as its body, for evidence.
fn body_seen(x: &Exchange) -> String {
    if let Some(text) = &x.body_text {
        return excerpt(&Value::String(text.clone()), 200);
    }
    if let Some(m) = x.messages.first() {
        return excerpt(m.message.root(), 200);
    }
    if x.body_bytes > 0 {
        return format!("{} bytes", x.body_bytes);
    }
    "no body".to_owned()
}

/// The status, media type and body of an answer, for evidence.
fn answer_seen(x: &Exchange) -> String {
    let ct = x.content_type.as_deref().unwrap_or("(none)");
    format!("HTTP {}, Content-Type {ct}, {}", x.status, body_seen(x))
}

/// MCP-012: a GET of the MCP endpoint (the `listen` step: with the session when the server
/// issued one, `Accept: text/event-stream`) gets `Content-Type: text/event-stream` or 405.
pub(super) fn mcp_get(c: &CheckSpec, o: &Observed) -> Outcome {
    let gets = steps_of(o, c, &[ActionKind::Listen]);
    if gets.is_empty() {
        return na("listen (GET of the MCP endpoint)");
    }
    let mut kept = Vec::new();
    for s in gets {
        let Some(x) = s.observation.exchange() else {
            return Outcome::Error(format!(
                "`{}` could not GET the endpoint ({}): nothing to judge",
                s.name,
                s.error.as_deref().unwrap_or("no answer")
            ));
        };
        if x.status == 0 {
            return Outcome::Error(format!(
                "`{}` got no answer to its GET before the step's deadline: nothing to judge (a timeout is not a failure)",
                s.name
            ));
        }
        // 405: "the server does not offer an SSE stream at this endpoint".
        if x.status == 405 || ((200..300).contains(&x.status) && mime(x) == "text/event-stream") {
            kept.push(Witness::new(&s.name, answer_seen(x)));
            continue;
        }
        return fail(
            format!(
                "`{}`: the GET of the MCP endpoint got HTTP {} with Content-Type {:?}, neither an SSE stream nor 405",
                s.name,
                x.status,
                x.content_type.as_deref().unwrap_or("")
            ),
            vec![Evidence::new(
                &s.name,
                "Content-Type: text/event-stream (an SSE stream), or HTTP 405 Method Not Allowed",
                answer_seen(x),
            )],
        );
    }
    Outcome::Kept(kept)
}

/// The JSON-RPC notification or response a step POSTed, with the answer it got: the
/// handshake's `notifications/initialized` of a `connect` step, a `request` step with
/// `notification: true`, a `raw` step whose body is a notification or a response.
fn posted_notifications(s: &StepRecord) -> Option<(String, &Exchange)> {
    match (&s.observation, s.action()?) {
        (Observation::Connected(c), StepAction::Connect(_)) => c
            .initialized
            .as_ref()
            .map(|x| ("its `notifications/initialized`".to_owned(), x)),
        (Observation::Exchanged(x), StepAction::Request(r)) if r.notification => {
            Some((format!("the notification `{}`", r.method), x))
        }
        (Observation::Exchanged(x), StepAction::Raw(_)) => {
            let body = raw_body(s)?;
            let what = match (body.get("method"), body.get("id")) {
                (Some(m), None) => format!("the notification `{}`", m.as_str().unwrap_or("?")),
                (None, Some(_)) if body.get("result").is_some() || body.get("error").is_some() => {
                    "a JSON-RPC response".to_owned()
                }
                _ => return None,
            };
            Some((what, x))
        }
        _ => None,
    }
}

/// MCP-013: a POSTed JSON-RPC notification or response that the server accepts (a 2xx
/// answer) gets 202 Accepted with no body. One it refuses with an HTTP error status is what
/// MCP asks of input the server cannot accept, so it is not judged here.
pub(super) fn mcp_accepted(c: &CheckSpec, o: &Observed) -> Outcome {
    let posted: Vec<(&StepRecord, String, &Exchange)> = steps_of(
        o,
        c,
        &[ActionKind::Connect, ActionKind::Request, ActionKind::Raw],
    )
    .into_iter()
    .filter_map(|s| posted_notifications(s).map(|(what, x)| (s, what, x)))
    .collect();
    if posted.is_empty() {
        return na("POST of a JSON-RPC notification or response");
    }
    let mut accepted = Vec::new();
    let mut unanswered: Option<&StepRecord> = None;
    let mut refused: Vec<String> = Vec::new();
    for (s, what, x) in &posted {
        if x.status == 0 {
            unanswered.get_or_insert(s);
            continue;
        }
        if !(200..300).contains(&x.status) {
            refused.push(format!("`{}` ({what}): HTTP {}", s.name, x.status));
            continue;
        }
        accepted.push(Witness::new(
            format!("`{}` ({what})", s.name),
            answer_seen(x),
        ));
        if x.status != 202 || x.body_bytes > 0 {
            let got = if x.status == 202 {
                "202 with a body"
            } else {
                "another 2xx status"
            };
            return fail(
                format!(
                    "`{}`: {what} was accepted with {got} instead of 202 Accepted with no body",
                    s.name
                ),
                vec![Evidence::new(
                    format!("`{}` ({what})", s.name),
                    "HTTP 202 Accepted, no body",
                    answer_seen(x),
                )],
            );
        }
    }
    if !accepted.is_empty() {
        return Outcome::Kept(accepted);
    }
    if let Some(s) = unanswered {
        return Outcome::Error(format!(
            "`{}` got no answer to its notification before the step's deadline: nothing to judge (a timeout is not a failure)",
            s.name
        ));
    }
    Outcome::Inconclusive(format!(
        "the server accepted none of the notifications it was sent ({}): the rule for accepted input was not exercised",
        refused.join("; ")
    ))
}
