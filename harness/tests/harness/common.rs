//! Paths shared by the tests.

use std::path::PathBuf;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn scenarios_dir() -> PathBuf {
    workspace().join("scenarios")
}

/// Runs the `pallas-conformance` command line in process: its exit code, stdout and stderr.
pub async fn cli(args: &[&str]) -> (u8, String, String) {
    use clap::Parser;
    let cli = pallas_conformance::cli::Cli::parse_from(
        std::iter::once("pallas-conformance").chain(args.iter().copied()),
    );
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = pallas_conformance::cli::run_cli(cli, &mut out, &mut err).await;
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}
