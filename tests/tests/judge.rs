//! Trials of the judges themselves: a clean-run judge that rejects what it must, and a defect
//! judge that only counts a broken rule reported by the named check.

use libtest_mimic::{Failed, Trial};
use pallas_conformance::checks::{CheckResult, Verdict};
use pallas_conformance::runner::ScenarioResult;
use pallas_conformance::scenario::Level;
use pallas_e2e::defects::{self, Defect};
use pallas_e2e::suite::{self, AllowedWarnings};

fn check(id: &str, level: Level, verdict: Verdict, declared: bool) -> CheckResult {
    CheckResult {
        id: id.to_owned(),
        level,
        refs: Vec::new(),
        quote: None,
        rule: None,
        title: format!("{id} title"),
        verdict,
        reason: if verdict == Verdict::Pass {
            String::new()
        } else {
            format!("{id} reason")
        },
        evidence: Vec::new(),
        observed: Vec::new(),
        premise: false,
        transcript: Vec::new(),
        location: if declared {
            "scenarios/x.yaml:9".to_owned()
        } else {
            String::new()
        },
        mode: None,
        baselined: false,
    }
}

fn result(checks: Vec<CheckResult>) -> ScenarioResult {
    ScenarioResult {
        id: "area-x".to_owned(),
        title: "x".to_owned(),
        file: "scenarios/area/x.yaml".to_owned(),
        verdict: Verdict::Pass,
        checks,
        duration_ms: 1.0,
        error: None,
        skipped: None,
        output_tail: None,
        steps: Vec::new(),
        reproduce: String::new(),
        phases: None,
        declared: Default::default(),
    }
}

fn expect(cond: bool, what: &str) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(what.into()) }
}

fn clean_judge_passes_only_a_clean_result() -> Result<(), Failed> {
    let none = AllowedWarnings::new();
    let ok = result(vec![
        check("HEALTH-001", Level::Must, Verdict::Pass, true),
        check("MCP-001", Level::Must, Verdict::Skip, false),
    ]);
    let tally = suite::judge(&ok, &none).map_err(Failed::from)?;
    expect(
        tally.pass == 1 && tally.skip == 1,
        "tally counts a pass and an automatic skip",
    )?;

    let failed = result(vec![check("HEALTH-004", Level::Must, Verdict::Fail, true)]);
    let text = suite::judge(&failed, &none).err().unwrap_or_default();
    expect(
        text.contains("HEALTH-004") && text.contains("HEALTH-004 reason"),
        "a failed MUST is reported with its reason",
    )?;

    let errored = result(vec![check("PROG-001", Level::Must, Verdict::Error, true)]);
    expect(
        suite::judge(&errored, &none).is_err(),
        "a check error fails",
    )?;

    let declared_skip = result(vec![check("PROG-001", Level::Must, Verdict::Skip, true)]);
    expect(
        suite::judge(&declared_skip, &none).is_err(),
        "a declared check that skips fails",
    )?;

    let empty = result(Vec::new());
    expect(
        suite::judge(&empty, &none).is_err(),
        "a scenario without checks fails",
    )?;

    let mut setup = result(vec![check("HEALTH-001", Level::Must, Verdict::Pass, true)]);
    setup.error = Some("mock ecosystem did not start".to_owned());
    expect(
        suite::judge(&setup, &none).is_err(),
        "a scenario error fails",
    )?;

    let mut skipped = result(vec![]);
    skipped.skipped = Some("the target does not claim `images`".to_owned());
    expect(
        suite::judge(&skipped, &none).is_err(),
        "a skipped scenario fails",
    )?;
    Ok(())
}

fn clean_judge_allows_only_listed_should_warnings() -> Result<(), Failed> {
    let mut allowed = AllowedWarnings::new();
    allowed.insert("PROG-003".to_owned(), "documented".to_owned());
    allowed.insert(
        "HEALTH-004".to_owned(),
        "a MUST can never be allowed".to_owned(),
    );
    let listed = result(vec![check("PROG-003", Level::Should, Verdict::Warn, true)]);
    let tally = suite::judge(&listed, &allowed).map_err(Failed::from)?;
    expect(
        tally.warn == 1,
        "a listed SHOULD warning is allowed and counted",
    )?;
    let unlisted = result(vec![check("PROG-009", Level::Should, Verdict::Warn, true)]);
    expect(
        suite::judge(&unlisted, &allowed).is_err(),
        "an unlisted warning fails",
    )?;
    let must = result(vec![check("HEALTH-004", Level::Must, Verdict::Warn, true)]);
    expect(
        suite::judge(&must, &allowed).is_err(),
        "a warning on a MUST fails even when listed",
    )?;
    Ok(())
}

fn defect_judge_needs_every_named_check_to_report() -> Result<(), Failed> {
    let defect = Defect {
        name: "health-always-ok".to_owned(),
        summary: Some("reports ok".to_owned()),
        scenarios: vec!["health-*".to_owned()],
        catches: vec!["HEALTH-004".to_owned(), "HEALTH-010".to_owned()],
        breaks: Default::default(),
    };
    let one = vec![result(vec![
        check("HEALTH-004", Level::Must, Verdict::Fail, true),
        check("HEALTH-010", Level::Must, Verdict::Pass, true),
    ])];
    let text = defect.judge(&one).err().unwrap_or_default();
    expect(
        text.contains("went unseen by HEALTH-010"),
        "a named check that passed is reported unseen",
    )?;
    let both = vec![
        result(vec![check("HEALTH-004", Level::Must, Verdict::Fail, true)]),
        result(vec![check("HEALTH-010", Level::Must, Verdict::Fail, true)]),
    ];
    let seen = defect.judge(&both).map_err(Failed::from)?;
    expect(
        seen.contains("HEALTH-010"),
        "failures across scenarios add up",
    )?;
    let errored = vec![result(vec![
        check("HEALTH-004", Level::Must, Verdict::Error, true),
        check("HEALTH-010", Level::Must, Verdict::Fail, true),
    ])];
    expect(
        defect.judge(&errored).is_err(),
        "a harness error is not a catch",
    )?;
    // A finding that cites another of the check's rules than the one the defect breaks is
    // another clause: not a catch.
    let mut other_rule = check("HEALTH-004", Level::Should, Verdict::Warn, true);
    other_rule.rule = Some("s000.health-status-ok".to_owned());
    let mut first_rule = check("HEALTH-010", Level::Must, Verdict::Fail, true);
    first_rule.rule = Some("s000.health-probe-auth-headers".to_owned());
    let cited = vec![result(vec![other_rule, first_rule])];
    let text = defect.judge(&cited).err().unwrap_or_default();
    expect(
        text.contains("went unseen by HEALTH-004")
            && !text.contains("unseen by HEALTH-004, HEALTH-010"),
        "only the finding citing the expected rule is a catch",
    )?;
    let mut named = defect.clone();
    named
        .breaks
        .insert("HEALTH-004".to_owned(), "s000.health-status-ok".to_owned());
    expect(
        named.judge(&cited).is_ok(),
        "`breaks:` names the rule the finding cites",
    )?;
    expect(
        named.caught_level("HEALTH-004") == Some(Level::Should),
        "the table shows the level of the rule broken",
    )?;
    Ok(())
}

fn defect_table_rejects_unknown_names_and_unexplained_checks() -> Result<(), Failed> {
    let table: defects::DefectTable = defects::parse(
        "t.yaml",
        "defects:\n  - name: a\n    summary: s\n    scenarios: [nothing-*]\n    catches: [NOPE-001]\nuncaught: {}\n",
    )
    .map_err(|e| Failed::from(e.to_string()))?;
    let problems = table.problems(&[], &["b"], &[]).join("\n");
    for want in [
        "defect `a` is not a defect the reference knows",
        "no scenario id matches `nothing-*`",
        "`NOPE-001` is not a catalog check",
        "the reference's defect `b` is missing",
        "HEALTH-001 is caught by no defect and not explained",
    ] {
        expect(
            problems.contains(want),
            &format!("problems name: {want}\n{problems}"),
        )?;
    }
    let bad =
        defects::parse::<defects::DefectTable>("t.yaml", "defects:\n  - name: a\n    sumary: s\n");
    let text = bad.err().map(|e| e.to_string()).unwrap_or_default();
    expect(
        text.contains("t.yaml") && text.contains("sumary"),
        "an unknown key is reported with the file",
    )?;
    Ok(())
}

/// The judge trials.
pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "judge::clean_judge_passes_only_a_clean_result",
            clean_judge_passes_only_a_clean_result,
        ),
        Trial::test(
            "judge::clean_judge_allows_only_listed_should_warnings",
            clean_judge_allows_only_listed_should_warnings,
        ),
        Trial::test(
            "judge::defect_judge_needs_every_named_check_to_report",
            defect_judge_needs_every_named_check_to_report,
        ),
        Trial::test(
            "judge::defect_table_rejects_unknown_names_and_unexplained_checks",
            defect_table_rejects_unknown_names_and_unexplained_checks,
        ),
    ]
}
