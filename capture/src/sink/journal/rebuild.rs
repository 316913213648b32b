//! Rebuilding the open transactions from the journal topic at start (rules in the parent module).
//!
//! [`JournalReplay`] folds the records read back into what compaction would keep (the newest
//! value per key, tombstones removing keys); [`JournalReplay::rebuild`] then applies the bookmark.
//! Both are pure; [`read_journal`] is the I/O around them.

use std::collections::{BTreeMap, HashMap};

use redoline_crds::StopCode;

use super::codec::{ChunkKey, ChunkValue};
use super::{Journal, JournalSettings, TxKey};
use crate::event::Record;
use crate::record_location::{RecordLocation, unreadable};
use crate::sink::bookmark::Bookmark;
use crate::sink::kafka::reader::TopicRecord;
use crate::sink::{CaptureIdentity, KafkaSink, SinkError};
use crate::source::{LogMinerRow, Xid};
use crate::stop::Stop;

/// A live chunk found in the topic.
#[derive(Clone, Debug)]
struct LiveChunk {
    key: ChunkKey,
    /// The key as written, for its tombstone.
    raw_key: String,
    value: Vec<u8>,
    at: RecordLocation,
}

/// The journal topic as compaction would leave it, for this capture.
#[derive(Debug)]
pub struct JournalReplay {
    topic: String,
    capture: String,
    live: HashMap<String, LiveChunk>,
    highest_generation: u64,
}

/// An open transaction rebuilt from the journal: hand its rows to the buffer, in order, before
/// mining resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RebuiltTransaction {
    pub key: TxKey,
    /// Its journaled rows below the bookmark's `restart_scn`, in redo order, undo rows included.
    pub rows: Vec<LogMinerRow>,
}

/// The outcome of a rebuild.
#[derive(Debug)]
pub struct Rebuilt {
    /// The journal state for this run, with the transactions below and its new generation.
    pub journal: Journal,
    pub transactions: Vec<RebuiltTransaction>,
    /// Tombstones of chunks from starts that never committed a bookmark, and of transactions
    /// that ended before the bookmark. They must go into the first page, before its bookmark
    /// (which carries the new generation).
    pub stale: Vec<Record>,
}

impl JournalReplay {
    pub fn new(topic: &str, capture: &CaptureIdentity) -> Self {
        Self {
            topic: topic.to_owned(),
            capture: capture.key(),
            live: HashMap::new(),
            highest_generation: 0,
        }
    }

    /// Folds in the next record read back. A key that cannot be read is CDC-5002: it may be one
    /// of ours, and skipping it could lose a transaction's beginning.
    pub fn add(&mut self, record: TopicRecord) -> Result<(), Stop> {
        let at = RecordLocation {
            topic: self.topic.clone(),
            partition: record.partition,
            offset: record.offset,
        };
        let raw = record
            .key
            .ok_or_else(|| unreadable(&at, "a journal record has no key"))?;
        let raw_key =
            String::from_utf8(raw).map_err(|_| unreadable(&at, "the journal key is not UTF-8"))?;
        let key = ChunkKey::decode(raw_key.as_bytes())
            .map_err(|e| unreadable(&at, &format!("not a journal key: {e}")))?;
        if key.capture != self.capture {
            return Ok(());
        }
        self.highest_generation = self.highest_generation.max(key.generation);
        match record.value {
            None => {
                self.live.remove(&raw_key);
            }
            Some(value) => {
                self.live.insert(
                    raw_key.clone(),
                    LiveChunk {
                        key,
                        raw_key,
                        value,
                        at,
                    },
                );
            }
        }
        Ok(())
    }

    /// Applies `bookmark` (`None`: no bookmark, so every chunk is stale).
    pub fn rebuild(
        self,
        bookmark: Option<&Bookmark>,
        settings: JournalSettings,
        capture: &CaptureIdentity,
    ) -> Result<Rebuilt, Stop> {
        let committed = bookmark.map(|b| (b.journal_generation, b.restart_scn));
        let bookmark_generation = committed.map_or(0, |(generation, _)| generation);
        let generation = bookmark_generation.max(self.highest_generation) + 1;
        let topic = settings.topic.clone();
        let mut journal = Journal::new(settings, capture, generation);

        let mut stale = Vec::new();
        let mut by_transaction: BTreeMap<TxKey, Vec<LiveChunk>> = BTreeMap::new();
        for chunk in self.live.into_values() {
            if committed.is_none() || chunk.key.generation > bookmark_generation {
                stale.push(Record {
                    topic: topic.clone(),
                    key: Some(chunk.raw_key.into_bytes()),
                    value: None,
                });
                continue;
            }
            let xid =
                Xid::from_hex(&chunk.key.xid).map_err(|e| unreadable(&chunk.at, &e.to_string()))?;
            let key = TxKey {
                container: chunk.key.container.clone(),
                xid,
            };
            by_transaction.entry(key).or_default().push(chunk);
        }
        stale.sort_by(|a, b| a.key.cmp(&b.key));

        let restart_scn = committed.map_or(0, |(_, restart)| restart);
        let mut transactions = Vec::with_capacity(by_transaction.len());
        for (key, mut chunks) in by_transaction {
            chunks.sort_by_key(|c| c.key.chunk);
            check_contiguous(&key, &chunks)?;
            let mut rows: Vec<LogMinerRow> = Vec::new();
            let mut highest_journaled_scn = 0;
            for chunk in &chunks {
                let value = ChunkValue::decode(&chunk.value)
                    .map_err(|e| unreadable(&chunk.at, &format!("not a journal chunk: {e}")))?;
                if let Some(cut) = value.header.cut_scn {
                    rows.retain(|row| row.scn < cut);
                }
                for row in value.rows {
                    let row = row.into_row().map_err(|e| unreadable(&chunk.at, &e))?;
                    highest_journaled_scn = highest_journaled_scn.max(row.scn);
                    rows.push(row);
                }
            }
            // While a journaled transaction is open, every bookmark's restart SCN is at most the
            // SCN of its last journaled row (its pin). One journaled entirely below the restart
            // SCN had ended when the bookmark was written: its tombstones were lost to a crash
            // after the bookmark (at least once, they follow it). Rebuilt as open it would wait
            // for a COMMIT mining never meets again and pin the restart SCN for ever.
            if highest_journaled_scn < restart_scn {
                tracing::info!(
                    xid = %key.xid,
                    restart_scn,
                    highest_journaled_scn,
                    "a journaled transaction ended before the bookmark: its chunks are removed"
                );
                stale.extend(chunks.into_iter().map(|chunk| Record {
                    topic: topic.clone(),
                    key: Some(chunk.raw_key.into_bytes()),
                    value: None,
                }));
                continue;
            }
            // Mining restarts at restart_scn and produces these again.
            rows.retain(|row| row.scn < restart_scn);
            let next_chunk = u32::try_from(chunks.len()).unwrap_or(u32::MAX);
            let chunk_keys = chunks.into_iter().map(|c| c.raw_key).collect();
            journal.restore(key.clone(), chunk_keys, next_chunk, restart_scn);
            transactions.push(RebuiltTransaction { key, rows });
        }
        Ok(Rebuilt {
            journal,
            transactions,
            stale,
        })
    }
}

/// Chunk numbers must run 0, 1, 2, ... without a gap (CDC-4002) or a repeat (CDC-5002).
fn check_contiguous(key: &TxKey, chunks: &[LiveChunk]) -> Result<(), Stop> {
    for (expected, chunk) in (0u32..).zip(chunks) {
        let found = chunk.key.chunk;
        if found == expected {
            continue;
        }
        if found < expected {
            return Err(unreadable(
                &chunk.at,
                &format!("transaction {} has chunk {found} twice", key.xid),
            ));
        }
        return Err(Stop::new(
            StopCode::JournalGap,
            format!(
                "the journal of transaction {} ({}) lacks chunk {expected}: the next one found is \
                 chunk {found} at {}/{} offset {}",
                key.xid,
                key.container.as_deref().unwrap_or("no container"),
                chunk.at.topic,
                chunk.at.partition,
                chunk.at.offset
            ),
        )
        .with_detail("xid", key.xid.to_upper_hex())
        .with_detail("container", key.container.clone())
        .with_detail("missingChunk", expected)
        .with_detail("foundChunk", found));
    }
    Ok(())
}

/// Reads the journal topic back to its end (`read_committed`) and rebuilds it against the
/// bookmark. Call after [`KafkaSink::read_bookmark`].
pub fn read_journal(
    sink: &KafkaSink,
    bookmark: Option<&Bookmark>,
    settings: JournalSettings,
) -> Result<Rebuilt, SinkError> {
    let capture = &sink.options().identity;
    let topic = settings.topic.clone();
    let replay = sink.read_topic(
        &topic,
        || JournalReplay::new(&topic, capture),
        |replay, record| replay.add(record),
    )?;
    Ok(replay.rebuild(bookmark, settings, capture)?)
}
