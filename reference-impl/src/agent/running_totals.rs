//! What the defect `mr-tokens-cumulative-across-requests` remembers between calls: per history
//! (its address), the turns and tokens of every call it has seen.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::metrics::TokenUsage;

static RUNNING: Mutex<Option<HashMap<usize, (u64, TokenUsage)>>> = Mutex::new(None);

/// `mr-tokens-cumulative-across-requests`: adds this call's `turns` and `usage` to the running
/// totals of the history at `history`, and returns the totals before this call.
pub fn running_totals(history: usize, turns: u64, usage: &TokenUsage) -> (u64, TokenUsage) {
    let Ok(mut running) = RUNNING.lock() else {
        return (0, TokenUsage::default());
    };
    let entry = running
        .get_or_insert_with(HashMap::new)
        .entry(history)
        .or_default();
    let before = *entry;
    entry.0 += turns;
    entry.1.add(usage);
    before
}
