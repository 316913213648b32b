//! Incremental snapshots while streaming: between mining windows, one chunk of the request being
//! read (`snapshot::incremental`), placed in the stream where it was read.
//!
//! Where a chunk goes: after a window, mining has given the buffer every row below `next_scn`,
//! and a transaction is emitted the moment its COMMIT row reaches the buffer, so every
//! transaction committed at or below S = `next_scn - 1` has been written (the pages up to here
//! are committed) and none committed above S has. The chunk is read `AS OF SCN` S and written
//! now, in a page of its own whose bookmark carries its progress: consumers see the rows as the
//! table was at S, after every change committed at or below S and before every later one.
//! Transactions open at S commit above it and are emitted later, after the chunk, as their
//! changes are not in it. A window cut at a DDL or a stop resumes at the cut's SCN and counts as
//! mined only below it, so S stays below rows not yet mined there too. Nothing is written to the
//! database, so this works for `mining.readOnly` users and on standbys.
//!
//! Chunks: a table's first chunk plans them all (`FlashbackReader::table_chunks`: ROWID ranges
//! of its extents of about `snapshot.fetchSize` rows by the statistics, or key ranges of an
//! index-organised table); the plan travels in the bookmark until the table is done, so a
//! restart reads the same chunks, and each chunk is one bounded range read
//! (`flashback_range`). Rows inserted into extents added after the plan are streamed as inserts
//! after the chunk that preceded them, which is all a consumer needs.
//!
//! Pacing: at most one chunk per window or idle poll, so a window waits at most one chunk's
//! read and write for a snapshot, however large the table.

use std::sync::Arc;

use jiff::Timestamp;
use redoline_crds::v1alpha1::TablesAdded;

use super::Engine;
use crate::config::validate::split_table_name;
use crate::error::CaptureError;
use crate::event::{ChangeEvent, Operation, SnapshotMarker, SourceInfo};
use crate::snapshot::incremental::{IncrementalState, NextChunk, Transition};
use crate::source::{OracleSource, SourceError};

/// `OWNER.TABLE` of a captured table as the dictionary names it.
fn qualified((owner, table): &(String, String)) -> String {
    format!("{owner}.{table}")
}

impl<S: OracleSource> Engine<S> {
    /// The captured tables, qualified as requests name them.
    fn captured_names(&self) -> Vec<String> {
        self.pipeline
            .tables()
            .names()
            .iter()
            .map(qualified)
            .collect()
    }

    /// Whether a table that joins is read (`snapshot.tablesAdded: snapshot`).
    fn snapshot_added(&self) -> bool {
        self.pipeline.config().snapshot.tables_added == TablesAdded::Snapshot
    }

    /// At the start of streaming: the bookmark's incremental state (a first one knows every
    /// table captured now), brought in line with `spec.snapshot.requests` and the tables
    /// captured now, and committed so the status and a restart agree.
    pub(super) fn start_incremental(&mut self) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        let captured = self.captured_names();
        // The requests in force, which the config file may have changed since the process began.
        let (generation, requests) = self.options.requests.current();
        self.requests_generation = generation;
        self.pipeline.set_snapshot_requests(requests.clone());
        let snapshot_added = self.snapshot_added();
        let transitions = (self.pipeline).open_incremental(
            captured,
            &requests,
            now,
            self.next_scn,
            snapshot_added,
        );
        log_transitions(&transitions);
        if !transitions.is_empty() {
            self.pipeline.commit_bookmark()?;
        }
        self.show_incremental();
        Ok(())
    }

    /// At a window boundary: when the config file changed `snapshot.requests` since they were
    /// last applied (`live_config`), the queue is reconciled with them as at start (a new id
    /// queued, a removed queued or running one cancelled, a finished one left finished) and the
    /// result committed at once, so the status and a restart agree with it. A request is
    /// recorded as running in the page of its first chunk, as at start.
    pub(super) fn apply_live_requests(&mut self) -> Result<(), CaptureError> {
        let (generation, requests) = self.options.requests.current();
        if generation == self.requests_generation {
            return Ok(());
        }
        self.requests_generation = generation;
        self.pipeline.set_snapshot_requests(requests.clone());
        let transitions = self
            .pipeline
            .reconcile_requests(&requests, Timestamp::now());
        log_transitions(&transitions);
        if !transitions.is_empty() {
            self.pipeline.commit_bookmark()?;
        }
        // The statuses follow the spec's list (a finished request shows while listed).
        self.show_incremental();
        Ok(())
    }

    /// After a listing of the catalog captured new tables: a request for them
    /// (`snapshot.tablesAdded: snapshot`), committed with the next page.
    pub(super) fn incremental_tables_joined(&mut self) {
        let captured = self.captured_names();
        let snapshot_added = self.snapshot_added();
        let joined =
            (self.pipeline).incremental_tables_joined(captured, self.next_scn, snapshot_added);
        if let Some(transition) = joined {
            log_transitions(&[transition]);
            self.pipeline.bookmark_changed();
            self.show_incremental();
        }
    }

    /// Reads and writes the next chunk, if a request is queued; whether one was read.
    pub(super) fn incremental_chunk(&mut self) -> Result<bool, CaptureError> {
        let Some(chunk) =
            (self.pipeline.bookmark().incremental.as_ref()).and_then(IncrementalState::next_chunk)
        else {
            return Ok(false);
        };
        // A joined table's rows written before it joined by a transaction still open are in no
        // chunk yet and were never mined: read after that transaction ends (`waits_for`).
        if chunk.waits_for(self.pipeline.oldest_open_scn()) {
            return Ok(false);
        }
        // S: every transaction committed at or below it is written, none above it (module doc).
        let scn = self.next_scn.saturating_sub(1);
        let Some((owner, table)) = split_table_name(&chunk.table) else {
            self.fail_request(&chunk, format!("{} is not OWNER.TABLE", chunk.table))?;
            return Ok(true);
        };
        let Some(schema) = self.pipeline.table_at(&owner, &table, scn) else {
            // Captured, but with no structure in force at S yet (it joined at an SCN above
            // it): read after the next window.
            if self.pipeline.tables().names().contains(&(owner, table)) {
                return Ok(false);
            }
            self.fail_request(
                &chunk,
                format!(
                    "{} is not a captured table (list it in spec.tables or choose it with \
                     spec.filters)",
                    chunk.table
                ),
            )?;
            return Ok(true);
        };
        let condition = self.chunk_condition(&chunk);
        let range = match chunk.range.clone() {
            Some(range) => range,
            None => {
                // The table's first chunk: its chunks are planned now (its extents, or its key
                // ranges), kept in the bookmark with this chunk, and read one by one.
                let rows_per_chunk = u64::from(self.pipeline.config().snapshot.fetch_size).max(1);
                let ranges = match self.source.table_chunks(&schema, rows_per_chunk) {
                    Ok(ranges) => ranges,
                    Err(error @ SourceError::Database { .. }) => {
                        self.fail_request(
                            &chunk,
                            format!("planning {} failed: {error}", chunk.table),
                        )?;
                        return Ok(true);
                    }
                    Err(error) => return Err(error.into()),
                };
                let now = Timestamp::now();
                let Some((transitions, first)) = self.pipeline.plan_chunks(&chunk, ranges, now)
                else {
                    return Ok(false);
                };
                log_transitions(&transitions);
                let Some(first) = first else {
                    // No chunk (a table without a segment): done, committed at once.
                    self.pipeline.commit_bookmark()?;
                    self.show_incremental();
                    return Ok(true);
                };
                first
            }
        };
        let read = self
            .source
            .flashback_range(&schema, scn, &range, condition.as_deref());
        let rows = match read {
            Ok(rows) => rows,
            // The chunk's undo is gone (ORA-01555) or the table is younger than S (ORA-01466):
            // nothing of it was written, so the next window reads it at its own, later S.
            Err(error @ SourceError::SnapshotTooOld { .. }) => {
                tracing::warn!(%error, request = %chunk.id, table = %chunk.table, scn,
                    "the chunk cannot be read as of its SCN; reading it after the next window");
                return Ok(false);
            }
            Err(SourceError::Database { code, message, .. })
                if code.as_deref() == Some("ORA-01466") =>
            {
                tracing::info!(%message, request = %chunk.id, table = %chunk.table, scn,
                    "the table is younger than the chunk's SCN; reading it after the next window");
                return Ok(false);
            }
            // Most likely the request's condition, or a table gone: retrying cannot help.
            Err(error @ SourceError::Database { .. }) => {
                self.fail_request(&chunk, format!("reading {} failed: {error}", chunk.table))?;
                return Ok(true);
            }
            Err(error) => return Err(error.into()),
        };
        let read_at = Timestamp::now();
        for row in &rows {
            let event = ChangeEvent {
                op: Operation::Read,
                table: Arc::clone(&schema),
                before: None,
                after: Some(row.values.clone()),
                // As Debezium fills an incremental snapshot's read, with the SCN it is read at.
                source: SourceInfo {
                    scn,
                    change_time: Some(read_at),
                    snapshot: SnapshotMarker::Incremental,
                    ..SourceInfo::default()
                },
            };
            self.pipeline.write_read_event(&event, read_at)?;
        }
        // The chunk just read: the first one's index and table, whether planned just now.
        let read = NextChunk {
            range: Some(range),
            ..chunk
        };
        let transitions = (self.pipeline).record_chunk(&read, rows.len() as u64, read_at);
        log_transitions(&transitions);
        // The rows and the progress they make, in one page (one Kafka transaction).
        self.pipeline.commit_bookmark()?;
        self.show_incremental();
        Ok(true)
    }

    /// The request's condition AND-ed with the table's `snapshot.selectOverrides` one.
    fn chunk_condition(&self, chunk: &NextChunk) -> Option<String> {
        let table = split_table_name(&chunk.table);
        let overridden = self
            .pipeline
            .config()
            .snapshot
            .select_overrides
            .iter()
            .find(|(name, _)| split_table_name(name) == table)
            .map(|(_, condition)| condition.clone());
        match (chunk.condition.clone(), overridden) {
            (Some(asked), Some(overridden)) => Some(format!("({asked}) AND ({overridden})")),
            (asked, overridden) => asked.or(overridden),
        }
    }

    /// Ends request `chunk.id` as failed, committed at once.
    fn fail_request(&mut self, chunk: &NextChunk, message: String) -> Result<(), CaptureError> {
        tracing::warn!(request = %chunk.id, table = %chunk.table, %message,
            "an incremental snapshot failed");
        let failed = (self.pipeline).fail_request(&chunk.id, message, Timestamp::now());
        log_transitions(&failed.into_iter().collect::<Vec<_>>());
        self.pipeline.commit_bookmark()?;
        self.show_incremental();
        Ok(())
    }

    /// `status.snapshot.requests` on `/status`, with each queued table's row estimate (read
    /// once per table and run).
    fn show_incremental(&mut self) {
        let Some(state) = self.pipeline.bookmark().incremental.as_ref() else {
            return;
        };
        for request in &state.queue {
            for table in &request.tables {
                if self.row_estimates.contains_key(&table.table) {
                    continue;
                }
                let estimate = split_table_name(&table.table).and_then(|(owner, name)| {
                    self.source
                        .row_estimate(&owner, &name)
                        .unwrap_or_else(|error| {
                            tracing::debug!(%error, table = %table.table, "no row estimate");
                            None
                        })
                });
                self.row_estimates.insert(table.table.clone(), estimate);
            }
        }
        let estimates = &self.row_estimates;
        let shown = state.statuses(&self.pipeline.config().snapshot.requests, |table| {
            estimates.get(table).copied().flatten()
        });
        self.board.update(Timestamp::now(), |report| {
            report.snapshot.requests = shown;
        });
    }
}

fn log_transitions(transitions: &[Transition]) {
    for transition in transitions {
        tracing::info!(request = %transition.id, state = ?transition.state,
            "incremental snapshot");
    }
}
