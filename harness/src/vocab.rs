//! The words rules, scenarios and target profiles share: the level of a rule (RFC 2119), the
//! capabilities a target claims and the instance scopes a deployment asks for. A leaf module: it
//! depends on nothing else in the crate.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A capability a target claims and a scenario may require.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// `GET /.well-known/mcp/server.json`.
    Registry,
    /// The `get_health` tool.
    Health,
    /// `notifications/progress` during `send_message`.
    Progress,
    /// Inbound bearer forwarding to opted-in downstream servers.
    Bearer,
    /// Prometheus `/metrics`.
    Metrics,
    /// The `{agent}_history` prompt.
    History,
    /// Images in `send_message`.
    Images,
    /// Reloading the deployment (files rewritten + SIGHUP) without a restart.
    Reload,
    /// The harness can read the implementation's logs (stdout, stderr, log file).
    Logs,
    /// MCP sessions (`Mcp-Session-Id`, `DELETE`).
    Sessions,
    /// Pallas deployment files: `agents.yaml` (or `PALLAS_AGENTS_CONFIG`), `.env`, `${VAR}`
    /// expansion, and the errors a wrong file causes. Pallas-only.
    PallasConfig,
    /// Pallas's logging knobs: `PALLAS_LOG_LEVEL`, `PALLAS_LOG_FILE`, `PALLAS_LOG_STDERR`,
    /// `logger.level`. Pallas-only.
    PallasLogging,
    /// Provider preflight at startup and `depends_on` start ordering. Pallas-only.
    Preflight,
    /// Single-agent mode (`pallas --agent NAME`: one agent, no registry). Pallas-only.
    SingleAgent,
    /// Seed 000's progress wording, step numbering and totals (`{server}/{tool}: started`,
    /// `{agent} step N (llm)`, `total` for finished sub-tasks): the Pallas↔Daedalus contract on
    /// top of MCP's progress rules. Pallas-only; a target claiming it claims `progress` too.
    PallasProgress,
    /// The mcpctl agents contract (seed 002): pack scenarios under `scenarios/mcpctl/`.
    Mcpctl,
    /// The Percolate MCP contract (seed 003): pack scenarios under `scenarios/percolate/`.
    Percolate,
    /// The McpAgenticServer contract (seed 004): pack scenarios under `scenarios/agentic-server/`.
    AgenticServer,
}

impl Capability {
    /// Every capability, in declaration order.
    pub const ALL: [Capability; 18] = [
        Self::Registry,
        Self::Health,
        Self::Progress,
        Self::Bearer,
        Self::Metrics,
        Self::History,
        Self::Images,
        Self::Reload,
        Self::Logs,
        Self::Sessions,
        Self::PallasConfig,
        Self::PallasLogging,
        Self::Preflight,
        Self::SingleAgent,
        Self::PallasProgress,
        Self::Mcpctl,
        Self::Percolate,
        Self::AgenticServer,
    ];

    /// What only a Pallas has (its deployment, not the agent-over-MCP contract): a target that
    /// is not a Pallas claims none of them, and every check or scenario needing one is `skip`.
    pub const PALLAS_ONLY: [Capability; 8] = [
        Self::Registry,
        Self::Health,
        Self::Metrics,
        Self::PallasConfig,
        Self::PallasLogging,
        Self::Preflight,
        Self::SingleAgent,
        Self::PallasProgress,
    ];

    /// Whether only a Pallas has it (see [`Self::PALLAS_ONLY`]).
    pub fn is_pallas_only(self) -> bool {
        Self::PALLAS_ONLY.contains(&self)
    }

    /// The capabilities that select a contract pack of another system (a target claims at most
    /// the one it implements; Pallas targets claim none).
    pub const PACKS: [Capability; 3] = [Self::Mcpctl, Self::Percolate, Self::AgenticServer];

    /// Whether it selects a contract pack (see [`Self::PACKS`]).
    pub fn is_pack(self) -> bool {
        Self::PACKS.contains(&self)
    }

    /// Why a scenario needing `requires` does not run on a target whose claims are `claims`,
    /// if it does not. A scenario needing a capability the target does not claim is skipped; a
    /// target claiming a pack runs only that pack's scenarios (every other scenario belongs to
    /// the agent-over-MCP contract of seeds 000/001, which that system does not implement); a
    /// target claiming no pack skips every pack scenario by the first rule.
    pub fn contract_skip(
        requires: &[Capability],
        claims: impl Fn(Capability) -> bool,
    ) -> Option<String> {
        if let Some(cap) = requires.iter().find(|c| !claims(**c)) {
            return Some(format!("the target does not claim `{}`", cap.as_str()));
        }
        if let Some(pack) = Self::PACKS.iter().find(|p| claims(**p))
            && !requires.contains(pack)
        {
            return Some(format!(
                "the target claims the `{}` pack: it runs only that pack's scenarios, not the agent-over-MCP contract (seeds 000/001)",
                pack.as_str()
            ));
        }
        None
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registry => "registry",
            Self::Health => "health",
            Self::Progress => "progress",
            Self::Bearer => "bearer",
            Self::Metrics => "metrics",
            Self::History => "history",
            Self::Images => "images",
            Self::Reload => "reload",
            Self::Logs => "logs",
            Self::Sessions => "sessions",
            Self::PallasConfig => "pallas_config",
            Self::PallasLogging => "pallas_logging",
            Self::Preflight => "preflight",
            Self::SingleAgent => "single_agent",
            Self::PallasProgress => "pallas_progress",
            Self::Mcpctl => "mcpctl",
            Self::Percolate => "percolate",
            Self::AgenticServer => "agentic_server",
        }
    }
}

/// Importance of a check (RFC 2119).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// Breaking it fails the run.
    Must,
    /// Breaking it warns.
    Should,
    /// Optional behaviour.
    May,
    /// Described by its source without a normative keyword and not part of the interface the
    /// source defines (an example, a diagram, diagnostic advice): a difference is information,
    /// never a warning or a failure, and is not called an unimplemented MAY.
    Info,
}

impl Level {
    /// `MUST`, `SHOULD`, `MAY` or `INFO`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Must => "MUST",
            Self::Should => "SHOULD",
            Self::May => "MAY",
            Self::Info => "INFO",
        }
    }
}

/// How long an agent's conversation lives: the values of `instance_scope`, which seed 001 names
/// ("For agents with `instance_scope != \"request\"`, a `{agent}_history` prompt is registered")
/// without saying where a deployment sets it. A scenario states the scope it needs; the target
/// profile says how to set it (`instance_scope:` of the profile).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InstanceScope {
    /// One conversation for every client of the agent.
    Shared,
    /// One conversation per MCP session.
    Connection,
    /// No stored conversation, and no `{agent}_history` prompt.
    Request,
}

impl InstanceScope {
    /// `shared`, `connection` or `request`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shared => "shared",
            Self::Connection => "connection",
            Self::Request => "request",
        }
    }
}
