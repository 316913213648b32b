//! The capture's integration tests (docs/testing.md), in one test binary: a module per area, the
//! support modules once beside them. One binary links once where the 45 it replaced linked the
//! capture library and their helpers 45 times. Run one area with
//! `cargo test -p redoline-capture --test it -- <module>::`; nextest runs every test in a
//! process of its own, as before. `composed/` stays a binary of its own (it runs its workloads
//! in parallel itself and nextest gives it two threads).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

#[path = "../buffer_support/mod.rs"]
mod buffer_support;
#[path = "../kafka_support/mod.rs"]
mod kafka_support;
#[path = "../load_support/mod.rs"]
mod load_support;
#[path = "../registry_model/mod.rs"]
mod registry_model;
#[path = "../run_support/mod.rs"]
mod run_support;

mod archived_redo;
mod buffer_faults;
mod buffer_history;
mod buffer_model;
mod buffer_policies;
mod capture_features;
mod capture_kafka_at_least_once;
mod capture_kafka_crash;
mod capture_kafka_fencing;
mod capture_kafka_history;
mod capture_kafka_journal;
mod capture_kafka_ops;
mod capture_kafka_streaming;
mod capture_kafka_topics;
mod capture_kafka_transaction;
mod capture_retry;
mod capture_run;
mod capture_types;
mod cli;
mod connector;
mod database_load;
mod database_time_zone;
mod event_formats;
mod field_corpus;
mod fuzz_corpus;
mod harness;
mod heartbeat;
mod history;
mod kafka_acls;
mod kafka_auth;
mod kafka_sink_journal;
mod kafka_sink_pages;
mod log_buffer;
mod oracle_field_rows;
mod redo_parse;
mod reposition;
mod schema_registry;
mod simulator_property;
mod simulator_scenarios;
mod snapshot;
mod snapshot_incremental;
mod snapshot_incremental_kafka;
mod snapshot_kafka;
mod snapshot_live_requests;
mod snapshot_table_joins_live;
mod transaction_age;
mod window_size;
