//! Prometheus metrics of seed 001 "Metrics".
