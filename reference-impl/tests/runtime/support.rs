//! Shared fixtures: project directories, the mock ecosystem, raw MCP calls, polling.

#![allow(dead_code)]

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pallas_mocks::Ecosystem;
use pallas_reference::config::LoadOptions;
use pallas_reference::runtime::{self, RunningPallas, StartOptions};
use serde_json::{Value, json};

/// The API key the mock OpenAI requires.
pub const API_KEY: &str = "sk-test-key-1234567890";

/// A mock ecosystem: an OpenAI mock and three MCP servers.
pub const ECOSYSTEM: &str = r#"
llms:
  openai:
    dialect: openai
    api_key: sk-test-key-1234567890
    models: [mock-model]
mcp_servers:
  argos:
    tools:
      - name: search_web
        description: Search the web
        result: echo_headers
  mnemosyne:
    tools:
      - name: recall
        result: echo_headers
  weather:
    tools:
      - name: forecast
        result: echo_headers
"#;

pub async fn ecosystem() -> Ecosystem {
    let spec = pallas_mocks::parse_ecosystem("ecosystem.yaml", ECOSYSTEM).expect("ecosystem spec");
    Ecosystem::start(&spec).await.expect("mocks start")
}

/// A project directory in a temporary folder.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.dir.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, text).unwrap();
        self
    }

    /// A complete project against `eco`: agents `jarvis` (depends on `research`) and `research`.
    pub fn standard(eco: &Ecosystem) -> Self {
        let p = Self::new();
        p.write("agents.yaml", STANDARD_AGENTS);
        p.write("fastagent.config.yaml", &fastagent_config(eco, true));
        p.write(
            "fastagent.secrets.yaml",
            "openai:\n  api_key: \"${OPENAI_API_KEY}\"\n",
        );
        p.write(
            "agents/jarvis.md",
            "---\nname: jarvis\ndescription: Card description\nservers: [argos, weather]\n---\nYou are Jarvis.\n",
        );
        p.write(
            "agents/research.md",
            "---\nname: research\nservers: [mnemosyne]\nrequest_params:\n  temperature: 0.2\n  max_iterations: 5\n---\nResearch things.\n",
        );
        p
    }
}

pub const STANDARD_AGENTS: &str = "\
name: test-project
namespace: com.example.test
registry_port: 0
agents:
  jarvis:
    module: agents.jarvis
    port: 0
    description: My assistant
    depends_on: [research]
  research:
    module: agents.research
    port: 0
";

pub fn fastagent_config(eco: &Ecosystem, capabilities: bool) -> String {
    let urls = eco.urls();
    let caps = if capabilities {
        "model_capabilities:\n  vision: true\n  context_window: 200000\n  max_output_tokens: 32000\n"
    } else {
        ""
    };
    format!(
        "default_model: openai.mock-model\n{caps}openai:\n  base_url: \"{openai}\"\nmcp:\n  servers:\n    argos:\n      transport: http\n      url: \"{argos}\"\n    mnemosyne:\n      transport: http\n      url: \"{mnemosyne}\"\n      forward_inbound_auth: true\n    weather:\n      transport: http\n      url: \"{weather}\"\n",
        openai = urls["openai"],
        argos = urls["argos"],
        mnemosyne = urls["mnemosyne"],
        weather = urls["weather"],
    )
}

/// The stand-in environment of in-process runs.
pub fn test_env() -> HashMap<String, String> {
    HashMap::from([("OPENAI_API_KEY".to_owned(), API_KEY.to_owned())])
}

pub fn options() -> StartOptions {
    StartOptions {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        load: LoadOptions {
            agents_config: None,
            env: Some(test_env()),
        },
        watch: false,
        ready_timeout: Duration::from_secs(10),
        ..StartOptions::default()
    }
}

pub async fn start(project: &Project) -> RunningPallas {
    runtime::start(project.path(), options())
        .await
        .expect("pallas starts")
}

pub fn client() -> reqwest::Client {
    pallas_reference::net::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

pub async fn get_json(url: &str) -> Value {
    client()
        .get(url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub async fn registry_doc(addr: SocketAddr) -> Value {
    get_json(&format!("http://{addr}/.well-known/mcp/server.json")).await
}

pub fn names(doc: &Value) -> Vec<String> {
    doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Polls `check` until it returns `Some`, or panics after `within`.
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A raw MCP session on `url`.
pub struct McpSession {
    pub url: String,
    pub session: Option<String>,
    pub bearer: Option<String>,
    next_id: u64,
}

impl McpSession {
    pub async fn open(url: &str, bearer: Option<&str>) -> Self {
        let mut s = Self {
            url: url.to_owned(),
            session: None,
            bearer: bearer.map(str::to_owned),
            next_id: 1,
        };
        let (resp, session) = s
            .post(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "runtime-tests", "version": "0"}}
            }))
            .await;
        assert!(resp.get("result").is_some(), "initialize failed: {resp}");
        s.session = session;
        s.notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    async fn post(&self, body: Value) -> (Value, Option<String>) {
        let mut req = client()
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let text = resp.text().await.unwrap();
        assert!(status.is_success(), "HTTP {status}: {text}");
        let id = body.get("id").cloned();
        (response_from(&text, id.as_ref()), session)
    }

    pub async fn notify(&self, body: Value) {
        let mut req = client()
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let status = req.send().await.unwrap().status();
        assert!(status.is_success(), "notification got HTTP {status}");
    }

    /// Sends a request and returns its JSON-RPC response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
            .0
    }

    /// `tools/call`, returning the `result`.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        r.get("result").cloned().unwrap_or_else(|| panic!("{r}"))
    }

    pub async fn close(self) {
        if let Some(s) = &self.session {
            let _ = client()
                .delete(&self.url)
                .header("mcp-session-id", s)
                .send()
                .await;
        }
    }
}

/// The JSON-RPC message answering `id` in a JSON or SSE body.
fn response_from(text: &str, id: Option<&Value>) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        if v.get("id") == id && (v.get("result").is_some() || v.get("error").is_some()) {
            return v;
        }
    }
    panic!("no response to {id:?} in: {text}");
}

/// The text of the first content block of a tool result.
pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
