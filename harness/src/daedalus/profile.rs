//! A client profile: how to start a Daedalus-side client for one scenario. The kit appends the
//! mock Pallas's registry URL as the last argument and sets `PALLAS_CONFORMANCE_SCENARIO` (as the
//! official MCP conformance suite does for its clients), with the scenario's task in the
//! arguments the profile maps it to and in `PALLAS_CONFORMANCE_*` variables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::diag::{SpecError, from_yaml};

/// What a client may promise beyond the contract's minimum (a scenario that needs one is
/// skipped when the profile does not claim it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientClaim {
    /// It ends each session it opened with `DELETE` when done (MCP's SHOULD).
    CloseSession,
}

impl ClientClaim {
    /// The name in profiles and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CloseSession => "close_session",
        }
    }
}

/// A client profile file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientProfile {
    /// The client's name in reports.
    pub name: String,
    /// Program and its first arguments; relative paths resolve against the profile's folder.
    pub command: Vec<String>,
    /// Arguments added once per message of the task (`{message}` replaced), e.g.
    /// `["--message", "{message}"]`; a task with messages fails as an error without them.
    #[serde(default)]
    pub message_args: Vec<String>,
    /// Arguments added when the task names an agent (`{agent}` replaced by its server id).
    #[serde(default)]
    pub agent_args: Vec<String>,
    /// Arguments added when the task carries the user's bearer (`{bearer}` replaced).
    #[serde(default)]
    pub bearer_args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory (relative to the profile's folder); the profile's folder when absent.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// What the client promises beyond the minimum.
    #[serde(default)]
    pub claims: Vec<ClientClaim>,
    /// How long one scenario's client may run before it is stopped (an error verdict); 60 s
    /// when absent.
    #[serde(default, with = "humantime_serde")]
    pub timeout: Option<Duration>,
    /// The folder the profile was read from.
    #[serde(skip)]
    pub dir: PathBuf,
    /// The profile's file.
    #[serde(skip)]
    pub path: PathBuf,
}

/// The default time a client has to finish a scenario.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl ClientProfile {
    /// Reads and validates a profile file.
    #[allow(clippy::result_large_err)]
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let (name, text) = super::read_file(path, "client profile")?;
        let mut profile = Self::parse(&name, &text)?;
        profile.path = path.to_path_buf();
        profile.dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok(profile)
    }

    /// Parses a profile's text.
    #[allow(clippy::result_large_err)]
    pub fn parse(name: &str, text: &str) -> Result<Self, SpecError> {
        let profile: Self = from_yaml(name, text)?;
        let at = |needle: &str, msg: &str, hint: &str| {
            let (line, column) = text
                .lines()
                .enumerate()
                .find_map(|(i, l)| l.find(needle).map(|c| (i + 1, c + 1)))
                .unwrap_or((1, 1));
            SpecError::at(name, text, line, column, msg, Some(hint.to_owned()))
        };
        if profile.command.is_empty() {
            return Err(at(
                "command",
                "`command` is empty",
                "give the program and its first arguments: `command: [python, daedalus.py]`",
            ));
        }
        for (key, list, placeholder) in [
            ("message_args", &profile.message_args, "{message}"),
            ("agent_args", &profile.agent_args, "{agent}"),
            ("bearer_args", &profile.bearer_args, "{bearer}"),
        ] {
            if !list.is_empty() && !list.iter().any(|a| a.contains(placeholder)) {
                return Err(at(
                    key,
                    &format!("`{key}` never uses `{placeholder}`"),
                    &format!(
                        "put `{placeholder}` where the value goes: `{key}: [--flag, \"{placeholder}\"]`"
                    ),
                ));
            }
        }
        Ok(profile)
    }

    /// Whether the profile claims `claim`.
    pub fn claims(&self, claim: ClientClaim) -> bool {
        self.claims.contains(&claim)
    }

    /// The time one scenario's client may run.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The program, resolved against the profile's folder when it is a relative path with a
    /// `/` (a bare name is looked up in `PATH`).
    pub fn program(&self) -> String {
        let p = &self.command[0];
        if p.contains('/') && Path::new(p).is_relative() {
            let joined = self.dir.join(p);
            std::path::absolute(&joined)
                .unwrap_or(joined)
                .display()
                .to_string()
        } else {
            p.clone()
        }
    }

    /// The working directory.
    pub fn cwd(&self) -> PathBuf {
        match &self.cwd {
            Some(c) if c.is_absolute() => c.clone(),
            Some(c) => self.dir.join(c),
            None => self.dir.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_without_its_placeholder_is_refused_with_its_line() {
        let e = ClientProfile::parse(
            "p.yaml",
            "name: d\ncommand: [d]\nmessage_args: [--message]\n",
        )
        .expect_err("no placeholder");
        let text = e.render_plain();
        assert!(text.contains("p.yaml:3"), "{text}");
        assert!(text.contains("{message}"), "{text}");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let e = ClientProfile::parse("p.yaml", "name: d\ncommand: [d]\ncomand: [x]\n")
            .expect_err("unknown key");
        assert!(e.render_plain().contains("comand"), "{}", e.render_plain());
    }
}
