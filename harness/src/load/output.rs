//! Rendering a [`LoadReport`]: a table for people, JSON for scripts.

use std::fmt::Write as _;

use super::LoadReport;

/// The report as pretty JSON (the `--json` file).
pub fn json(report: &LoadReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "-".to_owned(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    )
}

/// The report as a table.
pub fn table(r: &LoadReport) -> String {
    let mut out = String::new();
    let scope = r.instance_scope.as_deref().unwrap_or("default");
    let _ = writeln!(out, "load: {} ({}), tool `{}`", r.target, r.url, r.tool);
    let mode = match r.rate {
        Some(rate) => format!("open loop at {rate} calls/s"),
        None => "closed loop".to_owned(),
    };
    let _ = writeln!(
        out,
        "  sessions {}/{} opened, {} closed; {mode}; instance_scope {scope}; warm-up {:.1}s ({} calls)",
        r.sessions.opened, r.sessions.requested, r.sessions.closed, r.warmup_s, r.warmup_calls
    );
    if let Some(ms) = r.startup_ms {
        let _ = writeln!(out, "  startup to ready   {ms:.1} ms");
    }
    let _ = writeln!(out);
    let rows: Vec<(&str, String)> = vec![
        ("window", format!("{:.3} s", r.elapsed_s)),
        ("calls ok", r.calls_ok.to_string()),
        ("calls failed", r.calls_failed.to_string()),
        ("throughput", format!("{:.1} calls/s", r.throughput)),
        ("latency p50", format!("{:.3} ms", r.latency_ms.p50)),
        ("latency p90", format!("{:.3} ms", r.latency_ms.p90)),
        ("latency p99", format!("{:.3} ms", r.latency_ms.p99)),
        ("latency max", format!("{:.3} ms", r.latency_ms.max)),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<18} {v:>16}");
    }
    if let Some(t) = &r.trend {
        let _ = writeln!(
            out,
            "  {:<18} {:>16}",
            "trend (last/first)",
            format!(
                "{:.0} → {:.0} /s ({:.2})",
                t.first_quarter, t.last_quarter, t.ratio
            )
        );
    }
    if let Some(s) = &r.server {
        let _ = writeln!(out, "\n  server pid {}", s.pid);
        let _ = writeln!(out, "  {:<18} {:>16}", "RSS idle", mib(s.rss_idle_kib));
        let _ = writeln!(out, "  {:<18} {:>16}", "RSS peak", mib(s.rss_peak_kib));
        let _ = writeln!(out, "  {:<18} {:>16}", "RSS after", mib(s.rss_after_kib));
        if let Some(c) = s.cpu_percent {
            let _ = writeln!(
                out,
                "  {:<18} {:>16}",
                "CPU (of one core)",
                format!("{c:.1} %")
            );
        }
    }
    if let Some(m) = &r.mock_llm {
        let _ = writeln!(
            out,
            "  {:<18} {:>16}",
            "mock LLM requests",
            format!("{} (+{} other)", m.chat_completions, m.other)
        );
    }
    if !r.errors.is_empty() {
        let _ = writeln!(out, "\n  errors");
        for (k, v) in &r.errors {
            let _ = writeln!(out, "  {k:<18} {v:>16}");
        }
    }
    if !r.series.is_empty() {
        let _ = writeln!(
            out,
            "\n  {:>4} {:>9} {:>7} {:>10} {:>9} {:>9} {:>11} {:>7}",
            "t(s)", "calls", "errors", "cumulative", "p50 ms", "p99 ms", "RSS", "CPU %"
        );
        for s in &r.series {
            let _ = writeln!(
                out,
                "  {:>4} {:>9} {:>7} {:>10} {:>9.3} {:>9.3} {:>11} {:>7}",
                s.t,
                s.ok,
                s.errors,
                s.cumulative_ok,
                s.p50_ms,
                s.p99_ms,
                mib(s.rss_kib),
                s.cpu_percent
                    .map_or_else(|| "-".into(), |c| format!("{c:.1}"))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LatencyMs, SecondReport};

    #[test]
    fn the_table_shows_the_figures_and_every_error_kind() {
        let r = LoadReport {
            target: "reference".into(),
            calls_ok: 10,
            throughput: 5.0,
            latency_ms: LatencyMs {
                p50: 1.5,
                ..LatencyMs::default()
            },
            errors: [("http_503".to_owned(), 2)].into(),
            series: vec![SecondReport {
                t: 1,
                ok: 10,
                ..SecondReport::default()
            }],
            ..LoadReport::default()
        };
        let t = table(&r);
        assert!(t.contains("5.0 calls/s"), "{t}");
        assert!(t.contains("1.500 ms"), "{t}");
        assert!(t.contains("http_503"), "{t}");
        let j: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        assert_eq!(j["calls_ok"], 10);
        assert_eq!(j["errors"]["http_503"], 2);
    }
}
