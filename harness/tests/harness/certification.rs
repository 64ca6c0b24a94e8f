//! Certifications that stay true: every committed report in docs/certification/ was made by this
//! kit (its version, its embedded suite's digest, a clean commit), and its full-verdict baseline
//! (certify/*/verdicts*.yaml, which `.ci/run` re-makes every verdict against) records exactly the
//! report's verdicts. Changing one verdict is one readable difference.

use std::path::PathBuf;

use pallas_conformance::verdicts::{VerdictBaseline, render};
use serde_json::Value;

/// `(report, its baseline)` for every committed certification.
fn certifications() -> Vec<(PathBuf, Value, PathBuf)> {
    let root = super::common::workspace();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("docs/certification")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if report["format"] != "pallas-conformance/report/v1" {
            continue;
        }
        let target = report["target"].as_str().unwrap().to_owned();
        let baseline = match target.strip_prefix("fast-agent-") {
            Some(version) => root.join(format!("certify/fast-agent/verdicts-{version}.yaml")),
            None => root.join(format!("certify/{target}/verdicts.yaml")),
        };
        out.push((path, report, baseline));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_committed_certification_was_made_by_this_kit() {
    let certs = certifications();
    assert!(certs.len() >= 6, "{} certifications", certs.len());
    let mut stale = Vec::new();
    for (path, report, _) in &certs {
        let digest = report["suite"]["digest"].as_str().unwrap_or_default();
        if digest != pallas_conformance::suite::DIGEST {
            stale.push(format!(
                "{}: suite sha256:{digest}, the kit's is sha256:{}",
                path.display(),
                pallas_conformance::suite::DIGEST
            ));
        }
        if report["kit_version"] != pallas_conformance::runner::KIT_VERSION {
            stale.push(format!("{}: kit {}", path.display(), report["kit_version"]));
        }
        let commit = report["kit_commit"].as_str().unwrap_or("unknown");
        if commit == "unknown" || commit.ends_with("-dirty") {
            stale.push(format!(
                "{}: made at commit `{commit}` (not a clean commit of the kit)",
                path.display()
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "certifications made by another kit; re-certify with `.ci/certify-NAME --update`:\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_baseline_records_exactly_its_reports_verdicts() {
    for (path, report, baseline) in certifications() {
        let want = VerdictBaseline::load(&baseline)
            .unwrap_or_else(|e| panic!("{}: {e}", baseline.display()));
        let seen = VerdictBaseline::from_report(&report).unwrap();
        assert_eq!(want.target, seen.target, "{}", baseline.display());
        assert_eq!(
            want.suite_digest,
            pallas_conformance::suite::DIGEST,
            "{} was written for another suite",
            baseline.display()
        );
        let diffs = want.diff(&seen);
        assert!(
            diffs.is_empty(),
            "{} and {} disagree (recorded → in the report):\n{}",
            baseline.display(),
            path.display(),
            render(&diffs)
        );
    }
}

#[test]
fn one_changed_verdict_of_a_certification_is_one_readable_difference() {
    let (_, mut report, baseline) = certifications()
        .into_iter()
        .find(|(_, r, _)| r["target"] == "agno")
        .unwrap();
    let want = VerdictBaseline::load(&baseline).unwrap();
    let (scenario, check, title, verdict) = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| {
            let c = s["checks"]
                .as_array()?
                .iter()
                .find(|c| c["verdict"] == "pass")?;
            Some((
                s["id"].as_str()?.to_owned(),
                c["id"].as_str()?.to_owned(),
                c["title"].as_str()?.to_owned(),
                "pass",
            ))
        })
        .unwrap();
    let c = report["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["id"] == scenario.as_str())
        .and_then(|s| s["checks"].as_array_mut())
        .and_then(|cs| cs.iter_mut().find(|c| c["verdict"] == verdict))
        .unwrap();
    c["verdict"] = "warn".into();
    let diffs = want.diff(&VerdictBaseline::from_report(&report).unwrap());
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(
        render(&diffs),
        format!("{scenario}\n  {check} {title}\n      pass → warn\n")
    );
}

/// Every committed report carries the levels the compliance matrix awards it, and every pass in
/// it shows what it observed.
#[test]
fn every_report_carries_the_matrix_level_and_every_pass_its_witness() {
    let certs = certifications();
    let paths: Vec<PathBuf> = certs.iter().map(|(p, ..)| p.clone()).collect();
    let matrix = pallas_conformance::matrix::build(&paths).unwrap();
    let mut wrong = Vec::new();
    for (path, report, _) in &certs {
        let target = report["target"].as_str().unwrap_or_default();
        let Some(row) = matrix.implementations.iter().find(|i| i.name == target) else {
            wrong.push(format!("{}: not in the matrix", path.display()));
            continue;
        };
        for (scale, score) in [("generic", &row.score), ("pallas", &row.pallas)] {
            let shown = report["level"][scale]["level"].as_str().unwrap_or("(none)");
            if shown != score.level.as_str() {
                wrong.push(format!(
                    "{}: {scale} level {shown}, the matrix says {}",
                    path.display(),
                    score.level.as_str()
                ));
            }
        }
        for s in report["scenarios"].as_array().into_iter().flatten() {
            for c in s["checks"].as_array().into_iter().flatten() {
                if c["verdict"] == "pass" && c["observed"].as_array().is_none_or(|w| w.is_empty()) {
                    wrong.push(format!(
                        "{}: {} in {} passed without a witness",
                        path.display(),
                        c["id"],
                        s["id"]
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
