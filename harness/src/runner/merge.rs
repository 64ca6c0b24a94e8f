//! `report --from A --from B …`: several event streams of one target (the shares of a
//! partitioned run, or runs of disjoint scenario sets) merged into one stream and one result.
//!
//! Scenarios are ordered by their `index` (a share keeps each scenario's position among all the
//! selected scenarios, so the shares of `run --partition` merge back into the unpartitioned
//! order), ties broken by the order of the streams, then renumbered `0..`. The merged run's
//! stale baseline entries are the union of the streams' (by scenario), its duration the longest
//! stream's (the shares of a matrix run side by side), its error the streams' errors, each named
//! by its file. Streams of different targets or kit versions, or a scenario in two streams, are
//! refused.

use std::collections::BTreeMap;

use super::RunResult;
use super::events::{self, EVENTS_SCHEMA, EventsError, RunEvent, RunPartition, RunStarted};

/// Streams that cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// No stream at all.
    #[error("no event stream to merge")]
    Empty,
    /// A stream cannot be replayed.
    #[error("{file}: {source}")]
    Events {
        /// File name.
        file: String,
        /// Why.
        source: EventsError,
    },
    /// Two streams of different targets.
    #[error(
        "{file} is a run of target `{found}`, {first} of target `{expected}`: only runs of one target merge"
    )]
    Target {
        /// The stream that differs.
        file: String,
        /// Its target.
        found: String,
        /// The first stream.
        first: String,
        /// The first stream's target.
        expected: String,
    },
    /// Two streams written by different versions of the kit.
    #[error(
        "{file} was written by pallas-conformance {found}, {first} by {expected}: only runs of one kit version merge"
    )]
    KitVersion {
        /// The stream that differs.
        file: String,
        /// Its kit version.
        found: String,
        /// The first stream.
        first: String,
        /// The first stream's kit version.
        expected: String,
    },
    /// A scenario in two streams.
    #[error(
        "scenario `{id}` is in both {first} and {second}: a scenario may be in one stream only"
    )]
    Duplicate {
        /// Scenario id.
        id: String,
        /// The first stream that has it.
        first: String,
        /// The other.
        second: String,
    },
}

/// Merged streams.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The merged stream: `run_started`, each scenario's events in order, `run_finished`.
    pub events: Vec<RunEvent>,
    /// What the reporters render ([`RunResult::from_events`] of `events`).
    pub run: RunResult,
    /// What the caller should be told: shares of a partitioned run that are missing.
    pub warnings: Vec<String>,
}

/// The index a scenario's event carries, and its scenario id.
fn scenario_of(e: &RunEvent) -> Option<(usize, &str)> {
    match e {
        RunEvent::ScenarioStarted(s) => Some((s.index, &s.id)),
        RunEvent::StepDone(s) => Some((s.index, &s.scenario)),
        RunEvent::Verdict(v) => Some((v.index, &v.scenario)),
        RunEvent::ScenarioFinished(f) => Some((f.index, &f.id)),
        _ => None,
    }
}

fn reindexed(e: &RunEvent, index: usize, done: usize, total: usize) -> RunEvent {
    let mut e = e.clone();
    match &mut e {
        RunEvent::ScenarioStarted(s) => s.index = index,
        RunEvent::StepDone(s) => s.index = index,
        RunEvent::Verdict(v) => v.index = index,
        RunEvent::ScenarioFinished(f) => {
            f.index = index;
            f.done = done;
            f.total = total;
        }
        _ => {}
    }
    e
}

/// The first stream's `run_started`, after checking every stream against it.
fn common_start(streams: &[(String, Vec<RunEvent>)]) -> Result<&RunStarted, MergeError> {
    let mut first: Option<(&str, &RunStarted)> = None;
    for (file, events) in streams {
        let Some(RunEvent::RunStarted(start)) = events.first() else {
            return Err(MergeError::Events {
                file: file.clone(),
                source: EventsError::NoStart,
            });
        };
        let Some((first_file, f)) = first else {
            first = Some((file, start));
            continue;
        };
        if start.target != f.target {
            return Err(MergeError::Target {
                file: file.clone(),
                found: start.target.clone(),
                first: first_file.to_owned(),
                expected: f.target.clone(),
            });
        }
        if start.kit_version != f.kit_version {
            return Err(MergeError::KitVersion {
                file: file.clone(),
                found: start.kit_version.clone(),
                first: first_file.to_owned(),
                expected: f.kit_version.clone(),
            });
        }
    }
    first.map(|(_, s)| s).ok_or(MergeError::Empty)
}

/// What is missing when the streams are shares of a partitioned run (also for one stream: a
/// lone share).
pub fn partition_warnings(streams: &[(String, Vec<RunEvent>)]) -> Vec<String> {
    let parts: Vec<Option<RunPartition>> = streams
        .iter()
        .map(|(_, e)| match e.first() {
            Some(RunEvent::RunStarted(s)) => s.partition,
            _ => None,
        })
        .collect();
    let Some(Some(first)) = parts.first() else {
        return Vec::new();
    };
    if parts
        .iter()
        .any(|p| p.is_none_or(|p| p.n != first.n || p.of != first.of))
    {
        return vec![
            "the streams are not all shares of one `--partition K/N` split of the same scenarios"
                .into(),
        ];
    }
    let missing: Vec<String> = (1..=first.n)
        .filter(|k| !parts.iter().flatten().any(|p| p.k == *k))
        .map(|k| format!("{k}/{}", first.n))
        .collect();
    if missing.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "share(s) {} of the split are missing: the report does not cover all {} scenario(s)",
            missing.join(", "),
            first.of
        )]
    }
}

/// Merges the streams (each with the file name it came from) into one stream and result.
pub fn merge_streams(streams: &[(String, Vec<RunEvent>)]) -> Result<Merged, MergeError> {
    let start = common_start(streams)?;
    let mut runs = Vec::with_capacity(streams.len());
    // (index, stream) → the scenario's events; id → the file that has it.
    let mut groups: BTreeMap<(usize, usize), Vec<&RunEvent>> = BTreeMap::new();
    let mut owner: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for (n, (file, events)) in streams.iter().enumerate() {
        let run = RunResult::from_events(events).map_err(|source| MergeError::Events {
            file: file.clone(),
            source,
        })?;
        runs.push(run);
        for e in events {
            let Some((index, id)) = scenario_of(e) else {
                continue;
            };
            match owner.get(id) {
                Some((o, first)) if *o != n => {
                    return Err(MergeError::Duplicate {
                        id: id.to_owned(),
                        first: (*first).to_owned(),
                        second: file.clone(),
                    });
                }
                Some(_) => {}
                None => {
                    owner.insert(id, (n, file));
                }
            }
            groups.entry((index, n)).or_default().push(e);
        }
    }
    let total = groups.len();
    let mut merged = vec![RunEvent::RunStarted(RunStarted {
        schema: EVENTS_SCHEMA.into(),
        kit_version: start.kit_version.clone(),
        target: start.target.clone(),
        suite: start.suite.clone(),
        claims: start.claims.clone(),
        scenarios: total,
        partition: None,
    })];
    for (rank, group) in groups.values().enumerate() {
        merged.extend(group.iter().map(|e| reindexed(e, rank, rank + 1, total)));
    }
    let mut run = RunResult::from_events(&merged).map_err(|source| MergeError::Events {
        file: "the merged stream".into(),
        source,
    })?;
    let errors: Vec<String> = streams
        .iter()
        .zip(&runs)
        .filter_map(|((file, _), r)| r.error.as_ref().map(|e| format!("{file}: {e}")))
        .collect();
    run.error = (!errors.is_empty()).then(|| errors.join("; "));
    run.stale = runs.iter().flat_map(|r| r.stale.clone()).collect();
    run.stale.sort_by(|a, b| a.scenario.cmp(&b.scenario));
    run.duration_ms = runs.iter().map(|r| r.duration_ms).fold(0.0, f64::max);
    merged.push(events::run_finished(&run));
    let run = RunResult::from_events(&merged).map_err(|source| MergeError::Events {
        file: "the merged stream".into(),
        source,
    })?;
    Ok(Merged {
        events: merged,
        run,
        warnings: partition_warnings(streams),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::checks::Verdict;
    use crate::runner::{ScenarioResult, StaleEntry, events_of};

    fn scenario(id: &str) -> ScenarioResult {
        ScenarioResult {
            id: id.into(),
            title: format!("title of {id}"),
            file: format!("{id}.yaml"),
            verdict: Verdict::Skip,
            checks: Vec::new(),
            duration_ms: 1.0,
            error: None,
            skipped: Some("not claimed".into()),
            output_tail: None,
            steps: Vec::new(),
            reproduce: String::new(),
            phases: None,
            declared: Default::default(),
        }
    }

    fn full() -> RunResult {
        RunResult {
            side: crate::runner::Side::Server,
            target: "t".into(),
            kit_version: crate::runner::events::KIT_VERSION.into(),
            suite: None,
            claims: Vec::new(),
            scenarios: ["c", "a", "d", "b"].iter().map(|i| scenario(i)).collect(),
            stale: vec![
                StaleEntry {
                    scenario: "a".into(),
                    check: "HEALTH-002".into(),
                },
                StaleEntry {
                    scenario: "d".into(),
                    check: "HEALTH-002".into(),
                },
            ],
            duration_ms: 10.0,
            error: None,
        }
    }

    /// The stream of share `k` of 2 of [`full`], as the runner writes it: the share's scenarios
    /// keep their index among all four.
    fn share(k: usize) -> (String, Vec<RunEvent>) {
        let all = full();
        let ids: Vec<&str> = all.scenarios.iter().map(|s| s.id.as_str()).collect();
        let mine = crate::runner::Partition { k, n: 2 }.select(&ids);
        let mut part = all.clone();
        part.scenarios = mine.iter().map(|&i| all.scenarios[i].clone()).collect();
        part.stale
            .retain(|e| part.scenarios.iter().any(|s| s.id == e.scenario));
        let mut events = events_of(&part);
        for e in &mut events {
            match e {
                RunEvent::RunStarted(s) => {
                    s.partition = Some(RunPartition { k, n: 2, of: 4 });
                }
                RunEvent::ScenarioStarted(s) => s.index = mine[s.index],
                RunEvent::StepDone(s) => s.index = mine[s.index],
                RunEvent::Verdict(v) => v.index = mine[v.index],
                RunEvent::ScenarioFinished(f) => f.index = mine[f.index],
                _ => {}
            }
        }
        (format!("share{k}.jsonl"), events)
    }

    #[test]
    fn the_shares_merge_back_into_the_unpartitioned_run_in_either_order() {
        for streams in [vec![share(1), share(2)], vec![share(2), share(1)]] {
            let m = merge_streams(&streams).unwrap();
            assert_eq!(m.run, full());
            assert_eq!(m.events, events_of(&full()));
            assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        }
    }

    #[test]
    fn another_target_another_kit_version_or_a_scenario_twice_is_refused() {
        let mut other = share(2);
        if let Some(RunEvent::RunStarted(s)) = other.1.first_mut() {
            s.target = "u".into();
        }
        let e = merge_streams(&[share(1), other]).unwrap_err();
        assert!(matches!(e, MergeError::Target { .. }), "{e}");
        assert!(e.to_string().contains("`u`"), "{e}");
        let mut older = share(2);
        if let Some(RunEvent::RunStarted(s)) = older.1.first_mut() {
            s.kit_version = "0.0.1".into();
        }
        let e = merge_streams(&[share(1), older]).unwrap_err();
        assert!(matches!(e, MergeError::KitVersion { .. }), "{e}");
        let e = merge_streams(&[share(1), share(1)]).unwrap_err();
        assert!(
            matches!(&e, MergeError::Duplicate { id, .. } if id == "c"),
            "{e}"
        );
        assert_eq!(merge_streams(&[]).unwrap_err(), MergeError::Empty);
    }

    #[test]
    fn a_missing_share_is_named_and_run_errors_keep_their_file() {
        let w = partition_warnings(&[share(2)]);
        assert!(w.first().is_some_and(|w| w.contains("1/2")), "{w:?}");
        let mut cut = share(2);
        cut.1.pop(); // no run_finished: an interrupted run
        let m = merge_streams(&[share(1), cut]).unwrap();
        let error = m.run.error.unwrap();
        assert!(error.starts_with("share2.jsonl: "), "{error}");
        assert_eq!(m.run.scenarios.len(), 4);
    }
}
