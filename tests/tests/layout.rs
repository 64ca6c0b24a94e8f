//! The shape of the workspace, held by a test: files sized by idea (past 900 lines a file says in
//! its header why it is one idea; sources, tests,
//! benches and test support alike), no import circle between modules at any depth (two files
//! of one folder, or two top-level modules, naming each other), and the dependency direction of
//! ARCHITECTURE.md (`mocks` depends on no workspace crate, `reference-impl` on none outside its
//! dev-dependencies, `harness` never on the reference), and `harness/src/checks/` entered by its
//! front door only (no child names an item of its `mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files are sized by idea, not by a line count: past this many lines a file must say in its
/// header (a `//! One idea:` line among its first lines) why it is one idea.
const EXPLAIN_ABOVE: usize = 900;
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
            if p.file_name()
                .is_some_and(|n| n == "target" || n == "node_modules")
            {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn a_long_rust_file_says_why_it_is_one_idea() {
    let mut unexplained = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate), &mut files);
        assert!(
            files
                .iter()
                .any(|f| f.starts_with(root().join(krate).join("src"))),
            "{krate}/src has no Rust file"
        );
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let lines = text.lines().count();
            let explained = text
                .lines()
                .take(40)
                .any(|l| l.trim_start().starts_with("//! One idea:"));
            if lines > EXPLAIN_ABOVE && !explained {
                unexplained.push(format!("{} ({lines} lines)", f.display()));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "files over {EXPLAIN_ABOVE} lines must say in their header why they are one idea \
         (`//! One idea: …`), or be split where their ideas part:\n{}",
        unexplained.join("\n")
    );
}

/// A module path (`["config", "error"]`) for a file under `src`: `a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs`, `main.rs` are the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// Every path a text names through `crate::`, `super::` or `self::`, resolved against the file's
/// module `here`, with `{a, b::c}` groups expanded; each as its segments.
fn named_paths(text: &str, here: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let (prefix, mut base): (&str, Vec<String>) = if rest.starts_with("crate::") {
            ("crate::", Vec::new())
        } else if rest.starts_with("super::") {
            // `super` of `a/b.rs` (a::b) is `a`; of `a/b/mod.rs` (a::b) it is `a` too.
            let _ = is_mod_file;
            ("super::", here[..here.len().saturating_sub(1)].to_vec())
        } else if rest.starts_with("self::") {
            (
                "self::",
                if is_mod_file {
                    here.to_vec()
                } else {
                    here[..here.len().saturating_sub(1)].to_vec()
                },
            )
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let standalone = !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        i += prefix.len();
        if prefix == "super::" {
            // `super::super::…` climbs once more for each further `super`.
            while text[i..].starts_with("super::") {
                base.pop();
                i += "super::".len();
            }
        }
        if standalone {
            let mut paths = Vec::new();
            i += parse_tree(&text[i..], base, &mut paths);
            out.extend(paths);
        }
    }
    out
}

/// Parses `a::b::{c, d::e}` at the start of `s` into full paths; returns the bytes read.
fn parse_tree(s: &str, base: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = base;
    let mut i = 0;
    loop {
        let ident: String = s[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !ident.is_empty() {
            path.push(ident.clone());
            i += ident.len();
        }
        // `a::{…}`, or a group right after the prefix (`super::{a, b}`).
        let group = if s[i..].starts_with("::{") {
            Some(3)
        } else if ident.is_empty() && s[i..].starts_with('{') {
            Some(1)
        } else {
            None
        };
        if let Some(open) = group {
            i += open;
            loop {
                let ws = s[i..].len() - s[i..].trim_start().len();
                i += ws;
                if s[i..].starts_with('}') {
                    return i + 1;
                }
                i += parse_tree(&s[i..], path.clone(), out);
                let ws = s[i..].len() - s[i..].trim_start().len();
                i += ws;
                if s[i..].starts_with(',') {
                    i += 1;
                } else if s[i..].starts_with('}') {
                    return i + 1;
                } else {
                    return i;
                }
            }
        }
        if s[i..].starts_with("::") && !ident.is_empty() {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// Module → the sibling modules its non-test code names, at every depth: a reference from
/// `a::b::x` to `a::c::y` is an edge `a::b → a::c` (two top-level modules are siblings under the
/// crate root). References between a module and its own ancestors are not edges.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .filter_map(|f| f.strip_prefix(src).ok())
        .map(module_of)
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Ok(rel) = f.strip_prefix(src) else {
            continue;
        };
        if rel.starts_with("bin") {
            continue;
        }
        let here = module_of(rel);
        let is_mod_file = rel
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs");
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for mut target in named_paths(code, &here, is_mod_file) {
            // The longest prefix that is a module file.
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common >= here.len() || common >= target.len() {
                continue; // the module itself, a descendant or an ancestor
            }
            let from = here[..=common].join("::");
            let to = target[..=common].join("::");
            graph.entry(from).or_default().insert(to);
        }
    }
    graph
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
fn no_crate_has_an_import_circle_between_its_modules_at_any_depth() {
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

/// What the non-test code of the modules under `folder` (a module of `src`) names of an
/// ancestor inside that folder (the folder's own `mod.rs`, or a module between it and the
/// file): `(child file, what)` for every reference from a child to an ancestor — an item of
/// it, or the module itself (`use super::*`, `use crate::checks`).
fn references_to_the_front_door(src: &Path, folder: &[&str]) -> Vec<(String, String)> {
    let dir = folder.iter().fold(src.to_path_buf(), |d, f| d.join(f));
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .filter_map(|f| f.strip_prefix(src).ok())
        .map(module_of)
        .collect();
    let parent: Vec<String> = folder.iter().map(|f| (*f).to_owned()).collect();
    let mut out = Vec::new();
    for f in &files {
        let Ok(rel) = f.strip_prefix(src) else {
            continue;
        };
        let here = module_of(rel);
        if here == parent {
            continue;
        }
        let is_mod_file = rel.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(f).unwrap_or_default();
        // Test modules (`family_tests/`) read the parent's items as the harness's users do.
        if here.iter().any(|m| m.ends_with("tests")) {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for path in named_paths(code, &here, is_mod_file) {
            let mut module = path.clone();
            while !module.is_empty() && !modules.contains(&module) {
                module.pop();
            }
            let ancestor = module.len() < here.len()
                && module.starts_with(&parent)
                && here.starts_with(&module);
            if ancestor {
                let what = path
                    .get(module.len())
                    .map_or_else(|| format!("{}::*", module.join("::")), Clone::clone);
                out.push((rel.display().to_string(), what));
            }
        }
    }
    out
}

/// `harness/src/checks/` has a front door only: its `mod.rs` declares and re-exports; the
/// families and shared modules name each other, never the parent or an item of it (no
/// child ↔ parent loop: the parent names its children, so a child naming an ancestor closes one).
#[test]
fn the_checks_folder_has_a_front_door_only() {
    let refs = references_to_the_front_door(&root().join("harness/src"), &["checks"]);
    assert!(
        refs.is_empty(),
        "children of checks/ name items of checks/mod.rs (name the sibling module that defines them): {refs:?}"
    );
}

#[test]
fn a_reference_to_an_ancestor_is_counted_glob_or_item() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("checks/deep")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod checks;").unwrap();
    std::fs::write(
        src.join("checks/mod.rs"),
        "mod a; mod deep; pub struct Item;",
    )
    .unwrap();
    std::fs::write(src.join("checks/a.rs"), "use std::fmt;").unwrap();
    std::fs::write(src.join("checks/deep/mod.rs"), "mod leaf;").unwrap();
    std::fs::write(
        src.join("checks/deep/leaf.rs"),
        "use super::super::a; use crate::checks::a::f;",
    )
    .unwrap();
    assert_eq!(references_to_the_front_door(src, &["checks"]), vec![]);
    std::fs::write(src.join("checks/a.rs"), "use super::*;").unwrap();
    std::fs::write(
        src.join("checks/deep/leaf.rs"),
        "use crate::checks::Item; use super::*; use super::super::a;",
    )
    .unwrap();
    let mut refs = references_to_the_front_door(src, &["checks"]);
    refs.sort();
    assert_eq!(
        refs,
        vec![
            ("checks/a.rs".to_owned(), "checks::*".to_owned()),
            ("checks/deep/leaf.rs".to_owned(), "Item".to_owned()),
            (
                "checks/deep/leaf.rs".to_owned(),
                "checks::deep::*".to_owned()
            ),
        ]
    );
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

#[test]
fn paths_resolve_through_groups_super_and_self() {
    let here = vec!["config".to_owned(), "error".to_owned()];
    let paths = named_paths(
        "use super::source::{SourceFile, Span};\nuse crate::net::{proxy, tls::Ca};\nx = self::y;",
        &here,
        false,
    );
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    let climbed = named_paths("use super::super::net::Ca;", &here, false);
    assert_eq!(climbed, vec![vec!["net".to_owned(), "Ca".to_owned()]]);
    let grouped = named_paths("use super::{source, error::Position};", &here, false);
    let grouped: Vec<String> = grouped.iter().map(|p| p.join("::")).collect();
    assert_eq!(grouped, ["config::source", "config::error::Position"]);
    assert!(
        joined.contains(&"config::source::SourceFile".to_owned()),
        "{joined:?}"
    );
    assert!(joined.contains(&"net::tls::Ca".to_owned()), "{joined:?}");
    assert!(joined.contains(&"net::proxy".to_owned()), "{joined:?}");
    assert!(joined.contains(&"config::y".to_owned()), "{joined:?}");
}

#[test]
fn a_circle_between_two_files_of_one_folder_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("config")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod config;").unwrap();
    std::fs::write(src.join("config/mod.rs"), "mod error; mod source;").unwrap();
    std::fs::write(
        src.join("config/error.rs"),
        "use super::source::SourceFile;",
    )
    .unwrap();
    std::fs::write(
        src.join("config/source.rs"),
        "use super::error::{ConfigError, Position};",
    )
    .unwrap();
    let cycle = find_cycle(&module_graph(src)).expect("error.rs and source.rs name each other");
    assert!(cycle.contains(&"config::error".to_owned()), "{cycle:?}");
    std::fs::write(src.join("config/error.rs"), "use std::fmt;").unwrap();
    assert_eq!(find_cycle(&module_graph(src)), None);
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
