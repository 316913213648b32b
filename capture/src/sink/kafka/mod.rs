//! The Kafka sink: one producer per capture, writing pages.
//!
//! **Pages stream.** A page is begun at its first record: [`KafkaSink::produce`] passes each record
//! on as the engine encodes it (a spilled transaction's records as they are read back from its
//! spill file), through the sender thread ([`sender`]) to librdkafka, waiting while either queue is
//! full, and [`KafkaSink::commit_page`] settles the sender and closes the page with its bookmark.
//! The sink keeps no record of the page (see [`Page`]): what is in flight is bounded by the
//! sender's queue and by `queue.buffering.max.messages` and `queue.buffering.max.kbytes`.
//!
//! **Exactly once** (`kafka.exactlyOnce: true`, the default): a transactional, idempotent
//! producer with `transactional.id` = [`CaptureIdentity::transactional_id`]
//! (`redoline/<namespace>/<name>`, stable across restarts so a new instance fences the old one).
//! [`KafkaSink::open`] creates the topics and runs `init_transactions`, which fences any earlier
//! instance and aborts its open transaction. A page is one Kafka transaction:
//! `begin (first record) → every record (data, transaction metadata, journal chunks) → the
//! bookmark → the tombstones → commit`, so data, journal and position become visible together or
//! not at all.
//!
//! **At least once** (`kafka.exactlyOnce: false`): an idempotent producer without transactions.
//! A page's records are sent as they come; at its end every delivery is waited for and checked,
//! and only then is the bookmark sent and acknowledged, then the tombstones. A crash in between
//! repeats the page after restart, never skips it.
//!
//! Either way [`KafkaSink::commit_page`] returns a [`Committed`] receipt only once the page is
//! durable and visible: that is the caller's signal to delete the spill files of the page's
//! transactions, never earlier.
//!
//! Errors: fencing ends the sink with CDC-5001 at once, and so do a refused authentication
//! (CDC-1004) and a missing permission (CDC-5004, see `refusal`); transient faults of a single call (begin,
//! commit, abort, the wait for deliveries, reads, admin) are retried with backoff inside
//! [`RetryPolicy`]'s budget (see `retry`). A fault that loses part of an open page (an abortable
//! transaction error, a failed delivery, a refused send) cannot be repaired by sending the page
//! again, since its records are no longer in memory: the page is abandoned (its Kafka transaction
//! aborted, so a `read_committed` consumer never sees any of it) and the error returned,
//! [`SinkError::PageAborted`] when the cause is transient, which makes the capture start again
//! from the stored bookmark and mine the page's transactions again (see `error`).
//!
//! A page must close within `transaction.timeout.ms` of its first record, or the broker aborts
//! it: the default is the broker's own maximum, 15 minutes (see `config`).
//!
//! Blocking: every call blocks the calling thread (librdkafka's transactional calls block with
//! timeouts), and the sink is meant for the mining thread, which the source already blocks.
//! From async code, call it inside `tokio::task::spawn_blocking`. The delivery reports and
//! librdkafka's events are served by the producer's own polling thread (`ThreadedProducer`).

pub mod acls;
pub mod authentication;
pub mod config;
pub mod error;
pub mod metrics;
pub mod reader;
pub mod refusal;
pub mod retry;
pub(crate) mod sender;
pub mod topics;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rdkafka::client::DefaultClientContext;
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::KafkaError;
use rdkafka::producer::{DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientContext, Message};
use redoline_crds::v1alpha1::{KafkaSpec, KafkaTopicsSpec, TopicCreation};

use self::config::{KafkaClientSettings, refused_settings};
use self::error::{Class, SinkError, classify};
use self::metrics::SinkMetrics;
use self::reader::{ReadError, TopicRecord, read_to_end, reader_group};
use self::refusal::{Attempted, Refusals, not_authorized};
use self::retry::{ProducerState, RetryPolicy, SinkStatus};
use self::sender::{LIBRDKAFKA_WAIT_STEP, RecordSender};
use self::topics::{
    TopicError, TopicNames, check_external_topic, ensure_data_topic, ensure_topics,
};
use super::CaptureIdentity;
use super::bookmark::Bookmark;
use super::page::{Page, record_bytes};
use crate::event::Record;
use crate::record_location::{RecordLocation, unreadable};
use crate::stop::Stop;

/// How pages reach Kafka.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryMode {
    /// Transactions: data, journal and bookmark commit together.
    ExactlyOnce,
    /// Idempotent producer; the bookmark follows the acknowledged data.
    AtLeastOnce,
}

impl DeliveryMode {
    /// `kafka.exactlyOnce`.
    pub fn from_spec(kafka: &KafkaSpec) -> Self {
        if kafka.exactly_once {
            DeliveryMode::ExactlyOnce
        } else {
            DeliveryMode::AtLeastOnce
        }
    }
}

/// Everything [`KafkaSink::open`] needs.
#[derive(Clone, Debug)]
pub struct SinkOptions {
    pub identity: CaptureIdentity,
    pub settings: KafkaClientSettings,
    pub topics: TopicNames,
    pub mode: DeliveryMode,
    pub retry: RetryPolicy,
    /// Bound of every single blocking call (init, commit, abort, flush, reads, admin).
    pub call_timeout: Duration,
    /// `spec.kafka.topics`: who creates the data topics, and the topics' settings.
    pub topic_settings: KafkaTopicsSpec,
}

impl SinkOptions {
    /// Options with the default retry policy and a 30 s call timeout.
    pub fn new(
        identity: CaptureIdentity,
        settings: KafkaClientSettings,
        topics: TopicNames,
        mode: DeliveryMode,
    ) -> Self {
        Self {
            identity,
            settings,
            topics,
            mode,
            retry: RetryPolicy::default(),
            call_timeout: Duration::from_secs(30),
            topic_settings: KafkaTopicsSpec::default(),
        }
    }
}

/// Proof that a page is committed (exactly once) or acknowledged with its bookmark (at least
/// once). Only after receiving it may the caller delete the spill files of the page's
/// transactions.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "spill files may be released only after the page committed"]
pub struct Committed {
    /// The bookmark's commit SCN.
    pub commit_scn: u64,
    /// Records written, the bookmark included.
    pub records: usize,
    /// Key and value bytes written, the bookmark included.
    pub bytes: u64,
}

/// Receives delivery reports and client errors on the producer's polling thread.
#[derive(Debug, Default)]
struct DeliveryContext {
    /// The first delivery failure since the last [`Self::take_failure`].
    failure: Mutex<Option<KafkaError>>,
    /// A refused authentication or permission that librdkafka reports only to the error or log
    /// callback (see `refusal`).
    refusals: Refusals,
}

impl DeliveryContext {
    fn take_failure(&self) -> Option<KafkaError> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: KafkaError, reason: &str) {
        tracing::warn!(%error, reason, "Kafka client error.");
        self.refusals.record(&error, reason);
    }

    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.refusals.record_log(log_message);
        DefaultClientContext.log(level, fac, log_message);
    }
}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((error, message)) = result {
            if error.rdkafka_error_code() == Some(RDKafkaErrorCode::TopicAuthorizationFailed) {
                self.refusals.record_log(&format!(
                    "Failed to add partition \"{}\": Topic authorization failed",
                    message.topic()
                ));
            }
            self.failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| error.clone());
        }
    }
}

/// A failure to create or check a topic as an attempt's outcome: a misconfigured topic and a
/// missing permission are final, anything else is retried.
fn topic_attempt(error: TopicError) -> Attempt {
    match error {
        TopicError::Misconfigured(stop) => Attempt::Fail(stop.into()),
        TopicError::Admin {
            action,
            topic,
            source,
        } => {
            let operation = match action {
                "CreateTopics" => "Create",
                "DescribeConfigs" => "DescribeConfigs",
                _ => "Describe",
            };
            let attempted = Attempted {
                operation,
                name: Some(&topic),
            };
            match not_authorized(&source, attempted) {
                Some(stop) => Attempt::Fail(stop.into()),
                None => Attempt::Retry(source),
            }
        }
    }
}

/// The outcome of one attempt at a step.
enum Attempt {
    /// A transient fault: pause, then try the step again.
    Retry(KafkaError),
    /// Final.
    Fail(SinkError),
}

/// The Kafka sink of one capture. See the module documentation.
pub struct KafkaSink {
    producer: Arc<ThreadedProducer<DeliveryContext>>,
    /// Sends the pages' data records on a thread of its own (see `sender`).
    sender: RecordSender,
    options: SinkOptions,
    bookmark_key: String,
    metrics: SinkMetrics,
    status: SinkStatus,
    /// Topics known to be ready for writing: the internal ones once created and checked, and
    /// every data topic once prepared (see [`Self::prepare_topic`]).
    ready_topics: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for KafkaSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaSink")
            .field("options", &self.options)
            .field("status", &self.status.get())
            .finish_non_exhaustive()
    }
}

impl KafkaSink {
    /// Creates missing topics, the producer, and (exactly once) initialises transactions,
    /// fencing any earlier instance. Retries a broker that is not there yet, showing it in
    /// `status` (share it with `/status` before calling) and `metrics`.
    pub fn open(
        options: SinkOptions,
        metrics: SinkMetrics,
        status: SinkStatus,
    ) -> Result<Self, SinkError> {
        status.set(ProducerState::Starting);
        let transactional_id = options.identity.transactional_id();
        let id = match options.mode {
            DeliveryMode::ExactlyOnce => Some(transactional_id.as_str()),
            DeliveryMode::AtLeastOnce => None,
        };
        let mut producer_config = options.settings.producer_config(id);
        // A producer's metadata request may create a missing topic (librdkafka's producer
        // default) only when the broker is the one meant to create data topics: otherwise a topic
        // the capture creates with its settings, or one that must exist, would be created with
        // the broker's defaults by the first write's metadata request.
        let broker_creates = options.topic_settings.data.creation == TopicCreation::Broker;
        producer_config.set(
            "allow.auto.create.topics",
            if broker_creates { "true" } else { "false" },
        );
        let producer = Arc::new(
            ThreadedProducer::from_config_and_context(&producer_config, DeliveryContext::default())
                .map_err(|e| SinkError::Stop(refused_settings(&e)))?,
        );
        let sender = RecordSender::start(Arc::clone(&producer)).map_err(|error| {
            tracing::error!(%error, "The Kafka record sender thread could not start.");
            SinkError::Kafka {
                action: "start the record sender thread",
                source: KafkaError::Global(RDKafkaErrorCode::Fail),
            }
        })?;
        let sink = Self {
            producer,
            sender,
            bookmark_key: options.identity.key(),
            options,
            metrics,
            status,
            ready_topics: Mutex::new(HashSet::new()),
        };
        sink.retrying("reach the brokers", || sink.reach_brokers())?;
        sink.retrying("create the topics", || {
            let internal = &sink.options.topic_settings.internal;
            let required: Vec<_> = sink
                .options
                .topics
                .required()
                .into_iter()
                .map(|topic| topic.with_settings(internal))
                .collect();
            ensure_topics(&sink.options.settings, &required, sink.options.call_timeout)
                .map_err(topic_attempt)
        })?;
        sink.ready().extend(
            sink.options
                .topics
                .required()
                .iter()
                .map(|t| t.name.to_owned()),
        );
        if sink.options.mode == DeliveryMode::ExactlyOnce {
            sink.retrying("initialise transactions", || {
                sink.producer
                    .init_transactions(sink.options.call_timeout)
                    .map_err(|e| sink.failure("initialise transactions", e))
            })?;
        }
        sink.set_state(ProducerState::Ready);
        tracing::info!(
            mode = ?sink.options.mode,
            transactional_id = id,
            settings = ?sink.options.settings,
            "Kafka sink ready."
        );
        Ok(sink)
    }

    /// The producer state (the handle given to [`Self::open`]).
    pub fn status(&self) -> &SinkStatus {
        &self.status
    }

    /// The sink's options.
    pub fn options(&self) -> &SinkOptions {
        &self.options
    }

    /// Reads the bookmark back: the last record under this capture's key, up to the end of the
    /// offsets topic (`read_committed`). `None` when there is none, or when the last one is a
    /// tombstone (the bookmark was deleted on purpose, see the runbook). Unreadable: CDC-5002.
    pub fn read_bookmark(&self) -> Result<Option<Bookmark>, SinkError> {
        let topic = &self.options.topics.offsets;
        let key = self.bookmark_key.as_bytes();
        let latest = self.read_topic(topic, Vec::new, |latest, record| {
            keep_latest(latest, key, record);
            Ok(())
        })?;
        Ok(latest_bookmark(topic, &self.bookmark_key, &latest)?)
    }

    /// Reads `topic` to its end with retries, folding its records into a fresh `init()` state on
    /// every attempt. A record `visit` refuses ends the read with that stop.
    pub fn read_topic<S>(
        &self,
        topic: &str,
        init: impl Fn() -> S,
        mut visit: impl FnMut(&mut S, TopicRecord) -> Result<(), Stop>,
    ) -> Result<S, SinkError> {
        self.retrying("read back a topic", || {
            let mut state = init();
            let read = read_to_end(
                &self.options.settings,
                topic,
                self.options.call_timeout,
                |record| visit(&mut state, record),
            );
            match read {
                Ok(()) => Ok(state),
                Err(ReadError::Refused(stop)) => Err(Attempt::Fail(stop.into())),
                Err(ReadError::Kafka { source, action, .. }) => {
                    // What each step of a read asks the authorizer for (see `acls`).
                    let group = reader_group(topic);
                    let attempted = match (source.rdkafka_error_code(), action) {
                        (Some(RDKafkaErrorCode::GroupAuthorizationFailed), _) => Attempted {
                            operation: "Describe",
                            name: Some(&group),
                        },
                        (_, "consuming") => Attempted {
                            operation: "Read",
                            name: Some(topic),
                        },
                        _ => Attempted {
                            operation: "Describe",
                            name: Some(topic),
                        },
                    };
                    match not_authorized(&source, attempted) {
                        Some(stop) => Err(Attempt::Fail(stop.into())),
                        None => Err(Attempt::Retry(source)),
                    }
                }
                Err(ReadError::Timeout { .. }) => Err(Attempt::Retry(KafkaError::Flush(
                    RDKafkaErrorCode::OperationTimedOut,
                ))),
            }
        })
    }

    /// Gives one record to `page`, beginning the page at its first record (exactly once: its
    /// Kafka transaction). The record is queued for the sender thread, which hands it to
    /// librdkafka; both queues are bounded, and this waits while they are full. A failure
    /// abandons the page (see [`Self::abandon`]): its earlier records are no longer in memory
    /// to be sent again.
    pub fn produce(&self, page: &mut Page, record: Record) -> Result<(), SinkError> {
        const ACTION: &str = "write a page";
        self.prepare_topic(&record.topic)?;
        self.begin(page)?;
        let bytes = record_bytes(&record);
        let sent = self
            .sender
            .push(record)
            .and_then(|()| self.delivered_so_far());
        match sent {
            Ok(()) => {
                page.sent(bytes);
                self.metrics.held(page.held() + self.in_flight());
                Ok(())
            }
            Err(error) => Err(self.abandon(page, ACTION, error)),
        }
    }

    /// Makes data topics ready for writing before any page writes to them, as
    /// `spec.kafka.topics.data.creation` says: `capture` creates a missing one with the declared
    /// settings, `external` requires it to exist (CDC-1001 naming it otherwise), `broker` leaves
    /// it to the broker's auto-creation. The engine calls this at start with every topic it
    /// knows, so they are ready before the first Kafka transaction.
    pub fn prepare_topics(&self, topics: &[String]) -> Result<(), SinkError> {
        topics
            .iter()
            .try_for_each(|topic| self.prepare_topic(topic))
    }

    /// [`Self::prepare_topics`] for one topic; nothing once it is ready. A topic first met in
    /// the middle of a page (a table created while the capture runs) is prepared while the
    /// page's Kafka transaction is open, which exactly-once survives: CreateTopics is no part of
    /// the transaction, creates an empty topic and changes nothing on a retry, and the record
    /// joins the transaction (AddPartitionsToTxn) only once the topic exists, because it is
    /// handed to librdkafka only after this returns. Should the page abort, the topic stays,
    /// empty of anything a `read_committed` consumer sees.
    fn prepare_topic(&self, topic: &str) -> Result<(), SinkError> {
        if self.ready().contains(topic) {
            return Ok(());
        }
        let timeout = self.options.call_timeout;
        let prepared = |result: Result<(), TopicError>| result.map_err(topic_attempt);
        match self.options.topic_settings.data.creation {
            TopicCreation::Broker => {}
            TopicCreation::Capture => self.retrying("create a data topic", || {
                prepared(ensure_data_topic(
                    &self.options.settings,
                    &self.options.topic_settings.data,
                    topic,
                    timeout,
                ))
            })?,
            TopicCreation::External => self.retrying("find a data topic", || {
                prepared(check_external_topic(self.producer.client(), topic, timeout))
            })?,
        }
        self.ready().insert(topic.to_owned());
        Ok(())
    }

    fn ready(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ready_topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records librdkafka holds for this producer: queued, in flight, or waiting for their
    /// delivery report. Bounded by `queue.buffering.max.messages`.
    fn in_flight(&self) -> usize {
        usize::try_from(self.producer.in_flight_count()).unwrap_or(0)
    }

    /// Closes `page`: `bookmark`, then the page's `after_bookmark` records, and (exactly once)
    /// the commit of its Kafka transaction. Returns once the page is committed (see the module
    /// docs) and leaves `page` empty for the next one. Transient faults of the commit call and
    /// slow deliveries are waited out within the retry budget; a fault that needs the Kafka
    /// transaction aborted abandons the page ([`SinkError::PageAborted`]).
    pub fn commit_page(
        &self,
        page: &mut Page,
        bookmark: &Bookmark,
    ) -> Result<Committed, SinkError> {
        let value = bookmark.encode();
        self.begin(page)?;
        let started = page.begun_at().unwrap_or_else(Instant::now);
        let closed = match self.options.mode {
            DeliveryMode::ExactlyOnce => self.commit_transaction(page, &value),
            DeliveryMode::AtLeastOnce => self.acknowledged(page, &value),
        };
        let (records, bytes) = page.totals();
        *page = Page::default();
        closed?;
        let records = records + 1;
        let bytes = bytes + (self.bookmark_key.len() + value.len()) as u64;
        self.metrics.committed.inc();
        self.metrics.records.inc_by(records as u64);
        self.metrics.bytes.inc_by(bytes);
        self.metrics
            .duration
            .observe(started.elapsed().as_secs_f64());
        Ok(Committed {
            commit_scn: bookmark.commit_scn,
            records,
            bytes,
        })
    }

    /// Begins `page` unless it is begun: forgets delivery failures of earlier pages and, exactly
    /// once, begins its Kafka transaction.
    fn begin(&self, page: &mut Page) -> Result<(), SinkError> {
        if page.is_begun() {
            return Ok(());
        }
        self.producer.context().take_failure();
        if self.options.mode == DeliveryMode::ExactlyOnce {
            self.retrying("begin a page", || {
                self.producer
                    .begin_transaction()
                    .map_err(|e| self.failure("begin a page", e))
            })?;
        }
        page.begin(Instant::now());
        Ok(())
    }

    /// Exactly once: the bookmark and tombstones into the page's Kafka transaction, every
    /// delivery waited for, then the commit.
    fn commit_transaction(&self, page: &mut Page, bookmark: &str) -> Result<(), SinkError> {
        const ACTION: &str = "commit a page";
        // The wait for every delivery (`drain`) comes before the commit: rust-rdkafka's commit
        // flushes in 100 ms poll steps, which would cost every small page 100 ms.
        let sent = self
            .sender
            .settle()
            .and_then(|()| self.send_bookmark(bookmark))
            .and_then(|()| self.send_all(page.after_bookmark()));
        if let Err(error) = sent {
            return Err(self.abandon(page, ACTION, error));
        }
        self.delivered(page, ACTION)?;
        // A commit that timed out may be repeated as is; librdkafka forbids aborting it.
        let started = Instant::now();
        let mut retries = 0;
        loop {
            let Err(error) = self.producer.commit_transaction(self.options.call_timeout) else {
                if retries > 0 {
                    self.set_state(ProducerState::Ready);
                }
                return Ok(());
            };
            match classify(&error) {
                Class::Retriable => self.pause(ACTION, &mut retries, started, error)?,
                _ => return Err(self.abandon(page, ACTION, error)),
            }
        }
    }

    /// At least once: the records acknowledged, then the bookmark, then the tombstones.
    fn acknowledged(&self, page: &mut Page, bookmark: &str) -> Result<(), SinkError> {
        const ACTION: &str = "write a page";
        if let Err(error) = self.sender.settle() {
            return Err(self.abandon(page, ACTION, error));
        }
        self.delivered(page, ACTION)?;
        if let Err(error) = self.send_bookmark(bookmark) {
            return Err(self.abandon(page, ACTION, error));
        }
        self.delivered(page, ACTION)?;
        if let Err(error) = self.send_all(page.after_bookmark()) {
            return Err(self.abandon(page, ACTION, error));
        }
        self.delivered(page, ACTION)
    }

    /// Waits until every record of `page` given so far is delivered, within the retry budget
    /// (librdkafka goes on retrying them meanwhile, up to `message.timeout.ms`); a failed
    /// delivery abandons the page.
    fn delivered(&self, page: &mut Page, action: &'static str) -> Result<(), SinkError> {
        self.retrying(action, || self.drain().map_err(Attempt::Retry))?;
        match self.delivered_so_far() {
            Ok(()) => Ok(()),
            Err(error) => Err(self.abandon(page, action, error)),
        }
    }

    /// The first delivery failure of the page, if any: its record is lost from the page, so the
    /// page cannot commit.
    fn delivered_so_far(&self) -> Result<(), KafkaError> {
        match self.producer.context().take_failure() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// A page that cannot commit: aborts its Kafka transaction (exactly once, unless fencing or
    /// a fatal error left nothing to abort) and says why. The page's records are gone from
    /// memory, so a transient cause is [`SinkError::PageAborted`]: the capture must start again
    /// from the stored bookmark and mine the page's transactions again.
    fn abandon(&self, page: &mut Page, action: &'static str, error: KafkaError) -> SinkError {
        // Records of the page still queued for the sender must not reach a later transaction.
        self.sender.discard();
        *page = Page::default();
        let refused = self.refused(action, &error);
        let class = classify(&error);
        if self.options.mode == DeliveryMode::ExactlyOnce
            && !matches!(class, Class::Fenced | Class::Fatal)
            && let Err(abort_failed) = self.abort()
        {
            // A refused permission is why the page failed, whatever the abort met after it.
            return match refused {
                Some(stop) => SinkError::Stop(stop),
                None => abort_failed,
            };
        }
        let abandoned = match (refused, class) {
            (Some(stop), _) => SinkError::Stop(stop),
            (None, Class::Fenced) => SinkError::Fenced {
                transactional_id: self.options.identity.transactional_id(),
                source: error,
            },
            (None, Class::Retriable | Class::Abortable) => SinkError::PageAborted {
                action,
                source: error,
            },
            (None, Class::Fatal | Class::Definite) => SinkError::Kafka {
                action,
                source: error,
            },
        };
        self.set_state(match &abandoned {
            SinkError::Fenced { .. } => ProducerState::Fenced,
            other => ProducerState::Failed {
                error: other.to_string(),
            },
        });
        abandoned
    }

    fn abort(&self) -> Result<(), SinkError> {
        self.retrying("abort a transaction", || {
            self.producer
                .abort_transaction(self.options.call_timeout)
                .map_err(|e| self.failure("abort a transaction", e))
        })?;
        self.metrics.aborted.inc();
        Ok(())
    }

    /// Waits until librdkafka has no record queued or in flight and every delivery report is
    /// served. `Producer::flush` of rust-rdkafka 0.39 polls in steps of 100 ms whenever a record
    /// is still out, which would cost every page 100 ms; this looks in short steps instead,
    /// sleeping between looks (see `LIBRDKAFKA_WAIT_STEP`).
    fn drain(&self) -> Result<(), KafkaError> {
        let deadline = Instant::now() + self.options.call_timeout;
        while self.producer.in_flight_count() > 0 {
            if Instant::now() >= deadline {
                return Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut));
            }
            std::thread::sleep(LIBRDKAFKA_WAIT_STEP);
        }
        Ok(())
    }

    fn send_all(&self, records: &[Record]) -> Result<(), KafkaError> {
        records.iter().try_for_each(|record| {
            self.send(
                &record.topic,
                record.key.as_deref(),
                record.value.as_deref(),
            )
        })
    }

    fn send_bookmark(&self, bookmark: &str) -> Result<(), KafkaError> {
        self.send(
            &self.options.topics.offsets,
            Some(self.bookmark_key.as_bytes()),
            Some(bookmark.as_bytes()),
        )
    }

    /// Queues one record of the sink's own (bookmark, tombstone) in librdkafka, after the data
    /// the sender has settled.
    fn send(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<(), KafkaError> {
        sender::send_waiting(&self.producer, topic, key, value)
    }

    /// Whether the broker refused the producer: its authentication (whatever `error` is, often
    /// just a timeout) or, by `error`'s code, a permission `action` needed (CDC-1004, CDC-5004).
    fn refused(&self, action: &'static str, error: &KafkaError) -> Option<Stop> {
        let context = self.producer.context();
        if let Some(stop) = context.refusals.get() {
            return Some(stop);
        }
        let transactional_id = self.options.identity.transactional_id();
        let denied = context.refusals.denied();
        // A failed transaction shows its callers only purged records and a rejected abort; the
        // refusal behind it is the one librdkafka logged.
        let error = match (&denied, error.rdkafka_error_code()) {
            (
                Some((code, _)),
                Some(
                    RDKafkaErrorCode::PurgeQueue
                    | RDKafkaErrorCode::PurgeInflight
                    | RDKafkaErrorCode::InvalidTransactionalState
                    | RDKafkaErrorCode::State
                    | RDKafkaErrorCode::Fatal,
                ),
            ) => &KafkaError::Global(*code),
            _ => error,
        };
        let topic = denied.and_then(|(_, topic)| topic);
        let name = match error.rdkafka_error_code() {
            Some(RDKafkaErrorCode::TransactionalIdAuthorizationFailed) => {
                Some(transactional_id.as_str())
            }
            Some(RDKafkaErrorCode::TopicAuthorizationFailed) => topic.as_deref(),
            _ => None,
        };
        let operation = if action.starts_with("read") {
            "Read"
        } else {
            "Write"
        };
        not_authorized(error, Attempted { operation, name })
    }

    /// One metadata request, in short steps so that a refused authentication (which librdkafka
    /// reports only to the error callback, while the request waits) stops the start at once.
    fn reach_brokers(&self) -> Result<(), Attempt> {
        const STEP: Duration = Duration::from_secs(1);
        let started = Instant::now();
        loop {
            let answered = self.producer.client().fetch_metadata(None, STEP);
            if let Some(stop) = self.producer.context().refusals.get() {
                return Err(Attempt::Fail(stop.into()));
            }
            match answered {
                Ok(_) => return Ok(()),
                Err(error) if started.elapsed() >= self.options.call_timeout => {
                    return Err(self.failure("reach the brokers", error));
                }
                Err(_) => {}
            }
        }
    }

    /// Turns a Kafka error of `action` into an attempt outcome (see `error::classify`).
    fn failure(&self, action: &'static str, error: KafkaError) -> Attempt {
        if let Some(stop) = self.refused(action, &error) {
            return Attempt::Fail(stop.into());
        }
        match classify(&error) {
            Class::Fenced => Attempt::Fail(SinkError::Fenced {
                transactional_id: self.options.identity.transactional_id(),
                source: error,
            }),
            Class::Retriable | Class::Abortable => Attempt::Retry(error),
            Class::Fatal | Class::Definite => Attempt::Fail(SinkError::Kafka {
                action,
                source: error,
            }),
        }
    }

    /// Runs `step` until it succeeds or fails for good, pausing between attempts (see
    /// [`Self::pause`]).
    fn retrying<T>(
        &self,
        action: &'static str,
        mut step: impl FnMut() -> Result<T, Attempt>,
    ) -> Result<T, SinkError> {
        let started = Instant::now();
        let mut retries = 0;
        loop {
            let error = match step() {
                Ok(value) => {
                    if retries > 0 {
                        self.set_state(ProducerState::Ready);
                    }
                    return Ok(value);
                }
                Err(Attempt::Fail(error)) => error,
                Err(Attempt::Retry(error)) => {
                    match self.pause(action, &mut retries, started, error) {
                        Ok(()) => continue,
                        Err(exhausted) => exhausted,
                    }
                }
            };
            self.set_state(match &error {
                SinkError::Fenced { .. } => ProducerState::Fenced,
                other => ProducerState::Failed {
                    error: other.to_string(),
                },
            });
            return Err(error);
        }
    }

    /// After a transient fault of `action`, which has failed since `started`: waits with capped
    /// exponential backoff, or gives up once the retry budget is spent. Logs, counts and shows
    /// each retry.
    fn pause(
        &self,
        action: &'static str,
        retries: &mut u32,
        started: Instant,
        error: KafkaError,
    ) -> Result<(), SinkError> {
        if let Some(stop) = self.refused(action, &error) {
            return Err(stop.into());
        }
        *retries += 1;
        let pause = self.options.retry.backoff(*retries);
        if !self.options.retry.allows(started.elapsed(), pause) {
            return Err(SinkError::RetriesExhausted {
                action,
                attempts: *retries,
                elapsed: started.elapsed(),
                source: error,
            });
        }
        tracing::warn!(
            action,
            attempt = *retries,
            %error,
            backoff_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
            "Kafka call failed; retrying after a pause."
        );
        self.metrics.retries.inc();
        self.set_state(ProducerState::Retrying {
            action: action.to_owned(),
            attempt: *retries,
            error: error.to_string(),
        });
        std::thread::sleep(pause);
        Ok(())
    }

    fn set_state(&self, state: ProducerState) {
        self.metrics.set_state(&state);
        self.status.set(state);
    }
}

/// Reads the stored bookmark once, as [`KafkaSink::read_bookmark`] does but with a consumer
/// alone: no producer initialises transactions, so no running capture is fenced. This is what
/// `doctor` shows. `read_committed`, so a page a running capture has not committed yet is not
/// seen. An offsets topic that does not exist yet is a capture that never ran: `None`.
pub fn peek_bookmark(options: &SinkOptions) -> Result<Option<Bookmark>, ReadError> {
    let topic = &options.topics.offsets;
    let key = options.identity.key();
    let mut latest = Vec::new();
    let read = read_to_end(&options.settings, topic, options.call_timeout, |record| {
        keep_latest(&mut latest, key.as_bytes(), record);
        Ok(())
    });
    match read {
        Ok(()) => latest_bookmark(topic, &key, &latest).map_err(ReadError::Refused),
        Err(ReadError::Kafka {
            source: KafkaError::MetadataFetch(RDKafkaErrorCode::UnknownTopicOrPartition),
            ..
        }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Keeps `record` when it is under `key`: the latest one of each partition.
fn keep_latest(latest: &mut Vec<TopicRecord>, key: &[u8], record: TopicRecord) {
    if record.key.as_deref() == Some(key) {
        latest.retain(|r| r.partition != record.partition);
        latest.push(record);
    }
}

/// The bookmark among the latest records under `key` (at most one partition holds it).
fn latest_bookmark(
    topic: &str,
    key: &str,
    latest: &[TopicRecord],
) -> Result<Option<Bookmark>, Stop> {
    let [record] = latest else {
        return match latest.first() {
            None => Ok(None),
            Some(first) => Err(unreadable(
                &location(topic, first),
                &format!(
                    "the key {key} appears in {} partitions; the topic was repartitioned",
                    latest.len()
                ),
            )),
        };
    };
    match &record.value {
        None => {
            tracing::warn!(
                topic,
                key,
                offset = record.offset,
                "The bookmark was deleted (tombstone); starting as a new capture."
            );
            Ok(None)
        }
        Some(value) => Ok(Some(Bookmark::decode(value, &location(topic, record))?)),
    }
}

fn location(topic: &str, record: &TopicRecord) -> RecordLocation {
    RecordLocation {
        topic: topic.to_owned(),
        partition: record.partition,
        offset: record.offset,
    }
}
