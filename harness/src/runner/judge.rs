//! Judging under a deadline: the checks of one scenario run on a blocking thread, and when
//! they outlast the time left the scenario gets an error that says so instead of waiting.

use std::time::Duration;

use super::HarnessError;
use crate::checks::{self, CheckResult, Grading};
use crate::observation::Observed;
use crate::redact::Redactor;
use crate::scenario::Scenario;
use crate::target::Target;

/// Evaluates every check of `scenario` over `observed`, or says why it could not within
/// `budget`.
pub async fn judge_within(
    budget: Duration,
    scenario: Scenario,
    observed: Observed,
    target: Target,
    grading: Grading,
    redactor: Redactor,
) -> Result<Vec<CheckResult>, HarnessError> {
    let task = tokio::task::spawn_blocking(move || {
        let claims = |c| target.claims(c);
        checks::evaluate(&scenario, &observed, &claims, grading, &redactor)
    });
    match tokio::time::timeout(budget, task).await {
        Ok(Ok(results)) => Ok(results),
        Ok(Err(e)) => Err(HarnessError::JudgingStopped(e)),
        Err(_) => Err(HarnessError::JudgingTimedOut(Duration::from_secs(
            budget.as_secs().max(1),
        ))),
    }
}
