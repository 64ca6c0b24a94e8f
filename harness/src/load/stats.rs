//! What the sessions measured: latencies in an HDR histogram, calls and errors per second, errors
//! by kind. Each session records into its own [`Tally`]; tallies merge once at the end, so the
//! hot path takes no lock.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

/// Highest latency recorded, in microseconds (longer ones are clamped): 10 minutes.
const MAX_MICROS: u64 = 600_000_000;

/// Calls of one second of the run.
#[derive(Debug, Clone)]
pub struct Second {
    /// Calls that succeeded in this second.
    pub ok: u64,
    /// Calls that failed in this second.
    pub errors: u64,
    /// Latencies of this second's successful calls (µs).
    pub latency: Histogram<u64>,
}

/// One session's (or the merged) measurements.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Latencies of successful calls (µs).
    pub latency: Histogram<u64>,
    /// Successful calls.
    pub ok: u64,
    /// Failed calls by [`super::session::ErrorKind::as_str`].
    pub errors: BTreeMap<String, u64>,
    /// Index `i` holds the calls that ended in second `i` of the measured window.
    pub seconds: Vec<Second>,
    /// Calls that ended during the warm-up (not in the figures).
    pub warmup_calls: u64,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_MICROS)
}

impl Tally {
    /// An empty tally (1 µs to 10 min at 3 significant figures).
    pub fn new() -> Result<Tally, hdrhistogram::CreationError> {
        Ok(Tally {
            latency: Histogram::new_with_bounds(1, MAX_MICROS, 3)?,
            ok: 0,
            errors: BTreeMap::new(),
            seconds: Vec::new(),
            warmup_calls: 0,
        })
    }

    fn empty_second(&self) -> Second {
        Second {
            ok: 0,
            errors: 0,
            latency: Histogram::new_from(&self.latency),
        }
    }

    fn second(&mut self, at: Duration) -> &mut Second {
        let i = usize::try_from(at.as_secs())
            .unwrap_or(usize::MAX)
            .min(86_400);
        while self.seconds.len() <= i {
            let s = self.empty_second();
            self.seconds.push(s);
        }
        &mut self.seconds[i]
    }

    /// A successful call that ended `at` after the measured window opened, taking `latency`.
    pub fn record_ok(&mut self, at: Duration, latency: Duration) {
        let us = micros(latency);
        self.ok += 1;
        self.latency.saturating_record(us);
        let s = self.second(at);
        s.ok += 1;
        s.latency.saturating_record(us);
    }

    /// A failed call that ended `at` after the measured window opened.
    pub fn record_error(&mut self, at: Duration, kind: String) {
        *self.errors.entry(kind).or_default() += 1;
        self.second(at).errors += 1;
    }

    /// A failure outside any call (opening or closing a session): counted by kind only.
    pub fn record_session_error(&mut self, kind: String) {
        *self.errors.entry(kind).or_default() += 1;
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Tally) {
        let _ = self.latency.add(&other.latency);
        self.ok += other.ok;
        self.warmup_calls += other.warmup_calls;
        for (k, v) in &other.errors {
            *self.errors.entry(k.clone()).or_default() += v;
        }
        while self.seconds.len() < other.seconds.len() {
            let s = self.empty_second();
            self.seconds.push(s);
        }
        for (mine, theirs) in self.seconds.iter_mut().zip(&other.seconds) {
            mine.ok += theirs.ok;
            mine.errors += theirs.errors;
            let _ = mine.latency.add(&theirs.latency);
        }
    }
}

/// Milliseconds at quantile `q` of a µs histogram (0 when empty).
pub fn quantile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_tallies_add_calls_errors_and_seconds() {
        let mut a = Tally::new().unwrap();
        a.record_ok(Duration::from_millis(100), Duration::from_millis(2));
        a.record_error(Duration::from_millis(1500), "timeout".into());
        let mut b = Tally::new().unwrap();
        b.record_ok(Duration::from_millis(2500), Duration::from_millis(4));
        b.record_error(Duration::from_millis(200), "timeout".into());
        a.merge(&b);
        assert_eq!(a.ok, 2);
        assert_eq!(a.errors["timeout"], 2);
        assert_eq!(a.seconds.len(), 3);
        assert_eq!(
            a.seconds
                .iter()
                .map(|s| (s.ok, s.errors))
                .collect::<Vec<_>>(),
            [(1, 1), (0, 1), (1, 0)]
        );
        assert!((quantile_ms(&a.latency, 1.0) - 4.0).abs() < 0.01);
    }
}
