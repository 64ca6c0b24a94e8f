//! One semantic problem of an ecosystem file, at its key, and the fixed ports its mocks take:
//! what the ecosystem's validation and the mock Pallas's share.

use std::collections::BTreeMap;

use crate::yaml::{self, YamlError};

/// One semantic problem: where (a dotted path into the document, as [`yaml::locate`] takes),
/// what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecIssue {
    /// Dotted path, e.g. `llms.openai.script.2.tool_calls.0.name`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl SpecIssue {
    pub(crate) fn new(path: String, message: impl Into<String>, hint: Option<&str>) -> Self {
        Self {
            path,
            message: message.into(),
            hint: hint.map(str::to_owned),
        }
    }

    /// This issue as a diagnostic on `text` (named `name`); `prefix` is prepended to the path
    /// when the ecosystem is nested in a larger document (e.g. `ecosystem`).
    pub fn to_yaml_error(&self, name: &str, text: &str, prefix: &str) -> YamlError {
        let path = if prefix.is_empty() {
            self.path.clone()
        } else {
            format!("{prefix}.{}", self.path)
        };
        let (line, column) = yaml::locate(text, &path);
        YamlError::at(
            name,
            text,
            line,
            column,
            format!("{}: {}", self.path, self.message),
            self.hint.clone(),
        )
    }
}

/// Fixed ports already taken, by the path of the mock that took them.
#[derive(Default)]
pub(crate) struct Ports(BTreeMap<u16, String>);

impl Ports {
    pub(crate) fn check(&mut self, port: Option<u16>, path: String, issues: &mut Vec<SpecIssue>) {
        if let Some(p) = port {
            if p == 0 {
                issues.push(SpecIssue::new(
                    path,
                    "port 0 is not a fixed port",
                    Some("omit `port` for an ephemeral port"),
                ));
            } else if let Some(other) = self.0.insert(p, path.clone()) {
                issues.push(SpecIssue::new(
                    path,
                    format!("port {p} is already used by `{other}`"),
                    Some("give every mock its own port, or omit `port`"),
                ));
            }
        }
    }
}
