//! `pallas-reference`: the reference Pallas.
