//! `pallas-e2e-generate`: writes generated deployments as scenario files, to run against any
//! Pallas target (`pallas-conformance run DIR --target …`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use pallas_e2e::generated::{self, Case};
use proptest::strategy::{Strategy as _, ValueTree as _};

/// Write N generated deployments as scenario files.
#[derive(Parser)]
struct Cli {
    /// How many cases.
    #[arg(long, default_value_t = 24)]
    cases: usize,
    /// The RNG seed (the same seed writes the same cases as the `generated` test).
    #[arg(long, default_value_t = 38)]
    seed: u64,
    /// The directory to write them into (created).
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = std::fs::create_dir_all(&cli.out) {
        eprintln!("error: cannot create {}: {e}", cli.out.display());
        return ExitCode::FAILURE;
    }
    let mut runner = generated::runner(cli.seed);
    let strategy = Case::strategy();
    for _ in 0..cli.cases {
        let case = match strategy.new_tree(&mut runner) {
            Ok(t) => t.current(),
            Err(e) => {
                eprintln!("error: no case generated: {e}");
                return ExitCode::FAILURE;
            }
        };
        let path = cli.out.join(format!("{}.yaml", case.id()));
        if let Err(e) = std::fs::write(&path, case.scenario_yaml()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{} cases written to {}", cli.cases, cli.out.display());
    ExitCode::SUCCESS
}
