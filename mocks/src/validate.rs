//! Semantic checks of an ecosystem file beyond its shape, reported at the offending key.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::issue::Ports;
pub use crate::issue::SpecIssue;
use crate::spec::{EcosystemSpec, Reachability};
use crate::yaml::{self, YamlError};

/// Every semantic problem of `spec`, in document order of its sections.
pub fn validate_ecosystem(spec: &EcosystemSpec) -> Vec<SpecIssue> {
    let mut issues = Vec::new();
    let mut ports = Ports::default();
    for (name, llm) in &spec.llms {
        validate_llm(spec, name, llm, &mut ports, &mut issues);
    }
    for (name, mcp) in &spec.mcp_servers {
        validate_mcp(name, mcp, &mut ports, &mut issues);
    }
    if let Some(pallas) = &spec.pallas {
        for (section, names) in [
            ("llms", spec.llms.keys().collect::<Vec<_>>()),
            ("mcp_servers", spec.mcp_servers.keys().collect()),
        ] {
            for name in names.into_iter().filter(|n| is_pallas_url_name(n)) {
                issues.push(SpecIssue::new(
                    format!("{section}.{name}"),
                    format!(
                        "`{name}` is a name of the mock Pallas's URLs (`pallas`, `pallas.<agent>`)"
                    ),
                    Some("rename this mock"),
                ));
            }
        }
        crate::pallas::validate_pallas_into(pallas, "pallas", &mut ports, &mut issues);
    }
    issues
}

/// Whether `name` is one of the keys the mock Pallas takes in the URL map.
fn is_pallas_url_name(name: &str) -> bool {
    name == "pallas" || name.starts_with("pallas.")
}

fn validate_llm(
    spec: &EcosystemSpec,
    name: &str,
    llm: &crate::spec::LlmMockSpec,
    ports: &mut Ports,
    issues: &mut Vec<SpecIssue>,
) {
    let base = format!("llms.{name}");
    if spec.mcp_servers.contains_key(name) {
        issues.push(SpecIssue::new(
            base.clone(),
            format!("`{name}` names both an LLM and an MCP server"),
            Some("mock names must be unique across `llms` and `mcp_servers`"),
        ));
    }
    ports.check(llm.port, format!("{base}.port"), issues);
    if llm.models.is_empty() {
        issues.push(SpecIssue::new(
            format!("{base}.models"),
            "no models declared",
            Some("list at least one model, e.g. `models: [mock-model]`"),
        ));
    }
    if llm.api_key.as_deref() == Some("") {
        issues.push(SpecIssue::new(
            format!("{base}.api_key"),
            "empty API key",
            Some("omit `api_key` to accept any key"),
        ));
    }
    if let Some(f) = &llm.fault {
        check_fault(f, format!("{base}.fault"), issues);
    }
    for (i, turn) in llm.script.iter().enumerate() {
        validate_turn(turn, &format!("{base}.script.{i}"), issues);
    }
}

fn validate_turn(turn: &crate::spec::TurnSpec, tpath: &str, issues: &mut Vec<SpecIssue>) {
    if turn.text.is_none() && turn.tool_calls.is_empty() && turn.fault.is_none() {
        issues.push(SpecIssue::new(
            tpath.to_owned(),
            "turn has no `text`, `tool_calls` or `fault`",
            Some("a turn answers text, calls tools, or injects a fault"),
        ));
    }
    if let Some(re) = turn.when.as_ref().and_then(|w| w.last_user_regex.as_ref())
        && let Err(e) = regex::Regex::new(re)
    {
        issues.push(SpecIssue::new(
            format!("{tpath}.when.last_user_regex"),
            format!("regular expression does not compile: {e}"),
            Some("regex syntax: https://docs.rs/regex/latest/regex/#syntax"),
        ));
    }
    for (j, call) in turn.tool_calls.iter().enumerate() {
        let cpath = format!("{tpath}.tool_calls.{j}");
        if call.name.trim().is_empty() {
            issues.push(SpecIssue::new(
                format!("{cpath}.name"),
                "tool call with an empty name",
                Some("name the tool as offered to the model, e.g. `argos__search_web`"),
            ));
        }
        if !matches!(call.arguments, Value::Object(_) | Value::Null) {
            issues.push(SpecIssue::new(
                format!("{cpath}.arguments"),
                "tool call arguments must be a mapping (or null for empty arguments)",
                None,
            ));
        }
    }
    if let Some(f) = &turn.fault {
        check_fault(f, format!("{tpath}.fault"), issues);
    }
}

fn validate_mcp(
    name: &str,
    mcp: &crate::spec::McpMockSpec,
    ports: &mut Ports,
    issues: &mut Vec<SpecIssue>,
) {
    let base = format!("mcp_servers.{name}");
    ports.check(mcp.port, format!("{base}.port"), issues);
    if mcp.refuse_discover && mcp.era != crate::spec::WireEra::V2025_11_25 {
        issues.push(SpecIssue::new(
            format!("{base}.refuse_discover"),
            "`refuse_discover` makes a 2025-11-25-only server; a 2026-07-28 server answers `server/discover`",
            Some("remove it, or leave `era` at 2025-11-25"),
        ));
    }
    if let Some(pack) = &mcp.pack {
        for message in pack.issues() {
            issues.push(SpecIssue::new(format!("{base}.pack"), message, None));
        }
    }
    if mcp.reachability != Reachability::Up {
        let what = match mcp.reachability {
            Reachability::Down => "down",
            _ => "blackhole",
        };
        for (key, set) in [
            ("require_bearer", mcp.require_bearer.is_some()),
            ("require_headers", !mcp.require_headers.is_empty()),
            ("delete_status", mcp.delete_status.is_some()),
            ("http_status", mcp.http_status.is_some()),
            ("initialize_delay", mcp.initialize_delay.is_some()),
            ("initialize_error", mcp.initialize_error.is_some()),
            ("refuse_discover", mcp.refuse_discover),
        ] {
            if set {
                issues.push(SpecIssue::new(
                    format!("{base}.{key}"),
                    format!("`{key}` has no effect on a `{what}` server (it never answers)"),
                    Some("remove it, or set `reachability: up`"),
                ));
            }
        }
    }
    if let Some(s) = mcp.http_status
        && !(100..=599).contains(&s)
    {
        issues.push(SpecIssue::new(
            format!("{base}.http_status"),
            format!("{s} is not an HTTP status"),
            Some("use a status between 100 and 599, e.g. 500"),
        ));
    }
    bearer_issues(&base, mcp, issues);
    let mut seen = BTreeSet::new();
    for (i, tool) in mcp.tools.iter().enumerate() {
        let tpath = format!("{base}.tools.{i}");
        if tool.name.trim().is_empty() {
            issues.push(SpecIssue::new(
                format!("{tpath}.name"),
                "tool with an empty name",
                None,
            ));
        } else if !seen.insert(tool.name.as_str()) {
            issues.push(SpecIssue::new(
                format!("{tpath}.name"),
                format!("tool `{}` is declared twice", tool.name),
                None,
            ));
        }
        if let Some(other) = &tool.until_called {
            if tool.delay.is_none() {
                issues.push(SpecIssue::new(
                    format!("{tpath}.until_called"),
                    "`until_called` shortens a `delay`, and this tool has none",
                    Some("add the longest wait, e.g. `delay: 8s`"),
                ));
            }
            if !mcp.tools.iter().any(|t| t.name == *other) {
                issues.push(SpecIssue::new(
                    format!("{tpath}.until_called"),
                    format!("this server declares no tool `{other}`"),
                    Some("name another tool of the same server"),
                ));
            }
        }
        if let Some(s) = &tool.input_schema
            && !s.is_object()
        {
            issues.push(SpecIssue::new(
                format!("{tpath}.input_schema"),
                "input_schema must be a JSON Schema object",
                Some("e.g. `{type: object, properties: {query: {type: string}}}`"),
            ));
        }
        if let crate::spec::ToolResultSpec::Recorded(calls) = &tool.result {
            for (j, call) in calls.iter().enumerate() {
                let cpath = format!("{tpath}.result.recorded.{j}");
                if call.result.is_some() == call.error.is_some() {
                    issues.push(SpecIssue::new(
                        cpath.clone(),
                        "a recorded call has either a `result` or an `error`",
                        None,
                    ));
                }
                if let Some(r) = &call.result
                    && serde_json::from_value::<rmcp::model::CallToolResult>(r.clone()).is_err()
                {
                    issues.push(SpecIssue::new(
                        format!("{cpath}.result"),
                        "not a CallToolResult",
                        Some("e.g. `{content: [{type: text, text: ok}]}`"),
                    ));
                }
            }
        }
    }
}

/// What is wrong with a mock MCP server's bearer requirement.
fn bearer_issues(base: &str, mcp: &crate::spec::McpMockSpec, issues: &mut Vec<SpecIssue>) {
    if mcp.bearer_on_calls_only && mcp.require_bearer.is_none() {
        issues.push(SpecIssue::new(
            format!("{base}.bearer_on_calls_only"),
            "`bearer_on_calls_only` without `require_bearer` requires nothing",
            Some("add `require_bearer: TOKEN`, or remove it"),
        ));
    }
    if let Some(s) = mcp.delete_status
        && !(200..=599).contains(&s)
    {
        issues.push(SpecIssue::new(
            format!("{base}.delete_status"),
            format!("{s} is not an HTTP status a DELETE can be answered with"),
            Some("use 405 (MCP: the server does not let clients end sessions), or another 2xx–5xx"),
        ));
    }
    if mcp.require_bearer.as_deref() == Some("") {
        issues.push(SpecIssue::new(
            format!("{base}.require_bearer"),
            "empty bearer token",
            Some("omit `require_bearer` to accept unauthenticated requests"),
        ));
    }
}

fn check_fault(f: &crate::spec::FaultSpec, path: String, issues: &mut Vec<SpecIssue>) {
    if let Some(s) = f.status
        && !(400..=599).contains(&s)
    {
        issues.push(SpecIssue::new(
            format!("{path}.status"),
            format!("{s} is not an error status"),
            Some("use 400–599, e.g. 401, 404, 429, 500, 529"),
        ));
    }
    if f.times == Some(0) {
        issues.push(SpecIssue::new(
            format!("{path}.times"),
            "`times: 0` makes the fault never fire",
            Some("remove the fault, or set `times` to 1 or more"),
        ));
    }
    if f.hang && (f.status.is_some() || f.malformed) {
        issues.push(SpecIssue::new(
            format!("{path}.hang"),
            "`hang` never answers, so `status`/`malformed` would never be seen",
            Some("keep one of them"),
        ));
    }
}

/// Parses an ecosystem file and validates it; errors point at `name:line:col` with a hint.
pub fn parse_ecosystem(name: &str, text: &str) -> Result<EcosystemSpec, YamlError> {
    let spec: EcosystemSpec = yaml::from_str(name, text)?;
    if let Some(issue) = validate_ecosystem(&spec).first() {
        return Err(issue.to_yaml_error(name, text, ""));
    }
    Ok(spec)
}
