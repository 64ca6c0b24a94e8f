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
    // Interrupted (Ctrl-C) or terminated (a CI timeout, `kill`): stop the implementations this
    // run launched before leaving, so none is orphaned.
    tokio::spawn(async {
        use tokio::signal::unix::{SignalKind, signal};
        let (mut term, mut hup) = match (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(t), Ok(h)) => (t, h),
            _ => {
                if tokio::signal::ctrl_c().await.is_ok() {
                    pallas_conformance::process::kill_all_launched();
                    std::process::exit(130);
                }
                return;
            }
        };
        let code = tokio::select! {
            r = tokio::signal::ctrl_c() => if r.is_ok() { 130 } else { return },
            _ = term.recv() => 143,
            _ = hup.recv() => 129,
        };
        pallas_conformance::process::kill_all_launched();
        std::process::exit(code);
    });
    let code =
        pallas_conformance::cli::run_cli(cli, &mut std::io::stdout(), &mut std::io::stderr()).await;
    ExitCode::from(code)
}
