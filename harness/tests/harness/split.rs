//! A certification split over a CI matrix: `run --partition 1/2` and `2/2` against the
//! `mock-agent` target together run every sample scenario exactly once, and `report --from`
//! on their two event streams gives the report of the unpartitioned run.

use std::collections::BTreeSet;
use std::path::Path;

use clap::Parser;
use pallas_conformance::cli::Cli;
use pallas_conformance::exit;
use pallas_conformance::runner::{self, RunEvent};

use super::common::{cli, scenarios_dir};

/// Runs the samples (a share of them with `partition`), saving the stream and the reports under
/// `dir` with the given stem.
async fn run_samples(dir: &Path, stem: &str, partition: Option<&str>) -> u8 {
    let samples = scenarios_dir().join("samples").display().to_string();
    let profile = scenarios_dir()
        .join("targets/mock-agent.yaml")
        .display()
        .to_string();
    let file = |ext: &str| dir.join(format!("{stem}.{ext}")).display().to_string();
    let (events, json, md) = (file("jsonl"), file("json"), file("md"));
    let mut args = vec![
        "run",
        &samples,
        "--target",
        &profile,
        "--jobs",
        "2",
        "--events",
        &events,
        "--report-json",
        &json,
        "--markdown",
        &md,
    ];
    if let Some(p) = partition {
        args.extend(["--partition", p]);
    }
    let (code, out, err) = cli(&args).await;
    assert!(
        code == exit::SUCCESS || code == exit::CHECK_FAILED,
        "{out}\n{err}"
    );
    code
}

fn stream(path: &Path) -> Vec<RunEvent> {
    let text = std::fs::read_to_string(path).unwrap();
    runner::parse_jsonl(&path.display().to_string(), &text).unwrap()
}

fn ids(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ScenarioFinished(f) => Some(f.id.clone()),
            _ => None,
        })
        .collect()
}

/// The JSON report with its timings left out: every `*_ms` field, the transcript excerpts (they
/// quote elapsed times and `date` headers), and the order of steps (concurrent calls of one
/// scenario finish in any order).
fn without_timings(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut m: serde_json::Map<String, Value> = m
                .into_iter()
                // What a pass observed (session ids, ports, durations) differs run to run,
                // as transcripts do.
                .filter(|(k, _)| !k.ends_with("_ms") && k != "transcript" && k != "observed")
                .map(|(k, v)| (k, without_timings(v)))
                .collect();
            if let Some(Value::Array(steps)) = m.get_mut("steps") {
                steps.sort_by_key(Value::to_string);
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(without_timings).collect()),
        other => other,
    }
}

/// A Markdown report without the witnesses of its passes (observations that differ run to
/// run), each pass's line kept.
fn without_observed(md: &str) -> String {
    md.lines()
        .filter(|l| !l.starts_with("  - "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn json(path: &Path) -> serde_json::Value {
    without_timings(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shares_cover_every_scenario_once_and_merge_into_the_unpartitioned_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole_code = run_samples(d, "whole", None).await;
    let code1 = run_samples(d, "share1", Some("1/2")).await;
    let code2 = run_samples(d, "share2", Some("2/2")).await;

    // Every scenario exactly once: no overlap, nothing missing.
    let whole = stream(&d.join("whole.jsonl"));
    let (one, two) = (
        stream(&d.join("share1.jsonl")),
        stream(&d.join("share2.jsonl")),
    );
    let all: BTreeSet<String> = ids(&whole).into_iter().collect();
    let (ids1, ids2): (BTreeSet<String>, BTreeSet<String>) = (
        ids(&one).into_iter().collect(),
        ids(&two).into_iter().collect(),
    );
    assert!(all.len() >= 4, "{all:?}");
    assert!(!ids1.is_empty() && !ids2.is_empty(), "{ids1:?} {ids2:?}");
    assert!(ids1.is_disjoint(&ids2), "{ids1:?} {ids2:?}");
    assert_eq!(&ids1 | &ids2, all);
    // Each share says which it is.
    for (events, k) in [(&one, 1), (&two, 2)] {
        assert!(
            matches!(&events[0], RunEvent::RunStarted(s) if s.partition.is_some_and(|p| p.k == k && p.n == 2 && p.of == all.len())),
            "{:?}",
            events[0]
        );
    }
    assert!(matches!(&whole[0], RunEvent::RunStarted(s) if s.partition.is_none()));

    // The merged report is the unpartitioned one.
    let (s1, s2) = (
        d.join("share1.jsonl").display().to_string(),
        d.join("share2.jsonl").display().to_string(),
    );
    let (mjson, mmd) = (
        d.join("merged.json").display().to_string(),
        d.join("merged.md").display().to_string(),
    );
    let (code, out, err) = cli(&[
        "report",
        "--from",
        &s2,
        "--from",
        &s1,
        "--report-json",
        &mjson,
        "--markdown",
        &mmd,
    ])
    .await;
    assert_eq!(code, whole_code, "{out}\n{err}");
    assert_eq!(code, code1.max(code2), "{out}\n{err}");
    assert!(err.is_empty(), "{err}");
    assert!(
        out.starts_with(&format!(
            "running {} scenario(s) (pallas-conformance ",
            all.len()
        )),
        "{out}"
    );
    assert_eq!(json(Path::new(&mjson)), json(&d.join("whole.json")));
    assert_eq!(
        without_observed(&std::fs::read_to_string(&mmd).unwrap()),
        without_observed(&std::fs::read_to_string(d.join("whole.md")).unwrap())
    );

    // One share alone is reported, with the missing share named; a share twice is refused.
    let (code, out, err) = cli(&["report", "--from", &s1]).await;
    assert_eq!(code, code1, "{out}\n{err}");
    assert!(
        err.contains("warning: share(s) 2/2 of the split are missing"),
        "{err}"
    );
    let (code, _, err) = cli(&["report", "--from", &s1, &s1]).await;
    assert_eq!(code, exit::INVALID_INPUT, "{err}");
    assert!(err.contains("is in both"), "{err}");
}

#[test]
fn a_partition_that_is_not_a_share_is_a_clear_command_line_error() {
    for (bad, says) in [
        ("0/2", "between 1 and 2"),
        ("3/2", "between 1 and 2"),
        ("a/b", "is not a partition K/N"),
    ] {
        let e = Cli::try_parse_from([
            "pallas-conformance",
            "run",
            "--target",
            "t.yaml",
            "--partition",
            bad,
        ])
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(says), "{bad}: {text}");
        assert_eq!(e.exit_code(), i32::from(exit::INVALID_INPUT), "{bad}");
    }
}
