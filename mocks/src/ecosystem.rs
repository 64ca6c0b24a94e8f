//! A whole mock ecosystem started from an [`EcosystemSpec`]: every LLM and MCP mock it declares,
//! and its mock Pallas.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use crate::error::MockError;
use crate::llm::LlmMock;
use crate::mcp::McpMock;
use crate::pallas::MockPallas;
use crate::spec::EcosystemSpec;
use crate::tls::MockTls;
use crate::validate::validate_ecosystem;

fn s_port(servers: &BTreeMap<String, crate::spec::McpMockSpec>, name: &str) -> Option<u16> {
    servers.get(name).and_then(|s| s.port)
}

/// Every mock of an ecosystem, running. Stops them all when dropped.
#[derive(Debug)]
pub struct Ecosystem {
    llms: BTreeMap<String, LlmMock>,
    mcps: BTreeMap<String, McpMock>,
    pallas: Option<MockPallas>,
    tls: Option<Arc<MockTls>>,
}

impl Ecosystem {
    /// Starts every mock on `127.0.0.1` ephemeral ports (ignoring `port` fields). Returns once
    /// all listen.
    pub async fn start(spec: &EcosystemSpec) -> Result<Ecosystem, MockError> {
        Self::start_inner(spec, false).await
    }

    /// Same, honouring fixed `port` fields (used by `pallas-mocks up`).
    pub async fn start_with_fixed_ports(spec: &EcosystemSpec) -> Result<Ecosystem, MockError> {
        Self::start_inner(spec, true).await
    }

    async fn start_inner(spec: &EcosystemSpec, fixed: bool) -> Result<Ecosystem, MockError> {
        if let Some(issue) = validate_ecosystem(spec).into_iter().next() {
            return Err(MockError::InvalidSpec {
                name: issue.path.clone(),
                message: issue.message,
            });
        }
        let addr = |port: Option<u16>| {
            SocketAddr::from((
                Ipv4Addr::LOCALHOST,
                if fixed { port.unwrap_or(0) } else { 0 },
            ))
        };
        // One CA for every HTTPS mock of the ecosystem.
        let any_tls = spec.tls
            || spec.llms.values().any(|l| l.tls)
            || spec.mcp_servers.values().any(|m| m.tls);
        let tls = if any_tls {
            Some(MockTls::generate()?)
        } else {
            None
        };
        let tls_for = |own: bool| if spec.tls || own { tls.clone() } else { None };
        let mut eco = Ecosystem {
            llms: BTreeMap::new(),
            mcps: BTreeMap::new(),
            pallas: None,
            tls: tls.clone(),
        };
        for (name, s) in &spec.llms {
            let m = LlmMock::start_with_tls(name, s.clone(), addr(s.port), tls_for(s.tls)).await?;
            eco.llms.insert(name.clone(), m);
        }
        // Plain MCP servers first: packs may call them (and the LLMs) by name.
        let (packs, plain): (Vec<_>, Vec<_>) =
            spec.mcp_servers.iter().partition(|(_, s)| s.pack.is_some());
        for (name, s) in plain {
            let m = McpMock::start_with_tls(name, s.clone(), addr(s.port), tls_for(s.tls)).await?;
            eco.mcps.insert(name.clone(), m);
        }
        for (name, s) in packs {
            let mut s = s.clone();
            if let Some(pack) = s.pack.as_mut() {
                let urls = eco.urls();
                let resolve = |v: &mut String| {
                    if let Some(u) = urls.get(v.as_str()) {
                        *v = u.clone();
                    }
                };
                if let Some(l) = pack.llm.as_mut() {
                    resolve(l);
                }
                pack.servers.values_mut().for_each(resolve);
                pack.llms.values_mut().for_each(resolve);
                pack.upstream_ca = tls.as_ref().map(|t| t.ca_der().to_vec());
            }
            let own_tls = tls_for(s.tls);
            let m =
                McpMock::start_with_tls(name, s, addr(s_port(&spec.mcp_servers, name)), own_tls)
                    .await?;
            eco.mcps.insert(name.clone(), m);
        }
        if let Some(p) = &spec.pallas {
            eco.pallas = Some(MockPallas::start_with(p, fixed, tls_for(false)).await?);
        }
        Ok(eco)
    }

    /// Name → URL a client configures: OpenAI `http://127.0.0.1:P/v1`, Anthropic
    /// `http://127.0.0.1:P`, MCP `http://127.0.0.1:P/mcp` (`https` for HTTPS mocks); with a mock
    /// Pallas, `pallas` → its registry URL and `pallas.<agent>` → each agent's endpoint.
    pub fn urls(&self) -> BTreeMap<String, String> {
        self.llms
            .iter()
            .map(|(n, m)| (n.clone(), m.url()))
            .chain(self.mcps.iter().map(|(n, m)| (n.clone(), m.url())))
            .chain(self.pallas.iter().flat_map(MockPallas::urls))
            .collect()
    }

    /// The mock Pallas, when the spec declares one.
    pub fn pallas(&self) -> Option<&MockPallas> {
        self.pallas.as_ref()
    }

    /// The certificate authority of the HTTPS mocks (when any serves HTTPS).
    pub fn tls(&self) -> Option<&MockTls> {
        self.tls.as_deref()
    }

    /// The LLM mock named `name`.
    pub fn llm(&self, name: &str) -> Option<&LlmMock> {
        self.llms.get(name)
    }

    /// The MCP mock named `name`.
    pub fn mcp(&self, name: &str) -> Option<&McpMock> {
        self.mcps.get(name)
    }

    /// Resets every mock (journals, scripts, fault and session counters).
    pub fn reset(&self) {
        self.llms.values().for_each(LlmMock::reset);
        self.mcps.values().for_each(McpMock::reset);
        self.pallas.iter().for_each(MockPallas::reset);
    }

    /// Stops every mock, waiting briefly for in-flight requests.
    pub async fn shutdown(self) {
        let llms = self.llms.into_values().map(LlmMock::shutdown);
        let mcps = self.mcps.into_values().map(McpMock::shutdown);
        let pallas = async {
            if let Some(p) = self.pallas {
                p.shutdown().await;
            }
        };
        futures::future::join3(
            futures::future::join_all(llms),
            futures::future::join_all(mcps),
            pallas,
        )
        .await;
    }
}
