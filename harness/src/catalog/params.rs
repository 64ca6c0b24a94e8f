//! The `with:` parameters of the builtin checks, one typed struct per check that takes any.
//!
//! A scenario's `with:` is read into its check's struct when the file is loaded: an unknown key
//! (`stauts`), a wrong type or `with:` on a check that takes none is a load-time error with the
//! file, line and a did-you-mean hint, never a check that silently weakens. The evaluators read
//! the same structs. The `with:` table of `harness/docs/scenario-format.md` is generated from
//! [`PARAMS`] (a test keeps it in step).

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One string or a list of strings.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// A list.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings, in order.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Self::One(s) => vec![s.clone()],
            Self::Many(v) => v.clone(),
        }
    }
}

/// Strings of an optional one-or-many parameter (empty when absent).
pub fn strings(p: Option<&OneOrMany>) -> Vec<String> {
    p.map(OneOrMany::to_vec).unwrap_or_default()
}

/// `AUTH-001`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthForwarded {
    /// The downstream server (mock name) that must receive each inbound bearer (required).
    pub server: Option<String>,
}

/// `AUTH-002`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthNotLeaked {
    /// The server that must never see an inbound bearer.
    pub server: Option<String>,
}

/// `AUTH-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthExplicit {
    /// The server with an explicit `Authorization` header.
    pub server: Option<String>,
    /// The header value it must receive (templated); default: the configured one.
    pub header: Option<String>,
}

/// `AUTH-005`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthNone {
    /// Bearer-less steps to judge (names or globs).
    pub step: Option<OneOrMany>,
    /// The forwarding server that must receive no bearer.
    pub server: Option<String>,
}

/// `HEALTH-004`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthStatus {
    /// The status every health answer must report (`ok`, `degraded`, `error`).
    pub status: Option<String>,
    /// Words the health message must contain (server names).
    #[serde(default)]
    pub mentions: Vec<String>,
}

/// `HEALTH-006`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthFast {
    /// The budget of one `get_health` answer, in milliseconds (default 1000).
    pub max_ms: Option<f64>,
}

/// `HEALTH-009`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthGate {
    /// How Daedalus must gate chat (`enabled`, `disabled`…; a prefix).
    pub gate: Option<String>,
}

/// `PROG-008`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressTools {
    /// The tool calls progress must announce, as `server/tool`.
    pub tools: Option<OneOrMany>,
}

/// `PROG-010`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressCancel {
    /// How long after the cancellation progress may still arrive, in milliseconds (default 250).
    pub grace_ms: Option<f64>,
}

/// `MET-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsMove {
    /// The metric or metrics that must move.
    pub metric: Option<OneOrMany>,
    /// The metrics step scraped before the calls.
    pub before: Option<String>,
    /// The metrics step scraped after the calls.
    pub after: Option<String>,
    /// Labels the series must carry.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// `MSG-002`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageRoundTrip {
    /// Text every answer must contain.
    pub contains: Option<String>,
    /// The answer must come from the model (a model request was made during the send).
    #[serde(default)]
    pub via_model: bool,
}

/// `MSG-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageImages {
    /// Whether the model accepts images (default: the deployment's `model_capabilities.vision`).
    pub vision: Option<bool>,
}

/// `MSG-004`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageProviderFailure {
    /// The sends to judge (names or globs).
    pub step: Option<OneOrMany>,
}

/// `MCP-006`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSessions {
    /// Raw steps sent without a session (names or globs).
    pub missing_session: Option<OneOrMany>,
    /// Raw steps sent with an unknown session (names or globs).
    pub unknown_session: Option<OneOrMany>,
}

/// `MCP-007`, `MCP-011`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpToolErrors {
    /// Steps calling a tool that was not listed (names or globs).
    pub unknown_tool: Option<OneOrMany>,
    /// Steps calling a tool with arguments its `inputSchema` rejects (names or globs).
    pub invalid_arguments: Option<OneOrMany>,
}

/// Reads a `with:` value into a check's parameter struct, keeping only whether it fits.
pub type ReadFn = fn(&Value) -> Result<(), serde_json::Error>;

/// A check's parameters: its ID, the struct's schema and name, and what it checks by default.
pub struct ParamsDef {
    /// Check ID.
    pub id: &'static str,
    /// The JSON Schema of its `with:` struct; `None` when it takes no parameters.
    pub schema: Option<fn() -> Schema>,
    /// Reads a `with:` value into the struct, for validation.
    pub read: Option<ReadFn>,
    /// What the evaluator judges without parameters.
    pub default: &'static str,
}

fn read_as<T: DeserializeOwned>(v: &Value) -> Result<(), serde_json::Error> {
    T::deserialize(v).map(|_| ())
}

macro_rules! with {
    ($id:literal, $t:ty, $default:literal) => {
        ParamsDef {
            id: $id,
            schema: Some(|| schemars::schema_for!($t)),
            read: Some(read_as::<$t>),
            default: $default,
        }
    };
    ($id:literal, $default:literal) => {
        ParamsDef {
            id: $id,
            schema: None,
            read: None,
            default: $default,
        }
    };
}

/// The builtin checks whose evaluators take parameters or need scenario knowledge, in the order
/// of the documentation table. A builtin check not listed takes no `with:`.
pub const PARAMS: &[ParamsDef] = &[
    with!(
        "REG-004",
        "every entry's `streamable-http` remote points (port and path) at a deployed agent endpoint that answered"
    ),
    with!(
        "REG-006",
        "title = configured or the key's Python `title()` (`tech_research` → `Tech_Research`); version = configured or `1.0.0`; description = configured"
    ),
    with!("HEALTH-004", HealthStatus, "—"),
    with!("HEALTH-006", HealthFast, "1000 ms"),
    with!("HEALTH-009", HealthGate, "—"),
    with!(
        "PROG-008",
        ProgressTools,
        "tool calls the mock journals saw during each token-carrying step (steps overlapping another send are not attributed)"
    ),
    with!(
        "PROG-010",
        ProgressCancel,
        "250 ms after the progress that triggered `cancel_after_progress`"
    ),
    with!("AUTH-001", AuthForwarded, "— (`server` is required)"),
    with!(
        "AUTH-002",
        AuthNotLeaked,
        "every server without `forward_inbound_auth` or an explicit `Authorization`"
    ),
    with!(
        "AUTH-003",
        AuthExplicit,
        "every server with an explicit `Authorization` header; that header, templated"
    ),
    with!(
        "AUTH-004",
        "(use `steps:` with `for_each`) selected bearer-carrying calls: headers echoed in their result are their own; every bearer in the journals belongs to a call running at that time"
    ),
    with!(
        "AUTH-005",
        AuthNone,
        "every bearer-less send; every `forward_inbound_auth` server; requests that overlap a bearer-carrying call are not attributed"
    ),
    with!(
        "MET-003",
        MetricsMove,
        "`pallas_send_message_total` and `pallas_send_message_duration_seconds` (`_count`) grow between the first and last scrape around a send, or are positive in a scrape after one"
    ),
    with!(
        "MET-004",
        "`pallas_agent_health_status{agent}` is 1 / 0.5 / 0 for the last `get_health` before each scrape; when `ok`, every `pallas_downstream_up{agent}` is 1"
    ),
    with!(
        "MSG-002",
        MessageRoundTrip,
        "every non-cancelled send ends in a non-error result with text"
    ),
    with!(
        "MSG-003",
        MessageImages,
        "`model_capabilities.vision`; on: every valid image's data reaches a model request; off, or an image that is not base64 `image/*` data: an `isError` result or JSON-RPC error naming images or vision, nothing sent to the model"
    ),
    with!(
        "MSG-004",
        MessageProviderFailure,
        "sends during which a mock LLM answered ≥ 400: an `isError` result, and later steps to the agent answer (health not `error`)"
    ),
    with!(
        "MSG-005",
        "`history` steps and `request` steps getting a `*_history` prompt: every earlier successful send's message and reply appear (across connections unless `instance_scope` is per connection); a `request`-scoped agent serves none"
    ),
    with!(
        "MCP-003",
        "DELETE answers 2xx (405 is a skip) and the next request on the old session gets 404"
    ),
    with!(
        "MCP-005",
        "raw steps whose `Accept` does not accept one of the two types get 406 (media ranges as RFC 9110 reads them: `*/*` or `application/*` accepts `application/json`, `q=0` refuses)"
    ),
    with!(
        "MCP-006",
        McpSessions,
        "raw steps with `with_session: false` (not `initialize`) get 400; raw steps with their own `Mcp-Session-Id` get 404"
    ),
    with!(
        "MCP-007",
        McpToolErrors,
        "`call`/raw `tools/call` steps of tools no `list_tools` listed get a JSON-RPC error"
    ),
    with!(
        "MCP-011",
        McpToolErrors,
        "`call`/raw `tools/call` steps whose arguments the target's own listed `inputSchema` rejects get `isError` or -32602 with no model request at a mock LLM while they run (a model request then fails; no model request anywhere in the run, or another step running beside the call, is inconclusive); a step named in `invalid_arguments` that the schema accepts is not judged"
    ),
    with!(
        "MCP-008",
        "every message of an SSE response carries an event id; no non-JSON data"
    ),
    with!(
        "MCP-012",
        "`listen` steps (a GET of the MCP endpoint, with the session when one was issued): `Content-Type: text/event-stream` with a 2xx status, or 405"
    ),
    with!(
        "MCP-013",
        "the `notifications/initialized` of `connect` steps, `request` steps with `notification: true`, raw steps POSTing a notification or a response: when answered 2xx, 202 with no body (an HTTP error status is not judged)"
    ),
];

/// The parameters definition of `id`, if it is listed.
pub fn def(id: &str) -> Option<&'static ParamsDef> {
    PARAMS.iter().find(|p| p.id == id)
}

/// The parameter names `id` accepts (empty when it takes none).
pub fn keys(id: &str) -> Vec<String> {
    def(id)
        .and_then(|d| d.schema)
        .map(|s| {
            s().get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

/// A `with:` that its check cannot take.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamsError {
    /// The offending key, when the problem is one key.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Checks `with` against check `id`'s parameter struct.
pub fn validate(id: &str, with: &Value) -> Result<(), ParamsError> {
    let Some(read) = def(id).and_then(|d| d.read) else {
        return Err(ParamsError {
            key: with.as_object().and_then(|m| m.keys().next().cloned()),
            message: format!("check `{id}` takes no `with:` parameters"),
            hint: "remove `with:` (select steps with `steps:`)".into(),
        });
    };
    let known = keys(id);
    if let Some(m) = with.as_object() {
        for k in m.keys() {
            if !known.contains(k) {
                let hint = match crate::diag::did_you_mean(k, known.iter().map(String::as_str)) {
                    Some(m) => format!("did you mean `{m}`? `{id}` takes {}", list(&known)),
                    None => format!("`{id}` takes {}", list(&known)),
                };
                return Err(ParamsError {
                    key: Some(k.clone()),
                    message: format!("unknown parameter `{k}` of `{id}`"),
                    hint,
                });
            }
        }
    }
    read(with).map_err(|e| ParamsError {
        key: None,
        message: format!("`with:` of `{id}`: {e}"),
        hint: format!("`{id}` takes {}", list(&known)),
    })
}

fn list(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `with:` whose values do not fit its check's parameter struct.
#[derive(Debug, thiserror::Error)]
#[error("`with:` does not fit: {0}")]
pub struct WithDoesNotFit(#[source] pub serde_json::Error);

/// Reads check parameters into `T` (its defaults when `with:` is absent).
pub fn read<T: DeserializeOwned + Default>(with: Option<&Value>) -> Result<T, WithDoesNotFit> {
    match with {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => T::deserialize(v).map_err(WithDoesNotFit),
    }
}

/// The `with:` table of the scenario format reference, generated from [`PARAMS`].
pub fn to_markdown_table() -> String {
    let mut out = String::from("| check | `with:` | default |\n|---|---|---|\n");
    for d in PARAMS {
        let params = match d.schema {
            None => "—".to_owned(),
            Some(schema) => {
                let s = schema();
                let props = s.get("properties").and_then(Value::as_object);
                props
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| {
                        let doc = v
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        format!("`{k}`: {doc}")
                    })
                    .collect::<Vec<_>>()
                    .join("<br>")
            }
        };
        out.push_str(&format!("| `{}` | {params} | {} |\n", d.id, d.default));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_typo_in_a_parameter_is_named_with_the_closest_key() {
        let e = validate("HEALTH-004", &json!({"stauts": "degraded"})).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("stauts"));
        assert!(e.hint.contains("did you mean `status`"), "{e:?}");
    }

    #[test]
    fn a_wrong_type_and_parameters_of_a_check_that_takes_none_are_errors() {
        let e = validate("HEALTH-006", &json!({"max_ms": "fast"})).unwrap_err();
        assert!(e.message.contains("HEALTH-006"), "{e:?}");
        let e = validate("HEALTH-001", &json!({"status": "ok"})).unwrap_err();
        assert!(e.message.contains("takes no `with:`"), "{e:?}");
        assert!(validate("HEALTH-004", &json!({"status": "ok", "mentions": ["a"]})).is_ok());
        assert!(
            validate(
                "MET-003",
                &json!({"metric": ["a", "b"], "labels": {"agent": "x"}})
            )
            .is_ok()
        );
    }

    #[test]
    fn every_listed_check_is_in_the_catalog() {
        for d in PARAMS {
            assert!(
                crate::catalog::get(d.id).is_some(),
                "{} is not a check",
                d.id
            );
        }
    }
}
