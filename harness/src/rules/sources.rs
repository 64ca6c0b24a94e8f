//! The bundled copies of the documents rules quote (seeds, MCP specification pages, schemas),
//! and the check that every quote is found in its document verbatim (whitespace-normalised).

use super::{Doc, Rule, RuleBook};

const SEEDS: &[(Doc, &str)] = &[
    (
        Doc::Seed000,
        include_str!("../../rules/sources/seeds/000_12248c68b724c0a6.txt"),
    ),
    (
        Doc::Seed001,
        include_str!("../../rules/sources/seeds/001_d1a094683dafbc97.txt"),
    ),
    (
        Doc::Seed002,
        include_str!("../../rules/sources/seeds/002_218eeb7c7e98757d.txt"),
    ),
    (
        Doc::Seed003,
        include_str!("../../rules/sources/seeds/003_a05661fda00f18cf.txt"),
    ),
    (
        Doc::Seed004,
        include_str!("../../rules/sources/seeds/004_86b62ae9e960ceee.txt"),
    ),
];

/// The seed files as bundled: `(file name, text)`.
pub const SEED_FILES: &[(&str, &str)] = &[
    ("000_12248c68b724c0a6.txt", SEEDS[0].1),
    ("001_d1a094683dafbc97.txt", SEEDS[1].1),
    ("002_218eeb7c7e98757d.txt", SEEDS[2].1),
    ("003_a05661fda00f18cf.txt", SEEDS[3].1),
    ("004_86b62ae9e960ceee.txt", SEEDS[4].1),
];

const MCP_PAGES: &[&str] = &[
    include_str!("../../rules/sources/mcp-2025-11-25/index.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/basic_index.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/basic_lifecycle.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/basic_transports.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/basic_utilities_cancellation.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/basic_utilities_progress.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/server_prompts.mdx"),
    include_str!("../../rules/sources/mcp-2025-11-25/server_tools.mdx"),
];

const MCP_SCHEMA_2025: &str = include_str!("../../schemas/mcp-schema.2025-11-25.json");
const MCP_SCHEMA_2026: &str = include_str!("../../schemas/mcp-schema.2026-07-28.json");
const REGISTRY_SCHEMA: &str = include_str!("../../schemas/server.schema.2025-12-11.json");

/// Collapses every run of whitespace into one space.
pub fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn descriptions(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("description", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => descriptions(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| descriptions(v, out)),
        _ => {}
    }
}

/// The searchable text of a document (normalised); `None` for the kit's own statements.
/// Schema documents yield their description texts, one per paragraph.
pub fn text(doc: Doc) -> Option<Vec<String>> {
    let schema = |raw: &str| {
        let mut out = Vec::new();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(raw) {
            descriptions(&v, &mut out);
        }
        Some(out.iter().map(|d| normalise(d)).collect())
    };
    match doc {
        Doc::Kit => None,
        Doc::Mcp20251125 => Some(MCP_PAGES.iter().map(|p| normalise(p)).collect()),
        Doc::McpSchema20251125 => schema(MCP_SCHEMA_2025),
        Doc::McpSchema20260728 => schema(MCP_SCHEMA_2026),
        Doc::RegistrySchema => schema(REGISTRY_SCHEMA),
        seed => SEEDS
            .iter()
            .find(|(d, _)| *d == seed)
            .map(|(_, t)| vec![normalise(t)]),
    }
}

/// A quote that is not where its rule says.
#[derive(Debug, Clone, PartialEq)]
pub struct QuoteProblem {
    /// The rule.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

fn check_rule(rule: &Rule) -> Option<QuoteProblem> {
    let texts = text(rule.doc)?;
    let quote = normalise(&rule.quote);
    if !texts.iter().any(|t| t.contains(&quote)) {
        return Some(QuoteProblem {
            rule: rule.id.clone(),
            message: format!(
                "quote not found verbatim in {}: \"{}\"",
                rule.doc.title(),
                rule.quote
            ),
        });
    }
    if let Some(column) = &rule.table_column {
        // The row must sit under a header naming the column, with `yes` in that column.
        let doc_text = SEEDS
            .iter()
            .find(|(d, _)| *d == rule.doc)
            .map(|(_, t)| *t)?;
        let lines: Vec<&str> = doc_text.lines().collect();
        let row = lines.iter().position(|l| normalise(l) == quote);
        let header = row.and_then(|r| {
            lines[..r]
                .iter()
                .rev()
                .take_while(|l| l.trim_start().starts_with('|'))
                .last()
        });
        let cell_yes = header.zip(row).is_some_and(|(h, r)| {
            let cols: Vec<String> = h.split('|').map(|c| c.trim().to_owned()).collect();
            let cells: Vec<String> = split_row(lines[r]);
            cols.iter()
                .position(|c| c.eq_ignore_ascii_case(column))
                .and_then(|i| cells.get(i))
                .is_some_and(|c| c.eq_ignore_ascii_case("yes"))
        });
        if !cell_yes {
            return Some(QuoteProblem {
                rule: rule.id.clone(),
                message: format!("the quoted row has no `yes` under a `{column}` column"),
            });
        }
    }
    None
}

/// Splits a markdown table row into cells, keeping escaped `\|` inside a cell.
fn split_row(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                if let Some(cell) = cells.last_mut() {
                    cell.push('|');
                }
            }
            '|' => cells.push(String::new()),
            c => {
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

/// Every rule whose quote is not found in its document.
pub fn verify_quotes(book: &RuleBook) -> Vec<QuoteProblem> {
    book.rules.values().filter_map(check_rule).collect()
}
