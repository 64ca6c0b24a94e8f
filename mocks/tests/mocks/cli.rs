//! The `pallas-mocks` binary: `up` and `validate`.

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
