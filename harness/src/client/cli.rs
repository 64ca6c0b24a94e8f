//! `pallas-conformance client …`: the scripted client for people — list a registry, poll
//! health, send a message with live progress, read an agent's history.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{
    CallOptions, ChatGate, ClientError, Era, Exchange, JsonRef, McpConnection, Recorder,
    TimedMessage, WireClient, chat_gate, display_title, fetch_registry, first_icon, parse_health,
    server_id, streamable_http_url,
};
use crate::exit;

/// Options every `client` subcommand takes.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ClientOptions {
    /// Deadline of each exchange (e.g. `30s`, `500ms`).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// MCP wire era to speak: `2025-11-25` (initialize + session) or `2026-07-28` (discover).
    #[arg(long, default_value = "2025-11-25")]
    pub era: Era,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            era: Era::V2025_11_25,
        }
    }
}

/// The `client` subcommands.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum ClientCommand {
    /// Fetch a registry (`URL/.well-known/mcp/server.json`) and list its agents as Daedalus
    /// shows them.
    Registry {
        /// Registry base URL (e.g. `http://127.0.0.1:23030`) or full document URL.
        url: String,
        /// Print the registry document as JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Call `get_health` on an agent endpoint (or on every agent of a registry with
    /// `--registry`) and show the chat gate Daedalus would apply.
    Health {
        /// Agent MCP endpoint URL, or a registry URL with `--registry`.
        url: String,
        /// Treat URL as a registry and check every agent in it.
        #[arg(long)]
        registry: bool,
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Send a message to an agent (`send_message` tool) and print its answer.
    Send {
        /// Agent MCP endpoint URL.
        url: String,
        /// The message text.
        message: String,
        /// Bearer token sent as `Authorization: Bearer …` (never printed).
        #[arg(long, env = "PALLAS_BEARER", hide_env_values = true)]
        bearer: Option<String>,
        /// Send a `progressToken` and print progress notifications as they arrive.
        #[arg(long)]
        progress: bool,
        /// Name of the message tool (`send_message` for Pallas; the agent name in fast-agent).
        #[arg(long, default_value = "send_message")]
        tool: String,
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Print an agent's conversation history (the `{agent}_history` prompt).
    History {
        /// Agent MCP endpoint URL.
        url: String,
        /// Agent name (the prompt is `{agent}_history`).
        agent: String,
        /// Bearer token sent as `Authorization: Bearer …` (never printed).
        #[arg(long, env = "PALLAS_BEARER", hide_env_values = true)]
        bearer: Option<String>,
        #[command(flatten)]
        options: ClientOptions,
    },
}

/// Runs one `client` subcommand, writing human-readable output to `out`. Returns the process
/// exit code: 0 success, 1 the agent answered with an error or unhealthy status, 2 invalid
/// input, 3 the endpoint could not be reached or did not answer in time.
pub async fn run_client(cmd: ClientCommand, out: &mut impl Write) -> u8 {
    let result = match cmd {
        ClientCommand::Registry { url, json, options } => {
            registry_cmd(&url, json, &options, out).await
        }
        ClientCommand::Health {
            url,
            registry,
            options,
        } => health_cmd(&url, registry, &options, out).await,
        ClientCommand::Send {
            url,
            message,
            bearer,
            progress,
            tool,
            options,
        } => send_cmd(&url, &message, bearer, progress, &tool, &options, out).await,
        ClientCommand::History {
            url,
            agent,
            bearer,
            options,
        } => history_cmd(&url, &agent, bearer, &options, out).await,
    };
    match result {
        Ok(code) => code,
        Err(CliFailure::Client(e)) => {
            let _ = writeln!(out, "error: {e}");
            match e {
                ClientError::InvalidHeader { .. } => exit::INVALID_INPUT,
                _ => exit::HARNESS_ERROR,
            }
        }
        Err(CliFailure::Io(e)) => {
            let _ = writeln!(out, "error: cannot write output: {e}");
            exit::HARNESS_ERROR
        }
    }
}

#[derive(Debug)]
enum CliFailure {
    Client(ClientError),
    Io(std::io::Error),
}

impl From<ClientError> for CliFailure {
    fn from(e: ClientError) -> Self {
        CliFailure::Client(e)
    }
}

impl From<std::io::Error> for CliFailure {
    fn from(e: std::io::Error) -> Self {
        CliFailure::Io(e)
    }
}

fn client(options: &ClientOptions) -> Result<WireClient, ClientError> {
    WireClient::new(Recorder::new(), options.timeout)
}

fn timeout_error(url: &str, options: &ClientOptions) -> ClientError {
    ClientError::Timeout {
        url: url.to_owned(),
        after_ms: options.timeout.as_millis() as u64,
    }
}

async fn registry_cmd(
    url: &str,
    as_json: bool,
    options: &ClientOptions,
    out: &mut impl Write,
) -> Result<u8, CliFailure> {
    let client = client(options)?;
    let fetch = fetch_registry(&client, url).await?;
    if as_json {
        match &fetch.body {
            Some(body) => writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(body).unwrap_or_else(|_| fetch.text.clone())
            )?,
            None => writeln!(out, "{}", fetch.text)?,
        }
        return Ok(if fetch.status == 200 && fetch.body.is_some() {
            exit::SUCCESS
        } else {
            exit::CHECK_FAILED
        });
    }
    writeln!(
        out,
        "GET {} -> HTTP {} {} ({:.1} ms)",
        fetch.url,
        fetch.status,
        fetch.content_type.as_deref().unwrap_or("(no content type)"),
        fetch.elapsed_ms
    )?;
    if fetch.status != 200 || fetch.body.is_none() {
        writeln!(
            out,
            "not a registry document: {}",
            super::excerpt(&fetch.text)
        )?;
        return Ok(exit::CHECK_FAILED);
    }
    let servers = fetch.servers();
    writeln!(out, "{} agent(s)", servers.len())?;
    for server in servers {
        let name = server.get("name").and_then(Value::as_str).unwrap_or("");
        writeln!(
            out,
            "  {}  {}  {}",
            server_id(name),
            display_title(server),
            streamable_http_url(server).unwrap_or("(no streamable-http remote)")
        )?;
        if let Some(description) = server.get("description").and_then(Value::as_str) {
            writeln!(out, "      {description}")?;
        }
        if let Some(src) = first_icon(server)
            .and_then(|i| i.get("src"))
            .and_then(Value::as_str)
        {
            writeln!(out, "      icon: {src}")?;
        }
    }
    Ok(exit::SUCCESS)
}

async fn health_cmd(
    url: &str,
    registry: bool,
    options: &ClientOptions,
    out: &mut impl Write,
) -> Result<u8, CliFailure> {
    let client = client(options)?;
    let agents: Vec<(String, String)> = if registry {
        let fetch = fetch_registry(&client, url).await?;
        fetch
            .servers()
            .into_iter()
            .filter_map(|s| {
                let name = s.get("name").and_then(Value::as_str)?;
                Some((
                    server_id(name).to_owned(),
                    streamable_http_url(s)?.to_owned(),
                ))
            })
            .collect()
    } else {
        vec![(url.to_owned(), url.to_owned())]
    };
    let mut code = exit::SUCCESS;
    for (label, endpoint) in agents {
        let outcome = health_of(&client, &label, &endpoint, options).await;
        let gate = match &outcome {
            Ok(Ok(report)) => {
                writeln!(
                    out,
                    "{label}: {}{}{}",
                    report.status,
                    report
                        .timestamp
                        .as_deref()
                        .map(|t| format!(" at {t}"))
                        .unwrap_or_default(),
                    report
                        .message
                        .as_deref()
                        .map(|m| format!(" — {m}"))
                        .unwrap_or_default()
                )?;
                chat_gate::<NoHealthReport>(Ok(report))
            }
            Ok(Err(invalid)) => {
                writeln!(out, "{label}: invalid health answer: {invalid}")?;
                chat_gate(Err::<&super::HealthReport, _>(invalid))
            }
            Err(e) => {
                writeln!(out, "{label}: unreachable: {e}")?;
                chat_gate(Err::<&super::HealthReport, _>(e))
            }
        };
        let line = match &gate {
            ChatGate::Allowed => "chat allowed".to_owned(),
            ChatGate::AllowedWithWarning(w) => format!("chat allowed with warning: {w}"),
            ChatGate::Blocked503(why) => {
                code = exit::CHECK_FAILED;
                format!("chat blocked (HTTP 503): {why}")
            }
        };
        writeln!(out, "  {line}")?;
    }
    Ok(code)
}

/// Why an agent's answer to `get_health` holds no health report.
#[derive(Debug, thiserror::Error)]
enum NoHealthReport {
    /// A result that is not a valid health answer.
    #[error(transparent)]
    Invalid(#[from] super::HealthParseError),
    /// A JSON-RPC error instead of a result.
    #[error("JSON-RPC error {0}")]
    JsonRpc(
        /// The error object as received (compact JSON).
        String,
    ),
    /// No JSON-RPC response at all.
    #[error("HTTP {0} without a JSON-RPC response")]
    NoResponse(
        /// The HTTP status.
        u16,
    ),
}

async fn health_of(
    client: &WireClient,
    label: &str,
    url: &str,
    options: &ClientOptions,
) -> Result<Result<super::HealthReport, NoHealthReport>, ClientError> {
    let opts = CallOptions::default();
    let (conn, _) = McpConnection::connect(client, label, url, options.era, &opts).await?;
    let call = conn.call_tool("get_health", json!({}), &opts).await?;
    let _ = conn.delete(&opts).await;
    if call.timed_out {
        return Err(timeout_error(url, options));
    }
    Ok(match (call.result(), call.error()) {
        (Some(result), _) => parse_health(&result.to_value()).map_err(NoHealthReport::from),
        (None, Some(error)) => Err(NoHealthReport::JsonRpc(error.to_string())),
        (None, None) => Err(NoHealthReport::NoResponse(call.status)),
    })
}

fn progress_line(message: &TimedMessage, started_ms: f64) -> Option<String> {
    if message.method() != Some("notifications/progress") {
        return None;
    }
    let params = message.params()?;
    let number = |key: &str| match params.get(key) {
        Some(n) if n.is_number() => n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string()),
        Some(n) if n.is_null() => "-".to_owned(),
        None => "-".to_owned(),
        Some(other) => other.to_string(),
    };
    Some(format!(
        "[{:>7.2}s] progress {}/{} {}",
        (message.at_ms - started_ms) / 1000.0,
        number("progress"),
        number("total"),
        params
            .get("message")
            .and_then(JsonRef::as_str)
            .unwrap_or("")
    ))
}

fn write_content(out: &mut impl Write, result: &Value) -> std::io::Result<()> {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => writeln!(
                out,
                "{}",
                block.get("text").and_then(Value::as_str).unwrap_or("")
            )?,
            Some(kind) => writeln!(out, "[{kind} content]")?,
            None => writeln!(out, "{block}")?,
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn send_cmd(
    url: &str,
    message: &str,
    bearer: Option<String>,
    progress: bool,
    tool: &str,
    options: &ClientOptions,
    out: &mut impl Write,
) -> Result<u8, CliFailure> {
    let client = client(options)?;
    let connect_opts = CallOptions {
        bearer: bearer.clone(),
        ..CallOptions::default()
    };
    let (conn, _) =
        McpConnection::connect(&client, "agent", url, options.era, &connect_opts).await?;
    let opts = CallOptions {
        bearer,
        progress_token: progress.then(|| Value::String(uuid::Uuid::new_v4().to_string())),
        ..CallOptions::default()
    };
    let started_ms = client.recorder().now_ms();
    let params = json!({"name": tool, "arguments": {"message": message}});
    let exchange: Exchange = if progress {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let call = conn.request_streaming("tools/call", params, &opts, tx);
        tokio::pin!(call);
        let finished = loop {
            tokio::select! {
                biased;
                Some(m) = rx.recv() => {
                    if let Some(line) = progress_line(&m, started_ms) {
                        writeln!(out, "{line}")?;
                        out.flush()?;
                    }
                }
                done = &mut call => break done,
            }
        };
        while let Ok(m) = rx.try_recv() {
            if let Some(line) = progress_line(&m, started_ms) {
                writeln!(out, "{line}")?;
            }
        }
        finished?
    } else {
        conn.request("tools/call", params, &opts).await?
    };
    let _ = conn.delete(&CallOptions::default()).await;
    if exchange.timed_out {
        return Err(timeout_error(url, options).into());
    }
    if let Some(result) = exchange.result() {
        write_content(out, &result.to_value())?;
        if result.get("isError").and_then(JsonRef::as_bool) == Some(true) {
            writeln!(out, "(the tool reported an error)")?;
            return Ok(exit::CHECK_FAILED);
        }
        return Ok(exit::SUCCESS);
    }
    if let Some(error) = exchange.error() {
        writeln!(out, "JSON-RPC error: {error}")?;
    } else {
        writeln!(
            out,
            "HTTP {} without a JSON-RPC response{}",
            exchange.status,
            exchange
                .body_text
                .as_deref()
                .map(|b| format!(": {}", super::excerpt(b)))
                .unwrap_or_default()
        )?;
    }
    Ok(exit::CHECK_FAILED)
}

async fn history_cmd(
    url: &str,
    agent: &str,
    bearer: Option<String>,
    options: &ClientOptions,
    out: &mut impl Write,
) -> Result<u8, CliFailure> {
    let client = client(options)?;
    let opts = CallOptions {
        bearer,
        ..CallOptions::default()
    };
    let (conn, _) = McpConnection::connect(&client, agent, url, options.era, &opts).await?;
    let exchange = conn
        .get_prompt(&format!("{agent}_history"), Value::Null, &opts)
        .await?;
    let _ = conn.delete(&opts).await;
    if exchange.timed_out {
        return Err(timeout_error(url, options).into());
    }
    let Some(result) = exchange.result() else {
        match exchange.error() {
            Some(error) => writeln!(out, "JSON-RPC error: {error}")?,
            None => writeln!(out, "HTTP {} without a JSON-RPC response", exchange.status)?,
        }
        return Ok(exit::CHECK_FAILED);
    };
    let messages = result
        .get("messages")
        .map(JsonRef::to_value)
        .and_then(|m| m.as_array().cloned())
        .unwrap_or_default();
    writeln!(out, "{} message(s)", messages.len())?;
    for message in messages {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
        let content = message.get("content").cloned().unwrap_or(Value::Null);
        let text = match content.get("type").and_then(Value::as_str) {
            Some("text") => content
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            Some(kind) => format!("[{kind} content]"),
            None => content.to_string(),
        };
        writeln!(out, "{role}: {text}")?;
    }
    Ok(exit::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::JsonDoc;

    #[test]
    fn progress_lines_show_progress_total_and_message() {
        let m = TimedMessage {
            at_ms: 1500.0,
            message: JsonDoc::shared(&json!({"jsonrpc":"2.0","method":"notifications/progress",
                "params":{"progressToken":"t","progress":2,"message":"harper step 2 (llm)"}})),
            sse_event_id: None,
        };
        assert_eq!(
            progress_line(&m, 500.0).as_deref(),
            Some("[   1.00s] progress 2/- harper step 2 (llm)")
        );
    }
}
