//! AgentCards: where an agent's card is (`module:` or `card:`) and its front matter.

use source::SourceFile;
use std::path::{Path, PathBuf};

use super::*;

/// Where an agent's definition is: an AgentCard (markdown with front matter) or a Python module.
pub(super) enum AgentFile {
    /// `card: path.md`, or `module: a.b` when only `a/b.md` exists.
    Card(PathBuf),
    /// `module: a.b` → `a/b.py` (seed 001: an importable module holding a `fast` instance).
    Module(PathBuf),
}

impl AgentFile {
    /// The file's path.
    pub(super) fn path(&self) -> &Path {
        match self {
            Self::Card(p) | Self::Module(p) => p,
        }
    }
}

pub(super) fn card_path(
    dir: &Path,
    src: &SourceFile,
    key: &str,
    entry: &files::AgentEntrySpec,
) -> Result<AgentFile, ConfigError> {
    match (&entry.card, &entry.module) {
        (Some(card), _) => {
            let p = PathBuf::from(&card.value);
            Ok(AgentFile::Card(if p.is_absolute() {
                p
            } else {
                src.path.parent().unwrap_or(dir).join(p)
            }))
        }
        (None, Some(module)) => {
            // `ms-module-from-agent-key`: step 1's `agents.<name>` taken literally.
            let from_key = format!("agents.{key}");
            let m = if crate::defect!("ms-module-from-agent-key") {
                from_key.as_str()
            } else {
                module.value.trim()
            };
            if m.is_empty()
                || !m.split('.').all(|part| {
                    !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
                })
            {
                return Err(
                    at(src, module, format!("`{m}` is not a module path")).with_hint(
                        "write a dotted module path such as agents.jarvis (→ agents/jarvis.py)",
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
            let py = p.with_extension("py");
            let md = p.with_extension("md");
            Ok(if !py.exists() && md.exists() {
                AgentFile::Card(md)
            } else {
                AgentFile::Module(py)
            })
        }
        (None, None) => Err(src
            .error_at(
                find_key(src, key),
                format!("agent `{key}` has neither `module` nor `card`"),
            )
            .with_hint(format!(
                "add `module: agents.{key}` (reads agents/{key}.py) or `card: path/to/{key}.md`"
            ))),
    }
}

/// Reads the agent's definition: its source file, its settings and its instruction.
pub(super) fn read_agent(
    agents_src: &SourceFile,
    key: &str,
    entry: &files::AgentEntrySpec,
    file: &AgentFile,
) -> Result<(SourceFile, CardSpec, String), ConfigError> {
    let path = file.path();
    let what = match file {
        AgentFile::Card(_) => "card",
        AgentFile::Module(_) => "module",
    };
    let src = SourceFile::read(path, &format!("the {what} of agent `{key}`"), "").map_err(|_| {
        let span = entry.card.as_ref().or(entry.module.as_ref());
        let pos = span.and_then(|s| agents_src.position(&s.referenced));
        agents_src.error_at(
            pos,
            format!("the {what} of agent `{key}` is missing: {} does not exist", path.display()),
        )
        .with_hint(match file {
            AgentFile::Card(_) => format!(
                "create {} (markdown with YAML front matter: name, description, model, servers, request_params; the body is the instruction), or set `card:` to its path",
                path.display()
            ),
            AgentFile::Module(_) => format!(
                "create {} with `fast = FastAgent(\"{key}\")` and an `@fast.agent(name=\"{key}\", instruction=…, servers=[…])` decorated function",
                path.display()
            ),
        })
    })?;
    match file {
        AgentFile::Card(_) => {
            let (src, card) = split_card(src)?;
            let spec: CardSpec = src.parse(
                &card.front_matter,
                "see the AgentCard section of reference-impl/README.md",
            )?;
            let instruction = if card.body.trim().is_empty() {
                spec.instruction.clone().unwrap_or_default()
            } else {
                card.body.trim().to_owned()
            };
            Ok((src, spec, instruction))
        }
        AgentFile::Module(_) => {
            let yaml = super::pymodule::decorator_yaml(&src, key)?;
            let spec: CardSpec = src.parse(
                &yaml,
                "see the agent modules section of reference-impl/README.md",
            )?;
            let instruction = spec.instruction.clone().unwrap_or_default();
            Ok((src, spec, instruction))
        }
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
