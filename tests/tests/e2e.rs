//! Every scenario file against the reference Pallas, one trial each, in parallel; every defect of
//! `tests/defects.yaml` against the reference built with it; and the table's own consistency.
//!
//! `cargo test -p pallas-e2e` runs them all. Pass libtest arguments after `--`
//! (`-- scenario::health`, `--test-threads 4`, `--list`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "e2e/generic_wording.rs"]
mod generic_wording;
mod judge;

use libtest_mimic::{Arguments, Failed, Trial};
use pallas_conformance::checks::Verdict;
use pallas_conformance::runner::{self, RunOptions, ScenarioResult};
use pallas_conformance::scenario::Scenario;
use pallas_e2e::defects::{self, DefectTable};
use pallas_e2e::suite::{self, AllowedWarnings, Tally};
use pallas_e2e::{clauses, coverage};

/// The reference binary with the `defects` feature, built by cargo beside this test.
const REFERENCE_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-reference");
const MOCKS_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-mocks");

/// Scenarios running at once when `--test-threads` is not given: scenarios mostly wait on
/// sockets and process start-up, so more than the core count keeps the machine busy.
const DEFAULT_JOBS: usize = 6;

#[derive(Default)]
struct Totals {
    scenarios: usize,
    checks: Tally,
    defects: usize,
    defect_scenario_runs: usize,
    /// Trial name → seconds, for the slowest-trials line.
    durations: Vec<(String, f64)>,
}

fn record(shared: &Shared, name: &str, started: Instant) {
    if let Ok(mut t) = shared.totals.lock() {
        t.durations
            .push((name.to_owned(), started.elapsed().as_secs_f64()));
    }
}

struct Shared {
    root: PathBuf,
    runtime: tokio::runtime::Runtime,
    table: Result<DefectTable, String>,
    scenarios: Vec<Scenario>,
    /// The clauses of seeds 000/001 (`tests/clauses.yaml`), assessed, and the problems found.
    clauses: Result<(Vec<clauses::Assessed>, Vec<String>), String>,
    totals: Mutex<Totals>,
}

fn assess_clauses(
    root: &Path,
    table: &Result<DefectTable, String>,
    scenarios: &[Scenario],
) -> Result<(Vec<clauses::Assessed>, Vec<String>), String> {
    let table = table.as_ref().map_err(Clone::clone)?;
    let book = pallas_conformance::rules::book().map_err(|e| e.to_string())?;
    let file = clauses::load(root)?;
    Ok(clauses::assess(root, &file, book, scenarios, table))
}

fn options() -> RunOptions {
    RunOptions {
        jobs: 1,
        step_timeout: Duration::from_secs(10),
        scenario_deadline: Duration::from_secs(60),
        ..RunOptions::default()
    }
}

fn run_scenarios(
    shared: &Shared,
    scenarios: &[Scenario],
    defects: &[&str],
) -> Result<Vec<ScenarioResult>, Failed> {
    let target = suite::reference_target(&shared.root, Path::new(REFERENCE_BIN), defects)
        .map_err(|e| Failed::from(e.to_string()))?;
    let mut opts = options();
    opts.jobs = scenarios.len().max(1);
    // Against the reference as it is, every pass is self-tested: one that survives every
    // perturbation of what it observed is an error naming its check.
    opts.grading.self_test = defects.is_empty();
    let run = run_bounded(shared, scenarios, &target, &opts)?;
    if let Some(e) = run.error {
        return Err(format!("run error: {e}").into());
    }
    let mut results = run.scenarios;
    // The harness picks free ports before the implementation binds them; under parallel load
    // another process can take one in between. Such a start-up collision says nothing about the
    // implementation, so that scenario is started again (at most twice).
    for _ in 0..2 {
        let collided: Vec<usize> = results
            .iter()
            .enumerate()
            .filter(|(_, r)| suite::port_collision(r))
            .map(|(i, _)| i)
            .collect();
        if collided.is_empty() {
            break;
        }
        let again: Vec<Scenario> = collided.iter().map(|&i| scenarios[i].clone()).collect();
        let rerun = run_bounded(shared, &again, &target, &opts)?;
        for (&i, r) in collided.iter().zip(rerun.scenarios) {
            results[i] = r;
        }
    }
    Ok(results)
}

/// Runs scenarios through the harness, bounded by the scenario deadline plus a margin: the
/// harness enforces its own deadline, and this one keeps a stuck run from hanging the suite.
fn run_bounded(
    shared: &Shared,
    scenarios: &[Scenario],
    target: &pallas_conformance::target::Target,
    opts: &RunOptions,
) -> Result<runner::RunResult, Failed> {
    let bound = opts.scenario_deadline + Duration::from_secs(30);
    shared
        .runtime
        .block_on(async { tokio::time::timeout(bound, runner::run(scenarios, target, opts)).await })
        .map_err(|_| {
            Failed::from(format!(
                "the harness did not return within {} s for {}",
                bound.as_secs(),
                scenarios
                    .iter()
                    .map(|s| s.spec.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

fn allowed_warnings(shared: &Shared) -> AllowedWarnings {
    shared
        .table
        .as_ref()
        .map(|t| t.allowed_warnings.clone())
        .unwrap_or_default()
}

fn scenario_trial(shared: &Arc<Shared>, file: PathBuf) -> Trial {
    let name = format!("scenario::{}", suite::trial_name(&shared.root, &file));
    let shared = shared.clone();
    Trial::test(name.clone(), move || {
        let started = Instant::now();
        let scenario = suite::load_scenario(&file).map_err(|e| Failed::from(e.to_string()))?;
        let results = run_scenarios(&shared, std::slice::from_ref(&scenario), &[])?;
        record(&shared, &name, started);
        let [result] = results.as_slice() else {
            return Err(format!("expected one result, got {}", results.len()).into());
        };
        let tally = suite::judge(result, &allowed_warnings(&shared))?;
        if let Ok(mut t) = shared.totals.lock() {
            t.scenarios += 1;
            t.checks.add(tally);
        }
        Ok(())
    })
}

fn defect_trial(shared: &Arc<Shared>, name: String) -> Trial {
    let shared = shared.clone();
    Trial::test(format!("defect::{name}"), move || {
        let started = Instant::now();
        let table = shared.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
        let defect = table
            .get(&name)
            .ok_or_else(|| Failed::from(format!("no defect `{name}` in the table")))?;
        let selected: Vec<Scenario> = defect
            .select(&shared.scenarios)
            .into_iter()
            .cloned()
            .collect();
        if selected.is_empty() {
            return Err(format!("defect `{name}` selects no scenario").into());
        }
        let results = run_scenarios(&shared, &selected, &[name.as_str()])?;
        record(&shared, &format!("defect::{name}"), started);
        defect.judge(&results)?;
        // Each covered clause naming this defect must be broken at exactly its assertion.
        let (assessed, _) = shared
            .clauses
            .as_ref()
            .map_err(|e| Failed::from(e.clone()))?;
        clauses::verify(&results, &clauses::expectations(assessed, &name))?;
        if let Ok(mut t) = shared.totals.lock() {
            t.defects += 1;
            t.defect_scenario_runs += selected.len();
        }
        Ok(())
    })
}

fn table_trials(shared: &Arc<Shared>) -> Vec<Trial> {
    let s = shared.clone();
    let consistent = Trial::test(
        "table::defects_yaml_lists_every_defect_and_explains_every_uncaught_check",
        move || {
            let table = s.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
            // Contract mutants (`cm-…`) are held by tests/mutants.yaml and its own test; the
            // table lists one only for a check no other defect breaks.
            let (mutants, known): (Vec<&str>, Vec<&str>) = pallas_reference::defects::KNOWN
                .iter()
                .map(|(name, _)| *name)
                .partition(|name| pallas_e2e::mutants::is_mutant_defect(name));
            let problems = table.problems(&s.scenarios, &known, &mutants);
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n").into())
            }
        },
    );
    let s = shared.clone();
    let readme = Trial::test(
        "table::readme_shows_the_defect_table_of_defects_yaml",
        move || {
            let table = s.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
            // The same generated table in the e2e README and in the reference's DEFECTS.md.
            for file in ["tests/README.md", "reference-impl/DEFECTS.md"] {
                let path = s.root.join(file);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
                let want =
                    defects::splice_readme(&text, &defects::markdown(table)).ok_or_else(|| {
                        Failed::from(format!(
                            "{} lacks the markers {} … {}",
                            path.display(),
                            defects::README_START,
                            defects::README_END
                        ))
                    })?;
                if want == text {
                    continue;
                }
                if std::env::var_os("PALLAS_E2E_BLESS").is_some() {
                    std::fs::write(&path, want)
                        .map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
                    continue;
                }
                return Err(format!(
                    "{} is out of date with {}; rerun with PALLAS_E2E_BLESS=1 to rewrite its table",
                    path.display(),
                    defects::TABLE_FILE
                )
                .into());
            }
            Ok(())
        },
    );
    let s = shared.clone();
    let loaded = Trial::test(
        "table::every_scenario_file_loads_with_a_unique_id",
        move || {
            let files = suite::scenario_files(&s.root);
            pallas_conformance::suite::load_paths(&[s.root.join("scenarios")])
                .map_err(|e| Failed::from(e.render_plain()))?;
            if files.len() != s.scenarios.len() {
                return Err(format!("{} files, {} loaded", files.len(), s.scenarios.len()).into());
            }
            Ok(())
        },
    );
    let s = shared.clone();
    let coverage = Trial::test("coverage::docs_coverage_md_is_current", move || {
        let table = s.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
        let book = pallas_conformance::rules::book().map_err(Failed::from)?;
        let untestable = coverage::load_untestable(&s.root).map_err(Failed::from)?;
        let problems = coverage::untestable_problems(&untestable);
        if !problems.is_empty() {
            return Err(problems.join("\n").into());
        }
        let mut all = s.scenarios.clone();
        for pack in suite::PACK_FOLDERS {
            for f in suite::pack_scenario_files(&s.root, pack) {
                all.push(suite::load_scenario(&f).map_err(|e| Failed::from(e.to_string()))?);
            }
        }
        let defects = coverage::defect_refs(&s.root, table, &all).map_err(Failed::from)?;
        let (assessed, clause_problems) =
            s.clauses.as_ref().map_err(|e| Failed::from(e.clone()))?;
        if !clause_problems.is_empty() {
            return Err(clause_problems.join("\n").into());
        }
        let mutants =
            pallas_e2e::mutants::load(&s.root).map_err(|e| Failed::from(e.to_string()))?;
        let want = format!(
            "{}{}",
            coverage::markdown(book, &all, &defects, &untestable, assessed),
            pallas_e2e::mutants::coverage_section(&s.root, &mutants)
        );
        let path = s.root.join(coverage::COVERAGE_FILE);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if want == text {
            return Ok(());
        }
        if std::env::var_os("PALLAS_E2E_BLESS").is_some() {
            std::fs::write(&path, want)
                .map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
            return Ok(());
        }
        Err(format!(
            "{} is out of date; rerun with PALLAS_E2E_BLESS=1 to rewrite it",
            path.display()
        )
        .into())
    });
    vec![consistent, readme, loaded, coverage]
}

/// Every scenario against a bridge that does nothing but claims everything: no check whose
/// premise is absent may pass, and the run reports its inconclusive verdicts apart.
fn do_nothing_trial(shared: &Arc<Shared>) -> Trial {
    let shared = shared.clone();
    Trial::test(
        "do_nothing::no_check_passes_without_its_premise",
        move || {
            let started = Instant::now();
            let target = suite::do_nothing_target(&shared.root, Path::new(MOCKS_BIN))
                .map_err(|e| Failed::from(e.to_string()))?;
            let opts = RunOptions {
                jobs: 4,
                step_timeout: Duration::from_secs(3),
                scenario_deadline: Duration::from_secs(60),
                ..RunOptions::default()
            };
            let run = shared
                .runtime
                .block_on(runner::run(&shared.scenarios, &target, &opts));
            record(&shared, "do_nothing", started);
            let vacuous: Vec<String> = run
                .scenarios
                .iter()
                .flat_map(|s| s.checks.iter().map(move |c| (s, c)))
                .filter(|(_, c)| {
                    c.verdict == Verdict::Pass && suite::premise_absent_on_do_nothing(&c.id)
                })
                .map(|(s, c)| format!("{} passed in {} ({})", c.id, s.id, c.title))
                .collect();
            if !vacuous.is_empty() {
                return Err(format!(
                    "vacuous passes against a do-nothing bridge:\n{}",
                    vacuous.join("\n")
                )
                .into());
            }
            let counts = run.counts();
            if counts.inconclusive == 0 {
                return Err("the do-nothing run reported no inconclusive verdict".into());
            }
            let summary = pallas_conformance::report::summary(&run);
            if !summary.contains(&format!("{} inconclusive", counts.inconclusive)) {
                return Err(format!(
                    "the summary does not count inconclusive verdicts apart:\n{summary}"
                )
                .into());
            }
            Ok(())
        },
    )
}

/// A stalled step: its checks are errors (a timeout is not a failure), the harness cancels the
/// request, and the next step's checks pass.
fn timeout_trial(shared: &Arc<Shared>) -> Trial {
    let shared = shared.clone();
    Trial::test(
        "timeout::a_stalled_step_is_an_error_and_the_next_step_is_unaffected",
        move || {
            let scenario = suite::load_scenario(&shared.root.join("tests/scenarios/stall.yaml"))
                .map_err(|e| Failed::from(e.to_string()))?;
            let results = run_scenarios(&shared, std::slice::from_ref(&scenario), &[])?;
            let [result] = results.as_slice() else {
                return Err(format!("expected one result, got {}", results.len()).into());
            };
            let text =
                pallas_conformance::report::summary(&pallas_conformance::runner::RunResult {
                    side: pallas_conformance::runner::Side::Server,
                    target: "reference".into(),
                    kit_version: pallas_conformance::runner::KIT_VERSION.into(),
                    suite: None,
                    claims: Vec::new(),
                    scenarios: results.clone(),
                    stale: Vec::new(),
                    duration_ms: 0.0,
                    error: None,
                });
            let verdict_of = |title_part: &str, step: &str| {
                result
                    .checks
                    .iter()
                    .find(|c| c.title.contains(title_part))
                    .map(|c| c.verdict)
                    .ok_or_else(|| Failed::from(format!("no check about {step}:\n{text}")))
            };
            let stalled = verdict_of("the stalled call", "stalled")?;
            let after = verdict_of("the next call", "after")?;
            if stalled != Verdict::Error {
                return Err(format!(
                    "the stalled step's assertion is {stalled:?}, not error:\n{text}"
                )
                .into());
            }
            if after != Verdict::Pass {
                return Err(
                    format!("the next step's assertion is {after:?}, not pass:\n{text}").into(),
                );
            }
            if result.checks.iter().any(|c| c.verdict == Verdict::Fail) {
                return Err(format!("a timeout produced a failure:\n{text}").into());
            }
            let msg002: Vec<Verdict> = result
                .checks
                .iter()
                .filter(|c| c.id == "MSG-002")
                .map(|c| c.verdict)
                .collect();
            if msg002 != [Verdict::Error, Verdict::Pass] {
                return Err(format!("MSG-002 on [stalled, after] is {msg002:?}:\n{text}").into());
            }
            Ok(())
        },
    )
}

fn main() -> std::process::ExitCode {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(
            std::env::var("PALLAS_E2E_JOBS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_JOBS),
        );
    }
    let root = suite::workspace_root();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("e2e: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let table = defects::load(&root.join(defects::TABLE_FILE)).map_err(|e| e.to_string());
    let files = suite::scenario_files(&root);
    let scenarios: Vec<Scenario> = files
        .iter()
        .filter_map(|f| suite::load_scenario(f).ok())
        .collect();
    let defect_names: Vec<String> = table
        .as_ref()
        .map(|t| t.defects.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default();
    let clauses = assess_clauses(&root, &table, &scenarios);
    let shared = Arc::new(Shared {
        root,
        runtime,
        table,
        scenarios,
        clauses,
        totals: Mutex::new(Totals::default()),
    });

    // Defect trials first: several wait out a deadline on purpose (a removed agent that never
    // leaves, probes run one after another), so starting them early packs the run better.
    let mut trials = judge::trials();
    trials.extend(table_trials(&shared));
    trials.push(do_nothing_trial(&shared));
    trials.push(timeout_trial(&shared));
    trials.extend(generic_wording::trials(&shared));
    trials.extend(defect_names.into_iter().map(|n| defect_trial(&shared, n)));
    trials.extend(files.into_iter().map(|f| scenario_trial(&shared, f)));

    let started = Instant::now();
    let conclusion = libtest_mimic::run(&args, trials);
    let wall = started.elapsed();
    if let Ok(t) = shared.totals.lock()
        && (t.scenarios > 0 || t.defects > 0)
    {
        println!(
            "e2e: {} scenario files passed with {} checks ({} pass, {} allowed warnings, {} automatic skips); \
             {} defects caught over {} scenario runs; wall time {:.1} s with {} jobs",
            t.scenarios,
            t.checks.total(),
            t.checks.pass,
            t.checks.warn,
            t.checks.skip,
            t.defects,
            t.defect_scenario_runs,
            wall.as_secs_f64(),
            args.test_threads.unwrap_or(DEFAULT_JOBS),
        );
        let mut slowest = t.durations.clone();
        slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        slowest.truncate(5);
        println!(
            "e2e: slowest trials: {}",
            slowest
                .iter()
                .map(|(n, d)| format!("{n} {d:.1} s"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let summary = serde_json::json!({
            "scenarios": t.scenarios,
            "checks": t.checks.total(),
            "pass": t.checks.pass,
            "allowed_warnings": t.checks.warn,
            "automatic_skips": t.checks.skip,
            "defects": t.defects,
            "defect_scenario_runs": t.defect_scenario_runs,
            "wall_ms": wall.as_millis(),
            "jobs": args.test_threads.unwrap_or(DEFAULT_JOBS),
            "failed_trials": conclusion.num_failed,
            "slowest": slowest,
        });
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-summary.json");
        if std::fs::write(&path, format!("{summary:#}\n")).is_ok() {
            println!("e2e: summary written to {}", path.display());
        }
    }
    conclusion.exit_code()
}
