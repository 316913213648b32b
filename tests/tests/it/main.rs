//! The end-to-end tests of redoline (docs/testing.md), in one test binary: a module per area, their
//! harness in the `redoline_tests` library (`tests/src/`). One binary links the workspace once
//! where the 22 it replaced linked it 22 times. Run one area with
//! `cargo test -p redoline-tests --test it -- <module>::`; nextest runs every test in a process of
//! its own, as before, so its deadlines and priorities (`.config/nextest.toml`) name modules.
//!
//! None needs a binary of its own: no test sets process-wide state (environment variables, a
//! global logger, crypto provider or metrics registry, signal handlers, the working directory).
//! What a process shares, the control plane, broker, registry and PostgreSQL it starts when
//! `make test`'s variables are unset, is meant to be shared; each test isolates itself with a
//! namespace, topic prefix or database of its own, as it must anyway under nextest, which runs
//! tests of every area side by side against one environment.

mod avro_registry_e2e;
mod capture_config;
mod control_plane;
mod crd_validation;
mod dashboards;
mod debezium_avro;
mod debezium_jdbc_pipeline;
mod debezium_json;
mod demo_e2e;
mod demo_local;
mod gitops_health;
mod helm_chart;
mod images;
mod kafka_transactions;
mod kubectl_output;
mod kubectl_plugin;
mod operator_children;
mod operator_leader;
mod operator_rbac;
mod operator_reconcile;
mod operator_resize;
mod real_credentials;
mod real_pods;
