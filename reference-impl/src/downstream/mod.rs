//! Clients of the downstream MCP servers an agent uses as tools.
//!
//! One rmcp client session per downstream server per agent, opened on first use and reused by
//! every request. The inbound bearer of a `send_message` never enters that shared session: it
//! rides as a value on each `tools/call` request ([`ForwardedBearer`] in the request's
//! extensions) and [`BearerAwareClient`] turns it into an `Authorization` header on that one HTTP
//! request. A request without a bearer therefore sends none, whatever ran before it.

mod client;
#[cfg(feature = "defects")]
pub mod remembered;

pub use client::BearerAwareClient;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, GetExtensions, Implementation, JsonObject, ProtocolVersion, ServerResult, Tool,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio_util::sync::CancellationToken;

use crate::settings::{DownstreamSettings, Secret};

/// How long opening a downstream session may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one downstream tool call may take (sub-agents can run for minutes).
pub const TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Concurrent POSTs one downstream session may have in flight.
const MAX_CONCURRENT_POSTS: usize = 1024;

/// The inbound bearer token of one `send_message`, carried in the extensions of each outbound
/// `tools/call` it causes. Never serialized: rmcp skips extensions on the wire.
#[derive(Clone)]
pub struct ForwardedBearer(pub Secret);

/// The bearer (token without `Bearer `) one outbound call to `server` carries, given the inbound
/// request's bearer: only for servers marked `forward_inbound_auth`, and never over an explicit
/// configured `Authorization` header.
pub fn outbound_bearer(server: &DownstreamSettings, inbound: Option<&Secret>) -> Option<Secret> {
    if crate::defect!("bearer-not-forwarded") {
        return None;
    }
    if crate::defect!("bearer-to-all-servers")
        || (crate::defect!("bearer-over-configured-header") && server.forward_inbound_auth)
    {
        return inbound.cloned();
    }
    #[cfg(feature = "defects")]
    if crate::defect!("reuse-first-bearer") && server.forward_inbound_auth {
        return crate::defects::first_bearer(inbound);
    }
    #[cfg(feature = "defects")]
    if crate::defect!("bearer-previous-turn") && server.forward_inbound_auth {
        return crate::defects::previous_bearer(inbound);
    }
    if server.forward_inbound_auth && !server.has_configured_authorization() {
        // `mr-empty-bearer-published`: published even when there is none (`Bearer None`).
        if inbound.is_none() && crate::defect!("mr-empty-bearer-published") {
            return Some(Secret::new("None"));
        }
        inbound.cloned()
    } else {
        None
    }
}

/// A failure talking to a downstream server.
#[derive(Debug, thiserror::Error)]
pub enum DownstreamError {
    /// A configured header is not a valid HTTP header.
    #[error("server '{server}': header '{header}' is not a valid HTTP header")]
    InvalidHeader {
        /// Server key.
        server: String,
        /// Header name (value never shown).
        header: String,
    },
    /// The session could not be opened.
    #[error("server '{server}' unreachable: {reason}")]
    Connect {
        /// Server key.
        server: String,
        /// What happened.
        reason: String,
    },
    /// The server refused the session without credentials (401), and no bearer was available.
    #[error(
        "server '{server}' requires authorization (HTTP 401) and the request carried no bearer to forward"
    )]
    AuthRequired {
        /// Server key.
        server: String,
    },
    /// A request failed.
    #[error("server '{server}': {operation} failed: {reason}")]
    Request {
        /// Server key.
        server: String,
        /// `tools/list`, `tools/call`.
        operation: &'static str,
        /// What happened.
        reason: String,
    },
    /// The call was cancelled by the client.
    #[error("server '{server}': call cancelled")]
    Cancelled {
        /// Server key.
        server: String,
    },
}

/// The configured headers of a server as HTTP headers (values marked sensitive).
pub fn configured_headers(
    server: &DownstreamSettings,
) -> Result<HashMap<HeaderName, HeaderValue>, DownstreamError> {
    let mut headers = HashMap::with_capacity(server.headers.len());
    for (name, value) in &server.headers {
        let invalid = || DownstreamError::InvalidHeader {
            server: server.name.clone(),
            header: name.clone(),
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let mut value = HeaderValue::from_str(value.expose()).map_err(|_| invalid())?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

/// An open session with a downstream server and the tools it listed.
struct Session {
    service: RunningService<RoleClient, ClientConfig>,
    tools: Arc<Vec<Tool>>,
}

/// One downstream server of one agent: a lazily opened, shared rmcp session.
pub struct Downstream {
    settings: DownstreamSettings,
    http: reqwest::Client,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    /// Set once the server refused a session without credentials: requests with a forwarded
    /// bearer then open their own private session with it.
    needs_bearer: std::sync::atomic::AtomicBool,
}

/// The session one request uses with one server: the shared one, or (for a server that demands
/// credentials before any call) a private one opened with that request's forwarded bearer and
/// closed by [`Lease::release`] when the request ends.
pub struct Lease {
    session: Arc<Session>,
    private: bool,
}

impl Lease {
    /// The tools the server listed.
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.session.tools.clone()
    }

    /// The `serverInfo.name` the server gave in its `initialize` answer, if any.
    pub fn server_info_name(&self) -> Option<String> {
        self.session
            .service
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|implementation| implementation.name)
    }

    /// Ends a private session (sends its `DELETE`); a shared one stays open.
    pub async fn release(self) {
        if self.private
            && let Ok(session) = Arc::try_unwrap(self.session)
        {
            let mut service = session.service;
            let _ = service.close_with_timeout(Duration::from_secs(3)).await;
        }
    }
}

/// Whether an error (or one of its causes) is an HTTP 401 / authorization demand.
fn is_auth_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        let text = error.to_string();
        if text.contains("Auth required")
            || text.contains("authorization required")
            || text.contains("HTTP 401")
        {
            return true;
        }
        current = error.source();
    }
    false
}

/// The outcome of one downstream tool call.
pub struct CallOutcome {
    /// The result, or why there is none.
    pub result: Result<CallToolResult, DownstreamError>,
    /// How long the call took.
    pub elapsed: Duration,
}

impl Downstream {
    /// A client for `settings`; nothing is opened until first use.
    pub fn new(settings: DownstreamSettings, http: reqwest::Client) -> Self {
        Self {
            settings,
            http,
            session: tokio::sync::Mutex::new(None),
            needs_bearer: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The session a request uses: the shared one, or a private one opened with `bearer` (the
    /// already-chosen outbound bearer) when the server refuses sessions without credentials.
    pub async fn lease(&self, bearer: Option<&Secret>) -> Result<Lease, DownstreamError> {
        use std::sync::atomic::Ordering;
        if !self.needs_bearer.load(Ordering::Relaxed) {
            match self.session().await {
                Ok(session) => {
                    return Ok(Lease {
                        session,
                        private: false,
                    });
                }
                Err(DownstreamError::AuthRequired { .. }) => {
                    self.needs_bearer.store(true, Ordering::Relaxed);
                }
                Err(error) => return Err(error),
            }
        }
        match bearer {
            // `px-bearer-only-on-tool-calls`: the bearer is set around `call_tool` alone, so a
            // session is never opened with it.
            Some(bearer) if !crate::defect!("px-bearer-only-on-tool-calls") => Ok(Lease {
                session: Arc::new(
                    self.open(
                        Some(bearer).filter(|_| !crate::defect!("bearer-not-on-session-open")),
                    )
                    .await?,
                ),
                private: true,
            }),
            _ => Err(DownstreamError::AuthRequired {
                server: self.settings.name.clone(),
            }),
        }
    }

    /// The server's settings.
    pub fn settings(&self) -> &DownstreamSettings {
        &self.settings
    }

    /// The server key.
    pub fn name(&self) -> &str {
        &self.settings.name
    }

    async fn session(&self) -> Result<Arc<Session>, DownstreamError> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref()
            && !session.service.is_closed()
        {
            return Ok(session.clone());
        }
        let session = Arc::new(self.open(None).await?);
        *slot = Some(session.clone());
        Ok(session)
    }

    async fn open(&self, bearer: Option<&Secret>) -> Result<Session, DownstreamError> {
        let mut headers = configured_headers(&self.settings)?;
        // `nx-forwarded-bearer-without-scheme`: the private session's token goes out as the
        // whole `Authorization` value, as every forwarded one does.
        let bearer = match bearer {
            Some(bearer) if crate::defect!("nx-forwarded-bearer-without-scheme") => {
                if let Ok(mut value) =
                    HeaderValue::from_str(&client::forwarded_authorization(bearer))
                {
                    value.set_sensitive(true);
                    headers.insert(http::header::AUTHORIZATION, value);
                }
                None
            }
            bearer => bearer,
        };
        let connect_error = |reason: String| DownstreamError::Connect {
            server: self.settings.name.clone(),
            reason,
        };
        let mut last_error = String::new();
        // Sessions (2025-11-25) first; a server that speaks only 2026-07-28 gets `server/discover`.
        for lifecycle in [
            ClientLifecycleMode::Initialize,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ] {
            let mut config =
                StreamableHttpClientTransportConfig::with_uri(self.settings.url.as_str())
                    .custom_headers(headers.clone())
                    .max_concurrent_requests(MAX_CONCURRENT_POSTS)
                    .reinit_on_expired_session(true);
            if let Some(bearer) = bearer {
                // A private session of one request: every request of it carries its bearer.
                config = config.auth_header(bearer.expose());
            }
            let transport = StreamableHttpClientTransport::with_client(
                BearerAwareClient::new(self.http.clone()),
                config,
            );
            let info = ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new("pallas-reference", env!("CARGO_PKG_VERSION")),
            )
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
            let started = tokio::time::timeout(
                CONNECT_TIMEOUT,
                info.serve_with_lifecycle(transport, lifecycle),
            )
            .await;
            let service = match started {
                Ok(Ok(service)) => service,
                Ok(Err(error)) => {
                    if is_auth_failure(&error) {
                        return Err(DownstreamError::AuthRequired {
                            server: self.settings.name.clone(),
                        });
                    }
                    if let Some(tls) = crate::net::tls_problem(&error) {
                        // Another lifecycle would meet the same certificate.
                        return Err(connect_error(tls));
                    }
                    last_error = error.to_string();
                    continue;
                }
                Err(_) => {
                    return Err(connect_error(format!(
                        "no answer within {}",
                        humantime::format_duration(CONNECT_TIMEOUT)
                    )));
                }
            };
            let tools = tokio::time::timeout(CONNECT_TIMEOUT, service.peer().list_all_tools())
                .await
                .map_err(|_| DownstreamError::Request {
                    server: self.settings.name.clone(),
                    operation: "tools/list",
                    reason: "timed out".to_owned(),
                })?
                .map_err(|error| DownstreamError::Request {
                    server: self.settings.name.clone(),
                    operation: "tools/list",
                    reason: error.to_string(),
                })?;
            tracing::debug!(
                target: "pallas::downstream",
                server = %self.settings.name, tools = tools.len(),
                "downstream session opened"
            );
            return Ok(Session {
                service,
                tools: Arc::new(tools),
            });
        }
        Err(connect_error(last_error))
    }

    /// Calls `tool` with `arguments` over `lease`. `bearer` is the already-chosen outbound bearer
    /// (see [`outbound_bearer`]); it travels with this request only. Cancelling `cancel` sends
    /// `notifications/cancelled` downstream and returns [`DownstreamError::Cancelled`].
    pub async fn call_tool(
        &self,
        lease: &Lease,
        tool: &str,
        arguments: JsonObject,
        bearer: Option<Secret>,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        let started = Instant::now();
        let result = self
            .call_tool_inner(lease, tool, arguments, bearer, cancel)
            .await;
        CallOutcome {
            result,
            elapsed: started.elapsed(),
        }
    }

    async fn call_tool_inner(
        &self,
        lease: &Lease,
        tool: &str,
        arguments: JsonObject,
        bearer: Option<Secret>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, DownstreamError> {
        if cancel.is_cancelled() {
            return Err(self.cancelled());
        }
        let session = &lease.session;
        let mut request = CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        );
        // A private session already carries the bearer on every request.
        if let Some(bearer) = bearer.filter(|_| !lease.private) {
            request.extensions_mut().insert(ForwardedBearer(bearer));
        }
        let request_error = |reason: String| DownstreamError::Request {
            server: self.settings.name.clone(),
            operation: "tools/call",
            reason,
        };
        let mut handle = session
            .service
            .peer()
            .send_request_with_option(
                ClientRequest::CallToolRequest(request),
                PeerRequestOptions::no_options(),
            )
            .await
            .map_err(|error| {
                self.forget_if_closed(session);
                request_error(error.to_string())
            })?;
        let response = tokio::select! {
            response = &mut handle.rx => response,
            () = cancel.cancelled() => {
                let _ = handle.cancel(Some("cancelled by the client".to_owned())).await;
                return Err(self.cancelled());
            }
            () = tokio::time::sleep(TOOL_CALL_TIMEOUT) => {
                let _ = handle.cancel(Some("request timeout".to_owned())).await;
                return Err(request_error(format!(
                    "no answer within {}",
                    humantime::format_duration(TOOL_CALL_TIMEOUT)
                )));
            }
        };
        match response {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Ok(Ok(other)) => Err(request_error(format!("unexpected response {other:?}"))),
            Ok(Err(error)) => {
                self.forget_if_closed(session);
                Err(request_error(error.to_string()))
            }
            Err(_) => {
                self.forget_if_closed(session);
                Err(request_error("connection closed".to_owned()))
            }
        }
    }

    fn cancelled(&self) -> DownstreamError {
        DownstreamError::Cancelled {
            server: self.settings.name.clone(),
        }
    }

    fn forget_if_closed(&self, session: &Arc<Session>) {
        if session.service.is_closed()
            && let Ok(mut slot) = self.session.try_lock()
            && slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, session))
        {
            *slot = None;
        }
    }

    /// `qx-probe-pings-persistent-session`: an MCP `ping` over the shared session (opened
    /// first when there is none).
    #[cfg(feature = "defects")]
    pub async fn ping(&self) -> Result<(), String> {
        let session = self.session().await.map_err(|error| error.to_string())?;
        let answer = session
            .service
            .peer()
            .send_request(ClientRequest::PingRequest(
                rmcp::model::PingRequest::default(),
            ))
            .await;
        answer.map(|_| ()).map_err(|error| {
            self.forget_if_closed(&session);
            error.to_string()
        })
    }

    /// Closes the session (sends the `DELETE`), if one is open.
    pub async fn close(&self) {
        let session = self.session.lock().await.take();
        if let Some(session) = session
            && let Ok(session) = Arc::try_unwrap(session)
        {
            let mut service = session.service;
            let _ = service.close_with_timeout(Duration::from_secs(3)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_goes_only_to_opted_in_servers_without_explicit_authorization() {
        let inbound = Secret::new("tok");
        let plain = DownstreamSettings::new("plain", "http://x");
        let opted = DownstreamSettings {
            forward_inbound_auth: true,
            ..DownstreamSettings::new("opted", "http://x")
        };
        let explicit = DownstreamSettings {
            headers: vec![("Authorization".into(), Secret::new("Bearer fixed"))],
            ..opted.clone()
        };
        assert_eq!(outbound_bearer(&plain, Some(&inbound)), None);
        assert_eq!(
            outbound_bearer(&opted, Some(&inbound)),
            Some(inbound.clone())
        );
        assert_eq!(outbound_bearer(&opted, None), None);
        assert_eq!(outbound_bearer(&explicit, Some(&inbound)), None);
    }

    #[test]
    fn configured_headers_reject_invalid_names_without_showing_values() {
        let server = DownstreamSettings {
            headers: vec![("bad header".into(), Secret::new("s3cret"))],
            ..DownstreamSettings::new("m", "http://x")
        };
        let error = configured_headers(&server).unwrap_err().to_string();
        assert!(error.contains("bad header"));
        assert!(!error.contains("s3cret"));
    }
}
