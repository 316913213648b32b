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
//! The spec has no replication setting, so topics are created with the broker's
//! `default.replication.factor` (replication factor -1 in CreateTopics, Kafka 2.4+). One
//! partition suffices for the compacted topics: each is written by one producer and read back
//! whole at start. A compacted topic that already exists with another `cleanup.policy` would
//! lose bookmarks or journal chunks to retention, so it is refused with CDC-1001 naming the spec
//! field that chose the name, rather than used.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{JournalSpec, KafkaSpec};

use super::config::{KafkaClientSettings, close_in_background};
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
}

impl<'a> RequiredTopic<'a> {
    pub fn compacted(name: &'a str, field: &'static str, purpose: &'static str) -> Self {
        Self {
            name,
            compacted: true,
            field,
            purpose,
        }
    }

    pub fn plain(name: &'a str, field: &'static str, purpose: &'static str) -> Self {
        Self {
            name,
            compacted: false,
            field,
            purpose,
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

/// Creates the missing topics and checks the compacted ones that exist.
pub fn ensure_topics(
    settings: &KafkaClientSettings,
    topics: &[RequiredTopic<'_>],
    timeout: Duration,
) -> Result<(), TopicError> {
    let first = topics.first().map_or("", |t| t.name);
    let admin: AdminClient<DefaultClientContext> =
        settings
            .client_config()
            .create()
            .map_err(|source| TopicError::Admin {
                action: "creating an admin client",
                topic: first.to_owned(),
                source,
            })?;
    let ensured = create_or_check(&admin, topics, timeout);
    close_in_background(admin);
    ensured
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
    let options = AdminOptions::new()
        .request_timeout(Some(timeout))
        .operation_timeout(Some(timeout));

    let compact = [("cleanup.policy", "compact")];
    let new_topics: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|t| {
            // -1: the broker's default.replication.factor (and num.partitions for plain topics).
            let partitions = if t.compacted { 1 } else { -1 };
            let topic = NewTopic::new(t.name, partitions, TopicReplication::Fixed(-1));
            if t.compacted {
                topic.set(compact[0].0, compact[0].1)
            } else {
                topic
            }
        })
        .collect();
    let results = block_on(admin.create_topics(&new_topics, &options)).map_err(create_failed)?;
    for (topic, result) in topics.iter().zip(results) {
        match result {
            Ok(_) => tracing::info!(
                topic = topic.name,
                compacted = topic.compacted,
                "Created topic."
            ),
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {
                if topic.compacted {
                    check_compacted(admin, &options, topic)?;
                }
            }
            Err((_, code)) => {
                return Err(TopicError::Admin {
                    action: "CreateTopics",
                    topic: topic.name.to_owned(),
                    source: KafkaError::AdminOp(code),
                });
            }
        }
    }
    Ok(())
}

fn check_compacted(
    admin: &AdminClient<DefaultClientContext>,
    options: &AdminOptions,
    topic: &RequiredTopic<'_>,
) -> Result<(), TopicError> {
    let failed = |source| TopicError::Admin {
        action: "DescribeConfigs",
        topic: topic.name.to_owned(),
        source,
    };
    let resources = [ResourceSpecifier::Topic(topic.name)];
    let results = block_on(admin.describe_configs(&resources, options)).map_err(failed)?;
    let resource = results
        .into_iter()
        .next()
        .ok_or(KafkaError::AdminOp(RDKafkaErrorCode::Fail))
        .and_then(|r| r.map_err(KafkaError::AdminOp))
        .map_err(failed)?;
    // Kafka lists every config of a topic it knows, defaults included (source DEFAULT_CONFIG),
    // so a topic described without `cleanup.policy` is one the answering broker does not show
    // yet: its metadata lags a creation the controller has accepted (CreateTopics said
    // TopicAlreadyExists, e.g. for the creation a killed first start sent), and it answered
    // UNKNOWN_TOPIC_OR_PARTITION for the resource, which rust-rdkafka returns as a resource
    // without entries. Transient, so retried; never read as an empty policy.
    let Some(entry) = resource.get("cleanup.policy") else {
        return Err(failed(KafkaError::AdminOp(
            RDKafkaErrorCode::UnknownTopicOrPartition,
        )));
    };
    let policy = entry.value.clone().unwrap_or_default();
    if policy.split(',').any(|p| p.trim() == "compact") {
        Ok(())
    } else {
        Err(TopicError::Misconfigured(not_compacted(topic, &policy)))
    }
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

    fn admin_options() -> AdminOptions {
        let timeout = Some(Duration::from_secs(30));
        AdminOptions::new()
            .request_timeout(timeout)
            .operation_timeout(timeout)
    }

    /// The state a SIGKILL during the first start leaves for the restart: the controller has
    /// the topic (CreateTopics answers TopicAlreadyExists), the broker answering DescribeConfigs
    /// does not show it yet. Such a broker answers for the topic as for one that does not
    /// exist, which this test describes. It was read as an empty policy and refused with
    /// CDC-1001 at every restart; it must be a transient fault the open path retries.
    #[test]
    fn a_topic_the_broker_does_not_show_yet_is_retried_not_refused() {
        let (_, admin, name) = broker_admin("not-shown");
        let topic = RequiredTopic::compacted(&name, "spec.kafka.topicPrefix", "bookmarks");
        match check_compacted(&admin, &admin_options(), &topic) {
            Err(TopicError::Admin { action, topic, .. }) => {
                assert_eq!(action, "DescribeConfigs");
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
        let created = block_on(admin.create_topics([&user_topic], &admin_options())).unwrap();
        assert!(created[0].is_ok(), "{created:?}");
        let required = [RequiredTopic::compacted(
            &name,
            "spec.kafka.topicPrefix",
            "bookmarks",
        )];
        let started = std::time::Instant::now();
        let stop = loop {
            match ensure_topics(&settings, &required, Duration::from_secs(30)) {
                Err(TopicError::Misconfigured(stop)) => break stop,
                Err(TopicError::Admin { .. }) if started.elapsed() < Duration::from_secs(60) => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                other => panic!("expected CDC-1001, got {other:?}"),
            }
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
