//! No bearer token, API key or configured header value appears in any log line, at any level.

use std::io::Write;
use std::sync::{Arc, Mutex};

use pallas_reference::settings::{DownstreamSettings, Secret};
use serde_json::json;

use crate::fixtures::{McpServer, MockOpenAi, RawClient, settings, start_agent};

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

#[test]
fn no_secret_appears_in_a_trace_level_log_of_a_full_exchange() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let llm = MockOpenAi::start().await;
        let forwarded = McpServer::start("mnemosyne").await;
        let configured = McpServer::start("gitea").await;
        let mut s = settings("harper", &llm.url);
        s.provider.api_key = Some(Secret::new("sk-API-KEY-SECRET"));
        let mut m = DownstreamSettings::new("mnemosyne", &forwarded.url);
        m.forward_inbound_auth = true;
        let mut g = DownstreamSettings::new("gitea", &configured.url);
        g.headers = vec![("X-Api-Key".into(), Secret::new("HEADER-SECRET"))];
        s.servers = vec![m, g];
        let agent = start_agent(s).await;
        let mut client = RawClient::connect(&agent.url).await.unwrap();
        let reply = client
            .call(
                "send_message",
                json!({"message": "CALL_TOOL mnemosyne__echo {}\nCALL_TOOL gitea__echo {}"}),
                None,
                Some("BEARER-SECRET"),
            )
            .await
            .unwrap();
        assert!(!reply.is_error());
        // The secrets were really sent (so their absence from the log means something).
        assert_eq!(
            forwarded.journal.calls()[0].authorization.as_deref(),
            Some("Bearer BEARER-SECRET")
        );
        assert!(!llm.requests().is_empty());
        let health = client
            .call("get_health", json!({}), None, Some("BEARER-SECRET"))
            .await
            .unwrap();
        assert!(!health.is_error());
    });
    drop(runtime);
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.lines().count() > 10, "the run logged at trace level");
    for secret in ["sk-API-KEY-SECRET", "HEADER-SECRET", "BEARER-SECRET"] {
        let leaked: Vec<&str> = log.lines().filter(|l| l.contains(secret)).collect();
        assert!(
            leaked.is_empty(),
            "{secret} leaked in:\n{}",
            leaked.join("\n")
        );
    }
}
