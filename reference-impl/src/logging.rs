//! JSON logs through `tracing`, configured by the `PALLAS_LOG_*` variables.
