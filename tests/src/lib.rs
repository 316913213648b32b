//! Test environment: see the crate README.
