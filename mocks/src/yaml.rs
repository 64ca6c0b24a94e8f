//! YAML reading with diagnostics: `file:line:col`, the offending line with a caret, and a hint
//! ("unknown field `tols`; did you mean `tools`?"). Reusable for any `DeserializeOwned` type.

use std::fmt;
use std::sync::Arc;

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A YAML file that could not be read into the expected type, or whose content is invalid.
///
/// Renders with miette as the named file, the offending line and a caret under the position,
/// plus a hint when there is one. `Display` gives `name:line:col: message`.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{name}:{line}:{column}: {message}")]
#[diagnostic(code(pallas::yaml))]
pub struct YamlError {
    /// Name of the source (usually its path).
    pub name: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column in characters (0 when unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when known.
    #[help]
    pub hint: Option<String>,
    #[source_code]
    source_code: Arc<NamedSource<String>>,
    #[label("here")]
    span: Option<SourceSpan>,
}

impl YamlError {
    /// An error at a 1-based `line`/`column` of `text` (named `name`), e.g. from a semantic
    /// validation pass that found the position with [`locate`].
    pub fn at(
        name: &str,
        text: &str,
        line: usize,
        column: usize,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Self {
        let span = span_at(text, line, column);
        Self {
            name: name.to_owned(),
            line,
            column,
            message: message.into(),
            hint,
            source_code: Arc::new(NamedSource::new(name, text.to_owned())),
            span,
        }
    }

    /// The offending source line with a caret under the column, as plain text (empty when the
    /// position is unknown). Useful where miette's graphical renderer is not wanted.
    pub fn snippet(&self) -> String {
        if self.line == 0 {
            return String::new();
        }
        let Some(text) = self.source_code.inner().lines().nth(self.line - 1) else {
            return String::new();
        };
        let pad: String = text
            .chars()
            .take(self.column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!("{text}\n{pad}^")
    }
}

/// Parses `text` (named `name` in messages) into `T`.
///
/// Errors carry `name:line:col`, the offending line with a caret, and for unknown fields or
/// variants a "did you mean" hint computed from the names serde expected.
pub fn from_str<T: DeserializeOwned>(name: &str, text: &str) -> Result<T, YamlError> {
    serde_saphyr::from_str::<T>(text).map_err(|e| convert(name, text, &e))
}

fn convert(name: &str, text: &str, err: &serde_saphyr::Error) -> YamlError {
    let (line, column) = err
        .location()
        .map(|l| (to_usize(l.line()), to_usize(l.column())))
        .unwrap_or((0, 0));
    let (message, hint) = match innermost(err) {
        serde_saphyr::Error::SerdeUnknownField {
            field, expected, ..
        } => (
            format!("unknown field `{field}`"),
            Some(did_you_mean(field, expected, "expected one of")),
        ),
        serde_saphyr::Error::SerdeUnknownVariant {
            variant, expected, ..
        } => (
            format!("unknown variant `{variant}`"),
            Some(did_you_mean(variant, expected, "expected one of")),
        ),
        serde_saphyr::Error::SerdeMissingField { field, .. } => (
            format!("missing field `{field}`"),
            Some(format!("add `{field}:` to this mapping")),
        ),
        other => (plain_message(other), None),
    };
    YamlError::at(name, text, line, column, message, hint)
}

fn innermost(mut err: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::WithSnippet { error, .. } = err {
        err = error;
    }
    err
}

fn plain_message(err: &serde_saphyr::Error) -> String {
    let formatter = serde_saphyr::UserMessageFormatter;
    let mut options = serde_saphyr::RenderOptions::new(&formatter);
    options.snippets = serde_saphyr::SnippetMode::Off;
    let rendered = err.render_with_options(options);
    // The renderer may prefix the position; keep the message itself.
    let first = rendered.lines().next().unwrap_or_default().trim();
    strip_position_prefix(first).to_owned()
}

fn strip_position_prefix(s: &str) -> &str {
    // e.g. "line 2 column 8: expected sequence start"
    if let Some(rest) = s.strip_prefix("line ")
        && let Some(idx) = rest.find(": ")
        && rest[..idx].contains("column")
    {
        return &rest[idx + 2..];
    }
    s
}

/// "did you mean `x`?" when a candidate is close (Jaro–Winkler ≥ 0.8), else the full list.
pub fn did_you_mean(got: &str, expected: &[&str], list_intro: &str) -> String {
    let best = expected
        .iter()
        .map(|c| (strsim::jaro_winkler(got, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, c)) => format!("did you mean `{c}`?"),
        None if expected.is_empty() => "no keys are allowed here".to_owned(),
        None => format!(
            "{list_intro}: {}",
            expected
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Byte span of the token starting at 1-based `line`/`column` (characters).
fn span_at(text: &str, line: usize, column: usize) -> Option<SourceSpan> {
    if line == 0 {
        return None;
    }
    let mut offset = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col_byte = l
                .char_indices()
                .nth(column.saturating_sub(1))
                .map(|(b, _)| b)
                .unwrap_or(l.trim_end_matches(['\n', '\r']).len());
            let rest = &l[col_byte..];
            let len = rest
                .find(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | ']' | '}'))
                .unwrap_or(rest.len())
                .max(1)
                .min(rest.len().max(1));
            return Some(SourceSpan::new((offset + col_byte).into(), len));
        }
        offset += l.len();
    }
    Some(SourceSpan::new(text.len().into(), 0))
}

/// A YAML document as a tree of nodes with their positions, for semantic validation passes that
/// must point at a key or value after serde accepted the shape.
#[derive(Debug, Clone)]
pub struct Node {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// Content.
    pub kind: NodeKind,
}

/// The content of a [`Node`].
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A mapping: keys (scalars rendered as strings) and value nodes, in document order.
    Map(Vec<(String, Node)>),
    /// A sequence.
    Seq(Vec<Node>),
    /// Any scalar (or null).
    Scalar,
}

impl Node {
    /// Parses `text` into a position tree. `None` if it is not valid YAML.
    pub fn parse(text: &str) -> Option<Node> {
        serde_saphyr::from_str::<Node>(text).ok()
    }

    /// The node at `path` (dot-separated keys; sequence indices as numbers), or the deepest
    /// existing ancestor.
    pub fn locate(&self, path: &str) -> &Node {
        let mut node = self;
        for seg in path.split('.').filter(|s| !s.is_empty()) {
            let next = match &node.kind {
                NodeKind::Map(entries) => entries.iter().find(|(k, _)| k == seg).map(|(_, v)| v),
                NodeKind::Seq(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
                NodeKind::Scalar => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        node
    }
}

/// The 1-based line and column of the node at `path` in `text` (see [`Node::locate`]);
/// `(0, 0)` when `text` is not valid YAML.
pub fn locate(text: &str, path: &str) -> (usize, usize) {
    Node::parse(text)
        .map(|root| {
            let n = root.locate(path);
            (n.line, n.column)
        })
        .unwrap_or((0, 0))
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<NodeKind>::deserialize(deserializer)?;
        Ok(Node {
            line: to_usize(spanned.referenced.line()),
            column: to_usize(spanned.referenced.column()),
            kind: spanned.value,
        })
    }
}

impl<'de> Deserialize<'de> for NodeKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

macro_rules! scalar_visits {
    ($($f:ident: $t:ty),*) => {
        $(fn $f<E: de::Error>(self, _v: $t) -> Result<NodeKind, E> { Ok(NodeKind::Scalar) })*
    };
}

impl<'de> Visitor<'de> for KindVisitor {
    type Value = NodeKind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    scalar_visits!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64,
        visit_i128: i128, visit_u128: u128, visit_str: &str, visit_bytes: &[u8]);

    fn visit_unit<E: de::Error>(self) -> Result<NodeKind, E> {
        Ok(NodeKind::Scalar)
    }

    fn visit_none<E: de::Error>(self) -> Result<NodeKind, E> {
        Ok(NodeKind::Scalar)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<NodeKind, D::Error> {
        NodeKind::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeKind, A::Error> {
        let mut items = Vec::new();
        while let Some(n) = seq.next_element::<Node>()? {
            items.push(n);
        }
        Ok(NodeKind::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeKind, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<serde_json::Value>()? {
            let key = match key {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(NodeKind::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Server {
        name: String,
        #[serde(default)]
        tools: Vec<String>,
    }

    #[test]
    fn unknown_field_names_position_and_suggests_the_close_name() {
        let text = "name: argos\ntols: [a]\n";
        let err = from_str::<Server>("eco.yaml", text).unwrap_err();
        assert_eq!((err.line, err.column), (2, 1));
        assert_eq!(err.message, "unknown field `tols`");
        assert_eq!(err.hint.as_deref(), Some("did you mean `tools`?"));
        assert!(err.to_string().starts_with("eco.yaml:2:1: "), "{err}");
    }

    #[test]
    fn snippet_puts_a_caret_under_the_column() {
        let err = from_str::<Server>("eco.yaml", "name: a\ntools: [x]\nextra: 1\n").unwrap_err();
        assert_eq!(err.snippet(), "extra: 1\n^");
    }

    #[test]
    fn far_unknown_field_lists_the_expected_names() {
        let err = from_str::<Server>("x.yaml", "name: a\nzzzzzz: 1\n").unwrap_err();
        assert_eq!(
            err.hint.as_deref(),
            Some("expected one of: `name`, `tools`")
        );
    }

    #[test]
    fn syntax_error_reports_a_position_and_a_message() {
        let err = from_str::<Server>("bad.yaml", "name: [a\n").unwrap_err();
        assert!(err.line >= 1, "{err:?}");
        assert!(!err.message.is_empty());
        assert!(!err.message.starts_with("line "), "{}", err.message);
    }

    #[test]
    fn wrong_type_reports_the_value_position() {
        let err = from_str::<Server>("t.yaml", "name: a\ntools: 3\n").unwrap_err();
        assert_eq!(err.line, 2, "{err:?}");
    }

    #[test]
    fn locate_finds_nested_keys_and_sequence_items() {
        let text = "llms:\n  openai:\n    script:\n      - text: hi\n      - tool_calls:\n          - name: ''\n";
        assert_eq!(
            locate(text, "llms.openai.script.1.tool_calls.0.name"),
            (6, 19)
        );
        assert_eq!(locate(text, "llms.openai"), (3, 5));
        // Missing segments fall back to the deepest existing ancestor.
        assert_eq!(locate(text, "llms.openai.nope"), (3, 5));
    }

    #[test]
    fn miette_renders_the_line_and_help() {
        let text = "name: argos\ntols: [a]\n";
        let err = from_str::<Server>("eco.yaml", text).unwrap_err();
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &err)
            .unwrap();
        assert!(out.contains("tols: [a]"), "{out}");
        assert!(out.contains("did you mean `tools`?"), "{out}");
        assert!(out.contains("eco.yaml:2:1"), "{out}");
    }
}
