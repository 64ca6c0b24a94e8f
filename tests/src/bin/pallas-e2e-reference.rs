//! `pallas-e2e-reference`: the reference `pallas` binary with the `defects` feature compiled in,
//! so the end-to-end tests can launch it (`PALLAS_DEFECTS=name,…`) without a nested build.

use std::process::ExitCode;

use clap::Parser;
use pallas_reference::runtime::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pallas: cannot start the async runtime: {e}");
            return ExitCode::from(cli::EXIT_STARTUP);
        }
    };
    runtime.block_on(cli::run(cli))
}
