//! The rule data: every rule the kit enforces (a verbatim quote of its source and the level its
//! keyword gives) and every catalogued check (the rules it enforces, its premise). Bundled from
//! `harness/rules/*.yaml`; the level of a check is decided here and nowhere else.

mod keyword;
pub mod sources;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use keyword::{Keyword, keyword_level, keyword_level_in_capitals};

use crate::diag::{SpecError, from_yaml};
use crate::vocab::{Capability, Level};

/// The bundled rule files, one per area (a family of checks, or a contract pack), in load order.
pub const FILES: &[(&str, &str)] = &[
    (
        "harness/rules/pallas-registry.yaml",
        include_str!("../../rules/pallas-registry.yaml"),
    ),
    (
        "harness/rules/pallas-health.yaml",
        include_str!("../../rules/pallas-health.yaml"),
    ),
    (
        "harness/rules/pallas-progress.yaml",
        include_str!("../../rules/pallas-progress.yaml"),
    ),
    (
        "harness/rules/pallas-bearer.yaml",
        include_str!("../../rules/pallas-bearer.yaml"),
    ),
    (
        "harness/rules/pallas-metrics.yaml",
        include_str!("../../rules/pallas-metrics.yaml"),
    ),
    (
        "harness/rules/pallas-messages.yaml",
        include_str!("../../rules/pallas-messages.yaml"),
    ),
    (
        "harness/rules/mcp.yaml",
        include_str!("../../rules/mcp.yaml"),
    ),
    (
        "harness/rules/pallas-config.yaml",
        include_str!("../../rules/pallas-config.yaml"),
    ),
    (
        "harness/rules/pallas-startup.yaml",
        include_str!("../../rules/pallas-startup.yaml"),
    ),
    (
        "harness/rules/pallas-logging.yaml",
        include_str!("../../rules/pallas-logging.yaml"),
    ),
    (
        "harness/rules/mcpctl.yaml",
        include_str!("../../rules/mcpctl.yaml"),
    ),
    (
        "harness/rules/percolate.yaml",
        include_str!("../../rules/percolate.yaml"),
    ),
    (
        "harness/rules/agentic-server.yaml",
        include_str!("../../rules/agentic-server.yaml"),
    ),
];

/// The document a rule quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Doc {
    /// Seed 000: the Pallas↔Daedalus interface contract.
    #[serde(rename = "seed-000")]
    Seed000,
    /// Seed 001: the Pallas technical reference.
    #[serde(rename = "seed-001")]
    Seed001,
    /// Seed 002: mcpctl agents.
    #[serde(rename = "seed-002")]
    Seed002,
    /// Seed 003: Percolate.
    #[serde(rename = "seed-003")]
    Seed003,
    /// Seed 004: McpAgenticServer.
    #[serde(rename = "seed-004")]
    Seed004,
    /// The MCP specification, revision 2025-11-25 (its pages).
    #[serde(rename = "mcp-2025-11-25")]
    Mcp20251125,
    /// The description texts of the MCP schema 2025-11-25.
    #[serde(rename = "mcp-schema-2025-11-25")]
    McpSchema20251125,
    /// The description texts of the MCP schema 2026-07-28.
    #[serde(rename = "mcp-schema-2026-07-28")]
    McpSchema20260728,
    /// The description texts of the MCP registry `server.json` schema 2025-12-11.
    RegistrySchema,
    /// The kit's own statement of a property it infers (always with a `basis:`).
    Kit,
}

impl Doc {
    /// How reports name the document.
    pub fn title(self) -> &'static str {
        match self {
            Self::Seed000 => "seed 000",
            Self::Seed001 => "seed 001",
            Self::Seed002 => "seed 002",
            Self::Seed003 => "seed 003",
            Self::Seed004 => "seed 004",
            Self::Mcp20251125 => "MCP 2025-11-25",
            Self::McpSchema20251125 => "MCP schema 2025-11-25",
            Self::McpSchema20260728 => "MCP schema 2026-07-28",
            Self::RegistrySchema => "MCP registry server.schema.json 2025-12-11",
            Self::Kit => "the kit",
        }
    }

    /// Whether the document is a seed.
    pub fn is_seed(self) -> bool {
        matches!(
            self,
            Self::Seed000 | Self::Seed001 | Self::Seed002 | Self::Seed003 | Self::Seed004
        )
    }
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable rule ID (`s000.registry-content-type`).
    pub id: String,
    /// The document quoted.
    pub doc: Doc,
    /// Section, page or JSON path inside it.
    pub section: String,
    /// The verbatim sentence.
    pub quote: String,
    /// The level its keyword gives.
    pub level: Level,
    /// Why the rule holds when its quote has no normative keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
    /// The quote is a table row whose column of this name says `yes` (a `Required` column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_column: Option<String>,
}

/// Why a rule's quote gives it no level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoLevel {
    /// Keywords of different levels (the words found).
    #[error("the quote mixes keywords of different levels ({}); quote one sentence", .0.join(", "))]
    Mixed(Vec<String>),
    /// No keyword, and no `basis:` to read a level from.
    #[error("the quote has no normative keyword and the rule states no `basis:`")]
    NoBasis,
}

impl Rule {
    /// `seed 000 §1 Registry Endpoint`.
    pub fn source(&self) -> String {
        format!("{} {}", self.doc.title(), self.section)
    }

    /// The normative keywords of the quote as its document defines them: MCP's pages and
    /// schemas adopt BCP 14 "when, and only when, they appear in all capitals"; the seeds and the
    /// registry schema use no capitals for them, so any case counts there.
    pub fn keyword(&self) -> Keyword {
        match self.doc {
            Doc::Mcp20251125 | Doc::McpSchema20251125 | Doc::McpSchema20260728 => {
                keyword_level_in_capitals(&self.quote)
            }
            _ => keyword_level(&self.quote),
        }
    }

    /// The level the quote gives by itself: its keyword, a `Required` column, or (without
    /// either) the most the basis allows.
    pub fn derived_level(&self) -> Result<Level, NoLevel> {
        if self
            .table_column
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("required"))
        {
            return Ok(Level::Must);
        }
        match self.keyword() {
            Keyword::Level(level, _) => Ok(level),
            Keyword::Ambiguous(words) => Err(NoLevel::Mixed(words)),
            Keyword::None => {
                let basis = self.basis.as_deref().unwrap_or_default();
                if basis.trim().is_empty() {
                    return Err(NoLevel::NoBasis);
                }
                // A sentence without a keyword is at most SHOULD, an incident of seed 001 too.
                Ok(Level::Should)
            }
        }
    }
}

/// How a check is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evaluation {
    /// A built-in evaluator over the observations (parameters via `with:`).
    Builtin,
    /// Run automatically on every scenario where it applies (wire validity).
    Automatic,
    /// Decided by the scenario's `assert:` entries attributed to the check.
    Assertion,
}

/// A check as the rule files declare it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckEntry {
    id: String,
    title: String,
    rules: Vec<String>,
    #[serde(default)]
    capability: Option<Capability>,
    #[serde(default)]
    scale: Scale,
    evaluation: Evaluation,
    premise: String,
}

/// The level scale a check's entries count on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// The generic level: every bridge answers the check (a capability it claims opts it in).
    #[default]
    Generic,
    /// The Pallas level only: the rule's sentence binds a Pallas (seed 000's "Pallas
    /// Guarantees", seed 001's description of Pallas's own tool), and no claim of a bridge that is
    /// not a Pallas opts it in. A check whose capability is Pallas-only is on this scale too.
    Pallas,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    checks: Vec<CheckEntry>,
}

/// One catalogued check, with its level decided from its rules.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckDef {
    /// Stable ID (`PROG-002`).
    pub id: String,
    /// The level of its first rule.
    pub level: Level,
    /// The rules it enforces, first the one that gives its level.
    pub rules: Vec<String>,
    /// Where the rules come from (`seed 000 §1 Registry Endpoint`), in rule order.
    pub refs: Vec<String>,
    /// One line.
    pub title: String,
    /// The capability the target must claim for the check to run (else `skip`).
    pub capability: Option<Capability>,
    /// The level scale its entries count on.
    pub scale: Scale,
    /// How it is evaluated.
    pub evaluation: Evaluation,
    /// The observations it needs; without them the verdict is `inconclusive`.
    pub premise: String,
    /// The quote of its first rule.
    pub quote: String,
    /// Each of its rules as a finding cites it (in `rules` order): a non-pass verdict that
    /// names the rule whose clause it breaks takes that rule's level, quote and source.
    #[serde(skip)]
    pub rule_defs: Vec<CheckRule>,
}

/// One rule of a check as a finding cites it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRule {
    /// Rule ID (`s000.registry-content-type`).
    pub id: String,
    /// Its level.
    pub level: Level,
    /// Its verbatim quote.
    pub quote: String,
    /// Where it comes from (`seed 000 §1 Registry Endpoint`).
    pub source: String,
}

impl CheckDef {
    /// The rule `id` of this check (`None` when the check does not enforce it).
    pub fn rule_def(&self, id: &str) -> Option<&CheckRule> {
        self.rule_defs.iter().find(|r| r.id == id)
    }

    /// The family: the ID up to the last `-` (`PROG`).
    pub fn family(&self) -> &str {
        family_of(&self.id)
    }
}

/// The family of any check ID (`ASSERT` for unattributed assertions).
pub fn family_of(id: &str) -> &str {
    id.rsplit_once('-').map(|(f, _)| f).unwrap_or(id)
}

/// Every rule and check.
#[derive(Debug, Clone, Default)]
pub struct RuleBook {
    /// Rules by ID.
    pub rules: BTreeMap<String, Rule>,
    /// Checks, ordered by family then number.
    pub checks: Vec<CheckDef>,
}

impl RuleBook {
    /// Parses and validates rule files (`(name, text)`), with located errors.
    #[allow(clippy::result_large_err)]
    pub fn load(files: &[(&str, &str)]) -> Result<Self, SpecError> {
        let mut rules: BTreeMap<String, (Rule, &str)> = BTreeMap::new();
        let mut entries: Vec<(CheckEntry, &str, &str)> = Vec::new();
        for (name, text) in files {
            let file: RuleFile = from_yaml(name, text)?;
            for rule in file.rules {
                let at = |msg: String, hint: Option<String>| {
                    located(name, text, &format!("id: {}", rule.id), msg, hint)
                };
                if rules.contains_key(&rule.id) {
                    return Err(at(format!("duplicate rule ID `{}`", rule.id), None));
                }
                let derived = rule
                    .derived_level()
                    .map_err(|m| at(format!("rule `{}`: {m}", rule.id), None))?;
                if let Some(problem) = level_problem(&rule, derived) {
                    return Err(at(
                        format!("rule `{}`: {problem}", rule.id),
                        Some(format!("the quote gives `level: {}`", derived.as_str())),
                    ));
                }
                rules.insert(rule.id.clone(), (rule, name));
            }
            for check in file.checks {
                entries.push((check, name, text));
            }
        }
        let mut seen = BTreeSet::new();
        let mut checks = Vec::new();
        for (entry, name, text) in entries {
            let at = |msg: String, hint: Option<String>| {
                located(name, text, &format!("id: {}", entry.id), msg, hint)
            };
            if !seen.insert(entry.id.clone()) {
                return Err(at(format!("duplicate check ID `{}`", entry.id), None));
            }
            if entry.rules.is_empty() {
                return Err(at(
                    format!("check `{}` names no rule", entry.id),
                    Some("every check enforces at least one rule: `rules: [rule-id]`".into()),
                ));
            }
            let mut refs = Vec::new();
            let mut rule_defs = Vec::new();
            for id in &entry.rules {
                let Some((rule, _)) = rules.get(id) else {
                    let hint = crate::diag::did_you_mean(id, rules.keys().map(String::as_str))
                        .map(|c| format!("did you mean `{c}`?"));
                    return Err(at(
                        format!("check `{}` names unknown rule `{id}`", entry.id),
                        hint,
                    ));
                };
                refs.push(rule.source());
                rule_defs.push(CheckRule {
                    id: rule.id.clone(),
                    level: rule.level,
                    quote: rule.quote.clone(),
                    source: rule.source(),
                });
            }
            let Some((first, _)) = rules.get(&entry.rules[0]) else {
                continue;
            };
            checks.push(CheckDef {
                level: first.level,
                quote: first.quote.clone(),
                id: entry.id,
                rules: entry.rules,
                refs,
                title: entry.title,
                capability: entry.capability,
                scale: if entry.capability.is_some_and(Capability::is_pallas_only) {
                    Scale::Pallas
                } else {
                    entry.scale
                },
                evaluation: entry.evaluation,
                premise: entry.premise,
                rule_defs,
            });
        }
        checks.sort_by(|a, b| (a.family(), number_of(&a.id)).cmp(&(b.family(), number_of(&b.id))));
        Ok(Self {
            rules: rules.into_iter().map(|(k, (r, _))| (k, r)).collect(),
            checks,
        })
    }

    /// A check by ID.
    pub fn check(&self, id: &str) -> Option<&CheckDef> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// A rule by ID.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.get(id)
    }
}

/// Why a rule's declared level does not follow from its quote, if it does not.
fn level_problem(rule: &Rule, derived: Level) -> Option<String> {
    let stated = rule.table_column.is_some() || matches!(rule.keyword(), Keyword::Level(..));
    if rule.doc == Doc::Kit {
        if rule.basis.is_none() {
            return Some("the kit's own statement needs a `basis:`".into());
        }
        if rule.level == Level::Must {
            return Some("a property the kit infers is at most SHOULD".into());
        }
    }
    if stated && rule.doc != Doc::Kit && rule.level != derived {
        return Some(format!(
            "it says {} but its quote's keyword gives {}",
            rule.level.as_str(),
            derived.as_str()
        ));
    }
    // Without a keyword a basis may lower the level, never raise it.
    if !stated && rule.level < derived {
        return Some(format!(
            "it says {} but a quote without a keyword gives at most {}",
            rule.level.as_str(),
            derived.as_str()
        ));
    }
    None
}

fn number_of(id: &str) -> u32 {
    id.rsplit_once('-')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(u32::MAX)
}

fn located(
    file: &str,
    text: &str,
    needle: &str,
    message: String,
    hint: Option<String>,
) -> SpecError {
    let (line, column) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            let col = l.find(needle)?;
            let rest = &l[col + needle.len()..];
            rest.chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '-' && c != '.')
                .then_some((i + 1, col + 1))
        })
        .unwrap_or((0, 0));
    SpecError::at(file, text, line, column, message, hint)
}

static BOOK: OnceLock<Result<RuleBook, Box<SpecError>>> = OnceLock::new();

/// The bundled rule book (loaded once).
pub fn book() -> Result<&'static RuleBook, &'static SpecError> {
    BOOK.get_or_init(|| RuleBook::load(FILES).map_err(Box::new))
        .as_ref()
        .map_err(|e| &**e)
}

/// The rules as JSON (`pallas-conformance checks --rules --format json`).
pub fn rules_json(book: &RuleBook) -> serde_json::Value {
    serde_json::Value::Array(
        book.rules
            .values()
            .map(|r| {
                serde_json::json!({
                    "id": r.id,
                    "level": r.level.as_str(),
                    "source": r.source(),
                    "quote": r.quote,
                    "basis": r.basis,
                    "checks": book.checks.iter().filter(|c| c.rules.contains(&r.id)).map(|c| c.id.as_str()).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// The rules as text: ID, level, source, quote.
pub fn rules_table(book: &RuleBook) -> String {
    let mut out = String::new();
    for r in book.rules.values() {
        out.push_str(&format!(
            "{:<40} {:<6} {}\n    \"{}\"\n",
            r.id,
            r.level.as_str(),
            r.source(),
            r.quote
        ));
        if let Some(b) = &r.basis {
            out.push_str(&format!("    basis: {b}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
