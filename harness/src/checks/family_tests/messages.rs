//! Tests of the messages checks.

use serde_json::{Value, json};

use super::*;
use crate::checks::run_builtin as run;
use crate::checks::{CheckSpec, Outcome};
use crate::target::MessageKey;

#[test]
fn msg_002_wants_a_text_result_produced_by_the_model() {
    let send = |out: Value| step("send", "send", 0, 2, out);
    let mut o = obs(vec![send(json!({"status": 200, "text": "hello back"}))]);
    o.llm_journals
        .insert("openai".into(), vec![llm(at(1, 0), json!({}), 200)]);
    kept(run("MSG-002", &with(json!({"contains": "hello"})), &o));
    o.steps[0] = send(
        json!({"status": 200, "result": {"isError": true, "content": [{"type": "text", "text": "boom"}]}}),
    );
    assert!(fails(&run("MSG-002", &CheckSpec::default(), &o)));
    o.steps[0] = send(json!({"status": 200, "text": "hello back"}));
    kept(run("MSG-002", &with(json!({"via_model": true})), &o));
    o.llm_journals.insert("openai".into(), vec![]);
    assert!(fails(&run(
        "MSG-002",
        &with(json!({"via_model": true})),
        &o
    )));
    kept(run("MSG-002", &CheckSpec::default(), &o));
    assert!(skipped(&run(
        "MSG-002",
        &CheckSpec::default(),
        &obs(vec![])
    )));
}

#[test]
fn msg_002_reads_the_answer_where_the_profiles_reply_path_says() {
    let send = |out: Value| step("send", "send", 0, 2, out);
    let reply = r#"{"text": "hello back", "finishReason": "stop", "usage": {"totalTokens": 3}}"#;
    // The profile's `reply_path`: the answer is the field, not the JSON text that carries it.
    let o = obs(vec![send(
        json!({"status": 200, "text": reply, "reply_path": "$.text"}),
    )]);
    assert_eq!(o.steps[0].observation.text(), Some("hello back"));
    kept(run("MSG-002", &with(json!({"contains": "hello back"})), &o));
    assert!(fails(&run(
        "MSG-002",
        &with(json!({"contains": "finishReason"})),
        &o
    )));
    // Without it the same text is the answer as written.
    let o = obs(vec![send(json!({"status": 200, "text": reply}))]);
    kept(run(
        "MSG-002",
        &with(json!({"contains": "finishReason"})),
        &o,
    ));
    // A reply that is not the JSON the path reads: the profile and the implementation disagree,
    // no verdict on the implementation (an error naming why, with the raw result).
    for (text, why) in [
        ("hello back", "not the JSON document"),
        (r#"{"answer": "hello back"}"#, "selects nothing"),
        (r#"{"text": 42}"#, "selects a number"),
    ] {
        let o = obs(vec![send(
            json!({"status": 200, "text": text, "reply_path": "$.text"}),
        )]);
        match run("MSG-002", &CheckSpec::default(), &o) {
            Outcome::Error(reason) => {
                assert!(
                    reason.contains("`reply_path`") && reason.contains(why),
                    "{reason}"
                );
                assert!(
                    reason.contains("hello back") || reason.contains("42"),
                    "{reason}"
                );
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // No text block at all is no answer whatever the profile says: a failure, as before.
    let o = obs(vec![send(
        json!({"status": 200, "reply_path": "$.text", "result": {"content": []}}),
    )]);
    assert!(fails(&run("MSG-002", &CheckSpec::default(), &o)));
    // An `isError` result is read as written (it carries no answer), and fails as before.
    let o = obs(vec![send(
        json!({"status": 200, "reply_path": "$.text", "result": {"isError": true, "content": [{"type": "text", "text": "boom"}]}}),
    )]);
    assert_eq!(o.steps[0].observation.text(), Some("boom"));
    assert!(o.steps[0].observation.reply_error().is_none());
    assert!(fails(&run("MSG-002", &CheckSpec::default(), &o)));
}

#[test]
fn msg_003_wants_images_at_a_vision_model_and_leaves_a_model_without_vision_unjudged() {
    let mut s = step(
        "img",
        "send",
        0,
        2,
        json!({"status": 200, "text": "a cat", "result": {"content": []}}),
    );
    s.set_request(json!({"message": "what is this", "images": [{"data": "iVBORw0KGgoAAAANSUhEUg==", "mime_type": "image/png"}]}));
    let mut o = obs(vec![s]);
    o.llm_journals.insert(
        "openai".into(),
        vec![llm(
            at(1, 0),
            json!({"image_url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}),
            200,
        )],
    );
    kept(run("MSG-003", &with(json!({"vision": true})), &o));
    // Seed 001: "the agent's underlying model must support vision" binds the deployment.
    assert!(skipped(&run(
        "MSG-003",
        &with(json!({"vision": false})),
        &o
    )));
    // Text only at the model: the image was dropped.
    o.llm_journals.insert(
        "openai".into(),
        vec![llm(at(1, 0), json!({"content": "what is this"}), 200)],
    );
    assert!(fails(&run("MSG-003", &with(json!({"vision": true})), &o)));
    o.steps[0].set_output(json!({"status": 200, "result": {"isError": true, "content": [{"type": "text", "text": "images refused"}]}}));
    o.llm_journals.insert("openai".into(), vec![]);
    assert!(skipped(&run(
        "MSG-003",
        &with(json!({"vision": false})),
        &o
    )));
    assert!(fails(&run("MSG-003", &with(json!({"vision": true})), &o)));
    assert!(matches!(
        run("MSG-003", &CheckSpec::default(), &o),
        Outcome::Error(_)
    ));
}

#[test]
fn msg_004_wants_is_error_on_a_provider_failure_and_a_live_agent_after() {
    let failed = step(
        "fail",
        "send",
        0,
        2,
        json!({"status": 200, "result": {"isError": true}}),
    );
    let later = step(
        "h",
        "health",
        3,
        4,
        json!({"health": {"status": "degraded"}}),
    );
    let mut o = obs(vec![failed, later]);
    o.llm_journals
        .insert("openai".into(), vec![llm(at(1, 0), json!({}), 500)]);
    kept(run("MSG-004", &CheckSpec::default(), &o));
    o.steps[1].error = Some("connection refused".into());
    assert!(fails(&run("MSG-004", &CheckSpec::default(), &o)));
    o.steps[1].error = None;
    o.steps[0].set_output(json!({"status": 200, "error": {"code": -32603, "message": "provider"}}));
    assert!(fails(&run("MSG-004", &CheckSpec::default(), &o)));
    o.llm_journals.clear();
    assert!(skipped(&run("MSG-004", &CheckSpec::default(), &o)));
}

#[test]
fn msg_005_wants_every_earlier_message_and_reply_in_the_history() {
    let mut s = step(
        "send",
        "send",
        0,
        1,
        json!({"status": 200, "text": "hi there"}),
    );
    s.set_request(json!({"message": "hello"}));
    let h = |text: &str| {
        step(
            "history",
            "history",
            2,
            3,
            json!({"status": 200, "result": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}}),
        )
    };
    let o = obs(vec![s.clone(), h("hello\nhi there")]);
    kept(run("MSG-005", &CheckSpec::default(), &o));
    let o = obs(vec![s, h("hello")]);
    assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
    let o = obs(vec![h("")]);
    assert!(skipped(&run("MSG-005", &CheckSpec::default(), &o)));
    // An answer the profile's `reply_path` cannot read: whether the history holds it is not
    // observable — an error, never a pass on the message alone.
    let mut unreadable = step(
        "send",
        "send",
        0,
        1,
        json!({"status": 200, "text": "plain words", "reply_path": "$.text"}),
    );
    unreadable.set_request(json!({"message": "hello"}));
    let o = obs(vec![unreadable, h("hello\nplain words")]);
    assert!(matches!(
        run("MSG-005", &CheckSpec::default(), &o),
        Outcome::Error(r) if r.contains("`reply_path`")
    ));
}

#[test]
fn msg_003_leaves_images_that_are_not_base64_image_data_unjudged() {
    let mut s = step(
        "bad",
        "send",
        0,
        2,
        json!({"status": 200, "result": {"isError": true,
        "content": [{"type": "text", "text": "images[0] is not valid base64"}]}}),
    );
    s.set_request(
        json!({"message": "look", "images": [{"data": "not *base64*!", "mime_type": "image/png"}]}),
    );
    let mut o = obs(vec![s]);
    o.llm_journals.insert("openai".into(), vec![]);
    assert!(skipped(&run("MSG-003", &with(json!({"vision": true})), &o)));
    o.steps[0].set_request(
        json!({"message": "look", "images": [{"data": "aGVsbG8=", "mime_type": "text/plain"}]}),
    );
    o.steps[0].set_output(json!({"status": 200, "text": "a picture", "result": {"content": []}}));
    assert!(skipped(&run("MSG-003", &with(json!({"vision": true})), &o)));
}

#[test]
fn msg_005_reads_a_history_shared_by_two_connections_through_prompts_get() {
    let mut connect = step("c", "connect", 0, 1, json!({"status": 200}));
    connect.agent = Some("bob".into());
    connect.set_request(json!({"agent": "research", "as": "bob"}));
    let mut alice = step(
        "a",
        "send",
        1,
        2,
        json!({"status": 200, "text": "hi alice"}),
    );
    alice.set_request(json!({"agent": "research", "message": "first from alice"}));
    let mut h = step(
        "h",
        "request",
        3,
        4,
        json!({"status": 200, "result": {"messages": [
        {"role": "user", "content": {"type": "text", "text": "first from alice"}},
        {"role": "assistant", "content": {"type": "text", "text": "hi alice"}}]}}),
    );
    h.agent = Some("bob".into());
    h.set_request(
        json!({"agent": "bob", "method": "prompts/get", "params": {"name": "research_history"}}),
    );
    let o = obs(vec![connect.clone(), alice.clone(), h.clone()]);
    kept(run("MSG-005", &CheckSpec::default(), &o));
    h.set_output(json!({"status": 200, "result": {"messages": []}}));
    let o = obs(vec![connect, alice, h]);
    assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
}

#[test]
fn msg_005_wants_no_stored_conversation_for_a_request_scoped_agent() {
    let mut h = step(
        "h",
        "history",
        3,
        4,
        json!({"status": 200, "error": {"code": -32602}}),
    );
    h.set_request(json!({"agent": "research"}));
    let mut o = obs(vec![h]);
    o.deployment = Some(deployment(
        json!({"agents": {"research": {"instance_scope": "request"}}}),
    ));
    kept(run("MSG-005", &CheckSpec::default(), &o));
    o.steps[0].set_output(json!({"status": 200, "result": {"messages": [{"role": "user"}]}}));
    assert!(fails(&run("MSG-005", &CheckSpec::default(), &o)));
}

/// MSG-001 judges the argument the target sends the message in: `message`, or the key its
/// profile's `message_arguments` gives.
#[test]
fn msg_001_wants_the_targets_message_argument_required() {
    let tools = step(
        "tools",
        "list_tools",
        0,
        1,
        json!({"result": {"tools": [{"name": "send_message", "inputSchema": {"type": "object",
            "properties": {"input": {"type": "string"}}, "required": ["input"]}}]}}),
    );
    let mut o = obs(vec![tools]);
    assert!(fails(&run("MSG-001", &CheckSpec::default(), &o)));
    o.message_key = MessageKey::new(["input"]);
    kept(run("MSG-001", &CheckSpec::default(), &o));
    o.message_key = MessageKey::new(["message"]);
    assert!(fails(&run("MSG-001", &CheckSpec::default(), &o)));
    // A key of the profile's own that the tool does not take: the profile and the
    // implementation disagree, an error (seed 001's `message` missing is the failure above).
    o.message_key = MessageKey::new(["prompt"]);
    assert!(matches!(
        run("MSG-001", &CheckSpec::default(), &o),
        Outcome::Error(r) if r.contains("`prompt`")
    ));
    // Seed 001's `send_message` not listed fails; a tool name the profile gives, with a key
    // the profile gives, is not seed 001's definition: the listing could only confirm the
    // profile, so the check does not apply.
    o.message_key = MessageKey::new(["input"]);
    o.message_tools
        .insert("research".into(), "ask_research".into());
    assert!(matches!(
        run("MSG-001", &CheckSpec::default(), &o),
        Outcome::NotApplicable(r) if r.contains("`ask_research`")
    ));
    // With seed 001's key, a tool name the profile gives, not listed, is an error.
    o.message_key = MessageKey::new(["message"]);
    assert!(matches!(
        run("MSG-001", &CheckSpec::default(), &o),
        Outcome::Error(r) if r.contains("`ask_research`")
    ));
    o.message_tools.insert("research".into(), "send_msg".into());
    assert!(matches!(
        run("MSG-001", &CheckSpec::default(), &o),
        Outcome::Error(_)
    ));
    let unlisted = step(
        "tools",
        "list_tools",
        0,
        1,
        json!({"result": {"tools": [{"name": "other", "inputSchema": {"type": "object"}}]}}),
    );
    assert!(fails(&run(
        "MSG-001",
        &CheckSpec::default(),
        &obs(vec![unlisted])
    )));
}

/// A `list_tools` step listing `send_message` with `schema` as its inputSchema.
fn listed(schema: Value) -> crate::observation::Observed {
    let tools = step(
        "tools",
        "list_tools",
        0,
        1,
        json!({"result": {"tools": [{"name": "send_message", "inputSchema": schema}]}}),
    );
    obs(vec![tools])
}

/// The inputSchema pydantic writes for a tool taking `run_args: RunArgs` where
/// `RunArgs` has a required `message: str`: the nested model behind a `$ref` into `$defs`.
fn nested_schema() -> Value {
    json!({
        "type": "object",
        "$defs": {"RunArgs": {"type": "object", "title": "RunArgs",
            "properties": {"message": {"type": "string", "title": "Message"}},
            "required": ["message"]}},
        "properties": {"run_args": {"$ref": "#/$defs/RunArgs"}},
        "required": ["run_args"]
    })
}

/// MSG-001 walks a nested message key (`run_args.message`) through the listed tool's
/// inputSchema, following `$ref`s into its own `$defs`/`definitions`: each key a required
/// property of its level, the last a string. Each broken variant fails; a reference it cannot
/// follow is inconclusive, never a fail.
#[test]
fn msg_001_walks_a_nested_message_key_through_refs() {
    let key = MessageKey::new(["run_args", "message"]);
    let judge = |schema: Value| {
        let mut o = listed(schema);
        o.message_key = key.clone();
        run("MSG-001", &CheckSpec::default(), &o)
    };
    kept(judge(nested_schema()));
    // The same under `definitions`, and inline without any `$ref`.
    let mut old = nested_schema();
    old["definitions"] = old["$defs"].take();
    old["properties"]["run_args"]["$ref"] = json!("#/definitions/RunArgs");
    kept(judge(old));
    let mut inline = nested_schema();
    inline["properties"]["run_args"] = inline["$defs"]["RunArgs"].clone();
    kept(judge(inline));

    // Broken where the profile says the message goes: the profile and the implementation
    // disagree (a key of the profile's, not seed 001's `message`), an error naming where.
    let disagree =
        |o: Outcome| matches!(o, Outcome::Error(ref r) if r.contains("`run_args.message`"));
    let mut missing = nested_schema();
    missing["$defs"]["RunArgs"]["properties"] = json!({"msg": {"type": "string"}});
    missing["$defs"]["RunArgs"]["required"] = json!(["msg"]);
    let Outcome::Error(reason) = judge(missing) else {
        panic!("a missing nested key is an error");
    };
    assert!(
        reason.contains("`run_args.message`") && reason.contains("inputSchema at run_args"),
        "{reason}"
    );
    // Broken: not a string.
    let mut number = nested_schema();
    number["$defs"]["RunArgs"]["properties"]["message"] = json!({"type": "integer"});
    assert!(disagree(judge(number)));
    // A list of types holding `string` (pydantic's `Optional[str]`) takes a string; one
    // without it does not.
    let mut nullable = nested_schema();
    nullable["$defs"]["RunArgs"]["properties"]["message"] = json!({"type": ["string", "null"]});
    kept(judge(nullable));
    let mut any_of = nested_schema();
    any_of["$defs"]["RunArgs"]["properties"]["message"] =
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    kept(judge(any_of));
    let mut any_of_number = nested_schema();
    any_of_number["$defs"]["RunArgs"]["properties"]["message"] =
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    assert!(disagree(judge(any_of_number)));
    let mut nullable_number = nested_schema();
    nullable_number["$defs"]["RunArgs"]["properties"]["message"] =
        json!({"type": ["integer", "null"]});
    assert!(disagree(judge(nullable_number)));
    // Broken: not required at the nested level, or not at the top.
    let mut optional = nested_schema();
    optional["$defs"]["RunArgs"]["required"] = json!([]);
    assert!(disagree(judge(optional)));
    let mut optional_top = nested_schema();
    optional_top["required"] = json!([]);
    assert!(disagree(judge(optional_top)));
    // Broken: the outer key is missing.
    let mut no_outer = nested_schema();
    no_outer["properties"] = json!({"message": {"type": "string"}});
    no_outer["required"] = json!(["message"]);
    assert!(disagree(judge(no_outer)));

    // Unresolvable: a reference outside the schema, or to a definition it lacks.
    for r in ["https://example.com/run-args.json", "#/$defs/Missing"] {
        let mut external = nested_schema();
        external["properties"]["run_args"]["$ref"] = json!(r);
        let Outcome::Inconclusive(why) = judge(external) else {
            panic!("an unresolvable `$ref` ({r}) is inconclusive");
        };
        assert!(why.contains(r) && why.contains("$defs"), "{why}");
    }
    // Unresolvable: the level declares its properties through a combinator.
    let mut combined = nested_schema();
    combined["properties"]["run_args"] = json!({"allOf": [{"$ref": "#/$defs/RunArgs"}]});
    let Outcome::Inconclusive(why) = judge(combined) else {
        panic!("a combinator is not walked");
    };
    assert!(why.contains("allOf"), "{why}");
    // A `$ref` cycle ends.
    let mut cycle = nested_schema();
    cycle["$defs"]["RunArgs"] = json!({"$ref": "#/$defs/RunArgs"});
    assert!(matches!(judge(cycle), Outcome::Inconclusive(_)));
}
