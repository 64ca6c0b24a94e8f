//! Tests of the mcp checks.

use serde_json::{Value, json};

use super::*;
use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};

#[test]
fn mcp_003_wants_404_for_the_deleted_session() {
    let del = step("delete", "delete", 0, 1, json!({"status": 200}));
    let mut after = step("after", "raw", 2, 3, json!({"status": 404}));
    after.set_request(json!({"body": "{}", "with_session": true}));
    let mut o = obs(vec![del, after]);
    kept(run("MCP-003", &CheckSpec::default(), &o));
    o.steps[1].set_output(json!({"status": 200}));
    assert!(fails(&run("MCP-003", &CheckSpec::default(), &o)));
    o.steps[0].set_output(json!({"status": 405}));
    assert!(skipped(&run("MCP-003", &CheckSpec::default(), &o)));
    o.steps[0].set_output(json!({"status": 500}));
    assert!(fails(&run("MCP-003", &CheckSpec::default(), &o)));
}

#[test]
fn mcp_005_and_006_judge_raw_posts_by_their_headers() {
    let raw = |status: u64, request: Value| {
        let mut s = step("raw", "raw", 0, 1, json!({"status": status}));
        s.set_request(request);
        s
    };
    let accept =
        json!({"body": "{}", "headers": {"Accept": "application/json"}, "with_session": true});
    kept(run(
        "MCP-005",
        &CheckSpec::default(),
        &obs(vec![raw(406, accept.clone())]),
    ));
    assert!(fails(&run(
        "MCP-005",
        &CheckSpec::default(),
        &obs(vec![raw(200, accept)])
    )));
    let missing =
        json!({"body": r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "with_session": false});
    kept(run(
        "MCP-006",
        &CheckSpec::default(),
        &obs(vec![raw(400, missing.clone())]),
    ));
    assert!(fails(&run(
        "MCP-006",
        &CheckSpec::default(),
        &obs(vec![raw(200, missing)])
    )));
    // A session id the server never issued is no case of the 400 rule: not judged.
    let unknown =
        json!({"body": "{}", "headers": {"Mcp-Session-Id": "nope"}, "with_session": true});
    assert!(skipped(&run(
        "MCP-006",
        &CheckSpec::default(),
        &obs(vec![raw(400, unknown)])
    )));
    assert!(skipped(&run(
        "MCP-006",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn mcp_007_classifies_calls_against_the_listed_tools() {
    let tools = step(
        "tools",
        "list_tools",
        0,
        1,
        json!({"result": {"tools": [{"name": "echo",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]}}),
    );
    let call = |tool: &str, args: Value, out: Value| {
        let mut s = step("call", "call", 2, 3, out);
        s.set_request(json!({"tool": tool, "arguments": args}));
        s
    };
    let err = json!({"status": 200, "error": {"code": -32602, "message": "unknown tool"}});
    let o = obs(vec![tools.clone(), call("nope", json!({}), err.clone())]);
    kept(run("MCP-007", &CheckSpec::default(), &o));
    let o = obs(vec![
        tools.clone(),
        call(
            "nope",
            json!({}),
            json!({"status": 200, "result": {"isError": true}}),
        ),
    ]);
    // "should be reported as an MCP error response": a SHOULD.
    assert!(breaks(
        &run("MCP-007", &CheckSpec::default(), &o),
        "mcp.unknown-tool-protocol-error"
    ));
    let mut o = obs(vec![
        tools.clone(),
        call(
            "echo",
            json!({"n": "x"}),
            json!({"status": 200, "result": {"isError": true}}),
        ),
    ]);
    // The run's model is observed (a later call reached the mock LLM), and it was not asked
    // while the invalid call ran: refused without running.
    o.llm_journals
        .insert("openai".into(), vec![llm(at(9, 0), json!({}), 200)]);
    kept(run("MCP-011", &CheckSpec::default(), &o));
    // An invalid call is no unknown tool: MCP-007 has nothing to judge.
    assert!(skipped(&run("MCP-007", &CheckSpec::default(), &o)));
    let o = obs(vec![
        tools.clone(),
        call(
            "echo",
            json!({"n": "x"}),
            json!({"status": 200, "result": {"content": []}}),
        ),
    ]);
    // Executed without validation: the MUST (the check's first rule).
    assert!(matches!(
        run("MCP-011", &CheckSpec::default(), &o),
        Outcome::Fail(..)
    ));
    // Refused with another JSON-RPC error: validated, reported otherwise than the SHOULD says.
    let o = obs(vec![
        tools.clone(),
        call(
            "echo",
            json!({"n": "x"}),
            json!({"status": 200, "error": {"code": -32603, "message": "bad n"}}),
        ),
    ]);
    assert!(breaks(
        &run("MCP-011", &CheckSpec::default(), &o),
        "mcp.tool-execution-errors"
    ));
    // An unknown tool's error whose code is not an integer breaks the MUST of MCP-007.
    let o = obs(vec![
        tools.clone(),
        call(
            "nope",
            json!({}),
            json!({"status": 200, "error": {"code": "unknown", "message": "unknown tool"}}),
        ),
    ]);
    assert!(breaks(
        &run("MCP-007", &CheckSpec::default(), &o),
        "mcp.error-code-integer"
    ));
    let o = obs(vec![
        tools.clone(),
        call(
            "echo",
            json!({"n": 1}),
            json!({"status": 200, "result": {}}),
        ),
    ]);
    assert!(skipped(&run("MCP-011", &CheckSpec::default(), &o)));
    // A call the scenario names as invalid that the target's own schema accepts (an
    // argument the schema allows) is not judged; one the schema rejects is.
    let named = CheckSpec {
        with: Some(json!({"invalid_arguments": ["call"]})),
        ..CheckSpec::default()
    };
    let o = obs(vec![
        tools.clone(),
        call(
            "echo",
            json!({"n": 1, "images": "not a list"}),
            json!({"status": 200, "result": {"content": []}}),
        ),
    ]);
    let Outcome::NotApplicable(why) = run("MCP-011", &named, &o) else {
        panic!("the target's schema accepts these arguments")
    };
    assert!(why.contains("inputSchema accepts"), "{why}");
    let o = obs(vec![
        tools,
        call(
            "echo",
            json!({"images": []}),
            json!({"status": 200, "result": {"content": []}}),
        ),
    ]);
    assert!(fails(&run("MCP-011", &named, &o)));
}

#[test]
fn mcp_008_wants_event_ids_on_sse_messages() {
    let sse = |id: Value| {
        step(
            "s",
            "send",
            0,
            1,
            json!({"status": 200, "content_type": "text/event-stream",
        "messages": [{"at_ms": 1.0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}, "sse_event_id": id}]}),
        )
    };
    kept(run(
        "MCP-008",
        &CheckSpec::default(),
        &obs(vec![sse(json!("0"))]),
    ));
    assert!(fails(&run(
        "MCP-008",
        &CheckSpec::default(),
        &obs(vec![sse(Value::Null)])
    )));
    let json_only = step(
        "s",
        "send",
        0,
        1,
        json!({"status": 200, "content_type": "application/json"}),
    );
    assert!(skipped(&run(
        "MCP-008",
        &CheckSpec::default(),
        &obs(vec![json_only])
    )));
}

#[test]
fn mcp_002_accepts_a_session_less_server_but_not_an_invisible_session_id() {
    let connect = |id: Value| {
        step(
            "connect",
            "connect",
            0,
            1,
            json!({"status": 200,
        "protocol_version": "2025-11-25", "era": "2025-11-25", "session_id": id}),
        )
    };
    kept(run(
        "MCP-002",
        &CheckSpec::default(),
        &obs(vec![connect(Value::Null)]),
    ));
    kept(run(
        "MCP-002",
        &CheckSpec::default(),
        &obs(vec![connect(json!("a1-b2"))]),
    ));
    assert!(fails(&run(
        "MCP-002",
        &CheckSpec::default(),
        &obs(vec![connect(json!("a b"))])
    )));
}

#[test]
fn mcp_009_judges_raw_requests_only_on_the_responses_they_got() {
    let raw_with = |status: u16, messages: Value| {
        let mut s = step(
            "raw",
            "raw",
            0,
            1,
            json!({"status": status, "messages": messages}),
        );
        s.set_request(json!({"body": r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#}));
        s
    };
    let raw = |messages: Value| raw_with(400, messages);
    let answer = |id: Value| json!([{"at_ms": 1.0, "message": {"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "bad"}}}]);
    let judge = |s| run("MCP-009", &CheckSpec::default(), &obs(vec![s]));
    kept(judge(raw(answer(json!(5)))));
    // The request's id was readable: its error had to echo it, on an HTTP error status too
    // (an id-less error body is allowed only for a refused notification or response).
    let refused = judge(raw(answer(Value::Null)));
    assert!(
        breaks(&refused, "mcp.error-response-same-id"),
        "{refused:?}"
    );
    let Outcome::Breaks {
        reason, evidence, ..
    } = refused
    else {
        unreachable!()
    };
    assert!(
        reason.contains("id null") && reason.contains("HTTP error status"),
        "{reason}"
    );
    assert_eq!(evidence[0].seen.as_deref(), Some("id null, HTTP 400"));
    assert!(fails(&judge(raw_with(200, answer(Value::Null)))));
    // An HTTP error whose JSON body is no JSON-RPC message (no `"jsonrpc": "2.0"`) carries no
    // response id: nothing to judge.
    let plain = json!([{"at_ms": 1.0, "message": {"error": "No active MCP session"}}]);
    assert!(matches!(judge(raw(plain)), Outcome::NotApplicable(_)));
    assert!(fails(&judge(raw(answer(json!("server-error"))))));
    // No response at all (an HTTP error without a body): nothing to judge, not a pass.
    assert!(matches!(judge(raw(json!([]))), Outcome::NotApplicable(_)));
}

#[test]
fn mcp_012_passes_an_sse_stream_or_405_and_fails_any_other_answer_to_a_get() {
    let get = |out: Value| {
        let mut s = step("listen", "listen", 0, 1, out);
        s.set_request(json!({"for": "300ms"}));
        s
    };
    let judge = |s| run("MCP-012", &CheckSpec::default(), &obs(vec![s]));
    kept(judge(get(
        json!({"status": 200, "content_type": "text/event-stream; charset=utf-8"}),
    )));
    // A stateless server offers no stream: 405 is what the rule asks for.
    kept(judge(get(json!({"status": 405}))));
    let Outcome::Fail(why, evidence) = judge(get(
        json!({"status": 200, "content_type": "application/json", "body_bytes": 15}),
    )) else {
        panic!("a JSON answer to the GET breaks the rule")
    };
    assert!(why.contains("HTTP 200"), "{why}");
    assert!(
        evidence[0]
            .seen
            .as_deref()
            .is_some_and(|s| s.contains("application/json")),
        "{evidence:?}"
    );
    // 400 or 404 are not what the rule allows (the GET carries the session when one exists).
    assert!(fails(&judge(get(json!({"status": 400})))));
    // An SSE media type on an error status is no stream.
    assert!(fails(&judge(get(
        json!({"status": 500, "content_type": "text/event-stream"})
    ))));
    // No answer before the deadline: a timeout is never a failure.
    assert!(matches!(
        judge(get(json!({"status": 0, "timed_out": true}))),
        Outcome::Error(_)
    ));
    // The GET could not be made at all: never a pass.
    let mut failed = get(Value::Null);
    failed.error = Some("connection refused".into());
    assert!(matches!(judge(failed), Outcome::Error(_)));
    assert!(skipped(&run(
        "MCP-012",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn mcp_013_wants_202_without_a_body_for_an_accepted_notification() {
    let connect = |ack: Value| {
        step(
            "connect",
            "connect",
            0,
            1,
            json!({"status": 200, "protocol_version": "2025-11-25", "initialized": ack}),
        )
    };
    let judge = |s| run("MCP-013", &CheckSpec::default(), &obs(vec![s]));
    kept(judge(connect(json!({"status": 202}))));
    let Outcome::Fail(why, _) = judge(connect(json!({"status": 200}))) else {
        panic!("200 for an accepted notification breaks the rule")
    };
    assert!(
        why.contains("notifications/initialized") && why.contains("another 2xx"),
        "{why}"
    );
    let Outcome::Fail(why, evidence) = judge(connect(
        json!({"status": 202, "content_type": "application/json", "body_bytes": 2, "body_text": "{}"}),
    )) else {
        panic!("a body with the 202 breaks the rule")
    };
    assert!(why.contains("202 with a body"), "{why}");
    assert!(
        evidence[0]
            .seen
            .as_deref()
            .is_some_and(|s| s.contains("{}")),
        "{evidence:?}"
    );
    // A notification the server cannot accept gets an HTTP error status, as MCP asks: not
    // judged, and with nothing accepted the rule was not exercised.
    let notify = |status: u64, body: &str| {
        let mut s = step("notify", "raw", 2, 3, json!({"status": status}));
        s.set_request(json!({"body": body}));
        s
    };
    let cancelled =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    assert!(skipped(&judge(notify(400, cancelled))));
    kept(judge(notify(202, cancelled)));
    // A POSTed JSON-RPC response is judged alike; a request is not.
    let response = r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#;
    assert!(fails(&judge(notify(200, response))));
    let request = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    assert!(skipped(&judge(notify(200, request))));
    // `request` steps sent as notifications.
    let mut note = step("note", "request", 2, 3, json!({"status": 204}));
    note.set_request(json!({"method": "notifications/initialized", "notification": true}));
    assert!(fails(&judge(note)));
    // A connect without the ack (the 2026-07-28 era has no `initialized`): nothing to judge.
    assert!(skipped(&judge(step(
        "connect",
        "connect",
        0,
        1,
        json!({"status": 200, "protocol_version": "2026-07-28"})
    ))));
    // No answer before the deadline: an error, never a failure.
    assert!(matches!(
        judge(connect(json!({"status": 0, "timed_out": true}))),
        Outcome::Error(_)
    ));
}

#[test]
fn mcp_011_counts_a_refusal_only_when_the_model_was_not_asked_during_the_call() {
    let tools = step(
        "tools",
        "list_tools",
        0,
        1,
        json!({"result": {"tools": [{"name": "send_message",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}]}}),
    );
    let mut invalid = step(
        "missing-message",
        "call",
        2,
        5,
        json!({"status": 200, "result": {"isError": true, "content": [{"type": "text", "text": "agent failed"}]}}),
    );
    invalid.set_request(json!({"tool": "send_message", "arguments": {}}));
    let hello = step("hello", "send", 6, 7, json!({"status": 200, "text": "hi"}));
    let judged = |journal: Vec<LlmJournalEntry>, steps: Vec<StepRecord>| {
        let mut o = obs(steps);
        if !journal.is_empty() {
            o.llm_journals.insert("openai".into(), journal);
        }
        run("MCP-011", &CheckSpec::default(), &o)
    };
    let steps = vec![tools.clone(), invalid.clone(), hello.clone()];
    // The model answered the valid call only: the invalid one was refused before running.
    kept(judged(
        vec![llm(at(6, 500_000), json!({}), 200)],
        steps.clone(),
    ));
    // The agent ran on the invalid input for seconds and then answered isError: the input was
    // not validated, the MUST (the check's first rule) is broken.
    let Outcome::Fail(why, evidence) = judged(
        vec![
            llm(at(3, 0), json!({"messages": []}), 200),
            llm(at(6, 500_000), json!({}), 200),
        ],
        steps.clone(),
    ) else {
        panic!("a model request during the invalid call is no validation")
    };
    assert!(why.contains("model was asked 1 time"), "{why}");
    assert!(
        evidence[0]
            .seen
            .as_deref()
            .is_some_and(|s| s.contains("mock LLM `openai`") && s.contains("agent failed")),
        "{evidence:?}"
    );
    // No request reached any mock LLM in the whole run: whether the call ran is not observable.
    let Outcome::Inconclusive(why) = judged(vec![], steps.clone()) else {
        panic!("a refusal needs an observed model")
    };
    assert!(why.contains("not observable"), "{why}");
    // A step running beside the invalid call may have caused the model request: undecided.
    let mut beside = step("beside", "send", 3, 4, json!({"status": 200, "text": "x"}));
    beside.agent = Some("other".into());
    let Outcome::Inconclusive(why) = judged(
        vec![llm(at(3, 500_000), json!({}), 200)],
        vec![tools, invalid, beside, hello],
    ) else {
        panic!("a request that cannot be told apart decides nothing")
    };
    assert!(why.contains("`beside` ran beside it"), "{why}");
}

#[test]
fn mcp_005_does_not_judge_an_accept_whose_media_ranges_cover_both_types() {
    let raw = |status: u64, accept: &str| {
        let mut s = step("raw", "raw", 0, 1, json!({"status": status}));
        s.set_request(json!({"body": "{}", "headers": {"Accept": accept}, "with_session": true}));
        s
    };
    let judge = |s| run("MCP-005", &CheckSpec::default(), &obs(vec![s]));
    // RFC 9110 §12.5.1: `*/*` matches every media type, so the request accepts both: whatever
    // the answer, there is nothing to judge.
    for accept in [
        "*/*",
        "application/*, text/*",
        "text/event-stream, application/*;q=0.5",
        "application/json;q=0.9, */*;q=0.1",
    ] {
        assert!(skipped(&judge(raw(200, accept))), "{accept}");
        assert!(skipped(&judge(raw(406, accept))), "{accept}");
    }
    // A range that leaves one type out, or a weight of 0 for it, is judged.
    for accept in [
        "application/json",
        "text/*",
        "application/json, text/event-stream;q=0",
        "*/*, application/json;q=0",
    ] {
        assert!(judge(raw(406, accept)).is_kept(), "{accept}");
        assert!(fails(&judge(raw(200, accept))), "{accept}");
    }
}

#[test]
fn mcp_009_cites_the_error_response_rule_for_a_stray_error_and_the_result_rule_for_a_stray_result()
{
    // A raw request whose answer carries another id than the request's.
    let raw = |response: Value| {
        let mut s = step(
            "raw",
            "raw",
            0,
            1,
            json!({"status": 200, "messages": [{"at_ms": 1.0, "message": response}]}),
        );
        s.set_request(json!({"body": r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#}));
        s
    };
    let judge = |s| run("MCP-009", &CheckSpec::default(), &obs(vec![s]));
    let error = judge(raw(
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32600, "message": "bad"}}),
    ));
    assert!(breaks(&error, "mcp.error-response-same-id"), "{error:?}");
    assert!(
        error
            .broken_reason()
            .is_some_and(|r| r.contains("an error response with id 6")),
        "{error:?}"
    );
    let result = judge(raw(
        json!({"jsonrpc": "2.0", "id": 6, "result": {"tools": []}}),
    ));
    assert!(breaks(&result, "mcp.response-same-id"), "{result:?}");
    // A step's own request answered under another id: the same split.
    let sent = |response: Value| {
        step(
            "tools",
            "list_tools",
            0,
            1,
            json!({"status": 200, "messages": [{"at_ms": 1.0, "message": response}]}),
        )
    };
    assert!(breaks(
        &judge(sent(
            json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32603, "message": "boom"}})
        )),
        "mcp.error-response-same-id"
    ));
    assert!(breaks(
        &judge(sent(json!({"jsonrpc": "2.0", "id": "x", "result": {}}))),
        "mcp.response-same-id"
    ));
}

/// MCP-010 ("After the JSON-RPC response has been sent, the server SHOULD terminate the SSE
/// stream"): kept only where the stream's end was read after the response; a JSON body is no
/// stream (not applicable), a stream still open when the client stopped reading is not
/// observed, a second response on it breaks the rule.
#[test]
fn mcp_010_judges_the_end_of_the_stream_it_read() {
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    // `extra`: responses on the stream besides the one the fixture puts there.
    let answer = |ct: &str, ended: bool, extra: usize| {
        let messages: Vec<Value> = (0..extra)
            .map(|i| json!({"at_ms": i, "message": response}))
            .collect();
        step(
            "call",
            "call",
            0,
            1,
            json!({"status": 200, "content_type": ct, "result": {"content": []},
                "messages": messages, "stream_ended": ended}),
        )
    };
    let judge = |s| run("MCP-010", &CheckSpec::default(), &obs(vec![s]));
    assert!(matches!(
        judge(answer("application/json", false, 0)),
        Outcome::NotApplicable(_)
    ));
    assert!(matches!(
        judge(answer("text/event-stream", false, 0)),
        Outcome::Inconclusive(_)
    ));
    kept(judge(answer("text/event-stream", true, 0)));
    assert!(fails(&judge(answer("text/event-stream", true, 1))));
}
