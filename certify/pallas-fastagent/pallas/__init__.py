"""Pallas: fast-agent agent definitions served as Streamable HTTP MCP servers (seed 001)."""
