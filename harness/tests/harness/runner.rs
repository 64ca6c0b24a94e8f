//! The runner end to end against `pallas-mocks` standing in for an implementation: samples pass,
//! failures are caught with evidence, hung and crashing implementations give `error` verdicts,
//! skip logic, the stale-baseline rule and redaction.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pallas_conformance::checks::Verdict;
use pallas_conformance::runner::{self, Baseline, RunOptions};
use pallas_conformance::target::{self, Target};
use pallas_conformance::{exit, report, scenario, suite};

use super::common::{scenarios_dir, workspace};

/// The mock-agent profile, with its `pallas-mocks` build done once for all tests.
fn mock_agent() -> Target {
    static BUILT: OnceLock<Result<(), target::BuildError>> = OnceLock::new();
    let mut t = target::load(&scenarios_dir().join("targets/mock-agent.yaml")).unwrap();
    BUILT
        .get_or_init(|| t.build())
        .as_ref()
        .expect("pallas-mocks builds");
    t.spec.build.clear();
    t
}

fn custom_target(yaml: &str) -> Target {
    let spec = target::parse_str("test-target.yaml", yaml)
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let _ = mock_agent(); // the binary exists
    Target {
        spec,
        path: workspace().join("scenarios/targets/test.yaml"),
        workspace: workspace(),
        env_overrides: Default::default(),
        python: None,
    }
}

fn one(text: &str) -> Vec<scenario::Scenario> {
    vec![suite::parse_str("inline.yaml", text).unwrap_or_else(|e| panic!("{}", e.render_plain()))]
}

fn opts() -> RunOptions {
    RunOptions {
        jobs: 2,
        step_timeout: Duration::from_secs(5),
        scenario_deadline: Duration::from_secs(30),
        ..RunOptions::default()
    }
}

/// HEALTH-004 enforces a SHOULD (the seed's result mapping has no keyword): `--strict` makes
/// its break a failure.
fn strict() -> RunOptions {
    RunOptions {
        grading: pallas_conformance::checks::Grading {
            strict: true,
            ..Default::default()
        },
        ..opts()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sample_scenarios_pass_against_the_mock_agent_target() {
    let scenarios = suite::load_paths(&[scenarios_dir().join("samples")]).unwrap();
    let run = runner::run(&scenarios, &mock_agent(), &opts()).await;
    let text = report::summary(&run);
    assert_eq!(run.exit_code(), exit::SUCCESS, "{text}");
    assert_eq!(run.scenarios.len(), scenarios.len());
    // Scenarios needing what the stand-in does not claim (registry, bearer…) are skipped.
    let ran: Vec<_> = run
        .scenarios
        .iter()
        .filter(|s| s.skipped.is_none())
        .collect();
    assert!(ran.len() >= 4, "{text}");
    // The stand-in has no agent loop: an entry that needs a model request is unobserved, and
    // makes its scenario inconclusive; every other scenario passes.
    for s in &run.scenarios {
        match &s.skipped {
            Some(why) => assert!(why.contains("does not claim"), "{}: {why}", s.id),
            None if s.verdict == Verdict::Inconclusive => {
                let unobserved: Vec<_> = s
                    .checks
                    .iter()
                    .filter(|c| c.verdict == Verdict::Inconclusive)
                    .collect();
                assert!(
                    unobserved.iter().all(|c| c.reason.contains("mock LLM")),
                    "{}: {text}",
                    s.id
                );
            }
            None => assert_eq!(s.verdict, Verdict::Pass, "{}: {text}", s.id),
        }
    }
    assert!(
        ran.iter().filter(|s| s.verdict == Verdict::Pass).count() >= 3,
        "{text}"
    );
    // Wire validity ran on every scenario that exchanged MCP messages.
    assert!(
        ran.iter()
            .all(|s| s.checks.iter().any(|c| c.id == "MCP-001")),
        "{text}"
    );
    // Each scenario that ran says where its time went: phases within its wall time, the steps'
    // own phase covering its steps; a skipped one has none.
    for s in &run.scenarios {
        let Some(p) = s.phases else {
            assert!(s.skipped.is_some(), "{} ran without phases", s.id);
            continue;
        };
        let phases = [
            p.mocks_ms, p.start_ms, p.ready_ms, p.steps_ms, p.stop_ms, p.judge_ms,
        ];
        assert!(phases.iter().all(|&ms| ms >= 0.0), "{}: {p:?}", s.id);
        assert!(
            phases.iter().sum::<f64>() <= s.duration_ms,
            "{}: {p:?}",
            s.id
        );
        let longest_step = s.steps.iter().map(|x| x.elapsed_ms).fold(0.0, f64::max);
        assert!(p.start_ms > 0.0, "{}: {p:?}", s.id);
        assert!(p.steps_ms >= longest_step, "{}: {p:?}", s.id);
    }
}

const AGENT: &str = "deployment:\n  agents:\n    research: {}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_expectation_fails_with_evidence_and_its_file_line() {
    let s = one(&format!(
        "id: wrong-status\ntitle: t\nrequires: [health]\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - check: HEALTH-004\n    with: {{status: degraded, mentions: [argos]}}\n"
    ));
    let run = runner::run(&s, &mock_agent(), &strict()).await;
    assert_eq!(
        run.exit_code(),
        exit::CHECK_FAILED,
        "{}",
        report::summary(&run)
    );
    let c = &run.scenarios[0]
        .checks
        .iter()
        .find(|c| c.id == "HEALTH-004")
        .unwrap();
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(c.location, "inline.yaml:11");
    assert_eq!(c.evidence[0].expected.as_deref(), Some("degraded"));
    assert!(
        c.evidence[0].seen.as_deref().unwrap().contains("\"ok\""),
        "{:?}",
        c.evidence
    );
}

/// A step that could not do what it was asked reports its error at the step's `file:line`
/// (a step inside a group at its group's line), in the run result and in the live events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_error_points_at_the_steps_file_line() {
    let s = one(&format!(
        "id: step-error\ntitle: t\nrequires: [health]\n{AGENT}steps:\n  - name: fine\n    health: {{agent: research}}\n  - repeat:\n      count: 1\n      steps:\n        - name: broken\n          health: {{agent: research}}\n          capture: {{nothing: \"$.no.such.field\"}}\n"
    ));
    let mut live = Vec::new();
    let run = runner::run_with_events(&s, &mock_agent(), &opts(), |e| live.push(e.clone())).await;
    let steps = &run.scenarios[0].steps;
    let fine = steps
        .iter()
        .find(|s| s.name == "fine")
        .expect("the first step ran");
    assert_eq!(fine.error, None, "{steps:?}");
    let broken = steps
        .iter()
        .find(|s| s.name.starts_with("broken"))
        .expect("the grouped step ran");
    let error = broken.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("inline.yaml:10: capture `nothing`"),
        "the error names the group's line: {error}"
    );
    let done = live
        .iter()
        .find_map(|e| match e {
            runner::RunEvent::StepDone(d) if d.step.name.starts_with("broken") => {
                d.step.error.clone()
            }
            _ => None,
        })
        .unwrap_or_default();
    assert_eq!(done, error, "the live event says the same");
}

/// The verdicts of the first scenario's own entries (automatic checks, judged on any exchange,
/// have no location).
fn verdicts(run: &runner::RunResult) -> Vec<Verdict> {
    run.scenarios[0]
        .checks
        .iter()
        .filter(|c| !c.location.is_empty())
        .map(|c| c.verdict)
        .collect()
}

/// A scenario whose premise does not hold earns neither a pass nor a failure: every entry that
/// would have passed or failed is inconclusive; with the premise holding, the same entries judge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmet_premise_makes_the_other_entries_inconclusive() {
    let text = |premise_status: &str| {
        format!(
            "id: premise\ntitle: t\nrequires: [health]\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - check: HEALTH-004\n    with: {{status: degraded, mentions: [argos]}}\n  - title: answered ok\n    level: SHOULD\n    assert:\n      output: {{step: h, path: \"$.health.status\", equals: ok}}\n  - title: the health answer is {premise_status}\n    premise: true\n    assert:\n      output: {{step: h, path: \"$.health.status\", equals: {premise_status}}}\n"
        )
    };
    let unmet = runner::run(&one(&text("error")), &mock_agent(), &strict()).await;
    assert_eq!(
        verdicts(&unmet),
        vec![Verdict::Inconclusive; 3],
        "{}",
        report::summary(&unmet)
    );
    let first = unmet.scenarios[0]
        .checks
        .iter()
        .find(|c| c.id == "HEALTH-004")
        .unwrap();
    assert!(
        first.reason.contains("the health answer is error"),
        "{}",
        first.reason
    );
    let met = runner::run(&one(&text("ok")), &mock_agent(), &strict()).await;
    assert_eq!(
        verdicts(&met),
        vec![Verdict::Fail, Verdict::Pass, Verdict::Pass],
        "{}",
        report::summary(&met)
    );
}

/// An entry's own `given:` gates that entry alone: unmet, it is inconclusive and names why, while
/// the scenario's other entries still judge; met, the entry judges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmet_given_makes_only_its_entry_inconclusive() {
    let text = |given_status: &str| {
        format!(
            "id: given\ntitle: t\nrequires: [health]\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - title: answered degraded\n    level: SHOULD\n    given:\n      output: {{step: h, path: \"$.health.status\", equals: {given_status}}}\n    assert:\n      output: {{step: h, path: \"$.health.status\", equals: degraded}}\n  - title: answered ok\n    level: SHOULD\n    assert:\n      output: {{step: h, path: \"$.health.status\", equals: ok}}\n"
        )
    };
    let unmet = runner::run(&one(&text("error")), &mock_agent(), &strict()).await;
    assert_eq!(
        verdicts(&unmet),
        vec![Verdict::Inconclusive, Verdict::Pass],
        "{}",
        report::summary(&unmet)
    );
    let gated = &unmet.scenarios[0]
        .checks
        .iter()
        .find(|c| c.title == "answered degraded");
    let reason = gated.map(|c| c.reason.as_str()).unwrap_or_default();
    assert!(reason.contains("`given:` does not hold"), "{reason}");
    let met = runner::run(&one(&text("ok")), &mock_agent(), &strict()).await;
    assert_eq!(
        verdicts(&met),
        vec![Verdict::Fail, Verdict::Pass],
        "{}",
        report::summary(&met)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_implementation_gives_an_error_verdict_within_the_step_timeout() {
    // The "implementation" accepts TCP on the agent port and never answers.
    let t = custom_target(
        "name: hung\ncommand: [\"{{cargo_target_dir}}/debug/pallas-mocks\", up, hole.yaml]\nfiles:\n  - path: hole.yaml\n    template: \"mcp_servers:\\n  hole: {port: {{agents.research.port}}, reachability: blackhole}\\n\"\nagent_url: \"http://127.0.0.1:{{agent.port}}/mcp\"\nreadiness:\n  - tcp: \"127.0.0.1:{{agent.port}}\"\n    each_agent: true\ncapabilities: [health]\n",
    );
    let s = one(&format!(
        "id: hung\ntitle: t\ntimeouts: {{step: 1s}}\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - check: HEALTH-002\n"
    ));
    let started = Instant::now();
    let run = runner::run(&s, &t, &opts()).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        run.exit_code(),
        exit::HARNESS_ERROR,
        "{}",
        report::summary(&run)
    );
    let c = run.scenarios[0]
        .checks
        .iter()
        .find(|c| c.id == "HEALTH-002")
        .unwrap();
    assert_eq!(c.verdict, Verdict::Error, "{c:?}");
    assert!(c.reason.contains("could not run"), "{}", c.reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scenario_deadline_stops_a_hung_run_and_keeps_what_was_seen() {
    // The "implementation" accepts TCP on the agent port and never answers.
    let t = custom_target(
        "name: hung\ncommand: [\"{{cargo_target_dir}}/debug/pallas-mocks\", up, hole.yaml]\nfiles:\n  - path: hole.yaml\n    template: \"mcp_servers:\\n  hole: {port: {{agents.research.port}}, reachability: blackhole}\\n\"\nagent_url: \"http://127.0.0.1:{{agent.port}}/mcp\"\nreadiness:\n  - tcp: \"127.0.0.1:{{agent.port}}\"\n    each_agent: true\ncapabilities: [health]\n",
    );
    let s = one(&format!(
        "id: deadline\ntitle: t\ntimeouts: {{step: 30s, scenario: 2s}}\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - check: HEALTH-002\n"
    ));
    let started = Instant::now();
    let run = runner::run(&s, &t, &opts()).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        run.exit_code(),
        exit::HARNESS_ERROR,
        "{}",
        report::summary(&run)
    );
    let r = &run.scenarios[0];
    assert!(
        r.error.as_deref().unwrap_or("").contains("deadline"),
        "{:?}",
        r.error
    );
    let h = r.checks.iter().find(|c| c.id == "HARNESS").unwrap();
    assert_eq!(h.verdict, Verdict::Error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_implementation_gives_an_error_with_its_output() {
    let t = custom_target(
        "name: crash\ncommand: [sh, -c, \"echo config rejected >&2; exit 3\"]\nagent_url: \"http://127.0.0.1:{{agent.port}}/mcp\"\nreadiness:\n  - tcp: \"127.0.0.1:{{agent.port}}\"\n    each_agent: true\n",
    );
    let s = one(&format!(
        "id: crash\ntitle: t\n{AGENT}steps:\n  - list_tools: {{agent: research}}\n"
    ));
    let run = runner::run(&s, &t, &opts()).await;
    assert_eq!(run.exit_code(), exit::HARNESS_ERROR);
    let r = &run.scenarios[0];
    assert_eq!(r.verdict, Verdict::Error);
    let e = r.error.as_deref().unwrap();
    assert!(e.contains("did not become ready"), "{e}");
    assert!(
        e.contains("config rejected")
            || r.output_tail
                .as_deref()
                .unwrap_or("")
                .contains("config rejected"),
        "{e} {:?}",
        r.output_tail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_needing_an_unclaimed_capability_is_skipped_with_the_reason() {
    let s = one(&format!(
        "id: needs-registry\ntitle: t\nrequires: [registry]\n{AGENT}steps:\n  - registry: {{}}\nchecks:\n  - check: REG-002\n"
    ));
    let run = runner::run(&s, &mock_agent(), &opts()).await;
    assert_eq!(run.exit_code(), exit::SUCCESS);
    let r = &run.scenarios[0];
    assert_eq!(r.verdict, Verdict::Skip);
    assert_eq!(r.checks[0].verdict, Verdict::Skip);
    assert_eq!(r.checks[0].reason, "the target does not claim `registry`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_the_profile_cannot_set_skips_the_scenario_unless_it_is_the_default() {
    let scenario = |scope: &str| {
        one(&format!(
            "id: scoped\ntitle: t\ndeployment:\n  agents:\n    research: {{instance_scope: {scope}}}\nsteps:\n  - name: t\n    list_tools: {{agent: research}}\nchecks:\n  - check: MSG-001\n"
        ))
    };
    // The mock-agent profile has no `instance_scope`: no scope can be set, no default is known.
    let run = runner::run(&scenario("connection"), &mock_agent(), &opts()).await;
    let r = &run.scenarios[0];
    assert_eq!(r.verdict, Verdict::Skip);
    let reason = r.skipped.as_deref().unwrap_or_default();
    assert!(
        reason.contains("`instance_scope: connection`") && reason.contains("no default scope"),
        "{reason}"
    );
    assert_eq!(r.checks[0].verdict, Verdict::Skip);
    // A profile declaring the scope its target runs at by default runs a scenario asking for it.
    let mut t = mock_agent();
    t.spec.instance_scope.default = Some(scenario::InstanceScope::Connection);
    let run = runner::run(&scenario("connection"), &t, &opts()).await;
    assert_eq!(run.scenarios[0].verdict, Verdict::Pass);
    let run = runner::run(&scenario("request"), &t, &opts()).await;
    let reason = run.scenarios[0].skipped.as_deref().unwrap_or_default();
    assert!(
        reason.contains("`instance_scope: request`")
            && reason.contains("runs at `connection` by default"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_whose_capability_is_unclaimed_is_skipped_not_dropped() {
    let s = one(&format!(
        "id: mixed\ntitle: t\n{AGENT}steps:\n  - name: t\n    list_tools: {{agent: research}}\nchecks:\n  - check: MSG-001\n  - check: MET-001\n"
    ));
    let run = runner::run(&s, &mock_agent(), &opts()).await;
    let checks = &run.scenarios[0].checks;
    assert_eq!(
        checks.iter().find(|c| c.id == "MSG-001").unwrap().verdict,
        Verdict::Pass
    );
    let met = checks.iter().find(|c| c.id == "MET-001").unwrap();
    assert_eq!(met.verdict, Verdict::Skip);
    assert!(met.reason.contains("metrics"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baselined_failure_passes_the_run_and_a_baselined_pass_is_stale() {
    let failing = format!(
        "id: base-fail\ntitle: t\nrequires: [health]\n{AGENT}steps:\n  - name: h\n    health: {{agent: research}}\nchecks:\n  - check: HEALTH-004\n    with: {{status: degraded}}\n  - check: HEALTH-002\n"
    );
    let s = one(&failing);
    let b = Baseline::parse(
        "baseline.yaml",
        "expected_failures:\n  base-fail: [HEALTH-004]\n",
    )
    .unwrap();
    let run = runner::run(
        &s,
        &mock_agent(),
        &RunOptions {
            baseline: Some(b),
            ..strict()
        },
    )
    .await;
    assert_eq!(run.exit_code(), exit::SUCCESS, "{}", report::summary(&run));
    assert!(run.scenarios[0].checks.iter().any(|c| c.baselined));

    let b = Baseline::parse(
        "baseline.yaml",
        "expected_failures:\n  base-fail: [HEALTH-002]\n",
    )
    .unwrap();
    let run = runner::run(
        &s,
        &mock_agent(),
        &RunOptions {
            baseline: Some(b),
            ..strict()
        },
    )
    .await;
    assert_eq!(run.exit_code(), exit::CHECK_FAILED);
    assert_eq!(run.stale.len(), 1);
    assert_eq!(run.stale[0].check, "HEALTH-002");
}

#[test]
fn a_baseline_with_an_unknown_check_is_invalid_input() {
    let e = Baseline::parse("b.yaml", "expected_failures:\n  x: [HEALTH-02]\n").unwrap_err();
    let text = e.render_plain();
    assert!(text.contains("unknown check `HEALTH-02`"), "{text}");
    assert!(text.contains("did you mean"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearers_never_appear_in_any_report() {
    let s = one(&format!(
        "id: secret\ntitle: t\n{AGENT}steps:\n  - name: s\n    send: {{agent: research, message: hi, bearer: tok-secret-77}}\nchecks:\n  - title: a deliberately failing assertion quoting the bearer\n    level: MUST\n    assert:\n      output: {{step: s, path: \"$.text\", contains: \"tok-secret-77\"}}\n"
    ));
    let run = runner::run(&s, &mock_agent(), &opts()).await;
    assert_eq!(run.exit_code(), exit::CHECK_FAILED);
    for text in [
        report::json_text(&run),
        report::junit(&run),
        report::markdown(&run),
        report::summary(&run),
    ] {
        assert!(!text.contains("tok-secret-77"), "{text}");
        assert!(
            text.contains(&pallas_conformance::redact::fingerprint("tok-secret-77")),
            "{text}"
        );
    }
}

#[test]
fn the_reference_profile_renders_every_file_with_free_ports_and_env_overrides() {
    let mut t = target::load(&scenarios_dir().join("targets/reference.yaml")).unwrap();
    t.env_overrides
        .insert("PALLAS_DEFECTS".into(), "leak_bearer".into());
    let s = suite::load_file(&scenarios_dir().join("samples/tool-loop.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mocks = [
        ("openai".to_owned(), "http://127.0.0.1:1/v1".to_owned()),
        ("argos".to_owned(), "http://127.0.0.1:2/mcp".to_owned()),
        ("weather".to_owned(), "http://127.0.0.1:3/mcp".to_owned()),
    ]
    .into_iter()
    .collect();
    let mut ports = Default::default();
    let mut redactor = pallas_conformance::redact::Redactor::new();
    let r = target::render_deployment(
        &t,
        s.spec.deployment.as_ref().unwrap(),
        &mocks,
        dir.path(),
        &mut ports,
        &mut redactor,
    )
    .unwrap();
    assert_eq!(
        r.files,
        [
            "agents.yaml",
            "fastagent.config.yaml",
            "fastagent.secrets.yaml",
            "agents/__init__.py",
            "agents/research.py",
            ".env"
        ]
    );
    // Seed 001: `agents.<name>.module` (required) names a module holding a `fast` instance.
    let agents_yaml = std::fs::read_to_string(dir.path().join("agents.yaml")).unwrap();
    assert!(
        agents_yaml.contains("module: agents.research"),
        "{agents_yaml}"
    );
    assert!(!agents_yaml.contains("card:"), "{agents_yaml}");
    let module = std::fs::read_to_string(dir.path().join("agents/research.py")).unwrap();
    assert!(module.contains("fast = FastAgent("), "{module}");
    assert!(
        module.contains("@fast.agent(\n    name=\"research\","),
        "{module}"
    );
    assert!(
        r.launch
            .env
            .contains(&("PALLAS_DEFECTS".into(), "leak_bearer".into()))
    );
    assert!(
        r.launch
            .env
            .iter()
            .any(|(k, v)| k == "PALLAS_LOG_FILE" && v.ends_with("pallas.log"))
    );
    let config = std::fs::read_to_string(dir.path().join("fastagent.config.yaml")).unwrap();
    assert!(
        config.contains("http://127.0.0.1:2/mcp") && config.contains("forward_inbound_auth"),
        "{config}"
    );
    let agents = std::fs::read_to_string(dir.path().join("agents.yaml")).unwrap();
    let port = r.agent_ports["research"];
    assert!(
        agents.contains(&port.to_string()) && agents.contains("127.0.0.1"),
        "{agents}"
    );
    assert!(
        module.contains("servers=[\"argos\", \"weather\"]"),
        "{module}"
    );
    assert!(
        redactor.secrets().iter().any(|s| s == "sk-kit-sample"),
        "the API key is a secret"
    );
    assert_eq!(
        r.agent_urls["research"],
        format!("http://127.0.0.1:{port}/mcp")
    );
}
