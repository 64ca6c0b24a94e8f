//! Integration tests of the runtime side of the reference Pallas: configuration files and their
//! errors, the registry (validated against the bundled registry schema), startup order, the CLI,
//! live reload, metrics and logs, against `pallas-mocks`.

// Test helpers panic on failure by design.
#![allow(clippy::unwrap_used)]

#[path = "runtime/support.rs"]
mod support;

#[path = "runtime/config.rs"]
mod config;

#[path = "runtime/registry.rs"]
mod registry;

#[path = "runtime/startup.rs"]
mod startup;

#[path = "runtime/reload.rs"]
mod reload;

#[path = "runtime/metrics.rs"]
mod metrics;

#[path = "runtime/cli.rs"]
mod cli;

#[path = "runtime/example.rs"]
mod example;

#[path = "runtime/tls.rs"]
mod tls;

#[path = "runtime/exposition.rs"]
mod exposition;
