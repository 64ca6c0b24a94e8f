//! Credentials in journals: a header that holds one keeps only its fingerprint, the way the
//! conformance kit's reports show it (`Bearer [redacted:1a2b3c4d]`).

use std::collections::BTreeMap;

use http::HeaderMap;
use sha2::{Digest, Sha256};

/// Whether a header or key named `name` (any case) holds a credential: `Authorization`,
/// `Proxy-Authorization`, `X-Api-Key`, `api-key`, `api_key`, `apikey` or `bearer`. The
/// conformance kit's reports use the same list, so a journal and a report show one secret alike.
pub fn is_credential_header(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "authorization"
            | "proxy-authorization"
            | "x-api-key"
            | "api-key"
            | "api_key"
            | "apikey"
            | "bearer"
    )
}

/// Whether header `name`'s value `seen` is `want`: exactly, except that the scheme of an
/// `Authorization` credential is compared without regard to case ("It uses a case-insensitive
/// token to identify the authentication scheme", RFC 9110 §11.1).
pub fn same_header_value(name: &str, seen: &str, want: &str) -> bool {
    match (seen.split_once(' '), want.split_once(' ')) {
        (Some((s, s_rest)), Some((w, w_rest))) if name.eq_ignore_ascii_case("authorization") => {
            s.eq_ignore_ascii_case(w) && s_rest == w_rest
        }
        _ => seen == want,
    }
}

/// `[redacted:` and the first 8 hex digits of the SHA-256 of the token (a `Bearer ` scheme
/// aside), `]`: one value always gives one fingerprint, and 32 bits of a digest give nothing
/// back of the secret.
pub fn fingerprint(secret: &str) -> String {
    let token = strip_scheme(secret).1;
    let digest = Sha256::digest(token.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("[redacted:{hex}]")
}

/// A credential header's value as journaled: its scheme kept, its token fingerprinted
/// (`Bearer s3cr3t` → `Bearer [redacted:…]`).
pub fn redact_value(value: &str) -> String {
    let (scheme, _) = strip_scheme(value);
    format!("{scheme}{}", fingerprint(value))
}

/// `("Bearer ", "tok")` for `Bearer tok` (any case of the scheme), `("", s)` otherwise.
pub fn strip_scheme(secret: &str) -> (&str, &str) {
    match secret.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            (&secret[..scheme.len() + 1], token)
        }
        _ => ("", secret),
    }
}

/// Header map with lower-cased names (repeated headers joined with `, `) and every credential
/// header fingerprinted.
pub(crate) fn redacted_header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut map = crate::common::header_map(headers);
    for (name, value) in &mut map {
        if is_credential_header(name) {
            *value = redact_value(value);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_keeps_its_scheme_and_loses_its_token() {
        // sha256("s3cr3t") = 4e738ca5…
        assert_eq!(fingerprint("s3cr3t"), "[redacted:4e738ca5]");
        assert_eq!(redact_value("Bearer s3cr3t"), "Bearer [redacted:4e738ca5]");
        assert_eq!(redact_value("bearer s3cr3t"), "bearer [redacted:4e738ca5]");
        assert_eq!(redact_value("s3cr3t"), "[redacted:4e738ca5]");
        assert!(is_credential_header("X-Api-Key"));
        assert!(!is_credential_header("accept"));
    }
}
