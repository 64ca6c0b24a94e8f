//! Configuration errors: each names the file, line and column, says what is wrong and how to fix
//! it, and renders as a miette diagnostic with the offending line underlined.

use std::fmt;
use std::path::{Path, PathBuf};

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};

/// A position in a configuration file (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// A configuration error. `Display` gives `file:line:col: what is wrong`; the miette rendering adds
/// the source line and the hint. Its details are reached through `Deref`.
#[derive(Debug)]
pub struct ConfigError(Box<ConfigErrorDetails>);

/// What a [`ConfigError`] says.
#[derive(Debug)]
pub struct ConfigErrorDetails {
    /// The file at fault.
    pub path: PathBuf,
    /// Where in the file, when known.
    pub position: Option<Position>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    source: Option<NamedSource<String>>,
    offset: Option<(usize, usize)>,
}

impl ConfigError {
    /// An error at `position` of the file at `path` whose text is `text`; `offset` is the
    /// position's byte span in `text`.
    pub(crate) fn located(
        path: &Path,
        text: &str,
        position: Option<Position>,
        offset: Option<(usize, usize)>,
        message: impl Into<String>,
    ) -> Self {
        Self(Box::new(ConfigErrorDetails {
            path: path.to_path_buf(),
            position,
            message: message.into(),
            hint: None,
            source: Some(
                NamedSource::new(path.display().to_string(), text.to_owned()).with_language("yaml"),
            ),
            offset,
        }))
    }

    /// An error about a file as a whole (missing, unreadable).
    pub(crate) fn file(path: &Path, message: impl Into<String>) -> Self {
        Self(Box::new(ConfigErrorDetails {
            path: path.to_path_buf(),
            position: None,
            message: message.into(),
            hint: None,
            source: None,
            offset: None,
        }))
    }

    /// Adds the hint that says how to fix it.
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.0.hint = Some(hint.into());
        self
    }

    /// `file:line:col` (or just `file`).
    pub fn location(&self) -> String {
        match self.position {
            Some(p) => format!("{}:{}:{}", self.path.display(), p.line, p.column),
            None => self.path.display().to_string(),
        }
    }
}

impl std::ops::Deref for ConfigError {
    type Target = ConfigErrorDetails;
    fn deref(&self) -> &ConfigErrorDetails {
        &self.0
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location(), self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Diagnostic for ConfigError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new("pallas::config"))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.hint
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display + 'a>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (offset, len) = self.offset?;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some("here".to_owned()),
            offset,
            len,
        ))))
    }
}
