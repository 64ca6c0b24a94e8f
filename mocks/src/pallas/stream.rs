//! Rewriting the SSE stream of one `send_message` call on its way out: the wrong-token and
//! after-result progress variants, and a stream dropped before the result.

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

/// What to do to a call's stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rewrite {
    /// Give every progress notification another token.
    pub(crate) wrong_token: bool,
    /// Hold progress notifications back until the result has passed.
    pub(crate) after_result: bool,
    /// Deliver this many messages, then cut the connection (never the result).
    pub(crate) drop_after: Option<u32>,
}

impl Rewrite {
    /// Whether the stream goes through as it is.
    pub(crate) fn is_identity(self) -> bool {
        self == Self::default()
    }
}

/// The token a `wrong-token` agent puts in place of the call's: `wrong-` in front of a string,
/// one million added to a number.
pub(crate) fn wrong_token(token: &Value) -> Value {
    match token {
        Value::String(s) => Value::String(format!("wrong-{s}")),
        Value::Number(n) => n.as_i64().map_or_else(
            || Value::String("wrong".to_owned()),
            |n| Value::from(n + 1_000_000),
        ),
        _ => Value::String("wrong".to_owned()),
    }
}

type Chunk = Result<Bytes, std::io::Error>;

/// `body` (an SSE stream) with `rw` applied, event by event.
pub(crate) fn rewrite(body: Body, rw: Rewrite) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(16);
    tokio::spawn(pump(body, rw, tx));
    Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }))
}

/// The kind of one SSE event.
enum Kind {
    /// No JSON-RPC message: the priming event, a comment, a keep-alive.
    Other,
    /// `notifications/progress`.
    Progress(Value),
    /// The call's response (a result or an error).
    Response,
    /// Any other message.
    Message,
}

fn classify(event: &str) -> Kind {
    let data: String = event
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect::<Vec<_>>()
        .join("\n");
    let Ok(msg) = serde_json::from_str::<Value>(&data) else {
        return Kind::Other;
    };
    if msg.get("method").and_then(Value::as_str) == Some("notifications/progress") {
        Kind::Progress(msg)
    } else if msg.get("id").is_some() && (msg.get("result").is_some() || msg.get("error").is_some())
    {
        Kind::Response
    } else {
        Kind::Message
    }
}

/// The event with its data replaced by `msg` (other fields kept).
fn with_data(event: &str, msg: &Value) -> String {
    let mut out = format!("data: {msg}\n");
    for line in event
        .lines()
        .filter(|l| !l.starts_with("data:") && !l.is_empty())
    {
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

async fn pump(body: Body, rw: Rewrite, tx: tokio::sync::mpsc::Sender<Chunk>) {
    let mut inner = body.into_data_stream();
    let mut pending: Vec<u8> = Vec::new();
    let mut held: Vec<String> = Vec::new();
    let mut delivered = 0u32;
    while let Some(chunk) = inner.next().await {
        let Ok(chunk) = chunk else { break };
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let raw: Vec<u8> = pending.drain(..end + 2).collect();
            let event = String::from_utf8_lossy(&raw).into_owned();
            let kind = classify(&event);
            let is_message = !matches!(kind, Kind::Other);
            if let Some(n) = rw.drop_after
                && is_message
                && (delivered >= n || matches!(kind, Kind::Response))
            {
                let cut = std::io::Error::other("pallas-mocks: scripted drop of the SSE stream");
                let _ = tx.send(Err(cut)).await;
                return;
            }
            if is_message {
                delivered += 1;
            }
            let out = match kind {
                Kind::Progress(mut msg) => {
                    if rw.wrong_token
                        && let Some(t) = msg.pointer_mut("/params/progressToken")
                    {
                        *t = wrong_token(t);
                    }
                    let out = with_data(&event, &msg);
                    if rw.after_result {
                        held.push(out);
                        continue;
                    }
                    out
                }
                Kind::Response => {
                    if tx.send(Ok(Bytes::from(event))).await.is_err() {
                        return;
                    }
                    for h in held.drain(..) {
                        if tx.send(Ok(Bytes::from(h))).await.is_err() {
                            return;
                        }
                    }
                    continue;
                }
                Kind::Other | Kind::Message => event,
            };
            if tx.send(Ok(Bytes::from(out))).await.is_err() {
                return;
            }
        }
    }
    let rest = held
        .concat()
        .into_bytes()
        .into_iter()
        .chain(pending)
        .collect::<Vec<u8>>();
    if !rest.is_empty() {
        let _ = tx.send(Ok(Bytes::from(rest))).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn event(msg: &Value, id: &str) -> String {
        format!("data: {msg}\nid: {id}\n\n")
    }

    fn progress(token: Value, p: u32) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": p}})
    }

    async fn run(rw: Rewrite) -> (String, bool) {
        let priming = "data: \nid: 0/0\nretry: 3000\n\n".to_owned();
        let events = [
            priming,
            event(&progress(json!("t"), 0), "1/0"),
            event(&progress(json!("t"), 1), "2/0"),
            event(
                &json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}),
                "3/0",
            ),
        ];
        // Split across chunk boundaries on purpose.
        let whole = events.concat();
        let (a, b) = whole.split_at(whole.len() / 2);
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            vec![Ok(Bytes::from(a.to_owned())), Ok(Bytes::from(b.to_owned()))];
        let body = Body::from_stream(futures::stream::iter(chunks));
        let mut out = rewrite(body, rw).into_data_stream();
        let mut text = String::new();
        let mut cut = false;
        while let Some(c) = out.next().await {
            match c {
                Ok(b) => text.push_str(&String::from_utf8_lossy(&b)),
                Err(_) => cut = true,
            }
        }
        (text, cut)
    }

    fn data(text: &str) -> Vec<Value> {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn identity_passes_every_event_through() {
        let (text, cut) = run(Rewrite::default()).await;
        assert!(!cut);
        assert_eq!(data(&text).len(), 3);
        assert!(
            text.starts_with("data: \nid: 0/0\nretry: 3000\n\n"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn wrong_token_and_after_result_rewrite_the_progress() {
        let rw = Rewrite {
            wrong_token: true,
            after_result: true,
            drop_after: None,
        };
        let (text, _) = run(rw).await;
        let msgs = data(&text);
        assert!(msgs[0].get("result").is_some(), "{text}");
        assert_eq!(msgs[1]["params"]["progressToken"], "wrong-t");
        assert_eq!(msgs[2]["params"]["progress"], 1);
        assert!(text.contains("id: 2/0"), "event ids are kept: {text}");
    }

    #[tokio::test]
    async fn a_drop_cuts_before_the_result() {
        let rw = Rewrite {
            drop_after: Some(1),
            ..Rewrite::default()
        };
        let (text, cut) = run(rw).await;
        assert!(cut);
        let msgs = data(&text);
        assert_eq!(msgs.len(), 1, "{text}");
        assert_eq!(msgs[0]["params"]["progress"], 0);
        let all = Rewrite {
            drop_after: Some(10),
            ..Rewrite::default()
        };
        let (text, cut) = run(all).await;
        assert!(cut, "the result is never delivered");
        assert_eq!(data(&text).len(), 2);
    }
}
