//! Resolved settings of one agent: what the agent server and its loop run with.
