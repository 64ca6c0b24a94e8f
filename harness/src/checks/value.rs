//! A check as one value: its ID, its evaluator, its premise. Each family file lists its checks
//! in one `CHECKS` table; [`find`] looks a check up across the families. The check's mode
//! (`builtin`, `automatic` or `assertion`), level and rules are rule data ([`crate::catalog`]; a
//! test holds the two in step: an evaluator exactly for the `builtin` and `automatic` ones);
//! its typed `with:` parameters are declared on its row (read and documented by `params.rs`).

use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::premise::Premise;
use super::verdict::Outcome;
use crate::observation::Observed;
use crate::scenario::CheckSpec;

/// A built-in evaluator: the check's parameters and scope, and what was observed.
pub(crate) type Evaluator = fn(&CheckSpec, &Observed) -> Outcome;

/// One check, as the harness judges it.
#[derive(Clone, Copy)]
pub(crate) struct Check {
    /// The catalog ID (`HEALTH-004`).
    pub id: &'static str,
    /// The evaluator of a `builtin` or `automatic` check; `None` for a check only a scenario's
    /// assertion decides.
    pub evaluator: Option<Evaluator>,
    /// What must have been observed for a verdict (`None`: nothing beyond what the evaluator
    /// itself requires).
    pub premise: Option<Premise>,
    /// The reading its verdicts are judged in, named on each of them (`spec-strict`), when the
    /// family judges one clause in more than one reading.
    pub mode: Option<&'static str>,
    /// Another check of the same scenario its failure may only repeat (one cause, one finding).
    pub folds: Option<Fold>,
    /// The typed struct its `with:` is read into (`None`: it takes no `with:`).
    pub params: Option<Params>,
    /// What its evaluator judges when `with:` does not say, for the scenario format's `with:`
    /// table.
    pub by_default: Option<&'static str>,
}

/// A check whose failure may be the finding of another entry of the scenario: `when` says,
/// from what was observed and whether `into` failed in the scenario, the outcome its failure
/// becomes instead (`None`: it stands).
#[derive(Clone, Copy)]
pub(crate) struct Fold {
    /// The check whose finding it may repeat.
    pub into: &'static str,
    /// Its outcome when it only repeats that finding.
    pub when: fn(&Observed, bool) -> Option<Outcome>,
}

impl Check {
    /// A check judged by `evaluator`.
    pub const fn new(id: &'static str, evaluator: Evaluator) -> Self {
        Self {
            id,
            evaluator: Some(evaluator),
            premise: None,
            mode: None,
            folds: None,
            params: None,
            by_default: None,
        }
    }

    /// A check only a scenario's assertion decides (listed for its premise).
    pub const fn assertion(id: &'static str) -> Self {
        Self {
            id,
            evaluator: None,
            premise: None,
            mode: None,
            folds: None,
            params: None,
            by_default: None,
        }
    }

    /// The same check with its premise.
    pub const fn premise(self, premise: Premise) -> Self {
        Self {
            premise: Some(premise),
            ..self
        }
    }

    /// The same check judged in the reading `mode`.
    pub const fn mode(self, mode: &'static str) -> Self {
        Self {
            mode: Some(mode),
            ..self
        }
    }

    /// The same check, whose failure becomes `fold.when`'s outcome when it repeats `fold.into`'s.
    pub const fn folds(self, fold: Fold) -> Self {
        Self {
            folds: Some(fold),
            ..self
        }
    }

    /// The same check, whose `with:` is read into `T` (a struct with `deny_unknown_fields` and
    /// a doc line per field, which the format docs' `with:` table shows).
    pub const fn params<T: JsonSchema + DeserializeOwned>(self) -> Self {
        Self {
            params: Some(Params::of::<T>()),
            ..self
        }
    }

    /// The same check, documented as judging `what` when its `with:` does not say otherwise.
    pub const fn by_default(self, what: &'static str) -> Self {
        Self {
            by_default: Some(what),
            ..self
        }
    }

    /// Its catalog entry (mode, level, rules), from the rule data.
    #[cfg(test)]
    pub fn def(&self) -> Option<&'static crate::catalog::CheckDef> {
        crate::catalog::get(self.id)
    }

    /// Why its premise did not occur in `o` (`None`: it did, or it has none).
    pub fn missing(&self, o: &Observed) -> Option<&'static str> {
        self.premise.and_then(|p| p(o))
    }
}

/// The `with:` struct a check's row declares: its JSON Schema, and whether a value fits it.
#[derive(Clone, Copy)]
pub(crate) struct Params {
    schema: fn() -> Schema,
    read: fn(&Value) -> Result<(), serde_json::Error>,
}

impl Params {
    /// The parameters of struct `T`.
    pub(super) const fn of<T: JsonSchema + DeserializeOwned>() -> Self {
        Self {
            schema: schema_of::<T>,
            read: fits::<T>,
        }
    }

    /// Whether `with` fits the struct (why not, when it does not).
    pub(super) fn fits(&self, with: &Value) -> Result<(), serde_json::Error> {
        (self.read)(with)
    }

    /// Its fields (`name` → schema), in declaration order.
    pub(super) fn properties(&self) -> Vec<(String, Value)> {
        (self.schema)()
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }
}

fn schema_of<T: JsonSchema>() -> Schema {
    schemars::schema_for!(T)
}

fn fits<T: DeserializeOwned>(v: &Value) -> Result<(), serde_json::Error> {
    T::deserialize(v).map(|_| ())
}

/// Every family's checks.
pub(super) const FAMILIES: &[&[Check]] = &[
    super::registry::CHECKS,
    super::health::CHECKS,
    super::progress::CHECKS,
    super::bearer::CHECKS,
    super::metrics::CHECKS,
    super::messages::CHECKS,
    super::mcp::CHECKS,
];

/// The check `id`, if a family lists it.
pub(crate) fn find(id: &str) -> Option<&'static Check> {
    FAMILIES.iter().flat_map(|f| f.iter()).find(|c| c.id == id)
}

/// The built-in evaluator of a check, if it has one.
pub(crate) fn evaluator(id: &str) -> Option<Evaluator> {
    find(id).and_then(|c| c.evaluator)
}

/// Why the premise of check `id` did not occur in `o` (`None`: it did, or it has none).
pub(crate) fn missing(id: &str, o: &Observed) -> Option<&'static str> {
    find(id).and_then(|c| c.missing(o))
}
