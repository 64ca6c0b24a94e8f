//! `pallas`: serve the agents of the project in the working directory.

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
