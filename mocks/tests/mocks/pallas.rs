//! The mock Pallas (seed 000): its registry, its agents' tools, scripted health, progress and its
//! deliberately wrong variants, faults, the journal, a changing registry. Raw HTTP where order
//! and tokens matter (the rmcp client replaces tokens), the rmcp client end to end.

use std::time::{Duration, Instant};

use pallas_mocks::{MockPallas, PallasJournalEntry, parse_ecosystem};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use super::support::{client, sse_data};

/// The registry schema seed 000 names (2025-12-11), as bundled with the kit.
const SERVER_SCHEMA: &str = include_str!("../../../harness/schemas/server.schema.2025-12-11.json");

async fn pallas(yaml: &str) -> MockPallas {
    let spec = parse_ecosystem("pallas.yaml", yaml).unwrap();
    MockPallas::start(spec.pallas.as_ref().unwrap())
        .await
        .unwrap()
}

async fn registry(p: &MockPallas) -> Value {
    let r = client().get(p.server_json_url()).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

fn names(doc: &Value) -> Vec<String> {
    doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// One MCP session on the raw wire.
struct Wire {
    c: reqwest::Client,
    url: String,
    sid: String,
    bearer: Option<String>,
    id: u64,
}

impl Wire {
    async fn open(url: &str, bearer: Option<&str>) -> Wire {
        let mut w = Wire {
            c: client(),
            url: url.to_owned(),
            sid: String::new(),
            bearer: bearer.map(str::to_owned),
            id: 0,
        };
        let r = w
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "daedalus-test", "version": "0"}}),
            )
            .await;
        assert_eq!(r.status(), 200);
        w.sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        r.text().await.unwrap();
        let n = w
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(n.status(), 202);
        w
    }

    fn post(&self, body: Value) -> reqwest::RequestBuilder {
        let mut b = self
            .c
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .json(&body);
        if !self.sid.is_empty() {
            b = b
                .header("mcp-session-id", &self.sid)
                .header("mcp-protocol-version", "2025-11-25");
        }
        if let Some(t) = &self.bearer {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        b
    }

    async fn request(&mut self, method: &str, params: Value) -> reqwest::Response {
        self.id += 1;
        self.post(json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}))
            .send()
            .await
            .unwrap()
    }

    /// Calls `tool`; the status and every SSE message of the answer.
    async fn call(&mut self, tool: &str, args: Value, token: Option<Value>) -> (u16, Vec<Value>) {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(t) = token {
            params["_meta"] = json!({"progressToken": t});
        }
        let r = self.request("tools/call", params).await;
        let status = r.status().as_u16();
        (status, sse_data(&r.text().await.unwrap()))
    }

    /// `get_health`'s JSON.
    async fn health(&mut self) -> Value {
        let (status, msgs) = self.call("get_health", json!({}), None).await;
        assert_eq!(status, 200);
        let text = msgs.last().unwrap()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        serde_json::from_str(&text).unwrap()
    }
}

/// `(token, progress, total, message)` of each progress notification.
fn progress(msgs: &[Value]) -> Vec<(Value, f64, Option<f64>, String)> {
    msgs.iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            let p = &m["params"];
            (
                p["progressToken"].clone(),
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64(),
                p["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn reply_text(msgs: &[Value]) -> Option<String> {
    msgs.iter()
        .find(|m| m.get("result").is_some())
        .and_then(|m| m["result"]["content"][0]["text"].as_str())
        .map(str::to_owned)
}

/// Seed 000 §4's sequence for `agent` with the default steps and tool.
fn seed_sequence(agent: &str, token: &Value) -> Vec<(Value, f64, Option<f64>, String)> {
    vec![
        (token.clone(), 0.0, None, "argos/search_web: started".into()),
        (token.clone(), 1.0, None, format!("{agent} step 1 (tool)")),
        (token.clone(), 2.0, None, format!("{agent} step 2 (llm)")),
        (
            token.clone(),
            1.0,
            Some(1.0),
            "argos/search_web: completed".into(),
        ),
    ]
}

#[tokio::test]
async fn the_registry_lists_every_agent_in_seed_000s_shape_valid_against_the_server_schema() {
    let p = pallas(
        r#"
pallas:
  namespace: com.example.project
  version: "2.1.0"
  agents:
    tech_research:
      title: Research Agent
      description: Web search and knowledge graph
      icons: [{src: "https://example.invalid/r.svg", sizes: [any]}]
      capabilities: {model: qwen3-8b-q5, vision: false, context_window: 200000, max_output_tokens: 32000}
    jarvis:
      version: "0.3.0"
"#,
    )
    .await;
    let r = client().get(p.server_json_url()).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    let doc: Value = r.json().await.unwrap();
    let schema: Value = serde_json::from_str(SERVER_SCHEMA).unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    for entry in doc["servers"].as_array().unwrap() {
        let errors: Vec<String> = validator
            .iter_errors(&entry["server"])
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{entry} is invalid: {errors:?}");
    }
    assert_eq!(
        names(&doc),
        [
            "com.example.project/jarvis",
            "com.example.project/tech-research"
        ]
    );
    let jarvis = &doc["servers"][0]["server"];
    assert_eq!(jarvis["title"], "Jarvis");
    assert_eq!(jarvis["version"], "0.3.0");
    assert_eq!(jarvis["description"], "Mock Pallas agent jarvis");
    assert!(jarvis.get("capabilities").is_none(), "{jarvis}");
    let research = &doc["servers"][1];
    let port = p.agent_addr("tech_research").unwrap().port();
    assert_eq!(
        research["server"]["remotes"],
        json!([{"type": "streamable-http", "url": format!("http://127.0.0.1:{port}/mcp")}])
    );
    assert_eq!(research["server"]["version"], "2.1.0");
    assert_eq!(
        research["server"]["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    assert_eq!(
        research["server"]["capabilities"],
        json!({"model": "qwen3-8b-q5", "vision": false, "context_window": 200000, "max_output_tokens": 32000})
    );
    let meta = &research["_meta"]["io.modelcontextprotocol.registry/official"];
    assert_eq!(
        (&meta["status"], &meta["isLatest"]),
        (&json!("active"), &json!(true))
    );
    assert!(chrono::DateTime::parse_from_rfc3339(meta["updatedAt"].as_str().unwrap()).is_ok());
    // An invalid entry is caught: the check itself can fail.
    assert!(!validator.is_valid(&json!({"name": "no-slash", "version": "1"})));
}

#[tokio::test]
async fn an_rmcp_client_lists_both_tools_and_sees_health_change_call_by_call() {
    let p = pallas(
        r#"
pallas:
  agents:
    research:
      health:
        - {status: ok, after_calls: 2}
        - {status: degraded, message: "Neo4j connection slow", after_calls: 1}
        - {status: error, message: "Argos MCP server unreachable"}
"#,
    )
    .await;
    let transport = StreamableHttpClientTransport::from_uri(p.agent_url("research").unwrap());
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(listed, ["send_message", "get_health"]);
    let health = &tools[1];
    assert_eq!(
        health.description.as_deref(),
        Some("Returns the health status of this agent and its downstream dependencies.")
    );
    assert_eq!(
        Value::Object((*health.input_schema).clone()),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(tools[0].input_schema["required"], json!(["message"]));
    assert_eq!(
        tools[0].input_schema["properties"]["images"]["type"],
        "array"
    );
    let mut seen = Vec::new();
    for _ in 0..5 {
        let r = client
            .call_tool(CallToolRequestParams::new("get_health"))
            .await
            .unwrap();
        assert_eq!(r.content.len(), 1);
        let text = r.content[0].as_text().unwrap().text.clone();
        let h: Value = serde_json::from_str(&text).unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(h["timestamp"].as_str().unwrap()).is_ok());
        let keys: Vec<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
        assert!(
            keys.iter()
                .all(|k| ["status", "timestamp", "message"].contains(k)),
            "seed 000's fields only: {h}"
        );
        seen.push((h["status"].clone(), h.get("message").cloned()));
    }
    client.cancel().await.unwrap();
    assert_eq!(
        seen,
        [
            (json!("ok"), None),
            (json!("ok"), None),
            (json!("degraded"), Some(json!("Neo4j connection slow"))),
            (json!("error"), Some(json!("Argos MCP server unreachable"))),
            (json!("error"), Some(json!("Argos MCP server unreachable"))),
        ]
    );
}

#[tokio::test]
async fn timed_health_phases_follow_the_clock_with_their_latency() {
    let p = pallas(
        r#"
pallas:
  agents:
    research:
      health:
        - {status: ok, for: 1500ms}
        - {status: degraded, message: slow, latency: 300ms}
"#,
    )
    .await;
    let started = Instant::now();
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    assert_eq!(w.health().await["status"], "ok");
    let deadline = started + Duration::from_secs(15);
    loop {
        let asked = Instant::now();
        let h = w.health().await;
        if h["status"] == "degraded" {
            assert!(started.elapsed() >= Duration::from_millis(1500));
            assert!(asked.elapsed() >= Duration::from_millis(300), "latency");
            assert_eq!(h["message"], "slow");
            break;
        }
        assert_eq!(h["status"], "ok");
        assert!(Instant::now() < deadline, "never degraded");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn send_message_with_a_progress_token_gets_seed_000s_progress_then_the_reply() {
    let p = pallas(
        "pallas:\n  agents:\n    research: {}\n    jarvis: {reply: {text: \"fixed answer\"}}\n",
    )
    .await;
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    let token = json!("tok-7f3a");
    let (status, msgs) = w
        .call(
            "send_message",
            json!({"message": "hello"}),
            Some(token.clone()),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(progress(&msgs), seed_sequence("research", &token));
    assert_eq!(
        msgs.last().unwrap()["result"]["content"][0]["text"],
        "hello"
    );
    // A numeric token is echoed as it came; no token, no progress.
    let (_, msgs) = w
        .call("send_message", json!({"message": "n"}), Some(json!(42)))
        .await;
    assert!(progress(&msgs).iter().all(|n| n.0 == json!(42)));
    let (_, msgs) = w
        .call("send_message", json!({"message": "quiet"}), None)
        .await;
    assert!(progress(&msgs).is_empty(), "{msgs:?}");
    assert_eq!(reply_text(&msgs).as_deref(), Some("quiet"));
    // A missing message is a tool error; a fixed reply is the same whatever was sent.
    let (_, msgs) = w.call("send_message", json!({}), None).await;
    assert_eq!(msgs.last().unwrap()["result"]["isError"], true);
    let mut j = Wire::open(p.agent_url("jarvis").unwrap(), None).await;
    let (_, msgs) = j.call("send_message", json!({"message": "x"}), None).await;
    assert_eq!(reply_text(&msgs).as_deref(), Some("fixed answer"));
}

#[tokio::test]
async fn each_wrong_progress_mode_is_wrong_the_way_its_name_says() {
    let p = pallas(
        r#"
pallas:
  agents:
    none: {progress: {mode: none}}
    wrong: {progress: {mode: wrong-token}}
    down: {progress: {mode: decreasing}}
    late: {progress: {mode: after-result}}
    eager: {progress: {mode: without-token-too}}
"#,
    )
    .await;
    let tok = json!("t-1");
    let call = |agent: &'static str, token: Option<Value>| {
        let url = p.agent_url(agent).unwrap().to_owned();
        async move {
            let mut w = Wire::open(&url, None).await;
            w.call("send_message", json!({"message": "m"}), token)
                .await
                .1
        }
    };
    let none = call("none", Some(tok.clone())).await;
    assert!(progress(&none).is_empty());
    assert_eq!(reply_text(&none).as_deref(), Some("m"));

    let wrong = progress(&call("wrong", Some(tok.clone())).await);
    assert_eq!(wrong.len(), 4);
    assert!(wrong.iter().all(|n| n.0 == json!("wrong-t-1")), "{wrong:?}");

    let down = progress(&call("down", Some(tok.clone())).await);
    let values: Vec<f64> = down.iter().map(|n| n.1).collect();
    assert_eq!(values, [4.0, 3.0, 2.0, 1.0]);
    assert_eq!(down[3].2, Some(1.0));

    let late = call("late", Some(tok.clone())).await;
    let result_at = late.iter().position(|m| m.get("result").is_some()).unwrap();
    assert_eq!(result_at, 0, "the result comes first: {late:?}");
    assert_eq!(progress(&late), seed_sequence("late", &tok));

    let eager = progress(&call("eager", None).await);
    assert_eq!(eager.len(), 4);
    assert!(
        eager
            .iter()
            .all(|n| n.0 == json!("pallas-mock-unrequested"))
    );
    let journaled: Vec<PallasJournalEntry> = p
        .journal()
        .into_iter()
        .filter(|e| e.agent.as_deref() == Some("eager") && e.tool.is_some())
        .collect();
    assert_eq!(journaled.len(), 1);
    assert_eq!(
        journaled[0].progress_token, None,
        "the journal keeps what the client sent"
    );
}

#[tokio::test]
async fn slow_answers_wait_and_http_errors_hit_only_the_scripted_calls() {
    let p = pallas(
        r#"
pallas:
  agents:
    research:
      faults:
        slow: 600ms
        http_error: {status: 503, method: tools/call, skip: 1, times: 1}
"#,
    )
    .await;
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    let asked = Instant::now();
    let (first, msgs) = w
        .call("send_message", json!({"message": "a"}), Some(json!("t")))
        .await;
    assert_eq!(first, 200);
    assert!(asked.elapsed() >= Duration::from_millis(600), "not slow");
    assert_eq!(progress(&msgs).len(), 4, "progress still flows: {msgs:?}");
    let (second, _) = w.call("get_health", json!({}), None).await;
    assert_eq!(second, 503);
    let (third, _) = w.call("get_health", json!({}), None).await;
    assert_eq!(third, 200);
    let calls: Vec<(Option<u16>, Option<String>)> = p
        .journal()
        .into_iter()
        .filter(|e| e.tool.is_some())
        .map(|e| (e.status, e.fault))
        .collect();
    assert_eq!(
        calls,
        [
            (Some(200), None),
            (Some(503), Some("http_error".to_owned())),
            (Some(200), None)
        ]
    );
}

#[tokio::test]
async fn a_dropped_stream_cuts_the_call_after_its_first_notification_and_before_its_result() {
    let p = pallas(
        "pallas:\n  agents:\n    research:\n      faults: {drop_stream: {after_notifications: 1, times: 1}}\n",
    )
    .await;
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    let mut r = w
        .request(
            "tools/call",
            json!({"name": "send_message", "arguments": {"message": "m"},
                "_meta": {"progressToken": "t"}}),
        )
        .await;
    assert_eq!(r.status(), 200);
    let mut body = String::new();
    let broken = loop {
        match r.chunk().await {
            Ok(Some(c)) => body.push_str(&String::from_utf8_lossy(&c)),
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    assert!(broken, "the stream ended cleanly: {body}");
    let msgs = sse_data(&body);
    assert_eq!(progress(&msgs).len(), 1, "{msgs:?}");
    assert_eq!(reply_text(&msgs), None);
    // `times: 1`: the next call is whole.
    let (_, msgs) = w
        .call(
            "send_message",
            json!({"message": "again"}),
            Some(json!("u")),
        )
        .await;
    assert_eq!(progress(&msgs).len(), 4);
    assert_eq!(reply_text(&msgs).as_deref(), Some("again"));
    let faults: Vec<Option<String>> = p
        .journal()
        .into_iter()
        .filter(|e| e.tool.is_some())
        .map(|e| e.fault)
        .collect();
    assert_eq!(faults, [Some("drop_stream".to_owned()), None]);
}

#[tokio::test]
async fn a_session_expires_with_404_after_its_requests_and_a_new_one_works() {
    let p = pallas(
        "pallas:\n  agents:\n    research:\n      faults: {session_expiry: {after_requests: 2}}\n",
    )
    .await;
    let url = p.agent_url("research").unwrap();
    let mut w = Wire::open(url, None).await;
    assert_eq!(w.request("tools/list", json!({})).await.status(), 200);
    assert_eq!(w.call("get_health", json!({}), None).await.0, 200);
    let expired = w.call("get_health", json!({}), None).await;
    assert_eq!(expired.0, 404);
    // Anything with the id now: 404, the standalone stream too.
    let get =
        w.c.get(url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &w.sid)
            .send()
            .await
            .unwrap();
    assert_eq!(get.status(), 404);
    let mut fresh = Wire::open(url, None).await;
    assert_ne!(fresh.sid, w.sid);
    assert_eq!(fresh.health().await["status"], "ok");
    let faults = p.journal().into_iter().filter_map(|e| e.fault).count();
    assert_eq!(faults, 2);
}

#[tokio::test]
async fn a_session_expires_with_404_after_its_time() {
    let p = pallas(
        "pallas:\n  agents:\n    research:\n      faults: {session_expiry: {after: 400ms}}\n",
    )
    .await;
    let opened = Instant::now();
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut answered = 0;
    loop {
        let (status, _) = w.call("get_health", json!({}), None).await;
        if status == 404 {
            break;
        }
        assert_eq!(status, 200);
        answered += 1;
        assert!(Instant::now() < deadline, "never expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(opened.elapsed() >= Duration::from_millis(400));
    assert!(answered >= 1, "the session worked before it expired");
}

#[tokio::test]
async fn the_journal_holds_the_bearers_fingerprint_and_never_the_bearer() {
    const BEARER: &str = "pallas-dev-bearer-9876";
    // sha256("pallas-dev-bearer-9876") begins 372814f5.
    const FINGERPRINT: &str = "Bearer [redacted:372814f5]";
    let p = pallas(&format!(
        "pallas:\n  agents:\n    research: {{require_bearer: {BEARER}}}\n"
    ))
    .await;
    let url = p.agent_url("research").unwrap();
    let denied = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), 401);
    let mut w = Wire::open(url, Some(BEARER)).await;
    w.call(
        "send_message",
        json!({"message": "hi", "images": []}),
        Some(json!("tok-9")),
    )
    .await;
    client()
        .get(p.server_json_url())
        .header("authorization", format!("Bearer {BEARER}"))
        .send()
        .await
        .unwrap();
    let text = client()
        .get(format!("{}/__mock/journal", p.registry_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!text.contains(BEARER), "the bearer leaked: {text}");
    let j: Vec<PallasJournalEntry> = serde_json::from_str(&text).unwrap();
    assert_eq!(j[0].fault.as_deref(), Some("unauthorized"));
    assert_eq!(j[0].headers.get("authorization"), None);
    let call = j.iter().find(|e| e.tool.is_some()).unwrap();
    assert_eq!(call.headers["authorization"], FINGERPRINT);
    assert_eq!(
        (
            call.agent.as_deref(),
            call.method.as_str(),
            call.path.as_str()
        ),
        (Some("research"), "POST", "/mcp")
    );
    assert_eq!(call.jsonrpc_method.as_deref(), Some("tools/call"));
    assert_eq!(call.progress_token, Some(json!("tok-9")));
    assert_eq!(call.arguments, Some(json!({"message": "hi", "images": []})));
    assert_eq!(call.session_id.as_deref(), Some(w.sid.as_str()));
    let reg = j.last().unwrap();
    assert_eq!(
        (reg.agent.as_deref(), reg.path.as_str()),
        (None, "/.well-known/mcp/server.json")
    );
    assert_eq!(reg.headers["authorization"], FINGERPRINT);
    assert!(j.iter().all(|e| e.status.is_some()));
}

#[tokio::test]
async fn a_registry_schedule_adds_and_removes_agents_and_can_fail() {
    let p = pallas(
        r#"
pallas:
  namespace: ns
  agents: {research: {}, jarvis: {}}
  registry:
    schedule:
      - {status: 503, after_calls: 1}
      - {agents: [research], after_calls: 1}
      - {agents: [research, jarvis], after_calls: 2}
      - {agents: [jarvis]}
"#,
    )
    .await;
    let first = client().get(p.server_json_url()).send().await.unwrap();
    assert_eq!(first.status(), 503);
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(names(&registry(&p).await));
    }
    assert_eq!(
        seen,
        [
            vec!["ns/research"],
            vec!["ns/research", "ns/jarvis"],
            vec!["ns/research", "ns/jarvis"],
            vec!["ns/jarvis"],
            vec!["ns/jarvis"],
        ]
    );
    // An unlisted agent keeps serving; a reset starts the schedule over.
    let mut w = Wire::open(p.agent_url("research").unwrap(), None).await;
    assert_eq!(w.health().await["status"], "ok");
    p.reset();
    assert!(p.journal().is_empty());
    let again = client().get(p.server_json_url()).send().await.unwrap();
    assert_eq!(again.status(), 503);
}

#[tokio::test]
async fn the_example_file_starts_in_an_ecosystem_with_its_urls() {
    let text = include_str!("../../examples/pallas.yaml");
    let spec = parse_ecosystem("pallas.yaml", text).unwrap();
    let eco = pallas_mocks::Ecosystem::start(&spec).await.unwrap();
    let urls = eco.urls();
    assert_eq!(
        urls.keys().cloned().collect::<Vec<_>>(),
        ["pallas", "pallas.flaky", "pallas.jarvis", "pallas.research"]
    );
    let p = eco.pallas().unwrap();
    assert_eq!(urls["pallas"], p.registry_url());
    assert_eq!(
        names(&registry(p).await),
        ["ca.helu.ouranos/research", "ca.helu.ouranos/jarvis"]
    );
    eco.shutdown().await;
}

#[test]
fn pallas_section_mistakes_point_at_file_line_and_column() {
    let unknown = parse_ecosystem(
        "p.yaml",
        "pallas:\n  agents:\n    research: {}\n  registry:\n    schedule:\n      - {agents: [reserch]}\n",
    )
    .unwrap_err();
    assert_eq!((unknown.line, unknown.column), (6, 19), "{unknown}");
    assert!(unknown.message.contains("no agent `reserch`"), "{unknown}");
    assert_eq!(unknown.hint.as_deref(), Some("did you mean `research`?"));
    let silent = parse_ecosystem(
        "p.yaml",
        "pallas:\n  agents:\n    research:\n      health:\n        - {status: error}\n",
    )
    .unwrap_err();
    assert_eq!(silent.line, 5, "{silent}");
    assert!(silent.message.contains("requires a `message`"), "{silent}");
    let both = parse_ecosystem(
        "p.yaml",
        "pallas:\n  agents:\n    research:\n      faults:\n        session_expiry: {after: 1s, after_requests: 2}\n",
    )
    .unwrap_err();
    assert!(
        both.message.contains("one of `after_requests` and `after`"),
        "{both}"
    );
    let clash = parse_ecosystem(
        "p.yaml",
        "mcp_servers:\n  pallas: {}\npallas:\n  agents: {a: {}}\n",
    )
    .unwrap_err();
    assert_eq!(clash.line, 2, "{clash}");
}

#[test]
fn the_readme_shows_the_example_file_as_it_is() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../../examples/pallas.yaml");
    assert!(
        readme.contains(example),
        "mocks/README.md's `pallas:` section must show examples/pallas.yaml verbatim"
    );
}
