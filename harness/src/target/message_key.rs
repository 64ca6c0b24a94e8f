//! Where the message tool's arguments carry the message: a path of object keys.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// The path of object keys, from the top of the message tool's arguments, to the value that
/// carries the message: `["message"]` (the default), `["input"]`, or nested, e.g.
/// `["run_args", "message"]` for a tool taking `{run_args: {message}}`. Shown with its keys
/// joined by dots (`run_args.message`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageKey(Vec<String>);

impl MessageKey {
    /// A path of one or more keys; `None` for an empty one.
    pub fn new<I, S>(keys: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let keys: Vec<String> = keys.into_iter().map(Into::into).collect();
        (!keys.is_empty()).then_some(Self(keys))
    }

    /// The keys, outermost first (never empty).
    pub fn keys(&self) -> &[String] {
        &self.0
    }

    /// The path, in a profile's `message_arguments` template, to a string that is exactly
    /// `{message}`, through objects only (a value inside an array has no key path): the
    /// shallowest such path, the first in key order among equally deep ones. `None` when no
    /// string of the template is exactly `{message}` (e.g. `"Say: {message}"`).
    pub fn of_template(template: &BTreeMap<String, Value>) -> Option<Self> {
        // Breadth first: a top-level key wins over a nested one, as before paths existed.
        let mut level: Vec<(Vec<String>, &Value)> =
            template.iter().map(|(k, v)| (vec![k.clone()], v)).collect();
        while !level.is_empty() {
            if let Some((path, _)) = level.iter().find(|(_, v)| v.as_str() == Some("{message}")) {
                return Self::new(path.clone());
            }
            level = level
                .into_iter()
                .filter_map(|(path, v)| v.as_object().map(|m| (path, m)))
                .flat_map(|(path, m)| {
                    m.iter().map(move |(k, v)| {
                        let mut p = path.clone();
                        p.push(k.clone());
                        (p, v)
                    })
                })
                .collect();
        }
        None
    }
}

impl Default for MessageKey {
    /// `message`, the argument of seed 001's `send_message`.
    fn default() -> Self {
        Self(vec!["message".to_owned()])
    }
}

impl fmt::Display for MessageKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(v: Value) -> BTreeMap<String, Value> {
        serde_json::from_value(v).expect("an object")
    }

    #[test]
    fn finds_the_message_at_any_depth_the_shallowest_first() {
        let key = |v| MessageKey::of_template(&template(v)).map(|k| k.to_string());
        assert_eq!(
            key(json!({"agent_id": "{agent}", "message": "{message}"})),
            Some("message".into())
        );
        assert_eq!(
            key(json!({"run_args": {"message": "{message}"}})),
            Some("run_args.message".into())
        );
        assert_eq!(
            key(json!({"a": {"b": {"c": "{message}"}}, "z": {"input": "{message}"}})),
            Some("z.input".into())
        );
        // Not exactly `{message}`, or only inside an array: no key path.
        assert_eq!(key(json!({"input": "Say: {message}"})), None);
        assert_eq!(key(json!({"messages": ["{message}"]})), None);
        assert_eq!(MessageKey::new(Vec::<String>::new()), None);
        assert_eq!(MessageKey::default().keys(), ["message"]);
    }
}
