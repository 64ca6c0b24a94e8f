//! Launching an implementation under test.
