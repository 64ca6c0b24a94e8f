//! Building the mock's HTTP answers: JSON, provider error shapes, SSE streams, cut-off bodies.

use crate::common::Ticket;
use crate::spec::Dialect;
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::*;

pub(super) fn model_not_found(dialect: Dialect, model: &str) -> Response {
    let msg = match dialect {
        Dialect::Openai => {
            format!("The model `{model}` does not exist or you do not have access to it.")
        }
        Dialect::Anthropic => format!("model: {model}"),
    };
    error_response(dialect, 404, &msg, None)
}

pub(super) async fn finish(
    shared: &Shared,
    ticket: Ticket,
    turn: Option<usize>,
    latency: Option<Duration>,
    resp: Response,
) -> Response {
    shared.journal.update(ticket, |e| {
        e.matched_turn = turn;
        e.status = Some(resp.status().as_u16());
    });
    if let Some(l) = latency {
        sleep_or_stop(&shared.ct, l).await;
    }
    resp
}

pub(super) fn record_status(shared: &Shared, ticket: Ticket, resp: &Response) {
    let s = resp.status().as_u16();
    shared.journal.update(ticket, |e| e.status = Some(s));
}

pub(super) async fn sleep_or_stop(ct: &CancellationToken, d: Duration) {
    tokio::select! {
        () = tokio::time::sleep(d) => {}
        () = ct.cancelled() => {}
    }
}

pub(super) fn json_response(status: StatusCode, v: &Value) -> Response {
    json_text_response(status, v.to_string())
}

pub(super) fn json_text_response(status: StatusCode, body: String) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

pub(super) fn error_response(
    dialect: Dialect,
    status: u16,
    message: &str,
    retry_after: Option<u64>,
) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = json_response(code, &render::error_body(dialect, status, message));
    if let Some(s) = retry_after {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    if dialect == Dialect::Anthropic {
        r.headers_mut()
            .insert("request-id", HeaderValue::from_static("req_mock"));
    }
    r
}

pub(super) fn sse_response(
    events: Vec<Bytes>,
    delay: Option<Duration>,
    disconnect: Option<u32>,
) -> Response {
    use futures::StreamExt;
    let n = disconnect.map_or(events.len(), |d| (d as usize).min(events.len()));
    let cut = disconnect.is_some();
    let items = events
        .into_iter()
        .take(n)
        .enumerate()
        .map(Ok::<_, std::io::Error>);
    let stream = futures::stream::iter(items)
        .then(move |item| async move {
            if let (Some(d), Ok((i, _))) = (delay, &item)
                && *i > 0
            {
                tokio::time::sleep(d).await;
            }
            item.map(|(_, b)| b)
        })
        .chain(futures::stream::iter(cut.then_some(())).then(|()| async {
            // Let the server flush what was sent before cutting the connection.
            tokio::time::sleep(FLUSH_GAP).await;
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "mock fault: disconnect mid-stream",
            ))
        }));
    let mut r = Response::new(Body::from_stream(stream));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// A 200 JSON response whose connection drops halfway through the body.
pub(super) fn truncated_body(body: String) -> Response {
    let half = Bytes::from(body.into_bytes());
    let half = half.slice(..half.len() / 2);
    use futures::StreamExt;
    let stream = futures::stream::iter([Ok(half)]).chain(futures::stream::once(async {
        tokio::time::sleep(FLUSH_GAP).await;
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "mock fault: disconnect mid-body",
        ))
    }));
    let mut r = Response::new(Body::from_stream(stream));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}
