//! Progress notifications (seed 000 §4, seed 001 §Daedalus Integration).

pub(super) const KNOWN: &[(&str, &str)] = &[
    (
        "progress-generic-wording",
        "progress messages in a generic bridge's words (`Calling tool {tool} on {server}`, `Agent {agent} is thinking (turn N)`), not seed 000's",
    ),
    (
        "progress-generic-failed-completed",
        "generic wording, and a failed tool announced as `Tool call completed: {tool}`",
    ),
    (
        "progress-generic-nameless",
        "every progress message is `Agent working`: no tool or step named",
    ),
    (
        "progress-on-standalone-stream",
        "a call's progress notifications go over the session's standalone GET stream instead of the call's own SSE response",
    ),
    (
        "progress-undeliverable-fatal",
        "once the client closed a call's stream, progress sends fail and the failure stops the loop",
    ),
    (
        "progress-without-token",
        "progress is sent although the request carried no token",
    ),
    (
        "progress-token-as-string",
        "numeric progress tokens are echoed as strings",
    ),
    (
        "progress-not-monotonic",
        "`progress` decreases from one notification to the next",
    ),
    (
        "progress-drop-started",
        "`{server}/{tool}: started` notifications are not sent",
    ),
    (
        "progress-after-result",
        "a progress notification follows the request's result",
    ),
    (
        "progress-after-cancel",
        "a cancelled call gets one more notification on its stream",
    ),
    (
        "cancel-ignored",
        "`notifications/cancelled` is ignored: the call's loop goes on to its result",
    ),
    (
        "progress-bad-message",
        "loop step messages lose their `(llm)` / `(tool)` suffix",
    ),
    ("progress-total-on-steps", "loop steps carry a `total`"),
    (
        "progress-starts-at-one",
        "a call's first progress notification reports 1 instead of 0",
    ),
    (
        "progress-steps-from-zero",
        "loop steps are numbered from 0 (`step 0 (llm)`)",
    ),
    (
        "progress-token-stale",
        "every call's progress notifications echo the first progress token the process saw",
    ),
    (
        "progress-counter-stalls",
        "a call's second progress notification repeats the first one's `progress` value",
    ),
    (
        "progress-completed-total-one",
        "a finished sub-task reports `total` 1.0 whatever its `progress`",
    ),
    (
        "progress-completed-without-total",
        "a finished sub-task is reported without `total`",
    ),
    (
        "progress-started-no-server",
        "a tool start is reported as `{tool}: started`, without the server",
    ),
    (
        "progress-completed-as-done",
        "a finished tool is reported as `{server}/{tool}: done`",
    ),
    (
        "progress-failed-as-completed",
        "a failed tool is reported as `{server}/{tool}: completed`",
    ),
    (
        "progress-llm-step-as-turn",
        "an LLM turn is reported as `{agent} step N (turn)`",
    ),
    (
        "progress-tool-step-as-llm",
        "a tool execution step is reported as `{agent} step N (llm)`",
    ),
    (
        "progress-free-text",
        "a tool start is reported in free text (`calling {tool} on {server}`)",
    ),
    (
        "progress-agent-prefix",
        "every tool's progress notes carry the agent's first server as prefix, not the tool's own",
    ),
    (
        "progress-held-until-done",
        "progress notifications are held back and sent together just before the result",
    ),
];
