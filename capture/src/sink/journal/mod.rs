//! The journal of long transactions (seed 000): pure state and record codec.
//!
//! A transaction open longer than `journal.thresholdSeconds` (300) or holding more than
//! `journal.thresholdEvents` (100,000) changes is journaled to the compacted journal topic
//! (`<prefix>.cdc.txjournal` unless `journal.topic` names another), inside the same Kafka
//! transactions as data and bookmarks ([`Journal::is_due`], [`Journal::write`]).
//!
//! - The first chunk holds the transaction's whole history so far; every later mining step
//!   appends the rows mined since the previous chunk, undo rows included. The caller passes those
//!   rows; the journal splits them into chunks of about `journal.chunkMaxBytes` (512 KiB). A row
//!   larger than that is a chunk of its own.
//! - Chunk keys: capture identity, container, xid, chunk number (0, 1, 2, ... per transaction,
//!   continuing across restarts) and generation (see [`codec`] for the JSON).
//! - Once journaled, a transaction no longer pins the resume position at its first SCN:
//!   [`Journal::restart_scn`] gives the SCN of its last journaled row instead, so archived redo of
//!   its beginning can be purged while it is open. (Every row of the transaction below that SCN is
//!   in the journal; rows at it may be mined again and are then dropped by the rebuild.)
//! - At COMMIT the transaction's events are published and one tombstone per chunk follows; a
//!   ROLLBACK, an orphan release and a discard write the tombstones alone ([`Journal::forget`]).
//!   In at-least-once mode the tombstones go after the bookmark (`Page::after_bookmark`): written
//!   before it, a crash in between would lose the journaled beginning of a transaction the
//!   bookmark does not yet cover.
//! - At start the topic is read back and rebuilt ([`rebuild`]): the newest record per key counts
//!   (what compaction keeps), chunks are grouped by transaction, rows at or after the bookmark's
//!   `restart_scn` are dropped because mining produces them again, chunks of a generation newer
//!   than the bookmark's were written by a start that never committed a bookmark and are
//!   tombstoned, a transaction journaled entirely below the bookmark's `restart_scn` had ended
//!   before the bookmark (at least once, its tombstones were lost to a crash after it) and is
//!   tombstoned instead of rebuilt, and a gap in chunk numbers stops the capture with CDC-4002.
//! - Generations: each start takes `max(bookmark generation, highest generation in the topic) + 1`
//!   and writes it into its journal keys and its bookmarks. Under exactly-once delivery chunks
//!   always commit with a bookmark of their generation; at least once, chunks acknowledged before
//!   a crash that came before the bookmark are the ones found "newer" at the next start.
//!
//! Without Kafka (the file sink) the journal is off ([`JournalMode::Off`]): nothing is journaled,
//! long transactions pin the resume position at their first SCN, and the capture logs
//! [`JOURNAL_OFF_WARNING`] at start.

pub mod codec;
pub mod rebuild;

use std::collections::HashMap;
use std::time::Duration;

use redoline_crds::StopCode;
use redoline_crds::v1alpha1::JournalSpec;

use crate::event::Record;
use crate::source::{LogMinerRow, Xid};
use crate::stop::Stop;

use super::CaptureIdentity;
use codec::{ChunkHeader, ChunkKey, JOURNAL_FORMAT, RowJson, encode_chunk};
pub use rebuild::{JournalReplay, Rebuilt, RebuiltTransaction, read_journal};

/// The warning the capture logs at start when it writes to a file instead of Kafka.
pub const JOURNAL_OFF_WARNING: &str = "The journal of long transactions needs Kafka and is off \
     with the file sink: a long transaction pins the resume position at its first SCN, so the \
     archived redo from there must be kept until it ends.";

/// Whether long transactions are journaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JournalMode {
    /// Journaled to the Kafka journal topic.
    Kafka,
    /// No Kafka: nothing is journaled (see [`JOURNAL_OFF_WARNING`]).
    Off,
}

/// `spec.journal`, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalSettings {
    pub threshold: Duration,
    pub threshold_events: u64,
    pub chunk_max_bytes: usize,
    pub topic: String,
}

impl JournalSettings {
    /// From the spec and the journal topic's name (`TopicNames::journal`).
    pub fn from_spec(spec: &JournalSpec, topic: &str) -> Result<Self, Stop> {
        let chunk_max_bytes = spec
            .chunk_max_bytes
            .bytes()
            .ok()
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| {
                Stop::new(
                    StopCode::InvalidConfiguration,
                    "spec.journal.chunkMaxBytes is not a byte size",
                )
                .with_detail("field", "spec.journal.chunkMaxBytes")
            })?;
        Ok(Self {
            threshold: Duration::from_secs(spec.threshold_seconds),
            threshold_events: spec.threshold_events,
            chunk_max_bytes,
            topic: topic.to_owned(),
        })
    }
}

/// An open transaction: the container (PDB name, `None` outside a CDB) and the xid.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxKey {
    pub container: Option<String>,
    pub xid: Xid,
}

/// What the journal knows of one journaled transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
struct JournaledTx {
    /// Keys of its live chunks, as written, for the tombstones.
    chunk_keys: Vec<String>,
    next_chunk: u32,
    /// Every row of the transaction below this SCN is in the journal.
    covered_scn: u64,
    /// Set after a rebuild: the next chunk carries it as `cut_scn` (see [`codec`]).
    pending_cut: Option<u64>,
}

/// A failure to encode a chunk (JSON serialisation; not expected in practice).
#[derive(Debug, thiserror::Error)]
#[error("cannot encode a journal chunk of transaction {xid}: {source}")]
pub struct EncodeError {
    pub xid: Xid,
    #[source]
    pub source: serde_json::Error,
}

/// The journal's state for one run. See the module documentation.
#[derive(Clone, Debug)]
pub struct Journal {
    mode: JournalMode,
    settings: Option<JournalSettings>,
    capture: String,
    generation: u64,
    journaled: HashMap<TxKey, JournaledTx>,
}

impl Journal {
    /// No journal (the file sink).
    pub fn off() -> Self {
        Self {
            mode: JournalMode::Off,
            settings: None,
            capture: String::new(),
            generation: 0,
            journaled: HashMap::new(),
        }
    }

    /// An empty journal writing `generation`. At start use [`rebuild`] instead, which finds the
    /// generation and the transactions already journaled.
    pub fn new(settings: JournalSettings, capture: &CaptureIdentity, generation: u64) -> Self {
        Self {
            mode: JournalMode::Kafka,
            settings: Some(settings),
            capture: capture.key(),
            generation,
            journaled: HashMap::new(),
        }
    }

    pub fn mode(&self) -> JournalMode {
        self.mode
    }

    /// The generation this run writes: it goes into every bookmark as `journal_generation`.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether `key` has chunks in the journal.
    pub fn is_journaled(&self, key: &TxKey) -> bool {
        self.journaled.contains_key(key)
    }

    /// Whether a transaction not journaled yet, open for `age` with `events` changes, must be
    /// journaled now. Always false when the journal is off.
    pub fn is_due(&self, age: Duration, events: u64) -> bool {
        self.settings
            .as_ref()
            .is_some_and(|s| age > s.threshold || events > s.threshold_events)
    }

    /// Where mining must restart for this transaction: its first SCN, or once journaled the SCN
    /// its journal covers.
    pub fn restart_scn(&self, key: &TxKey, first_scn: u64) -> u64 {
        self.journaled
            .get(key)
            .map_or(first_scn, |tx| tx.covered_scn)
    }

    /// Journals `rows` of `key` (its whole history on the first call, the rows mined since on
    /// later ones), returning the chunk records for the next page. Nothing when the journal is
    /// off or `rows` is empty.
    pub fn write<'a>(
        &mut self,
        key: &TxKey,
        rows: impl IntoIterator<Item = &'a LogMinerRow>,
    ) -> Result<Vec<Record>, EncodeError> {
        let Some(settings) = &self.settings else {
            return Ok(Vec::new());
        };
        let failed = |source| EncodeError {
            xid: key.xid,
            source,
        };
        let mut chunks: Vec<(Vec<String>, u64)> = Vec::new();
        let mut size = 0;
        for row in rows {
            let json = serde_json::to_string(&RowJson::from(row)).map_err(failed)?;
            let start_new = match chunks.last() {
                None => true,
                Some((rows, _)) => !rows.is_empty() && size + json.len() > settings.chunk_max_bytes,
            };
            if start_new {
                chunks.push((Vec::new(), row.scn));
                size = 0;
            }
            size += json.len() + 1;
            if let Some((rows, last_scn)) = chunks.last_mut() {
                rows.push(json);
                *last_scn = row.scn;
            }
        }
        let Some(&(_, last_scn)) = chunks.last() else {
            return Ok(Vec::new());
        };
        let topic = settings.topic.clone();
        let tx = self.journaled.entry(key.clone()).or_insert(JournaledTx {
            chunk_keys: Vec::new(),
            next_chunk: 0,
            covered_scn: 0,
            pending_cut: None,
        });
        let mut records = Vec::with_capacity(chunks.len());
        for (rows, _) in chunks {
            let header = ChunkHeader {
                format: JOURNAL_FORMAT,
                key: ChunkKey {
                    capture: self.capture.clone(),
                    container: key.container.clone(),
                    xid: key.xid.to_upper_hex(),
                    chunk: tx.next_chunk,
                    generation: self.generation,
                },
                cut_scn: tx.pending_cut.take(),
            };
            let record_key = header.key.encode().map_err(failed)?;
            let value = encode_chunk(&header, &rows).map_err(failed)?;
            tx.chunk_keys.push(record_key.clone());
            tx.next_chunk += 1;
            records.push(Record {
                topic: topic.clone(),
                key: Some(record_key.into_bytes()),
                value: Some(value.into_bytes()),
            });
        }
        tx.covered_scn = last_scn;
        Ok(records)
    }

    /// The transaction ended (COMMIT, ROLLBACK, orphan release or discard): one tombstone per
    /// chunk, and the journal forgets it. Nothing if it was never journaled.
    pub fn forget(&mut self, key: &TxKey) -> Vec<Record> {
        let (Some(settings), Some(tx)) = (&self.settings, self.journaled.remove(key)) else {
            return Vec::new();
        };
        tx.chunk_keys
            .into_iter()
            .map(|chunk_key| Record {
                topic: settings.topic.clone(),
                key: Some(chunk_key.into_bytes()),
                value: None,
            })
            .collect()
    }

    /// Restores a transaction found by the rebuild.
    fn restore(&mut self, key: TxKey, chunk_keys: Vec<String>, next_chunk: u32, cut: u64) {
        self.journaled.insert(
            key,
            JournaledTx {
                chunk_keys,
                next_chunk,
                covered_scn: cut,
                pending_cut: Some(cut),
            },
        );
    }
}

#[cfg(test)]
mod tests;
