//! Semantic checks of `agents.yaml`: ports, slugs, `depends_on`, namespaces, with positions and hints.

use files::AgentsFileSpec;
use serde_saphyr::Spanned;
use source::SourceFile;
use std::collections::HashMap;

use super::*;

pub(super) fn check_ports(src: &SourceFile, spec: &AgentsFileSpec) -> Result<(), ConfigError> {
    let mut used: HashMap<u16, (String, usize)> = HashMap::new();
    if let Some(p) = spec.registry_port.as_ref().filter(|p| p.value != 0) {
        used.insert(
            p.value,
            ("the registry".to_owned(), line_of(src, &p.referenced)),
        );
    } else if spec.registry_port.is_none() {
        used.insert(
            // `px-registry-port-default-from-contract`: the default the registry then binds.
            if crate::defect!("px-registry-port-default-from-contract") {
                23030
            } else {
                DEFAULT_REGISTRY_PORT
            },
            ("the registry (default port)".to_owned(), 0),
        );
    }
    for (name, entry) in &spec.agents {
        let port = entry.port.value;
        if port == 0 {
            continue;
        }
        if let Some((other, line)) = used.get(&port) {
            let where_ = if *line > 0 {
                format!(" (line {line})")
            } else {
                String::new()
            };
            return Err(at(
                src,
                &entry.port,
                format!("port {port} of agent `{name}` is already used by {other}{where_}"),
            )
            .with_hint("give every agent and the registry its own port (0 picks a free one)"));
        }
        used.insert(
            port,
            (
                format!("agent `{name}`"),
                line_of(src, &entry.port.referenced),
            ),
        );
    }
    Ok(())
}

/// Two agent keys that differ only by `_` / `-` would publish the same registry name.
pub(super) fn check_slugs(src: &SourceFile, spec: &AgentsFileSpec) -> Result<(), ConfigError> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for name in spec.agents.keys() {
        let slug = name.replace('_', "-");
        if let Some(other) = seen.insert(slug.clone(), name) {
            return Err(src
                .error_at(
                    find_key(src, name),
                    format!("agents `{other}` and `{name}` would both be published as `…/{slug}`"),
                )
                .with_hint("registry names replace `_` with `-`; rename one of the agents"));
        }
    }
    Ok(())
}

pub(super) fn line_of(src: &SourceFile, loc: &serde_saphyr::Location) -> usize {
    src.position(loc).map_or(0, |p| p.line)
}

pub(super) fn check_dependencies(
    src: &SourceFile,
    spec: &AgentsFileSpec,
) -> Result<(), ConfigError> {
    let names: Vec<&str> = spec.agents.keys().map(String::as_str).collect();
    for (name, entry) in &spec.agents {
        for dep in &entry.depends_on {
            if !spec.agents.contains_key(&dep.value) {
                return Err(at(
                    src,
                    dep,
                    format!(
                        "agent `{name}` depends on `{}`, which is not an agent",
                        dep.value
                    ),
                )
                .with_hint(match closest(&dep.value, &names) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => format!("declare `{}` under `agents:` or remove it", dep.value),
                }));
            }
        }
    }
    // Depth-first search for a cycle; report it on the edge that closes it.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks: HashMap<&str, Mark> = names.iter().map(|n| (*n, Mark::New)).collect();
    fn visit<'a>(
        node: &'a str,
        spec: &'a AgentsFileSpec,
        marks: &mut HashMap<&'a str, Mark>,
        path: &mut Vec<&'a str>,
    ) -> Option<(&'a str, &'a Spanned<String>, Vec<&'a str>)> {
        marks.insert(node, Mark::Active);
        path.push(node);
        let entry = spec.agents.get(node)?;
        for dep in &entry.depends_on {
            match marks.get(dep.value.as_str()).copied() {
                Some(Mark::Active) => {
                    let start = path.iter().position(|n| *n == dep.value).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(dep.value.as_str());
                    return Some((node, dep, cycle));
                }
                Some(Mark::New) => {
                    if let Some(found) = visit(dep.value.as_str(), spec, marks, path) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        marks.insert(node, Mark::Done);
        None
    }
    for name in &names {
        if marks.get(name) == Some(&Mark::New) {
            let mut path = Vec::new();
            if let Some((node, dep, cycle)) = visit(name, spec, &mut marks, &mut path) {
                return Err(at(
                    src,
                    dep,
                    format!(
                        "dependency cycle in depends_on: {} (agent `{node}` → `{}`)",
                        cycle.join(" → "),
                        dep.value
                    ),
                )
                .with_hint(
                    "remove one of these depends_on entries so the agents can start in order",
                ));
            }
        }
    }
    Ok(())
}

/// The first line declaring `key:` (for keys, which carry no position of their own).
pub(super) fn find_key(src: &SourceFile, key: &str) -> Option<Position> {
    for (i, line) in src.text.lines().enumerate() {
        let trimmed = line.trim_start();
        let unquoted = trimmed.strip_prefix(['"', '\'']).map_or(trimmed, |t| t);
        if let Some(rest) = unquoted.strip_prefix(key) {
            let rest = rest.trim_start_matches(['"', '\'']);
            if rest.starts_with(':') {
                return Some(Position {
                    line: i + 1,
                    column: line.len() - trimmed.len() + 1,
                });
            }
        }
    }
    None
}

pub(super) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

pub(super) fn valid_namespace(ns: &str) -> bool {
    !ns.is_empty()
        && ns.len() <= 150
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
}
