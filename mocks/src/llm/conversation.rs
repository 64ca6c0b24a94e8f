//! A completion request read into a provider-neutral form the script matches against.

use serde_json::Value;

use crate::spec::Dialect;

/// What the script needs to know about a completion request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conversation {
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) include_usage: bool,
    /// Text of the last user message that is not only tool results.
    pub(crate) last_user: Option<String>,
    /// Tool results sent after that message, in order.
    pub(crate) tool_results: Vec<String>,
    /// Names of the tools offered.
    pub(crate) tools_offered: Vec<String>,
    /// Characters of message text, to estimate input tokens.
    pub(crate) prompt_chars: usize,
    /// User messages in the request (tool results not counted).
    pub(crate) user_messages: u32,
    /// Assistant messages after the last user message.
    pub(crate) round: u32,
}

/// Why a request body is not a completion request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadRequest(pub(crate) String);

impl Conversation {
    pub(crate) fn parse(dialect: Dialect, body: &Value) -> Result<Self, BadRequest> {
        let obj = body
            .as_object()
            .ok_or_else(|| BadRequest("the request body must be a JSON object".into()))?;
        let model = match obj.get("model") {
            Some(Value::String(m)) => m.clone(),
            Some(_) => return Err(BadRequest("`model` must be a string".into())),
            None => return Err(BadRequest("you must provide a model parameter".into())),
        };
        let messages = match obj.get("messages") {
            Some(Value::Array(m)) => m,
            Some(_) => return Err(BadRequest("`messages` must be an array".into())),
            None => return Err(BadRequest("missing required parameter: `messages`".into())),
        };
        let stream = obj.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let include_usage = obj
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut conv = Conversation {
            model,
            stream,
            include_usage,
            ..Default::default()
        };
        if let Some(Value::Array(tools)) = obj.get("tools") {
            conv.tools_offered = tools
                .iter()
                .filter_map(|t| match dialect {
                    Dialect::Openai => t.pointer("/function/name").or_else(|| t.get("name")),
                    Dialect::Anthropic => t.get("name"),
                })
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        if let Some(system) = obj.get("system") {
            conv.prompt_chars += text_of(system).len();
        }
        for (i, m) in messages.iter().enumerate() {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| BadRequest(format!("messages[{i}]: missing or invalid `role`")))?;
            let content = m.get("content").unwrap_or(&Value::Null);
            let text = text_of(content);
            conv.prompt_chars += text.len();
            match (dialect, role) {
                (Dialect::Openai, "user") => {
                    conv.last_user = Some(text);
                    conv.tool_results.clear();
                    conv.user_messages = conv.user_messages.saturating_add(1);
                    conv.round = 0;
                }
                (_, "assistant") => conv.round = conv.round.saturating_add(1),
                (Dialect::Openai, "tool" | "function") => conv.tool_results.push(text),
                (Dialect::Anthropic, "user") => {
                    let results = anthropic_tool_results(content);
                    if results.is_empty() {
                        conv.last_user = Some(text);
                        conv.tool_results.clear();
                        conv.user_messages = conv.user_messages.saturating_add(1);
                        conv.round = 0;
                    } else {
                        conv.tool_results.extend(results);
                    }
                }
                _ => {}
            }
        }
        Ok(conv)
    }
}

/// The text of a message content: a string, or the `text` of its text parts joined by newlines.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn anthropic_tool_results(content: &Value) -> Vec<String> {
    let Value::Array(blocks) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|b| text_of(b.get("content").unwrap_or(&Value::Null)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_tool_results_after_the_last_user_message_are_collected() {
        let body = json!({"model":"m","messages":[
            {"role":"system","content":"s"},
            {"role":"user","content":"CALL_TOOL a__b {}"},
            {"role":"assistant","content":null,"tool_calls":[]},
            {"role":"tool","tool_call_id":"c1","content":"R1"},
            {"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"R2"}]}
        ],"tools":[{"type":"function","function":{"name":"a__b"}}],"stream":true,
        "stream_options":{"include_usage":true}});
        let c = Conversation::parse(Dialect::Openai, &body).unwrap();
        assert_eq!(c.last_user.as_deref(), Some("CALL_TOOL a__b {}"));
        assert_eq!(c.tool_results, vec!["R1", "R2"]);
        assert_eq!(c.tools_offered, vec!["a__b"]);
        assert!(c.stream && c.include_usage);
        assert_eq!((c.user_messages, c.round), (1, 1));
    }

    #[test]
    fn anthropic_tool_result_blocks_count_as_results_not_user_text() {
        let body = json!({"model":"m","max_tokens":10,"messages":[
            {"role":"user","content":[{"type":"text","text":"hello"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"R"}]}
        ],"tools":[{"name":"x","input_schema":{"type":"object"}}]});
        let c = Conversation::parse(Dialect::Anthropic, &body).unwrap();
        assert_eq!(c.last_user.as_deref(), Some("hello"));
        assert_eq!(c.tool_results, vec!["R"]);
        assert_eq!(c.tools_offered, vec!["x"]);
        assert_eq!((c.user_messages, c.round), (1, 1));
    }

    #[test]
    fn a_new_user_message_clears_earlier_tool_results() {
        let body = json!({"model":"m","messages":[
            {"role":"user","content":"a"},
            {"role":"tool","content":"old"},
            {"role":"user","content":"b"}
        ]});
        let c = Conversation::parse(Dialect::Openai, &body).unwrap();
        assert!(c.tool_results.is_empty());
        assert_eq!(c.last_user.as_deref(), Some("b"));
        assert_eq!((c.user_messages, c.round), (2, 0));
    }

    #[test]
    fn missing_messages_or_model_is_a_bad_request() {
        assert!(Conversation::parse(Dialect::Openai, &json!({"model":"m"})).is_err());
        assert!(Conversation::parse(Dialect::Openai, &json!({"messages":[]})).is_err());
        assert!(Conversation::parse(Dialect::Openai, &json!([1])).is_err());
        assert!(
            Conversation::parse(Dialect::Anthropic, &json!({"model":"m","messages":[{}]})).is_err()
        );
    }
}
