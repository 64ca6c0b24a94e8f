//! The contract packs of seeds 002–004 against their mocks: every pack passes against its clean
//! mock, and every defect variant of a mock is caught by the checks `tests/pack-defects.yaml`
//! names for it. `PALLAS_E2E_BLESS=1` rewrites that table from a run of every defect against
//! every scenario of its pack (review the diff before committing it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use pallas_conformance::checks::Verdict;
use pallas_conformance::runner::{self, RunOptions, ScenarioResult};
use pallas_conformance::scenario::{Level, Scenario};
use pallas_conformance::target::{self, Target};
use pallas_e2e::suite;
use pallas_mocks::packs::degenerate::{DEGENERATE_ENV, MODES};
use pallas_mocks::packs::{DEFECTS_ENV, PackKind};
use serde::{Deserialize, Serialize};

const MOCKS_BIN: &str = env!("CARGO_BIN_EXE_pallas-e2e-mocks");
const TABLE_FILE: &str = "tests/pack-defects.yaml";
const KINDS: [PackKind; 3] = [
    PackKind::Mcpctl,
    PackKind::Percolate,
    PackKind::AgenticServer,
];

/// One defect of a pack mock: the scenarios that show it and the checks that must report it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    pack: String,
    name: String,
    scenarios: Vec<String>,
    catches: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    defects: Vec<Entry>,
    /// Pack checks no defect makes fail, with the reason.
    #[serde(default)]
    uncaught: BTreeMap<String, String>,
}

struct Shared {
    root: PathBuf,
    runtime: tokio::runtime::Runtime,
    scenarios: BTreeMap<&'static str, Vec<Scenario>>,
    table: Result<Table, String>,
    /// Pack scenario files that do not load.
    load_errors: Vec<String>,
}

fn folder(kind: PackKind) -> &'static str {
    kind.as_str()
}

fn pack_target(root: &Path, kind: PackKind, defect: Option<&str>) -> Result<Target, Failed> {
    let path = root.join(format!("scenarios/targets/{}-mock.yaml", kind.as_str()));
    let mut target = target::load(&path).map_err(|e| Failed::from(e.render_plain()))?;
    target.spec.build.clear();
    match target.spec.command.first_mut() {
        Some(program) => *program = MOCKS_BIN.to_owned(),
        None => target.spec.command.push(MOCKS_BIN.to_owned()),
    }
    target.env_overrides.insert(
        DEFECTS_ENV.to_owned(),
        defect.unwrap_or_default().to_owned(),
    );
    Ok(target)
}

fn run(
    shared: &Shared,
    kind: PackKind,
    scenarios: &[Scenario],
    defect: Option<&str>,
) -> Result<Vec<ScenarioResult>, Failed> {
    run_as(shared, kind, scenarios, defect, None)
}

fn run_as(
    shared: &Shared,
    kind: PackKind,
    scenarios: &[Scenario],
    defect: Option<&str>,
    degenerate: Option<&str>,
) -> Result<Vec<ScenarioResult>, Failed> {
    let mut target = pack_target(&shared.root, kind, defect)?;
    target.env_overrides.insert(
        DEGENERATE_ENV.to_owned(),
        degenerate.unwrap_or_default().to_owned(),
    );
    let opts = RunOptions {
        jobs: scenarios.len().clamp(1, 8),
        step_timeout: Duration::from_secs(10),
        scenario_deadline: Duration::from_secs(60),
        ..RunOptions::default()
    };
    let bound = opts.scenario_deadline + Duration::from_secs(30);
    let run = shared
        .runtime
        .block_on(async {
            tokio::time::timeout(bound, runner::run(scenarios, &target, &opts)).await
        })
        .map_err(|_| Failed::from("the harness did not return in time"))?;
    if let Some(e) = run.error {
        return Err(format!("run error: {e}").into());
    }
    Ok(run.scenarios)
}

/// The checks a run reports broken: a MUST that fails, a SHOULD that warns or fails.
fn broken(results: &[ScenarioResult]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in results {
        for c in &r.checks {
            let is_broken = matches!(c.verdict, Verdict::Fail)
                || (c.verdict == Verdict::Warn && c.level != Level::Must);
            if is_broken && c.id != "ASSERT" {
                out.entry(c.id.clone()).or_default().insert(r.id.clone());
            }
        }
    }
    out
}

fn clean_trial(shared: &Arc<Shared>, kind: PackKind) -> Trial {
    let shared = shared.clone();
    Trial::test(
        format!("pack::{}::clean_mock_passes", kind.as_str()),
        move || {
            let scenarios = &shared.scenarios[folder(kind)];
            if scenarios.len() < 12 {
                return Err(format!(
                    "{} has {} scenarios (≥ 12 wanted)",
                    kind.as_str(),
                    scenarios.len()
                )
                .into());
            }
            let results = run(&shared, kind, scenarios, None)?;
            let mut problems = Vec::new();
            for r in &results {
                if let Err(e) = suite::judge(r, &BTreeMap::new()) {
                    problems.push(e);
                }
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n").into())
            }
        },
    )
}

fn defect_trial(shared: &Arc<Shared>, kind: PackKind, name: &'static str) -> Trial {
    let shared = shared.clone();
    Trial::test(
        format!("pack-defect::{}::{name}", kind.as_str()),
        move || {
            let table = shared.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
            let entry = table
                .defects
                .iter()
                .find(|e| e.pack == kind.as_str() && e.name == name)
                .ok_or_else(|| Failed::from(format!("`{name}` is not in {TABLE_FILE}")))?;
            let selected: Vec<Scenario> = shared.scenarios[folder(kind)]
                .iter()
                .filter(|s| entry.scenarios.contains(&s.spec.id))
                .cloned()
                .collect();
            if selected.is_empty() || entry.catches.is_empty() {
                return Err(format!("`{name}` selects no scenario or names no check").into());
            }
            let results = run(&shared, kind, &selected, Some(name))?;
            let seen = broken(&results);
            let missed: Vec<&String> = entry
                .catches
                .iter()
                .filter(|c| !seen.contains_key(*c))
                .collect();
            if missed.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "defect `{name}` was not reported by {missed:?} (reported: {:?})",
                    seen.keys().collect::<Vec<_>>()
                )
                .into())
            }
        },
    )
}

/// A degenerate stand-in (pallas-mocks `PALLAS_MOCK_DEGENERATE`: do-nothing, echo, reject-all)
/// against every scenario of the pack: no pack check may pass, since none of them has its
/// premise (a valid call that works, an LLM call, an agent that exists) on such a server.
fn degenerate_trial(shared: &Arc<Shared>, kind: PackKind, mode: &'static str) -> Trial {
    let shared = shared.clone();
    Trial::test(
        format!("pack-degenerate::{}::{mode}", kind.as_str()),
        move || {
            let scenarios = &shared.scenarios[folder(kind)];
            let results = run_as(&shared, kind, scenarios, None, Some(mode))?;
            if results.len() != scenarios.len() {
                return Err(
                    format!("{} of {} scenarios ran", results.len(), scenarios.len()).into(),
                );
            }
            // A pack check passes in a scenario when every entry attributed to it passes.
            let mut verdicts: BTreeMap<(String, String), bool> = BTreeMap::new();
            for r in &results {
                for c in &r.checks {
                    if matches!(c.id.split('-').next(), Some("MCPCTL" | "PERC" | "MAS")) {
                        let all = verdicts.entry((r.id.clone(), c.id.clone())).or_insert(true);
                        *all &= c.verdict == Verdict::Pass;
                    }
                }
            }
            let passed: Vec<String> = verdicts
                .into_iter()
                .filter(|(_, pass)| *pass)
                .map(|((s, c), _)| format!("{s}: {c}"))
                .collect();
            if passed.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "passed without their premise ({mode}):\n{}",
                    passed.join("\n")
                )
                .into())
            }
        },
    )
}

fn table_trial(shared: &Arc<Shared>) -> Trial {
    let shared = shared.clone();
    Trial::test(
        "pack-table::every_defect_listed_and_every_check_caught",
        move || {
            let table = shared.table.as_ref().map_err(|e| Failed::from(e.clone()))?;
            let mut problems = shared.load_errors.clone();
            for kind in KINDS {
                for (name, _) in kind.defects() {
                    if !table
                        .defects
                        .iter()
                        .any(|e| e.pack == kind.as_str() && e.name == *name)
                    {
                        problems.push(format!(
                            "{} defect `{name}` is missing from {TABLE_FILE}",
                            kind.as_str()
                        ));
                    }
                }
            }
            let caught: BTreeSet<&str> = table
                .defects
                .iter()
                .flat_map(|e| e.catches.iter().map(String::as_str))
                .collect();
            for def in pallas_conformance::catalog::all() {
                if !matches!(def.family(), "MCPCTL" | "PERC" | "MAS") {
                    continue;
                }
                let listed = table.uncaught.contains_key(&def.id);
                if !caught.contains(def.id.as_str()) && !listed {
                    problems.push(format!("{} is caught by no defect of its mock", def.id));
                }
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n").into())
            }
        },
    )
}

/// Runs every defect against every scenario of its pack and writes the table.
fn bless(shared: &Shared) -> Result<(), Failed> {
    let old = shared.table.clone().unwrap_or_default();
    let mut table = Table {
        defects: Vec::new(),
        uncaught: old.uncaught,
    };
    for kind in KINDS {
        let scenarios = &shared.scenarios[folder(kind)];
        for (name, _) in kind.defects() {
            let results = run(shared, kind, scenarios, Some(name))?;
            let seen = broken(&results);
            let scen: BTreeSet<String> = seen.values().flatten().cloned().collect();
            table.defects.push(Entry {
                pack: kind.as_str().to_owned(),
                name: (*name).to_owned(),
                scenarios: scen.into_iter().collect(),
                catches: seen.keys().cloned().collect(),
            });
        }
    }
    let header = "# The defect matrix of the contract packs: each defect of a pack mock (pallas-mocks,\n# PALLAS_MOCK_DEFECTS=name), the scenarios that show it and the checks that report it.\n# Written by `PALLAS_E2E_BLESS=1 cargo test -p pallas-e2e --test packs`; review the diff.\n";
    let text = serde_saphyr::to_string(&table).map_err(|e| Failed::from(e.to_string()))?;
    std::fs::write(shared.root.join(TABLE_FILE), format!("{header}{text}"))
        .map_err(|e| Failed::from(e.to_string()))
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let root = suite::workspace_root();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("packs: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut scenarios = BTreeMap::new();
    let mut load_errors = Vec::new();
    for kind in KINDS {
        let mut loaded: Vec<Scenario> = Vec::new();
        for f in suite::pack_scenario_files(&root, folder(kind)) {
            match suite::load_scenario(&f) {
                Ok(s) => loaded.push(s),
                Err(e) => load_errors.push(format!("{}: {e}", f.display())),
            }
        }
        scenarios.insert(folder(kind), loaded);
    }
    let table = std::fs::read_to_string(root.join(TABLE_FILE))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_saphyr::from_str::<Table>(&t).map_err(|e| e.to_string()));
    let shared = Arc::new(Shared {
        root,
        runtime,
        scenarios,
        table,
        load_errors,
    });
    if std::env::var_os("PALLAS_E2E_BLESS").is_some() {
        return match bless(&shared) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("packs: bless failed: {e:?}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let mut trials = vec![table_trial(&shared)];
    for kind in KINDS {
        trials.push(clean_trial(&shared, kind));
        for (name, _) in kind.defects() {
            trials.push(defect_trial(&shared, kind, name));
        }
        for (mode, _) in MODES {
            trials.push(degenerate_trial(&shared, kind, mode));
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
