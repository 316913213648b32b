//! Exit statuses of `redoline-capture`, documented in docs/capture.md.

/// Finished normally.
pub const OK: u8 = 0;
/// An unexpected internal error (a bug): logged, no termination message of a typed stop.
pub const INTERNAL_ERROR: u8 = 1;
/// The command line could not be parsed (clap's own status).
pub const USAGE: u8 = 2;
/// A typed stop: the termination message names the CDC- code and what to do.
pub const STOPPED: u8 = 3;
/// The mounted credentials changed (`crate::rotation`): the run ended cleanly, as on SIGTERM,
/// so that the kubelet starts the container again with the new files.
pub const CREDENTIALS_CHANGED: u8 = 4;
