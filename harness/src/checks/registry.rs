//! Registry checks (REG-*): the registry document against the schema, the deployment and the live endpoints.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::common::*;
use super::read::excerpt;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use super::{premise, wire};
use crate::client::RegistryFetch;
use crate::observation::Observation;
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, DeploymentSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("REG-001", reg_schema).premise(registry_entries),
    // REG-002 judges the answer itself, whatever it is.
    Check::new("REG-002", reg_http),
    Check::new("REG-003", reg_names).premise(registry_entries),
    Check::new("REG-004", reg_remotes)
        .premise(registry_entries)
        .by_default("every entry's `streamable-http` remote points (port and path) at a deployed agent endpoint that answered"),
    Check::new("REG-005", reg_exactly_deployed).premise(registry_entries),
    Check::new("REG-006", reg_defaults)
        .premise(registry_entries)
        .by_default("title = configured or the key's Python `title()` (`tech_research` → `Tech_Research`); version = configured or `1.0.0`; description = configured"),
    Check::new("REG-007", reg_capabilities).premise(registry_entries),
    Check::assertion("REG-008").premise(registry_entries),
    Check::assertion("REG-009").premise(registry_entries),
    Check::assertion("REG-010").premise(registry_entries),
    Check::assertion("REG-011").premise(premise::registry_answered),
    Check::assertion("REG-012").premise(registry_entries),
    Check::assertion("REG-013").premise(registry_entries),
    Check::assertion("REG-014").premise(registry_entries),
    Check::assertion("REG-015").premise(registry_entries),
    Check::assertion("REG-016").premise(registry_entries),
    Check::assertion("REG-017").premise(registry_entries),
    Check::assertion("REG-018").premise(registry_entries),
    Check::assertion("REG-019").premise(registry_entries),
    Check::assertion("REG-020").premise(registry_entries),
    Check::assertion("REG-021").premise(premise::registry_answered),
    Check::assertion("REG-022").premise(registry_entries),
    Check::assertion("REG-023").premise(premise::registry_answered),
];

/// The premise of the registry checks: a registry document with an entry was fetched.
fn registry_entries(o: &Observed) -> Option<&'static str> {
    premise::held(
        o.steps
            .iter()
            .any(|s| servers_of(s).is_some_and(|a| !a.is_empty())),
        "no registry document with an entry was fetched",
    )
}

/// The registry document a `registry` step fetched.
fn fetched(s: &StepRecord) -> Option<&RegistryFetch> {
    match &s.observation {
        Observation::RegistryFetched(f) => Some(f),
        _ => None,
    }
}

/// The `servers` array of the fetched registry document.
pub(super) fn servers_of(s: &StepRecord) -> Option<&Vec<Value>> {
    fetched(s)?.body.as_ref()?.get("servers")?.as_array()
}

/// What a registry step fetched, in one line for a witness: its status and the names it
/// listed.
fn listed_witness(s: &StepRecord) -> Witness {
    let names: Vec<&str> = servers_of(s)
        .into_iter()
        .flatten()
        .map(|e| {
            e.pointer("/server/name")
                .and_then(Value::as_str)
                .unwrap_or("(no name)")
        })
        .collect();
    Witness::new(
        &s.name,
        format!(
            "HTTP {}, Content-Type {}, {} server(s): {}",
            status(s),
            s.observation.content_type().unwrap_or("(none)"),
            names.len(),
            names.join(", ")
        ),
    )
}

/// A registry body the harness could not read as JSON is an error that says why (not
/// UTF-8, not JSON with the parser's message and offset, nested too deep).
fn unreadable(s: &StepRecord) -> Option<Outcome> {
    let reason = fetched(s)?.unreadable.as_ref()?;
    Some(Outcome::Error(format!(
        "the registry document fetched by `{}` could not be read: {reason}",
        s.name
    )))
}

pub(super) fn reg_schema(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Registry]);
    if steps.is_empty() {
        return na("registry");
    }
    let mut ev = Vec::new();
    let mut kept = Vec::new();
    for s in steps {
        if let Some(error) = unreadable(s) {
            return error;
        }
        let Some(servers) = servers_of(s) else {
            continue;
        };
        if let Some(first) = servers.first() {
            kept.push(Witness::new(
                format!("{} ({} server entries), the first", s.name, servers.len()),
                excerpt(first, 200),
            ));
        }
        for (i, entry) in servers.iter().enumerate() {
            let server = entry.get("server").unwrap_or(&Value::Null);
            match wire::validate_registry_server(server) {
                Ok(v) => ev.extend(v.into_iter().map(|v| Evidence {
                    what: format!("{} servers[{i}].server", s.name),
                    expected: Some("valid against server.schema.json".into()),
                    seen: Some(format!("{} — {}", v.message, v.excerpt)),
                    path: Some(format!("/servers/{i}/server{}", v.path)),
                })),
                Err(e) => return Outcome::Error(e.to_string()),
            }
        }
    }
    if ev.is_empty() {
        if kept.is_empty() {
            return Outcome::Inconclusive("no registry entry was listed to validate".into());
        }
        return Outcome::Kept(kept);
    }
    // A `name` the schema's pattern refuses breaks its MUST (exactly one slash); every other
    // violation breaks the seed's "following the MCP Server Schema" (SHOULD).
    let (names, others): (Vec<Evidence>, Vec<Evidence>) = ev.into_iter().partition(|e| {
        e.path
            .as_deref()
            .is_some_and(|p| p.ends_with("/server/name"))
    });
    if names.is_empty() {
        return fail(
            format!("{} registry schema violation(s)", others.len()),
            others,
        );
    }
    let n = names.len() + others.len();
    Outcome::breaks(
        "schema.server-name-one-slash",
        format!(
            "{n} registry schema violation(s), {} of them in `server.name`",
            names.len()
        ),
        names.into_iter().chain(others).collect(),
    )
}

pub(super) fn reg_http(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Registry]);
    if steps.is_empty() {
        return na("registry");
    }
    let mut kept = Vec::new();
    for s in steps {
        if let Some(e) = &s.error {
            if crate::client::limits::is_limit_error(e) {
                return Outcome::Error(format!("registry fetch stopped: {e}"));
            }
            return Outcome::breaks(
                "s000.registry-servers-required",
                format!("registry fetch failed: {e}"),
                vec![],
            );
        }
        let status = status(s);
        let ct = s.observation.content_type().unwrap_or("");
        if status != 200 {
            // Credentials demanded break "No authentication"; any other refusal leaves
            // Daedalus without the required `servers` list.
            let rule = if matches!(status, 401 | 403) {
                "s000.registry-no-auth"
            } else {
                "s000.registry-servers-required"
            };
            return Outcome::breaks(
                rule,
                format!("registry answered HTTP {status}"),
                vec![Evidence::new(&s.name, "200", status.to_string())],
            );
        }
        if !ct.to_ascii_lowercase().starts_with("application/json") {
            return fail(
                "wrong Content-Type",
                vec![Evidence::new(&s.name, "application/json", ct)],
            );
        }
        if servers_of(s).is_none() {
            let why = fetched(s)
                .and_then(|f| f.unreadable.as_deref())
                .map_or_else(String::new, |r| format!(": {r}"));
            return Outcome::breaks(
                "s000.registry-servers-required",
                format!("no `servers` array{why}"),
                vec![Evidence::new(
                    &s.name,
                    "{\"servers\": [...]}",
                    excerpt(&json!(fetched(s).map(|f| f.text.as_str())), 200),
                )],
            );
        }
        kept.push(listed_witness(s));
    }
    Outcome::Kept(kept)
}

/// A registry answer beside the deployment it should describe (REG-003, REG-005, REG-007).
struct Listing<'a> {
    s: &'a StepRecord,
    d: &'a DeploymentSpec,
    servers: &'a Vec<Value>,
    /// Expected registry name → agent key.
    expected: BTreeMap<String, &'a String>,
    /// The names the registry listed.
    names: Vec<String>,
}

/// The last registry answer in scope and the deployment, or the outcome that stops a check.
fn listing<'a>(c: &CheckSpec, o: &'a Observed) -> Result<Listing<'a>, Outcome> {
    let steps = steps_of(o, c, &[ActionKind::Registry]);
    let Some(s) = steps.last() else {
        return Err(na("registry"));
    };
    let Some(d) = &o.deployment else {
        return Err(Outcome::NotApplicable("no deployment (attach mode)".into()));
    };
    if let Some(error) = unreadable(s) {
        return Err(error);
    }
    let Some(servers) = servers_of(s) else {
        return Err(fail("the registry body has no `servers` array", vec![]));
    };
    let ns = d.namespace.clone().unwrap_or_default();
    let expected: BTreeMap<String, &String> = d
        .agents
        .keys()
        .map(|k| {
            (
                if ns.is_empty() {
                    k.replace('_', "-")
                } else {
                    format!("{ns}/{}", k.replace('_', "-"))
                },
                k,
            )
        })
        .collect();
    let names: Vec<String> = servers
        .iter()
        .filter_map(|e| e.pointer("/server/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    Ok(Listing {
        s,
        d,
        servers,
        expected,
        names,
    })
}

/// REG-003: every listed name is `{namespace}/{slug}` of a deployed agent.
pub(super) fn reg_names(c: &CheckSpec, o: &Observed) -> Outcome {
    let Listing {
        s,
        expected,
        names,
        servers: entries,
        ..
    } = match listing(c, o) {
        Ok(l) => l,
        Err(stop) => return stop,
    };
    if let Some(i) = entries
        .iter()
        .position(|e| !e.pointer("/server/name").is_some_and(Value::is_string))
    {
        return Outcome::breaks(
            "s000.registry-name-required",
            format!("registry entry {i} has no string `server.name`"),
            vec![Evidence::new(
                &s.name,
                "`servers[].server.name`, a string",
                excerpt(&entries[i], 200),
            )],
        );
    }
    for n in &names {
        if !expected.contains_key(n) {
            // With a namespace the construction gives one slash; a name without exactly one
            // breaks the schema's MUST, any other mismatch the seed's construction (SHOULD).
            let one_slash = |x: &str| x.matches('/').count() == 1;
            if n.matches('/').count() != 1 && expected.keys().all(|e| one_slash(e)) {
                return Outcome::breaks(
                    "schema.server-name-one-slash",
                    format!("registry name `{n}` does not have exactly one `/`"),
                    vec![Evidence::new(
                        &s.name,
                        format!("one of {:?}", expected.keys().collect::<Vec<_>>()),
                        n.clone(),
                    )],
                );
            }
            return fail(
                format!("unexpected registry name `{n}`"),
                vec![Evidence::new(
                    &s.name,
                    format!("one of {:?}", expected.keys().collect::<Vec<_>>()),
                    n.clone(),
                )],
            );
        }
    }
    if names.is_empty() {
        return Outcome::Inconclusive("the registry listed no name to judge".into());
    }
    Outcome::Kept(vec![listed_witness(s)])
}

/// REG-005: the registry lists exactly the deployed agents.
pub(super) fn reg_exactly_deployed(c: &CheckSpec, o: &Observed) -> Outcome {
    let Listing {
        s, expected, names, ..
    } = match listing(c, o) {
        Ok(l) => l,
        Err(stop) => return stop,
    };
    let mut seen = names.clone();
    seen.sort();
    let want: Vec<String> = expected.keys().cloned().collect();
    if seen == want {
        Outcome::Kept(vec![listed_witness(s)])
    } else {
        fail(
            "the registry does not list exactly the deployed agents",
            vec![Evidence::new(
                &s.name,
                format!("{want:?}"),
                format!("{seen:?}"),
            )],
        )
    }
}

/// REG-007: `capabilities` is published exactly when `model_capabilities` is configured.
pub(super) fn reg_capabilities(c: &CheckSpec, o: &Observed) -> Outcome {
    let Listing { d, servers, .. } = match listing(c, o) {
        Ok(l) => l,
        Err(stop) => return stop,
    };
    let mut kept = Vec::new();
    for e in servers {
        let caps = e.pointer("/server/capabilities");
        let name = e
            .pointer("/server/name")
            .and_then(Value::as_str)
            .unwrap_or("?");
        // What the deployment configured, beside what was published (the witness shows both).
        let mut configured = "no `model_capabilities` configured".to_owned();
        match (&d.model_capabilities, caps) {
            (None, Some(c)) => {
                return fail(
                    format!("`{name}` publishes capabilities without `model_capabilities`"),
                    vec![Evidence::new(name, "no `capabilities`", excerpt(c, 200))],
                );
            }
            (Some(_), None) => {
                return fail(
                    format!("`{name}` lacks `capabilities`"),
                    vec![Evidence::new(name, "`capabilities`", "absent")],
                );
            }
            (Some(mc), Some(c)) => {
                let model = d.model.split_once('.').map_or(d.model.as_str(), |(_, m)| m);
                let mut want = json!({"model": model});
                if let Some(v) = mc.vision {
                    want["vision"] = json!(v);
                }
                if let Some(v) = mc.context_window {
                    want["context_window"] = json!(v);
                }
                if let Some(v) = mc.max_output_tokens {
                    want["max_output_tokens"] = json!(v);
                }
                configured = format!(
                    "expected {want} (`model` from `default_model` {}, the others as `model_capabilities` sets them; a key it leaves out takes the seed's default, judged by CFG-006..CFG-008, not here)",
                    d.model
                );
                for (k, v) in want.as_object().into_iter().flatten() {
                    if c.get(k) != Some(v) {
                        return fail(
                            format!("`{name}` capabilities.{k} differs"),
                            vec![Evidence::new(
                                format!("{name} capabilities.{k}"),
                                v.to_string(),
                                c.get(k).map_or("absent".into(), |x| x.to_string()),
                            )],
                        );
                    }
                }
            }
            (None, None) => {}
        }
        kept.push(Witness::new(
            format!("`{name}` capabilities"),
            format!(
                "{configured}; published {}",
                caps.map_or_else(|| "none".to_owned(), |c| excerpt(c, 200))
            ),
        ));
    }
    if kept.is_empty() {
        return Outcome::Inconclusive("the registry listed no entry to judge".into());
    }
    Outcome::Kept(kept)
}

// ---------------------------------------------------------------- registry

/// REG-004: every entry has a `streamable-http` remote pointing at a deployed, live endpoint.
pub(super) fn reg_remotes(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Registry]);
    if steps.is_empty() {
        return na("registry");
    }
    let mut kept = Vec::new();
    for s in steps {
        let Some(servers) = servers_of(s) else {
            continue; // REG-002 reports the missing array
        };
        for (i, e) in servers.iter().enumerate() {
            let name = e
                .pointer("/server/name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let remotes = e
                .pointer("/server/remotes")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let Some(url) = remotes
                .iter()
                .find(|r| r.get("type").and_then(Value::as_str) == Some("streamable-http"))
                .and_then(|r| r.get("url").and_then(Value::as_str))
            else {
                return fail(
                    format!("`{name}` has no `streamable-http` remote with a URL"),
                    vec![Evidence {
                        path: Some(format!("/servers/{i}/server/remotes")),
                        ..Evidence::new(
                            &s.name,
                            "{\"type\": \"streamable-http\", \"url\": …}",
                            excerpt(&json!(remotes), 300),
                        )
                    }],
                );
            };
            let parsed = match reqwest::Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => u,
                _ => {
                    return fail(
                        format!("`{name}` remote URL {url:?} is not an http(s) URL"),
                        vec![Evidence::new(&s.name, "an http(s) URL", url)],
                    );
                }
            };
            kept.push(Witness::new(
                format!("`{name}` remote"),
                format!("streamable-http {url}"),
            ));
            if o.agent_urls.is_empty() {
                continue;
            }
            let same = |u: &str| {
                reqwest::Url::parse(u).is_ok_and(|a| {
                    a.port_or_known_default() == parsed.port_or_known_default()
                        && a.path().trim_end_matches('/') == parsed.path().trim_end_matches('/')
                })
            };
            let Some((agent, _)) = o.agent_urls.iter().find(|(_, u)| same(u)) else {
                return Outcome::breaks(
                    "s000.registry-remote-is-endpoint",
                    format!("`{name}` remote {url} is no deployed agent endpoint"),
                    vec![Evidence::new(
                        &s.name,
                        format!(
                            "one of {:?} (port and path)",
                            o.agent_urls.values().collect::<Vec<_>>()
                        ),
                        url,
                    )],
                );
            };
            let talks: Vec<&StepRecord> = o
                .steps
                .iter()
                .filter(|x| x.agent.as_deref() == Some(agent.as_str()))
                .filter(|x| {
                    matches!(
                        x.action(),
                        Some(
                            StepAction::Connect(_)
                                | StepAction::ListTools(_)
                                | StepAction::Health(_)
                                | StepAction::Send(_)
                                | StepAction::Call(_)
                        )
                    )
                })
                .collect();
            if !talks.is_empty() && !talks.iter().any(|x| x.error.is_none() && status(x) == 200) {
                return Outcome::breaks(
                    "s000.registry-remote-is-endpoint",
                    format!("`{name}` remote {url} never answered an MCP request"),
                    vec![Evidence::new(
                        &talks[0].name,
                        "HTTP 200 from the endpoint",
                        talks[0]
                            .error
                            .clone()
                            .unwrap_or_else(|| format!("HTTP {}", status(talks[0]))),
                    )],
                );
            }
        }
    }
    if kept.is_empty() {
        return Outcome::Inconclusive("the registry listed no entry to judge".into());
    }
    Outcome::Kept(kept)
}

/// Python's `str.title()`: the documented default title of an agent key.
pub fn python_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for ch in s.chars() {
        if ch.is_alphabetic() {
            if prev_cased {
                out.extend(ch.to_lowercase());
            } else {
                out.extend(ch.to_uppercase());
            }
            prev_cased = true;
        } else {
            out.push(ch);
            prev_cased = false;
        }
    }
    out
}

/// REG-006: title, description and version follow the configuration and its defaults.
pub(super) fn reg_defaults(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Registry]);
    let Some(s) = steps.last() else {
        return na("registry");
    };
    let Some(d) = &o.deployment else {
        return Outcome::NotApplicable("no deployment (attach mode)".into());
    };
    let Some(servers) = servers_of(s) else {
        return fail("the registry body has no `servers` array", vec![]);
    };
    let version = d.version.clone().unwrap_or_else(|| "1.0.0".into());
    let mut judged = 0;
    let mut kept = Vec::new();
    for (key, a) in &d.agents {
        let slug = key.replace('_', "-");
        let Some(entry) = servers.iter().find(|e| {
            e.pointer("/server/name")
                .and_then(Value::as_str)
                .is_some_and(|n| n == slug || n.ends_with(&format!("/{slug}")))
        }) else {
            continue; // REG-005 reports missing agents
        };
        judged += 1;
        kept.push(Witness::new(
            format!("{} entry of `{key}`", s.name),
            ["title", "version", "description"]
                .iter()
                .map(|f| {
                    format!(
                        "{f} {}",
                        entry
                            .pointer(&format!("/server/{f}"))
                            .map_or_else(|| "absent".to_owned(), |v| excerpt(v, 80))
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        ));
        let mut want = vec![
            (
                "title",
                a.title.clone().unwrap_or_else(|| python_title(key)),
            ),
            ("version", version.clone()),
        ];
        if let Some(desc) = &a.description {
            want.push(("description", desc.clone()));
        }
        for (field, expected) in want {
            let seen = entry.pointer(&format!("/server/{field}"));
            if seen.and_then(Value::as_str) != Some(expected.as_str()) {
                return fail(
                    format!("`{key}` registry {field} differs from the configuration"),
                    vec![Evidence {
                        path: Some(format!("/server/{field}")),
                        ..Evidence::new(
                            format!("{} entry of `{key}`", s.name),
                            expected,
                            seen.map_or("absent".into(), |v| excerpt(v, 200)),
                        )
                    }],
                );
            }
        }
    }
    if judged == 0 {
        return Outcome::Inconclusive("no deployed agent is listed".into());
    }
    Outcome::Kept(kept)
}
