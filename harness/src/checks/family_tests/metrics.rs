//! Tests of the metrics checks.

use serde_json::{Value, json};

use super::*;
use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};

#[test]
fn met_003_wants_counters_to_move_between_scrapes_around_a_call() {
    let o = obs(vec![
        scrape("before", 0, counter(1.0)),
        bearer_step("send", 2, 3, None),
        scrape("after", 4, counter(2.0)),
    ]);
    kept(run("MET-003", &CheckSpec::default(), &o));
    let c = with(
        json!({"metric": "pallas_send_message_total", "before": "before", "after": "after", "labels": {"agent": "research"}}),
    );
    kept(run("MET-003", &c, &o));
    let o = obs(vec![
        scrape("before", 0, counter(1.0)),
        bearer_step("send", 2, 3, None),
        scrape("after", 4, counter(1.0)),
    ]);
    assert!(fails(&run("MET-003", &CheckSpec::default(), &o)));
    let c = with(json!({"before": "nope", "after": "after"}));
    assert!(matches!(run("MET-003", &c, &o), Outcome::Error(_)));
    let o = obs(vec![scrape("only", 0, counter(0.0))]);
    assert!(skipped(&run("MET-003", &CheckSpec::default(), &o)));
}

#[test]
fn met_004_wants_the_health_gauge_of_the_last_get_health() {
    let gauge = |v: f64| {
        json!([{"name": "pallas_agent_health_status", "kind": "gauge", "samples": [
        {"name": "pallas_agent_health_status", "labels": {"agent": "research"}, "value": v}]}])
    };
    let health = step(
        "h",
        "health",
        0,
        1,
        json!({"health": {"status": "degraded"}}),
    );
    let o = obs(vec![health.clone(), scrape("m", 2, gauge(0.5))]);
    kept(run("MET-004", &CheckSpec::default(), &o));
    let o = obs(vec![health, scrape("m", 2, gauge(1.0))]);
    assert!(fails(&run("MET-004", &CheckSpec::default(), &o)));
    let o = obs(vec![scrape("m", 2, gauge(1.0))]);
    assert!(skipped(&run("MET-004", &CheckSpec::default(), &o)));
}

#[test]
fn met_002_wants_samples_where_the_seed_implies_them_and_names_every_absent_one() {
    use crate::checks::SEED_METRICS;
    let family = |name: &str, kind: &str| json!({"name": name, "kind": kind, "samples": []});
    let mut all: Vec<Value> = SEED_METRICS.iter().map(|(n, k, _)| family(n, k)).collect();
    // Declared only: `pallas_up` has no sample while the process runs.
    let outcome = run(
        "MET-002",
        &CheckSpec::default(),
        &obs(vec![scrape("m", 0, json!(all))]),
    );
    let Some(reason) = outcome.broken_reason() else {
        panic!("a declared pallas_up without a sample must fail")
    };
    // The finding cites the table row of the metric it is about.
    assert!(
        matches!(&outcome, Outcome::Breaks { rule, .. } if rule == "s001.metric-up"),
        "{outcome:?}"
    );
    assert!(reason.contains("pallas_up"), "{reason}");
    all[0] = json!({"name": "pallas_up", "kind": "gauge", "samples": [
        {"name": "pallas_up", "labels": {}, "value": 1.0}]});
    all[1] = json!({"name": "pallas_agent_info", "kind": "gauge", "samples": [
        {"name": "pallas_agent_info", "labels": {"agent": "a", "port": "1"}, "value": 1.0}]});
    // Before any call, the labelled families may be declared without samples.
    let o = obs(vec![scrape("m", 0, json!(all))]);
    kept(run("MET-002", &CheckSpec::default(), &o));
    // A series with a label the table does not list is another series than the seed's.
    let mut extra = all.clone();
    extra[1] = json!({"name": "pallas_agent_info", "kind": "gauge", "samples": [
        {"name": "pallas_agent_info", "labels": {"agent": "a", "port": "1", "instance": "x"}, "value": 1.0}]});
    let outcome = run(
        "MET-002",
        &CheckSpec::default(),
        &obs(vec![scrape("m", 0, json!(extra))]),
    );
    let Some(reason) = outcome.broken_reason() else {
        panic!("an extra label must fail")
    };
    assert!(reason.contains("\"instance\""), "{reason}");
    // After a call, the send_message families must have samples.
    let o = obs(vec![
        bearer_step("send", 0, 1, None),
        scrape("m", 2, json!(all)),
    ]);
    let outcome = run("MET-002", &CheckSpec::default(), &o);
    let Some(reason) = outcome.broken_reason() else {
        panic!("a send_message family without a sample after a call must fail")
    };
    assert!(reason.contains("pallas_send_message"), "{reason}");
    // Declared under a wrong type: still judged.
    let mut wrong = all.clone();
    wrong[2] = family("pallas_send_message_total", "gauge");
    assert!(fails(&run(
        "MET-002",
        &CheckSpec::default(),
        &obs(vec![scrape("m", 0, json!(wrong))])
    )));
    // Two families missing altogether: both are named.
    let some: Vec<Value> = all[2..].to_vec();
    let Outcome::Fail(reason, ev) = run(
        "MET-002",
        &CheckSpec::default(),
        &obs(vec![scrape("m", 0, json!(some))]),
    ) else {
        panic!("absent families must fail")
    };
    assert!(
        reason.contains("pallas_up") && reason.contains("pallas_agent_info"),
        "{reason}"
    );
    assert_eq!(ev.len(), 2);
}
