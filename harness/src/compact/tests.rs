use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn doc(v: &Value) -> JsonDoc {
    JsonDoc::parse(v.to_string()).expect("valid JSON")
}

#[test]
fn readers_agree_with_value() {
    let v = json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [
        {"type": "text", "text": "a \"quoted\" line\nand é"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "isError": false, "n": -3, "f": 1.5, "big": 18446744073709551615u64, "z": null}});
    let d = doc(&v);
    let r = d.root();
    assert_eq!(r.get("id").and_then(JsonRef::as_u64), Some(7));
    assert_eq!(r.get("jsonrpc").and_then(JsonRef::as_str), Some("2.0"));
    let result = r.get("result").expect("result");
    assert_eq!(result.get("n").and_then(JsonRef::as_i64), Some(-3));
    assert_eq!(result.get("f").and_then(JsonRef::as_f64), Some(1.5));
    assert_eq!(result.get("big").and_then(JsonRef::as_u64), Some(u64::MAX));
    assert!(result.get("z").is_some_and(JsonRef::is_null));
    assert_eq!(
        result.get("isError").and_then(JsonRef::as_bool),
        Some(false)
    );
    let content = result
        .get("content")
        .and_then(JsonRef::as_array)
        .expect("array");
    assert_eq!(content.len(), 2);
    assert_eq!(
        content
            .get(0)
            .and_then(|b| b.get("text"))
            .and_then(JsonRef::as_str),
        Some("a \"quoted\" line\nand é")
    );
    assert_eq!(
        r.pointer("/result/content/1/mimeType")
            .and_then(JsonRef::as_str),
        Some("image/png")
    );
    assert!(r.pointer("/result/content/01").is_none());
    assert!(r.get("missing").is_none());
    assert_eq!(d.to_value(), v);
    assert_eq!(d.root().to_string(), v.to_string());
    assert!(d == v);
    assert!(result.get("content") == Some(content.as_ref()));
}

#[test]
fn a_repeated_name_reads_as_value_reads_it() {
    let text = r#"{"a": 1, "b": 2, "a": 3}"#;
    let d = JsonDoc::parse(text.into()).expect("valid");
    let v: Value = serde_json::from_str(text).expect("valid");
    assert_eq!(d.get("a").and_then(JsonRef::as_u64), Some(3));
    assert_eq!(d.to_value(), v);
    assert_eq!(d.root().to_string(), v.to_string());
    assert!(d == v);
    assert_eq!(d.root().as_object().map(ObjectRef::distinct_len), Some(2));
}

#[test]
fn errors_are_serde_jsons_own() {
    for bad in ["{", "[1,]", "nul", "{\"a\":1} x", "\"\\x\""] {
        let ours = JsonDoc::parse(bad.into()).err().map(|e| e.to_string());
        let theirs = serde_json::from_str::<Value>(bad)
            .err()
            .map(|e| e.to_string());
        assert_eq!(ours, theirs, "{bad}");
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let e = JsonDoc::parse(deep).err().map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.starts_with("recursion limit exceeded")));
}

#[test]
fn a_large_answer_costs_about_its_size() {
    let blocks = 100_000;
    let mut text = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"content":["#);
    for i in 0..blocks {
        if i > 0 {
            text.push(',');
        }
        text.push_str(r#"{"type":"text","text":"x"}"#);
    }
    text.push_str("]}}");
    let size = text.len();
    let d = JsonDoc::parse(text).expect("valid");
    // The text, and five 16-byte nodes per 26-byte block.
    assert!(d.heap_bytes() < size * 5, "{} for {size}", d.heap_bytes());
    let content = d.pointer_len("/result/content");
    assert_eq!(content, Some(blocks));
}

#[test]
fn the_schema_validator_reads_documents_in_place() {
    let schema = json!({"type": "object", "required": ["content"], "properties": {
        "content": {"type": "array", "items": {"type": "object", "required": ["type"],
            "properties": {"type": {"enum": ["text", "image"]}, "n": {"type": "integer"}}}}}});
    let v = jsonschema::options_for::<Compact>()
        .build(&schema)
        .expect("schema compiles");
    let good = doc(&json!({"content": [{"type": "text", "n": 2}]}));
    assert!(v.is_valid(good.root()));
    let bad = doc(&json!({"content": [{"type": "text"}, {"type": "audio", "n": 1.5}]}));
    let paths: Vec<String> = v
        .iter_errors(bad.root())
        .map(|e| e.instance_path().to_string())
        .collect();
    assert_eq!(paths, ["/content/1/type", "/content/1/n"]);
    let plain = jsonschema::validator_for(&schema).expect("compiles");
    let value = bad.to_value();
    let plain: Vec<String> = plain
        .iter_errors(&value)
        .map(|e| e.instance_path().to_string())
        .collect();
    assert_eq!(paths, plain);
}

impl JsonDoc {
    fn pointer_len(&self, p: &str) -> Option<usize> {
        self.root().pointer(p)?.as_array().map(ArrayRef::len)
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(|n| json!(n)),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e9f64..1.0e9).prop_map(|f| json!(f)),
        "[a-z\"\\\\\n\u{e9}]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_round_trips_and_compares(v in arb_json(), w in arb_json()) {
        let d = doc(&v);
        prop_assert_eq!(d.to_value(), v.clone());
        prop_assert_eq!(d.root().to_string(), v.to_string());
        prop_assert!(d.root().eq_value(&v));
        let e = doc(&w);
        prop_assert_eq!(d == e, v == w);
        prop_assert_eq!(d.root().eq_value(&w), v == w);
    }
}
