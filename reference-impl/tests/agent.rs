//! Integration tests of the agent side of the reference Pallas: the agent MCP server, the agent
//! loop, `get_health`, progress notifications and bearer forwarding, against in-process fixtures.

#![allow(clippy::unwrap_used)] // Tests may unwrap: a panic is a failure with its reason.

#[path = "agent/fixtures.rs"]
mod fixtures;

#[path = "agent/server.rs"]
mod server;

#[path = "agent/agent_loop.rs"]
mod agent_loop;

#[path = "agent/health.rs"]
mod health;

#[path = "agent/progress.rs"]
mod progress;

#[path = "agent/bearer.rs"]
mod bearer;

#[path = "agent/with_mocks.rs"]
mod with_mocks;

#[path = "agent/logs.rs"]
mod logs;

#[path = "agent/recording.rs"]
mod recording;
