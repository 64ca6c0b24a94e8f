//! A configuration file read into memory, and YAML parsing that keeps positions for errors.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_saphyr::{Location, SnippetMode};

use super::error::{ConfigError, Position};

/// A YAML (or card) file and its text.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Lines before the YAML part (a card's opening `---`).
    pub line_offset: usize,
}

impl SourceFile {
    /// Reads `path`; a missing or unreadable file is an error naming it.
    pub fn read(path: &Path, what: &str, hint: &str) -> Result<Self, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Self {
                path: path.to_path_buf(),
                text,
                line_offset: 0,
            }),
            Err(e) => {
                Err(ConfigError::file(path, format!("cannot read {what}: {e}")).with_hint(hint))
            }
        }
    }

    /// An error at `position` of this file.
    pub(crate) fn error_at(
        &self,
        position: Option<Position>,
        message: impl Into<String>,
    ) -> ConfigError {
        let offset = position.map(|p| self.span_at(p));
        ConfigError::located(&self.path, &self.text, position, offset, message)
    }

    /// Byte offset and length of the token at `pos` (the rest of the word on that line).
    pub fn span_at(&self, pos: Position) -> (usize, usize) {
        let mut offset = 0;
        for (i, line) in self.text.split_inclusive('\n').enumerate() {
            if i + 1 == pos.line {
                let col_byte = line
                    .char_indices()
                    .nth(pos.column.saturating_sub(1))
                    .map_or(line.trim_end().len(), |(b, _)| b);
                let rest = &line[col_byte..];
                let len = rest
                    .trim_end()
                    .find([',', ']', '}', '#'])
                    .unwrap_or_else(|| rest.trim_end().len())
                    .max(1);
                return (offset + col_byte, len.min(rest.len().max(1)));
            }
            offset += line.len();
        }
        (self.text.len().saturating_sub(1), 0)
    }

    /// The position of a YAML location in this file (cards shift by their opening line).
    pub fn position(&self, loc: &Location) -> Option<Position> {
        let line = usize::try_from(loc.line()).ok()?;
        let column = usize::try_from(loc.column()).ok()?;
        if line == 0 {
            return None;
        }
        Some(Position {
            line: line + self.line_offset,
            column: column.max(1),
        })
    }

    /// Parses `yaml` (this file's text, or the part of it that is YAML) into `T`.
    pub fn parse<T: DeserializeOwned>(&self, yaml: &str, hint: &str) -> Result<T, ConfigError> {
        if yaml.trim().is_empty() {
            return serde_saphyr::from_str::<T>("{}").map_err(|e| self.yaml_error(&e, hint));
        }
        serde_saphyr::from_str::<T>(yaml).map_err(|e| self.yaml_error(&e, hint))
    }

    fn yaml_error(&self, e: &serde_saphyr::Error, hint: &str) -> ConfigError {
        let position = e.location().and_then(|l| self.position(&l));
        let options = serde_saphyr::render_options! { snippets: SnippetMode::Off };
        let mut message = e.render_with_options(options);
        // The plain rendering appends its own (unshifted) location; ours is in the prefix.
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        let hint = unknown_field_hint(&message).unwrap_or_else(|| hint.to_owned());
        self.error_at(position, message).with_hint(hint)
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`": the closest known field.
fn unknown_field_hint(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    let (field, expected) = rest.split_once('`')?;
    let expected = expected
        .split_once("expected one of ")
        .map_or("", |(_, list)| list);
    let candidates: Vec<&str> = expected
        .split(',')
        .map(|c| c.trim().trim_matches('`'))
        .filter(|c| !c.is_empty())
        .collect();
    let best = candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(field, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c);
    Some(match best {
        Some(c) => format!(
            "did you mean `{c}`? Unknown keys are rejected so that no setting is silently lost"
        ),
        None => format!(
            "remove `{field}` or use one of: {}. Unknown keys are rejected so that no setting is silently lost",
            candidates.join(", ")
        ),
    })
}
