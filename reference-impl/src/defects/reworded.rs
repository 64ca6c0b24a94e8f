//! The progress wording of a bridge that is not a Pallas: correct MCP progress, other words than
//! seed 000's (`Calling tool search on argos`, `Agent research is thinking (turn 1)`). As a
//! Pallas it breaks seed 000's message table; as a generic bridge it breaks nothing, which is what
//! the kit's generic-wording test proves. Three variants:
//! - `progress-generic-wording`: every message reworded, each naming what it reports;
//! - `progress-generic-failed-completed`: the same, but a failed tool is announced as
//!   `Tool call completed: {tool}` (the wording of a bridge that reports every finished call so);
//! - `progress-generic-nameless`: every message is `Agent working`, naming no tool.

/// `message` in the active variant's words (unchanged when none is active).
pub fn reworded(message: String) -> String {
    let generic = crate::defect!("progress-generic-wording");
    let failed_completed = crate::defect!("progress-generic-failed-completed");
    if crate::defect!("progress-generic-nameless") {
        return "Agent working".to_owned();
    }
    if !generic && !failed_completed {
        return message;
    }
    if let Some((label, state)) = message.rsplit_once(": ")
        && let Some((server, tool)) = label.split_once('/')
    {
        return match state {
            "started" => format!("Calling tool {tool} on {server}"),
            "failed" if failed_completed => format!("Tool call completed: {tool}"),
            "failed" => format!("Tool {tool} on {server} returned an error"),
            _ => format!("Tool {tool} on {server} returned"),
        };
    }
    if let Some((agent, rest)) = message.split_once(" step ")
        && let Some((n, kind)) = rest.split_once(' ')
    {
        let doing = if kind == "(tool)" {
            "is running tools"
        } else {
            "is thinking"
        };
        return format!("Agent {agent} {doing} (turn {n})");
    }
    message
}
