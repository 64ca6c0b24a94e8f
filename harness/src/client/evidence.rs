//! Bounded text for transcripts, evidence and reports: anything longer than its limit is cut
//! at a character boundary and followed by its full size (`… (209,715,200 bytes)`), so a huge
//! answer never makes a huge report.

/// How long one evidence string may be in a verdict or report.
pub const EVIDENCE_MAX: usize = 4 * 1024;

/// `text` when it fits in `max` bytes; else its first `max` bytes (at a character boundary)
/// followed by `… (N bytes)`, N its full size.
pub fn bounded_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], thousands(text.len()))
}

/// Like [`bounded_text`] for bytes that may not be UTF-8 (invalid sequences shown as U+FFFD).
pub fn bounded_bytes(bytes: &[u8], max: usize) -> String {
    if bytes.len() <= max {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    format!(
        "{}… ({} bytes)",
        String::from_utf8_lossy(&bytes[..max]).trim_end_matches('\u{fffd}'),
        thousands(bytes.len())
    )
}

/// Cuts `text` in place when it is longer than `max` (see [`bounded_text`]).
pub fn bound_in_place(text: &mut String, max: usize) {
    if text.len() > max {
        *text = bounded_text(text, max);
    }
}

/// `209715200` as `209,715,200`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_its_full_size_stated() {
        assert_eq!(bounded_text("short", 10), "short");
        assert_eq!(bounded_text("abcdefghij", 4), "abcd… (10 bytes)");
        assert_eq!(bounded_text("ééé", 3), "é… (6 bytes)");
        assert_eq!(thousands(209_715_200), "209,715,200");
        assert_eq!(thousands(999), "999");
        assert_eq!(bounded_bytes(b"ab\xffcd", 3), "ab… (5 bytes)");
        let mut s = "x".repeat(5000);
        bound_in_place(&mut s, 10);
        assert_eq!(s, "xxxxxxxxxx… (5,000 bytes)");
    }
}
