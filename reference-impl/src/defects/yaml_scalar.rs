//! What `ms-version-yaml-scalar` remembers: the `version` the last configuration loaded wrote
//! unquoted, which PyYAML would have read as a number (YAML 1.1 `int` and `float`).

use std::sync::Mutex;

use serde_json::Value;

/// The unquoted `version` scalar of the configuration loaded last, if it had one.
static PLAIN: Mutex<Option<String>> = Mutex::new(None);

/// The `version` of the configuration just loaded, when it was written as a plain (unquoted)
/// scalar.
pub fn remember_plain_version(text: Option<&str>) {
    if let Ok(mut plain) = PLAIN.lock() {
        *plain = text.map(str::to_owned);
    }
}

/// The JSON number PyYAML reads `version` as, when it was written unquoted and is a YAML 1.1
/// decimal integer or float (`2` → `2`, `2.0` → `2.0`, `1.10` → `1.1`); `None` otherwise.
pub fn plain_version_value(version: &str) -> Option<Value> {
    if !PLAIN
        .lock()
        .is_ok_and(|plain| plain.as_deref() == Some(version))
    {
        return None;
    }
    yaml11_number(version)
}

fn yaml11_number(text: &str) -> Option<Value> {
    let int = regex::Regex::new(r"^[-+]?(0|[1-9][0-9_]*)$").ok()?;
    let float =
        regex::Regex::new(r"^[-+]?([0-9][0-9_]*\.[0-9_]*|\.[0-9_]+)([eE][-+][0-9]+)?$").ok()?;
    let digits = text.replace('_', "");
    if int.is_match(text) {
        return digits.parse::<i64>().ok().map(Value::from);
    }
    if float.is_match(text) {
        return digits
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_numbers_read_as_pyyaml_does() {
        assert_eq!(yaml11_number("2.0").unwrap().to_string(), "2.0");
        assert_eq!(yaml11_number("1.10").unwrap().to_string(), "1.1");
        assert_eq!(yaml11_number("2").unwrap().to_string(), "2");
        assert!(yaml11_number("1.0.0").is_none());
        assert!(yaml11_number("v2").is_none());
    }
}
