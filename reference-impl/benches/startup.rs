//! Startup and idle-memory figures of the `pallas` binary (run with `cargo bench -p
//! pallas-reference --bench startup`): a project of 3 agents against the mock OpenAI; time from
//! spawn to ready (the registry answering and every agent answering MCP `initialize`), and the
//! resident memory once idle. Targets: ready < 200 ms, idle RSS < 30 MB. When `taskset` exists the
//! server runs pinned to core 0 and this client to core 1, as the fast-agent anchor was measured.

#![allow(clippy::unwrap_used)] // A bench that cannot set up should stop with the reason.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pallas_mocks::Ecosystem;
use pallas_reference::runtime::initialize_probe;

const RUNS: usize = 15;
const ECOSYSTEM: &str = "llms:\n  openai:\n    dialect: openai\n    models: [mock-model]\n";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn write_project(dir: &Path, openai: &str) -> (u16, Vec<u16>) {
    let registry = free_port();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut agents =
        format!("name: bench\nnamespace: com.example.bench\nregistry_port: {registry}\nagents:\n");
    for (i, port) in ports.iter().enumerate() {
        agents.push_str(&format!(
            "  agent_{i}:\n    module: agents.a{i}\n    port: {port}\n    description: Bench agent {i}\n"
        ));
        std::fs::create_dir_all(dir.join("agents")).unwrap();
        std::fs::write(
            dir.join(format!("agents/a{i}.md")),
            "---\nname: bench\n---\nYou answer briefly.\n",
        )
        .unwrap();
    }
    std::fs::write(dir.join("agents.yaml"), agents).unwrap();
    std::fs::write(
        dir.join("fastagent.config.yaml"),
        format!("default_model: openai.mock-model\nopenai:\n  base_url: \"{openai}\"\n"),
    )
    .unwrap();
    (registry, ports)
}

fn has_taskset() -> bool {
    Command::new("taskset")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn spawn(dir: &Path, pinned: bool) -> Child {
    let bin = env!("CARGO_BIN_EXE_pallas");
    let mut cmd = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", bin]);
        c
    } else {
        Command::new(bin)
    };
    cmd.current_dir(dir)
        .env("HOME", dir)
        .env("PALLAS_BIND_HOST", "127.0.0.1")
        .env("PALLAS_LOG_FILE", dir.join("pallas.log"))
        .env("PALLAS_LOG_LEVEL", "info")
        .arg("--no-watch")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn ready(client: &reqwest::Client, registry: u16, ports: &[u16]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let registry_url = format!("http://127.0.0.1:{registry}/.well-known/mcp/server.json");
    loop {
        assert!(Instant::now() < deadline, "pallas did not get ready");
        if client
            .get(&registry_url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for port in ports {
        let url = format!("http://127.0.0.1:{port}/mcp");
        loop {
            assert!(
                Instant::now() < deadline,
                "agent on {port} did not get ready"
            );
            if initialize_probe(client, &url, Duration::from_secs(2))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Stops the `pallas` child with SIGTERM (under `taskset` the pid is the same process).
fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let pinned = has_taskset();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if pinned {
        // Pin this client (and the mock) to core 1.
        let _ = Command::new("taskset")
            .args(["-pc", "1", &std::process::id().to_string()])
            .output();
    }
    rt.block_on(async {
        let spec = pallas_mocks::parse_ecosystem("bench.yaml", ECOSYSTEM).unwrap();
        let eco = Ecosystem::start(&spec).await.unwrap();
        let openai = eco.urls()["openai"].clone();
        let client = pallas_reference::net::builder().build().unwrap();
        let mut times = Vec::with_capacity(RUNS);
        let mut rss = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let dir = tempfile::tempdir().unwrap();
            let (registry, ports) = write_project(dir.path(), &openai);
            let t0 = Instant::now();
            let child = spawn(dir.path(), pinned);
            ready(&client, registry, &ports).await;
            times.push(t0.elapsed());
            // Idle: let the probes' sessions close and the allocator settle.
            tokio::time::sleep(Duration::from_millis(500)).await;
            rss.push(rss_kib(child.id()));
            stop(child);
        }
        times.sort();
        rss.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let median = times[RUNS / 2];
        let rss_median = rss[RUNS / 2] as f64 / 1024.0;
        println!("pallas startup, 3 agents, {RUNS} runs (pinned: {pinned})");
        println!(
            "  time to ready (registry + every agent answering initialize): median {:.1} ms, min {:.1} ms, max {:.1} ms  (target < 200 ms)",
            ms(median),
            ms(times[0]),
            ms(times[RUNS - 1])
        );
        println!(
            "  idle RSS: median {:.1} MiB, min {:.1} MiB, max {:.1} MiB  (target < 30 MB)",
            rss_median,
            rss[0] as f64 / 1024.0,
            rss[RUNS - 1] as f64 / 1024.0
        );
        let ok_time = median < Duration::from_millis(200);
        let ok_rss = rss_median * 1024.0 * 1024.0 < 30.0e6;
        println!(
            "  verdict: startup {}, idle RSS {}",
            if ok_time { "within target" } else { "OVER target" },
            if ok_rss { "within target" } else { "OVER target" }
        );
        eco.shutdown().await;
    });
}
