//! LLM providers (OpenAI-compatible, Anthropic) and their preflight.
