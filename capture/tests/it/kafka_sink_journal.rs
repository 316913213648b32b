#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The journal of long transactions on the real broker: chunks commit inside the page's Kafka
//! transaction, a restart rebuilds the open transactions from the topic (rows from the resume
//! point on dropped), tombstones at COMMIT remove a transaction, chunks of a generation that
//! never committed a bookmark are tombstoned, and a chunk gap stops with CDC-4002.

use std::sync::Arc;

use anyhow::{Result, bail};
use redoline_capture::event::Record;
use redoline_capture::sink::journal::{Journal, JournalSettings, Rebuilt, TxKey, read_journal};
use redoline_capture::sink::{Bookmark, DeliveryMode, KafkaSink, SinkOptions};
use redoline_capture::source::{LogMinerRow, Xid, fixtures};
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::JournalSpec;
use redoline_testenv::kafka::KafkaEnv;

use crate::kafka_support;
use kafka_support::sink::{
    create_data_topic, data_records, open, read_committed, sink_options, write_page,
};

fn settings(options: &SinkOptions) -> JournalSettings {
    JournalSettings::from_spec(&JournalSpec::default(), &options.topics.journal).unwrap()
}

fn tx(n: u32) -> TxKey {
    TxKey {
        container: Some("SALESPDB".into()),
        xid: Xid::from_parts(5, 6, n),
    }
}

fn rows(key: &TxKey, scns: std::ops::Range<u64>) -> Vec<LogMinerRow> {
    scns.map(|scn| LogMinerRow {
        src_con_name: key.container.as_deref().map(Arc::from),
        ..fixtures::insert(key.xid, scn)
    })
    .collect()
}

/// A "restart": a new sink, the bookmark and the journal read back.
fn restart(options: &SinkOptions) -> Result<(KafkaSink, Option<Bookmark>, Rebuilt)> {
    let sink = open(options)?;
    let bookmark = sink.read_bookmark()?;
    let rebuilt = read_journal(&sink, bookmark.as_ref(), settings(options))?;
    Ok((sink, bookmark, rebuilt))
}

fn bookmark(commit_scn: u64, restart_scn: u64, journal: &Journal) -> Bookmark {
    let mut bookmark = Bookmark::initial(100, 1, None, journal.generation());
    bookmark.commit_scn = commit_scn;
    bookmark.restart_scn = restart_scn;
    bookmark
}

fn commit(
    sink: &KafkaSink,
    records: Vec<Record>,
    after_bookmark: Vec<Record>,
    bookmark: &Bookmark,
) -> Result<()> {
    let receipt = write_page(sink, &records, after_bookmark, bookmark)?;
    assert_eq!(receipt.commit_scn, bookmark.commit_scn);
    Ok(())
}

fn scns(rebuilt: &Rebuilt, key: &TxKey) -> Vec<u64> {
    let found = rebuilt.transactions.iter().find(|t| &t.key == key);
    found.map_or_else(Vec::new, |t| t.rows.iter().map(|r| r.scn).collect())
}

#[test]
fn journaled_transactions_survive_restarts_until_their_commit() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-journal");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    let data = format!("{prefix}.APP.ORDERS");
    let (sink, none, rebuilt) = restart(&options)?;
    create_data_topic(&options, &data)?;
    assert!(none.is_none() && rebuilt.transactions.is_empty() && rebuilt.stale.is_empty());
    let mut journal = rebuilt.journal;
    assert_eq!(journal.generation(), 1);

    let (a, b) = (tx(1), tx(2));
    let mut chunks = journal.write(&a, &rows(&a, 100..120))?;
    chunks.extend(journal.write(&b, &rows(&b, 110..115))?);
    let restart_scn = journal
        .restart_scn(&a, 100)
        .min(journal.restart_scn(&b, 110));
    assert_eq!(restart_scn, 114);
    commit(
        &sink,
        chunks,
        Vec::new(),
        &bookmark(99, restart_scn, &journal),
    )?;

    // An aborted page's chunks never count: this one fails on an oversized record.
    let mut lost = journal.clone();
    let mut aborted = lost.write(&b, &rows(&b, 115..118))?;
    aborted.push(Record {
        topic: data.clone(),
        key: None,
        value: Some(vec![b'x'; 2_000_000]),
    });
    assert!(write_page(&sink, &aborted, Vec::new(), &bookmark(99, 117, &lost)).is_err());
    drop(sink);

    let (sink, found, rebuilt) = restart(&options)?;
    assert_eq!(found.map(|b| b.restart_scn), Some(114));
    assert_eq!(rebuilt.journal.generation(), 2);
    assert!(rebuilt.stale.is_empty());
    assert_eq!(scns(&rebuilt, &a), (100..114).collect::<Vec<_>>());
    assert_eq!(scns(&rebuilt, &b), (110..114).collect::<Vec<_>>());
    let mut journal = rebuilt.journal;

    // a commits: its events and one tombstone per chunk in the same page.
    let tombstones = journal.forget(&a);
    assert!(!tombstones.is_empty());
    let mut events = data_records(&data, "a", 2);
    events.extend(journal.write(&b, &rows(&b, 114..116))?);
    commit(
        &sink,
        events,
        tombstones,
        &bookmark(130, journal.restart_scn(&b, 110), &journal),
    )?;
    drop(sink);

    let (_sink, found, rebuilt) = restart(&options)?;
    assert_eq!(
        found.map(|b| (b.restart_scn, b.journal_generation)),
        Some((115, 2))
    );
    assert_eq!(
        rebuilt.transactions.len(),
        1,
        "a is gone: {:?}",
        rebuilt.transactions
    );
    assert_eq!(scns(&rebuilt, &b), (110..115).collect::<Vec<_>>());
    assert_eq!(rebuilt.journal.generation(), 3);
    assert_eq!(read_committed(&options, &data)?.len(), 2);
    Ok(())
}

#[test]
fn chunks_of_a_start_without_bookmark_are_tombstoned_and_a_gap_is_cdc_4002() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-journal-gen");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    let (sink, _, rebuilt) = restart(&options)?;
    let mut committed = rebuilt.journal;
    let (a, b) = (tx(1), tx(2));
    let chunks = committed.write(&a, &rows(&a, 100..105))?;
    commit(&sink, chunks, Vec::new(), &bookmark(99, 104, &committed))?;

    // A later start (generation 2) journaled b, but its bookmark kept generation 1: as if it
    // had written at least once and died before its bookmark.
    let mut uncommitted = Journal::new(settings(&options), &options.identity, 2);
    let orphaned = uncommitted.write(&b, &rows(&b, 103..106))?;
    commit(&sink, orphaned, Vec::new(), &bookmark(99, 104, &committed))?;
    drop(sink);

    let (sink, _, rebuilt) = restart(&options)?;
    assert_eq!(rebuilt.stale.len(), 1);
    assert_eq!(scns(&rebuilt, &a), (100..104).collect::<Vec<_>>());
    assert!(scns(&rebuilt, &b).is_empty());
    assert_eq!(rebuilt.journal.generation(), 3);
    // The first page of the new start carries the stale tombstones and the new generation.
    commit(
        &sink,
        rebuilt.stale,
        Vec::new(),
        &bookmark(99, 104, &rebuilt.journal),
    )?;
    drop(sink);
    let (sink, _, rebuilt) = restart(&options)?;
    assert!(rebuilt.stale.is_empty());
    assert_eq!(rebuilt.transactions.len(), 1);

    // A chunk gap: c's chunk 1 never reached the topic.
    let c = tx(3);
    let mut journal = Journal::new(
        JournalSettings {
            chunk_max_bytes: 2_000,
            ..settings(&options)
        },
        &options.identity,
        rebuilt.journal.generation(),
    );
    let mut chunks = journal.write(&c, &rows(&c, 200..400))?;
    assert!(chunks.len() > 2);
    chunks.remove(1);
    commit(&sink, chunks, Vec::new(), &bookmark(99, 104, &journal))?;
    drop(sink);

    let sink = open(&options)?;
    let bookmark = sink.read_bookmark()?;
    let Err(error) = read_journal(&sink, bookmark.as_ref(), settings(&options)) else {
        bail!("a journal with a chunk gap was rebuilt");
    };
    let stop = error.stop().expect("a gap is a typed stop");
    assert_eq!(stop.code, StopCode::JournalGap, "{error}");
    assert_eq!(stop.details["missingChunk"], 1);
    assert_eq!(stop.details["xid"], c.xid.to_upper_hex());
    Ok(())
}
