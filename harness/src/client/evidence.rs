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

/// The size of `v` serialised as compact JSON, counted without building the text.
pub fn serialized_len<T: serde::Serialize + ?Sized>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Some items of a JSON value, boxed.
pub type Items<'a, T> = Box<dyn Iterator<Item = T> + 'a>;

/// A JSON value a preview can walk: a `&Value` or a value of a received document.
pub trait Walk<'a>: Copy + serde::Serialize {
    /// The string, when it is one.
    fn string(self) -> Option<&'a str>;
    /// The number of elements and the elements, when it is an array.
    fn items(self) -> Option<(usize, Items<'a, Self>)>;
    /// The number of members and the members, when it is an object.
    fn members(self) -> Option<(usize, Items<'a, (&'a str, Self)>)>;
    /// A copy of a value that is neither (a number, a boolean, `null`).
    fn scalar(self) -> serde_json::Value;
}

impl<'a> Walk<'a> for &'a serde_json::Value {
    fn string(self) -> Option<&'a str> {
        self.as_str()
    }
    fn items(self) -> Option<(usize, Items<'a, Self>)> {
        self.as_array()
            .map(|a| (a.len(), Box::new(a.iter()) as Box<dyn Iterator<Item = _>>))
    }
    fn members(self) -> Option<(usize, Items<'a, (&'a str, Self)>)> {
        self.as_object().map(|m| {
            (
                m.len(),
                Box::new(m.iter().map(|(k, v)| (k.as_str(), v))) as Box<dyn Iterator<Item = _>>,
            )
        })
    }
    fn scalar(self) -> serde_json::Value {
        self.clone()
    }
}

impl<'a> Walk<'a> for super::JsonRef<'a> {
    fn string(self) -> Option<&'a str> {
        self.as_str()
    }
    fn items(self) -> Option<(usize, Items<'a, Self>)> {
        self.as_array()
            .map(|a| (a.len(), Box::new(a.iter()) as Box<dyn Iterator<Item = _>>))
    }
    fn members(self) -> Option<(usize, Items<'a, (&'a str, Self)>)> {
        self.as_object()
            .map(|o| (o.len(), Box::new(o.iter()) as Box<dyn Iterator<Item = _>>))
    }
    fn scalar(self) -> serde_json::Value {
        self.to_value()
    }
}

/// A small copy of `v` for display: at most about `budget` bytes of it, long strings cut (with
/// their size), arrays and objects shortened with a note of what was left out. Costs in
/// proportion to `budget`, not to `v`.
pub fn preview<'a>(v: impl Walk<'a>, budget: usize) -> serde_json::Value {
    let mut left = budget;
    preview_in(v, &mut left, 0)
}

fn preview_in<'a>(v: impl Walk<'a>, left: &mut usize, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    if let Some(s) = v.string() {
        let keep = (*left).max(16);
        let out = bounded_text(s, keep);
        *left = left.saturating_sub(out.len() + 2);
        return Value::String(out);
    }
    if let Some((len, items)) = v.items() {
        if depth > 32 {
            return Value::String(format!("[… {len} items]"));
        }
        let mut out = Vec::new();
        for item in items {
            if *left == 0 {
                break;
            }
            out.push(preview_in(item, left, depth + 1));
            *left = left.saturating_sub(1);
        }
        if out.len() < len {
            out.push(Value::String(format!(
                "… ({} more items)",
                thousands(len - out.len())
            )));
        }
        return Value::Array(out);
    }
    if let Some((len, members)) = v.members() {
        if depth > 32 {
            return Value::String(format!("{{… {len} keys}}"));
        }
        let mut out = serde_json::Map::new();
        for (k, item) in members {
            if *left == 0 {
                out.insert(
                    "…".into(),
                    Value::String(format!("({} more keys)", len.saturating_sub(out.len()))),
                );
                break;
            }
            *left = left.saturating_sub(k.len() + 4);
            out.insert(k.to_owned(), preview_in(item, left, depth + 1));
        }
        return Value::Object(out);
    }
    *left = left.saturating_sub(8);
    v.scalar()
}

/// A redacted preview of a step's output for a transcript (only the preview is redacted, so a
/// huge output costs nothing here); when the preview had to shorten it, its full size is stated.
pub fn shown_json(
    output: &serde_json::Value,
    redactor: &crate::redact::Redactor,
) -> serde_json::Value {
    shown_preview(
        &preview(output, SHOWN_BUDGET),
        serialized_len(output),
        redactor,
    )
}

/// How much of a step's output a transcript shows.
pub const SHOWN_BUDGET: usize = 1200;

/// [`shown_json`] from a preview already made and the whole output's size in bytes.
pub fn shown_preview(
    preview: &serde_json::Value,
    full: usize,
    redactor: &crate::redact::Redactor,
) -> serde_json::Value {
    let mut shown = redactor.json(preview);
    if full > SHOWN_BUDGET && shown.is_object() {
        shown["…"] =
            serde_json::Value::String(format!("output of {} bytes shortened", thousands(full)));
    }
    shown
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
        let big = serde_json::json!({"items": vec!["x".repeat(100); 10_000], "n": 1});
        assert_eq!(serialized_len(&big), big.to_string().len());
        let small = preview(&big, 500).to_string();
        assert!(small.len() < 1000, "{small}");
        assert!(small.contains("more items)"), "{small}");
        let mut s = "x".repeat(5000);
        bound_in_place(&mut s, 10);
        assert_eq!(s, "xxxxxxxxxx… (5,000 bytes)");
    }
}
