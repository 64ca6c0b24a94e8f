//! The run itself: deploy (or attach), open the sessions, drive them, sample the server, close.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pallas_mocks::LlmMock;
use tokio::task::JoinSet;

use super::deploy::{self, Deployed};
use super::procstat::{self, Reading, ServerUsage};
use super::session::Session;
use super::stats::{Tally, quantile_ms};
use super::{
    Endpoint, LatencyMs, LoadError, LoadOptions, LoadReport, MockLlmCounts, SecondReport,
    SessionCounts, Stop, Trend,
};

/// How often the mock model's journal is drained (its entries hold whole request bodies).
const DRAIN_EVERY: Duration = Duration::from_millis(250);

/// Runs the load described by `opts`.
pub async fn run(opts: &LoadOptions) -> Result<LoadReport, LoadError> {
    let (deployed, url, tool, pid, target_name, scope, arguments) = match &opts.endpoint {
        Endpoint::Url { url, tool, pid } => {
            let arguments = serde_json::json!({ "message": opts.message });
            (
                None,
                url.clone(),
                tool.clone(),
                *pid,
                "url",
                None,
                arguments,
            )
        }
        Endpoint::Target { target, deploy } => {
            let d = deploy::deploy(target, deploy).await?;
            let (url, tool, pid) = (d.url.clone(), d.tool.clone(), d.pid);
            let name = target.spec.name.as_str();
            let arguments = target.message_arguments(deploy::AGENT, &opts.message);
            let scope = deploy.instance_scope.clone();
            (Some(d), url, tool, pid, name, scope, arguments)
        }
    };
    let result = drive(opts, &url, &tool, &arguments, pid, deployed.as_ref()).await;
    if let Some(d) = deployed {
        d.stop().await;
    }
    let mut report = result?;
    report.target = target_name.to_owned();
    report.instance_scope = scope;
    Ok(report)
}

/// Counts what the mock model received, draining its journal.
#[derive(Debug, Default)]
struct LlmCounter {
    completions: AtomicU64,
    other: AtomicU64,
}

impl LlmCounter {
    fn drain(&self, llm: &LlmMock) {
        for entry in llm.take_journal() {
            if entry.method == "POST" && entry.path.ends_with("/chat/completions") {
                self.completions.fetch_add(1, Ordering::Relaxed);
            } else {
                self.other.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

async fn drive(
    opts: &LoadOptions,
    url: &str,
    tool: &str,
    arguments: &serde_json::Value,
    pid: Option<u32>,
    deployed: Option<&Deployed>,
) -> Result<LoadReport, LoadError> {
    let http = pallas_mocks::http_client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(opts.sessions.max(1) * 2)
        .build()
        .map_err(|e| LoadError::Setup(format!("cannot build the HTTP client: {e}")))?;
    let template = Tally::new().map_err(|e| LoadError::Setup(e.to_string()))?;
    let counter = Arc::new(LlmCounter::default());
    let llm = deployed.map(|d| d.llm.clone());
    if let Some(llm) = &llm {
        counter.drain(llm);
    }
    let idle = pid.and_then(procstat::read);

    // Open every session before the clock starts.
    let mut opening = JoinSet::new();
    for _ in 0..opts.sessions {
        let http = http.clone();
        let url = url.to_owned();
        let timeout = opts.call_timeout;
        opening.spawn(async move { Session::open(http, &url, timeout).await });
    }
    let mut sessions = Vec::new();
    let mut open_errors = template.clone();
    while let Some(joined) = opening.join_next().await {
        match joined {
            Ok(Ok(s)) => sessions.push(s),
            Ok(Err(kind)) => {
                open_errors.record_session_error(format!("initialize_{}", kind.as_str()))
            }
            Err(e) => open_errors.record_session_error(format!("initialize_panic: {e}")),
        }
    }
    if sessions.is_empty() {
        let kinds: Vec<String> = open_errors.errors.keys().cloned().collect();
        return Err(LoadError::NoSession(kinds.join(", ")));
    }
    let opened = sessions.len();

    let start = Instant::now();
    let origin = start + opts.warmup;
    let budget = Arc::new(AtomicU64::new(match opts.stop {
        Stop::Calls(n) => n,
        Stop::Duration(_) => u64::MAX,
    }));
    let end = match opts.stop {
        Stop::Duration(d) => Some(origin + d),
        Stop::Calls(_) => None,
    };
    let done = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn(sample(
        pid,
        origin,
        llm.clone(),
        counter.clone(),
        done.clone(),
    ));

    let mut running = JoinSet::new();
    for (i, session) in sessions.into_iter().enumerate() {
        let plan = Plan {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            start,
            origin,
            end,
            budget: budget.clone(),
            interval: opts.rate.map(|r| opts.sessions as f64 / r.max(1e-9)),
            offset: opts
                .rate
                .map(|r| i as f64 / r.max(1e-9))
                .unwrap_or_default(),
        };
        let tally = template.clone();
        running.spawn(drive_session(session, plan, tally));
    }
    let mut total = template.clone();
    total.merge(&open_errors);
    let mut closed = 0;
    let mut last_end = origin;
    while let Some(joined) = running.join_next().await {
        if let Ok((tally, finished, close_ok)) = joined {
            total.merge(&tally);
            last_end = last_end.max(finished);
            closed += usize::from(close_ok);
        }
    }
    done.store(true, Ordering::Relaxed);
    let samples = sampler.await.unwrap_or_default();
    if let Some(llm) = &llm {
        counter.drain(llm);
    }
    let after = pid.and_then(procstat::read);
    let elapsed = last_end.saturating_duration_since(origin);
    Ok(build_report(
        opts,
        url,
        tool,
        &total,
        elapsed,
        Usage {
            pid,
            idle,
            after,
            samples: &samples,
        },
        SessionCounts {
            requested: opts.sessions,
            opened,
            closed,
        },
        deployed.map(|d| d.startup),
        llm.map(|_| MockLlmCounts {
            chat_completions: counter.completions.load(Ordering::Relaxed),
            other: counter.other.load(Ordering::Relaxed),
        }),
    ))
}

/// What one session does.
struct Plan {
    tool: String,
    /// The message tool's arguments (the profile's template, filled).
    arguments: serde_json::Value,
    start: Instant,
    origin: Instant,
    end: Option<Instant>,
    budget: Arc<AtomicU64>,
    /// Open loop: seconds between this session's calls.
    interval: Option<f64>,
    /// Open loop: this session's first call after `start`, seconds.
    offset: f64,
}

async fn drive_session(
    mut session: Session,
    plan: Plan,
    mut tally: Tally,
) -> (Tally, Instant, bool) {
    let mut k: u64 = 0;
    let mut finished = plan.origin;
    loop {
        let scheduled = match plan.interval {
            Some(interval) => {
                let at = plan.start + Duration::from_secs_f64(plan.offset + k as f64 * interval);
                tokio::time::sleep_until(at.into()).await;
                at
            }
            None => Instant::now(),
        };
        k += 1;
        if plan.end.is_some_and(|end| scheduled >= end) {
            break;
        }
        let warmup = scheduled < plan.origin;
        if !warmup
            && plan
                .budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
        {
            break;
        }
        let sent = if plan.interval.is_some() {
            scheduled
        } else {
            Instant::now()
        };
        let outcome = session.call(&plan.tool, &plan.arguments).await;
        let now = Instant::now();
        if warmup {
            tally.warmup_calls += 1;
            continue;
        }
        finished = now;
        let at = now.saturating_duration_since(plan.origin);
        match outcome {
            Ok(()) => tally.record_ok(at, now.saturating_duration_since(sent)),
            Err(kind) => tally.record_error(at, kind.as_str()),
        }
    }
    let close_ok = match session.close().await {
        Ok(()) => true,
        Err(kind) => {
            tally.record_session_error(format!("delete_{}", kind.as_str()));
            false
        }
    };
    (tally, finished, close_ok)
}

/// Per-second server readings: index `i` is taken at the end of second `i` of the window.
async fn sample(
    pid: Option<u32>,
    origin: Instant,
    llm: Option<Arc<LlmMock>>,
    counter: Arc<LlmCounter>,
    done: Arc<AtomicBool>,
) -> Vec<(Option<u64>, Option<f64>)> {
    tokio::time::sleep_until(origin.into()).await;
    let mut previous = pid.and_then(procstat::read);
    let mut samples = Vec::new();
    let mut next_second = origin + Duration::from_secs(1);
    while !done.load(Ordering::Relaxed) {
        let wake = (Instant::now() + DRAIN_EVERY).min(next_second);
        tokio::time::sleep_until(wake.into()).await;
        if let Some(llm) = &llm {
            counter.drain(llm);
        }
        if Instant::now() >= next_second {
            next_second += Duration::from_secs(1);
            let now = pid.and_then(procstat::read);
            let cpu = match (&previous, &now) {
                (Some(a), Some(b)) => procstat::cpu_percent(a, b),
                _ => None,
            };
            samples.push((now.map(|r| r.rss_kib), cpu));
            previous = now;
        }
    }
    samples
}

struct Usage<'a> {
    pid: Option<u32>,
    idle: Option<Reading>,
    after: Option<Reading>,
    samples: &'a [(Option<u64>, Option<f64>)],
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[allow(clippy::too_many_arguments)]
fn build_report(
    opts: &LoadOptions,
    url: &str,
    tool: &str,
    total: &Tally,
    elapsed: Duration,
    usage: Usage<'_>,
    sessions: SessionCounts,
    startup: Option<Duration>,
    mock_llm: Option<MockLlmCounts>,
) -> LoadReport {
    let h = &total.latency;
    let calls_failed = total.seconds.iter().map(|s| s.errors).sum();
    let elapsed_s = elapsed.as_secs_f64();
    let mut cumulative = 0;
    let series: Vec<SecondReport> = total
        .seconds
        .iter()
        .enumerate()
        .map(|(i, s)| {
            cumulative += s.ok;
            let sample = usage.samples.get(i);
            SecondReport {
                t: i as u64 + 1,
                ok: s.ok,
                errors: s.errors,
                cumulative_ok: cumulative,
                p50_ms: round3(quantile_ms(&s.latency, 0.5)),
                p99_ms: round3(quantile_ms(&s.latency, 0.99)),
                rss_kib: sample.and_then(|s| s.0),
                cpu_percent: sample.and_then(|s| s.1).map(|c| (c * 10.0).round() / 10.0),
            }
        })
        .collect();
    // Full seconds only: the last one is partial.
    let full = series.len().saturating_sub(1);
    let trend = (full >= 4).then(|| {
        let q = full / 4;
        let rate = |s: &[SecondReport]| s.iter().map(|x| x.ok).sum::<u64>() as f64 / q as f64;
        let first = rate(&series[..q]);
        let last = rate(&series[full - q..full]);
        Trend {
            first_quarter: round3(first),
            last_quarter: round3(last),
            ratio: if first > 0.0 {
                round3(last / first)
            } else {
                0.0
            },
        }
    });
    let server = usage.pid.map(|pid| {
        let peak = usage
            .samples
            .iter()
            .filter_map(|s| s.0)
            .chain(usage.idle.map(|r| r.rss_kib))
            .chain(usage.after.map(|r| r.rss_kib))
            .max();
        let cpu: Vec<f64> = usage.samples.iter().filter_map(|s| s.1).collect();
        let cpu_percent = (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64);
        ServerUsage {
            pid,
            rss_idle_kib: usage.idle.map(|r| r.rss_kib),
            rss_after_kib: usage.after.map(|r| r.rss_kib),
            rss_peak_kib: peak,
            cpu_seconds: match (usage.idle, usage.after) {
                (Some(a), Some(b)) => Some(round3(b.cpu_seconds - a.cpu_seconds)),
                _ => None,
            },
            cpu_percent: cpu_percent.map(|c| (c * 10.0).round() / 10.0),
        }
    });
    LoadReport {
        target: String::new(),
        url: url.to_owned(),
        tool: tool.to_owned(),
        instance_scope: None,
        sessions,
        rate: opts.rate,
        warmup_s: opts.warmup.as_secs_f64(),
        elapsed_s: round3(elapsed_s),
        calls_ok: total.ok,
        calls_failed,
        warmup_calls: total.warmup_calls,
        throughput: if elapsed_s > 0.0 {
            round3(total.ok as f64 / elapsed_s)
        } else {
            0.0
        },
        latency_ms: LatencyMs {
            p50: round3(quantile_ms(h, 0.5)),
            p90: round3(quantile_ms(h, 0.9)),
            p99: round3(quantile_ms(h, 0.99)),
            max: round3(quantile_ms(h, 1.0)),
            mean: if h.is_empty() {
                0.0
            } else {
                round3(h.mean() / 1000.0)
            },
        },
        errors: total.errors.clone(),
        series,
        trend,
        startup_ms: startup.map(|d| round3(d.as_secs_f64() * 1000.0)),
        server,
        mock_llm,
    }
}
