//! Reading what was observed, for every family and the settling of a scenario's entries: the
//! steps a check's scope names, and short excerpts of values for evidence.

use crate::observation::StepRecord;

/// Short JSON text of a value, for evidence (at most `max` characters).
pub fn excerpt<'a>(v: impl crate::client::evidence::Walk<'a>, max: usize) -> String {
    use crate::client::evidence::{preview, serialized_len, thousands};
    let full = v.string().map_or_else(|| serialized_len(&v), str::len);
    // Only a preview is rendered: a huge value costs its size in counting, never in copies.
    let s = match v.string() {
        Some(s) if s.len() <= max.saturating_mul(4) => s.to_owned(),
        Some(s) => s.chars().take(max + 1).collect(),
        None => preview(v, max.saturating_mul(2)).to_string(),
    };
    if s.chars().count() > max {
        format!(
            "{}… ({} bytes)",
            s.chars().take(max).collect::<String>(),
            thousands(full)
        )
    } else {
        s
    }
}

/// Steps whose names match any of `globs` (every step when empty).
pub fn select_steps<'a>(steps: &'a [StepRecord], globs: &[String]) -> Vec<&'a StepRecord> {
    if globs.is_empty() {
        return steps.iter().collect();
    }
    let matchers: Vec<globset::GlobMatcher> = globs
        .iter()
        .filter_map(|g| globset::Glob::new(g).ok())
        .map(|g| g.compile_matcher())
        .collect();
    steps
        .iter()
        .filter(|s| matchers.iter().any(|m| m.is_match(&s.name)) || globs.contains(&s.name))
        .collect()
}
