//! Secret redaction: bearers and API keys never reach a report, a log line or a terminal.

use std::sync::LazyLock;

use regex::Regex;

/// What a redacted secret is replaced with, before its fingerprint (`[redacted:1a2b3c4d]`).
pub const REDACTED: &str = "[redacted]";

/// Whether a header or key named `name` holds a credential (any case): `Authorization`,
/// `Proxy-Authorization`, `X-Api-Key`, `api-key`, `api_key`, `apikey` or `bearer`. Its value is
/// never written as it is: reports show its fingerprint. The mocks' journals use the same list.
pub use pallas_mocks::redact::is_credential_header as is_credential_name;

/// A secret's stand-in in a report: `[redacted:` and the first 8 hex digits of the SHA-256 of
/// the token (a `Bearer ` scheme aside), `]` — the form the mocks' journals show it in too.
pub use pallas_mocks::redact::fingerprint;

use pallas_mocks::redact::strip_scheme;

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
        let trimmed = strip_scheme(&secret).1.to_owned();
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
                    if c[3].starts_with('[') {
                        c[0].to_owned()
                    } else {
                        format!("{}{scheme}{}", &c[1], fingerprint(&c[3]))
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
                        let sensitive = is_credential_name(k);
                        let v = match v {
                            Value::String(s) if sensitive && !s.starts_with('[') => {
                                let (scheme, token) = strip_scheme(s);
                                if token.starts_with('[') {
                                    Value::String(s.clone())
                                } else {
                                    Value::String(format!("{scheme}{}", fingerprint(token)))
                                }
                            }
                            Value::String(s) if sensitive => Value::String(s.clone()),
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
        if whole {
            let (scheme, _) = strip_scheme(secret);
            out.push_str(scheme);
            out.push_str(&fingerprint(secret));
        } else {
            out.push_str(secret);
        }
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
        let fp = fingerprint("tok-alice-1");
        assert_eq!(
            r.text("Authorization: Bearer tok-alice-1, then tok-alice-1"),
            format!("Authorization: Bearer {fp}, then {fp}")
        );
        assert_eq!(
            Redactor::new().text("authorization: Bearer unknown.jwt"),
            format!("authorization: Bearer {}", fingerprint("unknown.jwt"))
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
        assert!(out.contains(&fingerprint("tok-7")), "{out}");
        assert!(out.contains(&fingerprint("sk-live-abc")), "{out}");
    }

    #[test]
    fn one_value_one_fingerprint_and_two_values_two() {
        assert_eq!(fingerprint("Bearer tok-7"), fingerprint("tok-7"));
        assert_ne!(fingerprint("tok-7"), fingerprint("tok-8"));
        let fp = fingerprint("tok-7");
        assert!(
            fp.starts_with("[redacted:") && fp.len() == "[redacted:]".len() + 8,
            "{fp}"
        );
        // Redacting twice changes nothing.
        let mut r = Redactor::new();
        r.add("tok-7");
        let once = r.text("authorization: Bearer tok-7");
        assert_eq!(r.text(&once), once);
        let v = serde_json::json!({"authorization": "Bearer tok-7"});
        assert_eq!(r.json(&r.json(&v)), r.json(&v));
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
        assert_eq!(out["headers"]["authorization"], fingerprint("Basic xyz"));
        assert_eq!(out["ok"], "fine");
        let v = serde_json::json!({"Proxy-Authorization": "k1", "API-Key": "k2", "key": "k3"});
        let out = Redactor::new().json(&v);
        assert_eq!(out["Proxy-Authorization"], fingerprint("k1"));
        assert_eq!(out["API-Key"], fingerprint("k2"));
        assert_eq!(
            out["key"], "k3",
            "a key that names no credential keeps its value"
        );
    }
}
