//! `pallas-mocks`: start or validate a mock ecosystem file.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = pallas_mocks::cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
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
