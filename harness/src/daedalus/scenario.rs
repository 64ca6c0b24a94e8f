//! A client scenario: the mock Pallas it scripts, the task the client is given, and the checks
//! judged on what the client sent. The kit's own are embedded from `harness/clients/scenarios/`.

use std::path::Path;
use std::time::Duration;

use pallas_mocks::MockPallasSpec;
use serde::Deserialize;

use super::profile::ClientClaim;
use crate::diag::{SpecError, from_yaml};

/// The embedded client scenarios, `(file, text)`, in run order.
pub const FILES: &[(&str, &str)] = &[
    (
        "harness/clients/scenarios/send-message.yaml",
        include_str!("../../clients/scenarios/send-message.yaml"),
    ),
    (
        "harness/clients/scenarios/two-messages.yaml",
        include_str!("../../clients/scenarios/two-messages.yaml"),
    ),
    (
        "harness/clients/scenarios/health-error-blocks-chat.yaml",
        include_str!("../../clients/scenarios/health-error-blocks-chat.yaml"),
    ),
    (
        "harness/clients/scenarios/health-check-fails-blocks-chat.yaml",
        include_str!("../../clients/scenarios/health-check-fails-blocks-chat.yaml"),
    ),
    (
        "harness/clients/scenarios/health-degraded-allows-chat.yaml",
        include_str!("../../clients/scenarios/health-degraded-allows-chat.yaml"),
    ),
    (
        "harness/clients/scenarios/registry-removes-agent.yaml",
        include_str!("../../clients/scenarios/registry-removes-agent.yaml"),
    ),
    (
        "harness/clients/scenarios/session-expired.yaml",
        include_str!("../../clients/scenarios/session-expired.yaml"),
    ),
    (
        "harness/clients/scenarios/user-bearer.yaml",
        include_str!("../../clients/scenarios/user-bearer.yaml"),
    ),
    (
        "harness/clients/scenarios/close-session.yaml",
        include_str!("../../clients/scenarios/close-session.yaml"),
    ),
];

/// What the client is asked to do, as a user of a Daedalus would.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The agent to talk to, by the server id its registry name ends with; the client's choice
    /// when absent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Messages to send, in order (none: discover and check health only).
    #[serde(default)]
    pub messages: Vec<String>,
    /// The user's bearer token.
    #[serde(default)]
    pub bearer: Option<String>,
}

/// The second run of a scenario: what the operator changed first.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Again {
    /// The agents the registry lists from then on (keys, in order); the others keep serving.
    pub registry_agents: Vec<String>,
}

/// One check judged by a scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCheck {
    /// The check's ID (`DAE-001`).
    pub check: String,
}

/// A client scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientScenario {
    /// Stable ID.
    pub id: String,
    /// One line.
    pub title: String,
    /// The mock Pallas (the `pallas:` section of a `pallas-mocks` ecosystem file).
    pub pallas: MockPallasSpec,
    /// The client's task.
    #[serde(default)]
    pub task: Task,
    /// What the client must claim for the scenario to run.
    #[serde(default)]
    pub requires: Vec<ClientClaim>,
    /// The checks judged.
    pub checks: Vec<ClientCheck>,
    /// After the client's first run, the registry changes and the client runs again.
    #[serde(default)]
    pub again: Option<Again>,
    /// The client's time for this scenario, when it needs more than the profile's.
    #[serde(default, with = "humantime_serde")]
    pub timeout: Option<Duration>,
    /// The file it came from.
    #[serde(skip)]
    pub file: String,
    /// Check ID → `file:line` of its entry.
    #[serde(skip)]
    pub locations: std::collections::BTreeMap<String, String>,
}

impl ClientScenario {
    /// Parses and validates one scenario file.
    #[allow(clippy::result_large_err)]
    pub fn parse(name: &str, text: &str) -> Result<Self, SpecError> {
        let mut s: Self = from_yaml(name, text)?;
        s.file = name.to_owned();
        s.locations = s
            .checks
            .iter()
            .map(|c| {
                let (line, _) = locate(text, &format!("check: {}", c.check));
                (c.check.clone(), format!("{name}:{line}"))
            })
            .collect();
        let book = super::book().map_err(|e| {
            SpecError::at(name, text, 0, 0, format!("the client rule book: {e}"), None)
        })?;
        for c in &s.checks {
            if book.check(&c.check).is_none() {
                let (line, column) = locate(text, &c.check);
                let hint =
                    crate::diag::did_you_mean(&c.check, book.checks.iter().map(|d| d.id.as_str()))
                        .map(|d| format!("did you mean `{d}`?"))
                        .or_else(|| {
                            Some("`pallas-conformance daedalus --list-checks` lists them".into())
                        });
                return Err(SpecError::at(
                    name,
                    text,
                    line,
                    column,
                    format!("unknown client check `{}`", c.check),
                    hint,
                ));
            }
        }
        if let Some(issue) = pallas_mocks::validate_pallas_spec(&s.pallas)
            .into_iter()
            .next()
        {
            let (line, column) = locate(text, "pallas:");
            return Err(SpecError::at(
                name,
                text,
                line,
                column,
                format!("{}: {}", issue.path, issue.message),
                None,
            ));
        }
        if let Some(unknown) = s
            .again
            .iter()
            .flat_map(|a| &a.registry_agents)
            .find(|k| !s.pallas.agents.contains_key(*k))
        {
            let (line, column) = locate(text, "registry_agents");
            return Err(SpecError::at(
                name,
                text,
                line,
                column,
                format!(
                    "`again.registry_agents` names `{unknown}`, not an agent of the mock Pallas"
                ),
                None,
            ));
        }
        if let Some(agent) = &s.task.agent
            && !s.pallas.agents.contains_key(agent)
        {
            let (line, column) = locate(text, "agent:");
            return Err(SpecError::at(
                name,
                text,
                line,
                column,
                format!("the task's agent `{agent}` is not an agent of the mock Pallas"),
                Some(format!(
                    "one of: {}",
                    s.pallas
                        .agents
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ));
        }
        Ok(s)
    }

    /// Reads one scenario file.
    #[allow(clippy::result_large_err)]
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let (name, text) = super::read_file(path, "scenario")?;
        Self::parse(&name, &text)
    }

    /// The time the client has here.
    pub fn timeout(&self, profile: &super::ClientProfile) -> Duration {
        self.timeout
            .map_or(profile.timeout(), |t| t.max(profile.timeout()))
    }
}

fn locate(text: &str, needle: &str) -> (usize, usize) {
    text.lines()
        .enumerate()
        .find_map(|(i, l)| l.find(needle).map(|c| (i + 1, c + 1)))
        .unwrap_or((1, 1))
}

/// The embedded scenarios, parsed.
#[allow(clippy::result_large_err)]
pub fn embedded() -> Result<Vec<ClientScenario>, SpecError> {
    FILES
        .iter()
        .map(|(name, text)| ClientScenario::parse(name, text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_scenario_parses_and_ids_are_unique() {
        let all = embedded().unwrap_or_else(|e| panic!("{}", e.render_plain()));
        let mut ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
    }

    #[test]
    fn an_unknown_check_is_refused_at_its_line_with_a_suggestion() {
        let text =
            "id: x\ntitle: x\npallas: {agents: {research: {}}}\nchecks:\n  - check: DAE-01\n";
        let e = ClientScenario::parse("x.yaml", text).expect_err("unknown check");
        let shown = e.render_plain();
        assert!(shown.contains("x.yaml:5"), "{shown}");
        assert!(shown.contains("did you mean"), "{shown}");
    }

    #[test]
    fn a_task_naming_an_agent_the_mock_lacks_is_refused() {
        let text = "id: x\ntitle: x\npallas: {agents: {research: {}}}\ntask: {agent: harper}\nchecks:\n  - check: DAE-001\n";
        let e = ClientScenario::parse("x.yaml", text).expect_err("unknown agent");
        assert!(e.render_plain().contains("harper"), "{}", e.render_plain());
    }
}
