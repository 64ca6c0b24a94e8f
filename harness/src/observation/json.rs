//! The JSON face of a step's observation: the step output that `output:` assertions,
//! `capture:` and `until:` query and that reports show.
//!
//! The keys of an exchange's output that hold received messages ([`MESSAGE_KEYS`]) are the
//! large ones: a 26 MB answer is in `response`, `result` and `messages` alike. The runner keeps
//! the output without them ([`Observation::to_light_json`]) and builds only what a path reaches
//! ([`output_query`]): `$.result…` and `$.response…` are read in place in the shared message,
//! another message key is built alone, and only a path that names no key builds them all.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::Observation;
use super::path::{descend, first_key, missed};
use super::step::first_text;
use crate::client::{Exchange, JsonDoc, JsonRef, TimedMessage, evidence};

/// The keys of an exchange's step output that hold received messages, built on demand.
pub const MESSAGE_KEYS: [&str; 7] = [
    "response",
    "result",
    "messages",
    "notifications",
    "progress",
    "after_response",
    "progress_after_cancel",
];

/// Which message keys an output is built with.
#[derive(Debug, Clone, Copy)]
enum Keys<'a> {
    /// Every key.
    All,
    /// None of [`MESSAGE_KEYS`].
    Light,
    /// The light keys and this one.
    Only(&'a str),
}

impl Keys<'_> {
    fn has(self, key: &str) -> bool {
        match self {
            Self::All => true,
            Self::Light => !MESSAGE_KEYS.contains(&key),
            Self::Only(k) => k == key || !MESSAGE_KEYS.contains(&key),
        }
    }
}

/// How a message becomes part of the output: copied whole, or previewed for display.
#[derive(Debug, Clone, Copy)]
enum Take {
    Whole,
    /// [`evidence::preview`] of each message with this budget; lists cut after [`PREVIEW_ITEMS`].
    Preview(usize),
}

impl Take {
    fn one(self, v: JsonRef<'_>) -> Value {
        match self {
            Self::Whole => v.to_value(),
            Self::Preview(budget) => evidence::preview(v, budget),
        }
    }

    fn list<'a>(self, items: impl Iterator<Item = JsonRef<'a>>) -> Value {
        match self {
            Self::Whole => Value::Array(items.map(JsonRef::to_value).collect()),
            Self::Preview(budget) => cut_list(items.map(|v| evidence::preview(v, budget))),
        }
    }
}

/// How many items of a message list a preview shows.
const PREVIEW_ITEMS: usize = 20;

/// At most [`PREVIEW_ITEMS`] items, then a note of how many were left out.
fn cut_list(items: impl Iterator<Item = Value>) -> Value {
    let mut out = Vec::new();
    let mut more = 0usize;
    for item in items {
        if out.len() < PREVIEW_ITEMS {
            out.push(item);
        } else {
            more += 1;
        }
    }
    if more > 0 {
        out.push(Value::String(format!(
            "… ({} more items)",
            evidence::thousands(more)
        )));
    }
    Value::Array(out)
}

impl Observation {
    /// The step's whole output as JSON: what `output:` assertions, captures and reports read.
    pub fn to_json(&self) -> Value {
        self.json_with(Keys::All, Take::Whole)
    }

    /// The output without the keys that hold received messages ([`MESSAGE_KEYS`]): what the
    /// runner keeps; [`output_query`] builds the rest for the path that needs it.
    pub fn to_light_json(&self) -> Value {
        self.json_with(Keys::Light, Take::Whole)
    }

    fn json_with(&self, keys: Keys<'_>, copy: Take) -> Value {
        match self {
            Self::Nothing => Value::Null,
            Self::RegistryFetched(f) => json!({
                "url": f.url, "status": f.status, "content_type": f.content_type,
                "body": f.body, "text": f.text, "elapsed_ms": f.elapsed_ms,
            }),
            Self::Connected(c) => {
                let mut o = exchange_json(&c.exchange, keys, copy);
                o["session_id"] = json!(c.session_id);
                o["protocol_version"] = json!(c.protocol_version);
                o["era"] = json!(c.era);
                o
            }
            Self::Exchanged(x) => exchange_json(x, keys, copy),
            Self::HealthAnswered(h) => {
                let mut o = h
                    .exchange
                    .as_ref()
                    .map_or_else(|| json!({}), |x| exchange_json(x, keys, copy));
                match &h.health {
                    Ok(r) => o["health"] = serde_json::to_value(r).unwrap_or_default(),
                    Err(e) => o["health_error"] = json!(e),
                }
                o["gate"] = json!(h.gate);
                o
            }
            Self::MessageSent(m) => {
                if let Some(at) = m.dropped {
                    return json!({"dropped_at_ms": at});
                }
                let Some(at) = m.cancellation else {
                    return m.exchange.as_ref().map_or(Value::Null, |x| {
                        with_reply(exchange_json(x, keys, copy), x, &m.reply)
                    });
                };
                let mut o = m
                    .exchange
                    .as_ref()
                    .map_or_else(|| json!({}), |x| exchange_json(x, keys, copy));
                if let Some(x) = &m.exchange {
                    o = with_reply(o, x, &m.reply);
                }
                o["cancelled_at_ms"] = json!(at);
                if let (Some(at), Some(x)) = (at, &m.exchange)
                    && keys.has("progress_after_cancel")
                {
                    o["progress_after_cancel"] = copy.list(
                        x.progress()
                            .filter(move |p| p.at_ms > at)
                            .map(|p| p.message.root()),
                    );
                }
                o
            }
            Self::MetricsScraped(m) => serde_json::to_value(m).unwrap_or_default(),
            Self::HttpAnswered(h) => h.to_json(),
            Self::ProcessRead(p) => p.to_json(),
            Self::FileRead(f) => f.to_json(),
            Self::Waited(d) => json!({"waited_ms": d.as_millis() as u64}),
            Self::Reloaded(files) => json!({"files": files}),
        }
    }
}

/// A message-tool call's output when the profile's `reply_path` was read: `text` is the answer
/// read there (`null` when it could not be), `raw_text` the text block as written, and
/// `reply_error` why no answer was read.
fn with_reply(
    mut o: Value,
    x: &Exchange,
    reply: &Option<Result<String, super::step::ReplyError>>,
) -> Value {
    let Some(reply) = reply else {
        return o;
    };
    o["raw_text"] = json!(first_text(x));
    match reply {
        Ok(answer) => o["text"] = json!(answer),
        Err(e) => {
            o["text"] = Value::Null;
            o["reply_error"] = json!(e.to_string());
        }
    }
    o
}

/// An MCP exchange as step output, with the message keys `keys` names.
fn exchange_json(x: &Exchange, keys: Keys<'_>, copy: Take) -> Value {
    let headers: serde_json::Map<String, Value> = x
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), Value::String(v.clone())))
        .collect();
    let mut o = serde_json::Map::new();
    let mut put = |key: &str, value: &dyn Fn() -> Value| {
        if keys.has(key) {
            o.insert(key.to_owned(), value());
        }
    };
    put("status", &|| json!(x.status));
    put("content_type", &|| json!(x.content_type));
    put("headers", &|| Value::Object(headers.clone()));
    put("elapsed_ms", &|| json!(x.elapsed_ms));
    put("timed_out", &|| json!(x.timed_out));
    put("response", &|| {
        x.response
            .as_deref()
            .map_or(Value::Null, |v| copy.one(v.root()))
    });
    put("result", &|| {
        x.result().map_or(Value::Null, |v| copy.one(v))
    });
    put("error", &|| {
        x.error().map_or(Value::Null, JsonRef::to_value)
    });
    put("text", &|| json!(first_text(x)));
    put("messages", &|| match copy {
        Take::Whole => Value::Array(x.messages.iter().map(|m| message_entry(m, copy)).collect()),
        Take::Preview(_) => cut_list(x.messages.iter().map(|m| message_entry(m, copy))),
    });
    put("notifications", &|| {
        copy.list(x.notifications().map(|m| m.message.root()))
    });
    put("progress", &|| {
        copy.list(x.progress().map(|m| m.message.root()))
    });
    put("after_response", &|| {
        copy.list(x.after_response().map(|m| m.message.root()))
    });
    put("body_text", &|| json!(x.body_text));
    Value::Object(o)
}

fn message_entry(m: &TimedMessage, copy: Take) -> Value {
    let mut e = serde_json::Map::new();
    e.insert("at_ms".into(), json!(m.at_ms));
    e.insert("message".into(), copy.one(m.message.root()));
    e.insert("sse_event_id".into(), json!(m.sse_event_id));
    Value::Object(e)
}

/// Where a JSONPath over a step's output is evaluated, given the light output the runner kept
/// and the observation it came from: the root to query and the path to query it with. The
/// answer is the same as querying the whole output ([`Observation::to_json`]).
pub fn output_query<'a>(
    light: &'a Value,
    observation: &'a Observation,
    path: &'a str,
) -> (Cow<'a, Value>, Cow<'a, str>) {
    let Some(x) = observation.exchange() else {
        return (Cow::Borrowed(light), Cow::Borrowed(path));
    };
    if !light.is_object() {
        return (Cow::Borrowed(light), Cow::Borrowed(path));
    }
    match first_key(path) {
        Some((key, _)) if !MESSAGE_KEYS.contains(&key) => {
            (Cow::Borrowed(light), Cow::Borrowed(path))
        }
        // Read in place: `$.result.content[0].text` is `$` of the block's `text`, and only
        // that is built; `$.result.content[*]` builds `content` (a path whose filters refer to
        // the root again is built whole instead).
        Some((key @ ("response" | "result"), rest)) if !rest.contains('$') => {
            let root = if key == "response" {
                x.response.as_deref().map(JsonDoc::root)
            } else {
                x.result()
            };
            let (node, rest) = descend(root.unwrap_or_else(JsonRef::null), rest);
            // A member or index that is not there: nothing is selected, and nothing is built
            // (the missed selector over `null` selects nothing too).
            let node = if missed(rest) {
                Value::Null
            } else {
                node.to_value()
            };
            (Cow::Owned(node), Cow::Owned(format!("${rest}")))
        }
        Some((key, _)) => (
            Cow::Owned(with_keys(light, observation, Keys::Only(key))),
            Cow::Borrowed(path),
        ),
        None => (
            Cow::Owned(with_keys(light, observation, Keys::All)),
            Cow::Borrowed(path),
        ),
    }
}

/// The one node a path of plain selectors (`$.result`, `$.response.result.content[0]`) selects
/// in a received message, read where it lies: a predicate over it builds nothing. `None` for
/// any other path, which [`output_query`] serves; the node is the one it would select.
pub fn output_node<'a>(
    light: &Value,
    observation: &'a Observation,
    path: &str,
) -> Option<JsonRef<'a>> {
    let x = observation.exchange()?;
    if !light.is_object() {
        return None;
    }
    let (key, rest) = first_key(path)?;
    let root = match key {
        "response" => x.response.as_deref().map(JsonDoc::root),
        "result" => x.result(),
        _ => return None,
    };
    match descend(root.unwrap_or_else(JsonRef::null), rest) {
        (node, "") => Some(node),
        _ => None,
    }
}

/// The light output with the message keys `keys` names added from the observation.
fn with_keys(light: &Value, observation: &Observation, keys: Keys<'_>) -> Value {
    with_copies(light, observation, keys, Take::Whole)
}

fn with_copies(light: &Value, observation: &Observation, keys: Keys<'_>, copy: Take) -> Value {
    let mut built = observation.json_with(keys, copy);
    match (&mut built, light) {
        // The light keys as the step left them (`expect_error` sets `error`), in the order of
        // the whole output.
        (Value::Object(built), Value::Object(light)) => {
            for (k, v) in light {
                built.insert(k.clone(), v.clone());
            }
        }
        _ => return light.clone(),
    }
    built
}

/// A display copy of a step's whole output: the light output with each message key previewed
/// within `budget` (a huge answer costs its preview), and the whole output's size in bytes.
pub fn output_preview(light: &Value, observation: &Observation, budget: usize) -> (Value, usize) {
    if observation.exchange().is_none() || !light.is_object() {
        return (
            evidence::preview(light, budget),
            evidence::serialized_len(light),
        );
    }
    let shown = with_copies(light, observation, Keys::All, Take::Preview(budget));
    (
        evidence::preview(&shown, budget),
        whole_len(light, observation),
    )
}

/// The serialized size of the whole output, counted without building it.
fn whole_len(light: &Value, observation: &Observation) -> usize {
    let Some(x) = observation.exchange() else {
        return evidence::serialized_len(light);
    };
    let entry = |key: &str, len: usize| key.len() + 4 + len; // "key": value,
    let list = |items: &mut dyn Iterator<Item = usize>| {
        let (n, sum) = items.fold((0usize, 0usize), |(n, s), l| (n + 1, s + l));
        2 + sum + n.saturating_sub(1)
    };
    let one = |v: Option<JsonRef<'_>>| v.map_or(4, |v| evidence::serialized_len(&v));
    let mut len = evidence::serialized_len(light);
    len += entry("response", one(x.response.as_deref().map(JsonDoc::root)));
    len += entry("result", one(x.result()));
    len += entry(
        "messages",
        list(&mut x.messages.iter().map(|m| {
            let mut e = json!({"at_ms": m.at_ms, "sse_event_id": m.sse_event_id});
            e["message"] = Value::Null;
            evidence::serialized_len(&e) - 4 + evidence::serialized_len(&*m.message)
        })),
    );
    let len_of = |m: &TimedMessage| evidence::serialized_len(&*m.message);
    len += entry("notifications", list(&mut x.notifications().map(len_of)));
    len += entry("progress", list(&mut x.progress().map(len_of)));
    len += entry("after_response", list(&mut x.after_response().map(len_of)));
    if let Observation::MessageSent(m) = observation
        && let Some(Some(at)) = m.cancellation
    {
        len += entry(
            "progress_after_cancel",
            list(&mut x.progress().filter(|p| p.at_ms > at).map(len_of)),
        );
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::TimedMessage;
    use crate::observation::{HealthAnswered, MessageSent};

    fn exchange(messages: Vec<(f64, Value)>, response: Value) -> Exchange {
        Exchange {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            content_type: Some("text/event-stream".into()),
            elapsed_ms: 5.0,
            messages: messages
                .into_iter()
                .map(|(at_ms, message)| TimedMessage {
                    at_ms,
                    message: JsonDoc::shared(&message),
                    sse_event_id: Some("1".into()),
                })
                .collect(),
            response: Some(JsonDoc::shared(&response)),
            body_text: None,
            body_bytes: 0,
            timed_out: false,
            problem: None,
            stream_ended: false,
        }
    }

    fn progress(p: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": p}})
    }

    #[test]
    fn typed_readers_and_the_json_form_agree() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "image"}, {"type": "text", "text": "done"}]}});
        let x = exchange(
            vec![
                (1.0, progress(0)),
                (2.0, progress(1)),
                (3.0, answer.clone()),
            ],
            answer,
        );
        let o = Observation::Exchanged(x);
        let j = o.to_json();
        assert_eq!(o.status(), 200);
        assert_eq!(j["status"], 200);
        assert_eq!(o.text(), Some("done"));
        assert_eq!(j["text"], "done");
        assert_eq!(o.progress().len(), 2);
        assert_eq!(j["progress"].as_array().map(Vec::len), Some(2));
        assert_eq!(j["headers"]["content-type"], "text/event-stream");
        assert_eq!(o.content_type(), Some("text/event-stream"));
        assert!(o.jsonrpc_error().is_none());
        assert!(j["after_response"].as_array().is_some_and(Vec::is_empty));
    }

    /// A profile's `reply_path`: the send step's `text` is the answer read there (light and whole
    /// output alike), `raw_text` the text as written; a text that is not such JSON leaves `text`
    /// null and says why; without a `reply_path` the output is as before.
    #[test]
    fn a_reply_path_reads_the_answer_into_the_send_steps_text() {
        let reply = |text: &str| {
            let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
            exchange(vec![(1.0, answer.clone())], answer)
        };
        let path = serde_json_path::JsonPath::parse("$.text").expect("a path");
        let wrapped = r#"{"text": "the answer", "usage": {"totalTokens": 3}}"#;
        let o = Observation::MessageSent(MessageSent::new(Some(reply(wrapped)), None, Some(&path)));
        assert_eq!(o.text(), Some("the answer"));
        assert_eq!(o.reply_error(), None);
        for j in [o.to_json(), o.to_light_json()] {
            assert_eq!(j["text"], "the answer");
            assert_eq!(j["raw_text"], wrapped);
            assert!(j.get("reply_error").is_none());
        }
        let cancelled = Observation::MessageSent(MessageSent::new(
            Some(reply(wrapped)),
            Some(None),
            Some(&path),
        ));
        assert_eq!(cancelled.to_json()["text"], "the answer");

        let o = Observation::MessageSent(MessageSent::new(
            Some(reply("plain words")),
            None,
            Some(&path),
        ));
        assert_eq!(o.text(), None);
        assert!(
            o.reply_error()
                .is_some_and(|e| e.to_string().contains("not the JSON"))
        );
        let j = o.to_json();
        assert_eq!(j["text"], Value::Null);
        assert_eq!(j["raw_text"], "plain words");
        assert!(
            j["reply_error"]
                .as_str()
                .is_some_and(|e| e.contains("not the JSON"))
        );

        let several = serde_json_path::JsonPath::parse("$.*").expect("a path");
        let o =
            Observation::MessageSent(MessageSent::new(Some(reply(wrapped)), None, Some(&several)));
        assert!(
            o.reply_error()
                .is_some_and(|e| e.to_string().contains("2 values")),
            "{o:?}"
        );

        let o = Observation::MessageSent(MessageSent::new(Some(reply(wrapped)), None, None));
        assert_eq!(o.text(), Some(wrapped));
        let j = o.to_json();
        assert_eq!(j["text"], wrapped);
        assert!(j.get("raw_text").is_none() && j.get("reply_error").is_none());
    }

    /// Every path gives the same nodes over the light output and its observation as over the
    /// whole output, whichever way `output_query` takes (in place, one key built, all built).
    #[test]
    fn paths_over_the_light_output_select_what_they_select_in_the_whole_output() {
        use serde_json_path::JsonPath;
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "image"}, {"type": "text", "text": "done"}]}});
        let x = exchange(
            vec![
                (1.0, progress(0)),
                (2.0, progress(1)),
                (3.0, answer.clone()),
                (4.0, progress(2)),
            ],
            answer,
        );
        let observations = [
            Observation::Exchanged(x.clone()),
            Observation::MessageSent(MessageSent {
                exchange: Some(x.clone()),
                cancellation: Some(Some(1.5)),
                dropped: None,
                reply: None,
            }),
            Observation::MessageSent(MessageSent {
                exchange: Some(Exchange {
                    response: None,
                    ..x.clone()
                }),
                cancellation: None,
                dropped: None,
                reply: None,
            }),
            // A profile's `reply_path` over a text that is not JSON: `text` null, `reply_error`.
            Observation::MessageSent(MessageSent::new(
                Some(x.clone()),
                None,
                JsonPath::parse("$.text").ok().as_ref(),
            )),
        ];
        let paths = [
            "$.result.content[1].text",
            "$['result']",
            "$[\"result\"].content[*].type",
            "$.result",
            "$.response.id",
            "$.response",
            "$.messages[*].message.method",
            "$.progress[?@.params.progress > 0]",
            "$.progress_after_cancel[*].params.progress",
            "$.after_response",
            "$[\"notifications\"]",
            "$..text",
            "$.*",
            "$",
            "$.text",
            "$.status",
            "$.headers['content-type']",
            "$.result.content[?@.type == $.text]",
            "$.resultx",
            "$.result.messages[?@.role == 'user']",
            "$.result.content[7].text",
            "$.response.result.isError",
        ];
        for o in &observations {
            let whole = o.to_json();
            let light = o.to_light_json();
            assert!(light.get("result").is_none() && light.get("messages").is_none());
            for path in paths {
                let (root, query) = output_query(&light, o, path);
                let got = JsonPath::parse(&query).map(|q| {
                    q.query(&root)
                        .all()
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>()
                });
                let want = JsonPath::parse(path).map(|q| {
                    q.query(&whole)
                        .all()
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>()
                });
                assert_eq!(got.as_ref().ok(), want.as_ref().ok(), "{path}");
                // A node read in place is the one node the path selects in the whole output.
                if let Some(node) = output_node(&light, o, path) {
                    assert_eq!(want.ok(), Some(vec![node.to_value()]), "{path}");
                }
            }
            let in_place = |path| output_node(&light, o, path).is_some();
            assert!(in_place("$.result") && in_place("$['response']"));
            assert!(!in_place("$.result.content[*]") && !in_place("$.text"));
            // The preview states the whole output's size, counted without building it.
            let (_, full) = output_preview(&light, o, 100);
            assert_eq!(full, evidence::serialized_len(&whole));
        }
    }

    #[test]
    fn a_preview_of_a_long_message_list_keeps_its_first_items_and_counts_the_rest() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let mut messages: Vec<(f64, Value)> = (0..100u32)
            .map(|i| (f64::from(i), progress(u64::from(i))))
            .collect();
        messages.push((100.0, answer.clone()));
        let o = Observation::Exchanged(exchange(messages, answer));
        let (shown, full) = output_preview(&o.to_light_json(), &o, 100_000);
        assert_eq!(
            shown["progress"].as_array().map(Vec::len),
            Some(PREVIEW_ITEMS + 1)
        );
        assert_eq!(shown["progress"][PREVIEW_ITEMS], "… (80 more items)");
        assert_eq!(full, evidence::serialized_len(&o.to_json()));
    }

    #[test]
    fn a_cancelled_send_lists_the_progress_that_came_after_the_cancellation() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let x = exchange(vec![(1.0, progress(0)), (9.0, progress(1))], answer);
        let sent = |cancellation| {
            Observation::MessageSent(MessageSent {
                exchange: Some(x.clone()),
                cancellation,
                dropped: None,
                reply: None,
            })
        };
        let j = sent(Some(Some(5.0))).to_json();
        assert_eq!(j["cancelled_at_ms"], 5.0);
        assert_eq!(j["progress_after_cancel"], json!([progress(1)]));
        assert_eq!(sent(Some(Some(5.0))).cancelled_at_ms(), Some(5.0));
        // Asked for but never sent: the key is there, null, and nothing is "after" it.
        let j = sent(Some(None)).to_json();
        assert!(j.get("cancelled_at_ms").is_some_and(Value::is_null));
        assert!(j.get("progress_after_cancel").is_none());
        // No cancellation asked: the plain exchange.
        assert!(sent(None).to_json().get("cancelled_at_ms").is_none());
        let failed = Observation::MessageSent(MessageSent {
            exchange: None,
            cancellation: None,
            dropped: None,
            reply: None,
        });
        assert_eq!(failed.to_json(), Value::Null);
        // A dropped stream: when it was dropped, and no exchange.
        let dropped = Observation::MessageSent(MessageSent {
            exchange: None,
            cancellation: None,
            dropped: Some(7.5),
            reply: None,
        });
        assert_eq!(dropped.to_json(), json!({"dropped_at_ms": 7.5}));
    }

    #[test]
    fn a_health_answer_that_is_not_one_keeps_why() {
        let h = Observation::HealthAnswered(HealthAnswered {
            exchange: None,
            health: Err("no result".into()),
            gate: "blocked: no result".into(),
        });
        let j = h.to_json();
        assert_eq!(
            j,
            json!({"health_error": "no result", "gate": "blocked: no result"})
        );
        assert!(h.health().is_none());
        assert_eq!(h.status(), 0);
    }
}
