//! Progress notifications for one `tools/call`.
