//! Where committed transactions go: the Kafka sink (exactly once, with bookmark and journal in
//! the same Kafka transaction) or, for local runs, the file sink.

pub mod file;
