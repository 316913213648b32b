//! The Kafka ACLs a capture needs, derived from its config: what `redoline-capture acls` prints
//! and docs/kafka.md ("ACLs") explains.
//!
//! Each rule comes from a request the capture makes, with the operation Kafka's authorizer checks
//! for it (Kafka's protocol documentation lists the operation per request):
//!
//! | request | by | resource | operation |
//! |---|---|---|---|
//! | Produce, AddPartitionsToTxn | the producer | each topic written | Write |
//! | Metadata | producer, readers | each topic used | Describe |
//! | CreateTopics | the capture's admin client; the broker's auto-creation | each topic created | Create |
//! | DescribeConfigs | the start-up checks | each internal topic | DescribeConfigs |
//! | Fetch, ListOffsets | the readers of bookmark, journal and schema history | those topics | Read (ListOffsets: Describe) |
//! | FindCoordinator (group) | the readers (librdkafka asks for the coordinator of any `group.id`) | the reader's group | Describe |
//! | FindCoordinator (transaction), InitProducerId, AddPartitionsToTxn, EndTxn | the transactional producer | the transactional id | Describe, Write |
//!
//! The readers assign their partitions and never commit offsets, so they never join their group
//! (JoinGroup, OffsetCommit: Read on the group) and Describe is enough. It is needed all the
//! same: librdkafka's group handle starts by asking for its coordinator whenever `group.id` is
//! set, and passes a GROUP_AUTHORIZATION_FAILED answer on to the consumer's queue, where the
//! reader would meet it (librdkafka 2.12, `rdkafka_cgrp.c`, `rd_kafka_cgrp_serve` and
//! `rd_kafka_cgrp_handle_FindCoordinator`). An idempotent producer
//! without transactions (at least once) needs IdempotentWrite on the cluster only on brokers
//! before Kafka 2.8: KIP-679 made Write on any topic enough for InitProducerId there; the
//! `legacy_idempotent_write` rule adds it for older brokers.
//!
//! Data topics are written under `<topicPrefix>.` (one prefixed rule); the topics whose names do
//! not start with it (the schema change topic, named `<topicPrefix>` itself, the heartbeat topic
//! and a journal topic named in `spec.journal.topic`) get literal rules. An operation a prefixed
//! rule already grants on a name is not repeated as a literal rule for it.

use std::collections::BTreeMap;
use std::fmt;

use redoline_crds::v1alpha1::{FormatType, TopicCreation};
use serde::Serialize;

use super::reader::reader_group;
use super::topics::TopicNames;
use crate::config::{CaptureConfig, KafkaConfig};
use crate::heartbeat::heartbeat_topic;
use crate::sink::CaptureIdentity;

/// A Kafka resource type an ACL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ResourceKind {
    Topic,
    Group,
    TransactionalId,
    Cluster,
}

/// How an ACL's name matches resource names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Pattern {
    /// The name exactly.
    Literal,
    /// Every name starting with it.
    Prefixed,
}

/// An operation an ACL allows, named as Kafka names it (`kafka-acls.sh --operation`, Strimzi's
/// `operations`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Operation {
    Read,
    Write,
    Create,
    Describe,
    DescribeConfigs,
    IdempotentWrite,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Operation::Read => "Read",
            Operation::Write => "Write",
            Operation::Create => "Create",
            Operation::Describe => "Describe",
            Operation::DescribeConfigs => "DescribeConfigs",
            Operation::IdempotentWrite => "IdempotentWrite",
        };
        f.write_str(name)
    }
}

/// One allow rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclRule {
    /// `User:NAME` (Kafka's principal form).
    pub principal: String,
    pub resource: ResourceKind,
    pub pattern: Pattern,
    /// The resource's name or prefix; `kafka-cluster` for the cluster.
    pub name: String,
    pub operation: Operation,
    /// Hosts the rule allows: always `*`.
    pub host: String,
    /// Why the capture needs it.
    pub reason: String,
}

/// The cluster resource's name in Kafka's ACLs.
const CLUSTER_NAME: &str = "kafka-cluster";

impl AclRule {
    fn new(
        principal: &str,
        resource: ResourceKind,
        pattern: Pattern,
        name: &str,
        operation: Operation,
        reason: &str,
    ) -> Self {
        Self {
            principal: principal.to_owned(),
            resource,
            pattern,
            name: name.to_owned(),
            operation,
            host: "*".to_owned(),
            reason: reason.to_owned(),
        }
    }

    /// The arguments of `kafka-acls.sh` that add this rule.
    pub fn kafka_acls_args(&self, bootstrap: &str) -> Vec<String> {
        let mut args: Vec<String> = [
            "--bootstrap-server",
            bootstrap,
            "--add",
            "--allow-principal",
            &self.principal,
            "--allow-host",
            &self.host,
            "--operation",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.push(self.operation.to_string());
        let flag = match self.resource {
            ResourceKind::Topic => "--topic",
            ResourceKind::Group => "--group",
            ResourceKind::TransactionalId => "--transactional-id",
            ResourceKind::Cluster => "--cluster",
        };
        args.push(flag.to_owned());
        if self.resource != ResourceKind::Cluster {
            args.push(self.name.clone());
            args.push("--resource-pattern-type".to_owned());
            args.push(
                match self.pattern {
                    Pattern::Literal => "literal",
                    Pattern::Prefixed => "prefixed",
                }
                .to_owned(),
            );
        }
        args
    }

    /// Whether this rule grants `operation` on the resource `name` of kind `resource`.
    fn covers(&self, resource: ResourceKind, name: &str, operation: Operation) -> bool {
        self.resource == resource
            && self.operation == operation
            && match self.pattern {
                Pattern::Literal => self.name == name,
                Pattern::Prefixed => name.starts_with(&self.name),
            }
    }
}

/// The rules the capture of `config` needs, as `principal` (`User:NAME`); none for a config
/// without a Kafka sink.
pub fn required_acls(config: &CaptureConfig, principal: &str) -> Vec<AclRule> {
    let Some(kafka) = &config.kafka else {
        return Vec::new();
    };
    let mut rules = Rules {
        principal,
        rules: Vec::new(),
    };
    data_topic_rules(&mut rules, config, kafka);
    internal_topic_rules(&mut rules, config, kafka);
    if kafka.exactly_once {
        let id = identity(config).transactional_id();
        for operation in [Operation::Describe, Operation::Write] {
            rules.add(
                ResourceKind::TransactionalId,
                Pattern::Literal,
                &id,
                operation,
                "the transactional producer: finds its coordinator, fences earlier instances \
                 (InitProducerId) and runs one Kafka transaction per page",
            );
        }
    }
    rules.rules
}

/// IdempotentWrite on the cluster: only brokers before Kafka 2.8 need it, for an idempotent
/// producer without transactions (`exactlyOnce: false`); from 2.8 on Write on a topic is enough
/// (KIP-679). `None` when the capture is transactional, which needs it on no broker.
pub fn legacy_idempotent_write(config: &CaptureConfig, principal: &str) -> Option<AclRule> {
    let kafka = config.kafka.as_ref()?;
    (!kafka.exactly_once).then(|| {
        AclRule::new(
            principal,
            ResourceKind::Cluster,
            Pattern::Literal,
            CLUSTER_NAME,
            Operation::IdempotentWrite,
            "the idempotent producer's InitProducerId, on brokers before Kafka 2.8 (KIP-679)",
        )
    })
}

/// The capture's identity, as the sink derives it (see `run`).
fn identity(config: &CaptureConfig) -> CaptureIdentity {
    CaptureIdentity::new(
        config.namespace.as_deref().unwrap_or("default"),
        config.name.as_str(),
    )
}

struct Rules<'a> {
    principal: &'a str,
    rules: Vec<AclRule>,
}

impl Rules<'_> {
    /// Adds a rule unless an earlier one already grants it.
    fn add(
        &mut self,
        resource: ResourceKind,
        pattern: Pattern,
        name: &str,
        operation: Operation,
        reason: &str,
    ) {
        let granted = pattern == Pattern::Literal
            && self
                .rules
                .iter()
                .any(|rule| rule.covers(resource, name, operation));
        if !granted {
            self.rules.push(AclRule::new(
                self.principal,
                resource,
                pattern,
                name,
                operation,
                reason,
            ));
        }
    }
}

/// Data topics: `<prefix>.<SCHEMA>.<TABLE>` and `<prefix>.transaction` under the prefix, the
/// schema change topic and the heartbeat topic by name. Create unless someone else creates them
/// (the broker's auto-creation checks Create on the topic too).
fn data_topic_rules(rules: &mut Rules<'_>, config: &CaptureConfig, kafka: &KafkaConfig) {
    let creates = kafka.topics.data.creation != TopicCreation::External;
    let mut operations = vec![Operation::Describe, Operation::Write];
    if creates {
        operations.push(Operation::Create);
    }
    let prefix = format!("{}.", kafka.topic_prefix);
    for &operation in &operations {
        rules.add(
            ResourceKind::Topic,
            Pattern::Prefixed,
            &prefix,
            operation,
            "data topics <topicPrefix>.<SCHEMA>.<TABLE> (and the transaction metadata topic), \
             and the internal topics named after the prefix",
        );
    }
    let schema_changes =
        config.format.type_ == FormatType::Debezium && config.format.include_schema_changes;
    if schema_changes {
        for &operation in &operations {
            rules.add(
                ResourceKind::Topic,
                Pattern::Literal,
                &kafka.topic_prefix,
                operation,
                "the schema change topic, named <topicPrefix> (format.includeSchemaChanges)",
            );
        }
    }
    if config.heartbeat.interval_seconds > 0 {
        let topic = heartbeat_topic(&config.heartbeat.topic_prefix, &kafka.topic_prefix);
        for &operation in &operations {
            rules.add(
                ResourceKind::Topic,
                Pattern::Literal,
                &topic,
                operation,
                "the heartbeat topic (heartbeat.intervalSeconds)",
            );
        }
    }
}

/// Internal topics: created and checked by the capture at every start; bookmark, journal and
/// schema history also read back, each by a reader with a group of its own.
fn internal_topic_rules(rules: &mut Rules<'_>, config: &CaptureConfig, kafka: &KafkaConfig) {
    let names = TopicNames::with_prefix(&kafka.topic_prefix, &config.journal);
    let read_back = [&names.offsets, &names.journal, &names.schema_history];
    for topic in names.required() {
        let reason = format!("internal topic ({})", topic.purpose);
        for operation in [
            Operation::Describe,
            Operation::Write,
            Operation::Create,
            Operation::DescribeConfigs,
        ] {
            rules.add(
                ResourceKind::Topic,
                Pattern::Literal,
                topic.name,
                operation,
                &reason,
            );
        }
    }
    for topic in read_back {
        rules.add(
            ResourceKind::Topic,
            Pattern::Literal,
            topic,
            Operation::Read,
            "read back at start (and by doctor, the bookmark)",
        );
        rules.add(
            ResourceKind::Group,
            Pattern::Literal,
            &reader_group(topic),
            Operation::Describe,
            "the group id of the reader of this topic: librdkafka finds its coordinator; it \
             never joins nor commits",
        );
    }
}

/// `kafka-acls.sh` command lines, one per rule, with each argument shell-quoted.
pub fn kafka_acls_commands(rules: &[AclRule], bootstrap: &str) -> String {
    let mut out = String::new();
    for rule in rules {
        let args: Vec<String> = rule
            .kafka_acls_args(bootstrap)
            .iter()
            .map(|arg| shell_quote(arg))
            .collect();
        out.push_str("kafka-acls.sh ");
        out.push_str(&args.join(" "));
        out.push('\n');
    }
    out
}

/// An argument as a POSIX shell reads it back: bare when it holds only safe characters.
fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@".contains(c));
    if safe {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// A Strimzi KafkaUser's `spec.authorization` (`type: simple`): one ACL per resource with its
/// operations. The principal is the KafkaUser itself, so it is not part of the block.
pub fn strimzi_authorization(rules: &[AclRule]) -> serde_json::Value {
    let mut by_resource: BTreeMap<(ResourceKind, &str, Pattern), Vec<String>> = BTreeMap::new();
    let mut order: Vec<(ResourceKind, &str, Pattern)> = Vec::new();
    for rule in rules {
        let key = (rule.resource, rule.name.as_str(), rule.pattern);
        let operations = by_resource.entry(key).or_insert_with(|| {
            order.push(key);
            Vec::new()
        });
        operations.push(rule.operation.to_string());
    }
    let acls: Vec<serde_json::Value> = order
        .into_iter()
        .map(|key @ (resource, name, pattern)| {
            let mut described = serde_json::Map::new();
            let kind = match resource {
                ResourceKind::Topic => "topic",
                ResourceKind::Group => "group",
                ResourceKind::TransactionalId => "transactionalId",
                ResourceKind::Cluster => "cluster",
            };
            described.insert("type".into(), kind.into());
            if resource != ResourceKind::Cluster {
                described.insert("name".into(), name.into());
                let pattern = match pattern {
                    Pattern::Literal => "literal",
                    Pattern::Prefixed => "prefix",
                };
                described.insert("patternType".into(), pattern.into());
            }
            serde_json::json!({
                "resource": described,
                "operations": by_resource.get(&key).cloned().unwrap_or_default(),
                "host": "*",
            })
        })
        .collect();
    serde_json::json!({"type": "simple", "acls": acls})
}

#[cfg(test)]
mod tests;
