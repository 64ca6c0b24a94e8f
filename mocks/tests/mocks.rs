//! Integration tests of `pallas-mocks`: every behaviour over the wire, with raw HTTP for the
//! details and the rmcp client for MCP end to end.

#![allow(clippy::unwrap_used)] // Tests may unwrap: a panic is a failure with its reason.

mod mocks {
    pub mod anthropic;
    pub mod cli;
    pub mod ecosystem;
    pub mod mcp;
    pub mod openai;
    pub mod pallas;
    pub mod record;
    pub mod strict;
    pub mod support;
}
