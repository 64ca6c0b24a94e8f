//! `run --self-test`: a deliberately vacuous assertion is named as an error, a real one beside it
//! stays a pass, and without the flag both pass.

use std::path::Path;

use super::common::{cli, scenarios_dir};

/// The checks of the one scenario of a JSON report: (title, verdict, reason).
fn checks(report: &Path) -> Vec<(String, String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    v["scenarios"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "ASSERT")
        .map(|c| {
            (
                c["title"].as_str().unwrap_or_default().to_owned(),
                c["verdict"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_self_test_names_a_pass_that_cannot_fail_and_keeps_one_that_can() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/selftest/vacuous.yaml")
        .display()
        .to_string();
    let profile = scenarios_dir()
        .join("targets/mock-agent.yaml")
        .display()
        .to_string();
    let plain = dir.path().join("plain.json").display().to_string();
    let (code, out, err) = cli(&[
        "run",
        &scenario,
        "--target",
        &profile,
        "--report-json",
        &plain,
    ])
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let seen = checks(Path::new(&plain));
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|(_, v, _)| v == "pass"), "{seen:?}");

    let tested = dir.path().join("tested.json").display().to_string();
    let (code, out, err) = cli(&[
        "run",
        &scenario,
        "--target",
        &profile,
        "--self-test",
        "--report-json",
        &tested,
    ])
    .await;
    assert_eq!(code, 3, "an error verdict exits 3\n{out}\n{err}");
    let seen = checks(Path::new(&tested));
    let vacuous = seen
        .iter()
        .find(|(t, ..)| t.contains("cannot fail"))
        .unwrap();
    assert_eq!(vacuous.1, "error", "{seen:?}");
    assert!(
        vacuous
            .2
            .starts_with("self-test: this pass survived every perturbation"),
        "{}",
        vacuous.2
    );
    let real = seen
        .iter()
        .find(|(t, ..)| t.contains("has a text"))
        .unwrap();
    assert_eq!(real.1, "pass", "{seen:?}");
}
