//! `pallas-conformance`: parse the command line, run, map to an exit code.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env(
            "PALLAS_CONFORMANCE_LOG",
        ))
        .with_writer(std::io::stderr)
        .init();
    let cli = pallas_conformance::cli::Cli::parse();
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            pallas_conformance::process::kill_all_launched();
            std::process::exit(130);
        }
    });
    let code =
        pallas_conformance::cli::run_cli(cli, &mut std::io::stdout(), &mut std::io::stderr()).await;
    ExitCode::from(code)
}
