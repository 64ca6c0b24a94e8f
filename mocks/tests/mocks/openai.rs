//! The OpenAI-compatible mock over raw HTTP.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{client, llm, sse_data};

fn chat(text: &str) -> Value {
    json!({"model": "mock-model", "messages": [{"role": "user", "content": text}]})
}

#[tokio::test]
async fn models_are_listed_and_fetched_and_unknown_ones_are_404() {
    let m = llm("dialect: openai\nmodels: [a, b]\n").await;
    let c = client();
    let list: Value = c
        .get(format!("{}/models", m.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["object"], "list");
    let ids: Vec<_> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!("a"), json!("b")]);
    let one = c.get(format!("{}/models/b", m.url())).send().await.unwrap();
    assert_eq!(one.status(), 200);
    assert_eq!(one.json::<Value>().await.unwrap()["id"], "b");
    let missing = c
        .get(format!("{}/models/zzz", m.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "model_not_found");
}

#[tokio::test]
async fn non_streaming_answer_echoes_the_user_with_usage() {
    let m = llm("dialect: openai\n").await;
    let r: Value = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&chat("hello there"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["object"], "chat.completion");
    assert_eq!(r["choices"][0]["message"]["content"], "hello there");
    assert_eq!(r["choices"][0]["finish_reason"], "stop");
    let u = &r["usage"];
    assert!(u["prompt_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        u["total_tokens"].as_u64().unwrap(),
        u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn streaming_sends_chunks_usage_and_done() {
    let m = llm("dialect: openai\nusage: {input_tokens: 7, output_tokens: 3}\n").await;
    let mut body = chat("one two three");
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let resp = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let chunks = sse_data(&text);
    let content: String = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(content, "one two three");
    assert!(chunks.len() >= 5, "text should arrive in several chunks");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert_eq!(last["usage"]["prompt_tokens"], 7);
    assert_eq!(last["usage"]["completion_tokens"], 3);
    let finish: Vec<_> = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(finish, vec!["stop"]);
}

#[tokio::test]
async fn scripted_parallel_tool_calls_stream_with_indices_and_empty_arguments() {
    let m = llm(r#"
dialect: openai
script:
  - tool_calls:
      - {name: argos__search_web, arguments: {query: "pallas"}, id: call_a}
      - {name: kernos__run, arguments: null}
"#)
    .await;
    let mut body = chat("go");
    body["stream"] = json!(true);
    let text = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut names = vec![String::new(); 2];
    let mut args = vec![String::new(); 2];
    let mut ids = vec![String::new(); 2];
    for c in sse_data(&text) {
        if let Some(Value::Array(tcs)) = c.pointer("/choices/0/delta/tool_calls") {
            for tc in tcs {
                let i = tc["index"].as_u64().unwrap() as usize;
                if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                    names[i].push_str(n);
                }
                if let Some(id) = tc["id"].as_str() {
                    ids[i].push_str(id);
                }
                args[i].push_str(
                    tc.pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                );
            }
        }
    }
    assert_eq!(names, vec!["argos__search_web", "kernos__run"]);
    assert_eq!(ids[0], "call_a");
    assert!(!ids[1].is_empty());
    assert_eq!(
        serde_json::from_str::<Value>(&args[0]).unwrap(),
        json!({"query": "pallas"})
    );
    assert_eq!(args[1], "");
    assert!(text.contains(r#""finish_reason":"tool_calls""#));
}

#[tokio::test]
async fn call_tool_directive_then_tool_result_gives_final_text() {
    let m = llm("dialect: openai\n").await;
    let c = client();
    let r: Value = c
        .post(format!("{}/chat/completions", m.url()))
        .json(&chat(
            "CALL_TOOL neo4j__read_neo4j_cypher {\"query\":\"MATCH (n) RETURN n\"}",
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let call = &r["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "neo4j__read_neo4j_cypher");
    assert_eq!(r["choices"][0]["finish_reason"], "tool_calls");
    let follow = json!({"model": "mock-model", "messages": [
        {"role": "user", "content": "CALL_TOOL neo4j__read_neo4j_cypher {}"},
        {"role": "assistant", "content": null, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "42 nodes"}
    ]});
    let r: Value = c
        .post(format!("{}/chat/completions", m.url()))
        .json(&follow)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        r["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .contains("42 nodes")
    );
}

#[tokio::test]
async fn directives_hold_under_heavy_concurrency() {
    let m = llm("dialect: openai\n").await;
    let c = client();
    let url = format!("{}/chat/completions", m.url());
    let tasks: Vec<_> = (0..500)
        .map(|i| {
            let c = c.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let r: Value = c
                    .post(url)
                    .json(&chat(&format!("CALL_TOOL srv__tool{i} {{\"n\":{i}}}")))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let f = &r["choices"][0]["message"]["tool_calls"][0]["function"];
                (
                    i,
                    f["name"].as_str().unwrap().to_owned(),
                    f["arguments"].as_str().unwrap().to_owned(),
                )
            })
        })
        .collect();
    for t in tasks {
        let (i, name, args) = t.await.unwrap();
        assert_eq!(name, format!("srv__tool{i}"));
        assert_eq!(
            serde_json::from_str::<Value>(&args).unwrap(),
            json!({"n": i})
        );
    }
    assert_eq!(m.journal().len(), 500);
}

#[tokio::test]
async fn wrong_or_missing_api_key_gets_401_in_openai_shape() {
    let m = llm("dialect: openai\napi_key: sk-good\n").await;
    let c = client();
    let url = format!("{}/chat/completions", m.url());
    let wrong = c
        .post(&url)
        .bearer_auth("sk-bad")
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let body: Value = wrong.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_api_key");
    let none = c.post(&url).json(&chat("x")).send().await.unwrap();
    assert_eq!(none.status(), 401);
    let ok = c
        .post(&url)
        .bearer_auth("sk-good")
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn unknown_model_in_a_completion_is_404() {
    let m = llm("dialect: openai\n").await;
    let r = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&json!({"model": "gpt-nope", "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(
        r.json::<Value>().await.unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gpt-nope")
    );
}

#[tokio::test]
async fn rate_limit_fails_n_times_with_retry_after_then_succeeds() {
    let m = llm("dialect: openai\nfault: {status: 429, retry_after: 3, times: 2}\n").await;
    let c = client();
    let url = format!("{}/chat/completions", m.url());
    for _ in 0..2 {
        let r = c.post(&url).json(&chat("x")).send().await.unwrap();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "3");
        assert_eq!(
            r.json::<Value>().await.unwrap()["error"]["code"],
            "rate_limit_exceeded"
        );
    }
    assert_eq!(
        c.post(&url).json(&chat("x")).send().await.unwrap().status(),
        200
    );
    let statuses: Vec<_> = m.journal().iter().map(|e| e.status).collect();
    assert_eq!(statuses, vec![Some(429), Some(429), Some(200)]);
}

#[tokio::test]
async fn turn_fault_500_then_reset_restarts_the_script() {
    let m = llm("dialect: openai\nscript:\n  - fault: {status: 500}\n  - text: recovered\non_exhausted: error\n").await;
    let c = client();
    let url = format!("{}/chat/completions", m.url());
    assert_eq!(
        c.post(&url).json(&chat("x")).send().await.unwrap().status(),
        500
    );
    let ok: Value = c
        .post(&url)
        .json(&chat("x"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ok["choices"][0]["message"]["content"], "recovered");
    let exhausted = c.post(&url).json(&chat("x")).send().await.unwrap();
    assert_eq!(exhausted.status(), 500);
    assert!(exhausted.text().await.unwrap().contains("exhausted"));
    assert_eq!(m.journal()[1].matched_turn, Some(1));
    m.reset();
    assert!(m.journal().is_empty());
    assert_eq!(
        c.post(&url).json(&chat("x")).send().await.unwrap().status(),
        500
    );
}

#[tokio::test]
async fn hang_never_answers_and_journals_when_the_client_gave_up() {
    let m = llm("dialect: openai\nfault: {hang: true}\n").await;
    let r = client()
        .post(format!("{}/chat/completions", m.url()))
        .timeout(Duration::from_millis(300))
        .json(&chat("x"))
        .send()
        .await;
    assert!(r.unwrap_err().is_timeout());
    // The client's timeout closed the connection: the mock notes when, soon after.
    let deadline = Instant::now() + Duration::from_secs(5);
    while m.journal()[0].abandoned.is_none() {
        assert!(
            Instant::now() < deadline,
            "the abandonment was never journaled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let j = m.journal();
    assert_eq!(j.len(), 1);
    assert_eq!(j[0].status, None);
    let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap();
    let held = at(j[0].abandoned.as_deref().unwrap()) - at(&j[0].time);
    assert!(
        held >= chrono::Duration::milliseconds(250) && held < chrono::Duration::seconds(3),
        "held {held}"
    );
}

#[tokio::test]
async fn latency_and_chunk_delay_slow_the_answer_down() {
    let m = llm("dialect: openai\nfault: {latency: 150ms, chunk_delay: 30ms}\n").await;
    let mut body = chat("a b c d");
    body["stream"] = json!(true);
    let start = Instant::now();
    let text = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let chunks = text.matches("data: ").count();
    // Lower bounds only: sleeps never end early.
    assert!(start.elapsed() >= Duration::from_millis(150 + 30 * (chunks as u64 - 1)));
}

#[tokio::test]
async fn disconnect_mid_stream_breaks_the_body() {
    let m = llm("dialect: openai\nscript:\n  - text: a b c d e f\n    fault: {disconnect_after_chunks: 2}\n").await;
    let mut body = chat("x");
    body["stream"] = json!(true);
    let resp = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.is_err(), "the body must end abruptly");
}

#[tokio::test]
async fn malformed_fault_answers_200_with_invalid_json() {
    let m = llm("dialect: openai\nfault: {malformed: true}\n").await;
    let r = client()
        .post(format!("{}/chat/completions", m.url()))
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(serde_json::from_str::<Value>(&r.text().await.unwrap()).is_err());
}

#[tokio::test]
async fn malformed_requests_get_openai_error_shapes() {
    let m = llm("dialect: openai\n").await;
    let c = client();
    let bad_json = c
        .post(format!("{}/chat/completions", m.url()))
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_json.status(), 400);
    assert_eq!(
        bad_json.json::<Value>().await.unwrap()["error"]["type"],
        "invalid_request_error"
    );
    let no_messages = c
        .post(format!("{}/chat/completions", m.url()))
        .json(&json!({"model": "mock-model"}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_messages.status(), 400);
    let unknown = c
        .get(format!("{}/nothing/here", m.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    assert!(unknown.json::<Value>().await.unwrap()["error"]["message"].is_string());
}

#[tokio::test]
async fn journal_is_served_over_http_and_cleared_by_reset() {
    let m = llm("dialect: openai\n").await;
    let c = client();
    c.post(format!("{}/chat/completions", m.url()))
        .header("x-trace", "t1")
        .json(&chat("hi"))
        .send()
        .await
        .unwrap();
    let base = format!("http://{}", m.addr());
    let j: Value = c
        .get(format!("{base}/__mock/journal"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let e = &j[0];
    assert_eq!(e["method"], "POST");
    assert_eq!(e["path"], "/v1/chat/completions");
    assert_eq!(e["headers"]["x-trace"], "t1");
    assert_eq!(e["model"], "mock-model");
    assert_eq!(e["status"], 200);
    assert_eq!(e["body"]["messages"][0]["content"], "hi");
    assert!(e["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        c.post(format!("{base}/__mock/reset"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert!(m.journal().is_empty());
}

#[tokio::test]
async fn guarded_turns_match_on_model_offered_tool_and_regex() {
    let m = llm(r#"
dialect: openai
models: [m1, m2]
script:
  - when: {model: m2}
    text: second model
    repeat: true
  - when: {tool_offered: argos__search_web, last_user_regex: "^find (.+)$"}
    tool_calls: [{name: argos__search_web, arguments: {query: q}}]
  - text: "fallback: {{last_user}}"
"#)
    .await;
    let c = client();
    let url = format!("{}/chat/completions", m.url());
    let r: Value = c
        .post(&url)
        .json(&json!({"model":"m2","messages":[{"role":"user","content":"x"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["choices"][0]["message"]["content"], "second model");
    let with_tool = json!({"model":"m1","messages":[{"role":"user","content":"find owls"}],
        "tools":[{"type":"function","function":{"name":"argos__search_web","parameters":{}}}]});
    let r: Value = c
        .post(&url)
        .json(&with_tool)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        r["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "argos__search_web"
    );
    let r: Value = c
        .post(&url)
        .json(&json!({"model":"m1","messages":[{"role":"user","content":"bye"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["choices"][0]["message"]["content"], "fallback: bye");
    let turns: Vec<_> = m.journal().iter().map(|e| e.matched_turn).collect();
    assert_eq!(turns, vec![Some(0), Some(1), Some(2)]);
}

#[tokio::test]
async fn shutdown_ends_a_hanging_request_promptly() {
    let m = llm("dialect: openai\nfault: {hang: true}\n").await;
    let url = format!("{}/chat/completions", m.url());
    let pending = tokio::spawn(async move {
        client()
            .post(url)
            .json(&chat("x"))
            .send()
            .await
            .map(|r| r.status())
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while m.journal().is_empty() {
        assert!(Instant::now() < deadline, "request never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let start = Instant::now();
    m.shutdown().await;
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "shutdown waited for the hanging request"
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .unwrap();
}
