//! Mock implementations of three agent systems that Pallas meets downstream, each with named
//! defect variants that break one rule of its contract pack:
//!
//! - [`PackKind::Mcpctl`] — mcpctl agents (seed 002): mcpd's agent HTTP API (CRUD, chat with SSE,
//!   threads, RBAC) and each agent's virtual MCP server `agent-<name>` with one tool `chat`;
//! - [`PackKind::Percolate`] — Percolate's MCP endpoint (seed 003): `POST /mcp`, JSON answers,
//!   tenant-scoped tools and resources;
//! - [`PackKind::AgenticServer`] — McpAgenticServer (seed 004): discovery, sessions and task
//!   delegation across an in-process and a worker executor.
//!
//! A pack is declared as an MCP server of an ecosystem with a `pack:` section, so it gets the
//! MCP mocks' journal, session accounting and server-level faults:
//!
//! ```yaml
//! mcp_servers:
//!   percolate:
//!     pack: {kind: percolate, llm: openai, defects: [limit-max-off-by-one]}
//! ```

mod agentic;
pub mod degenerate;
mod jsonrpc;
mod mcpctl;
mod percolate;
mod upstream;

use std::collections::{BTreeMap, BTreeSet};

use axum::Router;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Environment variable adding defects (comma-separated) to every pack `pallas-mocks up` starts.
pub const DEFECTS_ENV: &str = "PALLAS_MOCK_DEFECTS";
/// Environment variable choosing the fixture of every pack `pallas-mocks up` starts.
pub const FIXTURE_ENV: &str = "PALLAS_MOCK_FIXTURE";

/// Which system a pack mock imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PackKind {
    /// mcpctl agents (seed 002).
    Mcpctl,
    /// Percolate (seed 003).
    Percolate,
    /// McpAgenticServer (seed 004).
    AgenticServer,
}

impl PackKind {
    /// The kind's name as written in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcpctl => "mcpctl",
            Self::Percolate => "percolate",
            Self::AgenticServer => "agentic-server",
        }
    }

    /// Every defect this kind can be started with: name → what it breaks.
    pub fn defects(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Mcpctl => mcpctl::DEFECTS,
            Self::Percolate => percolate::DEFECTS,
            Self::AgenticServer => agentic::DEFECTS,
        }
    }

    /// Every fixture this kind accepts (besides the default), with what it holds.
    pub fn fixtures(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Mcpctl | Self::Percolate => &[],
            Self::AgenticServer => agentic::FIXTURES,
        }
    }
}

/// A pack mock: which system, what it calls, which defects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackSpec {
    /// The system imitated.
    pub kind: PackKind,
    /// The LLM agents answer with: an OpenAI-compatible base URL (`http://…/v1`) or the name of
    /// an OpenAI-dialect LLM mock of the same ecosystem. Absent: agents answer a canned text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<String>,
    /// agentic-server: the LLM of each provider (`openai`, `anthropic`, `google-gemini`) and of
    /// the worker agents (`worker`), each a base URL or the name of an LLM mock of the same
    /// ecosystem (`anthropic` speaks the Anthropic Messages API); absent ones use `llm`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub llms: BTreeMap<String, String>,
    /// mcpctl: the MCP servers attached to the project, name → URL or the name of an MCP mock of
    /// the same ecosystem.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, String>,
    /// mcpctl: the project name (default `dev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// A named fixture (agentic-server: `workers-only`, `empty`, `default-agent=<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// A degenerate stand-in instead of the system (test support, [`degenerate::MODES`]): set
    /// from [`degenerate::DEGENERATE_ENV`] only, never read from a file.
    #[serde(skip)]
    #[schemars(skip)]
    pub degenerate: Option<String>,
    /// Defect variants, each breaking one rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defects: Vec<String>,
    /// The CA (DER) the pack trusts when it calls HTTPS mocks: set by the ecosystem when its
    /// mocks serve HTTPS, never read from a file.
    #[serde(skip)]
    #[schemars(skip)]
    pub upstream_ca: Option<Vec<u8>>,
}

impl PackSpec {
    /// What is wrong with the spec (unknown defects or fixtures), if anything.
    pub fn issues(&self) -> Vec<String> {
        let known = self.kind.defects();
        let mut out: Vec<String> = self
            .defects
            .iter()
            .filter(|d| !known.iter().any(|(k, _)| k == d))
            .map(|d| {
                format!(
                    "unknown {} defect `{d}` (known: {})",
                    self.kind.as_str(),
                    known.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        if let Some(f) = &self.fixture {
            let base = f.split('=').next().unwrap_or_default();
            if !self
                .kind
                .fixtures()
                .iter()
                .any(|(k, _)| k.split('=').next() == Some(base))
            {
                out.push(format!("unknown {} fixture `{f}`", self.kind.as_str()));
            }
        }
        out
    }

    /// Adds the defects of [`DEFECTS_ENV`] and the fixture of [`FIXTURE_ENV`] (used by
    /// `pallas-mocks up`, so a target profile can choose a variant with `--target-env`).
    pub fn apply_env(&mut self) {
        if let Ok(list) = std::env::var(DEFECTS_ENV) {
            let known = self.kind.defects();
            for d in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                if known.iter().any(|(k, _)| *k == d) && !self.defects.iter().any(|x| x == d) {
                    self.defects.push(d.to_owned());
                }
            }
        }
        if let Ok(m) = std::env::var(degenerate::DEGENERATE_ENV)
            && !m.trim().is_empty()
        {
            self.degenerate = Some(m.trim().to_owned());
        }
        if let Ok(f) = std::env::var(FIXTURE_ENV)
            && !f.trim().is_empty()
        {
            self.fixture = Some(f.trim().to_owned());
        }
    }
}

/// The defects a pack was started with.
#[derive(Debug, Clone, Default)]
pub(crate) struct Defects(BTreeSet<String>);

impl Defects {
    fn new(list: &[String]) -> Self {
        Self(list.iter().cloned().collect())
    }

    /// Whether the named defect is on.
    pub(crate) fn on(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

/// The pack's routes (its MCP endpoint included), ready to be wrapped by the MCP mock's journal.
/// `llm` and `servers` must already be URLs.
pub(crate) fn router(spec: &PackSpec) -> Result<Router, String> {
    if let Some(issue) = spec.issues().into_iter().next() {
        return Err(issue);
    }
    if let Some(mode) = &spec.degenerate {
        return degenerate::router(mode);
    }
    let defects = Defects::new(&spec.defects);
    Ok(match spec.kind {
        PackKind::Mcpctl => mcpctl::router(spec, defects),
        PackKind::Percolate => percolate::router(spec, defects),
        PackKind::AgenticServer => agentic::router(spec, defects)?,
    })
}
