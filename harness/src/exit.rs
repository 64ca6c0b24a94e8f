//! Named process exit codes of `pallas-conformance`.

/// Every check passed (warnings, skips and baselined failures included).
pub const SUCCESS: u8 = 0;
/// At least one check failed (or a baselined failure now passes: a stale baseline).
pub const CHECK_FAILED: u8 = 1;
/// Invalid input: a scenario, target profile, baseline or command line could not be used.
pub const INVALID_INPUT: u8 = 2;
/// Setup or harness error: a step could not run, the implementation did not start, a mock failed.
pub const HARNESS_ERROR: u8 = 3;
