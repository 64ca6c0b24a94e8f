//! What an ecosystem file declares: mock LLM providers, mock downstream MCP servers and a mock
//! Pallas.
//!
//! These types are the `ecosystem:` section of a conformance scenario as well as the top level of
//! a `pallas-mocks up` file, so they derive `Serialize`, `Deserialize` and `JsonSchema` and reject
//! unknown keys.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::pallas::spec::*;

/// A whole mock ecosystem: named LLM providers and named downstream MCP servers.
///
/// Names are the keys a deployment refers to (`openai`, `argos`, `mnemosyne`…); they are also the
/// keys of the URL map that [`crate::Ecosystem::urls`] returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EcosystemSpec {
    /// Mock LLM providers by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub llms: BTreeMap<String, LlmMockSpec>,
    /// Mock downstream MCP servers by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, McpMockSpec>,
    /// Serve every mock over HTTPS with one generated CA (see [`crate::MockTls`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    /// A mock Pallas (seed 000): a registry and its agents, for developing a Daedalus-side
    /// client (see [`crate::MockPallas`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pallas: Option<MockPallasSpec>,
}

/// Which provider's wire format a mock LLM speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// OpenAI-compatible: `/v1/models`, `/v1/chat/completions`.
    Openai,
    /// Anthropic: `/v1/models`, `/v1/messages`.
    Anthropic,
}

/// A mock LLM provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmMockSpec {
    /// Wire format.
    pub dialect: Dialect,
    /// Fixed port (only honoured by `pallas-mocks up`); ephemeral when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The API key the mock requires (`Authorization: Bearer` for OpenAI; `x-api-key`, or a
    /// bearer token as newer SDKs send, for Anthropic). Absent: any key, or none, is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Models the mock lists and accepts; any other model gets the provider's 404.
    #[serde(default = "default_models")]
    pub models: Vec<String>,
    /// Ordered turns. Each request takes the first unused turn whose `when` matches.
    /// Empty: in-band directives apply (see [`TurnSpec`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script: Vec<TurnSpec>,
    /// What to answer when no turn matches.
    #[serde(default)]
    pub on_exhausted: Exhausted,
    /// A fault applied to every request of this mock (model-listing requests included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultSpec>,
    /// Token counts reported in `usage` unless a turn overrides them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    /// Serve HTTPS with a generated certificate (the URL becomes `https://`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
}

fn default_models() -> Vec<String> {
    vec!["mock-model".to_owned()]
}

/// What a mock LLM answers when its script has no matching turn left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Exhausted {
    /// Apply the in-band directives: `CALL_TOOL <server__tool> <json>` in the last user message
    /// makes the model call that tool; once tool results are present, answer with final text
    /// containing them; otherwise echo the last user message.
    #[default]
    Echo,
    /// Answer with the provider's 500 error shape, saying the script is exhausted.
    Error,
}

/// One scripted model turn: final text, or one or more tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnSpec {
    /// Guard: the turn is used only for a request it matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<MatchSpec>,
    /// Final text. `{{tool_results}}` is replaced by the tool results present in the request,
    /// `{{last_user}}` by the last user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls, in order (several make a parallel call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSpec>,
    /// A fault for this turn instead of (or before) the answer. With `times`, the turn stays
    /// until the fault is spent, then answers ("fail N times then succeed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultSpec>,
    /// Token counts for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    /// Keep the turn after use: it answers every request it matches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
}

/// A tool call the model makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Tool name as offered to the model, usually `server__tool`.
    pub name: String,
    /// Arguments (a JSON object; `{}` when absent). `null` renders as empty arguments (OpenAI
    /// `"arguments": ""`, Anthropic `"input": {}`).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// Call id; generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A guard on a request. Every field present must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchSpec {
    /// The last user message contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_contains: Option<String>,
    /// The last user message matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_regex: Option<String>,
    /// The requested model is exactly this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// This tool (`server__tool`) is offered in the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_offered: Option<String>,
    /// Tool results are present (true) or absent (false) after the last user message of the
    /// request (a new user message starts a new round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_tool_result: Option<bool>,
    /// The request is the mock's N-th completion request (0-based, counted since start or reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_index: Option<u32>,
    /// The last user message is exactly this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_is: Option<String>,
    /// The request holds this many user messages (tool results not counted): the position of
    /// the conversation, 1 for the first user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_messages: Option<u32>,
    /// The number of assistant messages after the last user message: 0 for the first model call
    /// of a round, 1 after one tool call and its results, and so on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The tool results after the last user message are exactly these texts, in order (`[]`:
    /// none). What `pallas-mocks record` keys a tool loop's calls by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_results: Option<Vec<String>>,
}

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageSpec {
    /// Prompt / input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion / output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Anthropic `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Anthropic `cache_creation_input_tokens`.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// OpenAI `completion_tokens_details.reasoning_tokens` (part of the completion tokens).
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// A fault, in the provider's (or the HTTP server's) real shape. Fields combine: e.g. `latency`
/// then `status`. `times` limits how many requests the fault hits before the mock behaves
/// normally ("fail N times then succeed").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// Answer with this HTTP status and the provider's error body (401, 404, 429, 500, 529…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `retry-after` header, in seconds (with `status: 429`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// Wait this long before the first byte (e.g. `250ms`, `2s`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub latency: Option<Duration>,
    /// When streaming, wait this long between chunks.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub chunk_delay: Option<Duration>,
    /// Accept the request and never answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hang: bool,
    /// When streaming, close the connection after this many chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect_after_chunks: Option<u32>,
    /// Answer 200 with a body that is not valid JSON (or not valid SSE when streaming).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
    /// The fault hits only the first N requests it applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// Which MCP wire era a mock downstream speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum WireEra {
    /// Sessions: `initialize`, `Mcp-Session-Id`, `DELETE`.
    #[default]
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// Stateless: no `initialize` or sessions; `GET` and `DELETE` answer 405.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

/// How a mock MCP server is reachable at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reachability {
    /// Serves MCP normally.
    #[default]
    Up,
    /// Nothing listens on its port: connection refused.
    Down,
    /// Accepts TCP connections and never answers.
    Blackhole,
}

/// A mock downstream MCP server (Streamable HTTP at `/mcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpMockSpec {
    /// Fixed port (only honoured by `pallas-mocks up`); ephemeral when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Wire era.
    #[serde(default)]
    pub era: WireEra,
    /// Reachability.
    #[serde(default)]
    pub reachability: Reachability,
    /// Answer every request with this HTTP status (e.g. 500) instead of MCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Delay before answering `initialize`.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub initialize_delay: Option<Duration>,
    /// Answer `initialize` (and `server/discover`) with this JSON-RPC error message (code
    /// -32603, HTTP 200): a server that is up but refuses the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialize_error: Option<String>,
    /// Speak only MCP 2025-11-25: a `server/discover` request (the 2026-07-28 lifecycle) gets
    /// HTTP 400 with a JSON-RPC error, as a server that predates 2026-07-28 answers it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refuse_discover: bool,
    /// Require `Authorization: Bearer <token>`; otherwise 401 with `WWW-Authenticate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_bearer: Option<String>,
    /// With `require_bearer`: require it on `tools/call` only, so the handshake and listings of
    /// a bridge that connects before any request carries a bearer (seed 001's design) succeed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bearer_on_calls_only: bool,
    /// Answer every `DELETE` with this status and keep the session: 405 is MCP's answer of a
    /// server that does not let clients end sessions ("The server MAY respond to this request
    /// with HTTP 405 Method Not Allowed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_status: Option<u16>,
    /// Served at `/mcp/` (its URL ends in `/`, as seed 001's examples write downstream URLs:
    /// `https://mnemosyne.example/mcp/`), and a request to `/mcp` is answered 307 with
    /// `Location: /mcp/`, as a Starlette mount answers the path without its slash.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trailing_slash: bool,
    /// Require each of these headers (name, case-insensitive → exact value) on every request,
    /// `DELETE` included; otherwise 401 with `WWW-Authenticate`: a server that authenticates with
    /// configured credentials such as `X-Api-Key` (values are secrets: redacted in the journal).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub require_headers: BTreeMap<String, String>,
    /// Server name reported in `initialize` (`serverInfo.name`); the spec key when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// Server version reported in `initialize` (`serverInfo.version`); the mocks' own version
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// `instructions` reported in `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Tools the server offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Serve HTTPS with a generated certificate (the URL becomes `https://`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    /// Accept any `Host` and `Origin`. By default, as the MCP transport spec asks of local
    /// servers, a request whose `Host` is not `localhost`, `127.0.0.1` or `[::1]`, or whose
    /// `Origin` is not an `http(s)` origin on one of those hosts, is refused with 403.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lenient: bool,
    /// A built-in set of tools, resources and prompts added to `tools` (see [`McpPreset`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<McpPreset>,
    /// Serve a mock of another agent system instead of `tools` (mcpctl, Percolate,
    /// McpAgenticServer), with its defect variants; see `pallas_mocks::packs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<crate::packs::PackSpec>,
}

/// A built-in server personality of a mock MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpPreset {
    /// The tools (`test_simple_text`, `test_image_content`…), resources (`test://static-text`…)
    /// and prompts (`test_simple_prompt`…) that the server scenarios of the official MCP
    /// conformance suite (`@modelcontextprotocol/conformance`) call.
    Conformance,
}

/// A tool of a mock MCP server, declared as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// Description shown in `tools/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; `{"type":"object"}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// What a call returns.
    #[serde(default)]
    pub result: ToolResultSpec,
    /// Wait this long before answering.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub delay: Option<Duration>,
    /// With `delay`: answer as soon as a call of this tool (of the same server) has arrived,
    /// or when the delay ends, whichever comes first. A scenario that holds one call while
    /// another reaches the server waits for that other call, not for a fixed time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_called: Option<String>,
    /// Emit this many `notifications/progress` before the result when the call carries a
    /// `progressToken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<u32>,
}

/// What a mock tool call returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolResultSpec {
    /// One text content block.
    Text(String),
    /// One text block holding this JSON, plus `structuredContent`.
    Json(Value),
    /// A result with `isError: true` and this text.
    IsError(String),
    /// A JSON-RPC error instead of a result.
    JsonrpcError {
        /// JSON-RPC error code.
        code: i32,
        /// Error message.
        message: String,
    },
    /// A text block holding the JSON object of the HTTP headers the call arrived with
    /// (lower-cased names).
    EchoHeaders,
    /// A text block holding the call's arguments as JSON.
    EchoArgs,
    /// Never answer.
    Hang,
    /// Recorded answers by arguments (what `pallas-mocks record` writes): a call whose arguments
    /// equal a case's `arguments` gets that case's answer; any other call gets JSON-RPC error
    /// -32602 saying nothing was recorded for them.
    Recorded(Vec<RecordedCallSpec>),
}

/// One recorded tool call: the arguments it was made with and what the server answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedCallSpec {
    /// The call's arguments (a JSON object; `{}` when the call had none).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The `CallToolResult` as the server sent it (`content`, `structuredContent`, `isError`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error the server answered instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordedErrorSpec>,
}

/// A recorded JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedErrorSpec {
    /// JSON-RPC error code.
    pub code: i32,
    /// Error message.
    pub message: String,
    /// Error data, when the server sent any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl Default for ToolResultSpec {
    fn default() -> Self {
        Self::Text("ok".to_owned())
    }
}
