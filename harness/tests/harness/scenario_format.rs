//! Scenario parsing, diagnostics, schema drift, docs examples, round trip.

use pallas_conformance::scenario::{self, ScenarioSpec};
use pallas_conformance::suite;
use proptest::prelude::*;

use super::common::{scenarios_dir, workspace};

fn diag(text: &str) -> String {
    let err = suite::parse_str("bad.yaml", text).expect_err("invalid");
    err.render_plain()
}

const BASE: &str = "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - name: h\n    health: {agent: research}\n";

#[test]
fn an_unknown_check_id_is_rejected_with_its_location_and_a_did_you_mean() {
    let out = diag(&format!("{BASE}checks:\n  - check: PROG-01\n"));
    insta::assert_snapshot!(out, @r"
    error: unknown check `PROG-01`
      --> bad.yaml:10:12
       |
    10 |   - check: PROG-01
       |            ^
      = help: did you mean `PROG-001`?
    ");
}

#[test]
fn an_unknown_key_is_rejected_with_a_hint() {
    let out = diag("id: x\ntitle: t\nstesp: []\n");
    assert!(out.contains("bad.yaml:3:"), "{out}");
    assert!(out.contains("stesp"), "{out}");
    assert!(out.contains("did you mean `steps`?"), "{out}");
}

#[test]
fn a_step_naming_an_unknown_agent_is_rejected() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - health: {agent: reserch}\n",
    );
    assert!(out.contains("unknown agent `reserch`"), "{out}");
    assert!(out.contains("bad.yaml:7:"), "{out}");
    assert!(out.contains("did you mean `research`?"), "{out}");
}

#[test]
fn an_unknown_template_variable_is_rejected() {
    let out = diag(&format!(
        "{BASE}  - send: {{agent: research, message: \"{{{{capture.stauts}}}}\"}}\n"
    ));
    assert!(
        out.contains("unknown template variable `{{capture.stauts}}`"),
        "{out}"
    );
}

#[test]
fn the_loop_variable_is_only_known_inside_repeats() {
    let out = diag(&format!(
        "{BASE}  - send: {{agent: research, message: \"m\", bearer: \"tok-{{{{i}}}}\"}}\n"
    ));
    assert!(out.contains("`{{i}}` exists only inside"), "{out}");
    let ok = format!(
        "{BASE}  - repeat:\n      count: 3\n      steps:\n        - send: {{agent: research, message: \"m\", bearer: \"tok-{{{{i}}}}\"}}\n"
    );
    suite::parse_str("ok.yaml", &ok).expect("valid");
}

#[test]
fn a_step_with_two_actions_is_rejected() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - health: {agent: research}\n    delete: {agent: research}\n",
    );
    assert!(out.contains("several actions: health, delete"), "{out}");
}

#[test]
fn a_send_both_cancelled_and_dropped_is_rejected_at_its_line() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - send: {agent: research, message: m, cancel_after_progress: 1,\n           drop_after_progress: 1}\n",
    );
    assert!(
        out.contains("both `cancel_after_progress` and `drop_after_progress`"),
        "{out}"
    );
    assert!(out.contains("bad.yaml:8:"), "{out}");
}

#[test]
fn a_cancel_once_called_needs_its_cancel_and_a_known_mock_tool() {
    let out = diag(
        "id: x\ntitle: t\necosystem:\n  mcp_servers:\n    kernos:\n      tools: [{name: stuck, result: hang}]\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - send: {agent: research, message: m,\n           cancel_once_called: kernos/stuk}\n",
    );
    assert!(
        out.contains("`cancel_once_called` without `cancel_after_progress`"),
        "{out}"
    );
    assert!(
        out.contains("`cancel_once_called: kernos/stuk` names no tool"),
        "{out}"
    );
    assert!(out.contains("bad.yaml:12:"), "{out}");
    let ok = "id: x\ntitle: t\necosystem:\n  mcp_servers:\n    kernos:\n      tools: [{name: stuck, result: hang}]\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - send: {agent: research, message: m, cancel_after_progress: 1,\n           cancel_once_called: kernos/stuck}\n";
    suite::parse_str("ok.yaml", ok).expect("valid");
}

#[test]
fn a_bearer_scheme_without_a_bearer_is_rejected_at_its_line() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\nsteps:\n  - send: {agent: research, message: m,\n           bearer_scheme: bearer}\n",
    );
    assert!(out.contains("`bearer_scheme` but no `bearer`"), "{out}");
    assert!(out.contains("bad.yaml:8:"), "{out}");
}

#[test]
fn a_fixed_registry_port_outside_a_serial_scenario_is_rejected_at_its_line() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {}\n  default_registry_port: true\n",
    );
    assert!(
        out.contains("`default_registry_port` needs a `serial` scenario"),
        "{out}"
    );
    assert!(out.contains("bad.yaml:6:"), "{out}");
    assert!(out.contains("serial: true"), "{out}");
    let text = "id: x\ntitle: t\nserial: true\ndeployment:\n  agents:\n    research: {}\n  default_registry_port: true\n";
    if let Err(e) = suite::parse_str("ok.yaml", text) {
        panic!(
            "a serial scenario may use the default port: {}",
            e.render_plain()
        );
    }
}

#[test]
fn every_catalog_check_is_accepted_without_an_assertion() {
    use pallas_conformance::catalog::{self, Evaluation};
    // Checks decided by a scenario's assertion need their `assert:`; every other is enough alone.
    for id in catalog::ids()
        .filter(|id| catalog::get(id).is_some_and(|d| d.evaluation != Evaluation::Assertion))
    {
        let text = format!("{BASE}checks:\n  - check: {id}\n");
        if let Err(e) = suite::parse_str("ok.yaml", &text) {
            panic!("{id} needs more than its ID: {}", e.render_plain());
        }
    }
}

#[test]
fn a_deployment_server_must_name_a_declared_mock() {
    let out = diag(
        "id: x\ntitle: t\ndeployment:\n  agents:\n    research: {servers: [argos]}\n  servers:\n    argos: {mock: argso}\n",
    );
    assert!(out.contains("refers to mock `argso`"), "{out}");
}

#[test]
fn a_bad_jsonpath_is_rejected() {
    let out = diag(&format!(
        "{BASE}checks:\n  - assert:\n      output: {{step: h, path: \"result[\"}}\n"
    ));
    assert!(out.contains("invalid JSONPath"), "{out}");
}

#[test]
fn broken_yaml_points_at_the_line() {
    let out = diag("id: x\ntitle: [unclosed\n");
    assert!(out.contains("bad.yaml:"), "{out}");
}

#[test]
fn the_checked_in_json_schema_matches_the_types() {
    let path = scenarios_dir().join("scenario.schema.json");
    let on_disk = std::fs::read_to_string(&path).expect("scenarios/scenario.schema.json");
    let generated = scenario::json_schema_pretty();
    let first_diff = on_disk
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b);
    assert!(
        on_disk == generated,
        "scenario.schema.json drifted (first differing line: {first_diff:?}); regenerate with \
         `pallas-conformance schema > scenarios/scenario.schema.json`"
    );
}

#[test]
fn every_shipped_scenario_is_valid_and_valid_against_the_schema() {
    let all =
        suite::load_paths(&[scenarios_dir()]).unwrap_or_else(|e| panic!("{}", e.render_plain()));
    assert!(all.len() >= 4);
    let validator = jsonschema::validator_for(&scenario::json_schema()).unwrap();
    for s in &all {
        let text = std::fs::read_to_string(&s.path).unwrap();
        // YAML 1.2 booleans only (`n` is a string), as the typed loader and editors read it.
        let v: serde_json::Value = serde_saphyr::from_str_with_options(
            &text,
            serde_saphyr::options! { strict_booleans: true },
        )
        .unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", s.path.display());
    }
}

#[test]
fn every_yaml_example_of_the_format_docs_parses() {
    let doc = std::fs::read_to_string(workspace().join("harness/docs/scenario-format.md")).unwrap();
    let mut examples = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + 8..];
        let end = body.find("```").expect("closed fence");
        examples.push(body[..end].to_owned());
        rest = &body[end + 3..];
    }
    assert!(examples.len() >= 3, "found {}", examples.len());
    for (i, e) in examples.iter().enumerate() {
        suite::parse_str(&format!("scenario-format.md example {}", i + 1), e)
            .unwrap_or_else(|err| panic!("{}", err.render_plain()));
    }
}

fn arb_spec() -> impl Strategy<Value = ScenarioSpec> {
    (
        "[a-z][a-z0-9-]{0,12}",
        "[A-Za-z ]{1,20}",
        proptest::collection::vec("[a-z]{1,6}", 0..3),
        proptest::collection::btree_map("[a-z]{1,6}", "[A-Za-z ]{0,10}", 1..3),
        proptest::option::of(prop_oneof![Just(serde_json::json!("tok")), (0u32..1000).prop_map(|n| serde_json::json!(n))]),
        1u32..5,
    )
        .prop_map(|(id, title, tags, agents, token, count)| {
            let first = agents.keys().next().cloned().unwrap_or_default();
            let text = format!(
                "id: {id}\ntitle: \"{title}\"\n",
            );
            let mut spec: ScenarioSpec = serde_saphyr::from_str(&text).unwrap();
            spec.tags = tags;
            spec.deployment = Some(serde_json::from_value(serde_json::json!({
                "agents": agents.iter().map(|(k, t)| (k.clone(), serde_json::json!({"title": t}))).collect::<serde_json::Map<_, _>>()
            })).unwrap());
            let send = serde_json::json!({"send": {"agent": first, "message": "m {{i}}", "progress_token": token}, "name": "s"});
            spec.steps = vec![serde_json::from_value(serde_json::json!({"repeat": {"count": count, "steps": [send]}})).unwrap()];
            spec.checks = vec![serde_json::from_value(serde_json::json!({"check": "PROG-002"})).unwrap()];
            spec
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn a_scenario_survives_parse_serialize_parse(spec in arb_spec()) {
        let yaml = serde_saphyr::to_string(&spec).unwrap();
        let parsed = suite::parse_str("round-trip.yaml", &yaml).map_err(|e| TestCaseError::fail(e.render_plain()))?;
        prop_assert_eq!(&parsed.spec, &spec);
        let again = serde_saphyr::to_string(&parsed.spec).unwrap();
        prop_assert_eq!(again, yaml);
    }
}

#[test]
fn the_catalog_page_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/CHECKS.md");
    let want = pallas_conformance::catalog::to_markdown();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        if std::env::var_os("PALLAS_BLESS").is_some() {
            std::fs::write(&path, &want).expect("docs/CHECKS.md is writable");
            return;
        }
        panic!(
            "docs/CHECKS.md is stale: rerun with PALLAS_BLESS=1 (it is generated from the rule data)"
        );
    }
}

#[test]
fn the_with_table_of_the_format_docs_is_generated_from_the_parameter_structs() {
    let path = workspace().join("harness/docs/scenario-format.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find("<!-- with-table:start")
        .expect("with-table start marker");
    let body = start + doc[start..].find("-->\n").expect("end of the start marker") + 4;
    let end = doc
        .find("<!-- with-table:end -->")
        .expect("with-table end marker");
    let generated = pallas_conformance::checks::with_table();
    if std::env::var_os("PALLAS_BLESS").is_some() {
        std::fs::write(&path, format!("{}{generated}{}", &doc[..body], &doc[end..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[body..end],
        generated,
        "harness/docs/scenario-format.md's `with:` table is stale: rerun with PALLAS_BLESS=1"
    );
}

#[test]
fn a_with_typo_fails_validation_at_its_line_with_a_hint() {
    let text = "id: typo\ntitle: t\nrequires: [health]\ndeployment:\n  agents:\n    research: {description: d, instruction: i}\nsteps:\n  - name: h\n    health: {agent: research}\nchecks:\n  - check: HEALTH-004\n    with: {stauts: degraded}\n";
    let err = suite::parse_str("typo.yaml", text).expect_err("a typo in `with:` must not load");
    let plain = err.render_plain();
    assert!(
        plain.contains("unknown parameter `stauts` of `HEALTH-004`"),
        "{plain}"
    );
    assert!(plain.contains("did you mean `status`?"), "{plain}");
    assert!(plain.contains("typo.yaml:12:"), "{plain}");
}

/// Every `.yaml` file under `dir`, recursively.
fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

/// The kit judges the contract, not the Rust reference (docs/certification/kit-fitting.md):
/// no scenario of the Pallas suite reads a name, message, wording or default that only the
/// reference has. Each entry is a text once used, and why it is not the seed's.
#[test]
fn no_pallas_scenario_reads_a_reference_only_name_or_wording() {
    const FITTED: &[(&str, &str)] = &[
        (
            "@.target",
            "a Rust `tracing` field; seed 001's record names the `logger`",
        ),
        (
            "'WARN'",
            "a `tracing` level; seed 001's levels are Python's (`WARNING`)",
        ),
        ("'TRACE'", "a `tracing` level; Python has none"),
        ("@.variable", "a field only the reference writes"),
        ("@.fields", "a `tracing` layout"),
        (
            "agent serving",
            "a reference log message; no seed mentions it",
        ),
        (
            "within 5s",
            "the reference's wording; the seed's 5 s timeout is measured",
        ),
        (
            "local.kit",
            "the reference's default namespace; the seed defines none",
        ),
        ("card: agents/", "seed 001 requires `agents.<name>.module`"),
        (
            "PALLAS_LOG_FILE: \"\"",
            "empty is not unset: use `unset_env`",
        ),
        (
            "step 1 (llm)'",
            "seed 000's example begins with `harper step 1 (tool)`",
        ),
    ];
    let mut files = Vec::new();
    yaml_files(&scenarios_dir(), &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(scenarios_dir())
            .unwrap()
            .display()
            .to_string();
        // Profiles and the packs of other ecosystems speak their own dialects.
        if ["targets/", "percolate/", "mcpctl/", "agentic-server/"]
            .iter()
            .any(|p| rel.starts_with(p))
        {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (needle, why) in FITTED {
            for (i, line) in text.lines().enumerate() {
                if line.contains(needle) {
                    found.push(format!("scenarios/{rel}:{}: `{needle}` — {why}", i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "reference-fitted scenario text:\n{}",
        found.join("\n")
    );
}

#[test]
fn an_entry_rule_must_be_one_of_its_checks_rules() {
    let assert = "    assert:\n      output: {step: h, path: \"$.health.status\", equals: ok}\n";
    let out = diag(&format!(
        "{BASE}checks:\n  - check: LOG-003\n    rule: s000.health-tool-exposed\n{assert}"
    ));
    assert!(
        out.contains("`rule: s000.health-tool-exposed` is not one of the rules of `LOG-003`")
            && out.contains("s001.log-stderr-gated"),
        "{out}"
    );
    let out = diag(&format!(
        "{BASE}checks:\n  - title: t\n    level: MUST\n    rule: s001.log-stderr-gated\n{assert}"
    ));
    assert!(out.contains("this entry names no check"), "{out}");
    // One of the check's rules is accepted.
    suite::parse_str(
        "ok.yaml",
        &format!("{BASE}checks:\n  - check: LOG-003\n    rule: s001.log-stderr-gated\n{assert}"),
    )
    .expect("a rule of the check is accepted");
}

/// A scenario's own expectation (an assertion without `check:`) cites no rule, so it may not
/// grade a finding above `info`: every such entry of the kit's suite is a premise (what the
/// scenario must have exercised) or `level: INFO`; a finding that breaks a rule is reported under
/// the catalog check that cites it.
#[test]
fn every_assertion_of_the_suite_cites_a_rule_or_is_a_premise_or_informational() {
    let all =
        suite::load_paths(&[scenarios_dir()]).unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let graded: Vec<String> = all
        .iter()
        .flat_map(|s| s.spec.checks.iter().map(move |c| (s, c)))
        .filter(|(_, c)| c.check.is_none() && !c.premise)
        .filter(|(_, c)| {
            // A MAY is a source's word: an assertion citing no rule cannot have one either.
            matches!(
                c.level,
                Some(
                    pallas_conformance::vocab::Level::Must
                        | pallas_conformance::vocab::Level::Should
                        | pallas_conformance::vocab::Level::May
                )
            )
        })
        .map(|(s, c)| {
            format!(
                "{}: {:?} graded {:?} without a rule",
                s.path.display(),
                c.title.as_deref().unwrap_or_default(),
                c.level
            )
        })
        .collect();
    assert!(
        graded.is_empty(),
        "assertions graded above `info` that cite no rule (use `check: ID` with `rule:`, \
         `premise: true` or `level: INFO`):\n{}",
        graded.join("\n")
    );
}

#[test]
fn an_any_alternative_is_validated_like_any_assertion() {
    // An alternative naming a step the scenario does not have is an error at load time.
    let out = diag(&format!(
        "{BASE}checks:\n  - title: t\n    level: SHOULD\n    assert:\n      any:\n        - output: {{step: hh, path: \"$\", exists: true}}\n        - output: {{step: h, path: \"$\", exists: true}}\n"
    ));
    assert!(out.contains("hh"), "{out}");
    assert!(out.contains("bad.yaml:"), "{out}");
    // Two alternatives of which each has exactly one kind load.
    let ok = format!(
        "{BASE}checks:\n  - title: t\n    level: SHOULD\n    assert:\n      any:\n        - output: {{step: h, path: \"$\", exists: true}}\n        - timing: {{step: h, max: 1s}}\n"
    );
    assert!(suite::parse_str("ok.yaml", &ok).is_ok());
}
