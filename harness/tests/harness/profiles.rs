//! Target profiles: the message tool's argument template, where the instance scope is written.

use pallas_conformance::target::{self, Target};
use serde_json::json;

fn profile(extra: &str) -> Result<Target, String> {
    let text = format!("name: t\ncommand: [x]\nagent_url: \"http://127.0.0.1:1/mcp\"\n{extra}");
    target::parse_str("t.yaml", &text)
        .map(|spec| Target {
            spec,
            path: "t.yaml".into(),
            workspace: ".".into(),
            env_overrides: Default::default(),
            python: None,
        })
        .map_err(|e| e.render_plain())
}

#[test]
fn without_a_template_the_message_tool_gets_the_message_alone() {
    let t = profile("").unwrap();
    assert_eq!(t.message_arguments("a", "hi"), json!({"message": "hi"}));
    assert_eq!(t.message_tool("a"), "send_message");
}

#[test]
fn a_template_fills_message_and_agent_at_any_depth_and_keeps_other_values() {
    let t = profile(
        "message_tool: run_agent\nmessage_arguments:\n  agent_id: \"{agent}\"\n  input: \"{message}\"\n  \
         options: {stream: false, tags: [\"from {agent}\"]}\n",
    )
    .unwrap();
    assert_eq!(
        t.message_arguments("research", "say {agent} {x}"),
        json!({"agent_id": "research", "input": "say {agent} {x}",
               "options": {"stream": false, "tags": ["from research"]}})
    );
}

#[test]
fn a_template_that_sends_no_message_is_refused_at_load() {
    let err = profile("message_arguments:\n  agent_id: \"{agent}\"\n").unwrap_err();
    assert!(err.contains("sends no `{message}`"), "{err}");
    assert!(err.contains("t.yaml:4"), "{err}");
    let err = profile("message_arguments: [\"{message}\"]\n").unwrap_err();
    assert!(err.contains("message_arguments"), "{err}");
}

#[test]
fn a_reply_path_is_a_jsonpath_checked_at_load_and_absent_by_default() {
    assert!(profile("").unwrap().reply_path().is_none());
    let t = profile("reply_path: \"$.text\"\n").unwrap();
    let path = t.reply_path().expect("the profile's reply_path");
    assert_eq!(
        path.query(&json!({"text": "hi", "usage": {}})).all(),
        vec![&json!("hi")]
    );
    let err = profile("reply_path: \"text[\"\n").unwrap_err();
    assert!(err.contains("`reply_path` is not a JSONPath"), "{err}");
    assert!(err.contains("t.yaml:4"), "{err}");
}

#[test]
fn a_call_of_the_message_tool_carries_the_fixed_arguments_unless_the_step_sets_them() {
    let t = profile(
        "message_tool: run_agent\nmessage_arguments:\n  agent_id: \"{agent}\"\n  message: \"{message}\"\n  \
         options: {stream: false}\n",
    )
    .unwrap();
    // A probe with no arguments, or a wrong type for the message, still names the agent: it
    // tests what it means to test, not the missing `agent_id`.
    assert_eq!(
        t.call_arguments("research", "run_agent", None),
        Some(json!({"agent_id": "research", "options": {"stream": false}}))
    );
    assert_eq!(
        t.call_arguments("research", "run_agent", Some(json!({"message": 42}))),
        Some(json!({"agent_id": "research", "message": 42, "options": {"stream": false}}))
    );
    // The step's own value of a fixed key wins; the `{message}` key is never added.
    assert_eq!(
        t.call_arguments(
            "research",
            "run_agent",
            Some(json!({"agent_id": "nobody", "options": null}))
        ),
        Some(json!({"agent_id": "nobody", "options": null}))
    );
    // Another tool, or arguments that are not an object, are sent as written.
    assert_eq!(
        t.call_arguments("research", "get_health", Some(json!({}))),
        Some(json!({}))
    );
    assert_eq!(
        t.call_arguments("research", "run_agent", Some(json!("not an object"))),
        Some(json!("not an object"))
    );
    // Without a template (or with only `{message}`), a call is sent as written.
    let plain = profile("").unwrap();
    assert_eq!(plain.call_arguments("research", "send_message", None), None);
    let only_message =
        profile("message_tool: \"{agent}\"\nmessage_arguments: {message: \"{message}\"}\n")
            .unwrap();
    assert_eq!(
        only_message.call_arguments("research", "research", Some(json!({}))),
        Some(json!({}))
    );
}

#[test]
fn a_message_written_under_message_goes_where_the_profile_carries_it() {
    // BeeAI's tool takes `input`: a call that gives the message a wrong type gives `input` one,
    // so the target's own schema judges the argument it has, not a missing one.
    let input =
        profile("message_tool: \"{agent}\"\nmessage_arguments: {input: \"{message}\"}\n").unwrap();
    assert_eq!(
        input.call_arguments("research", "research", Some(json!({"message": 42}))),
        Some(json!({"input": 42}))
    );
    assert_eq!(
        input.call_arguments(
            "research",
            "research",
            Some(json!({"message": "hi", "images": "not a list"}))
        ),
        Some(json!({"input": "hi", "images": "not a list"}))
    );
    // A missing message stays missing; another tool is sent as written.
    assert_eq!(
        input.call_arguments("research", "research", Some(json!({}))),
        Some(json!({}))
    );
    assert_eq!(
        input.call_arguments("research", "get_health", Some(json!({"message": 42}))),
        Some(json!({"message": 42}))
    );
    // A nested carrier (`run_args.message`) is built on the way.
    let nested =
        profile("message_tool: run\nmessage_arguments:\n  run_args: {message: \"{message}\"}\n")
            .unwrap();
    assert_eq!(
        nested.call_arguments("research", "run", Some(json!({"message": 42}))),
        Some(json!({"run_args": {"message": 42}}))
    );
}

#[test]
fn every_profile_in_scenarios_targets_loads_and_sends_the_message() {
    let dir = super::common::scenarios_dir().join("targets");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let t = target::load(&p).unwrap_or_else(|e| panic!("{}", e.render_plain()));
            let args = t.message_arguments("agent-x", "the-message-text");
            assert!(
                args.to_string().contains("the-message-text"),
                "{}: {args}",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 8, "{n} profiles");
}

// ---- The certification reports of docs/certification/ against the profiles that made them ----

use pallas_conformance::catalog;
use pallas_conformance::suite;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn profiles_by_name() -> BTreeMap<String, Target> {
    let dir = super::common::scenarios_dir().join("targets");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let t = target::load(&p).unwrap();
            (t.spec.name.clone(), t)
        })
        .collect()
}

fn certification_reports() -> Vec<(PathBuf, Value)> {
    let dir = super::common::workspace().join("docs/certification");
    let mut out: Vec<(PathBuf, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, v)
        })
        .filter(|(_, v)| v["format"] == "pallas-conformance/report/v1")
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every warn, fail or inconclusive verdict of `report` that a Pallas-only capability the
/// target does not claim should have skipped: the check's own capability, or one the scenario
/// requires.
fn pallas_only_judged(report: &Value, t: &Target) -> Vec<String> {
    let mut out = Vec::new();
    for s in report["scenarios"].as_array().into_iter().flatten() {
        let requires: Vec<_> = s["file"]
            .as_str()
            .and_then(|f| suite::load_file(&super::common::workspace().join(f)).ok())
            .map(|sc| sc.spec.requires.clone())
            .unwrap_or_default();
        let unclaimed_scenario = requires
            .iter()
            .find(|c| c.is_pallas_only() && !t.claims(**c));
        for c in s["checks"].as_array().into_iter().flatten() {
            let verdict = c["verdict"].as_str().unwrap_or_default();
            if !matches!(verdict, "warn" | "fail" | "inconclusive") {
                continue;
            }
            let id = c["id"].as_str().unwrap_or_default();
            let unclaimed_check = catalog::get(id)
                .and_then(|d| d.capability)
                .filter(|cap| cap.is_pallas_only() && !t.claims(*cap));
            if let Some(cap) = unclaimed_check.or(unclaimed_scenario.copied()) {
                out.push(format!("{}: {id} {verdict} (needs {cap:?})", s["id"]));
            }
        }
    }
    out
}

#[test]
fn no_certification_report_judges_a_pallas_only_check_its_target_does_not_claim() {
    let profiles = profiles_by_name();
    let reports = certification_reports();
    assert!(reports.len() >= 3, "{} reports", reports.len());
    let mut judged = Vec::new();
    for (path, report) in &reports {
        let name = report["target"].as_str().unwrap_or_default();
        let t = profiles
            .get(name)
            .unwrap_or_else(|| panic!("{}: no profile named {name}", path.display()));
        for j in pallas_only_judged(report, t) {
            judged.push(format!("{}: {j}", path.display()));
        }
    }
    assert!(
        judged.is_empty(),
        "Pallas-only verdicts:\n{}",
        judged.join("\n")
    );
}

#[test]
fn a_pallas_only_check_that_warned_on_a_target_without_it_is_caught() {
    let profiles = profiles_by_name();
    let (_, mut report) = certification_reports()
        .into_iter()
        .find(|(_, r)| r["target"] == "fast-agent-0.7.22")
        .unwrap();
    let t = &profiles["fast-agent-0.7.22"];
    assert!(pallas_only_judged(&report, t).is_empty());
    let not_passed = |r: &Value| {
        r["scenarios"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                matches!(
                    c["verdict"].as_str(),
                    Some("warn" | "fail" | "inconclusive")
                )
            })
            .count()
    };
    let before = not_passed(&report);
    // A LOG check (pallas_logging) that warned, as the coarse `logs` claim once made it.
    let checks = report["scenarios"][0]["checks"].as_array_mut().unwrap();
    checks.push(serde_json::json!({"id": "LOG-003", "verdict": "warn"}));
    assert_eq!(pallas_only_judged(&report, t).len(), 1);
    // A generic check in a scenario that requires a Pallas-only capability.
    let file = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["file"].as_str().is_some_and(|f| f.contains("/logging/")))
        .map(|s| s["file"].clone())
        .unwrap();
    report["scenarios"][0]["file"] = file;
    report["scenarios"][0]["checks"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": "MCP-009", "verdict": "inconclusive"}));
    // Every verdict of that scenario that is not a pass or a skip is now reported.
    assert_eq!(pallas_only_judged(&report, t).len(), before + 2);
}

// ---- Reviewer's notes against the verdicts they discuss ----

/// One reviewed row: verdict, check, scenario, how many, holds.
type Row = (String, String, String, usize, String);

/// The rows of the reviewed-verdicts table of a report's notes (between `<!-- verdicts:begin -->`
/// and `<!-- verdicts:end -->`): `| verdict | check | scenario | n | holds | finding |`.
fn reviewed_rows(notes: &str) -> Option<Vec<Row>> {
    let start = notes.find("<!-- verdicts:begin -->")?;
    let end = notes.find("<!-- verdicts:end -->")?;
    let rows = notes[start..end]
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| verdict"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect();
            assert!(cells.len() >= 6, "row with fewer than 6 cells: {l}");
            let n = cells[3]
                .parse()
                .unwrap_or_else(|_| panic!("n is not a number: {l}"));
            (
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                n,
                cells[4].clone(),
            )
        })
        .collect();
    Some(rows)
}

/// How many verdicts of each (verdict, check, scenario) the report holds.
fn verdict_counts(report: &Value) -> BTreeMap<(String, String, String), usize> {
    let mut out = BTreeMap::new();
    for s in report["scenarios"].as_array().into_iter().flatten() {
        for c in s["checks"].as_array().into_iter().flatten() {
            let key = (
                c["verdict"].as_str().unwrap_or_default().to_owned(),
                c["id"].as_str().unwrap_or_default().to_owned(),
                s["id"].as_str().unwrap_or_default().to_owned(),
            );
            *out.entry(key).or_insert(0) += 1;
        }
    }
    out
}

/// What is wrong with `notes` as a review of `report`: a row whose verdict is not in the
/// report (or not that many times), a fail, warn, inconclusive or error of the report no row
/// reviews, or review
/// counts that do not match the rows.
fn stale_notes(notes: &str, report: &Value) -> Vec<String> {
    let Some(rows) = reviewed_rows(notes) else {
        return vec!["no reviewed-verdicts table".into()];
    };
    let counts = verdict_counts(report);
    let mut out = Vec::new();
    for (verdict, check, scenario, n, _) in &rows {
        let key = (verdict.clone(), check.clone(), scenario.clone());
        let seen = counts.get(&key).copied().unwrap_or(0);
        if seen != *n {
            out.push(format!(
                "{verdict} {check} in {scenario}: the notes say {n}, the report has {seen}"
            ));
        }
    }
    for ((verdict, check, scenario), n) in &counts {
        if matches!(verdict.as_str(), "fail" | "warn" | "inconclusive" | "error")
            && !rows
                .iter()
                .any(|r| &r.0 == verdict && &r.1 == check && &r.2 == scenario)
        {
            out.push(format!(
                "{verdict} {check} in {scenario} (x{n}) is not reviewed"
            ));
        }
    }
    let reviewed: usize = rows.iter().map(|r| r.3).sum();
    let unfair: usize = rows
        .iter()
        .filter(|r| r.4.starts_with("no"))
        .map(|r| r.3)
        .sum();
    let claim = format!("Reviewed {reviewed} verdicts of this report; {unfair} do not hold");
    if !notes.contains(&claim) {
        out.push(format!("the notes do not say \"{claim}\""));
    }
    out
}

/// The reports whose notes carry a reviewed-verdicts table.
fn reviewed_reports() -> Vec<(PathBuf, String, Value)> {
    certification_reports()
        .into_iter()
        .filter_map(|(p, report)| {
            let md = std::fs::read_to_string(p.with_extension("md")).ok()?;
            let notes = md.split("<!-- reviewer-notes -->").nth(1)?.to_owned();
            notes
                .contains("<!-- verdicts:begin -->")
                .then_some((p, notes, report))
        })
        .collect()
}

#[test]
fn reviewer_notes_match_the_verdicts_they_discuss() {
    let reviewed = reviewed_reports();
    let names: Vec<String> = reviewed.iter().map(|r| r.2["target"].to_string()).collect();
    for name in [
        "agno",
        "langgraph",
        "llamaindex",
        "mastra",
        "ms-agent-framework",
        "google-adk",
        "voltagent",
        "fast-agent-0.7.22",
        "fast-agent-latest",
        "pallas-fastagent",
        "mastra-2",
        "beeai",
    ] {
        assert!(
            names.iter().any(|n| n.contains(name)),
            "{name} is reviewed: {names:?}"
        );
    }
    let mut stale = Vec::new();
    for (path, notes, report) in &reviewed {
        for s in stale_notes(notes, report) {
            stale.push(format!("{}: {s}", path.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "stale reviewer's notes:\n{}",
        stale.join("\n")
    );
}

#[test]
fn notes_that_a_changed_report_no_longer_supports_are_caught() {
    // The first report whose notes review a verdict that is not a pass.
    let (_, notes, mut report) = reviewed_reports()
        .into_iter()
        .find(|(_, notes, _)| reviewed_rows(notes).is_some_and(|r| r.iter().any(|r| r.0 != "pass")))
        .expect("a report whose notes review a non-pass verdict");
    assert!(stale_notes(&notes, &report).is_empty());
    // A verdict the notes discuss turns into a pass: the row no longer holds.
    let rows = reviewed_rows(&notes).unwrap();
    let (verdict, check, scenario, _, _) = rows.iter().find(|r| r.0 != "pass").unwrap().clone();
    let mut flipped = false;
    for s in report["scenarios"].as_array_mut().unwrap() {
        if s["id"] != scenario.as_str() {
            continue;
        }
        for c in s["checks"].as_array_mut().unwrap() {
            if c["id"] == check.as_str() && c["verdict"] == verdict.as_str() && !flipped {
                c["verdict"] = "pass".into();
                flipped = true;
            }
        }
    }
    assert!(flipped);
    assert!(!stale_notes(&notes, &report).is_empty());
    // A new warn nobody reviewed.
    report["scenarios"][0]["checks"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": "MCP-999", "verdict": "warn"}));
    let found = stale_notes(&notes, &report);
    assert!(found.iter().any(|s| s.contains("MCP-999")), "{found:?}");
}

#[test]
fn the_message_key_is_the_template_key_that_carries_the_message() {
    assert_eq!(profile("").unwrap().message_key().to_string(), "message");
    let t = profile("message_arguments: {agent_id: \"{agent}\", input: \"{message}\"}\n").unwrap();
    assert_eq!(t.message_key().to_string(), "input");
    // At any depth: the path of keys to the exact `{message}` string.
    let t = profile("message_arguments: {run_args: {message: \"{message}\"}}\n").unwrap();
    assert_eq!(t.message_key().keys(), ["run_args", "message"]);
    assert_eq!(t.message_key().to_string(), "run_args.message");
    assert_eq!(
        t.message_arguments("research", "hi"),
        json!({"run_args": {"message": "hi"}})
    );
}

/// Renders a one-agent deployment asking for `instance_scope: request` with `t`; the text of
/// `agents.yaml` and of the agent's card, where the profile writes them.
fn rendered_scope_files(t: &Target) -> (String, String) {
    let d: pallas_conformance::scenario::DeploymentSpec =
        serde_json::from_value(json!({"agents": {"research": {"instance_scope": "request"}}}))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut ports = Default::default();
    let mut redactor = pallas_conformance::redact::Redactor::new();
    target::render_deployment(
        t,
        &d,
        &Default::default(),
        dir.path(),
        &mut ports,
        &mut redactor,
    )
    .unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap_or_default();
    (read("agents.yaml"), read("agents/research.md"))
}

#[test]
fn the_instance_scope_is_written_where_the_profile_sets_it_and_nowhere_else() {
    let files = "files:\n  - {path: agents.yaml, generate: agents_yaml}\n  - {path: \"agents/{agent}.md\", generate: agent_card}\n";
    let (agents, card) = rendered_scope_files(
        &profile(&format!("{files}instance_scope: {{set: agents_yaml}}")).unwrap(),
    );
    assert!(agents.contains("instance_scope: request"), "{agents}");
    assert!(!card.contains("instance_scope"), "{card}");
    let (agents, card) = rendered_scope_files(
        &profile(&format!("{files}instance_scope: {{set: agent_card}}")).unwrap(),
    );
    assert!(!agents.contains("instance_scope"), "{agents}");
    assert!(card.contains("instance_scope: request"), "{card}");
    // No setting: the key is written in no file (an implementation that reads none would be run
    // as if it had been told, or refuse a key it does not know).
    let (agents, card) = rendered_scope_files(
        &profile(&format!("{files}instance_scope: {{default: shared}}")).unwrap(),
    );
    assert!(!agents.contains("instance_scope"), "{agents}");
    assert!(!card.contains("instance_scope"), "{card}");
}

#[test]
fn the_pallas_profiles_set_the_scope_in_agents_yaml() {
    let profiles = profiles_by_name();
    for name in ["reference", "pallas-fastagent"] {
        let t = &profiles[name];
        assert_eq!(
            t.spec.instance_scope.set,
            Some(target::ScopeSetting::AgentsYaml),
            "{name}"
        );
    }
}

/// `cargo test` (like `cargo run`) gives this process the package's `CARGO_MANIFEST_DIR` and
/// `CARGO_PKG_NAME`; a profile's `build` must not get them, or its `cargo build` sees ring's
/// `rerun-if-env-changed` variables changed and rebuilds ring and every crate above it.
#[test]
fn a_profile_build_does_not_inherit_the_variables_cargo_sets_for_a_package() {
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let mut t = profile("").expect("the profile loads");
    t.spec.build = [
        "sh",
        "-c",
        r#"test -z "$CARGO_MANIFEST_DIR$CARGO_PKG_NAME$CARGO_CRATE_NAME" || { echo "inherited: $CARGO_MANIFEST_DIR $CARGO_PKG_NAME" >&2; exit 1; }"#,
    ]
    .map(String::from)
    .to_vec();
    t.build()
        .expect("the build sees none of cargo's package variables");
    t.spec.build = ["sh", "-c", r#"test -n "$PATH""#]
        .map(String::from)
        .to_vec();
    t.build().expect("the rest of the environment is passed on");
}
