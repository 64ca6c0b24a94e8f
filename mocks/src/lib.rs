//! `pallas-mocks`: scriptable, fault-injectable mock LLM providers (OpenAI-compatible and
//! Anthropic), mock downstream MCP servers and a mock Pallas (seed 000's registry and agents, for
//! developing a Daedalus-side client), each with a journal of what it received.
//!
//! Start a whole [`Ecosystem`] from an [`EcosystemSpec`] (the `ecosystem:` section of a scenario,
//! or a file read with [`parse_ecosystem`]), or a single [`LlmMock`] / [`McpMock`] /
//! [`MockPallas`]. Every mock binds `127.0.0.1`, serves its journal at `GET /__mock/journal` and
//! clears it at `POST /__mock/reset` (the mock Pallas on its registry's port).

pub mod cli;
mod common;
mod ecosystem;
pub mod error;
pub mod http_client;
mod issue;
pub mod journal;
pub mod llm;
pub mod mcp;
pub mod packs;
pub mod pallas;
pub mod record;
pub mod redact;
pub mod spec;
pub mod tls;
pub mod validate;
pub mod yaml;

pub use ecosystem::Ecosystem;
pub use error::MockError;
pub use journal::{LlmJournalEntry, McpJournalEntry, PallasJournalEntry, SessionStats};
pub use llm::LlmMock;
pub use mcp::McpMock;
pub use pallas::{MockPallas, validate_spec as validate_pallas_spec};
pub use spec::*;
pub use tls::MockTls;
pub use validate::{SpecIssue, parse_ecosystem, validate_ecosystem};
