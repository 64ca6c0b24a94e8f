//! JUnit XML (via `quick-junit`): one suite per scenario, one test case per check result, so CI
//! tools count and track each result. A finding with one cause in several scenarios (see
//! `findings.rs`) is not merged here: each of its test cases says, in its failure description
//! (or, for a warning, its system-out), that it is one finding shared with the other scenarios,
//! and names them.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::findings::{FINDING_VERDICTS, findings, shared};
use crate::checks::Verdict;
use crate::runner::RunResult;

/// The JUnit XML document.
pub fn junit(run: &RunResult) -> String {
    let mut report = Report::new(format!("pallas-conformance ({})", run.target));
    report.set_time(Duration::from_secs_f64(run.duration_ms / 1000.0));
    let all = findings(run, FINDING_VERDICTS);
    for s in &run.scenarios {
        let mut suite = TestSuite::new(s.id.clone());
        suite.set_time(Duration::from_secs_f64(s.duration_ms / 1000.0));
        suite.add_property(("file", s.file.as_str()));
        suite.add_property(("kit_version", run.kit_version.as_str()));
        if let Some(k) = &run.suite {
            suite.add_property(("suite_digest", k.digest.as_str()));
            suite.add_property((
                "suite_source",
                match k.source {
                    crate::suite::SuiteSource::Embedded => "embedded",
                    crate::suite::SuiteSource::Files => "files",
                },
            ));
        }
        if let Some(e) = &s.error {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            st.set_message(e.clone()).set_type("harness-error");
            let mut tc = TestCase::new("setup", st);
            tc.set_classname(s.id.clone());
            if let Some(t) = &s.output_tail {
                tc.set_system_err(t.clone());
            }
            suite.add_test_case(tc);
        }
        for c in &s.checks {
            // "one cause, N scenarios: a, b (also: …)" for a result shared with other scenarios.
            let group = shared(&all, s, c).map(|f| {
                let ids = f.scenario_ids();
                let others: Vec<&str> = ids.iter().copied().filter(|id| *id != s.id).collect();
                format!(
                    "one finding, one cause, in {}: {} (also in: {})",
                    f.spread(),
                    ids.join(", "),
                    others.join(", ")
                )
            });
            let status = match c.verdict {
                Verdict::Pass | Verdict::Warn | Verdict::Info => TestCaseStatus::success(),
                Verdict::Fail if c.baselined => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(format!("expected failure: {}", c.reason));
                    st
                }
                Verdict::Skip | Verdict::Inconclusive => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(c.reason.clone());
                    st
                }
                Verdict::Fail | Verdict::Error => {
                    let kind = if c.verdict == Verdict::Fail {
                        NonSuccessKind::Failure
                    } else {
                        NonSuccessKind::Error
                    };
                    let mut st = TestCaseStatus::non_success(kind);
                    let mut desc = format!("{}\n", c.reason);
                    if let Some(q) = c.cited_rule() {
                        desc.push_str(&format!("rule: {q}\n"));
                    }
                    if !c.location.is_empty() {
                        desc.push_str(&format!("--> {}\n", c.location));
                    }
                    if let Some(g) = &group {
                        desc.push_str(&format!("{g}\n"));
                    }
                    for e in &c.evidence {
                        desc.push_str(&format!(
                            "{}: expected {} / seen {}\n",
                            e.what,
                            e.expected.as_deref().unwrap_or("-"),
                            e.seen.as_deref().unwrap_or("-")
                        ));
                    }
                    st.set_message(c.reason.clone())
                        .set_type(c.level.as_str())
                        .set_description(desc);
                    st
                }
            };
            let mut tc = TestCase::new(format!("{} {}", c.id, c.title), status);
            tc.set_classname(s.id.clone());
            let mut out = String::new();
            if c.verdict == Verdict::Warn {
                out = format!("warning ({}): {}", c.level.as_str(), c.reason);
                if let Some(q) = c.cited_rule() {
                    out.push_str(&format!("\nrule: {q}"));
                }
            }
            if let Some(g) = &group {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(g);
            }
            if !out.is_empty() {
                tc.set_system_out(out);
            }
            suite.add_test_case(tc);
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}
