//! Validation of a Prometheus text exposition (format 0.0.4) without external programs: a strict
//! parser (`prom_text_format_parser`) plus the lints `promtool check metrics` applies, and the
//! consistency a histogram owes its readers. `promtool` itself runs in addition when it is on
//! `PATH`.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use prom_text_format_parser::{Scrape, ScrapeParseError, Type, ValueType};

/// Every problem found in `body`; empty when the exposition is valid.
pub fn lint(body: &str) -> Vec<String> {
    let scrape = match Scrape::parse(body) {
        Ok(scrape) => scrape,
        Err(ScrapeParseError::Parse(why)) => return vec![format!("does not parse: {why}")],
        Err(ScrapeParseError::Collect(errors)) => {
            return errors
                .iter()
                .map(|e| format!("lines {:?}: {}", e.line_no, e.error))
                .collect();
        }
    };
    let mut problems = Vec::new();
    let mut families = BTreeSet::new();
    for metric in &scrape.metrics {
        let name = &metric.name;
        if !families.insert(name.clone()) {
            problems.push(format!("{name}: the family appears twice"));
        }
        if metric.help_desc.as_deref().is_none_or(str::is_empty) {
            problems.push(format!("{name}: no help text"));
        }
        if metric.kind == Type::Counter && !name.ends_with("_total") {
            problems.push(format!(
                r#"{name}: counter metrics should have "_total" suffix"#
            ));
        }
        if metric.kind != Type::Counter && name.ends_with("_total") {
            problems.push(format!(
                r#"{name}: non-counter metrics should not have "_total" suffix"#
            ));
        }
        if name.chars().any(|c| c.is_ascii_uppercase()) {
            problems.push(format!(
                "{name}: metric names should be written in snake_case"
            ));
        }
        let mut series = BTreeSet::new();
        for sample in &metric.samples {
            let key = (
                format!("{:?}", sample.value.value_type),
                sample.labels.to_string(),
            );
            if !series.insert(key) {
                problems.push(format!("{name}{}: duplicate series", sample.labels));
            }
        }
        if metric.kind == Type::Histogram {
            problems.extend(histogram_problems(metric));
        }
    }
    problems
}

/// Buckets cumulative in `le`, a `+Inf` bucket per series equal to its `_count`.
fn histogram_problems(metric: &prom_text_format_parser::Metric) -> Vec<String> {
    let series_of = |labels: &prom_text_format_parser::Labels| {
        labels
            .iter()
            .filter(|l| l.key != "le")
            .map(|l| format!("{}={}", l.key, l.value))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut problems = Vec::new();
    let mut buckets: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    let mut counts = std::collections::BTreeMap::new();
    for sample in &metric.samples {
        let value: f64 = sample.value.value.parse().unwrap_or(f64::NAN);
        match sample.value.value_type {
            ValueType::Sample => match sample.labels.iter().find(|l| l.key == "le") {
                Some(le) => {
                    let bound = le.value.parse::<f64>().unwrap_or(f64::NAN);
                    buckets
                        .entry(series_of(&sample.labels))
                        .or_default()
                        .push((bound, value));
                }
                None => problems.push(format!("{}: a bucket without `le`", metric.name)),
            },
            ValueType::Count => {
                counts.insert(series_of(&sample.labels), value);
            }
            ValueType::Sum => {}
        }
    }
    for (series, mut bs) in buckets {
        bs.sort_by(|a, b| a.0.total_cmp(&b.0));
        if bs.windows(2).any(|w| w[1].1 < w[0].1) {
            problems.push(format!(
                "{}{{{series}}}: buckets are not cumulative",
                metric.name
            ));
        }
        match bs.last() {
            Some((bound, value)) if bound.is_infinite() => {
                if counts.get(&series) != Some(value) {
                    problems.push(format!(
                        "{}{{{series}}}: the +Inf bucket ({value}) is not the _count ({:?})",
                        metric.name,
                        counts.get(&series)
                    ));
                }
            }
            _ => problems.push(format!("{}{{{series}}}: no +Inf bucket", metric.name)),
        }
    }
    problems
}

/// What `promtool check metrics` said, if it could be asked.
pub enum Promtool {
    Accepted,
    Rejected(String),
    Missing,
}

/// Runs `promtool check metrics` over `body` when promtool is on `PATH`.
pub fn promtool_check(body: &str) -> Promtool {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return Promtool::Missing;
    };
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(body.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Promtool::Accepted
    } else {
        Promtool::Rejected(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

const VALID: &str = "\
# HELP app_requests_total Requests served.
# TYPE app_requests_total counter
app_requests_total{outcome=\"ok\"} 3
# HELP app_up Whether the app is up.
# TYPE app_up gauge
app_up 1
# HELP app_duration_seconds Request duration.
# TYPE app_duration_seconds histogram
app_duration_seconds_bucket{agent=\"a\",le=\"0.1\"} 1
app_duration_seconds_bucket{agent=\"a\",le=\"1\"} 2
app_duration_seconds_bucket{agent=\"a\",le=\"+Inf\"} 2
app_duration_seconds_sum{agent=\"a\"} 0.6
app_duration_seconds_count{agent=\"a\"} 2
";

#[test]
fn a_valid_exposition_has_no_problems() {
    assert_eq!(lint(VALID), Vec::<String>::new());
}

#[test]
fn each_kind_of_broken_exposition_is_reported() {
    let cases = [
        ("app_up{agent=\"a\" 1", "does not parse"),
        ("app_up one", "does not parse"),
        (
            "# HELP app_requests Requests.\n# TYPE app_requests counter\napp_requests 1\n",
            "_total",
        ),
        ("# TYPE app_up gauge\napp_up 1\n", "no help text"),
        (
            "# HELP app_up Up.\n# TYPE app_up gauge\napp_up{a=\"1\"} 1\napp_up{a=\"1\"} 1\n",
            "duplicate series",
        ),
    ];
    for (body, expected) in cases {
        let problems = lint(body);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{body:?}: expected a problem with {expected:?}, got {problems:?}"
        );
    }
    let not_cumulative = VALID.replace("le=\"1\"} 2", "le=\"1\"} 0");
    assert!(
        lint(&not_cumulative)
            .iter()
            .any(|p| p.contains("not cumulative")),
        "{:?}",
        lint(&not_cumulative)
    );
    let wrong_inf = VALID.replace("_count{agent=\"a\"} 2", "_count{agent=\"a\"} 5");
    assert!(
        lint(&wrong_inf).iter().any(|p| p.contains("+Inf")),
        "{:?}",
        lint(&wrong_inf)
    );
}
