//! `pallas-conformance daedalus`: the command line of the client certification
//! ([`crate::daedalus`]): arguments, the scenarios given or embedded, a line per scenario, the
//! summary and the report files.

use std::io::Write;
use std::path::PathBuf;

use crate::checks::{Grading, Verdict};
use crate::daedalus::{self, ClientProfile, ClientScenario};
use crate::diag::SpecError;

/// `daedalus` arguments.
#[derive(Debug, clap::Args)]
pub struct DaedalusArgs {
    /// The client profile: how to start the client (`certify/clients/*/profile.yaml`).
    #[arg(long, required_unless_present = "list_checks")]
    pub client: Option<PathBuf>,
    /// Client scenario files (default: the embedded ones).
    pub scenarios: Vec<PathBuf>,
    /// Only scenarios whose ID contains one of these.
    #[arg(long)]
    pub filter: Vec<String>,
    /// A broken SHOULD fails instead of warning.
    #[arg(long)]
    pub strict: bool,
    /// List the client checks and their rules, then exit.
    #[arg(long)]
    pub list_checks: bool,
    /// Report files to write.
    #[command(flatten)]
    pub files: super::ReportFiles,
}

/// Runs `daedalus`; the exit code.
pub async fn run_command(args: &DaedalusArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let book = match daedalus::book() {
        Ok(b) => b,
        Err(e) => {
            let _ = write!(err, "{}", e.render_plain());
            return crate::exit::HARNESS_ERROR;
        }
    };
    if args.list_checks {
        let _ = write!(out, "{}", daedalus::checks_table(book));
        return crate::exit::SUCCESS;
    }
    let Some(path) = &args.client else {
        let _ = writeln!(err, "error: give the client profile with --client");
        return crate::exit::INVALID_INPUT;
    };
    let profile = match ClientProfile::load(path) {
        Ok(p) => p,
        Err(e) => {
            let _ = write!(err, "{}", e.render_plain());
            return crate::exit::INVALID_INPUT;
        }
    };
    let scenarios = match load_scenarios(&args.scenarios) {
        Ok(s) => s,
        Err(e) => {
            let _ = write!(err, "{}", e.render_plain());
            return crate::exit::INVALID_INPUT;
        }
    };
    let chosen: Vec<ClientScenario> = scenarios
        .into_iter()
        .filter(|s| args.filter.is_empty() || args.filter.iter().any(|f| s.id.contains(f.as_str())))
        .collect();
    let grading = Grading {
        strict: args.strict,
        ..Grading::default()
    };
    let run = daedalus::run(&profile, &chosen, grading, |s| {
        let _ = writeln!(out, "{:<6} {}  {}", s.verdict.as_str(), s.id, s.title);
        for c in s.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
            let _ = writeln!(
                out,
                "       {:<6} {} {}",
                c.verdict.as_str(),
                c.id,
                c.reason
            );
        }
        if let Some(e) = &s.error {
            let _ = writeln!(out, "       error: {e}");
        }
    })
    .await;
    let _ = write!(out, "{}", crate::report::summary(&run));
    if let Err(code) = super::write_reports(&run, &args.files, err) {
        return code;
    }
    run.exit_code()
}

/// The scenario files given, or the embedded ones.
#[allow(clippy::result_large_err)]
fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<ClientScenario>, SpecError> {
    if paths.is_empty() {
        return daedalus::scenario::embedded();
    }
    paths.iter().map(|p| ClientScenario::load(p)).collect()
}
