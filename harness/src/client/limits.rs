//! How much the harness reads from an implementation: every HTTP body, SSE stream and event, the
//! registry document, `/metrics`, log files and process output is read up to a limit. Exceeding
//! one ends the exchange with [`super::ClientError::TooLarge`] ("answer exceeded N MiB"): a harness
//! limit, not the implementation's failure unless a rule says so.
//!
//! Defaults sit well above anything a conforming bridge sends (a 26 MB tool result is read whole)
//! and well below what would take the harness's memory; a target profile's `limits:` and the
//! command line's `--max-*-mib` options change them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One mebibyte.
pub const MIB: u64 = 1024 * 1024;

/// Read limits, in MiB. A field left out of a profile keeps its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ReadLimits {
    /// One HTTP answer: a JSON body, or everything one SSE stream carries (default 64).
    pub answer_mib: u64,
    /// One SSE event, its `data:` lines together (default 32).
    pub sse_event_mib: u64,
    /// The registry document (default 8).
    pub registry_mib: u64,
    /// One `/metrics` scrape (default 8).
    pub metrics_mib: u64,
    /// The tail of each log file and of the process's stdout and stderr read for checks and
    /// reports (default 4).
    pub logs_mib: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            answer_mib: 64,
            sse_event_mib: 32,
            registry_mib: 8,
            metrics_mib: 8,
            logs_mib: 4,
        }
    }
}

/// Limits given on the command line; each one set wins over the profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitOverrides {
    /// `--max-answer-mib`.
    pub answer_mib: Option<u64>,
    /// `--max-sse-event-mib`.
    pub sse_event_mib: Option<u64>,
    /// `--max-registry-mib`.
    pub registry_mib: Option<u64>,
    /// `--max-metrics-mib`.
    pub metrics_mib: Option<u64>,
    /// `--max-logs-mib`.
    pub logs_mib: Option<u64>,
}

impl ReadLimits {
    /// These limits with every override that is set applied.
    pub fn with(self, o: &LimitOverrides) -> Self {
        Self {
            answer_mib: o.answer_mib.unwrap_or(self.answer_mib),
            sse_event_mib: o.sse_event_mib.unwrap_or(self.sse_event_mib),
            registry_mib: o.registry_mib.unwrap_or(self.registry_mib),
            metrics_mib: o.metrics_mib.unwrap_or(self.metrics_mib),
            logs_mib: o.logs_mib.unwrap_or(self.logs_mib),
        }
    }

    /// The answer limit in bytes.
    pub fn answer_bytes(&self) -> u64 {
        self.answer_mib.saturating_mul(MIB)
    }

    /// The SSE event limit in bytes.
    pub fn sse_event_bytes(&self) -> u64 {
        self.sse_event_mib.saturating_mul(MIB)
    }

    /// The registry limit in bytes.
    pub fn registry_bytes(&self) -> u64 {
        self.registry_mib.saturating_mul(MIB)
    }

    /// The metrics limit in bytes.
    pub fn metrics_bytes(&self) -> u64 {
        self.metrics_mib.saturating_mul(MIB)
    }

    /// The log tail limit in bytes.
    pub fn logs_bytes(&self) -> usize {
        usize::try_from(self.logs_mib.saturating_mul(MIB)).unwrap_or(usize::MAX)
    }
}

/// Whether a step's error is a harness read limit ("answer exceeded N MiB…"): not the
/// implementation's failure unless a rule says so.
pub fn is_limit_error(error: &str) -> bool {
    error.starts_with(EXCEEDED)
}

/// How the reason of a passed read limit begins.
pub const EXCEEDED: &str = "answer exceeded ";

/// `bytes` as MiB for a reason: `64` or `0.5`.
pub fn mib_text(bytes: u64) -> String {
    if bytes.is_multiple_of(MIB) {
        (bytes / MIB).to_string()
    } else {
        format!("{:.2}", bytes as f64 / MIB as f64)
    }
}

/// The last `max` bytes of a file (the whole file when smaller), read without loading the rest.
pub fn read_file_tail(path: &std::path::Path, max: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let max64 = u64::try_from(max).unwrap_or(u64::MAX);
    if len > max64 {
        file.seek(SeekFrom::Start(len - max64))?;
    }
    let mut out = Vec::with_capacity(max.min(usize::try_from(len).unwrap_or(max)));
    file.take(max64).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_win_and_unset_ones_keep_the_profile() {
        let profile = ReadLimits {
            registry_mib: 2,
            ..ReadLimits::default()
        };
        let l = profile.with(&LimitOverrides {
            answer_mib: Some(1),
            ..LimitOverrides::default()
        });
        assert_eq!(l.answer_bytes(), MIB);
        assert_eq!(l.registry_bytes(), 2 * MIB);
        assert_eq!(l.sse_event_mib, 32);
        assert_eq!(mib_text(3 * MIB), "3");
        assert_eq!(mib_text(MIB / 2), "0.50");
    }

    #[test]
    fn a_file_tail_is_its_last_bytes() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("log");
        std::fs::write(&p, b"0123456789")?;
        assert_eq!(read_file_tail(&p, 4)?, b"6789");
        assert_eq!(read_file_tail(&p, 40)?, b"0123456789");
        Ok(())
    }
}
