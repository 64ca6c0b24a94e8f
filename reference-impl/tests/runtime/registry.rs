//! The registry: exact shape, validity against the bundled registry schema, `/healthz`.

use serde_json::Value;

use crate::support::{self, Project, client, ecosystem, registry_doc, start};

const SCHEMA: &str = include_str!("../../schemas/server.schema.2025-12-11.json");

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    jsonschema::draft7::new(&schema).expect("the bundled schema compiles")
}

fn assert_valid(doc: &Value) {
    let v = validator();
    let servers = doc["servers"].as_array().expect("servers array");
    assert!(!servers.is_empty());
    for entry in servers {
        let server = &entry["server"];
        let errors: Vec<String> = v.iter_errors(server).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{server} is invalid: {errors:?}");
    }
}

#[test]
fn the_bundled_schema_is_the_official_copy() {
    use std::fmt::Write;
    // sha256 of the file as published (see shared/schemas/README.md).
    let digest = sha256(SCHEMA.as_bytes());
    let mut hex = String::new();
    for b in digest {
        write!(hex, "{b:02x}").unwrap();
    }
    assert_eq!(
        hex,
        "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
    );
}

#[test]
fn the_schema_rejects_what_the_defaults_avoid() {
    let v = validator();
    let bad_name = serde_json::json!({"name": "no-slash", "description": "d", "version": "1.0.0"});
    assert!(!v.is_valid(&bad_name));
    let no_description = serde_json::json!({"name": "a.b/c", "version": "1.0.0"});
    assert!(!v.is_valid(&no_description));
}

#[tokio::test]
async fn the_registry_lists_every_agent_in_the_seed_shape() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let addr = pallas.registry_addr.unwrap();
    let resp = client()
        .get(format!("http://{addr}/.well-known/mcp/server.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let doc: Value = resp.json().await.unwrap();
    assert_valid(&doc);
    let agents = pallas.agent_addrs().await;
    // depends_on order: research serves first.
    assert_eq!(
        support::names(&doc),
        ["com.example.test/research", "com.example.test/jarvis"]
    );
    let jarvis = &doc["servers"][1];
    let server = &jarvis["server"];
    assert_eq!(
        server["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    assert_eq!(server["title"], "Jarvis");
    assert_eq!(
        server["description"], "My assistant",
        "agents.yaml wins over the card"
    );
    assert_eq!(server["version"], "1.0.0");
    assert_eq!(
        server["remotes"],
        serde_json::json!([{"type": "streamable-http",
            "url": format!("http://localhost:{}/mcp", agents["jarvis"].port())}])
    );
    assert_eq!(
        server["capabilities"],
        serde_json::json!({"model": "mock-model", "vision": true,
            "context_window": 200000, "max_output_tokens": 32000})
    );
    let meta = &jarvis["_meta"]["io.modelcontextprotocol.registry/official"];
    assert_eq!(meta["status"], "active");
    assert_eq!(meta["isLatest"], true);
    assert!(
        chrono::DateTime::parse_from_rfc3339(meta["updatedAt"].as_str().unwrap()).is_ok(),
        "{meta}"
    );
    // The card's description is used when agents.yaml has none; absent both, a default.
    assert_eq!(
        doc["servers"][0]["server"]["description"],
        "Research agent served by Pallas"
    );
    pallas.shutdown().await;
}

#[tokio::test]
async fn capabilities_are_published_only_when_configured() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    project.write(
        "fastagent.config.yaml",
        &support::fastagent_config(&eco, false),
    );
    let pallas = start(&project).await;
    let doc = registry_doc(pallas.registry_addr.unwrap()).await;
    assert_valid(&doc);
    for s in doc["servers"].as_array().unwrap() {
        assert!(s["server"].get("capabilities").is_none(), "{s}");
    }
    pallas.shutdown().await;
}

#[tokio::test]
async fn defaults_keep_awkward_names_valid() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let long = "x".repeat(140);
    project.write(
        "agents.yaml",
        &format!(
            "name: My Project_ü\nregistry_port: 0\nagents:\n  tech_research_2:\n    module: agents.jarvis\n    port: 0\n    title: \"{long}\"\n    description: \"{long}\"\n"
        ),
    );
    let pallas = start(&project).await;
    let doc = registry_doc(pallas.registry_addr.unwrap()).await;
    assert_valid(&doc);
    assert_eq!(support::names(&doc), ["local.my-project/tech-research-2"]);
    pallas.shutdown().await;
}

#[tokio::test]
async fn healthz_reports_the_provider_preflight() {
    let eco = ecosystem().await;
    let project = Project::standard(&eco);
    let pallas = start(&project).await;
    let addr = pallas.registry_addr.unwrap();
    let health = support::get_json(&format!("http://{addr}/healthz")).await;
    assert_eq!(health["status"], "ok", "{health}");
    assert_eq!(health["providers"][0]["provider"], "openai");
    assert_eq!(health["providers"][0]["model"], "mock-model");
    pallas.shutdown().await;

    // A model the provider does not list: degraded, with the preflight's words.
    project.write(
        "fastagent.config.yaml",
        &support::fastagent_config(&eco, true).replace("openai.mock-model", "openai.bad-model"),
    );
    let pallas = start(&project).await;
    let addr = pallas.registry_addr.unwrap();
    let health = support::get_json(&format!("http://{addr}/healthz")).await;
    assert_eq!(health["status"], "degraded", "{health}");
    let message = health["providers"][0]["message"].as_str().unwrap();
    assert!(message.contains("bad-model"), "{message}");
    pallas.shutdown().await;
}

/// FIPS 180-4 SHA-256, enough to check the bundled schema without another dependency.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64) * 8;
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    let mut out = [0u8; 32];
    for (i, word) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}
