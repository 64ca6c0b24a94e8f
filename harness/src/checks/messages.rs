//! Message checks (MSG-*): the message tool, the agent loop, images, provider failures and history.

use crate::client::JsonRef;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::*;
use super::params::OneOrMany;
use super::premise;
use super::read::excerpt;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, InstanceScope, StepAction};
use crate::target::MessageKey;

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("MSG-001", message_tool_listed),
    Check::new("MSG-002", msg_round_trip)
        .premise(premise::llm_requests)
        .params::<MessageRoundTrip>()
        .by_default("every non-cancelled send ends in a non-error result with text"),
    Check::new("MSG-003", msg_images)
        .premise(premise::llm_requests)
        .params::<MessageImages>()
        .by_default("`model_capabilities.vision`; on: every valid image's data reaches a model request; off, or an image that is not base64 `image/*` data: an `isError` result or JSON-RPC error naming images or vision, nothing sent to the model"),
    Check::new("MSG-004", msg_provider_failure)
        .premise(premise::llm_requests)
        .params::<MessageProviderFailure>()
        .by_default("sends during which a mock LLM answered ≥ 400: an `isError` result, and later steps to the agent answer (health not `error`)"),
    Check::new("MSG-005", msg_history)
        .premise(premise::llm_requests)
        .by_default("`history` steps and `request` steps getting a `*_history` prompt: every earlier successful send's message and reply appear (across connections unless `instance_scope` is per connection); a `request`-scoped agent serves none"),
];

pub(super) fn message_tool_listed(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::ListTools]);
    if steps.is_empty() {
        return na("list_tools");
    }
    let mut undecided: Option<String> = None;
    let mut kept = Vec::new();
    let default_key = MessageKey::default();
    let key = o.message_key.as_ref().unwrap_or(&default_key);
    for s in steps {
        let agent = s.agent.clone().unwrap_or_default();
        let want = o
            .message_tools
            .get(&agent)
            .cloned()
            .unwrap_or_else(|| "send_message".into());
        if want != "send_message" && *key != default_key {
            // Seed 001's `send_message(message)` is not what this target serves: where the
            // profile names both the tool and the key, a listing can only confirm the profile.
            return Outcome::NotApplicable(format!(
                "the profile names the message tool (`{want}`) and its key (`{key}`): seed 001's `send_message` definition is not this target's, and the listing could only confirm the profile"
            ));
        }
        let Some(t) = super::health::tools_listed(s)
            .into_iter()
            .find(|t| t.get("name").and_then(JsonRef::as_str) == Some(want.as_str()))
        else {
            if want != "send_message" {
                // A name the profile gives: the profile and the implementation disagree.
                return Outcome::Error(format!(
                    "`{}`: no tool named `{want}` (the profile's `message_tool`) is listed",
                    s.name
                ));
            }
            return fail(
                format!("`{want}` is not listed"),
                vec![Evidence::new(
                    &s.name,
                    format!("a tool named `{want}`"),
                    "none",
                )],
            );
        };
        let schema = t.get("inputSchema").map_or(Value::Null, JsonRef::to_value);
        // Where the profile sends the message (`message` unless its template says): a path of
        // keys, each a required property of the (sub)schema above it.
        match message_property(&schema, key) {
            Walked::String => kept.push(Witness::new(
                format!("`{want}` as `{}` listed it", s.name),
                format!("inputSchema {}", excerpt(&schema, 200)),
            )),
            Walked::Broken { level, at } if *key != default_key => {
                // A key the profile gives (seed 001's is `message`): where the profile says the
                // message goes, the tool takes no required string — the profile and the
                // implementation disagree, no verdict on the implementation.
                return Outcome::Error(format!(
                    "`{}`: `{want}` takes no required string at `{key}` (the profile's message key); {}: {}",
                    s.name,
                    level_name(key, at),
                    excerpt(level, 300)
                ));
            }
            Walked::Broken { level, at } => {
                return fail(
                    format!("`{key}` is not a required string"),
                    vec![Evidence::new(
                        &s.name,
                        expected_message_property(key),
                        if key.keys().len() == 1 {
                            excerpt(&schema, 300)
                        } else {
                            format!("{}: {}", level_name(key, at), excerpt(level, 300))
                        },
                    )],
                );
            }
            Walked::Unresolved(why) => {
                // Nothing to judge in this listing; a later listing may still break the rule.
                undecided.get_or_insert_with(|| {
                    format!("`{want}`'s inputSchema cannot be walked to `{key}`: {why}")
                });
            }
        }
        if let Some(images) = schema.pointer("/properties/images")
            && images.get("type").is_some_and(|t| {
                t != "array" && !t.as_array().is_some_and(|a| a.contains(&json!("array")))
            })
        {
            return Outcome::breaks(
                "s001.send-message-images",
                "`images` is not an array",
                vec![Evidence::new(
                    &s.name,
                    "images: array",
                    excerpt(images, 200),
                )],
            );
        }
    }
    match undecided {
        Some(why) => Outcome::Inconclusive(why),
        None => Outcome::Kept(kept),
    }
}

/// How far [`message_property`] got along the message key in a tool's `inputSchema`.
enum Walked<'a> {
    /// Every key is a required property, and the last one's schema is `type: string`.
    String,
    /// The (sub)schema at key index `at` (`at == keys.len()`: the last key's own schema) lacks
    /// the key as a required property, or is not a string.
    Broken { level: &'a Value, at: usize },
    /// A `$ref` (or a combinator) the walk cannot follow: nothing to judge.
    Unresolved(String),
}

/// Walks `schema` along `key`: at each level the (sub)schema, its `$ref` into the schema's own
/// `$defs` or `definitions` followed, must list the key in `properties` and in `required`; the
/// last key's schema must be `type: string`.
fn message_property<'a>(schema: &'a Value, key: &MessageKey) -> Walked<'a> {
    let mut node = schema;
    for (at, k) in key.keys().iter().enumerate() {
        let level = match resolve_ref(schema, node) {
            Ok(level) => level,
            Err(why) => return Walked::Unresolved(why.to_string()),
        };
        let property = level.get("properties").and_then(|p| p.get(k));
        let required = level
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.contains(&json!(k)));
        if property.is_none() && level.get("properties").is_none() {
            // Declared, if at all, behind `allOf`/`anyOf`/`oneOf`: not walked.
            if let Some(c) = ["allOf", "anyOf", "oneOf"]
                .into_iter()
                .find(|c| level.get(c).is_some())
            {
                return Walked::Unresolved(format!(
                    "{} declares its properties through `{c}`, which is not walked: {}",
                    level_name(key, at),
                    excerpt(level, 200)
                ));
            }
        }
        match property {
            Some(p) if required => node = p,
            _ => return Walked::Broken { level, at },
        }
    }
    match resolve_ref(schema, node) {
        Ok(leaf) if takes_a_string(leaf) => Walked::String,
        Ok(leaf) => Walked::Broken {
            level: leaf,
            at: key.keys().len(),
        },
        Err(why) => Walked::Unresolved(why.to_string()),
    }
}

/// A schema whose `type` is `string`, or a list of types holding `string`, or an `anyOf` /
/// `oneOf` whose branches other than `null` all take a string (pydantic writes `Optional[str]`
/// as `["string", "null"]` or as `anyOf: [{type: string}, {type: null}]`): a string message is
/// valid against it.
fn takes_a_string(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => ["anyOf", "oneOf"].into_iter().any(|k| {
            let Some(branches) = schema.get(k).and_then(Value::as_array) else {
                return false;
            };
            let not_null: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            !not_null.is_empty() && not_null.iter().all(|b| takes_a_string(b))
        }),
    }
}

/// Why a `$ref` of a listed tool's `inputSchema` is not followed.
#[derive(Debug, thiserror::Error)]
enum RefError {
    /// It points outside the schema's own `$defs` and `definitions`, or at nothing there.
    #[error("`$ref` {0} does not point into the schema's own `$defs` or `definitions`")]
    Elsewhere(String),
    /// A chain of references too long to be a schema's own definitions.
    #[error("more than {0} `$ref`s in a row")]
    TooLong(usize),
}

/// `node` with its `$ref`s followed into the root schema's own `$defs` or `definitions`
/// (`#/$defs/NAME`, `#/definitions/NAME`); any other reference is an error naming it.
fn resolve_ref<'a>(root: &'a Value, node: &'a Value) -> Result<&'a Value, RefError> {
    const MAX_HOPS: usize = 32;
    let mut node = node;
    for _ in 0..MAX_HOPS {
        let Some(r) = node.get("$ref") else {
            return Ok(node);
        };
        let target = r
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .filter(|p| p.starts_with("/$defs/") || p.starts_with("/definitions/"))
            .and_then(|p| root.pointer(p));
        match target {
            Some(t) => node = t,
            None => return Err(RefError::Elsewhere(excerpt(r, 120))),
        }
    }
    Err(RefError::TooLong(MAX_HOPS))
}

/// What MSG-001 wants of the message key, for the evidence.
fn expected_message_property(key: &MessageKey) -> String {
    let keys = key.keys();
    let path: Vec<String> = keys.iter().map(|k| format!("properties.{k}")).collect();
    if keys.len() == 1 {
        format!("{}.type = string, required", path.join("."))
    } else {
        format!(
            "{}.type = string, each key required at its level (`$ref`s followed)",
            path.join(".")
        )
    }
}

/// The schema level `at` of the walk along `key`, named for the evidence: `inputSchema`,
/// `inputSchema at run_args`, ….
fn level_name(key: &MessageKey, at: usize) -> String {
    if at == 0 {
        "inputSchema".to_owned()
    } else {
        format!("inputSchema at {}", key.keys()[..at].join("."))
    }
}

/// MSG-002: a message round-trips through the agent loop to a text result (`with: {contains}`
/// for its text; `with: {via_model: true}` also wants a mock LLM request during the step).
pub(super) fn msg_round_trip(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send])
        .into_iter()
        .filter(|s| !cancelled(s))
        .collect();
    if steps.is_empty() {
        return na("send");
    }
    let p: MessageRoundTrip = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let contains = p.contains.as_deref();
    let via_model = p.via_model;
    if via_model && o.llm_journals.is_empty() {
        return Outcome::Error("`via_model: true` needs a mock LLM in the ecosystem".into());
    }
    let mut kept = Vec::new();
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("`{}` failed: {e}", s.name), vec![]);
        }
        if let Some(e) = jsonrpc_error(s) {
            return fail(
                format!("`{}` got a JSON-RPC error", s.name),
                vec![Evidence::new(&s.name, "a tool result", excerpt(e, 240))],
            );
        }
        // The profile says where the answer stands in the reply; a reply it cannot be read in
        // is a profile and implementation that disagree, not a breach of a rule: no verdict.
        if let Some(why) = s.observation.reply_error()
            && !result_text(s).trim().is_empty()
        {
            return Outcome::Error(format!(
                "`{}`: the answer could not be read where the profile's `reply_path` says ({why}); the result was {}",
                s.name,
                excerpt(result_or_null(s), 300)
            ));
        }
        let text = s.observation.text().unwrap_or("");
        if is_error_result(s) || text.is_empty() {
            return fail(
                format!("`{}` did not come back as a text result", s.name),
                vec![Evidence::new(
                    &s.name,
                    "isError false, a non-empty text block",
                    excerpt(result_or_null(s), 300),
                )],
            );
        }
        if let Some(want) = contains
            && !text.contains(want)
        {
            return fail(
                format!("`{}` text lacks {want:?}", s.name),
                vec![Evidence::new(
                    &s.name,
                    format!("contains {want:?}"),
                    excerpt(&json!(text), 300),
                )],
            );
        }
        if via_model && llm_requests_during(o, s).is_empty() {
            return fail(
                format!("`{}` answered without asking the model", s.name),
                vec![Evidence::new(
                    &s.name,
                    "a request to the mock LLM",
                    "none during the step",
                )],
            );
        }
        kept.push(Witness::new(
            &s.name,
            format!(
                "a text result after {} request(s) to the mock model during the step: {}",
                llm_requests_during(o, s).len(),
                excerpt(&json!(text), 140)
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// MSG-003: images reach the model beside the text (`with: {vision}`; default: the deployment's
/// `model_capabilities.vision`). Seed 001 says only that the message "is sent as a
/// `PromptMessageExtended` containing both `TextContent` and `ImageContent` parts — the agent's
/// underlying model must support vision": the last clause binds the deployment, so a model
/// without vision, or data that is not base64 `image/*`, is outside what the rule judges (no
/// seed sentence says Pallas refuses them, nor how).
pub(super) fn msg_images(c: &CheckSpec, o: &Observed) -> Outcome {
    let with_images: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Send])
        .into_iter()
        .filter(|s| !images_sent(s).is_empty())
        .collect();
    if with_images.is_empty() {
        return na("send with images");
    }
    let p: MessageImages = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let vision = p.vision.or_else(|| {
        o.deployment
            .as_ref()
            .and_then(|d| d.model_capabilities.as_ref())
            .and_then(|m| m.vision)
    });
    let Some(vision) = vision else {
        return Outcome::Error(
            "MSG-003 needs `with: {vision}` or `model_capabilities.vision`".into(),
        );
    };
    if !vision {
        return na(
            "send with images to a model with vision (the seed: \"the agent's underlying model must support vision\")",
        );
    }
    let steps: Vec<&StepRecord> = with_images
        .into_iter()
        .filter(|s| images_sent(s).iter().all(image_is_valid))
        .collect();
    if steps.is_empty() {
        return na("send with base64 `image/*` images");
    }
    if o.llm_journals.is_empty() {
        return Outcome::Error("no mock LLM journal to see what reached the model".into());
    }
    let mut kept = Vec::new();
    for s in steps {
        let data: Vec<String> = images_sent(s)
            .iter()
            .filter_map(|i| i.get("data").and_then(Value::as_str))
            .map(|d| d.chars().take(64).collect())
            .collect();
        let bodies = llm_requests_during(o, s);
        let reached = data
            .iter()
            .all(|d| bodies.iter().any(|b| b.contains(d.as_str())));
        let refused = is_error_result(s) || jsonrpc_error(s).is_some();
        if refused || !reached {
            return fail(
                format!("the images of `{}` did not reach the model", s.name),
                vec![Evidence::new(
                    &s.name,
                    "every image's data in a model request, a normal result",
                    if refused {
                        "refused".to_owned()
                    } else {
                        format!("{} model request(s) without it", bodies.len())
                    },
                )],
            );
        }
        kept.push(Witness::new(
            &s.name,
            format!(
                "{} image(s) sent, each one's data found in one of {} model request(s)",
                data.len(),
                bodies.len()
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// The `images` a `send` step sent.
fn images_sent(s: &StepRecord) -> &[Value] {
    match s.action() {
        Some(StepAction::Send(m)) => &m.images,
        _ => &[],
    }
}

/// Whether an `images` item is base64 data of an `image/*` type.
pub(super) fn image_is_valid(i: &Value) -> bool {
    use base64::Engine as _;
    let mime = i
        .get("mime_type")
        .or_else(|| i.get("mimeType"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let data = i.get("data").and_then(Value::as_str).unwrap_or("");
    mime.starts_with("image/")
        && !data.is_empty()
        && base64::engine::general_purpose::STANDARD
            .decode(data)
            .is_ok()
}

/// MSG-004: a provider failure gives an `isError` result and the agent stays healthy
/// (`with: {step}`; default: sends during which a mock LLM answered an error status).
pub(super) fn msg_provider_failure(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: MessageProviderFailure = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let steps: Vec<&StepRecord> = named_steps(o, p.step.as_ref()).unwrap_or_else(|| {
        steps_of(o, c, &[ActionKind::Send])
            .into_iter()
            .filter(|s| {
                o.llm_journals
                    .values()
                    .flatten()
                    .any(|e| within(&e.time, s) && e.status.is_some_and(|st| st >= 400))
            })
            .collect()
    });
    if steps.is_empty() {
        return Outcome::Inconclusive("no send step met a provider failure".into());
    }
    let mut kept = Vec::new();
    for s in &steps {
        if !is_error_result(s) {
            let seen = match jsonrpc_error(s) {
                Some(e) => format!("JSON-RPC error {}", excerpt(e, 200)),
                None => s
                    .error
                    .clone()
                    .unwrap_or_else(|| excerpt(result_or_null(s), 200)),
            };
            return fail(
                format!(
                    "the provider failure during `{}` is not an isError result",
                    s.name
                ),
                vec![Evidence::new(&s.name, "result.isError = true", seen)],
            );
        }
        for later in o
            .steps
            .iter()
            .filter(|x| x.agent == s.agent && x.started_at >= s.ended_at)
        {
            let dead = later.error.is_some()
                || later
                    .observation
                    .health()
                    .is_some_and(|h| h.status == "error");
            if dead {
                return fail(
                    format!("the agent did not stay healthy after `{}`", s.name),
                    vec![Evidence::new(
                        &later.name,
                        "answers; health not `error`",
                        later
                            .error
                            .clone()
                            .unwrap_or_else(|| excerpt(&json!(later.observation.health()), 200)),
                    )],
                );
            }
        }
        let later = o
            .steps
            .iter()
            .filter(|x| x.agent == s.agent && x.started_at >= s.ended_at)
            .count();
        kept.push(Witness::new(
            &s.name,
            format!(
                "an isError result ({}); {later} later step(s) to the agent answered",
                excerpt(result_or_null(s), 160)
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// MSG-005: `{agent}_history` holds every earlier message and reply sent to the agent (a
/// request-scoped agent has none).
/// A message call that ended before `h` began with an answer: no harness error, no `isError`,
/// not cancelled.
fn answered_before(s: &StepRecord, h: &StepRecord) -> bool {
    matches!(s.action(), Some(StepAction::Send(_)))
        && s.ended_at <= h.started_at
        && s.error.is_none()
        && !is_error_result(s)
        && !cancelled(s)
}

/// An error when one of `calls` answered before `h` but its answer could not be read where the
/// profile's `reply_path` says: whether `h`'s history holds it is not observable.
fn unreadable_answer<'a>(
    mut calls: impl Iterator<Item = &'a StepRecord>,
    h: &StepRecord,
) -> Option<Outcome> {
    calls
        .find(|s| answered_before(s, h) && s.observation.reply_error().is_some())
        .map(|s| {
            Outcome::Error(format!(
                "`{}`'s answer could not be read where the profile's `reply_path` says: whether `{}` holds it is not observable",
                s.name, h.name
            ))
        })
}

/// `history:` steps, and `request:` steps getting a `*_history` prompt.
fn history_steps<'a>(o: &'a Observed, c: &CheckSpec) -> Vec<&'a StepRecord> {
    steps_of(o, c, &[ActionKind::History, ActionKind::Request])
        .into_iter()
        .filter(|s| match s.action() {
            Some(StepAction::History(_)) => true,
            Some(StepAction::Request(r)) => {
                r.method == "prompts/get"
                    && r.params
                        .as_ref()
                        .and_then(|p| p.get("name"))
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.ends_with("_history"))
            }
            _ => false,
        })
        .collect()
}

/// MSG-005 on a request-scoped agent's history step: no stored conversation is served.
fn request_scoped_history(h: &StepRecord) -> Result<Witness, Outcome> {
    let messages = h
        .observation
        .result()
        .and_then(|r| r.get("messages"))
        .and_then(JsonRef::as_array)
        .map_or(0, |a| a.len());
    if messages > 0 {
        return Err(fail(
            format!(
                "`{}`: a request-scoped agent serves a stored conversation",
                h.name
            ),
            vec![Evidence::new(
                &h.name,
                "no history prompt (a JSON-RPC error)",
                format!("{messages} message(s)"),
            )],
        ));
    }
    Ok(Witness::new(
        &h.name,
        format!(
            "a request-scoped agent's history prompt: {}",
            excerpt(
                h.observation
                    .jsonrpc_error()
                    .or_else(|| h.observation.result())
                    .unwrap_or_else(JsonRef::null),
                160
            )
        ),
    ))
}

pub(super) fn msg_history(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = history_steps(o, c);
    if steps.is_empty() {
        return na("history");
    }
    // Connection alias → agent key (from `connect` steps); a history is shared by every
    // connection to the agent unless its `instance_scope` keeps one per connection.
    let agent_of = |conn: &Option<String>| -> Option<String> {
        let conn = conn.as_deref()?;
        Some(
            o.steps
                .iter()
                .find_map(|s| match s.action() {
                    Some(StepAction::Connect(c)) if s.agent.as_deref() == Some(conn) => {
                        Some(c.agent.as_str())
                    }
                    _ => None,
                })
                .unwrap_or(conn)
                .to_owned(),
        )
    };
    let scope_of = |agent: &Option<String>| -> Option<InstanceScope> {
        o.deployment
            .as_ref()
            .zip(agent.as_ref())
            .and_then(|(d, a)| d.agents.get(a))
            .and_then(|a| a.instance_scope)
    };
    let mut judged = 0;
    let mut kept = Vec::new();
    for h in steps {
        let h_agent = agent_of(&h.agent);
        let scope = scope_of(&h_agent);
        if scope == Some(InstanceScope::Request) {
            // Seed 001: no history prompt for request-scoped agents, so nothing is stored.
            judged += 1;
            match request_scoped_history(h) {
                Ok(w) => kept.push(w),
                Err(broken) => return broken,
            }
            continue;
        }
        if h.error.is_some() || h.observation.result().is_none_or(JsonRef::is_null) {
            return fail(
                format!("`{}` got no prompt", h.name),
                vec![Evidence::new(
                    &h.name,
                    "a prompts/get result",
                    h.error.clone().unwrap_or_else(|| {
                        excerpt(
                            h.observation.jsonrpc_error().unwrap_or_else(JsonRef::null),
                            200,
                        )
                    }),
                )],
            );
        }
        let history = result_text(h);
        let scoped = scope.is_some_and(|sc| sc != InstanceScope::Shared);
        let of_agent = |s: &&StepRecord| {
            if scoped {
                s.agent == h.agent
            } else {
                agent_of(&s.agent) == h_agent
            }
        };
        if let Some(e) = unreadable_answer(o.steps.iter().filter(of_agent), h) {
            return e;
        }
        for s in o
            .steps
            .iter()
            .filter(of_agent)
            .filter(|s| answered_before(s, h) && s.observation.reply_error().is_none())
        {
            judged += 1;
            kept.push(Witness::new(
                format!("`{}` against `{}`", h.name, s.name),
                format!(
                    "the message and reply of `{}` in a history of {} byte(s)",
                    s.name,
                    history.len()
                ),
            ));
            let msg = match s.action() {
                Some(StepAction::Send(m)) => m.message.as_str(),
                _ => "",
            };
            let reply = s.observation.text().unwrap_or("");
            for (what, text) in [("message", msg), ("reply", reply)] {
                if !text.is_empty() && !history.contains(text) {
                    return fail(
                        format!("`{}` lacks the {what} of `{}`", h.name, s.name),
                        vec![Evidence::new(
                            &h.name,
                            excerpt(&json!(text), 200),
                            excerpt(&json!(history), 300),
                        )],
                    );
                }
            }
        }
    }
    if judged == 0 {
        return Outcome::Inconclusive("no message was sent before the history step".into());
    }
    Outcome::Kept(kept)
}

/// The `with:` parameters of `MSG-002`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MessageRoundTrip {
    /// Text every answer must contain.
    pub(super) contains: Option<String>,
    /// The answer must come from the model (a model request was made during the send).
    #[serde(default)]
    pub(super) via_model: bool,
}

/// The `with:` parameters of `MSG-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MessageImages {
    /// Whether the model accepts images (default: the deployment's `model_capabilities.vision`).
    pub(super) vision: Option<bool>,
}

/// The `with:` parameters of `MSG-004`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MessageProviderFailure {
    /// The sends to judge (names or globs).
    pub(super) step: Option<OneOrMany>,
}
