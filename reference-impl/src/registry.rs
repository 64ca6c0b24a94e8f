//! The registry server: `GET /.well-known/mcp/server.json`, `/healthz`, `/metrics`.
