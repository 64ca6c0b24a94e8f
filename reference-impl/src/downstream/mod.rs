//! Clients of the downstream MCP servers an agent uses as tools.
