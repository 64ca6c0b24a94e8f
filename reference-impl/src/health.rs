//! `get_health`: downstream probes and the active provider status.
