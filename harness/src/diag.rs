//! Diagnostics for YAML files (scenarios, target profiles, baselines): file:line:col, the
//! offending line with a caret, and a hint such as "did you mean `PROG-001`?".

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::de::DeserializeOwned;

/// An error in a file the harness reads, pointing at the offending place.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{file}:{line}:{column}: {message}")]
pub struct SpecError {
    /// File name as given.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    #[help]
    pub hint: Option<String>,
    #[source_code]
    src: NamedSource<String>,
    #[label("here")]
    span: Option<SourceSpan>,
}

impl SpecError {
    /// An error at 1-based `line`:`column` of `text` (0 = unknown).
    pub fn at(
        file: &str,
        text: &str,
        line: usize,
        column: usize,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Self {
        let span = offset_of(text, line, column).map(|o| {
            let len = text[o..]
                .find(['\n', ':', ',', ']', '}'])
                .unwrap_or(text.len() - o)
                .max(1);
            SourceSpan::new(o.into(), len)
        });
        Self {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
            hint,
            src: NamedSource::new(file, text.to_owned()),
            span,
        }
    }

    /// The offending source line, if known.
    pub fn source_line(&self) -> Option<&str> {
        if self.line == 0 {
            return None;
        }
        self.src.inner().lines().nth(self.line - 1)
    }

    /// rustc-style rendering without colours: message, `--> file:line:col`, the line, a caret
    /// and the hint. Stable, for snapshots and plain terminals.
    pub fn render_plain(&self) -> String {
        let mut out = format!(
            "error: {}\n  --> {}:{}:{}\n",
            self.message, self.file, self.line, self.column
        );
        if let Some(src) = self.source_line() {
            let n = self.line.to_string();
            let pad = " ".repeat(n.len());
            out.push_str(&format!(
                "{pad} |\n{n} | {src}\n{pad} | {}^\n",
                " ".repeat(self.column.saturating_sub(1))
            ));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("  = help: {h}\n"));
        }
        out
    }
}

/// Byte offset of 1-based line/column (column in characters).
pub fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut offset = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col = column.saturating_sub(1);
            let within: usize = l.chars().take(col).map(char::len_utf8).sum();
            return Some(offset + within.min(l.trim_end_matches('\n').len()));
        }
        offset += l.len();
    }
    None
}

/// Line and column (1-based) of the first occurrence of `needle` in `text` at or after line
/// `from_line`; `(from_line, 1)` when there is none.
pub fn find_from(text: &str, needle: &str, from_line: usize) -> (usize, usize) {
    for (i, l) in text.lines().enumerate().skip(from_line.saturating_sub(1)) {
        if let Some(c) = l.find(needle) {
            return (i + 1, l[..c].chars().count() + 1);
        }
    }
    (from_line, 1)
}

/// The closest candidate to `word` (Jaro-Winkler ≥ 0.8 or edit distance ≤ 2).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&word.to_ascii_lowercase(), &c.to_ascii_lowercase());
        let close = score >= 0.8 || strsim::levenshtein(word, c) <= 2;
        if close && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Parses YAML into `T`, turning syntax and shape errors into a [`SpecError`] with a hint.
#[allow(clippy::result_large_err)]
pub fn from_yaml<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, SpecError> {
    serde_saphyr::from_str::<T>(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize))
            .unwrap_or((0, 0));
        let raw = e.without_snippet().to_string();
        let message = clean_message(&raw);
        let hint = hint_for(&message);
        SpecError::at(file, text, line, column, message, hint)
    })
}

fn clean_message(raw: &str) -> String {
    let first = raw.lines().next().unwrap_or(raw).trim();
    let re = regex::Regex::new(r"\s*at line \d+,? column \d+\s*$").ok();
    let msg = match re {
        Some(re) => re.replace(first, "").into_owned(),
        None => first.to_owned(),
    };
    msg.trim_start_matches("error: ").to_owned()
}

/// "unknown field `x`, expected one of `a`, `b`" → "did you mean `a`?".
fn hint_for(message: &str) -> Option<String> {
    let re = regex::Regex::new(r"unknown (?:field|variant) `([^`]*)`, expected (?:one of )?(.*)")
        .ok()?;
    let caps = re.captures(message)?;
    let word = caps.get(1)?.as_str();
    let list = caps.get(2)?.as_str();
    let candidates: Vec<&str> = list
        .split(',')
        .map(|s| s.trim().trim_start_matches("or ").trim().trim_matches('`'))
        .filter(|s| !s.is_empty())
        .collect();
    match did_you_mean(word, candidates.iter().copied()) {
        Some(c) => Some(format!("did you mean `{c}`?")),
        None => Some(format!("expected one of: {}", candidates.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_the_closest_id() {
        let ids = ["PROG-001", "PROG-002", "HEALTH-001"];
        assert_eq!(did_you_mean("PROG-01", ids), Some("PROG-001"));
        assert_eq!(did_you_mean("ZZZZZZZZ", ids), None);
    }

    #[test]
    fn offsets_count_lines_from_one() {
        let text = "a: 1\nbb: 2\n";
        assert_eq!(offset_of(text, 2, 1), Some(5));
        assert_eq!(offset_of(text, 2, 3), Some(7));
        assert_eq!(offset_of(text, 9, 1), None);
    }
}
