//! The shape of the workspace, held by a test: no source file over 600 lines, no import circle
//! between a crate's top-level modules, and the dependency direction of ARCHITECTURE.md
//! (`mocks` depends on no workspace crate, `reference-impl` on none outside its dev-dependencies,
//! `harness` never on the reference).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;
const CRATES: [&str; 4] = ["harness", "mocks", "reference-impl", "tests"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_exceeds_600_lines() {
    let mut too_long = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate).join("src"), &mut files);
        assert!(!files.is_empty(), "{krate}/src has no Rust file");
        for f in files {
            let lines = std::fs::read_to_string(&f).map_or(0, |t| t.lines().count());
            if lines > MAX_LINES {
                too_long.push(format!("{} ({lines} lines)", f.display()));
            }
        }
    }
    assert!(
        too_long.is_empty(),
        "split these files by concept (at most {MAX_LINES} lines each):\n{}",
        too_long.join("\n")
    );
}

/// Top-level module → the top-level modules its non-test code names through `crate::`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Ok(rel) = f.strip_prefix(src) else {
            continue;
        };
        let top = rel
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned()
            })
            .unwrap_or_default();
        if top == "lib" || top == "main" || top == "bin" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for target in crate_paths(code) {
            if target != top {
                graph.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    graph
}

/// The first path segment after every `crate::` in `text`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let standalone = !rest[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if standalone && !name.is_empty() {
            out.push(name);
        }
        rest = after;
    }
    out
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    for krate in CRATES {
        let graph = module_graph(&root().join(krate).join("src"));
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{krate}: modules import each other in a circle: {}",
                cycle.join(" → ")
            );
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_circle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert!(find_cycle(&g).is_some());
}

/// The names of a manifest's `[dependencies]` (not dev- or build-dependencies).
fn dependencies(krate: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap_or_default();
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_deps = l == "[dependencies]";
            continue;
        }
        if in_deps && let Some((name, _)) = l.split_once('=') {
            out.push(name.trim().trim_end_matches(".workspace").to_owned());
        }
    }
    out
}

#[test]
fn dependencies_point_the_way_the_architecture_says() {
    let workspace = |deps: Vec<String>| -> Vec<String> {
        deps.into_iter()
            .filter(|d| d.starts_with("pallas-"))
            .collect()
    };
    assert_eq!(
        workspace(dependencies("mocks")),
        Vec::<String>::new(),
        "mocks"
    );
    assert_eq!(
        workspace(dependencies("reference-impl")),
        Vec::<String>::new(),
        "reference-impl must not depend on another workspace crate"
    );
    assert!(
        !dependencies("harness")
            .iter()
            .any(|d| d == "pallas-reference"),
        "the harness must never import the reference"
    );
    assert!(dependencies("harness").iter().any(|d| d == "pallas-mocks"));
}
