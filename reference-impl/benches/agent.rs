//! Figures for the agent side of the reference Pallas (run with `cargo bench -p pallas-reference
//! --bench agent`): `send_message` throughput and latency against a mock OpenAI model answering
//! final text at once (1 and 32 sessions, with the bridge overhead over a direct model call),
//! `get_health` latency with 5 healthy downstream servers, `get_health` wall time with one
//! blackholed and one refusing server, and the bearer stress run (calls/s, mismatches, leaks).

#![allow(clippy::unwrap_used)] // A bench that cannot set up should stop with the reason.

#[allow(dead_code)]
#[path = "../tests/agent/fixtures.rs"]
mod fixtures;

use std::time::{Duration, Instant};

use fixtures::{
    McpServer, MockOpenAi, RawClient, blackhole_url, refused_url, settings, start_agent,
};
use futures::future::join_all;
use hdrhistogram::Histogram;
use pallas_reference::settings::{DownstreamSettings, InstanceScope};
use serde_json::json;

fn micros(d: Duration) -> u64 {
    d.as_micros().max(1) as u64
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

async fn direct_model_p50(llm: &MockOpenAi, calls: usize) -> f64 {
    let http = pallas_reference::net::builder().build().unwrap();
    let url = format!("{}/chat/completions", llm.url);
    let body = json!({"model": "mock-model", "messages": [
        {"role": "system", "content": "You are a test agent."},
        {"role": "user", "content": "ping"}]});
    let mut h = Histogram::<u64>::new(3).unwrap();
    for _ in 0..calls {
        let started = Instant::now();
        let response = http.post(&url).json(&body).send().await.unwrap();
        response.bytes().await.unwrap();
        h.record(micros(started.elapsed())).unwrap();
    }
    ms(&h, 0.5)
}

async fn send_message_bench() {
    let llm = MockOpenAi::start().await;
    let mut s = settings("bench", &llm.url);
    s.instance_scope = InstanceScope::Request;
    let agent = start_agent(s).await;

    // Warm-up.
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    for _ in 0..200 {
        client.send("ping").await.unwrap();
    }
    let direct = direct_model_p50(&llm, 2000).await;
    let mut h = Histogram::<u64>::new(3).unwrap();
    for _ in 0..2000 {
        let started = Instant::now();
        let reply = client.send("ping").await.unwrap();
        h.record(micros(started.elapsed())).unwrap();
        assert!(!reply.is_error());
    }
    println!(
        "send_message, 1 session: p50 {:.3} ms, p99 {:.3} ms; direct model call p50 {:.3} ms; bridge overhead p50 {:.3} ms",
        ms(&h, 0.5),
        ms(&h, 0.99),
        direct,
        ms(&h, 0.5) - direct
    );

    for sessions in [1usize, 8, 32] {
        let mut clients = Vec::new();
        for _ in 0..sessions {
            clients.push(RawClient::connect(&agent.url).await.unwrap());
        }
        let run_for = Duration::from_secs(3);
        let started = Instant::now();
        let results = join_all(clients.into_iter().map(|mut client| async move {
            let mut h = Histogram::<u64>::new(3).unwrap();
            while started.elapsed() < run_for {
                let t = Instant::now();
                let reply = client.send("ping").await.unwrap();
                h.record(micros(t.elapsed())).unwrap();
                assert!(!reply.is_error());
            }
            h
        }))
        .await;
        let elapsed = started.elapsed().as_secs_f64();
        let mut total = Histogram::<u64>::new(3).unwrap();
        for h in &results {
            total.add(h).unwrap();
        }
        println!(
            "send_message, {sessions} sessions: {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms ({} calls)",
            total.len() as f64 / elapsed,
            ms(&total, 0.5),
            ms(&total, 0.99),
            total.len()
        );
    }
}

async fn health_bench() {
    let llm = MockOpenAi::start().await;
    let mut servers = Vec::new();
    for i in 0..5 {
        servers.push(McpServer::start(&format!("s{i}")).await);
    }
    let mut s = settings("bench", &llm.url);
    s.servers = servers
        .iter()
        .enumerate()
        .map(|(i, server)| DownstreamSettings::new(format!("s{i}"), &server.url))
        .collect();
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    for _ in 0..50 {
        client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
    }
    let mut h = Histogram::<u64>::new(3).unwrap();
    for _ in 0..1000 {
        let started = Instant::now();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        h.record(micros(started.elapsed())).unwrap();
        assert!(reply.text().contains("\"ok\""), "{}", reply.text());
    }
    println!(
        "get_health, 5 healthy downstream servers: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(&h, 0.5),
        ms(&h, 0.99),
        h.max() as f64 / 1000.0
    );

    let (hole, _guard) = blackhole_url().await;
    let mut s = settings("bench", &llm.url);
    s.servers = vec![
        DownstreamSettings::new("blackholed", hole),
        DownstreamSettings::new("refusing", refused_url().await),
    ];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let mut walls = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        walls.push(started.elapsed().as_secs_f64());
        assert!(reply.text().contains("Unreachable: blackholed, refusing"));
    }
    println!(
        "get_health, one blackholed + one refusing server (3 s probe timeout): wall {}",
        walls
            .iter()
            .map(|w| format!("{w:.3} s"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

async fn bearer_stress_bench() {
    const REQUESTS: usize = 2000;
    const SESSIONS: usize = 32;
    let llm = MockOpenAi::start().await;
    let a = McpServer::start("a").await;
    let b = McpServer::start("b").await;
    let plain = McpServer::start("plain").await;
    let mut s = settings("bench", &llm.url);
    s.instance_scope = InstanceScope::Request;
    let mut da = DownstreamSettings::new("a", &a.url);
    da.forward_inbound_auth = true;
    let mut db = DownstreamSettings::new("b", &b.url);
    db.forward_inbound_auth = true;
    s.servers = vec![da, db, DownstreamSettings::new("plain", &plain.url)];
    let agent = start_agent(s).await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(RawClient::connect(&agent.url).await.unwrap());
    }
    let started = Instant::now();
    join_all((0..REQUESTS).map(|i| {
        let mut client = sessions[i % SESSIONS].fork(10 + i as u64);
        async move {
            let bearer = format!("tok-{i}");
            let message = format!(
                "CALL_TOOL a__echo {{\"req\":{i}}}\nCALL_TOOL b__echo {{\"req\":{i}}}\nCALL_TOOL plain__echo {{\"req\":{i}}}"
            );
            let reply = client
                .call("send_message", json!({"message": message}), None, Some(&bearer))
                .await
                .unwrap();
            assert!(!reply.is_error());
        }
    }))
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let (mut mismatches, mut leaks, mut calls) = (0, 0, 0);
    for (server, opted) in [(&a, true), (&b, true), (&plain, false)] {
        for call in server.journal.calls() {
            calls += 1;
            let req = call.arguments.as_ref().unwrap()["req"].as_u64().unwrap();
            let expected = opted.then(|| format!("Bearer tok-{req}"));
            if call.authorization != expected {
                if opted {
                    mismatches += 1;
                } else {
                    leaks += 1;
                }
            }
        }
    }
    println!(
        "bearer stress: {REQUESTS} concurrent send_message over {SESSIONS} sessions, {calls} downstream calls: {:.0} send_message/s, mismatches {mismatches}, leaks {leaks}",
        REQUESTS as f64 / elapsed
    );
    assert_eq!((mismatches, leaks), (0, 0));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        send_message_bench().await;
        health_bench().await;
        bearer_stress_bench().await;
    });
}
