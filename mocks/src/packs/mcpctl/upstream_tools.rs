//! The tools of the project's upstream MCP servers, listed server by server: what the project
//! session offers and what an agent's chat loop may call.

use serde_json::{Value, json};

use super::Mcpd;
use crate::packs::upstream::McpClient;

/// One tool of an upstream server of the project, as its server lists it.
pub(super) struct UpstreamTool {
    /// The server's name in the project.
    pub(super) server: String,
    /// The server's URL.
    pub(super) url: String,
    /// The tool's own name.
    pub(super) name: String,
    /// The tool's declaration as listed.
    pub(super) decl: Value,
}

/// Every tool of the project's upstream servers, server by server (a server that cannot be
/// reached or listed offers none).
pub(super) async fn upstream_tools(m: &Mcpd) -> Vec<UpstreamTool> {
    let mut out = Vec::new();
    for (server, url) in &m.servers {
        let Ok(mut c) = McpClient::connect(&m.http, url, None).await else {
            continue;
        };
        if let Ok(r) = c.request("tools/list", json!({})).await {
            for t in r
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                out.push(UpstreamTool {
                    server: server.clone(),
                    url: url.clone(),
                    name: name.to_owned(),
                    decl: t.clone(),
                });
            }
        }
        c.close().await;
    }
    out
}
