//! Which scenario runs next, and when another may start: the longest first (durations remembered
//! from the last run against the same target; a scenario never timed by the waits it declares),
//! and as many at once as the machine has room for.
//!
//! A scenario mostly waits (on sockets, on an implementation's start, on a retry back-off), so a
//! run that starts only one scenario per core leaves the machine idle; one that starts many at
//! once overloads a target whose start is CPU-bound. With `--jobs auto` (the default), the runner
//! always keeps one scenario per core going and starts more, up to six per core, while the CPU is
//! mostly idle (niced work counts as idle): each look at the CPU (a twentieth of a second) allows
//! as many more as it had idle cores, and the next look sees their load. With `--jobs N`, exactly
//! up to N.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::scenario::Scenario;

/// How many scenarios may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jobs {
    /// Exactly up to this many (`--jobs N`).
    Fixed(usize),
    /// One per core always, more while the CPU is idle (the default).
    Adaptive,
}

/// A `--jobs` value that is neither `auto` nor a positive count.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not a number of scenarios at once (a count of at least 1, or `auto`)")]
pub struct JobsError(String);

impl std::str::FromStr for Jobs {
    type Err = JobsError;

    /// `auto` (the default: chosen from the work) or a count of at least 1.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Adaptive);
        }
        match s.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Self::Fixed(n)),
            _ => Err(JobsError(s.to_owned())),
        }
    }
}

impl Jobs {
    /// Scenarios always allowed at once, and the most ever allowed.
    fn bounds(self) -> (usize, usize) {
        match self {
            Self::Fixed(n) => (n.max(1), n.max(1)),
            Self::Adaptive => {
                let cores = cores();
                (cores, (cores * 6).min(32))
            }
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Scenario durations of earlier runs against one target (scenario id → milliseconds), kept in a
/// small JSON file: a cache, so a missing or unreadable file is an empty memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Durations(BTreeMap<String, f64>);

impl Durations {
    /// The durations in `path`, or none: a file this module wrote (id → milliseconds), or a
    /// JSON report of an earlier run (`--report-json`, a certification's report: each run
    /// scenario's `duration_ms`).
    pub fn load(path: &Path) -> Self {
        let Some(doc) = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        else {
            return Self::default();
        };
        if let Some(scenarios) = doc.get("scenarios").and_then(serde_json::Value::as_array) {
            let ran = scenarios
                .iter()
                .filter(|s| s.get("skipped").is_none_or(serde_json::Value::is_null));
            return Self(
                ran.filter_map(|s| {
                    let id = s.get("id")?.as_str()?;
                    Some((id.to_owned(), s.get("duration_ms")?.as_f64()?))
                })
                .collect(),
            );
        }
        serde_json::from_value(doc).map(Self).unwrap_or_default()
    }

    /// These durations, with `newer`'s where both know a scenario.
    #[must_use]
    pub fn updated_by(mut self, newer: Self) -> Self {
        self.0.extend(newer.0);
        self
    }

    /// Remembers `ms` for `id`.
    pub fn insert(&mut self, id: &str, ms: f64) {
        self.0.insert(id.to_owned(), ms);
    }

    /// Writes the durations to `path` (its folder created); a failure only loses the memory.
    pub fn save(&self, path: &Path) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(text) = serde_json::to_vec_pretty(&self.0) {
            let _ = std::fs::write(path, text);
        }
    }

    /// The order to start `scenarios` in: the longest first, by the duration remembered or, for
    /// a scenario never seen before, by the waits it declares ([`declared_waits_ms`]); ties in
    /// their given order.
    pub fn order(&self, scenarios: &[Scenario]) -> VecDeque<usize> {
        let keys: Vec<f64> = scenarios
            .iter()
            .map(|s| {
                self.0
                    .get(&s.spec.id)
                    .copied()
                    .unwrap_or_else(|| declared_waits_ms(s))
            })
            .collect();
        let mut order: Vec<usize> = (0..scenarios.len()).collect();
        order.sort_by(|a, b| keys[*b].total_cmp(&keys[*a]));
        order.into()
    }
}

/// The time a scenario declares it waits, in milliseconds: its mocks' latencies and delays
/// (`latency`, `chunk_delay`, `delay`, `initialize_delay`) and its steps' pauses (`wait`, a
/// `listen`'s `for`), summed. A first run's estimate of which scenarios are long, before any
/// was measured.
pub fn declared_waits_ms(s: &Scenario) -> f64 {
    const WAITS: [&str; 6] = [
        "latency",
        "chunk_delay",
        "delay",
        "initialize_delay",
        "wait",
        "for",
    ];
    fn walk(v: &serde_json::Value, total: &mut Duration) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    match v.as_str() {
                        Some(text) if WAITS.contains(&k.as_str()) => {
                            *total += humantime::parse_duration(text).unwrap_or_default();
                        }
                        _ => walk(v, total),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, total)),
            _ => {}
        }
    }
    let mut total = Duration::ZERO;
    if let Ok(spec) = serde_json::to_value(&s.spec) {
        walk(&spec, &mut total);
    }
    total.as_secs_f64() * 1000.0
}

/// Where the durations of runs against `target` are remembered: under `$XDG_CACHE_HOME` (or
/// `~/.cache`), `pallas-conformance/durations/<target>.json`; none without a home.
pub fn durations_file(target: &str) -> Option<PathBuf> {
    Some(
        cache_dir()?
            .join("durations")
            .join(format!("{}.json", file_name(target))),
    )
}

/// The kit's cache: `$XDG_CACHE_HOME/pallas-conformance` (or `~/.cache/…`); none without a home.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("pallas-conformance"))
}

/// `name` as a file name: what is not alphanumeric, `-` or `.` becomes `_`.
pub fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The gate every scenario passes before it starts.
#[derive(Debug)]
pub struct Admission {
    floor: usize,
    cap: usize,
    running: AtomicUsize,
    cpu: Mutex<Window>,
}

/// The CPU watch and how many more scenarios above the floor the last look allows.
#[derive(Debug, Default)]
struct Window {
    watch: CpuWatch,
    budget: usize,
}

/// How long the CPU is watched before another scenario above the floor may start.
const LOOK: Duration = Duration::from_millis(50);

/// The idle share of the CPU above which another scenario may start.
const IDLE_ENOUGH: f64 = 0.25;

impl Admission {
    /// A gate for `jobs`.
    pub fn new(jobs: Jobs) -> Self {
        let (floor, cap) = jobs.bounds();
        Self {
            floor,
            cap,
            running: AtomicUsize::new(0),
            cpu: Mutex::new(Window::default()),
        }
    }

    /// The most scenarios ever running at once (the number of workers to start).
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Waits until another scenario may start and counts it as running.
    pub async fn enter(&self) {
        loop {
            let n = self.running.load(Ordering::Acquire);
            let room = n < self.floor || (n < self.cap && self.idle_enough());
            if room
                && self
                    .running
                    .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                return;
            }
            tokio::time::sleep(LOOK / 5).await;
        }
    }

    /// A scenario ended (or a worker found nothing left to run).
    pub fn leave(&self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether another scenario above the floor may start: each look of [`LOOK`] at a mostly
    /// idle CPU allows two per idle core (a scenario spends most of its time waiting on its
    /// implementation and mocks: one per core admitted at most 20 a second per core, the bound of
    /// a suite of short scenarios), and the next look begins when they are used (so it sees
    /// their load).
    fn idle_enough(&self) -> bool {
        let Ok(mut w) = self.cpu.lock() else {
            return false;
        };
        if w.budget == 0 {
            let Some(idle) = w.watch.idle_since_mark() else {
                return false;
            };
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "a share in [0, 1] of a core count"
            )]
            let idle_cores = (idle * cores() as f64).ceil() as usize;
            w.watch.mark();
            if idle < IDLE_ENOUGH || idle_cores == 0 {
                return false;
            }
            w.budget = idle_cores * 2;
        }
        w.budget -= 1;
        if w.budget == 0 {
            w.watch.mark();
        }
        true
    }
}

/// The CPU's idle share since a mark, from Linux's `/proc/stat`.
#[derive(Debug, Default)]
struct CpuWatch {
    mark: Option<(Instant, CpuTimes)>,
}

impl CpuWatch {
    fn mark(&mut self) {
        self.mark = CpuTimes::now().map(|t| (Instant::now(), t));
    }

    /// The idle share since the mark, once [`LOOK`] has passed; `None` before (or without
    /// `/proc/stat`, where only the floor applies).
    fn idle_since_mark(&mut self) -> Option<f64> {
        let Some((at, then)) = self.mark else {
            self.mark();
            return None;
        };
        if at.elapsed() < LOOK {
            return None;
        }
        let now = CpuTimes::now()?;
        let total = now.total.saturating_sub(then.total);
        if total == 0 {
            return None;
        }
        let idle = now.idle.saturating_sub(then.idle);
        #[expect(
            clippy::cast_precision_loss,
            reason = "tick counts of a quarter second are far below 2^52"
        )]
        Some(idle as f64 / total as f64)
    }
}

/// The first line of `/proc/stat`: all CPUs' ticks, in total and available (idle, iowait, and
/// niced work, which yields its core to a scenario at normal priority: a background build
/// niced out of the way does not hold the run to its floor).
#[derive(Debug, Clone, Copy)]
struct CpuTimes {
    total: u64,
    idle: u64,
}

impl CpuTimes {
    fn now() -> Option<Self> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse(text.lines().next()?)
    }

    fn parse(line: &str) -> Option<Self> {
        let mut fields = line.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        // user nice system idle iowait irq softirq steal; guest time is already in user/nice.
        let ticks: Vec<u64> = fields.take(8).filter_map(|f| f.parse().ok()).collect();
        let idle = ticks.get(1)? + ticks.get(3)? + ticks.get(4).copied().unwrap_or(0);
        Some(Self {
            total: ticks.iter().sum(),
            idle,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(id: &str) -> Scenario {
        let text = format!(
            "id: {id}\ntitle: t\nsteps:\n  - name: r\n    registry: {{}}\nchecks:\n  - check: REG-002\n"
        );
        match crate::scenario::parse_str("t.yaml", &text) {
            Ok(s) => s,
            Err(e) => panic!("{}", e.render_plain()),
        }
    }

    fn waiting(id: &str, pause: &str) -> Scenario {
        let text = format!(
            "id: {id}\ntitle: t\nsteps:\n  - name: p\n    wait: {pause}\n  - name: r\n    registry: {{}}\nchecks:\n  - check: REG-002\n"
        );
        match crate::scenario::parse_str("t.yaml", &text) {
            Ok(s) => s,
            Err(e) => panic!("{}", e.render_plain()),
        }
    }

    #[test]
    fn the_longest_remembered_goes_first_and_the_unknown_by_their_declared_waits() {
        let s = [
            scenario("a"),
            scenario("b"),
            waiting("c", "2s"),
            scenario("d"),
        ];
        let mut d = Durations::default();
        assert_eq!(d.order(&s), VecDeque::from([2, 0, 1, 3]));
        d.insert("a", 100.0);
        d.insert("b", 9000.0);
        d.insert("d", 500.0);
        assert_eq!(d.order(&s), VecDeque::from([1, 2, 3, 0]));
    }

    #[test]
    fn declared_waits_sum_the_mocks_delays_and_the_steps_pauses() {
        assert!((declared_waits_ms(&waiting("w", "1500ms")) - 1500.0).abs() < 1e-6);
        assert!(declared_waits_ms(&scenario("none")).abs() < 1e-6);
        let text = "id: m\ntitle: t\necosystem:\n  llms:\n    o:\n      dialect: openai\n      script:\n        - fault: {latency: 3s}\n          text: x\n  mcp_servers:\n    s:\n      initialize_delay: 500ms\n      tools:\n        - {name: hold, delay: 8s}\nsteps:\n  - name: l\n    listen: {agent: a, for: 2s}\nchecks:\n  - check: REG-002\n";
        let s = match crate::scenario::parse_str("t.yaml", text) {
            Ok(s) => s,
            Err(e) => panic!("{}", e.render_plain()),
        };
        assert!(
            (declared_waits_ms(&s) - 13_500.0).abs() < 1e-6,
            "{}",
            declared_waits_ms(&s)
        );
    }

    #[test]
    fn durations_survive_a_round_trip_and_a_bad_file_is_no_memory() {
        let dir = std::env::temp_dir().join(format!("pallas-durations-{}", std::process::id()));
        let path = dir.join("x.json");
        let mut d = Durations::default();
        d.insert("a", 12.5);
        d.save(&path);
        assert_eq!(Durations::load(&path), d);
        let _ = std::fs::write(&path, "not json");
        assert_eq!(Durations::load(&path), Durations::default());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_json_report_seeds_the_durations_of_the_scenarios_it_ran() {
        let dir = std::env::temp_dir().join(format!("pallas-report-{}", std::process::id()));
        let path = dir.join("report.json");
        let _ = std::fs::create_dir_all(&dir);
        let report = r#"{"scenarios": [
            {"id": "a", "duration_ms": 4000.0},
            {"id": "b", "duration_ms": 0.1, "skipped": "the target does not claim `reload`"},
            {"id": "c", "duration_ms": 20.0, "skipped": null}]}"#;
        let _ = std::fs::write(&path, report);
        let seeded = Durations::load(&path);
        let mut expected = Durations::default();
        expected.insert("a", 4000.0);
        expected.insert("c", 20.0);
        assert_eq!(seeded, expected);
        let mut newer = Durations::default();
        newer.insert("a", 10.0);
        let merged = seeded.updated_by(newer);
        let s = [scenario("a"), scenario("c")];
        assert_eq!(merged.order(&s), VecDeque::from([1, 0]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn cpu_ticks_are_read_from_the_first_line_of_proc_stat() {
        let t = CpuTimes::parse("cpu  100 5 50 800 20 0 3 0 0 0");
        assert_eq!(t.map(|t| (t.total, t.idle)), Some((978, 825)));
        // Guest ticks (the last two) are already counted in user and nice.
        let t = CpuTimes::parse("cpu  100 5 50 800 20 0 3 0 40 2");
        assert_eq!(t.map(|t| (t.total, t.idle)), Some((978, 825)));
        assert!(CpuTimes::parse("cpu0 1 2 3 4").is_none());
    }

    #[test]
    fn jobs_are_a_count_or_auto() {
        assert_eq!("3".parse(), Ok(Jobs::Fixed(3)));
        assert_eq!("auto".parse(), Ok(Jobs::Adaptive));
        assert_eq!("AUTO".parse(), Ok(Jobs::Adaptive));
        for bad in ["0", "-1", "two", ""] {
            let e = bad.parse::<Jobs>().err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.contains("or `auto`")),
                "{bad}: {e:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_fixed_gate_lets_exactly_n_in() {
        let gate = Admission::new(Jobs::Fixed(2));
        gate.enter().await;
        gate.enter().await;
        let third = tokio::time::timeout(Duration::from_millis(300), gate.enter()).await;
        assert!(third.is_err(), "a third scenario waits");
        gate.leave();
        let again = tokio::time::timeout(Duration::from_millis(300), gate.enter()).await;
        assert!(again.is_ok(), "one left, one more may start");
        assert_eq!(gate.cap(), 2);
    }
}
