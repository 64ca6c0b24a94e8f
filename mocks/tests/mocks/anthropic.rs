//! The Anthropic mock over raw HTTP.

use serde_json::{Value, json};

use super::support::{client, llm, sse_data, sse_event_names};

fn msg(text: &str) -> Value {
    json!({"model": "mock-model", "max_tokens": 100, "messages": [{"role": "user", "content": text}]})
}

fn post(c: &reqwest::Client, base: &str) -> reqwest::RequestBuilder {
    c.post(format!("{base}/v1/messages"))
        .header("anthropic-version", "2023-06-01")
}

#[tokio::test]
async fn non_streaming_text_has_usage_and_end_turn() {
    let m = llm(
        "dialect: anthropic\nusage: {input_tokens: 11, output_tokens: 5, cache_read_tokens: 2}\n",
    )
    .await;
    let r: Value = post(&client(), &m.url())
        .json(&msg("bonjour"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["type"], "message");
    assert_eq!(r["content"][0], json!({"type": "text", "text": "bonjour"}));
    assert_eq!(r["stop_reason"], "end_turn");
    assert_eq!(r["usage"]["input_tokens"], 11);
    assert_eq!(r["usage"]["cache_read_input_tokens"], 2);
}

#[tokio::test]
async fn streaming_text_follows_the_event_sequence() {
    let m = llm("dialect: anthropic\n").await;
    let mut body = msg("hello streaming world");
    body["stream"] = json!(true);
    let text = post(&client(), &m.url())
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let names = sse_event_names(&text);
    assert_eq!(names.first().map(String::as_str), Some("message_start"));
    assert_eq!(names.last().map(String::as_str), Some("message_stop"));
    let core: Vec<_> = names
        .iter()
        .filter(|n| *n != "ping" && *n != "content_block_delta")
        .collect();
    assert_eq!(
        core,
        vec![
            "message_start",
            "content_block_start",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let joined: String = sse_data(&text)
        .iter()
        .filter_map(|d| d.pointer("/delta/text").and_then(Value::as_str))
        .collect();
    assert_eq!(joined, "hello streaming world");
}

#[tokio::test]
async fn tool_use_streams_input_json_deltas_and_stops_for_tool_use() {
    let m = llm("dialect: anthropic\n").await;
    let mut body =
        msg("CALL_TOOL argos__search_web {\"query\":\"owls\"}\nCALL_TOOL kernos__run {}");
    body["stream"] = json!(true);
    let text = post(&client(), &m.url())
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let data = sse_data(&text);
    let starts: Vec<_> = data
        .iter()
        .filter(|d| d["type"] == "content_block_start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["content_block"]["name"], "argos__search_web");
    assert_eq!(starts[1]["index"], 1);
    let partial: String = data
        .iter()
        .filter(|d| d["index"] == 0)
        .filter_map(|d| d.pointer("/delta/partial_json").and_then(Value::as_str))
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap(),
        json!({"query": "owls"})
    );
    let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn tool_result_blocks_lead_to_final_text_containing_them() {
    let m = llm("dialect: anthropic\n").await;
    let body = json!({"model": "mock-model", "max_tokens": 10, "messages": [
        {"role": "user", "content": "CALL_TOOL a__b {}"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a__b", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": [{"type": "text", "text": "result-xyz"}]}]}
    ]});
    let r: Value = post(&client(), &m.url())
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("result-xyz")
    );
}

#[tokio::test]
async fn x_api_key_and_anthropic_version_are_required() {
    let m = llm("dialect: anthropic\napi_key: ak-1\n").await;
    let c = client();
    let no_key = post(&c, &m.url()).json(&msg("x")).send().await.unwrap();
    assert_eq!(no_key.status(), 401);
    let body: Value = no_key.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "authentication_error");
    let ok = post(&c, &m.url())
        .header("x-api-key", "ak-1")
        .json(&msg("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let no_version = c
        .post(format!("{}/v1/messages", m.url()))
        .header("x-api-key", "ak-1")
        .json(&msg("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(no_version.status(), 400);
    assert_eq!(
        no_version.json::<Value>().await.unwrap()["error"]["type"],
        "invalid_request_error"
    );
}

#[tokio::test]
async fn overloaded_529_uses_the_anthropic_error_shape() {
    let m = llm("dialect: anthropic\nscript:\n  - fault: {status: 529}\n").await;
    let r = post(&client(), &m.url())
        .json(&msg("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 529);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["type"],
        "overloaded_error"
    );
}

#[tokio::test]
async fn models_are_listed_in_anthropic_shape() {
    let m = llm("dialect: anthropic\nmodels: [claude-x]\n").await;
    let c = client();
    // Like the real API, the version header is required on model listings too.
    let unversioned = c
        .get(format!("{}/v1/models", m.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unversioned.status(), 400);
    let r: Value = c
        .get(format!("{}/v1/models", m.url()))
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["data"][0]["type"], "model");
    assert_eq!(r["has_more"], false);
    let missing = c
        .get(format!("{}/v1/models/other", m.url()))
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.json::<Value>().await.unwrap()["error"]["type"],
        "not_found_error"
    );
}
