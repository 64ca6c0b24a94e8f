//! `pallas-mocks`: scriptable, fault-injectable mock LLM providers (OpenAI-compatible and
//! Anthropic) and mock downstream MCP servers, each with a journal of what it received.

pub mod journal;
pub mod spec;
pub mod yaml;

pub use journal::{LlmJournalEntry, McpJournalEntry, SessionStats};
pub use spec::*;
