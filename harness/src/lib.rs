//! `pallas-conformance`: the conformance harness for Pallas-style agent bridges.
