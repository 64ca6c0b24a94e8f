//! Bearer forwarding: per request, to opted-in servers only, explicit headers win, and a stress
//! run with hundreds of concurrent distinct bearers shows no crossing and no leak.

use std::collections::HashMap;

use futures::future::join_all;
use pallas_reference::settings::{DownstreamSettings, InstanceScope, Secret};
use serde_json::json;

use crate::fixtures::{McpServer, MockOpenAi, RawClient, settings, start_agent};

struct Setup {
    _llm: MockOpenAi,
    mnemosyne: McpServer,
    gitea: McpServer,
    weather: McpServer,
    agent: crate::fixtures::Agent,
}

async fn setup() -> Setup {
    let llm = MockOpenAi::start().await;
    let mnemosyne = McpServer::start("mnemosyne").await;
    let gitea = McpServer::start("gitea").await;
    let weather = McpServer::start("weather").await;
    let mut s = settings("harper", &llm.url);
    s.instance_scope = InstanceScope::Request;
    let mut m = DownstreamSettings::new("mnemosyne", &mnemosyne.url);
    m.forward_inbound_auth = true;
    let mut g = DownstreamSettings::new("gitea", &gitea.url);
    g.forward_inbound_auth = true;
    s.servers = vec![m, g, DownstreamSettings::new("weather", &weather.url)];
    let agent = start_agent(s).await;
    Setup {
        _llm: llm,
        mnemosyne,
        gitea,
        weather,
        agent,
    }
}

const ALL_THREE: &str =
    "CALL_TOOL mnemosyne__whoami {}\nCALL_TOOL gitea__whoami {}\nCALL_TOOL weather__whoami {}";

#[tokio::test]
async fn the_inbound_bearer_reaches_opted_in_servers_only() {
    let setup = setup().await;
    let mut client = RawClient::connect(&setup.agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": ALL_THREE}),
            None,
            Some("tok-X"),
        )
        .await
        .unwrap();
    assert_eq!(
        reply.text(),
        "tool results: mnemosyne:Bearer tok-X | gitea:Bearer tok-X | weather:none"
    );
    assert_eq!(
        setup.mnemosyne.journal.calls()[0].authorization.as_deref(),
        Some("Bearer tok-X")
    );
    assert_eq!(setup.weather.journal.calls()[0].authorization, None);
    // The session set-up traffic never carries a request's bearer.
    for record in setup.mnemosyne.journal.records() {
        if record.rpc_method.as_deref() != Some("tools/call") {
            assert_eq!(record.authorization, None, "{record:?}");
        }
    }
}

#[tokio::test]
async fn a_later_request_without_a_bearer_sends_none() {
    let setup = setup().await;
    let mut client = RawClient::connect(&setup.agent.url).await.unwrap();
    client
        .call(
            "send_message",
            json!({"message": ALL_THREE}),
            None,
            Some("first"),
        )
        .await
        .unwrap();
    let reply = client
        .call("send_message", json!({"message": ALL_THREE}), None, None)
        .await
        .unwrap();
    assert_eq!(
        reply.text(),
        "tool results: mnemosyne:none | gitea:none | weather:none"
    );
    let calls = setup.mnemosyne.journal.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].authorization, None);
}

#[tokio::test]
async fn an_explicit_authorization_header_wins_over_the_inbound_bearer() {
    let llm = MockOpenAi::start().await;
    let server = McpServer::start("mnemosyne").await;
    let mut s = settings("harper", &llm.url);
    let mut m = DownstreamSettings::new("mnemosyne", &server.url);
    m.forward_inbound_auth = true;
    m.headers = vec![("Authorization".into(), Secret::new("Bearer service-key"))];
    s.servers = vec![m];
    let agent = start_agent(s).await;
    let mut client = RawClient::connect(&agent.url).await.unwrap();
    let reply = client
        .call(
            "send_message",
            json!({"message": "CALL_TOOL mnemosyne__whoami {}"}),
            None,
            Some("user"),
        )
        .await
        .unwrap();
    assert_eq!(reply.text(), "tool results: mnemosyne:Bearer service-key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_requests_never_cross_or_leak_bearers() {
    const REQUESTS: usize = 500;
    const SESSIONS: usize = 25;
    let setup = setup().await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(RawClient::connect(&setup.agent.url).await.unwrap());
    }
    let calls = (0..REQUESTS).map(|i| {
        let mut client = sessions[i % SESSIONS].fork(1000 + i as u64);
        async move {
            // Every third request carries no bearer at all.
            let bearer = (!i.is_multiple_of(3)).then(|| format!("tok-{i}"));
            let message = format!(
                "CALL_TOOL mnemosyne__echo {{\"req\":{i}}}\nCALL_TOOL gitea__echo {{\"req\":{i}}}\nCALL_TOOL weather__echo {{\"req\":{i}}}"
            );
            let reply = client
                .call("send_message", json!({"message": message}), None, bearer.as_deref())
                .await
                .unwrap();
            assert!(!reply.is_error(), "{:?}", reply.messages);
        }
    });
    join_all(calls).await;
    let mut mismatches = 0;
    let mut leaks = 0;
    for (server, opted) in [
        (&setup.mnemosyne, true),
        (&setup.gitea, true),
        (&setup.weather, false),
    ] {
        let calls = server.journal.calls();
        assert_eq!(calls.len(), REQUESTS);
        let mut seen = HashMap::new();
        for call in calls {
            let req = call.arguments.as_ref().unwrap()["req"].as_u64().unwrap() as usize;
            *seen.entry(req).or_insert(0) += 1;
            let expected = (opted && !req.is_multiple_of(3)).then(|| format!("Bearer tok-{req}"));
            if call.authorization != expected {
                if expected.is_none() {
                    leaks += 1;
                } else {
                    mismatches += 1;
                }
            }
        }
        assert_eq!(seen.len(), REQUESTS);
        // Set-up traffic (initialize, GET stream, tools/list) carries no request's bearer.
        assert!(
            server
                .journal
                .records()
                .iter()
                .filter(|r| r.rpc_method.as_deref() != Some("tools/call"))
                .all(|r| r.authorization.is_none())
        );
    }
    assert_eq!((mismatches, leaks), (0, 0));
    // One shared session per downstream server.
    assert_eq!(setup.mnemosyne.journal.count("POST", Some("initialize")), 1);
}
