//! `pallas-e2e`: every scenario file under `scenarios/` run against the reference Pallas through
//! its target profile, and the defect matrix that proves each check fails when its rule is broken.
//!
//! The integration test `tests/e2e.rs` turns each scenario file and each defect of
//! `tests/defects.yaml` into its own trial. This library holds what those trials call: finding the
//! workspace and its scenarios ([`suite`]), judging a scenario's result against the clean
//! reference's standard ([`suite::judge`]), and loading, validating and rendering the defect table
//! ([`defects`]).

pub mod clauses;
pub mod coverage;
pub mod defects;
pub use pallas_conformance::generated;
pub mod mutants;
pub mod suite;
