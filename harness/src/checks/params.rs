//! A check's `with:` parameters. A family declares the typed struct of a check that takes any
//! on the check's row (`Check::new(..).params::<T>()`, the struct beside the evaluator that
//! reads it with `params::<T>(c)`), and what the evaluator judges without them
//! (`.by_default(..)`). From those rows follow the load-time reading of a scenario's `with:`
//! into its check's struct (an unknown key such as `stauts`, a wrong type or `with:` on a check
//! that takes none is an error with the file, line and a did-you-mean hint, never a check that
//! silently weakens) and the `with:` table of `harness/docs/scenario-format.md` (a test keeps
//! it in step). No list here names a check.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::value::{self, FAMILIES};
use crate::catalog::{self, Evaluation};
use crate::diag::find_from;
use crate::scenario::{Scenario, SpecError};

/// One string or a list of strings.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    /// One.
    One(String),
    /// A list.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings, in order.
    fn to_vec(&self) -> Vec<String> {
        match self {
            Self::One(s) => vec![s.clone()],
            Self::Many(v) => v.clone(),
        }
    }
}

/// Strings of an optional one-or-many parameter (empty when absent).
pub(super) fn strings(p: Option<&OneOrMany>) -> Vec<String> {
    p.map(OneOrMany::to_vec).unwrap_or_default()
}

/// A `with:` that its check cannot take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
struct ParamsError {
    /// The offending key, when the problem is one key.
    key: Option<String>,
    /// What is wrong.
    message: String,
    /// How to fix it.
    hint: String,
}

/// Checks `with` against the parameter struct check `id` declares.
fn validate(id: &str, with: &Value) -> Result<(), ParamsError> {
    let Some(params) = value::find(id).and_then(|c| c.params) else {
        return Err(ParamsError {
            key: with.as_object().and_then(|m| m.keys().next().cloned()),
            message: format!("check `{id}` takes no `with:` parameters"),
            hint: "remove `with:` (select steps with `steps:`)".into(),
        });
    };
    let known: Vec<String> = params.properties().into_iter().map(|(k, _)| k).collect();
    if let Some(m) = with.as_object() {
        for k in m.keys() {
            if !known.contains(k) {
                let hint = match crate::diag::did_you_mean(k, known.iter().map(String::as_str)) {
                    Some(m) => format!("did you mean `{m}`? `{id}` takes {}", list(&known)),
                    None => format!("`{id}` takes {}", list(&known)),
                };
                return Err(ParamsError {
                    key: Some(k.clone()),
                    message: format!("unknown parameter `{k}` of `{id}`"),
                    hint,
                });
            }
        }
    }
    params.fits(with).map_err(|e| ParamsError {
        key: None,
        message: format!("`with:` of `{id}`: {e}"),
        hint: format!("`{id}` takes {}", list(&known)),
    })
}

fn list(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `with:` of `scenario`'s check entries that their checks cannot take, each at its line
/// in `text` (the scenario file's text): the entries of `builtin` and `automatic` checks (an
/// `assertion` check's `with:` is its assertion's business).
pub(crate) fn with_errors(scenario: &Scenario, text: &str) -> Vec<SpecError> {
    let file = scenario.path.display().to_string();
    let mut errors = Vec::new();
    for (i, entry) in scenario.spec.checks.iter().enumerate() {
        let (Some(id), Some(with)) = (entry.check.as_deref(), &entry.with) else {
            continue;
        };
        if catalog::get(id).is_none_or(|d| d.evaluation == Evaluation::Assertion) {
            continue;
        }
        if let Err(e) = validate(id, with) {
            let line = scenario.check_lines.get(i).copied().unwrap_or(0);
            let (l, c) = find_from(text, e.key.as_deref().unwrap_or("with:"), line);
            errors.push(SpecError::at(&file, text, l, c, e.message, Some(e.hint)));
        }
    }
    errors
}

/// A `with:` whose values do not fit its check's parameter struct.
#[derive(Debug, thiserror::Error)]
#[error("`with:` does not fit: {0}")]
pub(super) struct WithDoesNotFit(#[source] serde_json::Error);

/// Reads check parameters into `T` (its defaults when `with:` is absent).
pub(super) fn read<T: DeserializeOwned + Default>(
    with: Option<&Value>,
) -> Result<T, WithDoesNotFit> {
    match with {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => T::deserialize(v).map_err(WithDoesNotFit),
    }
}

/// The `with:` table of the scenario format reference: every check whose row declares
/// parameters or what it judges by default, in the order of the families' `CHECKS` tables.
pub fn with_table() -> String {
    let mut out = String::from("| check | `with:` | default |\n|---|---|---|\n");
    for c in FAMILIES.iter().flat_map(|f| f.iter()) {
        if c.params.is_none() && c.by_default.is_none() {
            continue;
        }
        let params = match c.params {
            None => "—".to_owned(),
            Some(p) => p
                .properties()
                .into_iter()
                .map(|(k, v)| {
                    let doc = v
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    format!("`{k}`: {doc}")
                })
                .collect::<Vec<_>>()
                .join("<br>"),
        };
        out.push_str(&format!(
            "| `{}` | {params} | {} |\n",
            c.id,
            c.by_default.unwrap_or("—")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_typo_in_a_parameter_is_named_with_the_closest_key() {
        let e = validate("HEALTH-004", &json!({"stauts": "degraded"})).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("stauts"));
        assert!(e.hint.contains("did you mean `status`"), "{e:?}");
    }

    #[test]
    fn a_wrong_type_and_parameters_of_a_check_that_takes_none_are_errors() {
        let e = validate("HEALTH-006", &json!({"max_ms": "fast"})).unwrap_err();
        assert!(e.message.contains("HEALTH-006"), "{e:?}");
        let e = validate("HEALTH-001", &json!({"status": "ok"})).unwrap_err();
        assert!(e.message.contains("takes no `with:`"), "{e:?}");
        assert!(validate("HEALTH-004", &json!({"status": "ok", "mentions": ["a"]})).is_ok());
        assert!(
            validate(
                "MET-003",
                &json!({"metric": ["a", "b"], "labels": {"agent": "x"}})
            )
            .is_ok()
        );
    }

    /// A row that declares `with:` parameters or a default is a check an evaluator judges.
    #[test]
    fn only_checks_with_an_evaluator_declare_parameters() {
        let declared: Vec<_> = FAMILIES
            .iter()
            .flat_map(|f| f.iter())
            .filter(|c| c.params.is_some() || c.by_default.is_some())
            .collect();
        assert!(!declared.is_empty());
        for c in declared {
            assert!(c.evaluator.is_some(), "{} has no evaluator", c.id);
            assert!(
                catalog::get(c.id).is_some_and(|d| d.evaluation != Evaluation::Assertion),
                "{} is not a builtin or automatic check of the catalog",
                c.id
            );
        }
    }
}
