//! Reading a recorded `text/event-stream` body back into its events' data.

/// The `data` of each event of an SSE body, in order (multi-line data joined by `\n`; events
/// without data skipped).
pub(crate) fn data(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in body.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n"));
                current.clear();
            }
        } else if let Some(d) = line.strip_prefix("data:") {
            current.push(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    if !current.is_empty() {
        out.push(current.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_are_split_on_blank_lines_and_data_lines_joined() {
        let body =
            "event: a\r\ndata: {\"x\":1}\r\n\r\n: comment\n\ndata: one\ndata:two\n\ndata: [DONE]";
        assert_eq!(super::data(body), vec!["{\"x\":1}", "one\ntwo", "[DONE]"]);
    }
}
