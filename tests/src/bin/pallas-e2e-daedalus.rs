//! `pallas-e2e-daedalus`: a small Daedalus-side client on the kit's wire client, written from
//! seed 000 §3–§4, with deliberately wrong variants (`--wrong`) that `pallas-conformance
//! daedalus` must each catch on their own finding (tests/tests/daedalus.rs).
//!
//! `pallas-e2e-daedalus [--wrong VARIANT] [--agent ID] [--bearer TOKEN] [--message TEXT]...
//! REGISTRY_URL`: discovers the agents, opens a session on each and reads its health, sends the
//! messages to the agent at once (each with its own progress token and the user's bearer), then
//! ends every session with DELETE. Exit
//! codes: 0 done, 1 an error, 3 the agent's health is `error` (chat blocked).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use pallas_conformance::client::registry::fetch_registry;
use pallas_conformance::client::{CallOptions, Era, McpConnection, Recorder, WireClient};
use serde_json::{Value, json};

/// What the client gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Wrong {
    /// Nothing.
    None,
    /// Messages carry no progress token.
    NoToken,
    /// Every message carries the same progress token.
    ReuseToken,
    /// A progress token that is a fraction.
    FloatToken,
    /// The agent URL is built from the registry URL instead of read from `remotes`.
    GuessUrl,
    /// Messages go to an agent whose health is `error`.
    IgnoreHealth,
    /// No message goes to an agent whose health is `degraded`.
    BlockDegraded,
    /// `get_health` gets an argument.
    HealthArgs,
    /// `get_health` is never called: every agent counts as `ok`.
    NoHealth,
    /// After a 404 on its session, the call is retried on the same session.
    NoReinit,
    /// Sessions are left open.
    NoDelete,
    /// The registry read on the first run is kept (in the file `--cache` names) and used again.
    StaleRegistry,
    /// `Accept: application/json` only.
    BadAccept,
    /// The user's bearer is never sent.
    NoBearer,
    /// The user's bearer rides the first message only.
    BearerOnce,
}

#[derive(Debug, Parser)]
struct Args {
    #[arg(long, value_enum, default_value_t = Wrong::None)]
    wrong: Wrong,
    #[arg(long)]
    agent: Option<String>,
    #[arg(long)]
    message: Vec<String>,
    /// The user's bearer, sent as `Authorization: Bearer` with each message.
    #[arg(long)]
    bearer: Option<String>,
    /// Where `stale-registry` keeps the registry it read first.
    #[arg(long, env = "DAEDALUS_REGISTRY_CACHE")]
    cache: Option<std::path::PathBuf>,
    registry: String,
}

struct Agent {
    id: String,
    conn: McpConnection,
    url: String,
    health: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn opts(wrong: Wrong) -> CallOptions {
    let mut o = CallOptions::default();
    if wrong == Wrong::BadAccept {
        o.headers = vec![("accept".into(), "application/json".into())];
    }
    o
}

async fn run(args: &Args) -> Result<u8, Box<dyn std::error::Error>> {
    let client = WireClient::new(Recorder::new(), Duration::from_secs(20))?;
    let servers = registry_servers(&client, args).await?;
    let mut agents = Vec::new();
    for server in &servers {
        let name = server
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let id = name.rsplit('/').next().unwrap_or(name).to_owned();
        let remote = server
            .get("remotes")
            .and_then(Value::as_array)
            .and_then(|r| {
                r.iter()
                    .find(|x| x.get("type").and_then(Value::as_str) == Some("streamable-http"))
            })
            .and_then(|r| r.get("url"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let url = match (args.wrong, remote) {
            (Wrong::GuessUrl, _) => format!("{}/{id}/mcp", args.registry.trim_end_matches('/')),
            (_, Some(u)) => u,
            (_, None) => continue,
        };
        let o = opts(args.wrong);
        let (conn, _) = McpConnection::connect(&client, &id, &url, Era::V2025_11_25, &o).await?;
        let health = if args.wrong == Wrong::NoHealth {
            "ok".to_owned()
        } else {
            health(&conn, args.wrong, &o).await?
        };
        println!("{id}: {health}");
        agents.push(Agent {
            id,
            conn,
            url,
            health,
        });
    }
    let code = send(&client, args, &mut agents).await?;
    if args.wrong != Wrong::NoDelete {
        for a in &agents {
            let _ = a.conn.delete(&opts(args.wrong)).await;
        }
    }
    Ok(code)
}

/// The registry's `servers[].server` objects: fetched, or (`stale-registry`) the ones read on
/// an earlier run.
async fn registry_servers(
    client: &WireClient,
    args: &Args,
) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    // One cache per scenario (`PALLAS_CONFORMANCE_SCENARIO`): each has its own mock Pallas.
    let scenario = std::env::var("PALLAS_CONFORMANCE_SCENARIO").unwrap_or_default();
    let cache = args
        .cache
        .as_ref()
        .filter(|_| args.wrong == Wrong::StaleRegistry)
        .map(|c| c.with_extension(format!("{scenario}.json")));
    let cache = cache.as_ref();
    if let Some(path) = cache
        && let Ok(text) = std::fs::read_to_string(path)
    {
        return Ok(serde_json::from_str(&text)?);
    }
    let fetched = fetch_registry(client, &args.registry).await?;
    let servers: Vec<Value> = fetched.servers().into_iter().cloned().collect();
    if let Some(path) = cache {
        std::fs::write(path, serde_json::to_string(&servers)?)?;
    }
    Ok(servers)
}

async fn health(
    conn: &McpConnection,
    wrong: Wrong,
    o: &CallOptions,
) -> Result<String, Box<dyn std::error::Error>> {
    let arguments = if wrong == Wrong::HealthArgs {
        json!({"verbose": true})
    } else {
        json!({})
    };
    let ex = conn.call_tool("get_health", arguments, o).await?;
    let text = ex
        .result()
        .and_then(|r| r.pointer("/content/0/text"))
        .and_then(|t| t.as_str())
        .map(str::to_owned)
        .unwrap_or_default();
    let status = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("status").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "error".to_owned());
    Ok(status)
}

async fn send(
    client: &WireClient,
    args: &Args,
    agents: &mut [Agent],
) -> Result<u8, Box<dyn std::error::Error>> {
    if args.message.is_empty() {
        return Ok(0);
    }
    let Some(agent) = agents
        .iter_mut()
        .find(|a| args.agent.as_deref().is_none_or(|want| a.id == want))
    else {
        return Err("the agent is not in the registry".into());
    };
    if agent.health == "error" && args.wrong != Wrong::IgnoreHealth {
        eprintln!("{}: health is error; chat disabled", agent.id);
        return Ok(3);
    }
    if agent.health == "degraded" && args.wrong == Wrong::BlockDegraded {
        eprintln!("{}: health is degraded; chat disabled", agent.id);
        return Ok(3);
    }
    let calls = args.message.iter().enumerate().map(|(n, m)| {
        let token = match args.wrong {
            Wrong::NoToken => None,
            Wrong::ReuseToken => Some(json!("daedalus-progress")),
            Wrong::FloatToken => Some(json!(n as f64 + 0.5)),
            _ => Some(json!(format!("daedalus-{}-{n}", std::process::id()))),
        };
        let mut o = CallOptions {
            progress_token: token,
            ..opts(args.wrong)
        };
        let bearer = match args.wrong {
            Wrong::NoBearer => None,
            Wrong::BearerOnce if n > 0 => None,
            _ => args.bearer.as_deref(),
        };
        if let Some(b) = bearer {
            o.headers
                .push(("authorization".into(), format!("Bearer {b}")));
        }
        let conn = agent.conn.clone();
        let message = m.clone();
        async move {
            let ex = conn
                .call_tool("send_message", json!({"message": message}), &o)
                .await?;
            Ok::<_, Box<dyn std::error::Error>>((ex, o))
        }
    });
    // Every call is polled together: the messages are active at once.
    let answers = futures::future::join_all(calls).await;
    for answer in answers {
        let (ex, o) = answer?;
        let ex = if ex.status == 404 {
            // MCP: a 404 on the session means a new session.
            if args.wrong != Wrong::NoReinit {
                let (conn, _) = McpConnection::connect(
                    client,
                    &agent.id,
                    &agent.url,
                    Era::V2025_11_25,
                    &opts(args.wrong),
                )
                .await?;
                agent.conn = conn;
            }
            agent
                .conn
                .call_tool("send_message", json!({"message": "again"}), &o)
                .await?
        } else {
            ex
        };
        println!(
            "{}: HTTP {}, {} progress notification(s)",
            agent.id,
            ex.status,
            ex.progress().count()
        );
    }
    Ok(0)
}
