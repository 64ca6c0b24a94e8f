//! AgentCards: where an agent's card is (`module:` or `card:`) and its front matter.

use source::SourceFile;
use std::path::{Path, PathBuf};

use super::*;

pub(super) fn card_path(
    dir: &Path,
    src: &SourceFile,
    key: &str,
    entry: &files::AgentEntrySpec,
) -> Result<PathBuf, ConfigError> {
    match (&entry.card, &entry.module) {
        (Some(card), _) => {
            let p = PathBuf::from(&card.value);
            Ok(if p.is_absolute() {
                p
            } else {
                src.path.parent().unwrap_or(dir).join(p)
            })
        }
        (None, Some(module)) => {
            let m = module.value.trim();
            if m.is_empty()
                || !m.split('.').all(|part| {
                    !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
                })
            {
                return Err(
                    at(src, module, format!("`{m}` is not a module path")).with_hint(
                        "write a dotted module path such as agents.jarvis (→ agents/jarvis.md)",
                    ),
                );
            }
            let mut p = dir.to_path_buf();
            for part in m.split('.') {
                p.push(part);
            }
            if crate::defect!("module-card-path-flat")
                && let Some(last) = m.rsplit('.').next()
            {
                p = dir.join(last);
            }
            p.set_extension("md");
            Ok(p)
        }
        (None, None) => Err(src
            .error_at(
                find_key(src, key),
                format!("agent `{key}` has neither `module` nor `card`"),
            )
            .with_hint(format!(
                "add `module: agents.{key}` (reads agents/{key}.md) or `card: path/to/{key}.md`"
            ))),
    }
}

pub(super) fn split_card(mut src: SourceFile) -> Result<(SourceFile, Card), ConfigError> {
    let text = src.text.trim_start_matches('\u{feff}');
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(src.error_at(
            Some(Position { line: 1, column: 1 }),
            "an AgentCard must open with a `---` line (YAML front matter)",
        )
        .with_hint("start the file with ---, the front matter (name, model, servers…), ---, then the instruction"));
    }
    let mut front = String::new();
    let mut closed = false;
    let mut body = String::new();
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        front.push_str(line);
    }
    if !closed {
        return Err(src
            .error_at(
                Some(Position { line: 1, column: 1 }),
                "the card's front matter is not closed",
            )
            .with_hint("end the front matter with a `---` line before the instruction"));
    }
    for line in lines {
        body.push_str(line);
    }
    src.line_offset = 1;
    Ok((
        src,
        Card {
            front_matter: front,
            body,
        },
    ))
}
