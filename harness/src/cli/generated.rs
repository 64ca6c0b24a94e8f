//! `run`'s generated deployments: drawn before the run beside its scenarios, and the first one
//! that fails shrunk after it, written out as a scenario file, and named in the reports.

use std::io::Write;
use std::path::PathBuf;

use super::RunArgs;
use crate::generated::{self, Drawn, GeneratedInfo};
use crate::runner::{self, RunOptions, RunResult};
use crate::scenario::Scenario;
use crate::target::Target;
use crate::vocab::Capability;

/// Why `run`'s generated deployments cannot be drawn as asked.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// Shares of a partitioned run would each draw other cases.
    #[error(
        "`--partition` draws the generated deployments in every share: give every share the same `--generated-seed` (or `--generated 0`)"
    )]
    PartitionWithoutSeed,
    /// A drawn case is not a valid scenario (a defect of the kit).
    #[error("generated case {id} is not a valid scenario (a defect of the kit):\n{message}")]
    Invalid {
        /// The case's scenario id.
        id: String,
        /// What the loader said.
        message: String,
    },
}

/// The generated deployments of one run.
pub struct Plan {
    /// What the reports say of them.
    pub info: GeneratedInfo,
    drawn: Vec<Drawn>,
}

impl Plan {
    /// The cases as scenarios, to run beside the others.
    pub fn scenarios(&self) -> Result<Vec<Scenario>, PlanError> {
        self.drawn.iter().map(|d| scenario_of(&d.case)).collect()
    }
}

fn scenario_of(case: &generated::Case) -> Result<Scenario, PlanError> {
    let id = case.id();
    crate::suite::parse_str(&format!("generated/{id}.yaml"), &case.scenario_yaml()).map_err(|e| {
        PlanError::Invalid {
            id,
            message: e.render_plain(),
        }
    })
}

/// What `args` asks of generated deployments for a target claiming `claims`: none (`--generated
/// 0`, or files named one by one without `--generated`), or a plan with its seed.
pub fn plan(args: &RunArgs, claims: &[Capability]) -> Result<Option<Plan>, PlanError> {
    let suite_run = args.paths.is_empty() || args.paths.iter().any(|p| p.is_dir());
    let count = args.generated.unwrap_or(if suite_run {
        generated::DEFAULT_CASES
    } else {
        0
    });
    if count == 0 {
        return Ok(None);
    }
    if let Some(why) = generated::not_applicable(claims) {
        return Ok(Some(Plan {
            info: GeneratedInfo {
                seed: args.generated_seed.unwrap_or_default(),
                cases: 0,
                not_run: Some(why),
            },
            drawn: Vec::new(),
        }));
    }
    if args.partition.is_some() && args.generated_seed.is_none() {
        return Err(PlanError::PartitionWithoutSeed);
    }
    let seed = args.generated_seed.unwrap_or_else(generated::fresh_seed);
    let drawn = generated::draw(seed, count, claims);
    Ok(Some(Plan {
        info: GeneratedInfo {
            seed,
            cases: drawn.len(),
            not_run: None,
        },
        drawn,
    }))
}

/// Shrinks the first generated case of `run` that failed to the smallest case that still
/// fails, writes it under `args.generated_out` and names the file in that scenario's
/// `reproduce`; says so on `out`.
pub async fn shrink_first_failure(
    run: &mut RunResult,
    plan: Plan,
    target: &Target,
    opts: &RunOptions,
    args: &RunArgs,
    out: &mut dyn Write,
) {
    let Some((index, drawn)) = plan.drawn.into_iter().find_map(|d| {
        let id = d.case.id();
        run.scenarios
            .iter()
            .position(|s| s.id == id && s.verdict == crate::checks::Verdict::Fail)
            .map(|i| (i, d))
    }) else {
        return;
    };
    let limit = args.generated_shrink;
    if limit > 0 {
        let _ = writeln!(
            out,
            "generated deployment {} failed: shrinking it (at most {limit} runs)",
            run.scenarios[index].id
        );
    }
    let alone = RunOptions {
        filters: Vec::new(),
        partition: None,
        baseline: None,
        durations: None,
        durations_from: None,
        generated: None,
        ..opts.clone()
    };
    let (case, runs) = generated::shrink(drawn, limit, async |candidate| {
        let Ok(scenario) = scenario_of(candidate) else {
            return false;
        };
        let result = runner::run(std::slice::from_ref(&scenario), target, &alone).await;
        result
            .scenarios
            .first()
            .is_some_and(|s| s.verdict == crate::checks::Verdict::Fail)
    })
    .await;
    match write_case(&args.generated_out, &case) {
        Ok(path) => {
            let again = format!(
                "pallas-conformance run {} --target {}{}",
                path.display(),
                args.target.display(),
                if args.strict { " --strict" } else { "" }
            );
            let _ = writeln!(
                out,
                "the smallest failing form (after {runs} runs) is {}; run it again with\n  {again}",
                path.display()
            );
            let s = &mut run.scenarios[index];
            s.reproduce = format!("{again}  (shrunk from: {})", s.reproduce);
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "error: cannot write the shrunk case under {}: {e}",
                args.generated_out.display()
            );
        }
    }
}

fn write_case(dir: &std::path::Path, case: &generated::Case) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{}.yaml", case.id()));
    std::fs::write(&path, case.scenario_yaml())?;
    Ok(path)
}
