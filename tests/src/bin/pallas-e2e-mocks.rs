//! `pallas-e2e-mocks`: the `pallas-mocks` command, built with the end-to-end tests so the
//! do-nothing target (`tests/targets/do-nothing.yaml`) starts without a nested build.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = pallas_mocks::cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(pallas_mocks::cli::EXIT_RUNTIME);
        }
    };
    runtime.block_on(pallas_mocks::cli::run(cli))
}
