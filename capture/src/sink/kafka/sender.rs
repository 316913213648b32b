//! The sender: a thread that hands a page's records to librdkafka, so the capture encodes the
//! next event while librdkafka takes in the last one.
//!
//! Handing a record to librdkafka (`rd_kafka_producev`) copies it, looks its topic up under the
//! client's write lock and wakes the broker thread: several microseconds a record, as much as
//! mining, buffering and encoding an event cost together. Done on the mining thread, the two
//! added up; on a thread of their own they overlap, and the capture keeps pace with a plain
//! producer (the `capture_e2e` bench measures both).
//!
//! **Order.** One thread sends every data record, in the order the engine queued them. Records
//! the sink writes itself (the bookmark, the tombstones after it) come only after
//! [`RecordSender::settle`], which returns once every queued record is in librdkafka's queue,
//! so a page's bookmark never overtakes its data.
//!
//! **Batches.** Records go to the thread in batches of up to [`BATCH_RECORDS`] records or
//! [`BATCH_BYTES`]: a hand-over per record would wake the thread, and switch to it, per record,
//! which cost as much as the sending saved. A batch not full yet goes at [`RecordSender::settle`].
//!
//! **Memory bound.** What waits here is bounded by the open batch plus [`QUEUED_BYTES`] of keys
//! and values handed over (one batch is always let through, whatever its size), on top of
//! librdkafka's own queue bound: the engine waits while the queue is full, as it waits while
//! librdkafka's is.
//!
//! **Failures.** A record librdkafka refuses is remembered; the records after it are dropped
//! unsent (the page cannot commit any more) and the next [`RecordSender::push`] or
//! [`RecordSender::settle`] returns the error, so the sink abandons the page.
//! [`RecordSender::discard`] empties the queue unsent, for a page being abandoned: none of its
//! records may reach the next Kafka transaction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::message::ToBytes;
use rdkafka::producer::{BaseRecord, ProducerContext, ThreadedProducer};
use rdkafka::types::RDKafkaErrorCode;

use crate::event::Record;
use crate::sink::page::record_bytes;

/// Key and value bytes queued for the sender at most (a single larger record still passes).
pub const QUEUED_BYTES: u64 = 4 << 20;

/// Records of a batch at most.
pub const BATCH_RECORDS: usize = 256;

/// Key and value bytes of a batch at most (a batch holds at least one record, whatever its size).
pub const BATCH_BYTES: u64 = 256 << 10;

/// Batches handed over at most, whatever their size.
const QUEUED_BATCHES: usize = 64;

/// How long a thread waiting on librdkafka (for room in its queue, or for every record to be
/// delivered) sleeps between looks. The producer's own polling thread serves the delivery
/// reports that make the room; polling from the waiting thread as well would spin, because
/// rust-rdkafka rounds what is left of a short poll down to a zero wait, and the spin takes the
/// core from librdkafka and, on a small node, from the broker it is waiting for.
pub(super) const LIBRDKAFKA_WAIT_STEP: Duration = Duration::from_micros(200);

/// Records bound for the thread, and their key and value bytes.
#[derive(Default)]
struct Batch {
    records: Vec<Record>,
    bytes: u64,
}

enum Job {
    Send(Batch),
    /// Answered once every record queued before it was handled.
    Settle(SyncSender<Option<KafkaError>>),
}

/// State the engine's thread and the sender share.
#[derive(Default)]
struct Shared {
    queued_bytes: Mutex<u64>,
    /// Signalled whenever `queued_bytes` goes down.
    room: Condvar,
    /// Set with `failure`, read without its lock on every push.
    failed: AtomicBool,
    failure: Mutex<Option<KafkaError>>,
    /// Records are dropped unsent while set (see [`RecordSender::discard`]).
    discarding: AtomicBool,
}

impl Shared {
    fn queued(&self) -> std::sync::MutexGuard<'_, u64> {
        self.queued_bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn fail(&self, error: KafkaError) {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(error);
        self.failed.store(true, Ordering::Release);
    }

    fn failure(&self) -> Option<KafkaError> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn take_failure(&self) -> Option<KafkaError> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        self.failed.store(false, Ordering::Release);
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The sending thread of one producer. See the module documentation.
pub struct RecordSender {
    queue: Option<SyncSender<Job>>,
    /// The batch being filled.
    open: Mutex<Batch>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RecordSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordSender")
            .field("queued_bytes", &*self.shared.queued())
            .finish_non_exhaustive()
    }
}

impl RecordSender {
    /// Starts the thread that sends through `producer`.
    pub fn start<C>(producer: Arc<ThreadedProducer<C>>) -> std::io::Result<Self>
    where
        C: ProducerContext<DeliveryOpaque = ()> + 'static,
    {
        let (queue, jobs) = sync_channel(QUEUED_BATCHES);
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("kafka-sender".to_owned())
            .spawn({
                let shared = Arc::clone(&shared);
                move || serve(&producer, &jobs, &shared)
            })?;
        Ok(Self {
            queue: Some(queue),
            open: Mutex::new(Batch::default()),
            shared,
            thread: Some(thread),
        })
    }

    /// Queues `record`, waiting while the queue is full. Returns the failure of an earlier
    /// record instead, if one failed since the last [`Self::settle`] (it stays until then, so
    /// the records queued after it stay unsent).
    pub fn push(&self, record: Record) -> Result<(), KafkaError> {
        if self.shared.failed.load(Ordering::Acquire) {
            return Err(self.shared.failure().unwrap_or_else(sender_gone));
        }
        let full = {
            let mut open = self.open_batch();
            open.bytes += record_bytes(&record);
            open.records.push(record);
            if open.records.len() < BATCH_RECORDS && open.bytes < BATCH_BYTES {
                return Ok(());
            }
            std::mem::take(&mut *open)
        };
        self.hand_over(full)
    }

    /// Hands `batch` to the thread, waiting while what it was handed is over [`QUEUED_BYTES`].
    fn hand_over(&self, batch: Batch) -> Result<(), KafkaError> {
        if batch.records.is_empty() {
            return Ok(());
        }
        {
            let mut queued = self.shared.queued();
            while *queued > 0 && *queued + batch.bytes > QUEUED_BYTES {
                // A thread that is gone would never make room.
                if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
                    return Err(sender_gone());
                }
                queued = self
                    .shared
                    .room
                    .wait_timeout(queued, Duration::from_millis(100))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            *queued += batch.bytes;
        }
        self.submit(Job::Send(batch))
    }

    fn open_batch(&self) -> std::sync::MutexGuard<'_, Batch> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns once every queued record is handed to librdkafka, or the first failure among
    /// them.
    pub fn settle(&self) -> Result<(), KafkaError> {
        let open = std::mem::take(&mut *self.open_batch());
        self.hand_over(open)?;
        let (reply, answer) = sync_channel(1);
        self.submit(Job::Settle(reply))?;
        match answer.recv() {
            Ok(None) => Ok(()),
            Ok(Some(failure)) => Err(failure),
            Err(_) => Err(sender_gone()),
        }
    }

    /// Drops every queued record unsent and forgets any failure: the page they belong to is
    /// being abandoned.
    pub fn discard(&self) {
        *self.open_batch() = Batch::default();
        self.shared.discarding.store(true, Ordering::Release);
        // A sender that is gone has nothing queued any more.
        let _ = self.settle();
        self.shared.take_failure();
        self.shared.discarding.store(false, Ordering::Release);
    }

    fn submit(&self, job: Job) -> Result<(), KafkaError> {
        match &self.queue {
            Some(queue) => queue.send(job).map_err(|_| sender_gone()),
            None => Err(sender_gone()),
        }
    }
}

impl Drop for RecordSender {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has handled what was queued.
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's loop: until the queue is closed.
fn serve<C>(producer: &ThreadedProducer<C>, jobs: &Receiver<Job>, shared: &Shared)
where
    C: ProducerContext<DeliveryOpaque = ()>,
{
    for job in jobs {
        match job {
            Job::Send(batch) => {
                for record in &batch.records {
                    let skip = shared.failed.load(Ordering::Acquire)
                        || shared.discarding.load(Ordering::Acquire);
                    if !skip
                        && let Err(error) = send_waiting(
                            producer,
                            &record.topic,
                            record.key.as_deref(),
                            record.value.as_deref(),
                        )
                    {
                        shared.fail(error);
                    }
                }
                let bytes = batch.bytes;
                drop(batch);
                let mut queued = shared.queued();
                *queued = queued.saturating_sub(bytes);
                shared.room.notify_one();
            }
            Job::Settle(reply) => {
                let _ = reply.send(shared.take_failure());
            }
        }
    }
}

/// Hands one record to librdkafka, waiting while its queue is full (also what the benches'
/// plain producers do).
pub fn send_waiting<C, K, V>(
    producer: &ThreadedProducer<C>,
    topic: &str,
    key: Option<&K>,
    value: Option<&V>,
) -> Result<(), KafkaError>
where
    C: ProducerContext<DeliveryOpaque = ()>,
    K: ToBytes + ?Sized,
    V: ToBytes + ?Sized,
{
    let mut record: BaseRecord<'_, K, V> = BaseRecord::to(topic);
    if let Some(key) = key {
        record = record.key(key);
    }
    if let Some(value) = value {
        record = record.payload(value);
    }
    loop {
        match producer.send(record) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                record = back;
                // The producer's own thread serves delivery reports; see `LIBRDKAFKA_WAIT_STEP`.
                std::thread::sleep(LIBRDKAFKA_WAIT_STEP);
            }
            Err((error, _)) => return Err(error),
        }
    }
}

/// The error of a sender whose thread is gone (it cannot end while the sink holds its queue, so
/// only a panic on that thread gets here).
fn sender_gone() -> KafkaError {
    KafkaError::Canceled
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use rdkafka::ClientContext;
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{DeliveryResult, Producer, PurgeConfig};

    use super::*;

    /// Counts the delivery reports librdkafka hands back.
    #[derive(Default)]
    struct DeliveryCount(AtomicUsize);

    impl ClientContext for DeliveryCount {}

    impl ProducerContext for DeliveryCount {
        type DeliveryOpaque = ();

        fn delivery(&self, _: &DeliveryResult<'_>, _: ()) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A producer with no broker to reach: librdkafka queues records locally, and refuses at
    /// once one larger than `message.max.bytes`.
    fn offline_producer() -> Arc<ThreadedProducer<DeliveryCount>> {
        let producer = ClientConfig::new()
            .set("message.max.bytes", "2000")
            .create_with_context(DeliveryCount::default())
            .unwrap();
        Arc::new(producer)
    }

    /// How many records librdkafka was handed since the producer started: those still queued
    /// are purged, each with a delivery report, and the reports are counted once served.
    /// (`in_flight_count` alone also counts librdkafka's own events, which come and go.)
    fn handed_to_librdkafka(producer: &ThreadedProducer<DeliveryCount>) -> usize {
        producer.purge(PurgeConfig::default().queue().inflight());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while producer.in_flight_count() > 0 {
            assert!(std::time::Instant::now() < deadline, "reports not served");
            std::thread::sleep(Duration::from_millis(5));
        }
        producer.context().0.load(Ordering::SeqCst)
    }

    fn record(value_bytes: usize) -> Record {
        Record {
            topic: "t".to_owned(),
            key: Some(b"k".to_vec()),
            value: Some(vec![b'v'; value_bytes]),
        }
    }

    #[test]
    fn settled_records_are_all_in_librdkafka_in_batches_or_not() {
        let producer = offline_producer();
        let sender = RecordSender::start(Arc::clone(&producer)).unwrap();
        for _ in 0..BATCH_RECORDS + 10 {
            sender.push(record(10)).unwrap();
        }
        sender.settle().unwrap();
        assert_eq!(handed_to_librdkafka(&producer), BATCH_RECORDS + 10);
        assert_eq!(*sender.shared.queued(), 0, "nothing is left queued");
    }

    #[test]
    fn a_refused_record_fails_the_page_and_holds_back_the_records_behind_it() {
        let producer = offline_producer();
        let sender = RecordSender::start(Arc::clone(&producer)).unwrap();
        sender.push(record(10)).unwrap();
        sender.push(record(5000)).unwrap();
        sender.push(record(10)).unwrap();
        let failure = sender.settle().unwrap_err();
        assert!(
            matches!(
                failure,
                KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge)
            ),
            "{failure:?}"
        );
        assert_eq!(
            handed_to_librdkafka(&producer),
            1,
            "only the record before it"
        );
        // Settled: the next page starts clean.
        sender.push(record(10)).unwrap();
        sender.settle().unwrap();
        assert_eq!(handed_to_librdkafka(&producer), 2);
    }

    #[test]
    fn a_failure_is_reported_by_the_next_push_and_discard_drops_what_is_queued() {
        let producer = offline_producer();
        let sender = RecordSender::start(Arc::clone(&producer)).unwrap();
        sender.push(record(5000)).unwrap();
        // The refused record is handed over at settle; a push after it sees the failure.
        assert!(sender.settle().is_err());
        for _ in 0..10 {
            sender.push(record(10)).unwrap();
        }
        sender.discard();
        sender.settle().unwrap();
        assert_eq!(
            handed_to_librdkafka(&producer),
            0,
            "a discarded batch never reaches librdkafka"
        );
        assert_eq!(*sender.shared.queued(), 0);
    }

    #[test]
    fn a_push_after_a_failure_returns_it_until_the_page_is_settled() {
        let producer = offline_producer();
        let sender = RecordSender::start(Arc::clone(&producer)).unwrap();
        // A full batch is handed over at once; its refused record fails the page.
        sender.push(record(5000)).unwrap();
        for _ in 1..BATCH_RECORDS {
            sender.push(record(1)).unwrap();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let failed = loop {
            if let Err(error) = sender.push(record(1)) {
                break error;
            }
            assert!(std::time::Instant::now() < deadline, "no failure seen");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(matches!(failed, KafkaError::MessageProduction(_)));
        assert!(sender.push(record(1)).is_err(), "it stays until settled");
        assert!(sender.settle().is_err());
        sender.push(record(1)).unwrap();
    }
}
