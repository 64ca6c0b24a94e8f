//! Reporters: each renders, in one format, what [`crate::runner::RunResult::from_events`]
//! rebuilds from a run's event stream (live lines: one [`crate::runner::RunEvent`] at a time).
//! They only read data; nothing here runs anything.

mod findings;
mod html;
mod junit;
mod markdown;
mod terminal;

pub use findings::{FINDING_VERDICTS, Finding, findings};
pub use html::html;
pub use junit::junit;
pub use markdown::markdown;
pub use terminal::{event_line, summary};

use crate::runner::RunResult;

/// The JSON report: every scenario and check with id, level, refs, verdict, evidence, duration;
/// and `findings`, the fail/warn/error results grouped by cause (one entry listing every scenario
/// where the same check failed the same way).
pub fn json(run: &RunResult) -> serde_json::Value {
    serde_json::json!({
        "format": "pallas-conformance/report/v1",
        "target": run.target,
        "duration_ms": run.duration_ms,
        "counts": run.counts(),
        "by_family": run.by_family(),
        "exit_code": run.exit_code(),
        "error": run.error,
        "stale": run.stale,
        "scenarios": run.scenarios,
        "findings": findings::json(run),
    })
}

/// The JSON report as pretty text.
pub fn json_text(run: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(&json(run)).unwrap_or_default();
    s.push('\n');
    s
}
