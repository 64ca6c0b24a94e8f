//! Metrics checks (MET-*): the Prometheus exposition, its families, counters and health gauges.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

use super::common::*;
use super::params::{OneOrMany, strings};
use super::read::excerpt;
use super::value::Check;
use super::verdict::{Evidence, Outcome, Witness};
use crate::client::MetricsScrape;
use crate::observation::Observation;
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The checks of this family: evaluator and premise.
pub(super) const CHECKS: &[Check] = &[
    Check::new("MET-001", met_exposition),
    Check::new("MET-002", met_families),
    Check::new("MET-003", met_moves)
        .params::<MetricsMove>()
        .by_default("`pallas_send_message_total` and `pallas_send_message_duration_seconds` (`_count`) grow between the first and last scrape around a send, or are positive in a scrape after one"),
    Check::new("MET-004", met_health_gauges)
        .by_default("`pallas_agent_health_status{agent}` is 1 / 0.5 / 0 for the last `get_health` before each scrape; when `ok`, every `pallas_downstream_up{agent}` is 1"),
];

/// The seed's metrics: name, type, label names.
pub const SEED_METRICS: &[(&str, &str, &[&str])] = &[
    ("pallas_up", "gauge", &[]),
    ("pallas_agent_info", "gauge", &["agent", "port"]),
    (
        "pallas_send_message_total",
        "counter",
        &["agent", "outcome"],
    ),
    (
        "pallas_send_message_duration_seconds",
        "histogram",
        &["agent"],
    ),
    ("pallas_llm_turns_total", "counter", &["agent", "model"]),
    (
        "pallas_llm_tokens_total",
        "counter",
        &["agent", "model", "kind"],
    ),
    (
        "pallas_tool_calls_total",
        "counter",
        &["agent", "server", "operation", "outcome"],
    ),
    (
        "pallas_tool_call_duration_seconds",
        "histogram",
        &["agent", "server", "operation"],
    ),
    ("pallas_downstream_up", "gauge", &["agent", "server"]),
    ("pallas_llm_provider_up", "gauge", &["provider"]),
    ("pallas_agent_health_status", "gauge", &["agent"]),
];

/// Each `metrics` step in scope, judged by `judge` (the first failure decides; a `Kept` from
/// `judge` is that scrape's own witness, else the scrape's families are).
fn per_scrape(
    c: &CheckSpec,
    o: &Observed,
    judge: impl Fn(&StepRecord, u16, Option<&MetricsScrape>) -> Option<Outcome>,
) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Metrics]);
    if steps.is_empty() {
        return na("metrics");
    }
    let mut kept = Vec::new();
    for s in steps {
        match judge(s, status(s), scrape_of(s)) {
            Some(Outcome::Kept(own)) => {
                kept.extend(own);
                continue;
            }
            Some(stop) => return stop,
            None => {}
        }
        kept.push(Witness::new(
            &s.name,
            match scrape_of(s) {
                Some(sc) => format!(
                    "HTTP {}, {} metric famil(ies): {}",
                    status(s),
                    sc.families.len(),
                    sc.families
                        .iter()
                        .take(6)
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!("HTTP {}, no exposition read", status(s)),
            },
        ));
    }
    Outcome::Kept(kept)
}

/// MET-001: `/metrics` answers 200, `text/plain`, a parseable exposition.
pub(super) fn met_exposition(c: &CheckSpec, o: &Observed) -> Outcome {
    per_scrape(c, o, |s, status, scrape| {
        let ct = s.observation.content_type().unwrap_or("");
        if status != 200 {
            return Some(fail(
                format!("/metrics answered HTTP {status}"),
                vec![Evidence::new(&s.name, "200", status.to_string())],
            ));
        }
        if !ct.starts_with("text/plain") {
            return Some(fail(
                "wrong Content-Type",
                vec![Evidence::new(&s.name, "text/plain; version=0.0.4", ct)],
            ));
        }
        if let Some(e) = scrape.and_then(|m| m.parse_errors.first()) {
            return Some(fail(
                "the exposition does not parse",
                vec![Evidence::new(
                    &s.name,
                    "valid Prometheus text",
                    excerpt(&json!(e), 200),
                )],
            ));
        }
        None
    })
}

/// Whether a step of one of `kinds` ended before `scrape` started: the activity that gives a
/// labelled family its first sample.
fn happened_before(o: &Observed, scrape: &StepRecord, kinds: &[ActionKind]) -> bool {
    o.steps.iter().any(|s| {
        s.ended_at <= scrape.started_at && s.action().is_some_and(|a| kinds.contains(&a.kind()))
    })
}

/// The families that must have samples in a scrape: `pallas_up` and `pallas_agent_info` always
/// (the process runs, its agents are configured), the `send_message` families after a call, the
/// health status gauge after a `get_health`. The others are judged when they have samples.
fn must_be_sampled(o: &Observed, scrape: &StepRecord, name: &str) -> bool {
    match name {
        "pallas_up" | "pallas_agent_info" => true,
        "pallas_send_message_total" | "pallas_send_message_duration_seconds" => {
            happened_before(o, scrape, &[ActionKind::Send])
        }
        "pallas_agent_health_status" => happened_before(o, scrape, &[ActionKind::Health]),
        _ => false,
    }
}

/// The rule (of MET-002's) that is seed 001's table row of metric `name`.
fn metric_rule(name: &str) -> &'static str {
    match name {
        "pallas_up" => "s001.metric-up",
        "pallas_agent_info" => "s001.metric-agent-info",
        "pallas_send_message_duration_seconds" => "s001.metric-send-message-duration",
        "pallas_llm_turns_total" => "s001.metric-llm-turns",
        "pallas_llm_tokens_total" => "s001.metric-llm-tokens",
        "pallas_tool_calls_total" => "s001.metric-tool-calls",
        "pallas_tool_call_duration_seconds" => "s001.metric-tool-call-duration",
        "pallas_downstream_up" => "s001.metric-downstream-up",
        "pallas_llm_provider_up" => "s001.metric-llm-provider-up",
        "pallas_agent_health_status" => "s001.metric-agent-health-status",
        // `pallas_send_message_total`: the row the table's first rule quotes.
        _ => "s001.metrics-reference",
    }
}

/// MET-002: every seed metric family is present with its type and labels; labels are judged on
/// samples, so a family that must have samples by then (see [`must_be_sampled`]) and has none
/// fails: a declared family alone does not pass.
pub(super) fn met_families(c: &CheckSpec, o: &Observed) -> Outcome {
    per_scrape(c, o, |s, _, scrape| {
        let families = scrape.map_or(&[][..], |m| m.families.as_slice());
        let mut absent = Vec::new();
        let mut seen = Vec::new();
        for (name, kind, labels) in SEED_METRICS {
            // A counter may be declared under its base name (OpenMetrics style).
            let base = name.strip_suffix("_total").unwrap_or(name);
            let Some(f) = families.iter().find(|f| f.name == *name || f.name == base) else {
                absent.push(*name);
                continue;
            };
            // A family declared by `# HELP`/`# TYPE` without samples (a labelled metric
            // nothing has touched yet) is present: its declared type still has to match.
            let k = f.kind.as_str();
            if k != *kind {
                return Some(Outcome::breaks(
                    metric_rule(name),
                    format!("`{name}` has type {k}"),
                    vec![Evidence::new(name.to_string(), kind.to_string(), k)],
                ));
            }
            if f.samples.is_empty() {
                if must_be_sampled(o, s, name) {
                    return Some(Outcome::breaks(
                        metric_rule(name),
                        format!("`{name}` is declared but has no sample"),
                        vec![Evidence::new(
                            &s.name,
                            format!("≥ 1 `{name}` sample with labels {labels:?}"),
                            "only # HELP / # TYPE",
                        )],
                    ));
                }
                seen.push(format!("{name} ({k}, declared, no sample due)"));
                continue;
            }
            seen.push(format!("{name} ({k}, {} sample(s))", f.samples.len()));
            for sample in &f.samples {
                let sname = sample.name.as_str();
                // Histogram series carry `le` besides the family labels.
                let have: Vec<&str> = sample
                    .labels
                    .keys()
                    .map(String::as_str)
                    .filter(|k| *k != "le")
                    .collect();
                for l in *labels {
                    if !have.contains(l) {
                        return Some(Outcome::breaks(
                            metric_rule(name),
                            format!("`{sname}` lacks label `{l}`"),
                            vec![Evidence::new(
                                sname,
                                format!("labels {labels:?}"),
                                format!("{have:?}"),
                            )],
                        ));
                    }
                }
                // The table gives each metric its labels: a series with another one is
                // another series than the seed's (a selector or join on the seed's labels
                // no longer finds it alone).
                let extra: Vec<&str> = have
                    .iter()
                    .copied()
                    .filter(|l| !labels.contains(l))
                    .collect();
                if !extra.is_empty() {
                    return Some(Outcome::breaks(
                        metric_rule(name),
                        format!(
                            "`{sname}` carries label(s) {extra:?}, which the seed's table does not list"
                        ),
                        vec![Evidence::new(
                            sname,
                            format!("labels {labels:?}"),
                            format!("{have:?}"),
                        )],
                    ));
                }
            }
        }
        if !absent.is_empty() {
            return Some(fail(
                format!(
                    "{} seed metric famil{} absent altogether (neither samples nor HELP/TYPE): {}",
                    absent.len(),
                    if absent.len() == 1 { "y is" } else { "ies are" },
                    absent.join(", ")
                ),
                absent
                    .iter()
                    .map(|name| {
                        let kind = SEED_METRICS
                            .iter()
                            .find(|(n, _, _)| n == name)
                            .map_or("", |m| m.1);
                        Evidence::new(&s.name, format!("{name} ({kind})"), "absent")
                    })
                    .collect(),
            ));
        }
        // Three witnesses (what a report shows), four families each, so every family is seen.
        let n = seen.len();
        Some(Outcome::Kept(
            seen.chunks(4)
                .enumerate()
                .map(|(i, part)| {
                    Witness::new(
                        format!(
                            "`{}` (HTTP {}), seed families {}–{} of {n}, every sample with exactly its seed labels",
                            s.name,
                            status(s),
                            i * 4 + 1,
                            i * 4 + part.len()
                        ),
                        part.join("; "),
                    )
                })
                .collect(),
        ))
    })
}

// ---------------------------------------------------------------- metrics

/// The scrape a `metrics` step observed.
fn scrape_of(s: &StepRecord) -> Option<&MetricsScrape> {
    match &s.observation {
        Observation::MetricsScraped(m) => Some(m),
        _ => None,
    }
}

/// The value of a metric in a scrape: the sum over matching samples (a histogram counts its
/// `_count` series, a counter its `_total` series).
pub fn metric_value(
    scrape: &MetricsScrape,
    metric: &str,
    labels: &serde_json::Map<String, Value>,
) -> Option<f64> {
    let base = metric.strip_suffix("_total").unwrap_or(metric);
    let f = scrape
        .families
        .iter()
        .find(|f| f.name == metric || f.name == base)?;
    let mut sum = None;
    for s in &f.samples {
        let counted = match f.kind.as_str() {
            "histogram" | "summary" => s.name.ends_with("_count"),
            _ => !s.name.ends_with("_created"),
        };
        let matches = labels
            .iter()
            .all(|(k, v)| s.labels.get(k).map(String::as_str) == v.as_str());
        if counted && matches {
            *sum.get_or_insert(0.0) += s.value;
        }
    }
    sum
}

/// The value of a metric in what a `metrics` step scraped.
fn scraped_value(
    s: &StepRecord,
    metric: &str,
    labels: &serde_json::Map<String, Value>,
) -> Option<f64> {
    scrape_of(s).and_then(|m| metric_value(m, metric, labels))
}

/// MET-003: counters and histograms move after calls (`with: {metric, before, after, labels}`).
pub(super) fn met_moves(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: MetricsMove = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let mut metrics = strings(p.metric.as_ref());
    if metrics.is_empty() {
        metrics = vec![
            "pallas_send_message_total".into(),
            "pallas_send_message_duration_seconds".into(),
        ];
    }
    let labels: serde_json::Map<String, Value> = p
        .labels
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let scrapes = steps_of(o, c, &[ActionKind::Metrics]);
    let find = |key: &str| -> Result<Option<&StepRecord>, Outcome> {
        let named = if key == "before" { &p.before } else { &p.after };
        match named.as_deref() {
            None => Ok(None),
            Some(n) => o
                .steps
                .iter()
                .find(|s| s.name == n && matches!(s.action(), Some(StepAction::Metrics(_))))
                .map(Some)
                .ok_or_else(|| Outcome::Error(format!("no metrics step named `{n}`"))),
        }
    };
    let (before, after) = match (find("before"), find("after")) {
        (Err(e), _) | (_, Err(e)) => return e,
        (Ok(b), Ok(a)) => (b, a),
    };
    let sends = |from: &str, to: &str| {
        o.steps.iter().any(|s| {
            matches!(s.action(), Some(StepAction::Send(_) | StepAction::Call(_)))
                && s.started_at.as_str() >= from
                && s.ended_at.as_str() <= to
        })
    };
    let (before, after) = match (before, after) {
        (b, Some(a)) => (b, a),
        (b, None) => {
            let mut sorted = scrapes.clone();
            sorted.sort_by(|x, y| x.started_at.cmp(&y.started_at));
            match (b.or(sorted.first().copied()), sorted.last().copied()) {
                (Some(f), Some(l)) if f.name != l.name && sends(&f.ended_at, &l.started_at) => {
                    (Some(f), l)
                }
                (_, Some(l)) if sends("", &l.started_at) => (None, l),
                _ => return Outcome::Inconclusive("no metrics scrape after a send".into()),
            }
        }
    };
    let mut kept = Vec::new();
    for m in &metrics {
        let after_v = scraped_value(after, m, &labels);
        let before_v = before
            .map(|b| scraped_value(b, m, &labels).unwrap_or(0.0))
            .unwrap_or(0.0);
        let moved = after_v.is_some_and(|a| a > before_v);
        if !moved {
            return fail(
                format!("`{m}` did not move after the calls"),
                vec![Evidence::new(
                    format!(
                        "{} → {}",
                        before.map_or("start", |b| b.name.as_str()),
                        after.name
                    ),
                    format!("> {before_v}"),
                    after_v.map_or("absent".into(), |v| v.to_string()),
                )],
            );
        }
        kept.push(Witness::new(
            format!(
                "`{m}` {} → {}",
                before.map_or("start", |b| b.name.as_str()),
                after.name
            ),
            format!(
                "{before_v} → {}",
                after_v.map_or_else(|| "absent".to_owned(), |v| v.to_string())
            ),
        ));
    }
    Outcome::Kept(kept)
}

/// MET-004: health gauges follow the last `get_health` before each scrape.
pub(super) fn met_health_gauges(c: &CheckSpec, o: &Observed) -> Outcome {
    let scrapes = steps_of(o, c, &[ActionKind::Metrics]);
    if scrapes.is_empty() {
        return na("metrics");
    }
    let mut judged = 0;
    let mut kept = Vec::new();
    for m in scrapes {
        let mut last: std::collections::BTreeMap<&str, &StepRecord> = Default::default();
        for h in o.steps.iter().filter(|h| {
            matches!(h.action(), Some(StepAction::Health(_))) && h.ended_at <= m.started_at
        }) {
            let Some(agent) = h.agent.as_deref() else {
                continue;
            };
            if last.get(agent).is_none_or(|p| p.ended_at < h.ended_at) {
                last.insert(agent, h);
            }
        }
        for (agent, h) in last {
            let Some(st) = h.observation.health().map(|r| r.status.as_str()) else {
                continue;
            };
            let want = match st {
                "ok" => 1.0,
                "degraded" => 0.5,
                "error" => 0.0,
                _ => continue,
            };
            judged += 1;
            let mut l = serde_json::Map::new();
            l.insert("agent".into(), json!(agent));
            let seen = scraped_value(m, "pallas_agent_health_status", &l);
            kept.push(Witness::new(
                format!("`{}` after `{}` ({st})", m.name, h.name),
                format!(
                    "pallas_agent_health_status{{agent=\"{agent}\"}} = {}",
                    seen.map_or_else(|| "absent".to_owned(), |v| v.to_string())
                ),
            ));
            if seen != Some(want) {
                return fail(
                    format!(
                        "`pallas_agent_health_status{{agent=\"{agent}\"}}` does not follow `{}` ({st})",
                        h.name
                    ),
                    vec![Evidence::new(
                        &m.name,
                        want.to_string(),
                        seen.map_or("absent".into(), |v| v.to_string()),
                    )],
                );
            }
            if st == "ok" {
                let down: Vec<String> = scrape_of(m)
                    .into_iter()
                    .flat_map(|sc| &sc.families)
                    .filter(|f| f.name == "pallas_downstream_up")
                    .flat_map(|f| &f.samples)
                    .filter(|s| s.labels.get("agent").map(String::as_str) == Some(agent))
                    .filter(|s| s.value != 1.0)
                    .map(|s| excerpt(&json!(s), 200))
                    .collect();
                if let Some(first) = down.first() {
                    return fail(
                        format!("`{agent}` is ok but a downstream gauge is not 1"),
                        vec![Evidence::new(
                            &m.name,
                            "pallas_downstream_up = 1",
                            first.clone(),
                        )],
                    );
                }
            }
        }
    }
    if judged == 0 {
        return Outcome::Inconclusive("no metrics scrape after a get_health".into());
    }
    Outcome::Kept(kept)
}

/// The `with:` parameters of `MET-003`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MetricsMove {
    /// The metric or metrics that must move.
    pub(super) metric: Option<OneOrMany>,
    /// The metrics step scraped before the calls.
    pub(super) before: Option<String>,
    /// The metrics step scraped after the calls.
    pub(super) after: Option<String>,
    /// Labels the series must carry.
    #[serde(default)]
    pub(super) labels: BTreeMap<String, String>,
}
