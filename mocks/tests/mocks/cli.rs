//! The `pallas-mocks` binary: `up`, `validate` and `record`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::client;

const BIN: &str = env!("CARGO_BIN_EXE_pallas-mocks");

#[test]
fn validate_accepts_the_example_and_rejects_bad_files_with_exit_2() {
    let ok = Command::new(BIN)
        .args([
            "validate",
            concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ecosystem.yaml"),
        ])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "llms:\n  o:\n    dialect: openai\n    modls: [a]\n").unwrap();
    let out = Command::new(BIN)
        .arg("validate")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.yaml:4:5"), "{stderr}");
    assert!(stderr.contains("did you mean `models`?"), "{stderr}");
    let missing = Command::new(BIN)
        .args(["validate", "/nonexistent/eco.yaml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    // Without a file: the embedded example, which `example` prints as the file reads.
    let embedded = Command::new(BIN).arg("validate").output().unwrap();
    assert!(embedded.status.success(), "{embedded:?}");
    let example = Command::new(BIN).arg("example").output().unwrap();
    assert_eq!(
        String::from_utf8(example.stdout).unwrap(),
        include_str!("../../examples/ecosystem.yaml")
    );
}

#[tokio::test]
async fn up_without_a_file_serves_the_embedded_example_writes_urls_and_stops_on_sigterm() {
    // From an empty folder: the example ecosystem comes from the binary, not from disk.
    let dir = tempfile::tempdir().unwrap();
    let urls_file = dir.path().join("urls.json");
    let mut child = Command::new(BIN)
        .args(["up", "--urls-out"])
        .arg(&urls_file)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !urls_file.exists() {
        assert!(Instant::now() < deadline, "urls file never appeared");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("pallas-mocks exited early: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let urls: Value = serde_json::from_str(&std::fs::read_to_string(&urls_file).unwrap()).unwrap();
    assert_eq!(urls.as_object().unwrap().len(), 7);
    let models = client()
        .get(format!("{}/models", urls["openai"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    let answer: Value = client()
        .post(format!(
            "{}/chat/completions",
            urls["openai"].as_str().unwrap()
        ))
        .json(&serde_json::json!({
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "weather in Athens"}],
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"], "It is sunny in weather in Athens.",
        "{answer}"
    );
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains("NAME") && stdout.contains("mnemosyne"),
        "{stdout}"
    );
}

#[tokio::test]
async fn record_trusts_ssl_cert_file_prints_its_urls_and_writes_the_file_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let spec = pallas_mocks::parse_ecosystem(
        "up.yaml",
        "tls: true\nllms:\n  openai: {dialect: openai}\nmcp_servers:\n  argos: {}\n",
    )
    .unwrap();
    let upstream = pallas_mocks::Ecosystem::start(&spec).await.unwrap();
    let ca = dir.path().join("ca.pem");
    upstream.tls().unwrap().write_ca(&ca).unwrap();
    let up = upstream.urls();
    let out = dir.path().join("rec.yaml");
    let urls_file = dir.path().join("urls.json");
    let mut cmd = Command::new(BIN);
    cmd.arg("record")
        .arg("--out")
        .arg(&out)
        .args([
            "--openai",
            &up["openai"],
            "--mcp",
            &format!("argos={}", up["argos"]),
        ])
        .arg("--urls-out")
        .arg(&urls_file)
        .env("SSL_CERT_FILE", &ca)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for v in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env_remove(v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !urls_file.exists() {
        assert!(Instant::now() < deadline, "urls file never appeared");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("pallas-mocks record exited early: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let urls: Value = serde_json::from_str(&std::fs::read_to_string(&urls_file).unwrap()).unwrap();
    let local = urls["openai"].as_str().unwrap();
    assert!(
        local.starts_with("http://127.0.0.1:") && local.ends_with("/v1"),
        "{urls}"
    );
    assert!(urls["argos"].as_str().unwrap().ends_with("/mcp"), "{urls}");
    let answer = client()
        .post(format!("{local}/chat/completions"))
        .json(&serde_json::json!({"model": "mock-model",
            "messages": [{"role": "user", "content": "recorded hello"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the HTTPS upstream was reached");
    answer.text().await.unwrap();
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains("argos") && stdout.contains(local),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let spec = pallas_mocks::parse_ecosystem("rec.yaml", &text).unwrap();
    let script = &spec.llms["openai"].script;
    assert_eq!(script.len(), 1, "{text}");
    assert_eq!(script[0].text.as_deref(), Some("recorded hello"));
    let validate = Command::new(BIN)
        .arg("validate")
        .arg(&out)
        .output()
        .unwrap();
    assert!(validate.status.success());

    let nothing = Command::new(BIN)
        .args(["record", "--out"])
        .arg(dir.path().join("x.yaml"))
        .output()
        .unwrap();
    assert_eq!(nothing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("nothing to record"));
}

/// A one-request HTTP proxy on loopback: answers a chat completion and hands back the request
/// line it received.
async fn fake_proxy() -> (String, tokio::sync::oneshot::Receiver<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("\"messages\"") {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "proxy connection closed early");
            seen.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"via the proxy"},"finish_reason":"stop"}]}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(answer.as_bytes()).await.unwrap();
        let text = String::from_utf8_lossy(&seen).into_owned();
        let _ = tx.send(text.lines().next().unwrap_or_default().to_owned());
    });
    (url, rx)
}

#[tokio::test]
async fn record_reaches_its_upstream_through_the_proxy_variables() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, request_line) = fake_proxy().await;
    let out = dir.path().join("rec.yaml");
    let urls_file = dir.path().join("urls.json");
    let mut cmd = Command::new(BIN);
    cmd.args(["record", "--openai", "http://upstream.invalid/v1", "--out"])
        .arg(&out)
        .arg("--urls-out")
        .arg(&urls_file)
        .env("HTTP_PROXY", &proxy)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for v in [
        "NO_PROXY",
        "no_proxy",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env_remove(v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !urls_file.exists() {
        assert!(Instant::now() < deadline, "urls file never appeared");
        assert!(child.try_wait().unwrap().is_none(), "exited early");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let urls: Value = serde_json::from_str(&std::fs::read_to_string(&urls_file).unwrap()).unwrap();
    let answer: Value = client()
        .post(format!(
            "{}/chat/completions",
            urls["openai"].as_str().unwrap()
        ))
        .json(&serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "via the proxy");
    let line = tokio::time::timeout(Duration::from_secs(5), request_line)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        line,
        "POST http://upstream.invalid/v1/chat/completions HTTP/1.1"
    );
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("via the proxy"), "{text}");
}

#[tokio::test]
async fn pallas_serves_two_agents_prints_the_registry_url_and_stops_on_sigterm() {
    let valid = Command::new(BIN)
        .args([
            "validate",
            concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pallas.yaml"),
        ])
        .output()
        .unwrap();
    assert!(valid.status.success(), "{valid:?}");
    assert!(String::from_utf8_lossy(&valid.stdout).contains("a mock Pallas with 3 agents"));
    let dir = tempfile::tempdir().unwrap();
    let urls_file = dir.path().join("urls.json");
    let mut child = Command::new(BIN)
        .args(["pallas", "--urls-out"])
        .arg(&urls_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !urls_file.exists() {
        assert!(Instant::now() < deadline, "urls file never appeared");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("pallas-mocks exited early: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let urls: Value = serde_json::from_str(&std::fs::read_to_string(&urls_file).unwrap()).unwrap();
    let keys: Vec<&String> = urls.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["pallas", "pallas.jarvis", "pallas.research"]);
    let registry = urls["pallas"].as_str().unwrap();
    let doc: Value = client()
        .get(format!("{registry}/.well-known/mcp/server.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let remotes: Vec<&str> = doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["remotes"][0]["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        remotes,
        [
            urls["pallas.jarvis"].as_str().unwrap(),
            urls["pallas.research"].as_str().unwrap()
        ]
    );
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains(&format!("register this URL in Daedalus): {registry}")),
        "{stdout}"
    );
}

#[test]
fn pallas_with_a_port_puts_the_agents_on_the_next_ports() {
    let spec = pallas_mocks::cli::default_pallas(Some(23030), None).unwrap();
    let p = spec.pallas.unwrap();
    assert_eq!(p.port, Some(23030));
    let ports: Vec<(String, Option<u16>)> =
        p.agents.iter().map(|(k, a)| (k.clone(), a.port)).collect();
    assert_eq!(
        ports,
        [
            ("jarvis".to_owned(), Some(23032)),
            ("research".to_owned(), Some(23031))
        ]
    );
    assert!(pallas_mocks::cli::default_pallas(Some(u16::MAX), None).is_err());
}
