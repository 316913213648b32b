//! `kubectl redoline`: a kubectl plugin for redoline's OracleCapture.
//!
//! ```text
//! status NAME ──> fetch: the OracleCapture (API server) + the capture's /status (pod proxy)
//!                 └─> view: one model of both ──> render: one screen, or --output json
//! snapshot NAME TABLE... / reposition NAME --scn N
//!             ──> edit: the spec change, checked ──> a JSON merge patch of spec, as kubectl edit
//! ```
//!
//! The layout of `status` follows CloudNativePG's `kubectl cnpg status`: a headline, then one
//! section per concern, each a few lines. The plugin reads the OracleCapture and `/status` as
//! JSON and tolerates members it does not know or that are missing, since the plugin, the
//! operator and the capture may be of different versions.

pub mod cli;
pub mod edit;
pub mod error;
pub mod fetch;
pub mod live;
pub mod render;
pub mod run;
pub mod view;
