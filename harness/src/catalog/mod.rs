//! The check catalog: stable IDs, levels, references and one-line descriptions.
//!
//! IDs never change meaning once published; new rules get new IDs. `pallas-conformance checks`
//! lists this table.

use serde::Serialize;

pub mod extra;

use crate::scenario::{Capability, Level};

/// How a check is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evaluation {
    /// A built-in evaluator over the observations (parameters via `with:`).
    Builtin,
    /// Run automatically on every scenario where it applies (wire validity).
    Automatic,
    /// Proven only by the scenario's own assertion (`assert:` attributed to this ID); no
    /// catalogued check is evaluated this way any more.
    Assertion,
}

/// One catalogued check.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CheckDef {
    /// Stable ID (`PROG-002`).
    pub id: &'static str,
    /// Level.
    pub level: Level,
    /// Where the rule comes from.
    pub refs: &'static [&'static str],
    /// One line.
    pub title: &'static str,
    /// The capability the target must claim for the check to run (else `skip`).
    pub capability: Option<Capability>,
    /// How it is evaluated.
    pub evaluation: Evaluation,
}

impl CheckDef {
    /// The family: the ID up to the last `-` (`PROG`).
    pub fn family(&self) -> &'static str {
        family_of(self.id)
    }
}

/// The family of any check ID (`ASSERT` for unattributed assertions).
pub fn family_of(id: &str) -> &str {
    id.rsplit_once('-').map(|(f, _)| f).unwrap_or(id)
}

const S000_1: &str = "seed 000 §1 Registry Endpoint";
const S000_2: &str = "seed 000 §2 Health Tool";
const S000_3: &str = "seed 000 §3 Daedalus Consumption";
const S000_4: &str = "seed 000 §4 Agent Progress Notifications";
const S001_REG: &str = "seed 001 §Registry Server";
const S001_CFG: &str = "seed 001 §Configuration Reference";
const S001_HEALTH: &str = "seed 001 §Health System";
const S001_MM: &str = "seed 001 §Multimodal Support";
const S001_BEARER: &str = "seed 001 §Bearer Token Propagation";
const S001_MET: &str = "seed 001 §Metrics";
const S001_INC: &str = "seed 001 §Incidents & Lessons Learned";
const S001_LOG: &str = "seed 001 §5 Logging configuration knobs";
const MCP_PROGRESS: &str = "MCP 2025-11-25 basic/utilities/progress";
const MCP_CANCEL: &str = "MCP 2025-11-25 basic/utilities/cancellation";
const MCP_LIFECYCLE: &str = "MCP 2025-11-25 basic/lifecycle";
const MCP_HTTP: &str = "MCP 2025-11-25 basic/transports §Streamable HTTP";
const MCP_SESSION: &str = "MCP 2025-11-25 basic/transports §Session Management";
const MCP_TOOLS: &str = "MCP 2025-11-25 server/tools";
const MCP_SCHEMA: &str = "MCP schema.json (negotiated revision)";
const REG_SCHEMA: &str = "MCP registry server.schema.json 2025-12-11";

use Capability as C;
use Evaluation::{Automatic, Builtin};
use Level::{May, Must, Should};

macro_rules! def {
    ($id:literal, $level:expr, [$($r:expr),*], $cap:expr, $eval:expr, $title:literal) => {
        CheckDef { id: $id, level: $level, refs: &[$($r),*], title: $title, capability: $cap, evaluation: $eval }
    };
}

/// Every check, ordered by family then number.
pub static CATALOG: &[CheckDef] = &[
    // Registry
    def!(
        "REG-001",
        Must,
        [S000_1, REG_SCHEMA],
        Some(C::Registry),
        Automatic,
        "every registry entry's `server` object is valid against the official registry schema"
    ),
    def!(
        "REG-002",
        Must,
        [S000_1, S001_REG],
        Some(C::Registry),
        Builtin,
        "the registry answers 200 with Content-Type `application/json` and a `servers` array, without authentication"
    ),
    def!(
        "REG-003",
        Must,
        [S001_REG, S001_CFG],
        Some(C::Registry),
        Builtin,
        "`server.name` is `{namespace}/{slug}` with the agent key's underscores replaced by hyphens"
    ),
    def!(
        "REG-004",
        Must,
        [S000_1, S000_3],
        Some(C::Registry),
        Builtin,
        "every entry has a `streamable-http` remote whose URL is a live MCP endpoint"
    ),
    def!(
        "REG-005",
        Must,
        [S000_1],
        Some(C::Registry),
        Builtin,
        "the registry lists exactly the deployed agents (and reflects additions and removals)"
    ),
    def!(
        "REG-006",
        Should,
        [S001_CFG, S001_REG],
        Some(C::Registry),
        Builtin,
        "title, description and version follow the configuration and its documented defaults"
    ),
    def!(
        "REG-007",
        Must,
        [S001_REG],
        Some(C::Registry),
        Builtin,
        "`capabilities` is published exactly when `model_capabilities` is configured, with its values"
    ),
    // Health
    def!(
        "HEALTH-001",
        Must,
        [S000_2],
        Some(C::Health),
        Builtin,
        "`get_health` is listed with the exact description and an empty-object input schema"
    ),
    def!(
        "HEALTH-002",
        Must,
        [S000_2],
        Some(C::Health),
        Builtin,
        "`get_health` answers one text block holding JSON `{status: ok|degraded|error, timestamp?, message?}`"
    ),
    def!(
        "HEALTH-003",
        Must,
        [S000_2],
        Some(C::Health),
        Builtin,
        "`message` is present whenever `status` is not `ok`; `timestamp`, when present, is ISO 8601"
    ),
    def!(
        "HEALTH-004",
        Must,
        [S000_2, S001_HEALTH],
        Some(C::Health),
        Builtin,
        "the status matches the downstream and LLM situation (`with: {status, mentions}`)"
    ),
    def!(
        "HEALTH-005",
        Must,
        [S000_2],
        Some(C::Health),
        Builtin,
        "`get_health` never calls the LLM"
    ),
    def!(
        "HEALTH-006",
        Should,
        [S000_2],
        Some(C::Health),
        Builtin,
        "`get_health` answers in under 1 s (healthy) or within the 3 s probe timeout plus a margin"
    ),
    def!(
        "HEALTH-007",
        Should,
        [S000_2, S001_HEALTH],
        Some(C::Health),
        Builtin,
        "every probe session is closed with DELETE (mock session accounting shows none open)"
    ),
    def!(
        "HEALTH-008",
        Should,
        [S000_4],
        Some(C::Health),
        Builtin,
        "`get_health` emits no progress notifications, even with a progress token"
    ),
    def!(
        "HEALTH-009",
        Must,
        [S000_3],
        Some(C::Health),
        Builtin,
        "the Daedalus chat gate derived from health matches the expectation (`with: {gate}`)"
    ),
    // Progress
    def!(
        "PROG-001",
        Must,
        [S000_4, MCP_PROGRESS],
        Some(C::Progress),
        Builtin,
        "no progress notification is sent when the request carried no progress token"
    ),
    def!(
        "PROG-002",
        Must,
        [S000_4, MCP_PROGRESS],
        Some(C::Progress),
        Builtin,
        "every progress notification echoes the request's token exactly, type preserved"
    ),
    def!(
        "PROG-003",
        Must,
        [MCP_PROGRESS],
        Some(C::Progress),
        Builtin,
        "spec-strict: `progress` strictly increases per token"
    ),
    def!(
        "PROG-004",
        Must,
        [S000_4],
        Some(C::Progress),
        Builtin,
        "Pallas-compatible: progress follows the seed's pattern (0 started, N steps, 1/1 completed)"
    ),
    def!(
        "PROG-005",
        Should,
        [S000_4],
        Some(C::Progress),
        Builtin,
        "progress messages follow `{server}/{tool}: started|completed|failed` or `{agent} step N (llm|tool)`"
    ),
    def!(
        "PROG-006",
        Must,
        [S000_4],
        Some(C::Progress),
        Builtin,
        "for each downstream tool, `started` precedes `completed` (or `failed`)"
    ),
    def!(
        "PROG-007",
        Must,
        [MCP_PROGRESS, S000_4],
        Some(C::Progress),
        Builtin,
        "no progress notification arrives after the request's result"
    ),
    def!(
        "PROG-008",
        Must,
        [S000_4],
        Some(C::Progress),
        Builtin,
        "at least one `started` and one `completed|failed` per downstream tool invoked (`with: {tools}`)"
    ),
    def!(
        "PROG-009",
        Should,
        [S000_4],
        Some(C::Progress),
        Builtin,
        "`total` is absent/null for loop steps and equals `progress` for finished sub-tasks"
    ),
    def!(
        "PROG-010",
        Should,
        [MCP_CANCEL],
        Some(C::Progress),
        Builtin,
        "after `notifications/cancelled`, no further progress for the cancelled request"
    ),
    // Bearer
    def!(
        "AUTH-001",
        Must,
        [S001_BEARER],
        Some(C::Bearer),
        Builtin,
        "an opted-in server receives exactly the inbound bearer (`with: {server, bearer}`)"
    ),
    def!(
        "AUTH-002",
        Must,
        [S001_BEARER],
        Some(C::Bearer),
        Builtin,
        "a server without `forward_inbound_auth` never receives the inbound bearer"
    ),
    def!(
        "AUTH-003",
        Must,
        [S001_BEARER],
        Some(C::Bearer),
        Builtin,
        "an explicitly configured `Authorization` header wins over the inbound bearer"
    ),
    def!(
        "AUTH-004",
        Must,
        [S001_BEARER, S001_INC],
        Some(C::Bearer),
        Builtin,
        "concurrent calls with distinct bearers never see each other's bearer downstream"
    ),
    def!(
        "AUTH-005",
        Must,
        [S001_INC],
        Some(C::Bearer),
        Builtin,
        "a call without a bearer forwards none, even after calls that had one"
    ),
    def!(
        "AUTH-006",
        Must,
        [S001_BEARER, S000_2],
        Some(C::Bearer),
        Builtin,
        "health probes carry no inbound bearer"
    ),
    def!(
        "AUTH-007",
        Must,
        [S001_LOG, S001_BEARER],
        Some(C::Logs),
        Builtin,
        "no secret (bearer, API key, configured header) appears in the implementation's logs or output"
    ),
    // Metrics
    def!(
        "MET-001",
        Must,
        [S001_MET],
        Some(C::Metrics),
        Builtin,
        "`/metrics` answers 200 in Prometheus text format (`text/plain; version=0.0.4`), parseable"
    ),
    def!(
        "MET-002",
        Must,
        [S001_MET],
        Some(C::Metrics),
        Builtin,
        "every seed metric is present with its type and labels"
    ),
    def!(
        "MET-003",
        Should,
        [S001_MET],
        Some(C::Metrics),
        Builtin,
        "counters and histograms move after calls"
    ),
    def!(
        "MET-004",
        Should,
        [S001_MET],
        Some(C::Metrics),
        Builtin,
        "health gauges follow the last `get_health`"
    ),
    // Messages and history
    def!(
        "MSG-001",
        Must,
        [S001_MM],
        None,
        Builtin,
        "the message tool is listed with a required string `message` and optional `images`"
    ),
    def!(
        "MSG-002",
        Must,
        [S001_MM],
        None,
        Builtin,
        "a message round-trips through the agent loop to a text result"
    ),
    def!(
        "MSG-003",
        Must,
        [S001_MM],
        Some(C::Images),
        Builtin,
        "images reach the model when vision is on and are refused clearly when off"
    ),
    def!(
        "MSG-004",
        Should,
        [S001_MM],
        None,
        Builtin,
        "a provider failure gives an `isError` result and the agent stays healthy"
    ),
    def!(
        "MSG-005",
        Should,
        [S001_MM],
        Some(C::History),
        Builtin,
        "`{agent}_history` reflects the conversation"
    ),
    // MCP wire
    def!(
        "MCP-001",
        Must,
        [MCP_SCHEMA],
        None,
        Automatic,
        "every JSON-RPC message received is valid against the MCP schema of the negotiated revision"
    ),
    def!(
        "MCP-002",
        Must,
        [MCP_LIFECYCLE, MCP_SESSION],
        None,
        Builtin,
        "`initialize` negotiates a supported revision; an `Mcp-Session-Id`, when issued, is visible ASCII"
    ),
    def!(
        "MCP-003",
        Must,
        [MCP_SESSION],
        Some(C::Sessions),
        Builtin,
        "`DELETE` ends the session; the old session id then gets 404"
    ),
    def!(
        "MCP-004",
        Must,
        [MCP_HTTP],
        None,
        Builtin,
        "responses to POSTed requests are `application/json` or `text/event-stream`"
    ),
    def!(
        "MCP-005",
        May,
        [MCP_HTTP],
        None,
        Builtin,
        "a request without both `application/json` and `text/event-stream` in Accept gets 406"
    ),
    def!(
        "MCP-006",
        Should,
        [MCP_SESSION],
        Some(C::Sessions),
        Builtin,
        "a non-initialize request without a session gets 400; an unknown session 404"
    ),
    def!(
        "MCP-007",
        Must,
        [MCP_TOOLS],
        None,
        Builtin,
        "an unknown tool gets a JSON-RPC error; invalid arguments an `isError` result or -32602"
    ),
    def!(
        "MCP-008",
        May,
        [MCP_HTTP],
        None,
        Builtin,
        "SSE events carry ids and a JSON-RPC message per `data:` (empty priming events allowed)"
    ),
    def!(
        "MCP-009",
        Must,
        [MCP_LIFECYCLE],
        None,
        Builtin,
        "every request sent got exactly one response with its id"
    ),
];

/// Looks a check up by ID.
pub fn get(id: &str) -> Option<&'static CheckDef> {
    CATALOG
        .iter()
        .find(|c| c.id == id)
        .or_else(|| extra::get(id))
}

/// Every ID, in catalog order (then the checks of `harness/rules/pallas-*.yaml`).
pub fn ids() -> impl Iterator<Item = &'static str> {
    CATALOG
        .iter()
        .map(|c| c.id)
        .chain(extra::checks().iter().map(|c| c.id))
}

/// The catalog as JSON (`pallas-conformance checks --json`).
pub fn to_json() -> serde_json::Value {
    serde_json::Value::Array(
        CATALOG
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id,
                    "family": c.family(),
                    "level": c.level.as_str(),
                    "refs": c.refs,
                    "title": c.title,
                    "capability": c.capability.map(Capability::as_str),
                    "evaluation": c.evaluation,
                })
            })
            .collect(),
    )
}

/// The catalog as an aligned text table.
pub fn to_table() -> String {
    let mut out = String::new();
    for c in CATALOG {
        out.push_str(&format!(
            "{:<11} {:<6} {}\n",
            c.id,
            c.level.as_str(),
            c.title
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let re = regex::Regex::new(r"^(REG|HEALTH|PROG|AUTH|MET|MSG|MCP)-\d{3}$").unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for c in CATALOG {
            assert!(re.is_match(c.id), "{}", c.id);
            assert!(seen.insert(c.id), "duplicate {}", c.id);
            assert!(!c.refs.is_empty(), "{} has no refs", c.id);
        }
    }

    #[test]
    fn every_required_family_is_seeded() {
        for fam in ["REG", "HEALTH", "PROG", "AUTH", "MET", "MCP"] {
            assert!(CATALOG.iter().any(|c| c.family() == fam), "{fam}");
        }
    }
}
