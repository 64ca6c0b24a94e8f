//! Behaviour over time: a list of phases, each lasting a duration or a number of calls, the last
//! one holding for good. Agents' health and the registry's agent sets are scripted this way.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::lock;

/// When a phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// Never (the last phase, or one that says nothing).
    Forever,
    /// This long after it began.
    Elapsed(Duration),
    /// After it answered this many calls.
    Calls(u32),
}

impl Until {
    /// From a phase's `for` and `after_calls` (validation keeps them exclusive).
    pub(crate) fn of(lasts: Option<Duration>, after_calls: Option<u32>) -> Self {
        match (lasts, after_calls) {
            (Some(d), _) => Self::Elapsed(d),
            (None, Some(n)) => Self::Calls(n),
            (None, None) => Self::Forever,
        }
    }
}

#[derive(Debug)]
struct Cursor {
    index: usize,
    began: Instant,
    calls: u32,
}

/// Phases of `T` and where a run of calls stands in them.
#[derive(Debug)]
pub(crate) struct Phases<T> {
    phases: Vec<(T, Until)>,
    cursor: Mutex<Cursor>,
}

impl<T> Phases<T> {
    /// Phases starting now. The last one holds whatever its `Until`.
    pub(crate) fn new(phases: Vec<(T, Until)>) -> Self {
        Self {
            phases,
            cursor: Mutex::new(Cursor {
                index: 0,
                began: Instant::now(),
                calls: 0,
            }),
        }
    }

    /// Counts one call at `now` and returns the index of the phase that answers it and the phase
    /// (`None` when there are no phases).
    pub(crate) fn call_at(&self, now: Instant) -> Option<(usize, &T)> {
        let mut c = lock(&self.cursor);
        let last = self.phases.len().checked_sub(1)?;
        while c.index < last {
            match self.phases[c.index].1 {
                Until::Elapsed(d) if now.saturating_duration_since(c.began) >= d => {
                    c.began += d;
                    c.calls = 0;
                    c.index += 1;
                }
                Until::Calls(n) if c.calls >= n => {
                    c.began = now;
                    c.calls = 0;
                    c.index += 1;
                }
                _ => break,
            }
        }
        c.calls = c.calls.saturating_add(1);
        let i = c.index;
        Some((i, &self.phases[i].0))
    }

    /// Counts one call now; see [`Phases::call_at`].
    pub(crate) fn call(&self) -> Option<(usize, &T)> {
        self.call_at(Instant::now())
    }

    /// Starts over from the first phase, now.
    pub(crate) fn restart(&self) {
        let mut c = lock(&self.cursor);
        *c = Cursor {
            index: 0,
            began: Instant::now(),
            calls: 0,
        };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn call_counted_phases_advance_after_their_calls_and_the_last_holds() {
        let p = Phases::new(vec![
            ("a", Until::Calls(2)),
            ("b", Until::Calls(1)),
            ("c", Until::Calls(1)),
        ]);
        let seen: Vec<&str> = (0..6).map(|_| *p.call().unwrap().1).collect();
        assert_eq!(seen, ["a", "a", "b", "c", "c", "c"]);
        p.restart();
        assert_eq!(*p.call().unwrap().1, "a");
    }

    #[test]
    fn timed_phases_follow_each_other_without_drift() {
        let p = Phases::new(vec![
            ("a", Until::Elapsed(Duration::from_secs(5))),
            ("b", Until::Elapsed(Duration::from_secs(5))),
            ("c", Until::Forever),
        ]);
        let t0 = Instant::now();
        let at = |s: u64| *p.call_at(t0 + Duration::from_secs(s)).unwrap().1;
        assert_eq!(at(1), "a");
        assert_eq!(at(6), "b");
        // Phase b began at 5 s (not at the 6 s call): it ends at 10 s.
        assert_eq!(at(10), "c");
        assert_eq!(at(1000), "c");
    }

    #[test]
    fn a_phase_without_an_end_holds_even_when_not_last() {
        let p = Phases::new(vec![("a", Until::Forever), ("b", Until::Forever)]);
        assert_eq!(*p.call().unwrap().1, "a");
        assert_eq!(*p.call().unwrap().1, "a");
        assert!(Phases::<u8>::new(vec![]).call().is_none());
    }
}
