//! Findings: the run's non-passing check results, one per cause. The same check with the same
//! verdict, title and reason in several scenarios is one finding that lists every scenario (and
//! keeps each one's location and evidence). Every reporter groups the same way: the Markdown and
//! HTML reports and the terminal summary print a finding once; the JUnit report keeps one test
//! case per check result (CI tools count them) and names the finding's other scenarios in each;
//! the JSON report carries the grouped list under `findings`.

use serde_json::{Value, json};

use crate::checks::{CheckResult, Verdict};
use crate::runner::{RunResult, ScenarioResult};

/// One finding: its first result and every (scenario, result) with the same cause, in run order.
#[derive(Debug)]
pub struct Finding<'a> {
    /// The first result; its id, level, verdict, title, reason and refs are the finding's.
    pub first: &'a CheckResult,
    /// Every scenario with this finding, the first one included.
    pub members: Vec<(&'a ScenarioResult, &'a CheckResult)>,
}

impl Finding<'_> {
    /// The ids of the scenarios with this finding, in run order.
    pub fn scenario_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        for (s, _) in &self.members {
            if !ids.contains(&s.id.as_str()) {
                ids.push(s.id.as_str());
            }
        }
        ids
    }

    /// How far the finding reaches: `N scenarios`, or `M entries in N scenarios` when a scenario
    /// holds several of its entries.
    pub fn spread(&self) -> String {
        let scenarios = self.scenario_ids().len();
        if self.members.len() == scenarios {
            format!("{scenarios} scenarios")
        } else {
            format!("{} entries in {scenarios} scenarios", self.members.len())
        }
    }

    /// The finding's reason: its first result's, with the scenarios' own step names blanked
    /// when it groups several scenarios (each member keeps its own reason and evidence).
    pub fn reason(&self) -> String {
        match self.members.as_slice() {
            [(s, c), _, ..] => cause(s, c),
            _ => self.first.reason.clone(),
        }
    }

    /// Whether `c` (a result of scenario `s`) is one of this finding's members.
    pub fn holds(&self, s: &ScenarioResult, c: &CheckResult) -> bool {
        self.members
            .iter()
            .any(|(ms, mc)| std::ptr::eq(*ms, s) && std::ptr::eq(*mc, c))
    }
}

/// Whether two results have one cause: same check, rule, verdict, baseline status and
/// [`cause`]. The title is the entry's, which each scenario words for its own steps.
fn same_cause(a: (&ScenarioResult, &CheckResult), b: (&ScenarioResult, &CheckResult)) -> bool {
    a.1.id == b.1.id
        && a.1.rule == b.1.rule
        && a.1.verdict == b.1.verdict
        && a.1.baselined == b.1.baselined
        && cause(a.0, a.1) == cause(b.0, b.1)
}

/// What a result's reason says of the implementation: the reason with the names of the
/// scenario's own steps blanked (`step \`boom\`` and `step \`limited\`` state one cause) and
/// without the note of an evaluator that does not decide the entry.
fn cause(s: &ScenarioResult, c: &CheckResult) -> String {
    let reason = c
        .reason
        .split("; the check's own reading (not deciding")
        .next()
        .unwrap_or_default();
    s.steps.iter().fold(reason.to_owned(), |r, step| {
        r.replace(&format!("`{}`", step.name), "`…`")
    })
}

/// The findings of `run` among results whose verdict is in `verdicts`, in run order.
pub fn findings<'a>(run: &'a RunResult, verdicts: &[Verdict]) -> Vec<Finding<'a>> {
    let mut out: Vec<Finding<'a>> = Vec::new();
    for s in &run.scenarios {
        for c in s.checks.iter().filter(|c| verdicts.contains(&c.verdict)) {
            match out
                .iter_mut()
                .find(|f| same_cause((f.members[0].0, f.first), (s, c)))
            {
                Some(f) => f.members.push((s, c)),
                None => out.push(Finding {
                    first: c,
                    members: vec![(s, c)],
                }),
            }
        }
    }
    out
}

/// The verdicts the reports list as findings.
pub const FINDING_VERDICTS: &[Verdict] = &[Verdict::Fail, Verdict::Error, Verdict::Warn];

/// The finding `c` of scenario `s` belongs to, when it shares its cause with other scenarios.
pub fn shared<'f, 'a>(
    all: &'f [Finding<'a>],
    s: &ScenarioResult,
    c: &CheckResult,
) -> Option<&'f Finding<'a>> {
    all.iter().find(|f| f.members.len() > 1 && f.holds(s, c))
}

/// The `findings` section of the JSON report.
pub fn json(run: &RunResult) -> Value {
    let list: Vec<Value> = findings(run, FINDING_VERDICTS)
        .iter()
        .map(|f| {
            let k = f.first;
            json!({
                "check": k.id,
                "level": k.level.as_str(),
                "verdict": k.verdict.as_str(),
                "baselined": k.baselined,
                "title": k.title,
                "reason": f.reason(),
                "refs": k.refs,
                "rule": k.rule,
                "quote": k.quote,
                "scenarios": f.members.iter().map(|(s, c)| json!({
                    "id": s.id,
                    "location": c.location,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, verdict: Verdict, reason: &str) -> CheckResult {
        CheckResult::bare(id, verdict, reason, "")
    }

    fn scenario(id: &str, checks: Vec<CheckResult>) -> ScenarioResult {
        ScenarioResult {
            id: id.into(),
            title: String::new(),
            file: String::new(),
            verdict: Verdict::Pass,
            checks,
            duration_ms: 0.0,
            error: None,
            skipped: None,
            output_tail: None,
            steps: vec![],
            reproduce: String::new(),
            phases: None,
            declared: Default::default(),
        }
    }

    fn run_of(scenarios: Vec<ScenarioResult>) -> RunResult {
        RunResult {
            side: crate::runner::Side::Server,
            scenarios,
            target: "t".into(),
            kit_version: String::new(),
            suite: None,
            claims: Vec::new(),
            stale: vec![],
            duration_ms: 0.0,
            error: None,
        }
    }

    #[test]
    fn one_cause_in_two_scenarios_is_one_finding_and_another_reason_is_another() {
        let run = run_of(vec![
            scenario(
                "a",
                vec![result("PROG-003", Verdict::Fail, "went from 2 to 0")],
            ),
            scenario(
                "b",
                vec![
                    result("PROG-003", Verdict::Fail, "went from 2 to 0"),
                    result("PROG-003", Verdict::Pass, ""),
                ],
            ),
            scenario(
                "c",
                vec![result("PROG-003", Verdict::Fail, "went from 1 to 0")],
            ),
        ]);
        let all = findings(&run, FINDING_VERDICTS);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].scenario_ids(), vec!["a", "b"]);
        assert_eq!(all[1].scenario_ids(), vec!["c"]);
        let (b, c) = (&run.scenarios[1], &run.scenarios[1].checks[0]);
        assert!(shared(&all, b, c).is_some());
        let (s, c) = (&run.scenarios[2], &run.scenarios[2].checks[0]);
        assert!(
            shared(&all, s, c).is_none(),
            "a finding of one scenario is not shared"
        );
        let j = json(&run);
        assert_eq!(j[0]["scenarios"].as_array().map(Vec::len), Some(2));
        assert_eq!(j[1]["reason"], "went from 1 to 0");
        // JUnit keeps a test case per result, each naming the finding's other scenarios.
        let xml = crate::report::junit(&run);
        assert_eq!(xml.matches("<failure").count(), 3);
        assert!(xml.contains("in 2 scenarios: a, b (also in: b)"), "{xml}");
        assert!(xml.contains("in 2 scenarios: a, b (also in: a)"), "{xml}");
        // HTML and Markdown print the finding once, with both scenarios.
        let html = crate::report::html(&run);
        assert_eq!(html.matches("<article class=\"finding").count(), 2);
        assert!(html.contains("one cause, 2 scenarios"));
        let md = crate::report::markdown(&run);
        assert!(md.contains("one cause, 2 scenarios: `a`, `b`"), "{md}");
    }

    /// Two entries of one scenario and one of another: the finding names each scenario once and
    /// says how many entries it holds.
    #[test]
    fn a_finding_counts_its_scenarios_once_and_says_when_entries_are_more() {
        let run = run_of(vec![
            scenario(
                "a",
                vec![
                    result("MET-004", Verdict::Fail, "gauge is 0.5"),
                    result("MET-004", Verdict::Fail, "gauge is 0.5"),
                ],
            ),
            scenario("b", vec![result("MET-004", Verdict::Fail, "gauge is 0.5")]),
        ]);
        let all = findings(&run, FINDING_VERDICTS);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].scenario_ids(), vec!["a", "b"]);
        assert_eq!(all[0].spread(), "3 entries in 2 scenarios");
        let md = crate::report::markdown(&run);
        assert!(
            md.contains("one cause, 3 entries in 2 scenarios: `a`, `b`"),
            "{md}"
        );
    }

    #[test]
    fn a_cause_worded_with_each_scenarios_own_step_is_one_finding() {
        let named = |id: &str, step: &str, reason: &str| {
            let mut s = scenario(id, vec![result("MSG-004", Verdict::Warn, reason)]);
            s.steps = vec![crate::runner::StepSummary {
                name: step.into(),
                ..Default::default()
            }];
            s
        };
        let run = run_of(vec![
            named("a", "boom", "step `boom`: `$.result.isError` does not hold"),
            named(
                "b",
                "limited",
                "step `limited`: `$.result.isError` does not hold; the check's own reading (not deciding: the entry's assertion states the rule here): no",
            ),
            // Another field named in backticks is another cause.
            named("c", "cut", "step `cut`: `$.result.content` does not hold"),
        ]);
        let all = findings(&run, FINDING_VERDICTS);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].scenario_ids(), vec!["a", "b"]);
        assert_eq!(all[1].scenario_ids(), vec!["c"]);
        // A shared finding reads without any one scenario's step; a single one as it was.
        assert_eq!(
            all[0].reason(),
            "step `…`: `$.result.isError` does not hold"
        );
        assert_eq!(
            all[1].reason(),
            "step `cut`: `$.result.content` does not hold"
        );
    }
}
