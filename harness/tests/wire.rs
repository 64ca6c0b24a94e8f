//! Integration tests of the scripted Daedalus client and of process launching: against small
//! axum fixtures that emit exact byte sequences, and against `pallas-mocks` MCP servers.

#![allow(clippy::unwrap_used)] // Tests may unwrap: a panic is a failure with its reason.

#[path = "wire/fixture.rs"]
mod fixture;

#[path = "wire/cli.rs"]
mod cli;
#[path = "wire/client_fixture.rs"]
mod client_fixture;
#[path = "wire/client_mocks.rs"]
mod client_mocks;
#[path = "wire/process.rs"]
mod process;
#[path = "wire/registry_metrics.rs"]
mod registry_metrics;
