//! The HTTP client of downstream MCP sessions: each POST carries the bearer its own request was given, never another's.

use crate::settings::Secret;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use std::collections::HashMap;
use std::sync::Arc;

use super::*;

/// An rmcp HTTP client that adds the per-request [`ForwardedBearer`] of a message, if any, as
/// `Authorization: Bearer …` on the HTTP request carrying that message, and nowhere else.
#[derive(Clone)]
pub struct BearerAwareClient {
    inner: reqwest::Client,
}

impl BearerAwareClient {
    /// Wraps a reqwest client.
    pub fn new(inner: reqwest::Client) -> Self {
        Self { inner }
    }
}

/// The forwarded bearer a message carries, if it is a request with one.
pub(super) fn message_bearer(message: &ClientJsonRpcMessage) -> Option<&Secret> {
    match message {
        JsonRpcMessage::Request(request) => request
            .request
            .extensions()
            .get::<ForwardedBearer>()
            .map(|bearer| &bearer.0),
        _ => None,
    }
}

/// The `Authorization` value a forwarded bearer is sent as: `Bearer X`
/// (`nx-forwarded-bearer-without-scheme`: the captured token alone, `X`).
pub(super) fn forwarded_authorization(bearer: &Secret) -> String {
    if crate::defect!("nx-forwarded-bearer-without-scheme") {
        return bearer.expose().to_owned();
    }
    format!("Bearer {}", bearer.expose())
}

impl StreamableHttpClient for BearerAwareClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            usize::MAX,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        if let Some(bearer) = message_bearer(&message)
            && (!custom_headers.contains_key(&http::header::AUTHORIZATION)
                || crate::defect!("bearer-over-configured-header")
                || crate::defect!("fm-explicit-auth-case-sensitive"))
            && let Ok(mut value) = HeaderValue::from_str(&forwarded_authorization(bearer))
        {
            value.set_sensitive(true);
            custom_headers.insert(http::header::AUTHORIZATION, value);
        }
        self.inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
