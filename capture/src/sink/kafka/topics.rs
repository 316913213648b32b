//! The capture's own topics: their names, and their creation when missing.
//!
//! | topic | default name | cleanup.policy | partitions |
//! |---|---|---|---|
//! | bookmarks | `<prefix>.redoline.offsets` | `compact` | 1 |
//! | journal of long transactions | `<prefix>.cdc.txjournal` (`spec.journal.topic`) | `compact` | 1 |
//! | schema history | `<prefix>.redoline.schema-history` | `compact` | 1 |
//! | operational events of the buffer | `<prefix>.redoline.ops` | broker default | broker default |
//! | dead letters | `<prefix>.redoline.dlq` | broker default | broker default |
//!
//! They are created with `spec.kafka.topics.internal`'s `replicationFactor` and
//! `minInsyncReplicas`, or when unset the broker's `default.replication.factor` (replication
//! factor -1 in CreateTopics, Kafka 2.4+) and `min.insync.replicas`. One partition suffices for
//! the compacted topics: each is written by one producer and read back whole at start.
//!
//! At every start each of them is checked, created or found, for what the capture relies on
//! ([`check_topic`]), and refused with CDC-1001 naming the topic and the setting otherwise:
//! - a compacted topic must have `cleanup.policy` `compact`: under retention it would lose
//!   bookmarks or journal chunks;
//! - its replication factor must be at least its `min.insync.replicas`: the capture writes with
//!   `acks=all`, which the broker refuses (NOT_ENOUGH_REPLICAS) for every write otherwise.
//!
//! Kafka's documentation of `min.insync.replicas` recommends a replication factor of 3 with
//! `min.insync.replicas` 2 and `acks=all`, so that a write survives the loss of a broker; a topic
//! with 3 or more replicas and `min.insync.replicas` 1 is accepted with a warning.
//!
//! Data topics ([`ensure_data_topic`], [`check_external_topic`]) follow `spec.kafka.topics.data`: the
//! capture creates a missing one with its settings, the broker auto-creates it, or someone else
//! must have (a missing one is CDC-1001 naming it).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{
    DataTopicsSpec, FormatType, InternalTopicsSpec, JournalSpec, KafkaSpec,
};

use super::config::{KafkaClientSettings, close_in_background};
use crate::config::CaptureConfig;
use crate::event::debezium::{topic_name, transaction_topic};
use crate::heartbeat::heartbeat_topic;
use crate::stop::Stop;

/// The names of the topics the sink writes besides the data topics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicNames {
    /// Bookmarks (compacted).
    pub offsets: String,
    /// Journal of long transactions (compacted).
    pub journal: String,
    /// Every structure of every captured table (compacted, see `crate::schema_history`).
    pub schema_history: String,
    /// Operational events (orphan released, transaction discarded, ...).
    pub ops: String,
    /// Dead letters (the changes of discarded transactions).
    pub dlq: String,
}

impl TopicNames {
    /// The names for a spec (see the module table).
    pub fn new(kafka: &KafkaSpec, journal: &JournalSpec) -> Self {
        Self::with_prefix(&kafka.topic_prefix, journal)
    }

    /// The names for `kafka.topicPrefix` and the journal spec.
    pub fn with_prefix(prefix: &str, journal: &JournalSpec) -> Self {
        Self {
            offsets: format!("{prefix}.redoline.offsets"),
            journal: journal
                .topic
                .clone()
                .unwrap_or_else(|| format!("{prefix}.cdc.txjournal")),
            schema_history: format!("{prefix}.redoline.schema-history"),
            ops: format!("{prefix}.redoline.ops"),
            dlq: format!("{prefix}.redoline.dlq"),
        }
    }

    /// Every topic with the settings it is created with, and the spec field naming it.
    pub fn required(&self) -> Vec<RequiredTopic<'_>> {
        vec![
            RequiredTopic::compacted(&self.offsets, "spec.kafka.topicPrefix", "bookmarks"),
            RequiredTopic::compacted(&self.journal, "spec.journal.topic", "journal"),
            RequiredTopic::compacted(
                &self.schema_history,
                "spec.kafka.topicPrefix",
                "schema history",
            ),
            RequiredTopic::plain(&self.ops, "spec.kafka.topicPrefix", "ops events"),
            RequiredTopic::plain(&self.dlq, "spec.kafka.topicPrefix", "dead letters"),
        ]
    }
}

/// A topic the sink needs, and how to create it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredTopic<'a> {
    pub name: &'a str,
    pub compacted: bool,
    /// The spec field that chose the name, for error messages.
    pub field: &'static str,
    /// What the topic holds, for people.
    pub purpose: &'static str,
    /// Replication factor to create it with; the broker's default when `None`.
    pub replication_factor: Option<i32>,
    /// `min.insync.replicas` to create it with; the broker's default when `None`.
    pub min_insync_replicas: Option<i32>,
}

impl<'a> RequiredTopic<'a> {
    pub fn compacted(name: &'a str, field: &'static str, purpose: &'static str) -> Self {
        Self {
            name,
            compacted: true,
            field,
            purpose,
            replication_factor: None,
            min_insync_replicas: None,
        }
    }

    pub fn plain(name: &'a str, field: &'static str, purpose: &'static str) -> Self {
        Self {
            name,
            compacted: false,
            field,
            purpose,
            replication_factor: None,
            min_insync_replicas: None,
        }
    }

    /// With `spec.kafka.topics.internal`'s settings.
    pub fn with_settings(self, internal: &InternalTopicsSpec) -> Self {
        Self {
            replication_factor: internal.replication_factor,
            min_insync_replicas: internal.min_insync_replicas,
            ..self
        }
    }
}

/// Why the topics could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    /// Definite (CDC-1001): a compacted topic exists with a policy that would delete bookmarks
    /// or journal chunks.
    #[error(transparent)]
    Misconfigured(Stop),
    /// Transient: the broker did not answer or refused for a reason that may pass.
    #[error("{action} for topic {topic} failed: {source}")]
    Admin {
        action: &'static str,
        topic: String,
        #[source]
        source: KafkaError,
    },
}

/// Creates the missing topics and checks every one of them (see [`check_topic`]).
pub fn ensure_topics(
    settings: &KafkaClientSettings,
    topics: &[RequiredTopic<'_>],
    timeout: Duration,
) -> Result<(), TopicError> {
    let first = topics.first().map_or("", |t| t.name);
    let admin = admin_client(settings, first)?;
    let ensured = create_or_check(&admin, topics, timeout);
    close_in_background(admin);
    ensured
}

fn admin_client(
    settings: &KafkaClientSettings,
    topic: &str,
) -> Result<AdminClient<DefaultClientContext>, TopicError> {
    settings
        .client_config()
        .create()
        .map_err(|source| TopicError::Admin {
            action: "creating an admin client",
            topic: topic.to_owned(),
            source,
        })
}

fn admin_options(timeout: Duration) -> AdminOptions {
    AdminOptions::new()
        .request_timeout(Some(timeout))
        .operation_timeout(Some(timeout))
}

fn create_or_check(
    admin: &AdminClient<DefaultClientContext>,
    topics: &[RequiredTopic<'_>],
    timeout: Duration,
) -> Result<(), TopicError> {
    let first = topics.first().map_or("", |t| t.name);
    let create_failed = |source| TopicError::Admin {
        action: "CreateTopics",
        topic: first.to_owned(),
        source,
    };
    let options = admin_options(timeout);
    let min_insync: Vec<Option<String>> = topics
        .iter()
        .map(|t| t.min_insync_replicas.map(|n| n.to_string()))
        .collect();
    let new_topics: Vec<NewTopic<'_>> = topics
        .iter()
        .zip(&min_insync)
        .map(|(t, min_insync)| {
            // -1: the broker's default.replication.factor (and num.partitions for plain topics).
            let partitions = if t.compacted { 1 } else { -1 };
            let replication = TopicReplication::Fixed(t.replication_factor.unwrap_or(-1));
            let mut topic = NewTopic::new(t.name, partitions, replication);
            if t.compacted {
                topic = topic.set("cleanup.policy", "compact");
            }
            if let Some(min_insync) = min_insync {
                topic = topic.set("min.insync.replicas", min_insync);
            }
            topic
        })
        .collect();
    let results = block_on(admin.create_topics(&new_topics, &options)).map_err(create_failed)?;
    for (topic, result) in topics.iter().zip(results) {
        match result {
            Ok(_) => tracing::info!(
                topic = topic.name,
                compacted = topic.compacted,
                replication_factor = topic.replication_factor,
                min_insync_replicas = topic.min_insync_replicas,
                "Created topic."
            ),
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((_, code)) => return Err(refused_creation(topic.name, code, INTERNAL_FIELD)),
        }
        check_topic(admin, &options, topic, timeout)?;
    }
    Ok(())
}

/// The spec field holding the internal topics' settings.
const INTERNAL_FIELD: &str = "spec.kafka.topics.internal";
/// The spec field holding the data topics' settings.
const DATA_FIELD: &str = "spec.kafka.topics.data";

/// A CreateTopics refusal: CDC-1001 when the request itself is wrong (settings the cluster
/// refuses), so that a restart would not change it; otherwise a transient fault.
fn refused_creation(topic: &str, code: RDKafkaErrorCode, field: &'static str) -> TopicError {
    match code {
        RDKafkaErrorCode::InvalidPartitions
        | RDKafkaErrorCode::InvalidReplicationFactor
        | RDKafkaErrorCode::InvalidReplicaAssignment
        | RDKafkaErrorCode::InvalidConfig
        | RDKafkaErrorCode::PolicyViolation
        | RDKafkaErrorCode::InvalidTopic => TopicError::Misconfigured(
            Stop::new(
                StopCode::InvalidConfiguration,
                format!("{field}: the cluster refuses to create topic {topic}: {code}"),
            )
            .with_detail("field", field)
            .with_detail("topic", topic),
        ),
        code => TopicError::Admin {
            action: "CreateTopics",
            topic: topic.to_owned(),
            source: KafkaError::AdminOp(code),
        },
    }
}

/// [`ensure_topics`], retrying its transient faults until `budget` has passed: for callers
/// outside the sink (tests, benchmarks), whose open retries them itself. A topic just created is
/// the usual one: the broker answering DescribeConfigs may not show it for a moment.
pub fn ensure_topics_retrying(
    settings: &KafkaClientSettings,
    topics: &[RequiredTopic<'_>],
    timeout: Duration,
    budget: Duration,
) -> Result<(), TopicError> {
    let started = std::time::Instant::now();
    loop {
        match ensure_topics(settings, topics, timeout) {
            Err(TopicError::Admin { .. }) if started.elapsed() < budget => {
                std::thread::sleep(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// What the capture relies on in an internal topic: compaction where required, and at least
/// `min.insync.replicas` replicas (see the module docs).
pub fn check_topic(
    admin: &AdminClient<DefaultClientContext>,
    options: &AdminOptions,
    topic: &RequiredTopic<'_>,
    timeout: Duration,
) -> Result<(), TopicError> {
    let failed = |action| {
        move |source| TopicError::Admin {
            action,
            topic: topic.name.to_owned(),
            source,
        }
    };
    let resources = [ResourceSpecifier::Topic(topic.name)];
    let results =
        block_on(admin.describe_configs(&resources, options)).map_err(failed("DescribeConfigs"))?;
    let resource = results
        .into_iter()
        .next()
        .ok_or(KafkaError::AdminOp(RDKafkaErrorCode::Fail))
        .and_then(|r| r.map_err(KafkaError::AdminOp))
        .map_err(failed("DescribeConfigs"))?;
    // Kafka lists every config of a topic it knows, defaults included (source DEFAULT_CONFIG),
    // so a topic described without `cleanup.policy` is one the answering broker does not show
    // yet: its metadata lags a creation the controller has accepted (CreateTopics said
    // TopicAlreadyExists, e.g. for the creation a killed first start sent, or just created
    // it), and it answered UNKNOWN_TOPIC_OR_PARTITION for the resource, which rust-rdkafka
    // returns as a resource without entries. Transient, so retried; never read as an empty
    // policy.
    // A refused DescribeConfigs looks the same (rust-rdkafka 0.39 drops each resource's error
    // code, so TOPIC_AUTHORIZATION_FAILED arrives as no entries too; Materialize met this in
    // MaterializeInc/materialize#18853): the message names both causes, since the stop a lasting
    // one ends in is the place a person reads it.
    let not_shown = || {
        failed(
            "DescribeConfigs (the broker showed no configs: either it has not caught up with the \
             topic's creation, or the principal lacks DescribeConfigs on the topic, which \
             `redoline-capture acls` lists)",
        )(KafkaError::AdminOp(
            RDKafkaErrorCode::UnknownTopicOrPartition,
        ))
    };
    let Some(policy) = resource.get("cleanup.policy") else {
        return Err(not_shown());
    };
    let policy = policy.value.clone().unwrap_or_default();
    if topic.compacted && !policy.split(',').any(|p| p.trim() == "compact") {
        return Err(TopicError::Misconfigured(not_compacted(topic, &policy)));
    }
    let min_insync = resource
        .get("min.insync.replicas")
        .and_then(|entry| entry.value.as_deref())
        .and_then(|value| value.parse::<usize>().ok())
        .ok_or_else(not_shown)?;
    let metadata = admin
        .inner()
        .fetch_metadata(Some(topic.name), timeout)
        .map_err(failed("fetching metadata"))?;
    let replication = metadata
        .topics()
        .iter()
        .filter(|t| t.name() == topic.name)
        .flat_map(|t| t.partitions().iter().map(|p| p.replicas().len()))
        .min()
        .ok_or_else(|| {
            failed("fetching metadata")(KafkaError::MetadataFetch(
                RDKafkaErrorCode::UnknownTopicOrPartition,
            ))
        })?;
    replication_check(topic, replication, min_insync)
}

/// Replication against `min.insync.replicas` (see the module docs).
fn replication_check(
    topic: &RequiredTopic<'_>,
    replication: usize,
    min_insync: usize,
) -> Result<(), TopicError> {
    if replication < min_insync {
        return Err(TopicError::Misconfigured(
            Stop::new(
                StopCode::InvalidConfiguration,
                format!(
                    "{INTERNAL_FIELD}: topic {} has {replication} replicas but \
                     min.insync.replicas={min_insync}, so no write with acks=all can succeed; \
                     lower min.insync.replicas on the topic or add replicas to it",
                    topic.name
                ),
            )
            .with_detail("field", INTERNAL_FIELD)
            .with_detail("topic", topic.name)
            .with_detail("setting", "min.insync.replicas"),
        ));
    }
    if replication >= 3 && min_insync < 2 {
        tracing::warn!(
            topic = topic.name,
            replication,
            min_insync_replicas = min_insync,
            "A write is acknowledged by one replica alone, so losing that broker loses it; Kafka \
             recommends min.insync.replicas=2 with 3 replicas."
        );
    }
    Ok(())
}

/// CDC-1001 naming the spec field that chose the topic's name.
fn not_compacted(topic: &RequiredTopic<'_>, policy: &str) -> Stop {
    Stop::new(
        StopCode::InvalidConfiguration,
        format!(
            "{}: topic {} exists with cleanup.policy={policy}, but it must be compacted; set \
             cleanup.policy=compact on it or choose another name",
            topic.field, topic.name
        ),
    )
    .with_detail("field", topic.field)
    .with_detail("topic", topic.name)
    .with_detail("setting", "cleanup.policy")
}

/// The data topics known before the first write: one per captured table, and the transaction
/// metadata, schema change and heartbeat topics when the config writes them. (A table captured
/// later, created by a DDL, adds its topic when its first event is written.)
pub fn data_topics<'a>(
    config: &CaptureConfig,
    prefix: &str,
    tables: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<String> {
    let mut topics: Vec<String> = tables
        .into_iter()
        .map(|(schema, table)| topic_name(prefix, schema, table))
        .collect();
    if config.format.type_ == FormatType::Debezium {
        if config.format.transaction_metadata {
            topics.push(transaction_topic(prefix));
        }
        if config.format.include_schema_changes {
            // `legal_topic` of the prefix, which the config's rules keep legal already.
            topics.push(prefix.to_owned());
        }
    }
    if config.heartbeat.interval_seconds > 0 {
        topics.push(heartbeat_topic(&config.heartbeat.topic_prefix, prefix));
    }
    topics
}

/// Creates the data topic `topic` with `spec`'s settings unless it exists (creation `capture`).
pub fn ensure_data_topic(
    settings: &KafkaClientSettings,
    spec: &DataTopicsSpec,
    topic: &str,
    timeout: Duration,
) -> Result<(), TopicError> {
    let admin = admin_client(settings, topic)?;
    let mut new_topic = NewTopic::new(
        topic,
        spec.partitions.unwrap_or(-1),
        TopicReplication::Fixed(spec.replication_factor.unwrap_or(-1)),
    );
    for (name, value) in &spec.config {
        new_topic = new_topic.set(name, value);
    }
    let created = block_on(admin.create_topics([&new_topic], &admin_options(timeout)));
    close_in_background(admin);
    let result = created
        .map_err(|source| TopicError::Admin {
            action: "CreateTopics",
            topic: topic.to_owned(),
            source,
        })?
        .into_iter()
        .next()
        .unwrap_or(Err((topic.to_owned(), RDKafkaErrorCode::Fail)));
    match result {
        Ok(_) => {
            tracing::info!(
                topic,
                partitions = spec.partitions,
                replication_factor = spec.replication_factor,
                "Created data topic."
            );
            Ok(())
        }
        Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => Ok(()),
        Err((_, code)) => Err(refused_creation(topic, code, DATA_FIELD)),
    }
}

/// Whether the data topic `topic` exists (creation `external`), from the metadata `client`
/// fetches: a missing one is CDC-1001 naming it.
pub fn check_external_topic<C: rdkafka::ClientContext>(
    client: &rdkafka::client::Client<C>,
    topic: &str,
    timeout: Duration,
) -> Result<(), TopicError> {
    let metadata = client
        .fetch_metadata(Some(topic), timeout)
        .map_err(|source| TopicError::Admin {
            action: "fetching metadata",
            topic: topic.to_owned(),
            source,
        })?;
    let found = metadata.topics().iter().find(|t| t.name() == topic);
    let error = found.and_then(|t| t.error()).map(RDKafkaErrorCode::from);
    match (found, error) {
        (Some(t), None) if !t.partitions().is_empty() => Ok(()),
        (None, _) | (Some(_), None | Some(RDKafkaErrorCode::UnknownTopicOrPartition)) => {
            Err(TopicError::Misconfigured(missing_external(topic)))
        }
        (Some(_), Some(code)) => Err(TopicError::Admin {
            action: "fetching metadata",
            topic: topic.to_owned(),
            source: KafkaError::MetadataFetch(code),
        }),
    }
}

fn missing_external(topic: &str) -> Stop {
    Stop::new(
        StopCode::InvalidConfiguration,
        format!(
            "spec.kafka.topics.data.creation: topic {topic} does not exist; with creation \
             external it must be created (a Strimzi KafkaTopic, a pipeline) before the capture \
             writes to it, or set creation to capture"
        ),
    )
    .with_detail("field", "spec.kafka.topics.data.creation")
    .with_detail("topic", topic)
}

/// Drives one admin future on this thread. rdkafka's admin futures are completed by its own
/// background thread, so no async runtime is needed, and none is entered: the sink is a
/// blocking API, callable from the mining thread or from `spawn_blocking`.
fn block_on<F: Future>(future: F) -> F::Output {
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_prefix_and_the_journal_topic_can_be_chosen() {
        let kafka: KafkaSpec =
            serde_json::from_str(r#"{"bootstrapServers":"b:9092","topicPrefix":"sales"}"#).unwrap();
        let mut journal = JournalSpec::default();
        let names = TopicNames::new(&kafka, &journal);
        assert_eq!(names.offsets, "sales.redoline.offsets");
        assert_eq!(names.journal, "sales.cdc.txjournal");
        assert_eq!(names.ops, "sales.redoline.ops");
        assert_eq!(names.schema_history, "sales.redoline.schema-history");
        assert_eq!(names.dlq, "sales.redoline.dlq");
        journal.topic = Some("shared.journal".into());
        assert_eq!(TopicNames::new(&kafka, &journal).journal, "shared.journal");
        let compacted: Vec<_> = names
            .required()
            .into_iter()
            .filter(|t| t.compacted)
            .map(|t| t.name.to_owned())
            .collect();
        assert_eq!(
            compacted,
            [
                "sales.redoline.offsets",
                "sales.cdc.txjournal",
                "sales.redoline.schema-history"
            ]
        );
    }

    /// An admin client on the test broker, and a topic name no other test or run uses.
    fn broker_admin(
        test: &str,
    ) -> (
        KafkaClientSettings,
        AdminClient<DefaultClientContext>,
        String,
    ) {
        let env = redoline_testenv::kafka::KafkaEnv::shared().unwrap();
        let settings = KafkaClientSettings::with_bootstrap(env.bootstrap_servers());
        let admin = settings.client_config().create().unwrap();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let name = format!(
            "topics-{test}-{}-{nanos}.redoline.offsets",
            std::process::id()
        );
        (settings, admin, name)
    }

    const TIMEOUT: Duration = Duration::from_secs(30);

    /// The state a SIGKILL during the first start leaves for the restart: the controller has
    /// the topic (CreateTopics answers TopicAlreadyExists), the broker answering DescribeConfigs
    /// does not show it yet. Such a broker answers for the topic as for one that does not
    /// exist, which this test describes. It was read as an empty policy and refused with
    /// CDC-1001 at every restart; it must be a transient fault the open path retries.
    #[test]
    fn a_topic_the_broker_does_not_show_yet_is_retried_not_refused() {
        let (_, admin, name) = broker_admin("not-shown");
        let topic = RequiredTopic::compacted(&name, "spec.kafka.topicPrefix", "bookmarks");
        match check_topic(&admin, &admin_options(TIMEOUT), &topic, TIMEOUT) {
            Err(TopicError::Admin { action, topic, .. }) => {
                assert!(action.starts_with("DescribeConfigs ("), "{action}");
                // Either cause is named: the lag, and a missing permission.
                assert!(action.contains("caught up") && action.contains("lacks DescribeConfigs"));
                assert_eq!(topic, name);
            }
            other => panic!("expected a transient DescribeConfigs fault, got {other:?}"),
        }
    }

    /// A topic a user created with cleanup.policy=delete is still refused with CDC-1001 once
    /// the broker shows it (until then the fault is transient, as above).
    #[test]
    fn a_user_topic_with_the_delete_policy_is_still_refused() {
        let (settings, admin, name) = broker_admin("delete");
        let user_topic =
            NewTopic::new(&name, 1, TopicReplication::Fixed(-1)).set("cleanup.policy", "delete");
        let created =
            block_on(admin.create_topics([&user_topic], &admin_options(TIMEOUT))).unwrap();
        assert!(created[0].is_ok(), "{created:?}");
        let required = [RequiredTopic::compacted(
            &name,
            "spec.kafka.topicPrefix",
            "bookmarks",
        )];
        let stop = match ensure_topics_retrying(
            &settings,
            &required,
            Duration::from_secs(30),
            Duration::from_secs(60),
        ) {
            Err(TopicError::Misconfigured(stop)) => stop,
            other => panic!("expected CDC-1001, got {other:?}"),
        };
        assert_eq!(stop.code, StopCode::InvalidConfiguration);
        assert!(
            stop.message.contains("cleanup.policy=delete"),
            "{}",
            stop.message
        );
    }

    #[test]
    fn a_non_compacted_topic_is_cdc_1001_naming_the_field() {
        let topic = RequiredTopic::compacted(
            "sales.redoline.offsets",
            "spec.kafka.topicPrefix",
            "bookmarks",
        );
        let stop = not_compacted(&topic, "delete");
        assert_eq!(stop.code, StopCode::InvalidConfiguration);
        assert!(
            stop.message
                .starts_with("spec.kafka.topicPrefix: topic sales.redoline.offsets")
        );
        assert!(stop.message.contains("cleanup.policy=delete"));
        assert_eq!(stop.details["topic"], "sales.redoline.offsets");
    }
}
