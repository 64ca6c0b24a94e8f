//! The HTTP side of the client: one recorded exchange per request, JSON or SSE answers read
//! message by message.

use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;
use std::str::FromStr;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

use super::evidence;
use super::*;

/// How much of a non-streamed body the transcript keeps; its full size is stated after it.
const RECORDED_BODY_MAX: usize = 64 * 1024;

/// Build-once HTTP client plus the shared recorder. Cheap to clone.
#[derive(Debug, Clone)]
pub struct WireClient {
    http: reqwest::Client,
    recorder: Recorder,
    default_timeout: Duration,
    after_response_grace: Duration,
    limits: ReadLimits,
}

impl WireClient {
    /// A client recording into `recorder`; calls without their own timeout use `default_timeout`.
    pub fn new(recorder: Recorder, default_timeout: Duration) -> Result<Self, ClientError> {
        let http = pallas_mocks::http_client::builder()
            .no_proxy()
            .connect_timeout(default_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))?;
        Ok(Self {
            http,
            recorder,
            default_timeout,
            after_response_grace: DEFAULT_AFTER_RESPONSE_GRACE,
            limits: ReadLimits::default(),
        })
    }

    /// Changes how much of each answer is read.
    pub fn with_limits(mut self, limits: ReadLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The read limits.
    pub fn limits(&self) -> &ReadLimits {
        &self.limits
    }

    /// Changes how long a stream is still read after its response arrived.
    pub fn with_after_response_grace(mut self, grace: Duration) -> Self {
        self.after_response_grace = grace;
        self
    }

    /// The shared recorder.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The timeout of calls that set none.
    pub fn default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// Sends one HTTP request, records it, and reads the response (JSON, SSE or text) until the
    /// JSON-RPC response to `request.response_id` arrived and the stream ended, or the deadline.
    pub async fn send(
        &self,
        label: &str,
        request: RawRequest,
        live: Option<&UnboundedSender<TimedMessage>>,
    ) -> Result<Exchange, ClientError> {
        let max = self.limits.answer_bytes();
        self.send_bounded(label, request, live, max).await
    }

    /// [`WireClient::send`] reading at most `max` bytes of the answer.
    #[expect(
        clippy::too_many_lines,
        reason = "one answer read under its limits: status and headers, then a JSON body or the SSE stream, whose reading state is local to it"
    )]
    async fn send_bounded(
        &self,
        label: &str,
        request: RawRequest,
        live: Option<&UnboundedSender<TimedMessage>>,
        max: u64,
    ) -> Result<Exchange, ClientError> {
        let timeout = request.timeout.unwrap_or(self.default_timeout);
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.as_str());
        for (name, value) in &request.headers {
            let header_name = reqwest::header::HeaderName::from_str(name).map_err(|e| {
                ClientError::InvalidHeader {
                    name: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            let header_value = reqwest::header::HeaderValue::from_str(value).map_err(|e| {
                ClientError::InvalidHeader {
                    name: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            builder = builder.header(header_name, header_value);
        }
        for (name, value) in &request.headers {
            if let Some(secret) = observe::header_secret(name, value) {
                self.recorder.add_secret(&secret);
            }
        }
        let request_body = request
            .body
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        if let Some(body) = request.body.clone() {
            builder = builder.body(body);
        }
        if let Some(sent) = &request.sent {
            self.recorder
                .record(label, WireEventKind::Sent(sent.clone()));
        }

        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started + timeout);
        let mut http = HttpExchange {
            method: request.method.to_string(),
            url: request.url.clone(),
            request_headers: redact_headers(&request.headers),
            request_body,
            status: None,
            response_headers: Vec::new(),
            content_type: None,
            response_body: None,
            elapsed_ms: 0.0,
            completed_ms: None,
            error: None,
        };
        let response = match tokio::time::timeout_at(deadline, builder.send()).await {
            Err(_) => {
                http.elapsed_ms = ms_since(started);
                http.error = Some(format!("timeout after {} ms", timeout.as_millis()));
                self.recorder.record(label, WireEventKind::Http(http));
                return Ok(Exchange::timed_out(ms_since(started)));
            }
            Ok(Err(e)) => {
                http.elapsed_ms = ms_since(started);
                let reason = error_chain(&e);
                http.error = Some(reason.clone());
                self.recorder.record(label, WireEventKind::Http(http));
                return Err(ClientError::Transport {
                    url: request.url,
                    reason,
                });
            }
            Ok(Ok(response)) => response,
        };

        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        http.status = Some(status);
        http.response_headers = redact_headers(&headers);
        http.content_type = content_type.clone();
        http.elapsed_ms = ms_since(started);
        let http_seq = self.recorder.record(label, WireEventKind::Http(http));

        let mut exchange = Exchange {
            status,
            headers,
            content_type: content_type.clone(),
            elapsed_ms: 0.0,
            messages: Vec::new(),
            response: None,
            body_text: None,
            body_bytes: 0,
            timed_out: false,
            problem: None,
            stream_ended: false,
        };
        let mime = content_type.as_deref().map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        let announced = response.content_length();
        let too_large = |what: &str, read: u64| {
            let e = ClientError::TooLarge {
                url: request.url.clone(),
                what: what.to_owned(),
                limit: max,
                read,
            };
            let reason = e.to_string();
            self.recorder.update_http(http_seq, |h| {
                h.error = Some(reason);
                h.completed_ms = Some(ms_since(started));
            });
            e
        };
        if let Some(n) = announced.filter(|n| *n > max) {
            return Err(too_large(&format!("the body (Content-Length {n})"), 0));
        }
        let mut reader = MessageSink {
            recorder: &self.recorder,
            label,
            http_seq,
            response_id: request.response_id.as_ref(),
            live,
            exchange: &mut exchange,
        };
        let mut stream = response.bytes_stream();
        let mut read: u64 = 0;
        if mime.as_deref() == Some("text/event-stream") {
            let grace = self.after_response_grace;
            let event_max = self.limits.sse_event_bytes().min(max);
            let mut decoder = SseDecoder::new();
            let mut read_deadline = deadline;
            loop {
                match tokio::time::timeout_at(read_deadline, stream.next()).await {
                    Err(_) => {
                        if reader.exchange.response.is_none() {
                            reader.exchange.timed_out = true;
                        }
                        break;
                    }
                    Ok(None) => {
                        if let Some(tail) = decoder.finish() {
                            reader.malformed(tail, "stream ended inside an unterminated event");
                        }
                        reader.exchange.stream_ended = reader.exchange.response.is_some();
                        break;
                    }
                    Ok(Some(Err(e))) => {
                        let reason = reasons::cut_short(read, None, &error_chain(&e));
                        reader
                            .exchange
                            .problem
                            .get_or_insert_with(|| reason.clone());
                        self.recorder.update_http(http_seq, |h| {
                            h.error = Some(reason);
                        });
                        break;
                    }
                    Ok(Some(Ok(chunk))) => {
                        read += chunk.len() as u64;
                        if read > max {
                            return Err(too_large("the SSE stream", read));
                        }
                        for event in decoder.push(&chunk) {
                            let had_response = reader.exchange.response.is_some();
                            reader.sse_event(event);
                            if !had_response && reader.exchange.response.is_some() {
                                read_deadline =
                                    read_deadline.min(tokio::time::Instant::now() + grace);
                            }
                        }
                        if decoder.pending_len() as u64 > event_max {
                            let e = ClientError::TooLarge {
                                url: request.url.clone(),
                                what: "one SSE event".into(),
                                limit: event_max,
                                read: decoder.pending_len() as u64,
                            };
                            let reason = e.to_string();
                            self.recorder
                                .update_http(http_seq, |h| h.error = Some(reason));
                            return Err(e);
                        }
                    }
                }
            }
        } else {
            let mut bytes: Vec<u8> = Vec::new();
            let body = loop {
                match tokio::time::timeout_at(deadline, stream.next()).await {
                    Err(_) => {
                        reader.exchange.timed_out = true;
                        break None;
                    }
                    Ok(None) => break Some(bytes),
                    Ok(Some(Err(e))) => {
                        let reason = reasons::cut_short(read, announced, &error_chain(&e));
                        reader.exchange.problem = Some(reason.clone());
                        self.recorder
                            .update_http(http_seq, |h| h.error = Some(reason));
                        break None;
                    }
                    Ok(Some(Ok(chunk))) => {
                        read += chunk.len() as u64;
                        if read > max {
                            return Err(too_large("the body", read));
                        }
                        bytes.extend_from_slice(&chunk);
                    }
                }
            };
            if let Some(bytes) = body {
                self.recorder.update_http(http_seq, |h| {
                    h.response_body = Some(evidence::bounded_bytes(&bytes, RECORDED_BODY_MAX))
                });
                let is_json =
                    request.jsonrpc && mime.as_deref().is_some_and(|m| m.ends_with("json"));
                if is_json && !bytes.iter().all(u8::is_ascii_whitespace) {
                    match reasons::parse_doc(bytes) {
                        Ok(doc) => reader.message(doc, None),
                        Err((reason, bytes)) => {
                            reader.malformed(
                                evidence::bounded_bytes(&bytes, RECORDED_BODY_MAX),
                                &reason,
                            );
                            reader.exchange.problem = Some(reason);
                            reader.exchange.body_text =
                                Some(String::from_utf8_lossy(&bytes).into_owned());
                        }
                    }
                } else if !bytes.is_empty() {
                    reader.exchange.body_text = Some(match String::from_utf8(bytes) {
                        Ok(text) => text,
                        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                    });
                }
            }
        }
        let completed = ms_since(started);
        exchange.elapsed_ms = completed;
        exchange.body_bytes = read;
        self.recorder
            .update_http(http_seq, |h| h.completed_ms = Some(completed));
        Ok(exchange)
    }

    /// A plain GET with the given headers (used for the registry and `/metrics`).
    pub async fn get(
        &self,
        label: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Option<Duration>,
    ) -> Result<Exchange, ClientError> {
        let max = self.limits.answer_bytes();
        self.get_bounded(label, url, headers, timeout, max).await
    }

    /// [`WireClient::get`] reading at most `max` bytes of the body.
    pub async fn get_bounded(
        &self,
        label: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Option<Duration>,
        max: u64,
    ) -> Result<Exchange, ClientError> {
        self.send_bounded(
            label,
            RawRequest {
                method: reqwest::Method::GET,
                url: url.to_owned(),
                headers,
                body: None,
                sent: None,
                response_id: None,
                timeout,
                jsonrpc: false,
            },
            None,
            max,
        )
        .await
    }
}

/// One HTTP request as [`WireClient::send`] takes it.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// HTTP method.
    pub method: reqwest::Method,
    /// URL.
    pub url: String,
    /// Headers, in order (secret values are redacted only in the recording).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Option<Bytes>,
    /// The JSON-RPC message the body holds, recorded as [`WireEventKind::Sent`].
    pub sent: Option<Value>,
    /// The id whose JSON-RPC response ends the exchange.
    pub response_id: Option<Value>,
    /// Deadline of the whole exchange; the client's default when `None`.
    pub timeout: Option<Duration>,
    /// The response carries JSON-RPC: parse JSON bodies into messages. When false (registry,
    /// metrics) the body stays text in [`Exchange::body_text`].
    pub jsonrpc: bool,
}

struct MessageSink<'a> {
    recorder: &'a Recorder,
    label: &'a str,
    http_seq: u64,
    response_id: Option<&'a Value>,
    live: Option<&'a UnboundedSender<TimedMessage>>,
    exchange: &'a mut Exchange,
}

impl MessageSink<'_> {
    fn sse_event(&mut self, event: SseEvent) {
        self.recorder.record(
            self.label,
            WireEventKind::SseEvent(SseEventRecord {
                http_seq: self.http_seq,
                id: event.id.clone(),
                event: event.event.clone(),
                data: evidence::bounded_text(&event.data, RECORDED_BODY_MAX),
                retry: event.retry,
            }),
        );
        if event.data.trim().is_empty() {
            return; // priming event or keep-alive
        }
        match JsonDoc::try_parse(event.data) {
            Ok(doc) => self.message(doc, event.id),
            Err((e, data)) => {
                let reason = format!(
                    "SSE event data: {}",
                    reasons::json_reason(&e, data.as_bytes())
                );
                self.exchange.problem.get_or_insert_with(|| reason.clone());
                self.malformed(evidence::bounded_text(&data, RECORDED_BODY_MAX), &reason);
            }
        }
    }

    fn message(&mut self, message: JsonDoc, sse_event_id: Option<String>) {
        let message = SharedMessage::new(message);
        let at_ms = self.recorder.now_ms();
        self.recorder.record(
            self.label,
            WireEventKind::Received {
                message: message.clone(),
                sse_event_id: sse_event_id.clone(),
                http_seq: self.http_seq,
            },
        );
        let is_response = message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some());
        if is_response {
            let id = message.get("id");
            let ours = self
                .response_id
                .is_some_and(|r| id.is_some_and(|id| id == *r));
            if ours && self.exchange.response.is_none() {
                self.exchange.response = Some(SharedMessage::clone(&message));
            } else if !ours && self.exchange.problem.is_none() {
                let expected = self
                    .response_id
                    .map_or_else(|| "none".to_owned(), Value::to_string);
                self.exchange.problem = Some(format!(
                    "an answer with id {} matches no request (this request's id is {expected})",
                    id.map_or_else(|| "(none)".to_owned(), |id| id.to_string())
                ));
            }
        }
        let timed = TimedMessage {
            at_ms,
            message,
            sse_event_id,
        };
        if let Some(tx) = self.live {
            // The receiver may have gone; the exchange still records everything.
            let _ = tx.send(timed.clone());
        }
        self.exchange.messages.push(timed);
    }

    fn malformed(&mut self, text: String, reason: &str) {
        self.recorder.record(
            self.label,
            WireEventKind::Malformed {
                http_seq: self.http_seq,
                text,
                reason: reason.to_owned(),
            },
        );
    }
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
