//! Integration tests of the harness core: scenario format, reports, runner.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness {
    mod capabilities;
    mod certification;
    pub mod common;
    mod events;
    mod fast_start;
    mod generated;
    mod matrix;
    mod profiles;
    mod reports;
    mod runner;
    mod scenario_format;
    mod selftest;
    mod signals;
    mod split;
}
