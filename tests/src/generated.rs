//! Generated deployments: proptest strategies over the inputs seeds 000 and 001 allow, each case
//! rendered as an ordinary scenario file whose checks state the seed sentences as invariants.
//!
//! A hand-written scenario proves a clause on one input. A case here varies what a real
//! deployment varies: agent keys in the registry name pattern (capitals, digits, underscores,
//! hyphens) that flow into `server.name`, the title default, the `{agent}_history` prompt,
//! progress prefixes and metrics labels; several agents; a `default_model` whose model part holds
//! dots or a second prefix; several images per message; downstream headers with `${VAR}`
//! placeholders beside the forwarded bearer; a second turn with another bearer; and the mode the
//! process runs in (all agents, `--agent NAME`, or after a reload that changes one field).
//!
//! The invariants are the suite's own checks (builtins that judge every deployed agent, such as
//! REG-003's `{namespace}/{slug(k)}`, MSG-003's every image in a model request, MSG-005's
//! history) plus assertions written from the seed sentences for the generated values. A failing
//! case shrinks to a minimal deployment and is written out by [`Case::scenario_yaml`] as a file
//! `pallas-conformance run` reproduces.

use std::fmt::Write as _;

use base64::Engine as _;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

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
}

impl Agent {
    fn tools(&self) -> bool {
        self.tool != Tool::None
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
}

impl Header {
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
    /// The model part of `default_model` (`openai.<this>`).
    pub default_model: String,
    /// `model_capabilities.vision`, or absent (no `model_capabilities` at all).
    pub vision: Option<bool>,
    /// The agents, with distinct registry slugs.
    pub agents: Vec<Agent>,
    /// Headers of the downstream server, each with its own variable.
    pub headers: Vec<Header>,
    /// `forward_inbound_auth` of the downstream server.
    pub forward: bool,
    /// Images sent with the first message (only when the model has vision).
    pub images: Vec<Vec<u8>>,
    /// Whether the messages carry a bearer (a distinct one per turn).
    pub bearer: bool,
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
fn model() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{0,8}",
        "[a-z][a-z0-9-]{0,6}\\.[0-9]{1,2}(\\.[a-z0-9-]{1,4})?",
        "(openai|anthropic)\\.[a-z][a-z0-9-]{0,6}(\\.[0-9])?",
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
    )
        .prop_map(|(key, title, description, tool)| Agent {
            key,
            title,
            description,
            tool,
        })
}

fn header() -> impl Strategy<Value = Header> {
    (
        prop_oneof![
            Just("X-Kit-Tenant".to_owned()),
            Just("X-Api-Key".to_owned()),
            Just("Authorization".to_owned()),
        ],
        "[a-zA-Z0-9]{4,12}",
    )
        .prop_map(|(name, value)| Header { name, value })
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
            (any::<bool>(), 0..4u8, any::<bool>(), 1..=2u8),
            (0..3u8, any::<usize>(), agent(), 0..4u8, words()),
        )
            .prop_map(
                |(namespace, default_model, vision, agents, headers, forward, images, flags, m)| {
                    let (bearer, progress, numeric_tokens, turns) = flags;
                    let progress = progress & if turns == 1 { 1 } else { 3 };
                    let images = if vision == Some(true) {
                        images
                    } else {
                        Vec::new()
                    };
                    let mode = mode_of(&agents, m);
                    Case {
                        namespace,
                        default_model,
                        vision,
                        agents,
                        headers,
                        forward,
                        images,
                        bearer,
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

    /// The case as an ordinary scenario file.
    pub fn scenario_yaml(&self) -> String {
        let doc = self.scenario();
        let mut out = String::from(
            "# A generated deployment (pallas-e2e `generated`): run it with\n\
             #   pallas-conformance run THIS_FILE --target scenarios/targets/reference.yaml --strict\n",
        );
        let _ = writeln!(out, "# case: {self:?}");
        out.push_str(&serde_saphyr::to_string(&doc).unwrap_or_default());
        out
    }

    fn scenario(&self) -> Value {
        let mut requires = vec!["history", "metrics", "progress"];
        match self.mode {
            Mode::All => requires.push("registry"),
            Mode::Single(_) => requires.push("single_agent"),
            Mode::Reload(_) => requires.extend(["registry", "reload"]),
        }
        if !self.images.is_empty() {
            requires.push("images");
        }
        if self.bearer {
            requires.push("bearer");
        }
        if self.progress != 0 {
            requires.push("pallas_progress");
        }
        let mut steps = Vec::new();
        let mut checks = Vec::new();
        self.start_steps(&mut steps, &mut checks);
        for a in self.served() {
            self.agent_steps(a, &mut steps, &mut checks);
        }
        let metrics_agent = match self.mode {
            Mode::Single(i) => self.agents.get(i).map(|a| a.key.clone()),
            _ => None,
        };
        self.message_checks(&mut checks);
        steps.push(json!({"name": "metrics", "metrics": {"agent": metrics_agent}}));
        checks.push(json!({"check": "MET-002", "steps": ["metrics"]}));
        self.metric_checks(&mut checks);
        if let Mode::Reload(change) = &self.mode {
            self.reload_steps(change, &mut steps, &mut checks);
        }
        json!({
            "id": self.id(),
            "title": "a generated deployment holds the seed sentences its inputs reach",
            "refs": ["seed 000", "seed 001"],
            "requires": requires,
            "tags": ["generated"],
            "ecosystem": self.ecosystem(),
            "deployment": self.deployment(),
            "steps": steps,
            "checks": checks,
        })
    }

    /// Per served agent: its `agent` label, its calls counted once each (seed 001 §Metrics
    /// Reference).
    fn metric_checks(&self, checks: &mut Vec<Value>) {
        let families = "$.families[?@.name == ";
        for a in self.served() {
            let k = &a.key;
            checks.push(json!({
                "check": "MET-002",
                "title": format!("`pallas_agent_info` has one sample labelled `agent=\"{k}\"`"),
                "assert": {"output": {"step": "metrics",
                    "path": format!("{families}'pallas_agent_info'].samples[?@.labels.agent == '{k}']"),
                    "count": {"equals": 1}}},
            }));
            // A call whose downstream tool failed still answers; the seeds do not say which
            // outcome that is, so only calls without a failing tool are counted.
            if matches!(a.tool, Tool::None | Tool::Echo) {
                checks.push(json!({
                "check": "MET-005",
                "title": format!("`pallas_send_message_total{{agent=\"{k}\",outcome=\"ok\"}}` counts its {} call(s)", self.turns),
                "assert": {"output": {"step": "metrics",
                    "path": format!("{families}'pallas_send_message_total'].samples[?@.labels.agent == '{k}' && @.labels.outcome == 'ok'].value"),
                    "equals": f64::from(self.turns)}},
            }));
            }
            // A result is `ok`, a JSON-RPC error `error` (seed 001: "Failures still surface in
            // the counter as `outcome=\"error\"`"); an `isError` result is left unjudged.
            let outcome = match a.tool {
                Tool::Echo => Some("ok"),
                Tool::RpcError => Some("error"),
                Tool::None | Tool::IsError => None,
            };
            if let Some(outcome) = outcome {
                checks.push(json!({
                    "check": "MET-005",
                    "title": format!("`pallas_tool_calls_total{{operation=\"tool\",outcome=\"{outcome}\"}}` counts `{k}`'s {} tool call(s) on `{DOWNSTREAM}`", self.turns),
                    "assert": {"output": {"step": "metrics",
                        "path": format!("{families}'pallas_tool_calls_total'].samples[?@.labels.agent == '{k}' && @.labels.server == '{DOWNSTREAM}' && @.labels.operation == 'tool' && @.labels.outcome == '{outcome}'].value"),
                        "equals": f64::from(self.turns)}},
                }));
            }
        }
    }

    /// The builtin checks that judge every message of the case.
    fn message_checks(&self, checks: &mut Vec<Value>) {
        if !self.images.is_empty() {
            checks.push(json!({"check": "MSG-003"}));
        }
        let all_turns = if self.turns == 1 { 1 } else { 3 };
        if self.progress != all_turns {
            // A call without a token: no notification may answer it.
            checks.push(json!({"check": "PROG-001"}));
        }
        if self.progress != 0 {
            let mut ids = vec!["PROG-002", "PROG-004", "PROG-005", "PROG-007", "PROG-009"];
            if self.served().iter().any(|a| a.tools()) {
                // A tool call makes the notifications one token needs for PROG-003.
                ids.extend(["PROG-003", "PROG-006", "PROG-008"]);
            }
            checks.extend(ids.into_iter().map(|c| json!({"check": c})));
        }
    }

    fn ecosystem(&self) -> Value {
        json!({
            "llms": {"openai": {"dialect": "openai", "api_key": LLM_KEY, "models": [self.default_model]}},
            "mcp_servers": {DOWNSTREAM: {"tools": [
                {"name": TOOL, "result": "echo_headers"},
                {"name": Tool::IsError.name(), "result": {"is_error": "refused by the generated case"}},
                {"name": Tool::RpcError.name(), "result": {"jsonrpc_error": {"code": -32603, "message": "exploded in the generated case"}}},
            ]}},
        })
    }

    fn deployment(&self) -> Value {
        let mut d = self.deployment_of(&self.agents);
        if let Mode::Single(i) = self.mode
            && let Some(a) = self.agents.get(i)
        {
            d["args"] = json!(["--agent", a.key]);
            d["ready"] = json!("agents");
            d["ready_agents"] = json!([a.key]);
        }
        d
    }

    fn deployment_of(&self, agents: &[Agent]) -> Value {
        let mut env = Map::new();
        let mut headers = Map::new();
        for (i, h) in self.headers.iter().enumerate() {
            let var = format!("KIT_GEN_HEADER_{i}");
            env.insert(var.clone(), json!(h.value));
            headers.insert(h.name.clone(), json!(format!("{}${{{var}}}", h.prefix())));
        }
        let mut d = json!({
            "namespace": self.namespace,
            "model": format!("openai.{}", self.default_model),
            "providers": {"openai": {"mock": "openai", "api_key": LLM_KEY}},
            "agents": agents_map(agents),
            "servers": {DOWNSTREAM: {"mock": DOWNSTREAM, "headers": headers, "forward_inbound_auth": self.forward}},
            "env": env,
        });
        if let Some(v) = self.vision {
            d["model_capabilities"] = json!({"vision": v});
        }
        d
    }

    /// The registry (or, in single-agent mode, its absence) before any message.
    fn start_steps(&self, steps: &mut Vec<Value>, checks: &mut Vec<Value>) {
        match self.mode {
            Mode::Single(i) => {
                steps.push(json!({"name": "registry", "registry": {}, "expect_error": true}));
                checks.push(json!({
                    "check": "START-001", "rule": "s001.single-agent-cli",
                    "title": "with `--agent`, the registry port does not answer",
                    "assert": {"output": {"step": "registry", "path": "$.error", "exists": true}},
                }));
                if let Some(other) = self.agents.iter().enumerate().find(|(j, _)| *j != i) {
                    steps.push(json!({"name": "other", "metrics": {"agent": other.1.key}, "expect_error": true}));
                    checks.push(json!({
                        "check": "START-002",
                        "title": format!("`{}` is not served", other.1.key),
                        "assert": {"output": {"step": "other", "path": "$.error", "exists": true}},
                    }));
                }
            }
            _ => {
                steps.push(json!({"name": "registry", "registry": {}}));
                // The builtins judge the deployment as it stands at the end: after a reload they
                // judge the `after` step only (`reload_steps`).
                if self.mode == Mode::All {
                    for c in [
                        "REG-001", "REG-003", "REG-004", "REG-005", "REG-006", "REG-007",
                    ] {
                        checks.push(json!({"check": c, "steps": ["registry"]}));
                    }
                }
                for a in &self.agents {
                    checks.push(json!({
                        "check": "REG-003",
                        "title": format!("`{}` is published as `{}/{}`", a.key, self.namespace, slug(&a.key)),
                        "assert": {"output": {"step": "registry",
                            "path": format!("$.body.servers[?@.server.name == '{}/{}']", self.namespace, slug(&a.key)),
                            "count": {"equals": 1}}},
                    }));
                }
            }
        }
    }

    /// The messages to one agent, its history and prompt listing, with their invariants.
    fn agent_steps(&self, a: &Agent, steps: &mut Vec<Value>, checks: &mut Vec<Value>) {
        let k = &a.key;
        for turn in 1..=self.turns {
            let name = format!("{k}-turn{turn}");
            let mut message = format!("turn {turn} for {k}");
            if a.tools() {
                let _ = write!(message, "\nCALL_TOOL {DOWNSTREAM}__{} {{}}", a.tool.name());
            }
            let mut send = json!({"agent": k, "message": message});
            let bearer = format!("tok-{turn}-{}", slug(k));
            if self.bearer {
                send["bearer"] = json!(bearer);
            }
            if turn == 1 && !self.images.is_empty() {
                send["images"] =
                    Value::Array(self.images.iter().enumerate().map(image_json).collect());
            }
            if self.progress & (1 << (turn - 1)) != 0 {
                send["progress_token"] = if self.numeric_tokens {
                    json!(turn - 1)
                } else {
                    json!(format!("gen-{}-{turn}", slug(k)))
                };
            }
            let progress = send.get("progress_token").is_some();
            steps.push(json!({"name": name, "send": send}));
            if progress {
                checks.push(json!({
                    "check": "PROG-012",
                    "title": format!("turn {turn} of `{k}` numbers its first loop step `{k} step 1`"),
                    "given": {"output": {"step": name, "path": "$.progress[*]", "count": {"min": 1}}},
                    "assert": {"output": {"step": name, "path": format!("$.progress[?match(@.params.message, '{k} step 1 [(](llm|tool)[)]')]"), "count": {"equals": 1}}},
                }));
            }
            // The mock model echoes the message, or, after a tool call, the tool's result.
            let answer = if a.tools() {
                json!({"step": name, "path": "$.result.isError", "equals": false})
            } else {
                json!({"step": name, "path": "$.text", "contains": format!("turn {turn} for {k}")})
            };
            checks.push(json!({
                "check": "MSG-002",
                "title": format!("turn {turn} of `{k}` comes back through the agent loop"),
                "assert": {"output": answer},
            }));
            if a.tools() {
                self.downstream_checks(
                    a.tool,
                    &name,
                    self.bearer.then_some(bearer.as_str()),
                    checks,
                );
            }
        }
        let health = format!("{k}-health");
        steps.push(json!({"name": health, "health": {"agent": k}}));
        checks.push(json!({
            "check": "MET-004",
            "title": format!("`pallas_agent_health_status{{agent=\"{k}\"}}` is 1 after its `ok`"),
            "assert": {"output": {"step": "metrics",
                "path": format!("$.families[?@.name == 'pallas_agent_health_status'].samples[?@.labels.agent == '{k}'].value"),
                "equals": 1.0}},
        }));
        checks.push(json!({
            "check": "HEALTH-027",
            "title": format!("`{k}`: the active provider lists the model and every downstream answers, so `ok`"),
            "assert": {"output": {"step": health, "path": "$.health.status", "equals": "ok"}},
        }));
        let history = format!("{k}-history");
        steps.push(json!({"name": history, "history": {"agent": k}}));
        let prompts = format!("{k}-prompts");
        steps.push(json!({"name": prompts, "request": {"agent": k, "method": "prompts/list"}}));
        checks.push(json!({
            "check": "MSG-005",
            "title": format!("`{k}_history` is listed"),
            "assert": {"output": {"step": prompts, "path": format!("$.result.prompts[?@.name == '{k}_history']"), "count": {"equals": 1}}},
        }));
        self.history_image_checks(&history, checks);
        checks.push(json!({
            "check": "MSG-005",
            "title": format!("`{k}_history` holds the last turn"),
            "assert": {"output": {"step": history, "path": format!("$.result.messages[?search(@.content.text, 'turn {} for {k}')]", self.turns), "count": {"min": 1}}},
        }));
    }

    /// Every image of the first message is in the history with its own type.
    fn history_image_checks(&self, history: &str, checks: &mut Vec<Value>) {
        let images: Vec<Value> = self.images.iter().enumerate().map(image_json).collect();
        for (i, img) in images.iter().enumerate() {
            let (data, mime) = (
                img["data"].as_str().unwrap_or(""),
                img["mime_type"].as_str().unwrap_or(""),
            );
            checks.push(json!({
                "check": "MSG-005",
                "title": format!("image {} of {} is kept in the history as `{mime}`", i + 1, images.len()),
                "assert": {"output": {"step": history,
                    "path": format!("$.result.messages[?@.content.type == 'image' && @.content.data == '{data}'].content.mimeType"),
                    "equals": mime}},
            }));
        }
    }

    /// What the downstream received during one message: each configured header with its
    /// variable expanded, and the bearer exactly when the server opted in and no explicit
    /// `Authorization` is configured (seed 001 §Bearer Token Propagation: "If
    /// `mnemosyne.headers.Authorization` is set explicitly, that wins").
    fn downstream_checks(
        &self,
        tool: Tool,
        step: &str,
        bearer: Option<&str>,
        checks: &mut Vec<Value>,
    ) {
        let tool = tool.name();
        checks.push(json!({
            "title": format!("the downstream tool was called during `{step}` (what the entries below judge)"),
            "premise": true,
            "assert": {"journal": {"server": DOWNSTREAM, "tool": tool, "during": [step], "count": {"min": 1}}},
        }));
        for h in &self.headers {
            checks.push(json!({
                "check": "CFG-010",
                "title": format!("`{}: {}${{VAR}}` reaches the downstream with the variable expanded", h.name, h.prefix()),
                "given": {"journal": {"server": DOWNSTREAM, "tool": tool, "during": [step], "count": {"min": 1}}},
                "assert": {"journal": {"server": DOWNSTREAM, "method": "tools/call", "during": [step],
                    "header": h.name.to_ascii_lowercase(), "header_equals": format!("{}{}", h.prefix(), h.value)}},
            }));
        }
        let explicit = self
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("authorization"));
        if explicit {
            return;
        }
        let (check, expect) = match (self.forward, bearer) {
            (true, Some(b)) => ("AUTH-021", json!({"header_equals": format!("Bearer {b}")})),
            _ => ("AUTH-020", json!({"header_absent": true})),
        };
        let mut journal = json!({"server": DOWNSTREAM, "method": "tools/call", "during": [step], "header": "authorization"});
        if let (Some(j), Some(e)) = (journal.as_object_mut(), expect.as_object()) {
            j.extend(e.clone());
        }
        checks.push(json!({
            "check": check,
            "title": format!("the downstream's Authorization during `{step}` follows its opt-in and this call's bearer"),
            "assert": {"journal": journal},
        }));
    }

    fn reload_steps(&self, change: &Change, steps: &mut Vec<Value>, checks: &mut Vec<Value>) {
        let mut agents = self.agents.clone();
        let first = agents.first().map(|a| a.key.clone()).unwrap_or_default();
        let name_of = |k: &str| format!("{}/{}", self.namespace, slug(k));
        // Seed 000 binds the set of agents ("If an agent is added or removed from Pallas,
        // subsequent requests must reflect the change"); no sentence says when a changed title
        // or description must show, so that is information only.
        let (until, check) = match change {
            Change::Title(t) => {
                if let Some(a) = agents.first_mut() {
                    a.title = Some(t.clone());
                }
                let path = format!(
                    "$.body.servers[?@.server.name == '{}'].server.title",
                    name_of(&first)
                );
                (json!({"path": path, "equals": t}), None)
            }
            Change::Description(t) => {
                if let Some(a) = agents.first_mut() {
                    a.description = Some(t.clone());
                }
                let path = format!(
                    "$.body.servers[?@.server.name == '{}'].server.description",
                    name_of(&first)
                );
                (json!({"path": path, "equals": t}), None)
            }
            Change::Add(a) => {
                agents.push(a.clone());
                let path = format!("$.body.servers[?@.server.name == '{}']", name_of(&a.key));
                (
                    json!({"path": path, "count": {"equals": 1}}),
                    Some("REG-019"),
                )
            }
            Change::Remove => {
                let gone = agents.pop().map(|a| a.key).unwrap_or_default();
                let path = format!("$.body.servers[?@.server.name == '{}']", name_of(&gone));
                (
                    json!({"path": path, "count": {"equals": 0}}),
                    Some("REG-005"),
                )
            }
        };
        steps
            .push(json!({"name": "reload", "reload": {"deployment": self.deployment_of(&agents)}}));
        let assert = json!({"output": merge(json!({"step": "after"}), &until)});
        let mut builtins = vec!["REG-001", "REG-003", "REG-004", "REG-005", "REG-007"];
        if let Some(check) = check {
            steps.push(
                json!({"name": "after", "registry": {}, "until": {"within": "8s", "that": until}}),
            );
            checks.push(json!({
                "check": check,
                "title": "after the reload the registry reflects the added or removed agent",
                "assert": assert,
            }));
            builtins.push("REG-006");
        } else {
            // The changed agent may be restarted, leaving the registry for a moment.
            let all = json!({"path": "$.body.servers[*]", "count": {"equals": agents.len()}});
            steps.push(
                json!({"name": "after", "registry": {}, "until": {"within": "8s", "that": all}}),
            );
            checks.push(json!({
                "title": "after the reload the registry shows the changed field",
                "level": "INFO",
                "assert": assert,
            }));
        }
        for c in builtins {
            checks.push(json!({"check": c, "steps": ["after"]}));
        }
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
            2 if agents.iter().all(|a| slug(&a.key) != slug(&added.key)) => Change::Add(added),
            3 if agents.len() > 1 => Change::Remove,
            _ => Change::Title(text),
        }),
    }
}

fn agents_map(agents: &[Agent]) -> Value {
    let mut m = Map::new();
    for a in agents {
        let mut spec = Map::new();
        if let Some(t) = &a.title {
            spec.insert("title".into(), json!(t));
        }
        if let Some(d) = &a.description {
            spec.insert("description".into(), json!(d));
        }
        if a.tools() {
            spec.insert("servers".into(), json!([DOWNSTREAM]));
        }
        m.insert(a.key.clone(), Value::Object(spec));
    }
    Value::Object(m)
}

/// Image `i` of a message: a real PNG (even `i`, `i + 1` pixels wide, coloured from `bytes`) or
/// JPEG (odd `i`, its density set to `i`), the two types every vision model takes; every image's
/// data differs from its first bytes on.
fn image_json((i, bytes): (usize, &Vec<u8>)) -> Value {
    let n = u16::try_from(i + 1).unwrap_or(1);
    let rgb = [0, 1, 2].map(|k| bytes.get(k).copied().unwrap_or(0));
    let (data, mime) = if i % 2 == 0 {
        (png(n, rgb), "image/png")
    } else {
        (jpeg(n), "image/jpeg")
    };
    json!({
        "data": base64::engine::general_purpose::STANDARD.encode(&data),
        "mime_type": mime,
    })
}

/// A 1×1 baseline JPEG (JFIF, quality 50).
const TINY_JPEG: &str = concat!(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1R",
    "V19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2Nj",
    "Y2NjY2NjY2NjY2NjY2P/wAARCAABAAEDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAA",
    "AgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6",
    "Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXG",
    "x8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREA",
    "AgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5",
    "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPE",
    "xcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDIooorkPqD/9k=",
);

/// [`TINY_JPEG`] with its horizontal density (JFIF bytes 14–15) set to `density`.
fn jpeg(density: u16) -> Vec<u8> {
    let mut out = base64::engine::general_purpose::STANDARD
        .decode(TINY_JPEG)
        .unwrap_or_default();
    if let Some(d) = out.get_mut(14..16) {
        d.copy_from_slice(&density.to_be_bytes());
    }
    out
}

/// A `width`×1 RGB PNG of one colour (zlib stored block, no compression).
fn png(width: u16, rgb: [u8; 3]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(0).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut raw = vec![0u8];
    for _ in 0..width {
        raw.extend_from_slice(&rgb);
    }
    let len = u16::try_from(raw.len()).unwrap_or(0);
    let mut z = vec![0x78, 0x01, 0x01];
    z.extend_from_slice(&len.to_le_bytes());
    z.extend_from_slice(&(!len).to_le_bytes());
    z.extend_from_slice(&raw);
    z.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut ihdr = u32::from(width).to_be_bytes().to_vec();
    ihdr.extend_from_slice(&1u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

fn merge(mut a: Value, b: &Value) -> Value {
    if let (Some(x), Some(y)) = (a.as_object_mut(), b.as_object()) {
        x.extend(y.clone());
    }
    a
}

/// What a search found: nothing, or the smallest failing case with its problems.
#[derive(Debug)]
pub struct Found {
    /// The shrunk case.
    pub case: Case,
    /// The problems its run showed.
    pub problems: String,
    /// Cases run while shrinking.
    pub shrink_runs: usize,
}

/// How many cases and from which seed.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Cases generated (run in parallel batches).
    pub cases: usize,
    /// The RNG seed: the same seed generates the same cases.
    pub seed: u64,
    /// At most this many runs while shrinking a failure.
    pub shrink_runs: usize,
}

/// A deterministic proptest runner: the same seed generates the same cases.
pub fn runner(seed: u64) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Generates `budget.cases` cases and runs them with `run` (a batch at a time; one result per
/// case, `Err` with the problems when a case fails). The first failing case is shrunk, one run
/// per candidate, to a case that still fails but whose every simpler form passes.
pub fn search(
    budget: Budget,
    batch: usize,
    mut run: impl FnMut(&[Case]) -> Vec<Result<(), String>>,
) -> Result<usize, Box<Found>> {
    use proptest::strategy::ValueTree as _;
    let mut runner = runner(budget.seed);
    let strategy = Case::strategy();
    let mut done = 0;
    while done < budget.cases {
        let n = batch.max(1).min(budget.cases - done);
        let mut trees = Vec::with_capacity(n);
        for _ in 0..n {
            match strategy.new_tree(&mut runner) {
                Ok(t) => trees.push(t),
                Err(_) => break,
            }
        }
        let cases: Vec<Case> = trees.iter().map(|t| t.current()).collect();
        let results = run(&cases);
        if let Some(i) = results.iter().position(Result::is_err) {
            let problems = results
                .into_iter()
                .nth(i)
                .and_then(Result::err)
                .unwrap_or_default();
            return Err(Box::new(shrink(
                trees.swap_remove(i),
                problems,
                budget.shrink_runs,
                &mut run,
            )));
        }
        done += cases.len();
        if cases.is_empty() {
            break;
        }
    }
    Ok(done)
}

fn shrink(
    mut tree: impl proptest::strategy::ValueTree<Value = Case>,
    mut problems: String,
    limit: usize,
    run: &mut impl FnMut(&[Case]) -> Vec<Result<(), String>>,
) -> Found {
    let mut best = tree.current();
    let mut runs = 0;
    let mut more = tree.simplify();
    while more && runs < limit {
        let candidate = tree.current();
        runs += 1;
        match run(std::slice::from_ref(&candidate)).pop() {
            Some(Err(p)) => {
                best = candidate;
                problems = p;
                more = tree.simplify();
            }
            _ => more = tree.complicate(),
        }
    }
    Found {
        case: best,
        problems,
        shrink_runs: runs,
    }
}
