//! `pallas-conformance daedalus` against the kit's own small Daedalus (`pallas-e2e-daedalus`)
//! and its deliberately wrong variants: the right one passes every client scenario, and each
//! wrong one fails on its own finding and no other (`--strict`: a broken SHOULD fails).

use std::collections::BTreeSet;
use std::path::Path;

use pallas_conformance::checks::{Grading, Verdict};
use pallas_conformance::daedalus::{self, ClientProfile};

const BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-daedalus");

fn profile(dir: &Path, wrong: &str) -> ClientProfile {
    let path = dir.join(format!("{wrong}.yaml"));
    let cache = dir.join("registry-cache.json");
    let text = format!(
        "name: e2e-daedalus-{wrong}\ncommand: [{BIN}, --wrong, {wrong}]\nmessage_args: [--message, \"{{message}}\"]\nagent_args: [--agent, \"{{agent}}\"]\nbearer_args: [--bearer, \"{{bearer}}\"]\nclaims: [close_session]\ntimeout: 30s\nenv: {{DAEDALUS_REGISTRY_CACHE: \"{}\"}}\n",
        cache.display()
    );
    std::fs::write(&path, text).expect("profile written");
    ClientProfile::load(&path).unwrap_or_else(|e| panic!("{}", e.render_plain()))
}

/// `(scenario, check)` of every entry that failed, and every scenario that errored.
fn failures(wrong: &str) -> BTreeSet<(String, String)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = profile(dir.path(), wrong);
    let scenarios =
        daedalus::scenario::embedded().unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let grading = Grading {
        strict: true,
        ..Grading::default()
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let run = rt.block_on(daedalus::run(&p, &scenarios, grading, |_| {}));
    let mut out = BTreeSet::new();
    for s in &run.scenarios {
        assert!(
            s.error.is_none(),
            "{wrong}: {} errored: {:?}",
            s.id,
            s.error
        );
        for c in &s.checks {
            assert_ne!(
                c.verdict,
                Verdict::Error,
                "{wrong}: {} {}: {}",
                s.id,
                c.id,
                c.reason
            );
            if c.verdict == Verdict::Fail {
                assert!(
                    !c.evidence.is_empty(),
                    "{wrong}: {} {} fails without evidence",
                    s.id,
                    c.id
                );
                out.insert((s.id.clone(), c.id.clone()));
            }
            if c.verdict == Verdict::Pass {
                assert!(
                    !c.observed.is_empty(),
                    "{wrong}: {} {} passes on nothing observed",
                    s.id,
                    c.id
                );
            }
        }
    }
    out
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(s, c)| ((*s).to_owned(), (*c).to_owned()))
        .collect()
}

#[test]
fn the_right_client_passes_every_client_scenario() {
    assert_eq!(failures("none"), set(&[]));
}

#[test]
fn a_client_without_progress_tokens_fails_dae_001() {
    assert_eq!(
        failures("no-token"),
        set(&[
            ("send-message", "DAE-001"),
            ("health-degraded-allows-chat", "DAE-001")
        ])
    );
}

#[test]
fn a_client_reusing_a_token_on_calls_active_at_once_fails_dae_003() {
    assert_eq!(failures("reuse-token"), set(&[("two-messages", "DAE-003")]));
}

#[test]
fn a_client_sending_fractional_tokens_fails_dae_002() {
    assert_eq!(failures("float-token"), set(&[("send-message", "DAE-002")]));
}

#[test]
fn a_client_guessing_the_agent_url_fails_dae_005() {
    assert_eq!(failures("guess-url"), set(&[("send-message", "DAE-005")]));
}

#[test]
fn a_client_ignoring_an_error_health_fails_dae_007() {
    assert_eq!(
        failures("ignore-health"),
        set(&[
            ("health-error-blocks-chat", "DAE-007"),
            ("health-check-fails-blocks-chat", "DAE-007")
        ])
    );
}

#[test]
fn a_client_refusing_a_degraded_agent_fails_dae_014() {
    assert_eq!(
        failures("block-degraded"),
        set(&[("health-degraded-allows-chat", "DAE-014")])
    );
}

#[test]
fn a_client_keeping_a_stale_registry_fails_dae_015() {
    assert_eq!(
        failures("stale-registry"),
        set(&[("registry-removes-agent", "DAE-015")])
    );
}

#[test]
fn a_client_passing_health_arguments_fails_dae_006() {
    assert_eq!(
        failures("health-args"),
        set(&[
            ("send-message", "DAE-006"),
            ("health-error-blocks-chat", "DAE-006")
        ])
    );
}

#[test]
fn a_client_keeping_an_expired_session_fails_dae_012() {
    assert_eq!(
        failures("no-reinit"),
        set(&[("session-expired", "DAE-012")])
    );
}

#[test]
fn a_client_leaving_sessions_open_fails_dae_013() {
    assert_eq!(failures("no-delete"), set(&[("close-session", "DAE-013")]));
}

#[test]
fn a_client_with_a_wrong_accept_header_fails_dae_008() {
    assert_eq!(failures("bad-accept"), set(&[("send-message", "DAE-008")]));
}

#[test]
fn a_client_without_the_users_bearer_fails_dae_016() {
    assert_eq!(failures("no-bearer"), set(&[("user-bearer", "DAE-016")]));
}

#[test]
fn a_client_sending_the_bearer_on_its_first_message_only_fails_dae_016() {
    assert_eq!(failures("bearer-once"), set(&[("user-bearer", "DAE-016")]));
}

#[test]
fn the_users_bearer_is_judged_by_its_fingerprint_and_never_shown() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = profile(dir.path(), "bearer-once");
    let scenarios =
        daedalus::scenario::embedded().unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let bearer: Vec<_> = scenarios
        .into_iter()
        .filter(|s| s.id == "user-bearer")
        .collect();
    let secret = bearer[0]
        .task
        .bearer
        .clone()
        .expect("the scenario's bearer");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let run = rt.block_on(daedalus::run(&p, &bearer, Grading::default(), |_| {}));
    let json = serde_json::to_string(&run).expect("run as JSON");
    assert!(!json.contains(&secret), "the bearer leaked: {json}");
    let check = &run.scenarios[0].checks[0];
    assert_eq!(check.verdict, Verdict::Warn, "{}", check.reason);
    let shown = format!("{:?}", check.evidence);
    assert!(shown.contains("[redacted:"), "{shown}");
    assert!(shown.contains("no `Authorization` header"), "{shown}");
}

#[test]
fn a_profile_that_maps_no_bearer_skips_the_bearer_scenario_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("no-bearer-args.yaml");
    std::fs::write(
        &path,
        format!("name: plain\ncommand: [{BIN}]\nmessage_args: [--message, \"{{message}}\"]\ntimeout: 30s\n"),
    )
    .expect("profile written");
    let p = ClientProfile::load(&path).unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let scenarios: Vec<_> = daedalus::scenario::embedded()
        .unwrap_or_else(|e| panic!("{}", e.render_plain()))
        .into_iter()
        .filter(|s| s.id == "user-bearer")
        .collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let run = rt.block_on(daedalus::run(&p, &scenarios, Grading::default(), |_| {}));
    let s = &run.scenarios[0];
    assert_eq!(s.verdict, Verdict::Skip);
    assert!(
        s.skipped
            .as_deref()
            .unwrap_or_default()
            .contains("bearer_args"),
        "{:?}",
        s.skipped
    );
}

#[test]
fn a_client_that_never_reads_health_is_not_judged_on_it_and_gets_no_pass_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = profile(dir.path(), "no-health");
    let scenarios =
        daedalus::scenario::embedded().unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let run = rt.block_on(daedalus::run(&p, &scenarios, Grading::default(), |_| {}));
    for id in ["health-error-blocks-chat", "health-check-fails-blocks-chat"] {
        let s = run.scenarios.iter().find(|s| s.id == id).expect("scenario");
        assert_eq!(s.verdict, Verdict::Inconclusive, "{id}");
        let dae_007 = s
            .checks
            .iter()
            .find(|c| c.id == "DAE-007")
            .expect("DAE-007");
        assert_eq!(
            dae_007.verdict,
            Verdict::Inconclusive,
            "{id}: {}",
            dae_007.reason
        );
    }
}

#[test]
fn a_client_that_never_connects_or_hangs_gets_an_error_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let scenarios =
        daedalus::scenario::embedded().unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let one = &scenarios[..1];
    for (name, command, want) in [
        (
            "exits",
            "[/bin/sh, -c, 'exit 0']",
            "never reached the mock Pallas",
        ),
        (
            "hangs",
            "[/bin/sh, -c, 'sleep 30']",
            "did not exit within 1 s",
        ),
        ("missing", "[/nonexistent/daedalus]", "did not start"),
    ] {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!("name: {name}\ncommand: {command}\nmessage_args: [--m, \"{{message}}\"]\ntimeout: 1s\n"),
        )
        .expect("profile written");
        let p = ClientProfile::load(&path).unwrap_or_else(|e| panic!("{}", e.render_plain()));
        let run = rt.block_on(daedalus::run(&p, one, Grading::default(), |_| {}));
        let s = &run.scenarios[0];
        assert_eq!(s.verdict, Verdict::Error, "{name}");
        let why = s.error.as_deref().unwrap_or_default();
        assert!(why.contains(want), "{name}: {why}");
        assert_eq!(
            run.exit_code(),
            pallas_conformance::exit::HARNESS_ERROR,
            "{name}"
        );
    }
}
