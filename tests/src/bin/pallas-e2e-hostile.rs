//! A hostile Pallas-style bridge: one port serves the registry, `/ready` and every agent at
//! `/mcp/<agent>`, speaking raw HTTP/1.1 so it can break the protocol at any byte. The mode
//! (`HOSTILE_MODE`) picks one misbehaviour; `normal` behaves. Used by tests/tests/hostile.rs.
//!
//! `pallas-e2e-hostile <port>`; with `HOSTILE_MODE=daemonize` it starts a copy of itself in a
//! new session (`setsid`) that serves the port, and waits; with `ignore-sigterm` it ignores
//! SIGTERM; with `other-port` it listens on a port of its own choosing instead of the one it
//! was given (the profile's agreed port); with `registry-other-port` its registry advertises
//! the agent on a port other than the agreed one.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Blocks of the huge tool result (about 26 MB on the wire).
const HUGE_BLOCKS: usize = 1_000_000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| std::io::Error::other("usage: pallas-e2e-hostile <port>"))?;
    let mode = std::env::var("HOSTILE_MODE").unwrap_or_else(|_| "normal".into());
    if mode == "daemonize" && std::env::var_os("HOSTILE_DAEMON").is_none() {
        // The server runs in a new session, out of the launcher's process group.
        let exe = std::env::current_exe()?;
        let _child = std::process::Command::new("setsid")
            .arg(exe)
            .arg(port.to_string())
            .env("HOSTILE_DAEMON", "1")
            .spawn()?;
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    let mut term = if mode == "ignore-sigterm" {
        Some(tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::terminate(),
        )?)
    } else {
        None
    };
    // `other-port`: an ephemeral port of its choosing, never the agreed one.
    let bound = if mode == "other-port" { 0 } else { port };
    let listener = TcpListener::bind(("127.0.0.1", bound)).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                let mode = mode.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, &mode, port).await;
                });
            }
            Some(()) = async { match term.as_mut() { Some(t) => t.recv().await, None => None } } => {
                eprintln!("SIGTERM ignored");
            }
        }
    }
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut first = head.lines().next().unwrap_or("").split_whitespace();
    let method = first.next().unwrap_or("").to_owned();
    let path = first.next().unwrap_or("").to_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(Request { method, path, body }))
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    extra: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

/// A body of unknown length, delimited by closing the connection.
async fn stream_head(stream: &mut TcpStream, content_type: &str) -> std::io::Result<()> {
    let head =
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await
}

fn json_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

fn sse(messages: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&json_bytes(m));
        out.extend_from_slice(b"\n\n");
    }
    out
}

fn registry(port: u16) -> Value {
    json!({"servers": [{"server": {
        "name": "io.example/assistant",
        "description": "a hostile agent",
        "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": format!("http://127.0.0.1:{port}/mcp/assistant")}]
    }}]})
}

fn text_result(id: &Value, text: &str, is_error: bool) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": text}], "isError": is_error}})
}

async fn serve(mut stream: TcpStream, mode: &str, port: u16) -> std::io::Result<()> {
    let Some(req) = read_request(&mut stream).await? else {
        return Ok(());
    };
    if req.path == "/ready" {
        return respond(&mut stream, "200 OK", "text/plain", "", b"ok").await;
    }
    if req.path.starts_with("/.well-known/mcp/server.json") {
        return serve_registry(stream, mode, port).await;
    }
    if req.method == "DELETE" {
        return respond(&mut stream, "200 OK", "text/plain", "", b"").await;
    }
    let message: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let Some(id) = message.get("id").cloned() else {
        return respond(&mut stream, "202 Accepted", "text/plain", "", b"").await;
    };
    match method {
        "initialize" => initialize(stream, mode, &id).await,
        "tools/list" => {
            let tools = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "send_message", "inputSchema": {"type": "object"}},
                {"name": "get_health", "inputSchema": {"type": "object"}}]}});
            respond(
                &mut stream,
                "200 OK",
                "application/json",
                "",
                &json_bytes(&tools),
            )
            .await
        }
        "tools/call" => tools_call(stream, mode, &id, &message).await,
        // The Python SDK's streamable HTTP server of 2025 answered requests it refused before
        // reading them with this sentinel id instead of the request's id or null.
        "ping" if mode == "sentinel-error-id" => {
            let refused = json!({"jsonrpc": "2.0", "id": "server-error",
                "error": {"code": -32600, "message": "Not Acceptable"}});
            respond(
                &mut stream,
                "406 Not Acceptable",
                "application/json",
                "",
                &json_bytes(&refused),
            )
            .await
        }
        _ => {
            let empty = json!({"jsonrpc": "2.0", "id": id, "result": {}});
            respond(
                &mut stream,
                "200 OK",
                "application/json",
                "",
                &json_bytes(&empty),
            )
            .await
        }
    }
}

async fn serve_registry(mut stream: TcpStream, mode: &str, port: u16) -> std::io::Result<()> {
    match mode {
        "huge-registry" => {
            // 200 MB of one string, no Content-Length.
            stream_head(&mut stream, "application/json").await?;
            stream.write_all(b"{\"servers\": [], \"x\": \"").await?;
            let block = vec![b'a'; 1 << 20];
            for _ in 0..200 {
                stream.write_all(&block).await?;
            }
            stream.write_all(b"\"}").await
        }
        "endless-registry" => {
            stream_head(&mut stream, "application/json").await?;
            stream.write_all(b"{\"servers\": [").await?;
            let block = b"{\"server\": {\"name\": \"io.example/x\"}},".repeat(1024);
            loop {
                stream.write_all(&block).await?;
            }
        }
        "unreadable-registry" => {
            respond(
                &mut stream,
                "200 OK",
                "application/json",
                "",
                b"{\"servers\": [}",
            )
            .await
        }
        "registry-other-port" => {
            let body = json_bytes(&registry(port.wrapping_add(1)));
            respond(&mut stream, "200 OK", "application/json", "", &body).await
        }
        _ => {
            let body = json_bytes(&registry(port));
            respond(&mut stream, "200 OK", "application/json", "", &body).await
        }
    }
}

async fn initialize(mut stream: TcpStream, mode: &str, id: &Value) -> std::io::Result<()> {
    let session = "mcp-session-id: hostile-1\r\n";
    let body = match mode {
        "invalid-json" => {
            b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"protocolVersion\": }".to_vec()
        }
        "invalid-utf8" => {
            let mut b =
                b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"serverInfo\": \"".to_vec();
            b.extend_from_slice(b"\xff\xfe\"}}");
            b
        }
        "deep-nesting" => {
            let mut b = b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": ".to_vec();
            b.extend(std::iter::repeat_n(b'[', 100_000));
            b.extend(std::iter::repeat_n(b']', 100_000));
            b.push(b'}');
            b
        }
        _ => json_bytes(&json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0.0.0"}}})),
    };
    respond(&mut stream, "200 OK", "application/json", session, &body).await
}

async fn tools_call(
    mut stream: TcpStream,
    mode: &str,
    id: &Value,
    message: &Value,
) -> std::io::Result<()> {
    match mode {
        "huge-result" => {
            stream_head(&mut stream, "application/json").await?;
            let head =
                format!("{{\"jsonrpc\": \"2.0\", \"id\": {id}, \"result\": {{\"content\": [");
            stream.write_all(head.as_bytes()).await?;
            let block = b"{\"type\":\"text\",\"text\":\"x\"},";
            let chunk = block.repeat(10_000);
            for _ in 0..HUGE_BLOCKS / 10_000 - 1 {
                stream.write_all(&chunk).await?;
            }
            stream.write_all(&block.repeat(9_999)).await?;
            stream
                .write_all(b"{\"type\":\"text\",\"text\":\"x\"}]}}")
                .await
        }
        "huge-sse-line" => {
            stream_head(&mut stream, "text/event-stream").await?;
            let head = format!(
                "data: {{\"jsonrpc\": \"2.0\", \"id\": {id}, \"result\": {{\"content\": [{{\"type\": \"text\", \"text\": \""
            );
            stream.write_all(head.as_bytes()).await?;
            let block = vec![b'y'; 1 << 20];
            for _ in 0..50 {
                stream.write_all(&block).await?;
            }
            stream.write_all(b"\"}]}}\n\n").await
        }
        "progress-flood" => {
            stream_head(&mut stream, "text/event-stream").await?;
            let token = message
                .pointer("/params/_meta/progressToken")
                .cloned()
                .unwrap_or(json!("flood"));
            for i in 0..100_000u64 {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": i, "message": "working on it, still working"}});
                stream.write_all(&sse(&[note])).await?;
            }
            stream
                .write_all(&sse(&[text_result(id, "done", false)]))
                .await
        }
        "duplicate-response" => {
            stream_head(&mut stream, "text/event-stream").await?;
            let body = sse(&[
                text_result(id, "first answer", false),
                text_result(id, "second, contradictory answer", true),
                text_result(id, "first answer", false),
            ]);
            stream.write_all(&body).await
        }
        "unknown-id" => {
            let answer = text_result(&json!(987_654), "an answer to nobody", false);
            respond(
                &mut stream,
                "200 OK",
                "application/json",
                "",
                &json_bytes(&answer),
            )
            .await
        }
        "reset-mid-body" => {
            let body = json_bytes(&text_result(id, &"z".repeat(2000), false));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body[..body.len() / 2]).await?;
            stream.flush().await?;
            stream.set_zero_linger()?;
            drop(stream);
            Ok(())
        }
        "over-content-length" => {
            let body = json_bytes(&text_result(id, "hello", false));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            stream.write_all(&vec![b'#'; 5 << 20]).await
        }
        "slow-headers" => {
            tokio::time::sleep(Duration::from_secs(120)).await;
            Ok(())
        }
        _ => {
            let answer = text_result(id, "hello from a hostile bridge", false);
            respond(
                &mut stream,
                "200 OK",
                "application/json",
                "",
                &json_bytes(&answer),
            )
            .await
        }
    }
}
