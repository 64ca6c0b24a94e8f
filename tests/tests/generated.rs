//! Generated deployments against the reference: every case must meet the clean-run standard, and
//! a defect that only other inputs reach is found, shrunk and written out as a scenario file that
//! reproduces it.
//!
//! `PALLAS_GENERATED_CASES` (default 24) and `PALLAS_GENERATED_SEED` (default 38) set the budget;
//! `PALLAS_GENERATED_CASES=500 cargo test -p pallas-e2e --test generated` is the long local mode.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pallas_conformance::runner::{self, RunOptions};
use pallas_e2e::generated::{self, Budget, Case, Found};
use pallas_e2e::suite::{self, AllowedWarnings};

const REFERENCE_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-reference");
/// Cases run at once.
const BATCH: usize = 6;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn budget() -> Budget {
    Budget {
        cases: usize::try_from(env_number("PALLAS_GENERATED_CASES", 24)).unwrap_or(24),
        seed: env_number("PALLAS_GENERATED_SEED", 38),
        shrink_runs: 48,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Runs scenario files' worth of cases against the reference with `defects`, one result each.
fn run_cases(
    rt: &tokio::runtime::Runtime,
    defects: &[&str],
    cases: &[Case],
) -> Vec<Result<(), String>> {
    let texts: Vec<(String, String)> = cases
        .iter()
        .map(|c| (format!("{}.yaml", c.id()), c.scenario_yaml()))
        .collect();
    run_texts(rt, defects, &texts)
}

fn run_texts(
    rt: &tokio::runtime::Runtime,
    defects: &[&str],
    texts: &[(String, String)],
) -> Vec<Result<(), String>> {
    let mut scenarios = Vec::new();
    let mut out: Vec<Option<Result<(), String>>> = Vec::new();
    for (file, text) in texts {
        match pallas_conformance::suite::parse_str(file, text) {
            Ok(s) => {
                scenarios.push(s);
                out.push(None);
            }
            Err(e) => out.push(Some(Err(format!(
                "{file} does not load:\n{}",
                e.render_plain()
            )))),
        }
    }
    let root = suite::workspace_root();
    let target = match suite::reference_target(&root, Path::new(REFERENCE_BIN), defects) {
        Ok(t) => t,
        Err(e) => return texts.iter().map(|_| Err(e.to_string())).collect(),
    };
    let opts = RunOptions {
        jobs: scenarios.len().max(1),
        step_timeout: Duration::from_secs(10),
        scenario_deadline: Duration::from_secs(60),
        ..RunOptions::default()
    };
    let bound = opts.scenario_deadline + Duration::from_secs(30);
    let run = |batch: &[pallas_conformance::scenario::Scenario]| {
        rt.block_on(async { tokio::time::timeout(bound, runner::run(batch, &target, &opts)).await })
            .map(|r| r.scenarios)
    };
    let Ok(mut results) = run(&scenarios) else {
        return texts
            .iter()
            .map(|_| Err("the harness did not return".into()))
            .collect();
    };
    // A port another process took between the harness's choice and the start says nothing about
    // the implementation: such a case is started again (at most twice), as the e2e trials do.
    for _ in 0..2 {
        let collided: Vec<usize> = (0..results.len())
            .filter(|&i| suite::port_collision(&results[i]))
            .collect();
        let again: Vec<_> = collided.iter().map(|&i| scenarios[i].clone()).collect();
        if again.is_empty() {
            break;
        }
        let Ok(rerun) = run(&again) else { break };
        for (&i, r) in collided.iter().zip(rerun) {
            results[i] = r;
        }
    }
    let mut results = results.into_iter();
    let allowed = AllowedWarnings::new();
    out.into_iter()
        .map(|o| match o {
            Some(r) => r,
            None => match results.next() {
                Some(r) => suite::judge(&r, &allowed).map(|_| ()),
                None => Err("no result".into()),
            },
        })
        .collect()
}

/// Writes a found case as a scenario file under `target/tmp/generated/` and returns its path.
fn write_out(found: &Found) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generated");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{}.yaml", found.case.id()));
    let _ = std::fs::write(&path, found.case.scenario_yaml());
    path
}

#[test]
fn generated_deployments_meet_the_clean_standard_on_the_reference() {
    let rt = runtime();
    let budget = budget();
    match generated::search(budget, BATCH, |cases| run_cases(&rt, &[], cases)) {
        Ok(n) => {
            assert_eq!(n, budget.cases, "every generated case ran");
            println!("{n} generated cases pass (seed {})", budget.seed);
        }
        Err(found) => {
            let path = write_out(&found);
            panic!(
                "a generated case fails (shrunk in {} runs); reproduce it with\n  \
                 pallas-conformance run {} --target scenarios/targets/reference.yaml --strict\n{}",
                found.shrink_runs,
                path.display(),
                found.problems
            );
        }
    }
}

#[test]
fn a_break_only_other_inputs_reach_is_found_shrunk_and_written_as_a_reproducing_scenario() {
    let rt = runtime();
    // The slug lower-cased: every suite scenario uses lower-case keys, so only a generated key
    // with a capital shows it.
    let defect = ["cm-slug-lowercased"];
    let budget = Budget {
        shrink_runs: 64,
        ..budget()
    };
    let found = match generated::search(budget, BATCH, |cases| run_cases(&rt, &defect, cases)) {
        Ok(n) => panic!("{n} generated cases all passed against {defect:?}"),
        Err(found) => found,
    };
    assert!(
        found.problems.contains("REG-003"),
        "the finding is REG-003's: {}",
        found.problems
    );
    assert_eq!(
        found.case.agents.len(),
        1,
        "shrunk to one agent: {:?}",
        found.case
    );
    assert!(
        found.case.agents[0]
            .key
            .chars()
            .any(|c| c.is_ascii_uppercase()),
        "the agent left has a capital: {:?}",
        found.case
    );
    // The file written out is an ordinary scenario: it loads, fails against the defect and
    // passes against the clean reference.
    let path = write_out(&found);
    let loaded = pallas_conformance::suite::load_file(&path);
    assert!(loaded.is_ok(), "{} loads", path.display());
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let name = path.display().to_string();
    let against = |d: &[&str]| run_texts(&rt, d, &[(name.clone(), text.clone())]).pop();
    assert!(
        matches!(against(&defect), Some(Err(_))),
        "the file reproduces the failure"
    );
    assert_eq!(
        against(&[]),
        Some(Ok(())),
        "the file passes on the clean reference"
    );
}

/// The reference profile with the defects binary in place of the reference's own build.
fn defects_profile(root: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root.join("scenarios/targets/reference.yaml"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            if l.starts_with("build:") {
                "build: []".to_owned()
            } else if l.starts_with("command:") {
                format!("command: [{REFERENCE_BIN:?}]")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join("reference-with-defects.yaml");
    let _ = std::fs::write(&path, text);
    path
}

/// `pallas-conformance run` in-process: its exit code and what it printed.
fn run_cli(args: &[String]) -> (u8, String) {
    use clap::Parser as _;
    let cli = match pallas_conformance::cli::Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => return (2, e.to_string()),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = runtime().block_on(pallas_conformance::cli::run_cli(cli, &mut out, &mut err));
    out.extend(err);
    (code, String::from_utf8_lossy(&out).into_owned())
}

/// Every contract mutant of `tests/mutants.yaml` through the certification path: `pallas-conformance
/// run --target <the reference> --strict` with the kit's defaults (the embedded suite and the
/// generated deployments it draws, their default count; the seed `PALLAS_GENERATED_SEED` plus the
/// row's index, so each CI run tries other seeds), the reference started with the mutant's
/// defect. A caught row must not pass; a survivor must pass. Each run selects the row's
/// scenarios, or the generated deployments for a row caught by them or surviving (`--filter`): a
/// scenario's verdicts do not depend on which others run, so what these runs catch a whole run
/// catches.
#[test]
fn contract_mutants_are_caught_through_pallas_conformance_run() {
    use pallas_e2e::mutants;
    let root = suite::workspace_root();
    let file = match mutants::load(&root) {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = defects_profile(&root, dir.path());
    let mut problems: Vec<String> = pallas_reference::defects::KNOWN
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| mutants::is_mutant_defect(name))
        .filter(|name| !file.mutants.iter().any(|m| m.defect == *name))
        .map(|name| {
            format!(
                "the reference's contract mutant `{name}` has no row in {}",
                mutants::FILE
            )
        })
        .collect();
    let base_seed = env_number("PALLAS_GENERATED_SEED", 38);
    let jobs: Vec<(usize, Vec<String>)> = file
        .mutants
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut args: Vec<String> = [
                "pallas-conformance",
                "run",
                "--target",
                &profile.display().to_string(),
                "--strict",
                "--forget-durations",
                "--generated-shrink",
                "0",
                "--target-env",
                &format!("{}={}", suite::DEFECTS_ENV, m.defect),
                "--generated-seed",
                &(base_seed + i as u64).to_string(),
            ]
            .map(str::to_owned)
            .to_vec();
            // A row caught by named scenarios runs those; the others run the generated
            // deployments (a survivor must pass them).
            if m.caught_by == Some(mutants::CaughtBy::Scenarios) {
                args.extend(["--generated".to_owned(), "0".to_owned()]);
                for s in &m.scenarios {
                    args.extend(["--filter".to_owned(), s.clone()]);
                }
            } else {
                args.extend(["--filter".to_owned(), "generated-*".to_owned()]);
            }
            (i, args)
        })
        .collect();
    let queue = std::sync::Mutex::new(jobs);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().map(|mut q| q.pop()).ok().flatten();
                    let Some((i, args)) = next else { break };
                    let outcome = run_cli(&args);
                    if let Ok(mut r) = results.lock() {
                        r.push((i, args, outcome));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _, _)| *i);
    let mut caught = 0;
    for (i, args, (code, output)) in &results {
        let m = &file.mutants[*i];
        let passed = *code == pallas_conformance::exit::SUCCESS;
        if *code == 2 {
            problems.push(format!("{}: the run refused its input:\n{output}", m.id));
        } else if m.caught_by.is_some() && passed {
            problems.push(format!(
                "{} ({}): `{}` passes",
                m.id,
                m.defect,
                args[1..].join(" ")
            ));
        } else if m.caught_by.is_none() && !passed {
            problems.push(format!(
                "{}: listed as a survivor, but `{}` does not pass (exit {code})",
                m.id,
                args[1..].join(" ")
            ));
        }
        if !passed {
            caught += 1;
        }
    }
    println!(
        "{} contract mutants through `pallas-conformance run`: {caught} caught, {} pass",
        file.mutants.len(),
        file.mutants.len() - caught
    );
    assert_eq!(results.len(), file.mutants.len(), "every mutant ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
