//! `pallas-conformance`: the conformance harness for Pallas-style agent bridges.
//!
//! A run reads scenario files ([`scenario`]), starts each scenario's mock ecosystem in-process
//! (`pallas-mocks`), deploys the implementation under test through a target profile
//! ([`target`]), drives it with a scripted Daedalus client on the raw wire ([`client`]) and turns
//! what was observed into verdicts of catalogued checks ([`catalog`], [`checks`]). The runner
//! ([`runner`]) never prints: it emits a documented stream of events (`harness/docs/events.md`),
//! and the reporters ([`report`]) render what `RunResult::from_events` rebuilds from it.
//! Beside the conformance run, [`load`] measures any bridge under load (throughput, latency
//! quantiles, errors, server CPU and RSS) through the same target profiles.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use pallas_conformance::{runner, suite, target};
//! let scenarios = suite::load_paths(&["scenarios".into()])?;
//! let profile = target::load("scenarios/targets/mock-agent.yaml".as_ref())?;
//! let run = runner::run(&scenarios, &profile, &runner::RunOptions::default()).await;
//! assert!(run.exit_code() == pallas_conformance::exit::SUCCESS);
//! # Ok(()) }
//! ```

pub mod args;
pub mod catalog;
pub mod checks;
pub mod cli;
pub mod client;
pub mod compact;
pub mod daedalus;
pub mod deploy;
pub mod diag;
pub mod escapees;
pub mod exit;
pub mod fast_start;
pub mod generated;
pub mod init;
pub mod load;
pub mod log_format;
pub mod matrix;
pub mod observation;
pub(crate) mod page;
pub mod ports;
pub mod process;
pub mod record;
pub mod redact;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
pub mod suite;
pub mod target;
pub mod verdicts;
pub mod vocab;
pub mod watch;
