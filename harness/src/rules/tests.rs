use super::*;

#[allow(clippy::result_large_err)]
fn load_one(text: &str) -> Result<RuleBook, SpecError> {
    RuleBook::load(&[("rules.yaml", text)])
}

const RULE: &str = "rules:\n  - id: s000.ct\n    doc: seed-000\n    section: \"§1\"\n    quote: \"Content-Type **must** be `application/json`.\"\n    level: MUST\n";

#[test]
fn the_bundled_rule_book_loads() {
    let book = book().expect("the bundled rules load");
    assert!(book.checks.len() >= 51, "{} checks", book.checks.len());
    for c in &book.checks {
        assert!(!c.premise.trim().is_empty(), "{} has no premise", c.id);
    }
}

#[test]
fn every_quote_is_found_verbatim_in_its_source() {
    let book = book().expect("the bundled rules load");
    let problems = sources::verify_quotes(book);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_level_agrees_with_its_quote() {
    let book = book().expect("the bundled rules load");
    for rule in book.rules.values() {
        let derived = rule
            .derived_level()
            .expect("a level follows from the quote");
        assert!(
            level_problem(rule, derived).is_none(),
            "{}: {:?}",
            rule.id,
            level_problem(rule, derived)
        );
    }
    for check in &book.checks {
        let first = book.rule(&check.rules[0]).expect("known rule");
        assert_eq!(check.level, first.level, "{}", check.id);
    }
}

#[test]
fn the_bundled_seeds_are_the_shared_ones_when_present() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds");
    if !dir.is_dir() {
        return; // a checkout without the shared folder: the bundled copy is the reference
    }
    for (name, text) in sources::SEED_FILES {
        let shared = std::fs::read_to_string(dir.join(name)).expect("seed readable");
        assert_eq!(&shared, text, "{name} differs from ../shared/seeds");
    }
}

#[test]
fn a_level_that_disagrees_with_its_keyword_is_a_located_error() {
    let text = RULE.replace("level: MUST", "level: SHOULD");
    let err = load_one(&text).expect_err("SHOULD for a must");
    assert_eq!(err.line, 2, "{err}");
    assert!(err.message.contains("keyword gives MUST"), "{err}");
}

#[test]
fn a_quote_without_keyword_needs_a_basis_and_is_at_most_should() {
    let plain = "rules:\n  - id: s000.x\n    doc: seed-000\n    section: \"§1\"\n    quote: \"No authentication. No query parameters.\"\n    level: MUST\n";
    let err = load_one(plain).expect_err("no basis");
    assert!(err.message.contains("basis"), "{err}");
    let with_basis = plain.replace(
        "level: MUST\n",
        "level: MUST\n    basis: \"Daedalus sends none\"\n",
    );
    let err = load_one(&with_basis).expect_err("MUST without keyword");
    assert!(err.message.contains("at most SHOULD"), "{err}");
    let should = with_basis.replace("level: MUST", "level: SHOULD");
    assert!(load_one(&should).is_ok());
}

#[test]
fn a_check_with_an_unknown_rule_no_rule_or_a_duplicate_id_is_a_located_error() {
    let unknown = format!(
        "{RULE}checks:\n  - {{id: REG-002, title: t, rules: [s000.cx], evaluation: builtin, premise: p}}\n"
    );
    let err = load_one(&unknown).expect_err("unknown rule");
    assert_eq!(err.line, 8, "{err}");
    assert!(err.message.contains("unknown rule `s000.cx`"), "{err}");
    assert_eq!(err.hint.as_deref(), Some("did you mean `s000.ct`?"));

    let none = format!(
        "{RULE}checks:\n  - {{id: REG-002, title: t, rules: [], evaluation: builtin, premise: p}}\n"
    );
    assert!(
        load_one(&none)
            .expect_err("no rule")
            .message
            .contains("names no rule")
    );

    let dup = format!(
        "{RULE}checks:\n  - {{id: REG-002, title: t, rules: [s000.ct], evaluation: builtin, premise: p}}\n  - {{id: REG-002, title: t, rules: [s000.ct], evaluation: builtin, premise: p}}\n"
    );
    let err = load_one(&dup).expect_err("duplicate");
    assert!(err.message.contains("duplicate check ID"), "{err}");

    let dup_rule = format!("{RULE}{}", RULE.trim_start_matches("rules:\n"));
    let err = load_one(&dup_rule).expect_err("duplicate rule");
    assert!(err.message.contains("duplicate rule ID"), "{err}");
}

#[test]
fn a_quote_missing_from_its_source_is_reported() {
    let text = RULE.replace(
        "Content-Type **must** be",
        "Content-Type **must** always be",
    );
    let book = load_one(&text).expect("loads");
    let problems = sources::verify_quotes(&book);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].message.contains("not found verbatim"));
}

#[test]
fn a_quote_without_a_level_says_why() {
    assert_eq!(
        NoLevel::Mixed(vec!["MUST".into(), "MAY".into()]).to_string(),
        "the quote mixes keywords of different levels (MUST, MAY); quote one sentence"
    );
    assert_eq!(
        NoLevel::NoBasis.to_string(),
        "the quote has no normative keyword and the rule states no `basis:`"
    );
}
