//! `{{name}}` templating of scenario strings: `{{capture.x}}`, `{{mocks.argos.url}}`,
//! `{{agents.research.url}}`, `{{registry.url}}`, `{{i}}`.

use std::collections::BTreeMap;

use serde_json::Value;

/// Template variables, flat: `capture.token` → value.
pub type Vars = BTreeMap<String, String>;

/// A placeholder with no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown template variable `{{{{{name}}}}}`")]
pub struct TemplateError {
    /// The variable name.
    pub name: String,
}

/// The variable names used in `text`, in order.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        out.push(after[..end].trim().to_owned());
        rest = &after[end + 2..];
    }
    out
}

/// Replaces every `{{name}}` of `text` by its value.
pub fn render(text: &str, vars: &Vars) -> Result<String, TemplateError> {
    if !text.contains("{{") {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        out.push_str(&rest[..start]);
        let name = after[..end].trim();
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(TemplateError {
                    name: name.to_owned(),
                });
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Renders every string inside a JSON value. A string that is exactly one placeholder whose
/// value parses as a JSON number stays a string: types never change behind the author's back.
pub fn render_json(value: &Value, vars: &Vars) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(s) => Value::String(render(s, vars)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_json(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((render(k, vars)?, render_json(v, vars)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        other => other.clone(),
    })
}

/// Whether `name` is a variable the harness can provide: built-in prefixes or one of `extra`.
pub fn is_known(name: &str, captures: &[String], extra: &[String]) -> bool {
    if let Some(c) = name.strip_prefix("capture.") {
        return captures.iter().any(|x| x == c);
    }
    name.starts_with("mocks.")
        || name.starts_with("agents.")
        || name.starts_with("env.")
        || name == "registry.url"
        || name == "run.dir"
        || extra.iter().any(|x| x == name)
}

/// The strings of a scenario value (a step as JSON), where templates may sit; nested `steps` and
/// `parallel` are left out: they are checked on their own, with their own loop variables.
pub fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if k == "steps" || k == "parallel" {
                    continue;
                }
                collect_strings(x, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_listed() {
        let mut vars = Vars::new();
        vars.insert("i".into(), "7".into());
        vars.insert("mocks.argos.url".into(), "http://127.0.0.1:1/mcp".into());
        assert_eq!(render("Bearer tok-{{i}}", &vars).unwrap(), "Bearer tok-7");
        assert_eq!(
            render("{{ mocks.argos.url }}", &vars).unwrap(),
            "http://127.0.0.1:1/mcp"
        );
        assert_eq!(placeholders("a {{x}} b {{ y.z }}"), vec!["x", "y.z"]);
    }

    #[test]
    fn an_unknown_variable_is_an_error() {
        let err = render("{{nope}}", &Vars::new()).unwrap_err();
        assert_eq!(err.name, "nope");
        assert_eq!(err.to_string(), "unknown template variable `{{nope}}`");
    }

    #[test]
    fn json_strings_are_rendered_without_changing_types() {
        let mut vars = Vars::new();
        vars.insert("i".into(), "3".into());
        let v = render_json(&serde_json::json!({"a": "{{i}}", "n": 1}), &vars).unwrap();
        assert_eq!(v, serde_json::json!({"a": "3", "n": 1}));
    }
}
