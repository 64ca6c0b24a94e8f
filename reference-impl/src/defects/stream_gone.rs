//! `progress-undeliverable-fatal`: a progress notification that cannot be delivered ends the
//! call's loop. rmcp keeps the messages of a closed stream for resumption, so a send never fails
//! in the reference; this defect watches the call's response stream and, once the client has
//! closed it, makes every send fail the way a transport without resumption does, and lets that
//! failure stop the loop (seed 000 §3: "if one fails to send, the agent loop continues
//! unaffected").

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::progress::ProgressSink;

/// Cancelled when the client closed the response stream of the request that carries it.
#[derive(Clone)]
struct StreamGone(CancellationToken);

/// Marks each POST with a [`StreamGone`] cancelled when its response body is dropped unfinished.
pub async fn watch_stream(mut request: Request, next: Next) -> Response {
    if !(crate::defect!("progress-undeliverable-fatal")
        || crate::defect!("qx-progress-send-failure-aborts-call"))
        || request.method() != http::Method::POST
    {
        return next.run(request).await;
    }
    let gone = CancellationToken::new();
    request.extensions_mut().insert(StreamGone(gone.clone()));
    let (parts, body) = next.run(request).await.into_parts();
    let state = (body.into_data_stream(), Some(gone.drop_guard()));
    let stream = futures::stream::unfold(state, |(mut body, mut guard)| async move {
        match body.next().await {
            Some(chunk) => Some((chunk, (body, guard))),
            None => {
                // The stream ended on its own: nothing was lost.
                if let Some(guard) = guard.take() {
                    guard.disarm();
                }
                None
            }
        }
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// A sink whose sends fail once the client closed the stream, and whose first failure cancels
/// `stop` (the loop's own cancellation) under `progress-undeliverable-fatal`
/// (`qx-progress-send-failure-aborts-call` raises the failure instead).
pub struct FatalWhenGone {
    peer: Peer<RoleServer>,
    gone: CancellationToken,
    stop: Option<CancellationToken>,
}

impl ProgressSink for FatalWhenGone {
    fn send(
        &self,
        param: ProgressNotificationParam,
    ) -> futures::future::BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            if self.gone.is_cancelled() {
                if let Some(stop) = &self.stop {
                    stop.cancel();
                }
                return Err("the client closed the stream".to_owned());
            }
            self.peer.send(param).await
        })
    }
}

/// The sink of `progress-undeliverable-fatal` (or `qx-progress-send-failure-aborts-call`) for the
/// request behind `ctx`, when it is active.
pub fn fatal_when_gone(
    ctx: &RequestContext<RoleServer>,
    stop: &CancellationToken,
) -> Option<FatalWhenGone> {
    let parts = ctx.extensions.get::<http::request::Parts>()?;
    let StreamGone(gone) = parts.extensions.get::<StreamGone>()?.clone();
    Some(FatalWhenGone {
        peer: ctx.peer.clone(),
        gone,
        stop: crate::defect!("progress-undeliverable-fatal").then(|| stop.clone()),
    })
}
