//! The proxying itself: forward a request upstream, return the answer to the caller as it
//! arrives, and keep a copy of it for the recording.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderMap, HeaderName, StatusCode};

use super::Shared;

/// Largest answer kept for recording (the caller still gets all of it).
const MAX_RECORDED_BODY: usize = 64 * 1024 * 1024;

/// Largest request body the recorder reads.
const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

/// One answer being read; counted in [`Shared::pending`] while it lives.
struct Pending(Arc<Shared>);

impl Pending {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.pending.fetch_add(1, Ordering::SeqCst);
        Self(shared.clone())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Request headers not forwarded: hop-by-hop ones, and `accept-encoding` (the recorder reads the
/// answer, so it asks for it uncompressed).
const SKIP_REQUEST: [&str; 9] = [
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "accept-encoding",
    "proxy-connection",
];

const SKIP_RESPONSE: [&str; 4] = [
    "content-length",
    "connection",
    "transfer-encoding",
    "keep-alive",
];

/// Forwards a request upstream.
pub(super) async fn forward(
    shared: &Shared,
    method: http::Method,
    url: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<reqwest::Response, Response> {
    let mut out = HeaderMap::new();
    for (k, v) in headers {
        if !SKIP_REQUEST.contains(&k.as_str()) {
            out.append(k.clone(), v.clone());
        }
    }
    shared
        .http
        .request(method, url)
        .headers(out)
        .body(body)
        .send()
        .await
        .map_err(|e| {
            // The error names the URL and the cause, never a header.
            let mut msg = format!("pallas-mocks record: upstream {url} unreachable: {e}");
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                msg.push_str(&format!(": {s}"));
                src = s.source();
            }
            if let Some(userinfo) = userinfo(url) {
                msg = msg.replace(userinfo, "[redacted]");
            }
            tracing::warn!("{msg}");
            (StatusCode::BAD_GATEWAY, msg).into_response()
        })
}

/// The `user:password` part of a URL, if any.
fn userinfo(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    authority
        .rfind('@')
        .map(|at| &authority[..at])
        .filter(|u| !u.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_userinfo_of_a_url_is_found_for_redaction() {
        assert_eq!(super::userinfo("https://u:p@h/x@y"), Some("u:p"));
        assert_eq!(super::userinfo("https://h/x@y"), None);
    }
}

/// What an upstream answered, once fully read.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// The whole body was read (no error, not over the size limit).
    pub(crate) complete: bool,
}

impl Answer {
    pub(crate) fn is_sse(&self) -> bool {
        self.headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
    }
}

/// Returns the upstream answer to the caller chunk by chunk, and hands the whole answer to
/// `done` when it ends (`keep: false`: a long-lived stream, passed through only).
pub(super) fn tee(
    shared: &Arc<Shared>,
    resp: reqwest::Response,
    keep: bool,
    done: impl FnOnce(Answer) + Send + 'static,
) -> Response {
    let status = resp.status();
    let mut headers = HeaderMap::new();
    for (k, v) in resp.headers() {
        if !SKIP_RESPONSE.contains(&k.as_str()) {
            headers.append(HeaderName::clone(k), v.clone());
        }
    }
    let answer_headers = headers.clone();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    let pending = keep.then(|| Pending::new(shared));
    tokio::spawn(async move {
        let _pending = pending;
        let mut stream = resp.bytes_stream();
        let mut all = Vec::new();
        let mut complete = true;
        let mut caller = true;
        loop {
            let chunk = tokio::select! {
                c = stream.next() => c,
                // A stream passed through only ends when its caller leaves.
                () = tx.closed(), if !keep => break,
            };
            let Some(chunk) = chunk else { break };
            match chunk {
                Ok(b) => {
                    if keep {
                        if all.len() + b.len() <= MAX_RECORDED_BODY {
                            all.extend_from_slice(&b);
                        } else {
                            complete = false;
                        }
                    }
                    if caller && tx.send(Ok(b)).await.is_err() {
                        caller = false;
                        if !keep {
                            break;
                        }
                    }
                }
                Err(e) => {
                    complete = false;
                    if caller {
                        let _ = tx.send(Err(std::io::Error::other(e))).await;
                    }
                    break;
                }
            }
        }
        drop(tx);
        if keep {
            done(Answer {
                status: status.as_u16(),
                headers: answer_headers,
                body: Bytes::from(all),
                complete,
            });
        }
    });
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let mut r = Response::new(Body::from_stream(body));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

/// Reads a request body (up to the limit).
pub(super) async fn read_body(body: Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, MAX_REQUEST_BODY)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response())
}
