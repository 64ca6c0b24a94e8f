//! An incremental Server-Sent Events decoder (WHATWG event-stream rules): `\n`, `\r\n` and `\r`
//! line ends, multi-line `data:`, comments, `id:`, `event:` and `retry:` fields.

/// One decoded event. Events with empty data (rmcp's priming event) are returned too; the
/// caller decides to skip them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` field of this event, if it had one.
    pub id: Option<String>,
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `retry:` field, if any and numeric.
    pub retry: Option<u64>,
}

/// Feeds bytes in, takes complete events out.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// A `\r` ended the last line; a following `\n` belongs to it.
    pending_cr: bool,
    current: SseEvent,
    has_data: bool,
    has_fields: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes and returns every event completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &b in bytes {
            if self.pending_cr {
                self.pending_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut events),
                b'\r' => {
                    self.pending_cr = true;
                    self.end_line(&mut events);
                }
                _ => self.buf.push(b),
            }
        }
        events
    }

    /// Bytes held for the event being read: its unfinished line and its `data:` so far.
    pub fn pending_len(&self) -> usize {
        self.buf.len() + self.current.data.len()
    }

    /// Ends the stream: an event not closed by a blank line is discarded, as the standard says;
    /// returns the bytes of the unterminated tail, if any, so the caller can report them.
    pub fn finish(&mut self) -> Option<String> {
        let tail = std::mem::take(&mut self.buf);
        let unterminated = self.has_fields || !tail.is_empty();
        self.current = SseEvent::default();
        self.has_data = false;
        self.has_fields = false;
        unterminated.then(|| String::from_utf8_lossy(&tail).into_owned())
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.buf);
        if line.is_empty() {
            if self.has_fields {
                events.push(std::mem::take(&mut self.current));
            }
            self.has_data = false;
            self.has_fields = false;
            return;
        }
        if line[0] == b':' {
            return; // comment
        }
        let line = String::from_utf8_lossy(&line);
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
                self.has_fields = true;
            }
            "id" if !value.contains('\0') => {
                self.current.id = Some(value.to_owned());
                self.has_fields = true;
            }
            "event" => {
                self.current.event = Some(value.to_owned());
                self.has_fields = true;
            }
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.current.retry = Some(ms);
                    self.has_fields = true;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_event_has_empty_data_and_keeps_its_id() {
        let mut d = SseDecoder::new();
        let ev = d.push(b"data: \nid: 0/0\nretry: 3000\n\n");
        assert_eq!(
            ev,
            vec![SseEvent {
                id: Some("0/0".into()),
                event: None,
                data: String::new(),
                retry: Some(3000)
            }]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines_across_chunk_boundaries() {
        let mut d = SseDecoder::new();
        let mut ev = d.push(b"data: {\"a\":\r\ndata:  1}\r");
        assert!(ev.is_empty());
        ev.extend(d.push(b"\n\r\n: comment\n\n"));
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "{\"a\":\n 1}");
    }

    #[test]
    fn unterminated_event_is_reported_not_dispatched() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: x\n").is_empty());
        assert_eq!(d.finish(), Some(String::new()));
        assert_eq!(d.finish(), None);
    }
}
