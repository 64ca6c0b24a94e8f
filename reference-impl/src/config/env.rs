//! Environment lookup (process environment first, then `.env`) and `${VAR}` expansion.

use std::collections::HashMap;
use std::path::Path;

use super::error::ConfigError;

/// The variables configuration values can refer to: the process environment, plus the `.env`
/// file of the working directory for names the environment does not set (it never overrides).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// The process environment plus `dir/.env`.
    pub fn from_process(dir: &Path) -> Result<Self, ConfigError> {
        Self::with_vars(std::env::vars().collect(), dir)
    }

    /// `vars` (standing for the process environment) plus `dir/.env`.
    pub fn with_vars(mut vars: HashMap<String, String>, dir: &Path) -> Result<Self, ConfigError> {
        let path = if crate::defect!("ms-dotenv-from-executable-dir") {
            // `ms-dotenv-from-executable-dir`: `load_dotenv()`'s search from the installed code.
            dotenv_above_executable().unwrap_or_default()
        } else {
            dir.join(".env")
        };
        if path.is_file() && crate::defect!("mr-dotenv-quotes-kept") {
            // `mr-dotenv-quotes-kept`: a plain `KEY=VALUE` split, quotes and comments kept.
            let text = std::fs::read_to_string(&path).map_err(|e| {
                ConfigError::file(&path, format!("cannot read .env: {e}"))
                    .with_hint("fix or remove the .env file")
            })?;
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                if let Some((key, value)) = line.split_once('=') {
                    vars.entry(key.trim().to_owned())
                        .or_insert_with(|| value.to_owned());
                }
            }
        } else if path.is_file() {
            let iter = dotenvy::from_path_iter(&path).map_err(|e| {
                ConfigError::file(&path, format!("cannot read .env: {e}"))
                    .with_hint("fix or remove the .env file")
            })?;
            for (n, item) in iter.enumerate() {
                let (key, value) = item.map_err(|e| {
                    ConfigError::file(&path, format!("invalid .env entry (entry {}): {e}", n + 1))
                        .with_hint("each line must be NAME=value")
                })?;
                // `qx-dotenv-splits-on-every-equals`: `key, value = line.split('=')[:2]`.
                let value = if crate::defect!("qx-dotenv-splits-on-every-equals") {
                    value.split('=').next().unwrap_or_default().to_owned()
                } else {
                    value
                };
                if crate::defect!("dotenv-overrides-env") {
                    vars.insert(key, value);
                    continue;
                }
                vars.entry(key).or_insert(value);
            }
        }
        Ok(Self { vars })
    }

    /// `vars` alone, without any `.env` (`qx-placeholders-expanded-before-dotenv`).
    #[cfg(feature = "defects")]
    pub(crate) fn without_dotenv(vars: HashMap<String, String>) -> Self {
        Self { vars }
    }

    /// The value of `name`; empty values count as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// `ms-dotenv-from-executable-dir`: the first `.env` in the executable's directory or above it,
/// as python-dotenv's `find_dotenv()` searches from the calling module's file.
fn dotenv_above_executable() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .map(|dir| dir.join(".env"))
        .find(|path| path.is_file())
}

/// Why a `${VAR}` reference could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// The variable is unset and the reference has no default.
    Unset(String),
    /// `${` without a closing `}` or with an invalid name.
    Malformed,
}

/// Expands `${VAR}`, `${VAR:-default}` and `${VAR:default}` in `value`. `$$` is a literal `$`.
pub(crate) fn expand(value: &str, env: &Env) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(stripped) = after.strip_prefix('$') {
            out.push('$');
            rest = stripped;
            continue;
        }
        let Some(body_start) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let end = body_start.find('}').ok_or(ExpandError::Malformed)?;
        let body = &body_start[..end];
        let (name, default) = match body.split_once(":-").or_else(|| body.split_once(':')) {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ExpandError::Malformed);
        }
        // `mr-placeholder-upper-letters-only`: only `${[A-Z_]+}` is a placeholder.
        if crate::defect!("mr-placeholder-upper-letters-only")
            && !name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        {
            out.push_str(&rest[i..i + 2 + end + 1]);
            rest = &body_start[end + 1..];
            continue;
        }
        match (env.get(name), default) {
            (Some(v), _) => out.push_str(v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(ExpandError::Unset(name.to_owned())),
        }
        rest = &body_start[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env {
            vars: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn references_expand_with_defaults_and_escapes() {
        let e = env(&[("A", "1"), ("EMPTY", "")]);
        assert_eq!(expand("x${A}y", &e).unwrap(), "x1y");
        assert_eq!(expand("${B:-dflt}", &e).unwrap(), "dflt");
        assert_eq!(expand("${B:dflt}", &e).unwrap(), "dflt");
        assert_eq!(expand("$$A $A", &e).unwrap(), "$A $A");
        assert_eq!(
            expand("${EMPTY}", &e),
            Err(ExpandError::Unset("EMPTY".into()))
        );
        assert_eq!(expand("${B}", &e), Err(ExpandError::Unset("B".into())));
        assert_eq!(expand("${A", &e), Err(ExpandError::Malformed));
        assert_eq!(expand("${A B}", &e), Err(ExpandError::Malformed));
    }

    #[test]
    fn dotenv_fills_only_unset_variables() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "A=from-file\nB=from-file\n").unwrap();
        let env =
            Env::with_vars([("A".to_owned(), "from-env".to_owned())].into(), dir.path()).unwrap();
        assert_eq!(env.get("A"), Some("from-env"));
        assert_eq!(env.get("B"), Some("from-file"));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn text_without_dollar_signs_is_left_alone(s in "[^$]*") {
            prop_assert_eq!(expand(&s, &Env::default()).unwrap(), s);
        }

        #[test]
        fn expansion_never_panics(s in "\\PC*") {
            let env = Env { vars: [("A".to_owned(), "x".to_owned())].into() };
            let _ = expand(&s, &env);
        }
    }
}
