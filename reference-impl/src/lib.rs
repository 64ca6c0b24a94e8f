//! `pallas-reference`: the reference Pallas. It reads `agents.yaml`, `fastagent.config.yaml`,
//! `fastagent.secrets.yaml` and `.env` from its working directory, serves a registry of its agents
//! and one MCP Streamable HTTP server per agent, and runs each agent's loop against
//! OpenAI-compatible or Anthropic providers with downstream MCP servers as tools.

pub mod agent;
pub mod config;
pub mod downstream;
pub mod health;
pub mod llm;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod registry;
pub mod runtime;
pub mod settings;
