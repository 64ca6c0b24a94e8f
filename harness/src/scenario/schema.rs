//! The JSON Schema of the scenario format, generated from [`super::ScenarioSpec`].

use super::ScenarioSpec;

/// The schema as a JSON value.
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(ScenarioSpec);
    let mut value = serde_json::to_value(&schema).unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.insert(
            "$id".to_owned(),
            serde_json::Value::String(
                "https://example.invalid/pallas-conformance-kit/scenario.schema.json".to_owned(),
            ),
        );
    }
    value
}

/// The schema as the pretty-printed text checked in at `scenarios/scenario.schema.json`.
pub fn json_schema_pretty() -> String {
    let mut s = serde_json::to_string_pretty(&json_schema()).unwrap_or_default();
    s.push('\n');
    s
}
