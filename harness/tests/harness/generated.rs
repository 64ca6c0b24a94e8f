//! `run`'s generated deployments: drawn only for a Pallas target and said so in the report,
//! refused in a partitioned run without one seed for every share.

use super::common::{cli, scenarios_dir};
use pallas_conformance::exit;

/// A profile that claims what generated deployments need, with a command never started (the
/// run is refused before anything starts).
fn pallas_profile(dir: &std::path::Path) -> String {
    let path = dir.join("pallas.yaml");
    std::fs::write(
        &path,
        "name: a-pallas\ncommand: [\"/nonexistent/pallas\"]\nagent_url: \"http://127.0.0.1:{{agent.port}}/mcp\"\nregistry_url: \"http://127.0.0.1:{{ports.registry}}\"\ncapabilities: [registry, health, progress, metrics, history, pallas_config]\n",
    )
    .unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn a_partitioned_run_of_a_pallas_needs_one_seed_for_every_share() {
    let dir = tempfile::tempdir().unwrap();
    let profile = pallas_profile(dir.path());
    let (code, _, err) = cli(&["run", "--target", &profile, "--partition", "1/2"]).await;
    assert_eq!(code, exit::INVALID_INPUT, "{err}");
    assert!(err.contains("--generated-seed"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_that_is_no_pallas_draws_none_and_its_report_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let samples = scenarios_dir().join("samples").display().to_string();
    let profile = scenarios_dir()
        .join("targets/mock-agent.yaml")
        .display()
        .to_string();
    let json = dir.path().join("r.json").display().to_string();
    let (code, out, err) = cli(&[
        "run",
        &samples,
        "--target",
        &profile,
        "--filter",
        "sample-health*",
        "--report-json",
        &json,
    ])
    .await;
    assert!(
        code == exit::SUCCESS || code == exit::CHECK_FAILED,
        "{out}\n{err}"
    );
    assert!(out.contains("no generated deployments"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let generated = &report["suite"]["generated"];
    assert_eq!(generated["cases"], 0, "{generated}");
    assert!(
        generated["not_run"]
            .as_str()
            .is_some_and(|w| w.contains("pallas_config")),
        "{generated}"
    );
}

/// `scenarios generated` writes the cases a run draws from a seed: valid scenario files, the
/// same ids on every call, fitted to the profile's claims; a target that is no Pallas gets the
/// reason.
#[tokio::test]
async fn the_cases_of_a_seed_are_written_as_scenario_files() {
    let dir = tempfile::tempdir().unwrap();
    let profile = pallas_profile(dir.path());
    let out_dir = dir.path().join("cases");
    let out_arg = out_dir.display().to_string();
    let args = [
        "scenarios",
        "generated",
        &out_arg,
        "--seed",
        "7",
        "--count",
        "5",
        "--target",
        &profile,
    ];
    let (code, first, err) = cli(&args).await;
    assert_eq!(code, exit::SUCCESS, "{err}");
    assert_eq!(first.lines().count(), 5, "{first}");
    let (_, again, _) = cli(&args).await;
    assert_eq!(first, again, "one seed, the same cases");
    let (code, out, err) = cli(&["validate", &out_arg]).await;
    assert_eq!(code, exit::SUCCESS, "{out}\n{err}");
    for f in std::fs::read_dir(&out_dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        let body: String = text.lines().filter(|l| !l.starts_with('#')).collect();
        // The profile claims no bearer, images or single-agent mode.
        assert!(
            !body.contains("bearer:") && !body.contains("images:"),
            "{text}"
        );
    }
    let not_pallas = scenarios_dir().join("targets/mock-agent.yaml");
    let (code, _, err) = cli(&[
        "scenarios",
        "generated",
        &out_arg,
        "--seed",
        "7",
        "--target",
        &not_pallas.display().to_string(),
    ])
    .await;
    assert_eq!(code, exit::INVALID_INPUT, "{err}");
    assert!(err.contains("pallas_config"), "{err}");
}
