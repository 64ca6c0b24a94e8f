//! The check catalog: stable IDs, levels, rules and one-line descriptions, read from the rule
//! data ([`crate::rules`]).
//!
//! IDs never change meaning once published; new rules get new IDs. `pallas-conformance checks`
//! lists this table.

pub use crate::rules::{CheckDef, Evaluation, family_of};

/// Every check, ordered by family then number (empty if the bundled rules failed to load,
/// which `pallas-conformance` reports at start).
pub fn all() -> &'static [CheckDef] {
    crate::rules::book().map_or(&[], |b| b.checks.as_slice())
}

/// Looks a check up by ID.
pub fn get(id: &str) -> Option<&'static CheckDef> {
    all().iter().find(|c| c.id == id)
}

/// Every ID, in catalog order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    all().iter().map(|c| c.id.as_str())
}

/// The catalog as JSON (`pallas-conformance checks --json`).
pub fn to_json() -> serde_json::Value {
    serde_json::Value::Array(
        all()
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id,
                    "family": c.family(),
                    "level": c.level.as_str(),
                    "rules": c.rules,
                    "refs": c.refs,
                    "quote": c.quote,
                    "title": c.title,
                    "premise": c.premise,
                    "capability": c.capability.map(crate::vocab::Capability::as_str),
                    "scale": c.scale,
                    "evaluation": c.evaluation,
                })
            })
            .collect(),
    )
}

/// The catalog as an aligned text table.
pub fn to_table() -> String {
    let mut out = String::new();
    for c in all() {
        out.push_str(&format!(
            "{:<11} {:<6} {}\n",
            c.id,
            c.level.as_str(),
            c.title
        ));
    }
    out
}

/// The catalog page (`docs/CHECKS.md`): every check by family with its level, the rules it
/// enforces (quoted, with their source) and its premise. Generated; a test keeps it current.
pub fn to_markdown() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "# The check catalog\n\nGenerated from the rule data (`harness/rules/*.yaml`) by \
         `PALLAS_BLESS=1 cargo test -p pallas-conformance --test harness -- catalog_page`; \
         `pallas-conformance checks --rules` prints the same rules. A check's level (the column \
         below) is the level of its first rule; a finding takes the level of the rule whose clause \
         it breaks (any of the check's rules), and cites that rule; its premise is what must have been observed for a verdict \
         (otherwise `inconclusive`).\n",
    );
    let Ok(book) = crate::rules::book() else {
        return out;
    };
    let mut family = "";
    for c in all() {
        if c.family() != family {
            family = c.family();
            let _ = write!(
                out,
                "\n## {family}\n\n| check | level | what holds | rules | premise |\n|---|---|---|---|---|\n"
            );
        }
        let rules = c
            .rules
            .iter()
            .filter_map(|r| book.rule(r))
            .map(|r| {
                format!(
                    "`{}` {} ({}): “{}”",
                    r.id,
                    r.level.as_str(),
                    r.source(),
                    r.quote.replace('|', "\\|").replace('\n', " ")
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            c.id,
            c.level.as_str(),
            c.title.replace('|', "\\|"),
            rules,
            c.premise.replace('|', "\\|")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let re = regex::Regex::new(r"^[A-Z]+-\d{3}$").unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for c in all() {
            assert!(re.is_match(&c.id), "{}", c.id);
            assert!(seen.insert(c.id.clone()), "duplicate {}", c.id);
            assert!(!c.refs.is_empty(), "{} has no refs", c.id);
        }
    }

    #[test]
    fn every_required_family_is_seeded() {
        for fam in ["REG", "HEALTH", "PROG", "AUTH", "MET", "MCP"] {
            assert!(all().iter().any(|c| c.family() == fam), "{fam}");
        }
    }
}
