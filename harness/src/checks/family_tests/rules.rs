//! Every rule an evaluator names as broken (`Outcome::breaks("rule", …)`) is a rule of a check
//! of that evaluator's family: a finding never cites a rule its check does not enforce.

use crate::checks::value::Check;

/// Each family's source files with its table of checks.
const SOURCES: &[(&str, &str, &[Check])] = &[
    (
        "registry.rs",
        include_str!("../registry.rs"),
        crate::checks::registry::CHECKS,
    ),
    (
        "health.rs",
        include_str!("../health.rs"),
        crate::checks::health::CHECKS,
    ),
    (
        "progress.rs",
        include_str!("../progress.rs"),
        crate::checks::progress::CHECKS,
    ),
    (
        "progress_walk.rs",
        include_str!("../progress_walk.rs"),
        crate::checks::progress::CHECKS,
    ),
    (
        "bearer.rs",
        include_str!("../bearer.rs"),
        crate::checks::bearer::CHECKS,
    ),
    (
        "metrics.rs",
        include_str!("../metrics.rs"),
        crate::checks::metrics::CHECKS,
    ),
    (
        "messages.rs",
        include_str!("../messages.rs"),
        crate::checks::messages::CHECKS,
    ),
    (
        "mcp.rs",
        include_str!("../mcp.rs"),
        crate::checks::mcp::CHECKS,
    ),
    (
        "mcp_tools.rs",
        include_str!("../mcp_tools.rs"),
        crate::checks::mcp::CHECKS,
    ),
];

/// The rule IDs named by `Outcome::breaks(` calls in `text`.
fn named_rules(text: &str) -> Vec<String> {
    text.split("Outcome::breaks(")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.trim_start().strip_prefix('"')?;
            rest.split_once('"').map(|(id, _)| id.to_owned())
        })
        .collect()
}

#[test]
fn every_rule_an_evaluator_breaks_belongs_to_a_check_of_its_family() {
    let mut named = 0;
    for (file, text, checks) in SOURCES {
        for rule in named_rules(text) {
            named += 1;
            let owners: Vec<&str> = checks
                .iter()
                .filter(|c| c.def().is_some_and(|d| d.rule_def(&rule).is_some()))
                .map(|c| c.id)
                .collect();
            assert!(
                !owners.is_empty(),
                "{file} breaks `{rule}`, which no check of its family enforces"
            );
        }
    }
    assert!(named >= 10, "the scan found the named breaks ({named})");
}

#[test]
fn the_scan_finds_a_named_rule() {
    assert_eq!(
        named_rules("x Outcome::breaks(\n  \"a.b\",\n y) Outcome::breaks(rule, z)"),
        vec!["a.b".to_owned()]
    );
}

/// MSG-007 (first rule INFO, second SHOULD): an assertion entry that does not hold (any
/// observation serves: the entry's assertion alone decides it).
fn msg_007_entry(rule: &str) -> crate::checks::CheckResult {
    let text = format!(
        "id: t\ntitle: t\nsteps:\n  - name: out\n    registry: {{}}\nchecks:\n  - check: MSG-007\n{rule}    assert:\n      output: {{step: out, path: \"$.status\", equals: 500}}\n"
    );
    let scenario = crate::scenario::parse_str("t.yaml", &text).expect("scenario parses");
    let out = crate::observation::StepRecord {
        name: "out".into(),
        action: "registry".into(),
        spec: scenario.spec.steps[0].clone(),
        observation: super::typed(
            "registry",
            &serde_json::json!({"status": 200, "body": {"servers": []}}),
        ),
        ..Default::default()
    };
    let observed = super::obs(vec![out]);
    let results = crate::checks::evaluate(
        &scenario,
        &observed,
        &|_| true,
        crate::checks::Grading::default(),
        &crate::redact::Redactor::default(),
    );
    results
        .into_iter()
        .find(|r| r.id == "MSG-007")
        .expect("the entry is reported")
}

#[test]
fn an_assertion_entry_is_graded_at_the_rule_it_names() {
    use crate::checks::Verdict;
    use crate::scenario::Level;
    let first = msg_007_entry("");
    assert_eq!(
        (first.verdict, first.level, first.rule.as_deref()),
        (
            Verdict::Info,
            Level::Info,
            Some("mcp.tool-execution-error-feedback")
        ),
        "{first:?}"
    );
    let named = msg_007_entry("    rule: mcp.tool-execution-errors\n");
    assert_eq!(
        (named.verdict, named.level, named.rule.as_deref()),
        (
            Verdict::Warn,
            Level::Should,
            Some("mcp.tool-execution-errors")
        ),
        "{named:?}"
    );
    assert!(
        named
            .quote
            .as_deref()
            .is_some_and(|q| q.contains("SHOULD be reported inside the result object")),
        "{named:?}"
    );
}
