//! Reasons that name the cause of an unreadable answer: not UTF-8 (with the offset of the first
//! bad byte), not JSON (the parser's message and the byte offset), nested past the parser's depth
//! limit, a connection cut after N of M bytes.

use serde_json::Value;

/// How deep serde_json nests before it gives up.
pub const JSON_DEPTH_LIMIT: usize = 128;

/// Parses `bytes` as one JSON value, or says why it is not one.
///
/// The reason is a `String` on purpose: it is itself an observation (a registry fetch's
/// `unreadable`, judged and reported as written), in the same words as [`json_reason`] and
/// [`cut_short`] give for a streamed answer.
pub fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    if let Err(e) = std::str::from_utf8(bytes) {
        let at = e.valid_up_to();
        let byte = bytes.get(at).copied().unwrap_or(0);
        return Err(format!(
            "not UTF-8: byte 0x{byte:02x} at offset {at} of {} is not valid UTF-8",
            bytes.len()
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| json_reason(&e, bytes))
}

/// Parses `bytes` as one JSON value held compactly, or says why it is not one (and gives the
/// bytes back).
pub fn parse_doc(bytes: Vec<u8>) -> Result<crate::compact::JsonDoc, (String, Vec<u8>)> {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let bytes = e.into_bytes();
            let reason = parse_json(&bytes).err().unwrap_or_default();
            return Err((reason, bytes));
        }
    };
    crate::compact::JsonDoc::try_parse(text).map_err(|(e, text)| {
        let reason = json_reason(&e, text.as_bytes());
        (reason, text.into_bytes())
    })
}

/// The reason for a serde_json error over `bytes`: nesting past the depth limit, or the
/// parser's message with the byte offset it stopped at.
pub fn json_reason(e: &serde_json::Error, bytes: &[u8]) -> String {
    let full = e.to_string();
    let message = full
        .rfind(" at line ")
        .map_or(full.as_str(), |i| &full[..i]);
    let offset = byte_offset(bytes, e.line(), e.column());
    if message.starts_with("recursion limit exceeded") {
        return format!(
            "nested too deep: more than {JSON_DEPTH_LIMIT} levels of arrays and objects (at byte {offset} of {})",
            bytes.len()
        );
    }
    format!("not JSON: {message} at byte {offset} of {}", bytes.len())
}

/// The byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    let mut current = 1;
    while current < line {
        match bytes[start..].iter().position(|b| *b == b'\n') {
            Some(i) => start += i + 1,
            None => break,
        }
        current += 1;
    }
    (start + column.saturating_sub(1)).min(bytes.len())
}

/// A body cut short: how many bytes arrived of how many announced, and the transport's words.
pub fn cut_short(read: u64, expected: Option<u64>, transport: &str) -> String {
    match expected {
        Some(total) => format!("connection reset after {read} of {total} bytes ({transport})"),
        None => format!("connection reset after {read} bytes ({transport})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unreadable_body_names_its_cause() {
        let e = parse_json(b"{\"a\":\xff}").err().unwrap_or_default();
        assert!(e.starts_with("not UTF-8: byte 0xff at offset 5"), "{e}");
        let e = parse_json(b"{\"a\":\n  @}").err().unwrap_or_default();
        assert!(e.starts_with("not JSON: expected value at byte 8"), "{e}");
        let deep = "[".repeat(500);
        let e = parse_json(deep.as_bytes()).err().unwrap_or_default();
        assert!(
            e.starts_with("nested too deep: more than 128 levels"),
            "{e}"
        );
        assert_eq!(
            cut_short(5, Some(10), "reset"),
            "connection reset after 5 of 10 bytes (reset)"
        );
        assert!(parse_json(b"{\"ok\": [1, 2]}").is_ok());
    }
}
