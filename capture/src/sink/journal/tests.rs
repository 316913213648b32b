//! The journal's rules, without Kafka: records are fed to the replay as a broker would return
//! them after compaction-free appends.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use redoline_crds::StopCode;

use super::codec::{ChunkKey, ChunkValue};
use super::*;
use crate::sink::bookmark::Bookmark;
use crate::sink::kafka::reader::TopicRecord;
use crate::source::fixtures;

const TOPIC: &str = "sales.cdc.txjournal";

fn capture() -> CaptureIdentity {
    CaptureIdentity::new("sales", "orders")
}

fn settings(chunk_max_bytes: usize) -> JournalSettings {
    JournalSettings {
        threshold: Duration::from_secs(300),
        threshold_events: 100_000,
        chunk_max_bytes,
        topic: TOPIC.into(),
    }
}

fn tx(n: u32) -> TxKey {
    TxKey {
        container: Some("SALESPDB".into()),
        xid: Xid::from_parts(3, 14, n),
    }
}

fn row(key: &TxKey, scn: u64) -> LogMinerRow {
    LogMinerRow {
        src_con_name: key.container.as_deref().map(Arc::from),
        ..fixtures::insert(key.xid, scn)
    }
}

fn rows(key: &TxKey, scns: std::ops::Range<u64>) -> Vec<LogMinerRow> {
    scns.map(|scn| row(key, scn)).collect()
}

/// The topic as an append-only log.
#[derive(Default)]
struct Log(Vec<Record>);

impl Log {
    fn append(&mut self, records: impl IntoIterator<Item = Record>) {
        self.0.extend(records);
    }

    fn replay(&self) -> JournalReplay {
        let mut replay = JournalReplay::new(TOPIC, &capture());
        for (offset, record) in (0i64..).zip(&self.0) {
            replay
                .add(TopicRecord {
                    partition: 0,
                    offset,
                    key: record.key.clone(),
                    value: record.value.clone(),
                })
                .unwrap();
        }
        replay
    }

    fn rebuild(&self, bookmark: Option<&Bookmark>) -> Result<Rebuilt, Stop> {
        self.replay()
            .rebuild(bookmark, settings(512 * 1024), &capture())
    }
}

fn bookmark(restart_scn: u64, generation: u64) -> Bookmark {
    let mut bookmark = Bookmark::initial(restart_scn, 1, None, generation);
    bookmark.commit_scn = restart_scn + 1000;
    bookmark
}

fn scns(transaction: &RebuiltTransaction) -> Vec<u64> {
    transaction.rows.iter().map(|r| r.scn).collect()
}

#[test]
fn due_after_the_age_or_event_thresholds_and_never_when_off() {
    let journal = Journal::new(settings(1024), &capture(), 1);
    assert!(!journal.is_due(Duration::from_secs(300), 100_000));
    assert!(journal.is_due(Duration::from_secs(301), 0));
    assert!(journal.is_due(Duration::ZERO, 100_001));
    let off = Journal::off();
    assert_eq!(off.mode(), JournalMode::Off);
    assert!(!off.is_due(Duration::from_secs(100_000), u64::MAX));
    let mut off = off;
    assert!(off.write(&tx(1), &rows(&tx(1), 1..5)).unwrap().is_empty());
    assert_eq!(off.restart_scn(&tx(1), 7), 7);
}

#[test]
fn chunks_split_near_the_size_limit_and_move_the_restart_position() {
    let key = tx(1);
    let mut journal = Journal::new(settings(2000), &capture(), 4);
    assert_eq!(journal.restart_scn(&key, 100), 100);
    let history = rows(&key, 100..130);
    let records = journal.write(&key, &history).unwrap();
    assert!(
        records.len() > 1,
        "30 rows of ~500 bytes need several chunks"
    );
    let mut expected_scn = 100;
    for (n, record) in (0u32..).zip(&records) {
        assert_eq!(record.topic, TOPIC);
        let value = ChunkValue::decode(record.value.as_ref().unwrap()).unwrap();
        assert_eq!(value.header.key.chunk, n);
        assert_eq!(value.header.key.generation, 4);
        assert_eq!(value.header.key.capture, "sales/orders");
        assert!(
            record.value.as_ref().unwrap().len() <= 2000 + 600,
            "near the limit"
        );
        for row in value.rows {
            assert_eq!(row.scn, expected_scn);
            expected_scn += 1;
        }
        let key_text = record.key.as_ref().unwrap();
        assert_eq!(ChunkKey::decode(key_text).unwrap(), value.header.key);
    }
    assert_eq!(expected_scn, 130);
    assert_eq!(journal.restart_scn(&key, 100), 129);
    assert!(journal.is_journaled(&key));

    let next = journal.write(&key, &rows(&key, 130..131)).unwrap();
    let value = ChunkValue::decode(next[0].value.as_ref().unwrap()).unwrap();
    assert_eq!(value.header.key.chunk as usize, records.len());
    assert_eq!(journal.restart_scn(&key, 100), 130);

    let tombstones = journal.forget(&key);
    assert_eq!(tombstones.len(), records.len() + 1);
    assert!(
        tombstones
            .iter()
            .all(|t| t.value.is_none() && t.topic == TOPIC)
    );
    assert_eq!(tombstones[0].key, records[0].key);
    assert!(!journal.is_journaled(&key));
    assert!(journal.forget(&key).is_empty());
}

#[test]
fn rebuild_reproduces_open_transactions_and_drops_rows_from_the_resume_point() {
    let (a, b) = (tx(1), tx(2));
    let mut log = Log::default();
    let mut journal = Journal::new(settings(1500), &capture(), 3);
    log.append(journal.write(&a, &rows(&a, 100..110)).unwrap());
    log.append(journal.write(&b, &rows(&b, 105..108)).unwrap());
    log.append(journal.write(&a, &rows(&a, 110..115)).unwrap());
    // The bookmark's restart is the lowest pin: b's last journaled row.
    let restart = journal
        .restart_scn(&a, 100)
        .min(journal.restart_scn(&b, 105));
    assert_eq!(restart, 107);

    let rebuilt = log.rebuild(Some(&bookmark(restart, 3))).unwrap();
    assert!(rebuilt.stale.is_empty());
    assert_eq!(rebuilt.journal.generation(), 4);
    assert_eq!(rebuilt.transactions.len(), 2);
    let [ra, rb] = rebuilt.transactions.as_slice() else {
        panic!()
    };
    assert_eq!((ra.key.clone(), rb.key.clone()), (a.clone(), b.clone()));
    assert_eq!(scns(ra), (100..107).collect::<Vec<_>>());
    assert_eq!(scns(rb), [105, 106]);
    assert_eq!(ra.rows[0], row(&a, 100), "rows come back whole");
    assert_eq!(rebuilt.journal.restart_scn(&a, 100), restart);
}

#[test]
fn re_mined_rows_are_not_held_twice_after_a_second_restart() {
    let a = tx(1);
    let mut log = Log::default();
    let mut first = Journal::new(settings(100_000), &capture(), 1);
    log.append(first.write(&a, &rows(&a, 100..110)).unwrap());
    // Another transaction held the restart back to 105: 105..110 are mined again.
    let rebuilt = log.rebuild(Some(&bookmark(105, 1))).unwrap();
    let mut second = rebuilt.journal;
    assert_eq!(
        scns(&rebuilt.transactions[0]),
        (100..105).collect::<Vec<_>>()
    );
    log.append(second.write(&a, &rows(&a, 105..112)).unwrap());
    let restart = second.restart_scn(&a, 100);
    assert_eq!(restart, 111);

    let again = log
        .rebuild(Some(&bookmark(restart, second.generation())))
        .unwrap();
    assert_eq!(scns(&again.transactions[0]), (100..111).collect::<Vec<_>>());
}

#[test]
fn chunks_of_a_newer_generation_are_tombstoned() {
    let (a, b) = (tx(1), tx(2));
    let mut log = Log::default();
    let mut committed = Journal::new(settings(100_000), &capture(), 5);
    log.append(committed.write(&a, &rows(&a, 100..103)).unwrap());
    // A start with generation 6 wrote chunks but never a bookmark.
    let mut uncommitted = Journal::new(settings(100_000), &capture(), 6);
    let orphaned = uncommitted.write(&b, &rows(&b, 104..106)).unwrap();
    log.append(orphaned.clone());

    // a is open: the bookmark's restart is at most its last journaled row.
    let rebuilt = log.rebuild(Some(&bookmark(102, 5))).unwrap();
    assert_eq!(rebuilt.transactions.len(), 1);
    assert_eq!(rebuilt.transactions[0].key, a);
    assert_eq!(rebuilt.stale.len(), 1);
    assert_eq!(rebuilt.stale[0].key, orphaned[0].key);
    assert_eq!(rebuilt.stale[0].value, None);
    assert_eq!(
        rebuilt.journal.generation(),
        7,
        "above every generation seen"
    );

    // Without a bookmark nothing was committed: every chunk is stale.
    let fresh = log.rebuild(None).unwrap();
    assert!(fresh.transactions.is_empty());
    assert_eq!(fresh.stale.len(), 2);
}

#[test]
fn tombstones_remove_a_transaction_and_other_captures_are_ignored() {
    let (a, b) = (tx(1), tx(2));
    let mut log = Log::default();
    let mut journal = Journal::new(settings(100_000), &capture(), 1);
    log.append(journal.write(&a, &rows(&a, 100..103)).unwrap());
    log.append(journal.write(&b, &rows(&b, 101..102)).unwrap());
    log.append(journal.forget(&a));
    let mut other = Journal::new(settings(100_000), &CaptureIdentity::new("hr", "staff"), 9);
    log.append(other.write(&a, &rows(&a, 1..2)).unwrap());

    // b is open: the bookmark's restart is at most its pin.
    let rebuilt = log.rebuild(Some(&bookmark(101, 1))).unwrap();
    assert_eq!(rebuilt.transactions.len(), 1);
    assert_eq!(rebuilt.transactions[0].key, b);
    assert_eq!(
        rebuilt.journal.generation(),
        2,
        "other captures' generations do not count"
    );
}

#[test]
fn a_gap_in_chunk_numbers_is_cdc_4002() {
    let a = tx(1);
    let mut log = Log::default();
    let mut journal = Journal::new(settings(600), &capture(), 1);
    let mut chunks = journal.write(&a, &rows(&a, 100..110)).unwrap();
    assert!(chunks.len() >= 3);
    chunks.remove(1);
    log.append(chunks);
    let stop = log.rebuild(Some(&bookmark(200, 1))).unwrap_err();
    assert_eq!(stop.code, StopCode::JournalGap);
    assert_eq!(stop.details["missingChunk"], 1);
    assert_eq!(stop.details["xid"], a.xid.to_upper_hex());
    assert!(stop.message.contains("lacks chunk 1"), "{stop}");
}

#[test]
fn unreadable_journal_records_are_cdc_5002() {
    let mut replay = JournalReplay::new(TOPIC, &capture());
    let stop = replay
        .add(TopicRecord {
            partition: 0,
            offset: 9,
            key: Some(b"garbage".to_vec()),
            value: Some(b"{}".to_vec()),
        })
        .unwrap_err();
    assert_eq!(stop.code, StopCode::BookmarkUnreadable);
    assert!(stop.message.contains("sales.cdc.txjournal/0 offset 9"));

    let a = tx(1);
    let mut log = Log::default();
    let mut journal = Journal::new(settings(100_000), &capture(), 1);
    let mut chunks = journal.write(&a, &rows(&a, 1..3)).unwrap();
    chunks[0].value = Some("{\"not\":\"a chunk\"}".into());
    log.append(chunks);
    let stop = log.rebuild(Some(&bookmark(200, 1))).unwrap_err();
    assert_eq!(stop.code, StopCode::BookmarkUnreadable);
}

proptest! {
    /// Whatever the chunk size and however the history is cut into steps, the rebuild returns
    /// exactly the rows below the restart point, in order, once each.
    #[test]
    fn rebuild_returns_exactly_the_rows_below_the_restart(
        steps in proptest::collection::vec(1u64..6, 1..8),
        chunk_max_bytes in 300usize..3000,
        restart_back in 0u64..10,
    ) {
        let a = tx(1);
        let mut log = Log::default();
        let mut journal = Journal::new(settings(chunk_max_bytes), &capture(), 1);
        let mut scn = 100;
        for step in &steps {
            log.append(journal.write(&a, &rows(&a, scn..scn + step)).unwrap());
            scn += step;
        }
        let restart = journal.restart_scn(&a, 100).saturating_sub(restart_back).max(100);
        let rebuilt = log.rebuild(Some(&bookmark(restart, 1))).unwrap();
        prop_assert_eq!(scns(&rebuilt.transactions[0]), (100..restart).collect::<Vec<_>>());
    }
}

/// At least once, a crash after a bookmark but before the tombstones of a committed journaled
/// transaction leaves its chunks live. The bookmark's restart SCN lies above every row it
/// journaled (an open one would pin it): it is not rebuilt as open, and its chunks are tombstoned.
#[test]
fn a_transaction_that_ended_before_the_bookmark_is_not_rebuilt() {
    let (a, b) = (tx(1), tx(2));
    let mut log = Log::default();
    let mut journal = Journal::new(settings(1500), &capture(), 2);
    let ended = journal.write(&a, &rows(&a, 100..120)).unwrap();
    log.append(ended.clone());
    log.append(journal.write(&b, &rows(&b, 130..135)).unwrap());
    // a committed at 125; b, still open, pins the restart at its last journaled row.
    let restart = journal.restart_scn(&b, 130);
    assert_eq!(restart, 134);

    let rebuilt = log.rebuild(Some(&bookmark(restart, 2))).unwrap();
    assert_eq!(rebuilt.transactions.len(), 1, "only the open one");
    assert_eq!(rebuilt.transactions[0].key, b);
    assert_eq!(
        scns(&rebuilt.transactions[0]),
        (130..134).collect::<Vec<_>>()
    );
    let mut tombstoned: Vec<_> = rebuilt.stale.iter().map(|r| r.key.clone()).collect();
    let mut expected: Vec<_> = ended.iter().map(|r| r.key.clone()).collect();
    tombstoned.sort();
    expected.sort();
    assert_eq!(tombstoned, expected, "every chunk of the ended transaction");
    assert!(rebuilt.stale.iter().all(|r| r.value.is_none()));
    assert_eq!(rebuilt.journal.restart_scn(&a, 100), 100, "forgotten");
}
