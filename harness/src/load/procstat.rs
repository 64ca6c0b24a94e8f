//! The server's CPU time and resident memory, read from `/proc/<pid>/stat` and
//! `/proc/<pid>/status` (Linux). CPU time is in clock ticks of 1/100 s, the value of
//! `getconf CLK_TCK` on every Linux architecture the kit runs on.

use std::time::{Duration, Instant};

use serde::Serialize;

/// Clock ticks per second of `/proc/<pid>/stat` times.
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// When it was taken.
    pub at: Instant,
    /// User + system CPU time so far, in seconds.
    pub cpu_seconds: f64,
    /// Resident set size, KiB (`VmRSS`).
    pub rss_kib: u64,
}

/// Reads `pid` now; `None` when the process is gone or `/proc` is unreadable.
pub fn read(pid: u32) -> Option<Reading> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(Reading {
        at: Instant::now(),
        cpu_seconds: cpu_ticks(&stat)? as f64 / TICKS_PER_SECOND,
        rss_kib: rss_kib(&status)?,
    })
}

/// `utime + stime` of a `/proc/<pid>/stat` line. The command name (field 2) may hold spaces
/// and parentheses, so fields are counted after its last `)`.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state is field 3, so utime (field 14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `VmRSS` of a `/proc/<pid>/status` text, KiB.
fn rss_kib(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// What the server did over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerUsage {
    /// The process sampled.
    pub pid: u32,
    /// RSS before the first session opened, KiB.
    pub rss_idle_kib: Option<u64>,
    /// RSS after the last session closed, KiB.
    pub rss_after_kib: Option<u64>,
    /// Highest RSS sampled, KiB.
    pub rss_peak_kib: Option<u64>,
    /// CPU seconds used from the idle reading to the after reading (warm-up included).
    pub cpu_seconds: Option<f64>,
    /// Average of the per-second CPU readings of the measured window, percent of one core.
    pub cpu_percent: Option<f64>,
}

/// CPU use between two readings, percent of one core.
pub fn cpu_percent(from: &Reading, to: &Reading) -> Option<f64> {
    let wall = to.at.checked_duration_since(from.at)?;
    (wall > Duration::ZERO)
        .then(|| (to.cpu_seconds - from.cpu_seconds).max(0.0) / wall.as_secs_f64() * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_counted_after_a_command_name_with_spaces() {
        let stat = "4242 (tokio (rt) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 170 30 0 0 20 0 3 0 100 1000 50 18446744073709551615";
        assert_eq!(cpu_ticks(stat), Some(200));
    }

    #[test]
    fn rss_is_read_from_vmrss() {
        assert_eq!(
            rss_kib("Name:\tpallas\nVmPeak:\t  9000 kB\nVmRSS:\t   15360 kB\n"),
            Some(15360)
        );
    }

    #[test]
    fn this_process_can_be_read() {
        let r = read(std::process::id()).unwrap();
        assert!(r.rss_kib > 0);
    }
}
