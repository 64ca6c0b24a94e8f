//! Throughput and latency of the mocks under a built-in load generator: 32 keep-alive HTTP/1.1
//! connections, the server on one runtime thread and the load generator on another.
//!
//! `cargo bench -p pallas-mocks --bench throughput` (env: `BENCH_SECS`, default 5;
//! `BENCH_CONNECTIONS`, default 32; `BENCH_SERVER_THREADS`, default 1). For CPU pinning, run the
//! built bench binary under `taskset`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark aborts on any setup failure.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use pallas_mocks::{LlmMock, McpMock};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Clone, Copy)]
enum Load {
    Chat { stream: bool },
    McpInitDelete,
}

const CHAT: &str =
    r#"{"model":"mock-model","messages":[{"role":"user","content":"Say hello to the benchmark"}]}"#;
const CHAT_STREAM: &str = r#"{"model":"mock-model","stream":true,"messages":[{"role":"user","content":"Say hello to the benchmark"}]}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

async fn connection(
    addr: SocketAddr,
    load: Load,
    stop: Arc<AtomicBool>,
    measure_from: Instant,
) -> Histogram<u64> {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let host = addr.to_string();
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        match load {
            Load::Chat { stream } => {
                let req = Request::post("/v1/chat/completions")
                    .header("host", &host)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from_static(
                        if stream { CHAT_STREAM } else { CHAT }.as_bytes(),
                    )))
                    .unwrap();
                let resp = sender.send_request(req).await.unwrap();
                assert_eq!(resp.status(), 200);
                let body = resp.into_body().collect().await.unwrap().to_bytes();
                assert!(!body.is_empty());
            }
            Load::McpInitDelete => {
                let req = Request::post("/mcp")
                    .header("host", &host)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(Full::new(Bytes::from_static(INIT.as_bytes())))
                    .unwrap();
                let resp = sender.send_request(req).await.unwrap();
                assert_eq!(resp.status(), 200);
                let sid = resp.headers()["mcp-session-id"].clone();
                resp.into_body().collect().await.unwrap();
                let del = Request::delete("/mcp")
                    .header("host", &host)
                    .header("mcp-session-id", sid)
                    .header("mcp-protocol-version", "2025-11-25")
                    .body(Full::new(Bytes::new()))
                    .unwrap();
                let resp = sender.send_request(del).await.unwrap();
                assert!(resp.status().is_success(), "{}", resp.status());
                resp.into_body().collect().await.unwrap();
            }
        }
        if start >= measure_from {
            let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
            hist.record(micros.max(1)).unwrap();
        }
    }
    hist
}

fn run(
    client_rt: &tokio::runtime::Runtime,
    name: &str,
    addr: SocketAddr,
    load: Load,
    connections: u64,
    secs: u64,
) {
    let warmup = Duration::from_millis(500);
    let stop = Arc::new(AtomicBool::new(false));
    let measure_from = Instant::now() + warmup;
    let hist = client_rt.block_on(async {
        let tasks: Vec<_> = (0..connections)
            .map(|_| tokio::spawn(connection(addr, load, stop.clone(), measure_from)))
            .collect();
        tokio::time::sleep(warmup + Duration::from_secs(secs)).await;
        stop.store(true, Ordering::Relaxed);
        let mut total = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for t in tasks {
            total.add(t.await.unwrap()).unwrap();
        }
        total
    });
    let rps = hist.len() as f64 / secs as f64;
    println!(
        "{name:<28} {:>10} {:>12.0} {:>9.2} {:>9.2} {:>9.2}",
        hist.len(),
        rps,
        hist.value_at_quantile(0.50) as f64 / 1000.0,
        hist.value_at_quantile(0.99) as f64 / 1000.0,
        hist.max() as f64 / 1000.0,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let secs = env_num("BENCH_SECS", 5);
    let connections = env_num("BENCH_CONNECTIONS", 32);
    let server_threads = usize::try_from(env_num("BENCH_SERVER_THREADS", 1)).unwrap_or(1);
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(server_threads)
        .enable_all()
        .build()
        .unwrap();
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let llm_spec = pallas_mocks::yaml::from_str("bench", "dialect: openai\n").unwrap();
    let mcp_spec = pallas_mocks::yaml::from_str("bench", "tools: [{name: t}]\n").unwrap();
    let (llm, mcp) = server_rt.block_on(async {
        (
            Arc::new(LlmMock::start(llm_spec, any).await.unwrap()),
            Arc::new(McpMock::start("bench", mcp_spec, any).await.unwrap()),
        )
    });
    // Journals grow with every request; keep memory flat during the run.
    let resetting = Arc::new(AtomicBool::new(true));
    let (l2, m2, r2) = (llm.clone(), mcp.clone(), resetting.clone());
    let resetter = std::thread::spawn(move || {
        while r2.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            l2.reset();
            m2.reset();
        }
    });
    println!(
        "pallas-mocks throughput: {connections} connections, {secs} s per case, \
         server {server_threads} thread(s), load generator 1 thread"
    );
    println!(
        "{:<28} {:>10} {:>12} {:>9} {:>9} {:>9}",
        "case", "requests", "req/s", "p50 ms", "p99 ms", "max ms"
    );
    run(
        &client_rt,
        "openai non-streaming",
        llm.addr(),
        Load::Chat { stream: false },
        connections,
        secs,
    );
    run(
        &client_rt,
        "openai streaming",
        llm.addr(),
        Load::Chat { stream: true },
        connections,
        secs,
    );
    run(
        &client_rt,
        "mcp initialize+DELETE",
        mcp.addr(),
        Load::McpInitDelete,
        connections,
        secs,
    );
    resetting.store(false, Ordering::Relaxed);
    resetter.join().unwrap();
    drop(client_rt);
    drop((llm, mcp));
    drop(server_rt);
}
