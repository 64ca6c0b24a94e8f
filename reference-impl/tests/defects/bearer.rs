//! Bearer forwarding and secret-logging defects, read from the downstream servers' journals and
//! from a captured log.

use std::io::Write;
use std::sync::{Arc, Mutex};

use pallas_reference::settings::{DownstreamSettings, Secret};
use serde_json::json;

use crate::Defects;
use crate::fixtures::{McpServer, MockOpenAi, RawClient, settings, start_agent};

/// What `server` answered to `whoami` for a call made with `bearer`.
async fn whoami(client: &mut RawClient, server: &str, bearer: Option<&str>) -> String {
    let reply = client
        .call(
            "send_message",
            json!({"message": format!("CALL_TOOL {server}__whoami {{}}")}),
            None,
            bearer,
        )
        .await
        .unwrap();
    assert!(!reply.is_error(), "{:?}", reply.messages);
    reply.text()
}

#[tokio::test]
async fn bearer_to_all_servers_reaches_a_server_that_did_not_opt_in() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let plain = McpServer::start("weather").await;
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![DownstreamSettings::new("weather", &plain.url)];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let clean = whoami(&mut client, "weather", Some("tok-1")).await;
    assert_eq!(clean, "tool results: weather:none");
    d.set(&["bearer-to-all-servers"]);
    let broken = whoami(&mut client, "weather", Some("tok-1")).await;
    assert_eq!(broken, "tool results: weather:Bearer tok-1");
}

#[tokio::test]
async fn bearer_over_configured_header_replaces_the_configured_authorization() {
    let d = Defects::take().await;
    let llm = MockOpenAi::start().await;
    let gitea = McpServer::start("gitea").await;
    let mut server = DownstreamSettings::new("gitea", &gitea.url);
    server.forward_inbound_auth = true;
    server.headers = vec![("Authorization".into(), Secret::new("Bearer fixed"))];
    let mut s = settings("jarvis", &llm.url);
    s.servers = vec![server];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let clean = whoami(&mut client, "gitea", Some("tok-1")).await;
    assert_eq!(clean, "tool results: gitea:Bearer fixed");
    d.set(&["bearer-over-configured-header"]);
    let broken = whoami(&mut client, "gitea", Some("tok-1")).await;
    assert_eq!(broken, "tool results: gitea:Bearer tok-1");
}

#[tokio::test]
async fn reuse_first_bearer_forwards_an_earlier_callers_bearer() {
    let d = Defects::take().await;
    for (defects, second, third) in [
        (&[][..], "Bearer tok-B", "none"),
        (&["reuse-first-bearer"][..], "Bearer tok-A", "Bearer tok-A"),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let mnemosyne = McpServer::start("mnemosyne").await;
        let mut server = DownstreamSettings::new("mnemosyne", &mnemosyne.url);
        server.forward_inbound_auth = true;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![server];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let first = whoami(&mut client, "mnemosyne", Some("tok-A")).await;
        assert_eq!(first, "tool results: mnemosyne:Bearer tok-A");
        let got = whoami(&mut client, "mnemosyne", Some("tok-B")).await;
        assert_eq!(
            got,
            format!("tool results: mnemosyne:{second}"),
            "{defects:?}"
        );
        let got = whoami(&mut client, "mnemosyne", None).await;
        assert_eq!(
            got,
            format!("tool results: mnemosyne:{third}"),
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn probe_with_bearer_sends_an_ended_calls_bearer_on_health_probes() {
    let d = Defects::take().await;
    for (defects, expected) in [
        (&[][..], None),
        (&["probe-with-bearer"][..], Some("Bearer tok-M")),
    ] {
        d.set(defects);
        let llm = MockOpenAi::start().await;
        let argos = McpServer::start("argos").await;
        let mut s = settings("jarvis", &llm.url);
        s.servers = vec![DownstreamSettings::new("argos", &argos.url)];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        // A message call with a bearer, ended before the health call, which carries none.
        let sent = client
            .call(
                "send_message",
                json!({"message": "hello"}),
                None,
                Some("tok-M"),
            )
            .await
            .unwrap();
        assert!(!sent.is_error(), "{:?}", sent.messages);
        let reply = client
            .call("get_health", json!({}), None, None)
            .await
            .unwrap();
        assert!(!reply.is_error());
        let records = argos.journal.records();
        let init = records
            .iter()
            .rev()
            .find(|r| r.rpc_method.as_deref() == Some("initialize"))
            .unwrap();
        assert_eq!(init.authorization.as_deref(), expected, "{defects:?}");
    }
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log of one `send_message` with bearer `BEARER-SECRET`, at info level.
fn logged_send_message() -> String {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let llm = MockOpenAi::start().await;
        let agent = start_agent(settings("jarvis", &llm.url)).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call(
                "send_message",
                json!({"message": "hi"}),
                None,
                Some("BEARER-SECRET"),
            )
            .await
            .unwrap();
        assert!(!reply.is_error());
    });
    drop(runtime);
    String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn log_bearer_writes_the_inbound_bearer_to_the_log() {
    let d = Defects::take_blocking();
    assert!(!logged_send_message().contains("BEARER-SECRET"));
    d.set(&["log-bearer"]);
    assert!(logged_send_message().contains("BEARER-SECRET"));
}
