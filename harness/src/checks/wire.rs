//! Wire validity against the bundled schemas: MCP messages against the schema of the negotiated
//! revision, registry entries against the official registry schema. Offline: the schemas are
//! compiled into the binary.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use jsonschema::json::{Json, SerdeJson};
use serde_json::{Value, json};

use crate::compact::{Compact, JsonRef};

static MCP_2025: &str = include_str!("../../schemas/mcp-schema.2025-11-25.json");
static MCP_2026: &str = include_str!("../../schemas/mcp-schema.2026-07-28.json");
static REGISTRY: &str = include_str!("../../schemas/server.schema.2025-12-11.json");

type Cache<F> = Mutex<HashMap<(String, String), Arc<jsonschema::Validator<F>>>>;
/// Validators of `Value`s (registry entries).
static CACHE: LazyLock<Cache<SerdeJson>> = LazyLock::new(|| Mutex::new(HashMap::new()));
/// Validators of received messages, read where they lie.
static COMPACT: LazyLock<Cache<Compact>> = LazyLock::new(|| Mutex::new(HashMap::new()));
static DOCS: LazyLock<HashMap<&'static str, Value>> = LazyLock::new(|| {
    let mut m = HashMap::new();
    for (k, t) in [
        ("2025-11-25", MCP_2025),
        ("2026-07-28", MCP_2026),
        ("registry", REGISTRY),
    ] {
        if let Ok(v) = serde_json::from_str(t) {
            m.insert(k, v);
        }
    }
    m
});

/// One schema violation: where, what, and an excerpt of the offending value.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// JSON pointer inside the validated value.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The offending value, shortened.
    pub excerpt: String,
}

/// Why a bundled schema cannot validate.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// A validation on another thread panicked while holding the validator cache.
    #[error("poisoned lock: another task failed inside")]
    CachePoisoned,
    /// No schema document of that name is bundled.
    #[error("schema `{0}` is not bundled")]
    NotBundled(&'static str),
    /// The schema (or the definition asked for) does not compile.
    #[error("{0}")]
    Invalid(#[source] jsonschema::ValidationError<'static>),
}

fn revision_key(version: &str) -> &'static str {
    if version.starts_with("2026") {
        "2026-07-28"
    } else {
        "2025-11-25"
    }
}

fn validator<F: Json>(
    cache: &Cache<F>,
    doc: &'static str,
    def: &str,
) -> Result<Arc<jsonschema::Validator<F>>, SchemaError> {
    let key = (doc.to_owned(), def.to_owned());
    if let Some(v) = cache
        .lock()
        .map_err(|_| SchemaError::CachePoisoned)?
        .get(&key)
    {
        return Ok(v.clone());
    }
    let base = DOCS.get(doc).ok_or(SchemaError::NotBundled(doc))?;
    let schema = if def.is_empty() {
        base.clone()
    } else {
        json!({"$schema": base.get("$schema"), "$defs": base.get("$defs"), "$ref": format!("#/$defs/{def}")})
    };
    let v = Arc::new(
        jsonschema::options_for::<F>()
            .build(&schema)
            .map_err(SchemaError::Invalid)?,
    );
    cache
        .lock()
        .map_err(|_| SchemaError::CachePoisoned)?
        .insert(key, v.clone());
    Ok(v)
}

fn violations(v: &jsonschema::Validator, value: &Value, prefix: &str) -> Vec<Violation> {
    v.iter_errors(value)
        .take(5)
        .map(|e| {
            let ptr = e.instance_path().to_string();
            let at = value.pointer(&ptr).unwrap_or(&Value::Null);
            violation(prefix, ptr, e.to_string(), super::read::excerpt(at, 160))
        })
        .collect()
}

fn compact_violations(
    v: &jsonschema::Validator<Compact>,
    value: JsonRef<'_>,
    prefix: &str,
) -> Vec<Violation> {
    v.iter_errors(value)
        .take(5)
        .map(|e| {
            let ptr = e.instance_path().to_string();
            let at = value.pointer(&ptr).unwrap_or_else(JsonRef::null);
            violation(prefix, ptr, e.to_string(), super::read::excerpt(at, 160))
        })
        .collect()
}

fn violation(prefix: &str, ptr: String, message: String, excerpt: String) -> Violation {
    Violation {
        path: format!("{prefix}{ptr}"),
        // A message may quote the instance: bounded like any evidence.
        message: crate::client::evidence::bounded_text(&message, 600),
        excerpt,
    }
}

fn def_for_method(doc: &'static str, method: &str) -> Option<String> {
    let defs = DOCS.get(doc)?.get("$defs")?.as_object()?;
    defs.iter()
        .find(|(name, d)| {
            !name.starts_with("JSONRPC")
                && d.pointer("/properties/method/const")
                    .and_then(Value::as_str)
                    == Some(method)
        })
        .map(|(n, _)| n.clone())
}

fn result_def(request_method: &str) -> Option<&'static str> {
    Some(match request_method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/get" => "GetPromptResult",
        "prompts/list" => "ListPromptsResult",
        _ => return None,
    })
}

/// Validates one received JSON-RPC message against the MCP schema of `version`.
/// `request_method` is the method of the request a response answers, when known.
/// The message is read where it lies: a 26 MB answer is validated without a copy.
pub fn validate_mcp(
    version: &str,
    message: JsonRef<'_>,
    request_method: Option<&str>,
) -> Result<Vec<Violation>, SchemaError> {
    let doc = revision_key(version);
    let envelope = validator(&COMPACT, doc, "JSONRPCMessage")?;
    let mut out = compact_violations(&envelope, message, "");
    if !out.is_empty() {
        return Ok(out);
    }
    if let Some(method) = message.get("method").and_then(JsonRef::as_str) {
        if message.get("id").is_none()
            && let Some(def) = def_for_method(doc, method)
        {
            out.extend(compact_violations(
                &*validator(&COMPACT, doc, &def)?,
                message,
                "",
            ));
        }
    } else if let (Some(result), Some(def)) =
        (message.get("result"), request_method.and_then(result_def))
    {
        out.extend(compact_violations(
            &*validator(&COMPACT, doc, def)?,
            result,
            "/result",
        ));
    }
    Ok(out)
}

/// Validates one registry `server` object against the official registry schema.
pub fn validate_registry_server(server: &Value) -> Result<Vec<Violation>, SchemaError> {
    let v = validator(&CACHE, "registry", "")?;
    Ok(violations(&v, server, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::JsonDoc;

    #[test]
    fn a_valid_progress_notification_passes_and_a_bad_one_is_located() {
        let ok = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}});
        assert!(
            validate_mcp("2025-11-25", JsonDoc::from_value(&ok).root(), None)
                .unwrap()
                .is_empty()
        );
        let bad = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"one"}});
        let v = validate_mcp("2025-11-25", JsonDoc::from_value(&bad).root(), None).unwrap();
        assert!(!v.is_empty());
        assert!(v[0].path.contains("progress"), "{v:?}");
    }

    #[test]
    fn a_call_tool_result_without_content_is_invalid() {
        let msg = json!({"jsonrpc":"2.0","id":1,"result":{"isError":false}});
        let v = validate_mcp(
            "2025-11-25",
            JsonDoc::from_value(&msg).root(),
            Some("tools/call"),
        )
        .unwrap();
        assert!(v.iter().any(|x| x.path.starts_with("/result")), "{v:?}");
    }

    #[test]
    fn registry_entries_are_validated_against_the_official_schema() {
        let good = json!({"name":"com.example.kit/research","description":"d","version":"1.0.0",
            "remotes":[{"type":"streamable-http","url":"http://127.0.0.1:1/mcp"}]});
        assert!(validate_registry_server(&good).unwrap().is_empty());
        let bad = json!({"name":"no-slash","description":"d","version":"1.0.0"});
        assert!(!validate_registry_server(&bad).unwrap().is_empty());
    }
}
