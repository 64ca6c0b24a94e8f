//! The progress notifications of one `send_message` call, in seed 000 §4's wording and numbering
//! or in a deliberately wrong variant ([`ProgressMode`]).

use super::spec::{ProgressMode, ProgressSpec};

/// The token a `without-token-too` agent gives a call that carried none.
pub const UNREQUESTED_TOKEN: &str = "pallas-mock-unrequested";

/// One notification to send: `progress`, `total` and `message`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Notice {
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: String,
}

/// What agent `agent` sends for one call. Seed 000: `{tool}: started` at 0, each loop step
/// `{agent} step N (kind)` at N, then `{tool}: completed` (or `failed`) at 1 of 1. `decreasing`
/// keeps the messages and numbers them down to 1 (total 1 on the last); `none` sends nothing.
/// The other modes send the seed's notifications and are applied on the wire.
pub(crate) fn plan(spec: &ProgressSpec, agent: &str) -> Vec<Notice> {
    if spec.mode == ProgressMode::None {
        return Vec::new();
    }
    let mut notices = vec![Notice {
        progress: 0.0,
        total: None,
        message: format!("{}: started", spec.tool),
    }];
    for (i, kind) in spec.steps.iter().enumerate() {
        let n = i + 1;
        notices.push(Notice {
            progress: n as f64,
            total: None,
            message: format!("{agent} step {n} ({})", kind.as_str()),
        });
    }
    let end = if spec.failed { "failed" } else { "completed" };
    notices.push(Notice {
        progress: 1.0,
        total: Some(1.0),
        message: format!("{}: {end}", spec.tool),
    });
    if spec.mode == ProgressMode::Decreasing {
        let count = notices.len();
        for (i, n) in notices.iter_mut().enumerate() {
            n.progress = (count - i) as f64;
        }
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pallas::spec::StepKind;

    fn seen(spec: &ProgressSpec) -> Vec<(f64, Option<f64>, String)> {
        plan(spec, "harper")
            .into_iter()
            .map(|n| (n.progress, n.total, n.message))
            .collect()
    }

    #[test]
    fn the_seed_plan_is_seed_000s_example() {
        let spec = ProgressSpec {
            tool: "research/research__research".into(),
            ..ProgressSpec::default()
        };
        assert_eq!(
            seen(&spec),
            [
                (0.0, None, "research/research__research: started".to_owned()),
                (1.0, None, "harper step 1 (tool)".to_owned()),
                (2.0, None, "harper step 2 (llm)".to_owned()),
                (
                    1.0,
                    Some(1.0),
                    "research/research__research: completed".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn decreasing_counts_down_to_one_and_none_sends_nothing() {
        let spec = ProgressSpec {
            mode: ProgressMode::Decreasing,
            steps: vec![StepKind::Llm],
            failed: true,
            ..ProgressSpec::default()
        };
        assert_eq!(
            seen(&spec),
            [
                (3.0, None, "argos/search_web: started".to_owned()),
                (2.0, None, "harper step 1 (llm)".to_owned()),
                (1.0, Some(1.0), "argos/search_web: failed".to_owned()),
            ]
        );
        let none = ProgressSpec {
            mode: ProgressMode::None,
            ..ProgressSpec::default()
        };
        assert!(plan(&none, "a").is_empty());
    }
}
