//! A generated case written as an ordinary scenario file: its ecosystem, deployment, steps and
//! the checks that state the seed sentences for the generated values.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::images::image_json;
use super::{Agent, Case, Change, DOWNSTREAM, LLM_KEY, Mode, Source, TOOL, Tool, slug};
use crate::redact::fingerprint;

impl Case {
    /// The case as an ordinary scenario file.
    pub fn scenario_yaml(&self) -> String {
        let doc = self.scenario();
        let mut out = String::from(
            "# A generated deployment (`pallas-conformance run`'s generated cases): run it with\n\
             #   pallas-conformance run THIS_FILE --target YOUR-TARGET.yaml --strict\n",
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
            "tags": [super::TAG],
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
                let calls = u16::from(self.turns) * u16::from(a.calls());
                checks.push(json!({
                    "check": "MET-005",
                    "title": format!("`pallas_tool_calls_total{{operation=\"tool\",outcome=\"{outcome}\"}}` counts `{k}`'s {calls} tool call(s) on `{DOWNSTREAM}`"),
                    "assert": {"output": {"step": "metrics",
                        "path": format!("{families}'pallas_tool_calls_total'].samples[?@.labels.agent == '{k}' && @.labels.server == '{DOWNSTREAM}' && @.labels.operation == 'tool' && @.labels.outcome == '{outcome}'].value"),
                        "equals": f64::from(calls)}},
                }));
            }
        }
    }

    /// The builtin checks that judge every message of the case.
    fn message_checks(&self, checks: &mut Vec<Value>) {
        // Each answer is the mock model's reply, read against the model requests the journal
        // holds (not an echo of the message a bridge could make without a model).
        checks.push(json!({"check": "MSG-002"}));
        if !self.images.is_empty() {
            checks.push(json!({"check": "MSG-003"}));
        }
        let all_turns = if self.turns == 1 { 1 } else { 3 };
        if self.progress != all_turns && self.progress != 0 {
            // A call without a token, beside one with a token that shows the bridge reports
            // progress: no notification may answer it.
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
        let p = self.provider.name();
        // The downstream refuses a request without its configured credentials, as a server that
        // authenticates with them does (the probe's DELETE included).
        let required: Map<String, Value> = self
            .headers
            .iter()
            .filter(|h| crate::redact::is_credential_name(&h.name))
            .map(|h| (h.name.clone(), json!(format!("{}{}", h.prefix(), h.value))))
            .collect();
        json!({
            "llms": {p: {"dialect": p, "api_key": LLM_KEY, "models": [self.default_model]}},
            "mcp_servers": {DOWNSTREAM: {"require_headers": required,
                "delete_status": self.delete_not_allowed.then_some(405),
                "trailing_slash": self.trailing_slash, "tools": [
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
        let mut dotenv = Map::new();
        let mut headers = Map::new();
        for (i, h) in self.headers.iter().enumerate() {
            let var = format!("KIT_GEN_HEADER_{i}");
            match h.source {
                Source::Env => {
                    env.insert(var.clone(), json!(h.value));
                }
                Source::Dotenv => {
                    dotenv.insert(var.clone(), json!(h.value));
                }
                Source::DotenvQuoted => {
                    dotenv.insert(var.clone(), json!(format!("\"{}\"", h.value)));
                }
                Source::EnvOverDotenv => {
                    env.insert(var.clone(), json!(h.value));
                    dotenv.insert(var.clone(), json!(format!("{}-from-dotenv", h.value)));
                }
            }
            headers.insert(h.name.clone(), json!(format!("{}${{{var}}}", h.prefix())));
        }
        let p = self.provider.name();
        let mut d = json!({
            "namespace": self.namespace,
            "model": format!("{p}.{}", self.default_model),
            "providers": {p: {"mock": p, "api_key": LLM_KEY}},
            "agents": agents_map(agents),
            "servers": {DOWNSTREAM: {"mock": DOWNSTREAM, "headers": headers, "forward_inbound_auth": self.forward}},
            "env": env,
            "dotenv": dotenv,
        });
        if let Some(v) = self.vision {
            let mut caps = json!({"vision": v});
            if let Some(n) = self.limits.0 {
                caps["context_window"] = json!(n);
            }
            if let Some(n) = self.limits.1 {
                caps["max_output_tokens"] = json!(n);
            }
            d["model_capabilities"] = caps;
        }
        if let Some(v) = &self.version {
            d["version"] = json!(v);
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
            if a.twice {
                // The same tool again in the same model turn: a second invocation at once, owed
                // its own `started` and `completed` (seed 000: "for every downstream tool
                // invocation"; the builtin PROG-006 judges each call the downstream saw).
                let _ = write!(
                    message,
                    "\nCALL_TOOL {DOWNSTREAM}__{} {{\"again\": true}}",
                    a.tool.name()
                );
            }
            let mut send = json!({"agent": k, "message": message});
            let bearer = format!("tok-{turn}-{}", slug(k));
            if self.bearer {
                send["bearer"] = json!(bearer);
                if turn == 2 && self.scheme != "Bearer" {
                    send["bearer_scheme"] = json!(self.scheme);
                }
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
            if a.tools() {
                let scheme = if turn == 2 { self.scheme } else { "Bearer" };
                self.downstream_checks(
                    a.tool,
                    &name,
                    (self.bearer.then_some(bearer.as_str()), scheme),
                    checks,
                );
            }
        }
        let health = format!("{k}-health");
        steps.push(json!({"name": health, "health": {"agent": k}}));
        if a.tools() {
            self.probe_header_checks(k, &health, checks);
            // Every probe session is closed, on a downstream that refuses a DELETE without its
            // configured credentials.
            checks.push(json!({"check": "HEALTH-007", "steps": [health]}));
        }
        checks.push(json!({
            "check": "MET-004",
            "title": format!("`pallas_agent_health_status{{agent=\"{k}\"}}` is 1 after its `ok`"),
            "given": {"output": {"step": health, "path": "$.health.status", "equals": "ok"}},
            "assert": {"output": {"step": "metrics",
                "path": format!("$.families[?@.name == 'pallas_agent_health_status'].samples[?@.labels.agent == '{k}'].value"),
                "equals": 1.0}},
        }));
        checks.push(json!({
            "check": "HEALTH-027",
            "title": format!(
                "`{k}`: the active provider lists the model and every downstream answers, so `ok`{}",
                {
                    let notes: Vec<&str> = [
                        (self.delete_not_allowed, "the downstream refuses the probe's DELETE with 405, as MCP allows a server that keeps its sessions"),
                        (self.trailing_slash, "the downstream's configured URL ends in `/`, its path without the slash answering 307"),
                    ]
                    .into_iter()
                    .filter(|(on, _)| *on && a.tools())
                    .map(|(_, note)| note)
                    .collect();
                    if notes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", notes.join("; "))
                    }
                }
            ),
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

    /// Every image of the first message is in the history with its own type: one entry for them
    /// all (one cause, one finding). Seed 001 asks for "the full conversation history as FastMCP
    /// `Message` objects", not for one block type: an image block or an embedded resource
    /// holding the same bytes and type both keep it.
    fn history_image_checks(&self, history: &str, checks: &mut Vec<Value>) {
        let images: Vec<Value> = self.images.iter().enumerate().map(image_json).collect();
        if images.is_empty() {
            return;
        }
        let each: Vec<String> = images
            .iter()
            .map(|img| {
                image_in_history(
                    img["data"].as_str().unwrap_or(""),
                    img["mime_type"].as_str().unwrap_or(""),
                )
            })
            .collect();
        checks.push(json!({
            "check": "MSG-005",
            "title": format!("the {} image(s) of the first message are kept in the history, each with its own type", images.len()),
            "assert": {"output": {"step": history,
                "path": format!("$.result.messages[?{}]", each.join(" || ")),
                "count": {"equals": images.len()}}},
        }));
    }

    /// What the health probe of agent `k` sent the downstream: each configured auth header (a
    /// credential's name: `Authorization`, `X-Api-Key`) present (seed 000 §2: "`POST` an MCP
    /// `initialize` request to the server URL (with auth headers and `Accept: application/json,
    /// text/event-stream`)"), and its value as the variable's source gives it
    /// ([`Header::value_check`]). A header of another name is no auth header the sentence names,
    /// so it is not judged here.
    fn probe_header_checks(&self, k: &str, step: &str, checks: &mut Vec<Value>) {
        for h in self
            .headers
            .iter()
            .filter(|h| crate::redact::is_credential_name(&h.name))
        {
            let present = json!({"journal": {"server": DOWNSTREAM, "method": "initialize", "during": [step],
                "count": {"min": 1}, "header": h.name.to_ascii_lowercase()}});
            checks.push(json!({
                "check": "HEALTH-010",
                "title": format!("the health probe of `{k}` carries the configured `{}` header", h.name),
                "given": {"journal": {"server": DOWNSTREAM, "method": "initialize", "during": [step], "count": {"min": 1}}},
                "assert": present,
            }));
            let (check, how) = h.value_check();
            checks.push(json!({
                "check": check,
                "title": format!("on the health probe of `{k}`, the `{}` header {how} ({})", h.name, fingerprint(&h.value)),
                "given": present,
                "assert": {"journal": {"server": DOWNSTREAM, "method": "initialize", "during": [step],
                    "header": h.name.to_ascii_lowercase(), "header_equals": format!("{}{}", h.prefix(), h.value)}},
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
        (bearer, scheme): (Option<&str>, &str),
        checks: &mut Vec<Value>,
    ) {
        // Each entry states what it needs observed (`given`): a downstream that refused a
        // credential the bridge got wrong still shows that credential on the health probe.
        let tool = tool.name();
        // A configured `Authorization` on a server that forwards a call's bearer is judged by the
        // rule that makes it win (AUTH-003); elsewhere by the placeholder's expansion (CFG-010).
        let contested = self.forward && bearer.is_some();
        for h in &self.headers {
            let is_auth = h.name.eq_ignore_ascii_case("authorization");
            // A secret is named by its fingerprint, the form the witness shows it in.
            let fp = fingerprint(&h.value);
            let (check, title) = if is_auth && contested {
                (
                    "AUTH-003",
                    format!(
                        "the configured `{}` header (a `${{VAR}}` after the scheme, {fp}) wins over the call's forwarded bearer ({})",
                        h.name,
                        fingerprint(bearer.unwrap_or_default())
                    ),
                )
            } else {
                let (check, how) = h.value_check();
                (
                    check,
                    format!(
                        "the `{}` header reaches the downstream: it {how}{}",
                        h.name,
                        if is_auth || crate::redact::is_credential_name(&h.name) {
                            format!(" ({fp})")
                        } else {
                            String::new()
                        }
                    ),
                )
            };
            checks.push(json!({
                "check": check,
                "title": title,
                "given": {"journal": {"server": DOWNSTREAM, "tool": tool, "during": [step], "count": {"min": 1}}},
                "assert": {"journal": {"server": DOWNSTREAM, "method": "tools/call", "during": [step],
                    "header": h.name.to_ascii_lowercase(), "header_equals": format!("{}{}", h.prefix(), h.value)}},
            }));
        }
        let explicit = self
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("authorization"));
        // Without a bearer on any call of the case, an absent Authorization shows nothing that
        // could have leaked: no entry.
        if explicit || !self.bearer {
            return;
        }
        let basic = scheme.eq_ignore_ascii_case("basic");
        let (check, expect, title) = match (self.forward, bearer) {
            (true, Some(_)) if basic => (
                "AUTH-021",
                json!({"header_absent": true}),
                format!(
                    "the call's `Basic` credential during `{step}` holds no bearer token: the opted-in downstream gets no Authorization header"
                ),
            ),
            (true, Some(b)) => (
                "AUTH-021",
                json!({"header_equals": format!("Bearer {b}")}),
                format!(
                    "the downstream opted in: its Authorization during `{step}` is this call's bearer ({}){}",
                    fingerprint(b),
                    if scheme == "Bearer" {
                        String::new()
                    } else {
                        format!(
                            ", sent to the bridge as `{scheme} …` (an authentication scheme is case-insensitive, RFC 9110 §11.1)"
                        )
                    }
                ),
            ),
            _ => (
                "AUTH-020",
                json!({"header_absent": true}),
                format!(
                    "the downstream did not opt in: it gets no Authorization during `{step}`, whose call carried {}",
                    if basic {
                        "a `Basic` credential"
                    } else {
                        "a bearer"
                    }
                ),
            ),
        };
        let mut journal = json!({"server": DOWNSTREAM, "method": "tools/call", "during": [step], "header": "authorization"});
        if let (Some(j), Some(e)) = (journal.as_object_mut(), expect.as_object()) {
            j.extend(e.clone());
        }
        checks.push(json!({
            "check": check,
            "title": title,
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
            Change::Title(t) | Change::Description(t) => {
                let is_title = matches!(change, Change::Title(_));
                if let Some(a) = agents.first_mut() {
                    let slot = if is_title {
                        &mut a.title
                    } else {
                        &mut a.description
                    };
                    *slot = Some(t.clone());
                }
                let field = if is_title { "title" } else { "description" };
                let path = format!(
                    "$.body.servers[?@.server.name == '{}'].server.{field}",
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
        let assert_on = |step: &str| json!({"output": merge(json!({"step": step}), &until)});
        let mut builtins = vec!["REG-001", "REG-003", "REG-004", "REG-005", "REG-007"];
        if let Some(check) = check {
            steps.push(
                json!({"name": "after", "registry": {}, "until": {"within": "8s", "that": until}}),
            );
            checks.push(json!({
                "check": check,
                "title": "after the reload the registry reflects the added or removed agent",
                "assert": assert_on("after"),
            }));
            builtins.push("REG-006");
        } else {
            // The changed agent may be restarted, leaving the registry for a moment.
            let all = json!({"path": "$.body.servers[*]", "count": {"equals": agents.len()}});
            steps.push(
                json!({"name": "after", "registry": {}, "until": {"within": "8s", "that": all}}),
            );
            // The field is read once it shows (or after 8 s), so the note does not depend on
            // how soon after the agents' return the registry was read.
            steps.push(
                json!({"name": "settled", "registry": {}, "until": {"within": "8s", "that": until}}),
            );
            checks.push(json!({
                "title": "after the reload the registry shows the changed field",
                "level": "INFO",
                "assert": assert_on("settled"),
            }));
        }
        for c in builtins {
            checks.push(json!({"check": c, "steps": ["after"]}));
        }
    }
}

/// The JSONPath filter of a history message keeping one image: an image block with its bytes
/// and type, or an embedded resource whose blob and type are the image's.
fn image_in_history(data: &str, mime: &str) -> String {
    format!(
        "(@.content.type == 'image' && @.content.data == '{data}' && @.content.mimeType == '{mime}') \
         || (@.content.type == 'resource' && @.content.resource.blob == '{data}' \
         && @.content.resource.mimeType == '{mime}')"
    )
}

fn agents_map(agents: &[Agent]) -> Value {
    let mut m = Map::new();
    for a in agents {
        let parent = a.depends_on.and_then(|i| agents.get(i));
        let mut spec = Map::new();
        if let Some(m) = a.module() {
            spec.insert("module".into(), json!(m));
        }
        if let Some(t) = &a.title {
            spec.insert("title".into(), json!(t));
        }
        if let Some(d) = &a.description {
            spec.insert("description".into(), json!(d));
        }
        if a.tools() {
            spec.insert("servers".into(), json!([DOWNSTREAM]));
        }
        if let Some(p) = parent {
            spec.insert("depends_on".into(), json!([p.key]));
        }
        m.insert(a.key.clone(), Value::Object(spec));
    }
    Value::Object(m)
}

fn merge(mut a: Value, b: &Value) -> Value {
    if let (Some(x), Some(y)) = (a.as_object_mut(), b.as_object()) {
        x.extend(y.clone());
    }
    a
}
