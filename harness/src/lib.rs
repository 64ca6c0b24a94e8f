//! `pallas-conformance`: the conformance harness for Pallas-style agent bridges.
//!
//! A run reads scenario files ([`scenario`]), starts each scenario's mock ecosystem in-process
//! (`pallas-mocks`), deploys the implementation under test through a target profile
//! ([`target`]), drives it with a scripted Daedalus client on the raw wire ([`client`]), turns
//! what was observed into verdicts of catalogued checks ([`catalog`], [`checks`]) and hands the
//! results ([`runner`]) to reporters ([`report`]). The runner never prints; reporters render.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use pallas_conformance::{runner, scenario, target};
//! let scenarios = scenario::load_paths(&["scenarios".into()])?;
//! let profile = target::load("scenarios/targets/mock-agent.yaml".as_ref())?;
//! let run = runner::run(&scenarios, &profile, &runner::RunOptions::default()).await;
//! assert!(run.exit_code() == pallas_conformance::exit::SUCCESS);
//! # Ok(()) }
//! ```

pub mod catalog;
pub mod checks;
pub mod cli;
pub mod client;
pub mod exit;
pub mod load;
pub mod process;
pub mod redact;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod target;
