//! The checks of a scenario: catalog check entries and generic assertions.

use crate::vocab::{Capability, Level};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

use super::*;

/// One entry of `checks:`: a catalog check (`check: PROG-002`), optionally with parameters
/// (`with:`), scoped to steps (`steps:`), or proven by a generic assertion (`assert:`) whose
/// verdict is then reported under that check ID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Catalog check ID. Absent: the assertion is reported as `ASSERT` (level from `level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// What this entry verifies, in words (default: the catalog description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Step names (globs, e.g. `send*`) the check looks at; default: every step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// Parameters of a catalog check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<Value>,
    /// A generic assertion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assert: Option<AssertSpec>,
    /// Level of an unattributed assertion (required: there is no default). An entry that
    /// names a catalog check takes the check's level from its rules and states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The rule (one of the named check's rules) whose clause this entry observes: a failure
    /// is graded at that rule's level and cites its quote. Default: the check's first rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The assertion states a premise of the scenario (the script really exercised what the
    /// other checks judge): when it does not hold the entry is `inconclusive`, not a failure,
    /// and so are the scenario's other entries that would have passed or failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub premise: bool,
    /// What this entry needs to have been observed, as an assertion: when it does not hold the
    /// entry alone is `inconclusive` (its own premise, not the scenario's), e.g. "the call this
    /// entry reads the metrics of did fail" or "the downstream call was received before the
    /// cancel".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<AssertSpec>,
    /// Expand the entry once per value of a variable (`{{i}}` in every string of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEachSpec>,
    /// Capabilities the target must claim for this entry to be judged; otherwise `skip`
    /// with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Capability>,
}

/// `for_each:` of a check: a variable over an integer range `[from, to)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEachSpec {
    /// Variable name (used as `{{NAME}}`).
    #[serde(default = "default_var")]
    pub var: String,
    /// First value.
    #[serde(default)]
    pub from: u32,
    /// One past the last value.
    pub to: u32,
}

fn default_var() -> String {
    "i".to_owned()
}

/// A generic assertion. Exactly one kind is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertSpec {
    /// A JSONPath assertion on one step's output (`step:` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathAssert>,
    /// The duration of steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingAssert>,
    /// What a mock MCP server received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalAssert>,
    /// What a mock LLM received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_journal: Option<LlmJournalAssert>,
    /// Session accounting of a mock MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsAssert>,
    /// The implementation's stdout, stderr and log files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<LogsAssert>,
    /// Holds when at least one of these assertions (each of one kind) holds: e.g. the premise
    /// "a progress notification arrived, on the call's own stream or on the GET stream".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any: Vec<AssertSpec>,
}

/// A predicate on the values a JSONPath selects. Every field present must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathAssert {
    /// The step whose output is examined (`output:` assertions only): a name or a glob, and
    /// with a glob every matching step must satisfy the predicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// JSONPath (RFC 9535), e.g. `$.result.content[0].text`.
    pub path: String,
    /// The path selects something (true) or nothing (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// The first selected value equals this (templated strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// The first selected value, as text, matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// The first selected value, as text, contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// The first selected value, when a string holding JSON, is parsed before comparing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parse_json: bool,
    /// Every selected value is valid against this JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// How many values the path selects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountSpec>,
    /// `schema` judges only the first N selected values (in document order), e.g. the
    /// first three tool notes of a fan-out are all `started`; fewer than N is a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<usize>,
}

/// A count window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountSpec {
    /// Exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// At least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// At most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

impl CountSpec {
    /// Whether `n` is inside the window.
    pub fn holds(&self, n: u64) -> bool {
        self.equals.is_none_or(|e| n == e)
            && self.min.is_none_or(|m| n >= m)
            && self.max.is_none_or(|m| n <= m)
    }

    /// The window in words.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = self.equals {
            parts.push(format!("= {e}"));
        }
        if let Some(m) = self.min {
            parts.push(format!(">= {m}"));
        }
        if let Some(m) = self.max {
            parts.push(format!("<= {m}"));
        }
        if parts.is_empty() {
            "any".to_owned()
        } else {
            parts.join(" and ")
        }
    }
}

/// `timing:` assertion: every matching step took a time inside the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingAssert {
    /// Step name or glob.
    pub step: String,
    /// At most this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub max: Option<Duration>,
    /// At least this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub min: Option<Duration>,
}

/// `journal:` assertion on a mock MCP server's journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalAssert {
    /// Mock MCP server name.
    pub server: String,
    /// Only entries with this JSON-RPC method (`tools/call`, `initialize`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Only entries for this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Only entries whose JSON view satisfies this predicate (e.g. `$.arguments.i` equals 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<PathAssert>,
    /// How many entries select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountSpec>,
    /// A header (lower-case name, e.g. `authorization`) examined on every selected entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Expected value of `header` on every selected entry (templated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_equals: Option<String>,
    /// `header` is absent from every selected entry.
    #[serde(default, skip_serializing_if = "is_false")]
    pub header_absent: bool,
    /// Only entries recorded while these steps ran (names or globs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<String>,
}

/// `llm_journal:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmJournalAssert {
    /// Mock LLM name.
    pub llm: String,
    /// Only requests to paths containing this (`/chat/completions`, `/models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_contains: Option<String>,
    /// Only requests to exactly this path (`/v1/models`: the listing, not `/v1/models/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_equals: Option<String>,
    /// Only requests with this HTTP method (`POST`: inference; seed 001's provider probes are
    /// `GET`s of the models endpoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Only requests the mock answered with this HTTP status (`200`: a mock LLM configured with an
    /// `api_key` accepts only that key, so a `200` shows the request carried it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Only entries recorded while these steps ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<String>,
    /// Only requests whose JSON body has each of these top-level fields with exactly this value
    /// (e.g. `{temperature: 0.6}`); the pass and the failure show what the requests of the other
    /// filters carried in those fields.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub body: BTreeMap<String, serde_json::Value>,
    /// Only requests whose JSON body, written out, contains this text (e.g. a tool result's
    /// marker: the model was sent it); the pass and the failure say how many requests of the
    /// other filters were examined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// How many requests select.
    pub count: CountSpec,
    /// How long the client waited on each selected request the mock held unanswered (a `hang`
    /// fault) before giving it up by closing the connection: e.g. a provider call's timeout,
    /// measured from the call itself, whatever the process did before it. A held request the
    /// client had not given up when the run ended fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_up_after: Option<WindowSpec>,
}

/// A window of durations. Every bound present must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowSpec {
    /// At least this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub min: Option<Duration>,
    /// At most this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub max: Option<Duration>,
}

impl WindowSpec {
    /// The bound `d` breaks, in words (`>= 4500 ms`, `<= 7000 ms`), if it breaks one.
    pub fn broken_by(&self, d: Duration) -> Option<String> {
        if let Some(min) = self.min
            && d < min
        {
            return Some(format!(">= {} ms", min.as_millis()));
        }
        self.max
            .filter(|max| d > *max)
            .map(|max| format!("<= {} ms", max.as_millis()))
    }
}

/// `sessions:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsAssert {
    /// Mock MCP server name; absent: every mock MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Sessions open at the end of the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_now: Option<CountSpec>,
    /// Sessions opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<CountSpec>,
}

/// `logs:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogsAssert {
    /// No scenario secret (bearers, keys, configured headers) appears.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_secrets: bool,
    /// None of these strings appears (templated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_contains: Vec<String>,
    /// Each of these strings appears.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
}

impl AssertSpec {
    /// The assertion kinds that are set.
    pub fn kinds(&self) -> Vec<&'static str> {
        let flags = [
            ("output", self.output.is_some()),
            ("timing", self.timing.is_some()),
            ("journal", self.journal.is_some()),
            ("llm_journal", self.llm_journal.is_some()),
            ("sessions", self.sessions.is_some()),
            ("logs", self.logs.is_some()),
            ("any", !self.any.is_empty()),
        ];
        flags.iter().filter(|(_, s)| *s).map(|(n, _)| *n).collect()
    }
}
