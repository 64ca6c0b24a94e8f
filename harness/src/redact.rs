//! Secret redaction: bearers and API keys never reach a report, a log line or a terminal.

use std::sync::LazyLock;

use regex::Regex;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values in credential positions: `Authorization: Bearer …`, `"authorization": "…"`,
/// `api_key: …`, `x-api-key=…`. The key decides; ordinary words are never touched.
static CREDENTIAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)("?\b(?:api[_-]?key|x-api-key|(?:proxy-)?authorization)"?\s*[:=]\s*"?)((?:bearer|basic)\s+)?([^"\s,}\]]+)"#,
    )
    .ok()
});

/// A set of known secret values (bearers and keys a scenario uses) plus generic patterns
/// (`Bearer …`, `api_key: …`), applied to every string a report shows.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor that knows no specific secret (generic patterns only).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a secret value; values shorter than 3 characters are ignored (too common to redact).
    pub fn add(&mut self, secret: impl Into<String>) {
        let secret = secret.into();
        let trimmed = secret
            .strip_prefix("Bearer ")
            .or_else(|| secret.strip_prefix("bearer "))
            .unwrap_or(&secret)
            .to_owned();
        for s in [secret, trimmed] {
            if s.chars().count() >= 3 && !self.secrets.contains(&s) {
                self.secrets.push(s);
            }
        }
        // Longest first, so a secret containing another is replaced whole.
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// The secrets this redactor knows.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// Redacts one string.
    pub fn text(&self, input: &str) -> String {
        let mut out = input.to_owned();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = replace_token(&out, s);
            }
        }
        if let Some(re) = CREDENTIAL.as_ref() {
            out = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let scheme = c.get(2).map_or("", |m| m.as_str());
                    if &c[3] == REDACTED || c[3].starts_with('[') {
                        c[0].to_owned()
                    } else {
                        format!("{}{scheme}{REDACTED}", &c[1])
                    }
                })
                .into_owned();
        }
        out
    }

    /// Redacts every string inside a JSON value (keys named like credentials lose their value).
    pub fn json(&self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let lower = k.to_ascii_lowercase();
                        let sensitive = matches!(
                            lower.as_str(),
                            "authorization" | "x-api-key" | "api_key" | "apikey" | "bearer"
                        );
                        let v = match v {
                            Value::String(_) if sensitive => Value::String(REDACTED.to_owned()),
                            other => self.json(other),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// A character that can continue a token (so a secret inside a longer word is not that secret).
fn token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
}

/// Replaces whole-token occurrences of `secret` in `text`.
fn replace_token(text: &str, secret: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(secret) {
        let before = rest[..i]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let after = rest[i + secret.len()..].chars().next();
        let whole = !before.is_some_and(token_char) && !after.is_some_and(token_char);
        out.push_str(&rest[..i]);
        out.push_str(if whole { REDACTED } else { secret });
        rest = &rest[i + secret.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_words_are_never_redacted() {
        let mut r = Redactor::new();
        r.add("Bearer tok-alice-1");
        r.add("sk-kit-auth");
        let title = "a call without a bearer forwards none, even after calls that had one";
        assert_eq!(r.text(title), title);
        assert_eq!(
            r.text("the bearer token forwarded to mnemosyne; authorization is opt-in"),
            "the bearer token forwarded to mnemosyne; authorization is opt-in"
        );
        assert_eq!(r.text("key sk-kit-authority"), "key sk-kit-authority");
        assert_eq!(
            r.text("Authorization: Bearer tok-alice-1, then tok-alice-1"),
            "Authorization: [redacted], then [redacted]"
        );
        assert_eq!(
            Redactor::new().text("authorization: Bearer unknown.jwt"),
            "authorization: Bearer [redacted]"
        );
    }

    #[test]
    fn known_secrets_and_bearer_headers_are_redacted() {
        let mut r = Redactor::new();
        r.add("Bearer tok-7");
        r.add("sk-live-abc");
        let out = r.text("sent Authorization: Bearer tok-7 with key sk-live-abc; token tok-7");
        assert!(!out.contains("tok-7"), "{out}");
        assert!(!out.contains("sk-live-abc"), "{out}");
        assert!(out.contains(REDACTED));
    }

    #[test]
    fn unknown_bearers_are_redacted_by_pattern() {
        let out = Redactor::new().text("authorization: Bearer abc.def-123");
        assert!(!out.contains("abc.def-123"), "{out}");
    }

    #[test]
    fn credential_keys_in_json_lose_their_value() {
        let v = serde_json::json!({"headers": {"authorization": "Basic xyz"}, "ok": "fine"});
        let out = Redactor::new().json(&v);
        assert_eq!(out["headers"]["authorization"], REDACTED);
        assert_eq!(out["ok"], "fine");
    }
}
