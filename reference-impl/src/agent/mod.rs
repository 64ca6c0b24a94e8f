//! The MCP server of one agent: `send_message`, `get_health`, the `{agent}_history` prompt.
