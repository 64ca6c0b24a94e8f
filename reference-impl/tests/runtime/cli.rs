//! The `pallas` binary: help, exit codes, signals, and logs free of secrets.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{self, API_KEY, McpSession, Project, ecosystem, eventually, registry_doc};

fn pallas(project: &Project) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pallas"));
    cmd.current_dir(project.path())
        .env("HOME", project.path())
        .env("PALLAS_BIND_HOST", "127.0.0.1")
        .env("OPENAI_API_KEY", API_KEY)
        .env("PALLAS_LOG_FILE", project.file("logs/pallas.log"))
        .env_remove("PALLAS_AGENTS_CONFIG")
        .env_remove("PALLAS_LOG_LEVEL")
        .env_remove("PALLAS_ROOT_LOG_LEVEL")
        .env_remove("PALLAS_LOG_STDERR")
        .env_remove("OPENAI_BASE_URL");
    cmd
}

/// A running `pallas` child and the addresses from its ready line.
struct Running {
    child: Child,
    registry: Option<SocketAddr>,
    agents: Vec<(String, SocketAddr)>,
}

impl Running {
    fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        let ready = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.starts_with("pallas ready:") => break line,
                Ok(line) => seen.push(line),
                Err(_) => {
                    let _ = child.kill();
                    panic!("pallas did not get ready: {seen:?}");
                }
            }
        };
        let mut registry = None;
        let mut agents = Vec::new();
        for part in ready.trim_start_matches("pallas ready:").split_whitespace() {
            let (k, v) = part.split_once('=').unwrap();
            let addr: SocketAddr = v.parse().unwrap();
            if k == "registry" {
                registry = Some(addr);
            } else {
                agents.push((k.to_owned(), addr));
            }
        }
        Self {
            child,
            registry,
            agents,
        }
    }

    fn agent(&self, name: &str) -> SocketAddr {
        self.agents.iter().find(|(n, _)| n == name).unwrap().1
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("pallas did not exit within {within:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn help_documents_both_modes_and_the_environment() {
    let out = Command::new(env!("CARGO_BIN_EXE_pallas"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--agent <NAME>",
        "without registry",
        "PALLAS_AGENTS_CONFIG",
        "PALLAS_BIND_HOST",
        "PALLAS_LOG_LEVEL",
        "PALLAS_ROOT_LOG_LEVEL",
        "PALLAS_LOG_STDERR",
        "PALLAS_LOG_FILE",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "SIGHUP",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}

#[tokio::test]
async fn a_configuration_error_exits_non_zero_with_its_location_before_listening() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    project.write(
        "agents/jarvis.md",
        "---\nname: jarvis\nservers: [argos, wether]\n---\nYou are Jarvis.\n",
    );
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    project.write(
        "agents.yaml",
        &support::STANDARD_AGENTS.replace("registry_port: 0", &format!("registry_port: {port}")),
    );
    let out = pallas(&project).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("jarvis.md:3:"), "{stderr}");
    assert!(stderr.contains("wether"), "{stderr}");
    assert!(stderr.contains("did you mean `weather`"), "{stderr}");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[tokio::test]
async fn check_mode_validates_and_lists_the_start_order() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let out = pallas(&project).arg("--check").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("2 agent(s) valid: research (port 0), jarvis (port 0)"),
        "{stdout}"
    );
}

// Multi-threaded: `Running::spawn` blocks while the in-process mocks must keep answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_and_sigterm_shuts_down_cleanly() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let mut cmd = pallas(&project);
    cmd.arg("--no-watch");
    let mut running = Running::spawn(cmd);
    let registry = running.registry.unwrap();
    assert_eq!(support::names(&registry_doc(registry).await).len(), 2);

    project.write(
        "agents.yaml",
        &support::STANDARD_AGENTS.replace(
            "    depends_on: [research]\n",
            "    depends_on: [research]\n  extra:\n    module: agents.research\n    port: 0\n",
        ),
    );
    running.signal("-HUP");
    eventually(
        Duration::from_secs(15),
        "the registry to list `extra`",
        || async {
            support::names(&registry_doc(registry).await)
                .contains(&"com.example.test/extra".to_owned())
                .then_some(())
        },
    )
    .await;

    running.signal("-TERM");
    let status = running.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    assert!(std::net::TcpStream::connect(registry).is_err());
}

// Multi-threaded: `Running::spawn` blocks while the in-process mocks must keep answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_agent_mode_from_the_command_line_has_no_registry() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let mut cmd = pallas(&project);
    cmd.args(["--agent", "research", "--no-watch"]);
    let running = Running::spawn(cmd);
    assert!(running.registry.is_none());
    assert_eq!(running.agents.len(), 1);
    let url = format!("http://{}/mcp", running.agent("research"));
    McpSession::open(&url, None).await.close().await;
}

// Multi-threaded: `Running::spawn` blocks while the in-process mocks must keep answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debug_run_logs_neither_the_bearer_nor_the_api_key() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let mut cmd = pallas(&project);
    cmd.env("PALLAS_LOG_LEVEL", "debug")
        .env("PALLAS_ROOT_LOG_LEVEL", "debug")
        .env("PALLAS_LOG_STDERR", "1")
        .arg("--no-watch");
    let mut running = Running::spawn(cmd);
    let bearer = "inbound-bearer-7f3a9c51e2";
    let url = format!("http://{}/mcp", running.agent("research"));
    let mut session = McpSession::open(&url, Some(bearer)).await;
    let r = session
        .call_tool(
            "send_message",
            json!({"message": "CALL_TOOL mnemosyne__recall {\"q\":\"x\"}"}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    session.call_tool("get_health", json!({})).await;
    session.close().await;
    // The bearer did travel (mnemosyne forwards inbound auth), so its absence from the log counts.
    let journal = eco.mcp("mnemosyne").unwrap().journal();
    assert!(
        journal
            .iter()
            .any(|e| e.authorization() == Some(&format!("Bearer {bearer}"))),
        "the forwarded bearer never reached mnemosyne"
    );
    let llm = eco.llm("openai").unwrap().journal();
    assert!(
        llm.iter()
            .any(|e| e.headers.get("authorization").map(String::as_str)
                == Some(&format!("Bearer {API_KEY}"))),
        "the API key never reached the provider"
    );
    running.signal("-TERM");
    running.wait_exit(Duration::from_secs(20));

    let log = std::fs::read_to_string(project.file("logs/pallas.log")).unwrap();
    assert!(
        log.lines().filter(|l| l.contains("\"DEBUG\"")).count() > 0,
        "the run must have logged at debug level"
    );
    for line in log.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not a JSON line: {line}"
        );
    }
    assert!(!log.contains(bearer), "the bearer leaked into the log");
    assert!(!log.contains(API_KEY), "the API key leaked into the log");
}
