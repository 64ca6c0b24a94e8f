//! How to read an implementation's JSON log records. Seed 001's record has `time`, `level`,
//! `logger` and `message`, with Python's level names (`DEBUG`, `INFO`, `WARNING`, `ERROR`,
//! `CRITICAL`) — its own `jq` line reads `.time`, `.level`, `.logger`, `.message`. That is the
//! default; a target profile whose implementation logs otherwise (a `tracing` dialect with
//! `timestamp`, `target`, `WARN`) declares its field and level names under `logs:`, and each
//! record read by a `file` or `process` step gains the seed's names, so scenario assertions are
//! written once, in the seed's terms.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A profile's `logs:`: where the seed's record fields are and what its levels are called.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogFormat {
    /// The implementation's field name for each of the seed's (`time`, `level`, `logger`,
    /// `message`), when it differs: `{logger: target, time: timestamp}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// The implementation's level names mapped to Python's: `{WARN: WARNING, TRACE: DEBUG}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub levels: BTreeMap<String, String>,
    /// The separator of the implementation's logger names, when not `.` (`::` for `tracing`
    /// targets): replaced by `.` so `pallas::health` reads as the logger `pallas.health`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger_separator: Option<String>,
}

/// The seed's record fields.
pub const SEED_FIELDS: [&str; 4] = ["time", "level", "logger", "message"];

impl LogFormat {
    /// `record` with the seed's field names and level names added (its own fields are kept).
    pub fn normalize(&self, record: Value) -> Value {
        let Value::Object(mut rec) = record else {
            return record;
        };
        for seed in SEED_FIELDS {
            if let Some(theirs) = self.fields.get(seed)
                && theirs != seed
                && let Some(v) = rec.get(theirs).cloned()
            {
                rec.insert(seed.to_owned(), v);
            }
        }
        if let Some(Value::String(l)) = rec.get("level")
            && let Some(python) = self.levels.get(l)
        {
            let python = python.clone();
            rec.insert("level".into(), Value::String(python));
        }
        if let Some(sep) = self.logger_separator.as_deref().filter(|s| !s.is_empty())
            && let Some(Value::String(l)) = rec.get("logger")
        {
            let dotted = l.replace(sep, ".");
            rec.insert("logger".into(), Value::String(dotted));
        }
        Value::Object(rec)
    }

    /// Text lines, each parsed as JSON where it is JSON (`null` otherwise), then normalized.
    pub fn lines(&self, text: &str) -> Value {
        Value::Array(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).map_or(Value::Null, |v| self.normalize(v)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_seed_format_is_read_as_it_is() {
        let rec =
            json!({"time": "t", "level": "WARNING", "logger": "pallas.server", "message": "m"});
        assert_eq!(LogFormat::default().normalize(rec.clone()), rec);
    }

    #[test]
    fn a_declared_dialect_gains_the_seeds_names() {
        let f: LogFormat = serde_saphyr::from_str(
            "fields: {time: timestamp, logger: target}\nlevels: {WARN: WARNING}\nlogger_separator: '::'\n",
        )
        .unwrap();
        let rec = f.normalize(
            json!({"timestamp": "t", "level": "WARN", "target": "pallas::health", "message": "m"}),
        );
        assert_eq!(rec["time"], "t");
        assert_eq!(rec["level"], "WARNING");
        assert_eq!(rec["logger"], "pallas.health");
        assert_eq!(rec["target"], "pallas::health");
        assert_eq!(
            f.lines("x\n\n{\"level\":\"INFO\"}\n"),
            json!([null, {"level": "INFO"}])
        );
    }
}
