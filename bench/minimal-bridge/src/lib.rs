//! The minimal comparator bridge: one agent served over MCP Streamable HTTP (rmcp, sessions,
//! SSE answers, as the reference serves them) whose `send_message` tool makes exactly one POST to
//! an OpenAI-compatible `{model_url}/chat/completions` through a pooled `reqwest::Client` and
//! returns the answer's text. No registry, metrics, logging, progress, history or downstream
//! servers: what any bridge on this stack has to do per call, and nothing more, done as cheaply
//! as the stack allows (the rmcp service held once rather than cloned per request, Nagle off,
//! the model request serialized and its answer read without a JSON tree).
//!
//! `bench/minimal-ratio.sh` runs it beside the reference through `pallas-conformance load`
//! (profile `bench/minimal-bridge/target.yaml`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), pallas_minimal_bridge::BridgeError> {
//! let config = pallas_minimal_bridge::Config {
//!     bind: "127.0.0.1:8080".parse().map_err(|_| pallas_minimal_bridge::BridgeError::Usage("bind".into()))?,
//!     model_url: "http://127.0.0.1:9000/v1".into(),
//!     model: "mock-model".into(),
//! };
//! pallas_minimal_bridge::serve(config).await
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// Name of the message tool.
pub const SEND_MESSAGE: &str = "send_message";

/// What the bridge runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address the MCP endpoint (`/mcp`) listens on.
    pub bind: SocketAddr,
    /// The model's base URL, e.g. `http://127.0.0.1:9000/v1`.
    pub model_url: String,
    /// The model name sent in every request.
    pub model: String,
}

/// Why the bridge could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// Bad command line.
    #[error("{0}")]
    Usage(String),
    /// Binding or serving failed.
    #[error("cannot serve on {addr}: {source}")]
    Serve {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

impl Config {
    /// Reads `--bind ADDR --model-url URL [--model NAME]` (model default `mock-model`).
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, BridgeError> {
        let (mut bind, mut model_url, mut model) = (None, None, "mock-model".to_owned());
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let value = args
                .next()
                .ok_or_else(|| BridgeError::Usage(format!("{flag} needs a value")))?;
            match flag.as_str() {
                "--bind" => {
                    bind = Some(
                        value
                            .parse()
                            .map_err(|e| BridgeError::Usage(format!("--bind {value}: {e}")))?,
                    );
                }
                "--model-url" => model_url = Some(value),
                "--model" => model = value,
                other => return Err(BridgeError::Usage(format!("unknown argument {other}"))),
            }
        }
        let usage = "usage: pallas-minimal-bridge --bind ADDR --model-url URL [--model NAME]";
        Ok(Config {
            bind: bind.ok_or_else(|| BridgeError::Usage(usage.into()))?,
            model_url: model_url.ok_or_else(|| BridgeError::Usage(usage.into()))?,
            model,
        })
    }
}

/// What every session shares: the pooled client, the endpoint and the tool list, built once.
struct Shared {
    http: reqwest::Client,
    endpoint: String,
    model: String,
    tools: Vec<Tool>,
}

/// The handler of one MCP session.
#[derive(Clone)]
struct Bridge(Arc<Shared>);

fn text(text: String, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// The chat completion request, serialized as it stands (no JSON tree built per call).
#[derive(serde::Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: [ChatMessage<'a>; 1],
}

#[derive(serde::Serialize)]
struct ChatMessage<'a> {
    role: &'static str,
    content: &'a str,
}

/// The part of a chat completion answer the bridge reads: the first choice's text.
#[derive(serde::Deserialize)]
struct ChatAnswer {
    choices: Vec<ChatChoice>,
}

#[derive(serde::Deserialize)]
struct ChatChoice {
    message: ChatAnswerMessage,
}

#[derive(serde::Deserialize)]
struct ChatAnswerMessage {
    content: Option<String>,
}

impl Bridge {
    async fn send_message(&self, message: &str) -> CallToolResult {
        let body = ChatRequest {
            model: &self.0.model,
            messages: [ChatMessage {
                role: "user",
                content: message,
            }],
        };
        let response = match self.0.http.post(&self.0.endpoint).json(&body).send().await {
            Ok(r) => r,
            Err(e) => return text(format!("model request failed: {e}"), true),
        };
        if !response.status().is_success() {
            return text(format!("model answered {}", response.status()), true);
        }
        match response.json::<ChatAnswer>().await {
            Ok(answer) => match answer
                .choices
                .into_iter()
                .next()
                .and_then(|c| c.message.content)
            {
                Some(s) => text(s, false),
                None => text("model answer has no text".into(), true),
            },
            Err(e) => text(format!("model answer unreadable: {e}"), true),
        }
    }
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minimal", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.0.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != SEND_MESSAGE {
            return Err(McpError::invalid_params(
                format!("tool not found: {}", request.name),
                None,
            ));
        }
        let Some(message) = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(Value::as_str)
        else {
            return Ok(text("invalid arguments: `message` must be a string".into(), true).into());
        };
        Ok(self.send_message(message).await.into())
    }
}

fn send_message_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Text message to the agent"}},
        "required": ["message"],
    });
    let schema: JsonObject = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(
        SEND_MESSAGE,
        "Send a message to the agent and receive its reply.",
        Arc::new(schema),
    )
}

/// The pooled model client: reqwest on rustls with the `ring` crypto provider, installed as the
/// process's default first (reqwest's `rustls-no-provider` leaves that to the program).
#[expect(
    clippy::disallowed_methods,
    reason = "the bridge's one client, built after the provider is installed"
)]
fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// The axum router: the MCP endpoint at `/mcp`.
pub fn router(config: &Config) -> axum::Router {
    let shared = Arc::new(Shared {
        http: http_client(),
        endpoint: format!(
            "{}/chat/completions",
            config.model_url.trim_end_matches('/')
        ),
        model: config.model.clone(),
        tools: vec![send_message_tool()],
    });
    let service = StreamableHttpService::new(
        move || Ok(Bridge(shared.clone())),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    // rmcp's `Service` impl clones the whole service (its allowed host and origin lists
    // included) for every request; held once, a request costs a reference count.
    let service = Arc::new(service);
    let endpoint = axum::routing::any(move |request: axum::extract::Request| {
        let service = service.clone();
        async move { service.handle(request).await }
    });
    axum::Router::new().nest_service("/mcp", endpoint)
}

/// Serves until the process ends.
pub async fn serve(config: Config) -> Result<(), BridgeError> {
    let addr = config.bind;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| BridgeError::Serve { addr, source })?;
    // Nagle off, as any Streamable HTTP server needs (an answer is several small writes).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router(&config))
        .await
        .map_err(|source| BridgeError::Serve { addr, source })
}
