//! Generated deployments: proptest strategies over the inputs seeds 000 and 001 allow, each case
//! rendered as an ordinary scenario file whose checks state the seed sentences as invariants.
//!
//! A hand-written scenario proves a clause on one input. A case here varies what a real
//! deployment varies: agent keys in the registry name pattern (capitals, digits, underscores,
//! hyphens) that flow into `server.name`, the title default, the `{agent}_history` prompt,
//! progress prefixes and metrics labels; several agents; a `default_model` whose model part holds
//! dots or a second prefix, behind the `openai` or the `anthropic` provider; `model_capabilities`
//! with or without its limits and a `version` or none (the registry's defaults); agents that
//! `depends_on` another; several images per message; downstream headers with `${VAR}`
//! placeholders whose variables come from the environment, from `.env` (quoted or not) or from
//! both (the environment wins), beside the forwarded bearer; a downstream configured by a URL
//! ending in `/` (seed 001's own form), whose path without the slash answers 307; a downstream
//! that refuses any request without its configured credentials; a second turn with another
//! bearer, its scheme spelt in any case; and the mode the process runs in (all agents, `--agent
//! NAME`, or after a reload that changes one field).
//!
//! The invariants are the suite's own checks (builtins that judge every deployed agent, such as
//! REG-003's `{namespace}/{slug(k)}`, MSG-003's every image in a model request, MSG-005's
//! history) plus assertions written from the seed sentences for the generated values. A failing
//! case shrinks to a minimal deployment and is written out by [`Case::scenario_yaml`] as a file
//! `pallas-conformance run` reproduces.
//!
//! `pallas-conformance run` draws them by default ([`draw`]): from a seed its report prints,
//! fitted to the capabilities the target claims, next to the suite's scenarios.

mod corners;
mod draw;
mod images;
mod scenario;
mod search;

pub use corners::{CORNERS, corner_strategy};
pub use draw::{DEFAULT_CASES, Drawn, GeneratedInfo, draw, fresh_seed, not_applicable, shrink};

use proptest::collection::vec;
use proptest::prelude::*;

pub use search::{Budget, Found, runner, search};

/// The tag every generated scenario carries.
pub const TAG: &str = "generated";

/// The mock LLM's one accepted key.
const LLM_KEY: &str = "sk-kit-generated";
/// The mock downstream MCP server every agent with tools reaches.
const DOWNSTREAM: &str = "kitdown";
/// Its tool, which answers with the headers it received.
const TOOL: &str = "echo";

/// One agent of a generated deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The key under `agents:` (the registry name pattern's characters).
    pub key: String,
    /// `title`, or absent (seed 001: "Default: `name.title()`").
    pub title: Option<String>,
    /// `description`, or absent.
    pub description: Option<String>,
    /// Whether the agent lists the downstream server, and which of its tools it calls.
    pub tool: Tool,
    /// Its module is named apart from its key (`agents.impl_<key>`): seed 001 builds the slug
    /// from "the agent key", never from the module.
    pub module_apart: bool,
    /// The index of an earlier agent of the case it lists under `depends_on` (seed 001:
    /// "Sub-agents that must start and become ready before this agent"); resolved by
    /// [`Case::strategy`], which keeps only indices below the agent's own.
    pub depends_on: Option<usize>,
    /// Its model calls the tool twice in one turn, two invocations at once (only with
    /// [`Tool::Echo`]): seed 000's `started` and `completed` are owed to each.
    pub twice: bool,
}

impl Agent {
    /// The module name the deployment gives, when it names one apart from the key.
    fn module(&self) -> Option<String> {
        self.module_apart
            .then(|| format!("impl_{}", self.key.replace('-', "_")))
    }

    fn tools(&self) -> bool {
        self.tool != Tool::None
    }

    /// How many downstream calls each of its turns makes.
    fn calls(&self) -> u8 {
        match (self.tool, self.twice) {
            (Tool::None, _) => 0,
            (Tool::Echo, true) => 2,
            _ => 1,
        }
    }
}

/// The downstream tool an agent calls, by how it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// No downstream server.
    None,
    /// A result (the headers it received).
    Echo,
    /// A result with `isError: true`.
    IsError,
    /// A JSON-RPC error instead of a result.
    RpcError,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Self::None | Self::Echo => TOOL,
            Self::IsError => "refuse",
            Self::RpcError => "explode",
        }
    }
}

/// One field of `agents.yaml` a reload changes (seed 000: "the response must reflect the current
/// set of agents").
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The first agent's title.
    Title(String),
    /// The first agent's description.
    Description(String),
    /// A new agent.
    Add(Agent),
    /// The last agent is removed (only with two agents or more).
    Remove,
}

/// The mode the process runs in.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// `pallas`: every agent and the registry.
    All,
    /// `pallas --agent NAME` for the agent at this index: that agent only, no registry.
    Single(usize),
    /// All agents, then a reload that changes one field.
    Reload(Change),
}

/// A downstream header configured with a `${VAR}` placeholder.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Header name as configured.
    pub name: String,
    /// The variable's value (the header's value is `prefix + value`).
    pub value: String,
    /// Where the variable is set.
    pub source: Source,
}

/// Where a placeholder's variable is set (seed 001 §`.env`: "Pallas loads `.env` from the
/// working directory into `os.environ` without overwriting existing variables").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The process environment (and the same line in `.env`).
    Env,
    /// `.env` only, as `NAME=value`.
    Dotenv,
    /// `.env` only, as `NAME="value"` (dotenv's quoting: the quotes are not part of the value).
    DotenvQuoted,
    /// The environment, and `.env` with another value that must not overwrite it.
    EnvOverDotenv,
}

/// The LLM provider the case's `default_model` names (seed 001: "The provider prefix
/// (`anthropic` or `openai`) determines which LLM provider is active").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// `openai.<model>`, an OpenAI-compatible mock.
    OpenAi,
    /// `anthropic.<model>`, an Anthropic mock.
    Anthropic,
}

impl Provider {
    /// The prefix, the `fastagent.config.yaml` section and the mock's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

impl Header {
    /// The check that judges the header's value, and what it says of it: the placeholder's
    /// expansion from the environment (CFG-010, seed 001: "`${ENV_VAR}` placeholders are
    /// expanded at runtime from environment variables"), or, when `.env` sets the variable, what
    /// `.env` loading gives (CFG-001, seed 001: "Pallas loads `.env` from the working directory
    /// into `os.environ` without overwriting existing variables").
    fn value_check(&self) -> (&'static str, &'static str) {
        match self.source {
            Source::Env => (
                "CFG-010",
                "holds its `${VAR}` placeholder expanded from the environment",
            ),
            Source::Dotenv => (
                "CFG-001",
                "holds its `${VAR}` placeholder expanded from `.env`",
            ),
            Source::DotenvQuoted => (
                "CFG-001",
                "holds its `${VAR}` placeholder expanded from `.env`, where the value is double-quoted (the quotes are not part of it)",
            ),
            Source::EnvOverDotenv => (
                "CFG-001",
                "holds its `${VAR}` placeholder expanded from the environment, not from the `.env` line that disagrees",
            ),
        }
    }

    /// `Authorization` is written `Bearer ${VAR}`; any other header is the bare `${VAR}`.
    fn prefix(&self) -> &'static str {
        if self.name.eq_ignore_ascii_case("authorization") {
            "Bearer "
        } else {
            ""
        }
    }
}

/// One generated deployment with its messages and mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `namespace` of `agents.yaml`.
    pub namespace: String,
    /// The provider of `default_model`.
    pub provider: Provider,
    /// The model part of `default_model` (`<provider>.<this>`).
    pub default_model: String,
    /// `model_capabilities.vision`, or absent (no `model_capabilities` at all).
    pub vision: Option<bool>,
    /// `model_capabilities.context_window` and `.max_output_tokens`, each set or left to the
    /// defaults (only with `model_capabilities`).
    pub limits: (Option<u64>, Option<u64>),
    /// `version` of `agents.yaml`, or absent (seed 001: "Default: `\"1.0.0\"`").
    pub version: Option<String>,
    /// The agents, with distinct registry slugs.
    pub agents: Vec<Agent>,
    /// Headers of the downstream server, each with its own variable.
    pub headers: Vec<Header>,
    /// `forward_inbound_auth` of the downstream server.
    pub forward: bool,
    /// The downstream answers `DELETE` with 405 and keeps the session, as MCP allows a server
    /// that does not let clients end sessions: a probe's teardown refused is no unreachable
    /// server.
    pub delete_not_allowed: bool,
    /// The downstream's URL ends in `/` (seed 001's examples: `https://mnemosyne.example/mcp/`)
    /// and its path without the slash answers 307: the probe and the calls go to the URL as
    /// configured.
    pub trailing_slash: bool,
    /// Images sent with the first message (only when the model has vision).
    pub images: Vec<Vec<u8>>,
    /// Whether the messages carry a bearer (a distinct one per turn).
    pub bearer: bool,
    /// The second turn's `Authorization` scheme: `Bearer`, `bearer`, `BEARER` (an HTTP
    /// authentication scheme is case-insensitive, RFC 9110 §11.1) or `Basic` (no bearer at all).
    pub scheme: &'static str,
    /// Which turns ask for progress (bit 0: the first, bit 1: the second).
    pub progress: u8,
    /// Whether the progress tokens are numbers (the turn's index from 0) rather than strings.
    pub numeric_tokens: bool,
    /// Messages per agent (1 or 2).
    pub turns: u8,
    /// The process mode.
    pub mode: Mode,
}

/// Seed 001 §Registry Name Construction: "`slug` is the agent key with underscores replaced by
/// hyphens".
pub fn slug(key: &str) -> String {
    key.replace('_', "-")
}

fn key() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9_-]{0,10}"
}

fn words() -> impl Strategy<Value = String> {
    "[A-Z][a-z]{1,6}( [A-Za-z0-9]{1,6}){0,2}"
}

/// A model part: one or more dotted segments, sometimes led by a second provider-like prefix.
/// A real deployment's model names, as providers publish them (seed 001 names
/// `claude-sonnet-4-5` and Opus 4.7): a bridge that publishes what it knows of a model instead of
/// the configured `model_capabilities` shows it only on a name it knows.
pub(super) const REAL_MODELS: &[&str] = &[
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-5",
    "claude-sonnet-4-5",
    "claude-opus-4-7",
    "claude-3-5-haiku-latest",
];

fn model() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{0,8}",
        "[a-z][a-z0-9-]{0,6}\\.[0-9]{1,2}(\\.[a-z0-9-]{1,4})?",
        "(openai|anthropic)\\.[a-z][a-z0-9-]{0,6}(\\.[0-9])?",
        proptest::sample::select(REAL_MODELS).prop_map(str::to_owned),
    ]
}

fn agent() -> impl Strategy<Value = Agent> {
    (
        key(),
        proptest::option::of(words()),
        proptest::option::of(words()),
        prop_oneof![
            Just(Tool::None),
            Just(Tool::Echo),
            Just(Tool::IsError),
            Just(Tool::RpcError)
        ],
        proptest::bool::weighted(0.5),
        proptest::option::weighted(0.3, any::<usize>()),
        proptest::bool::weighted(0.3),
    )
        .prop_map(
            |(key, title, description, tool, module_apart, depends_on, twice)| Agent {
                key,
                title,
                description,
                tool,
                module_apart,
                depends_on,
                twice: twice && tool == Tool::Echo,
            },
        )
}

fn header() -> impl Strategy<Value = Header> {
    (
        prop_oneof![
            Just("X-Kit-Tenant".to_owned()),
            Just("X-Api-Key".to_owned()),
            Just("Authorization".to_owned()),
            Just("authorization".to_owned()),
        ],
        // Some base64-like, padded with `=`.
        "[a-zA-Z0-9]{4,12}(={1,2})?",
        source(),
    )
        .prop_map(|(name, value, source)| Header {
            name,
            value,
            source,
        })
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        Just(Source::Env),
        Just(Source::Dotenv),
        Just(Source::DotenvQuoted),
        Just(Source::EnvOverDotenv),
    ]
}

fn provider() -> impl Strategy<Value = Provider> {
    prop_oneof![2 => Just(Provider::OpenAi), 1 => Just(Provider::Anthropic)]
}

/// The second turn's `Authorization` scheme: `Bearer` in any case, or `Basic`, a credential that
/// is no bearer token and is forwarded nowhere.
fn scheme() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        2 => Just("Bearer"),
        1 => Just("bearer"),
        1 => Just("BEARER"),
        1 => Just("Basic")
    ]
}

/// Each agent's `depends_on` drawn as any number, resolved to an earlier agent of the case (the
/// first agent depends on none), so that the graph has no cycle and removing the last agent
/// leaves every dependency in place.
fn resolve_depends_on(mut agents: Vec<Agent>) -> Vec<Agent> {
    for (i, a) in agents.iter_mut().enumerate() {
        a.depends_on = a.depends_on.filter(|_| i > 0).map(|d| d % i.max(1));
    }
    agents
}

/// A configured `Authorization` on a server that forwards a call's bearer is judged by the rule
/// that makes it win over the bearer (AUTH-003): its variable comes from the environment alone, so
/// that a wrong value has that one cause.
fn uncontested_sources(headers: Vec<Header>, contested: bool) -> Vec<Header> {
    headers
        .into_iter()
        .map(|h| {
            if contested && h.name.eq_ignore_ascii_case("authorization") {
                Header {
                    source: Source::Env,
                    ..h
                }
            } else {
                h
            }
        })
        .collect()
}

fn image() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 3)
}

impl Case {
    /// Every case the seeds allow, within the generator's bounds.
    pub fn strategy() -> impl Strategy<Value = Case> {
        let agents = vec(agent(), 1..=3).prop_filter("distinct slugs", |a| {
            let mut slugs: Vec<String> = a.iter().map(|x| slug(&x.key)).collect();
            slugs.sort();
            slugs.dedup();
            slugs.len() == a.len()
        });
        let headers = vec(header(), 0..=2).prop_filter("distinct header names", |h| {
            h.len() < 2 || !h[0].name.eq_ignore_ascii_case(&h[1].name)
        });
        (
            prop_oneof![
                Just("com.example.project".to_owned()),
                "[a-z]{2,4}\\.[a-z0-9-]{2,8}(\\.[a-z]{2,5})?",
            ],
            model(),
            prop_oneof![2 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
            agents,
            headers,
            any::<bool>(),
            vec(image(), 0..=3),
            (any::<bool>(), 0..4u8, any::<bool>(), 1..=2u8, scheme()),
            (0..3u8, any::<usize>(), agent(), 0..4u8, words()),
            (
                provider(),
                (
                    proptest::bool::weighted(0.25),
                    proptest::bool::weighted(0.5),
                ),
                proptest::option::of(1024..2_000_000u64),
                proptest::option::of(256..200_000u64),
                proptest::option::of("[0-9]\\.[0-9]{1,2}\\.[0-9]{1,2}"),
            ),
        )
            .prop_map(
                |(
                    namespace,
                    default_model,
                    vision,
                    agents,
                    headers,
                    forward,
                    images,
                    flags,
                    m,
                    (
                        provider,
                        (delete_not_allowed, trailing_slash),
                        context_window,
                        max_output_tokens,
                        version,
                    ),
                )| {
                    let (bearer, progress, numeric_tokens, turns, scheme) = flags;
                    let agents = resolve_depends_on(agents);
                    let headers = uncontested_sources(headers, forward && bearer);
                    let progress = progress & if turns == 1 { 1 } else { 3 };
                    let images = if vision == Some(true) {
                        images
                    } else {
                        Vec::new()
                    };
                    let mode = mode_of(&agents, m);
                    let limits = if vision.is_some() {
                        (context_window, max_output_tokens)
                    } else {
                        (None, None)
                    };
                    Case {
                        namespace,
                        provider,
                        default_model,
                        vision,
                        limits,
                        version,
                        agents,
                        headers,
                        forward,
                        delete_not_allowed,
                        trailing_slash,
                        images,
                        bearer,
                        scheme,
                        progress,
                        numeric_tokens,
                        turns,
                        mode,
                    }
                },
            )
    }

    /// The agents the messages go to: every agent, or the one a single-agent start serves.
    fn served(&self) -> Vec<&Agent> {
        match self.mode {
            Mode::Single(i) => self.agents.get(i).into_iter().collect(),
            _ => self.agents.iter().collect(),
        }
    }

    /// The scenario id: stable for the case's content.
    pub fn id(&self) -> String {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{self:?}").hash(&mut h);
        format!("generated-{:016x}", h.finish())
    }
}

fn mode_of(
    agents: &[Agent],
    (kind, pick, added, field, text): (u8, usize, Agent, u8, String),
) -> Mode {
    match kind {
        0 => Mode::All,
        1 => Mode::Single(pick % agents.len().max(1)),
        _ => Mode::Reload(match field {
            0 => Change::Title(text),
            1 => Change::Description(text),
            2 if agents.iter().all(|a| slug(&a.key) != slug(&added.key)) => Change::Add(Agent {
                depends_on: None,
                ..added
            }),
            3 if agents.len() > 1 => Change::Remove,
            _ => Change::Title(text),
        }),
    }
}
