//! The initial snapshot's driving loop; its rules are the pure `crate::snapshot`, the procedure
//! and its guarantees are in `docs/snapshot.md`.
//!
//! ```text
//! start:    snapshot.mode × stored bookmark → position (Engine::position)
//!           new snapshot: S = current SCN, restart SCN = oldest open transaction's start,
//!           bookmark commit SCN = S + 1 (only transactions committed after S stream);
//!           the open transactions must be readable (else retried / stopped)
//! snapshot: per table, its plan of chunks (ROWID ranges of its extents, key ranges for an IOT),
//!           stored in the bookmark; per chunk AS OF the table's SCN (maxThreads readers read
//!           the next chunks at once, written in chunk order):
//!           `r` events → page → bookmark with the progress (table, chunks done, rows)
//!           a bookmark of a snapshot begun before chunks: batches after its last ROWID
//!           ORA-01555 → the table again from its start at the current SCN, with a warning
//! then:     stream from the restart SCN, or (initial_only) idle
//! ```
//!
//! A page's last row is the table's last (its marker) when no later chunk has a row: the next
//! chunk with a row is read before the page is written and kept for the next page. (A batch of
//! an old bookmark reads one row more than it writes, for the same reason.)

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use jiff::Timestamp;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{SnapshotMode, StartPosition};

use super::start::FreshPosition;
use super::{Engine, Finish, to_gauge};
use crate::config::CaptureConfig;
use crate::config::validate::split_table_name;
use crate::dictionary::TableSchema;
use crate::error::CaptureError;
use crate::event::{ChangeEvent, Operation, SourceInfo};
use crate::http::CaptureState;
use crate::sink::Bookmark;
use crate::snapshot::{BatchEnd, RowPlace, SnapshotState, StartAction, Stored, decide, marker};
use crate::source::{FlashbackReader, FlashbackRow, OracleSource, RowRange, SourceError};
use crate::stop::Stop;

/// What a run does before streaming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SnapshotPhase {
    /// Stream at once.
    None,
    /// Read (or go on reading) the snapshot the bookmark records, then stream.
    Read,
    /// `initial_only`: read the snapshot if it is not complete, then neither stream nor
    /// snapshot again.
    ReadThenIdle,
}

/// A table of the snapshot: its dictionary and its `selectOverrides` condition.
struct SnapshotTable {
    schema: Arc<TableSchema>,
    condition: Option<String>,
}

/// What reading the snapshot keeps between pages.
struct Reading {
    tables: Vec<SnapshotTable>,
    /// Each table's estimated rows, for the progress shown.
    estimates: Vec<Option<u64>>,
    /// `snapshot.fetchSize`: rows per batch, and the rows a chunk is planned to hold.
    fetch_size: usize,
    /// Chunks read ahead, not written yet, in chunk order: `(table, chunk, rows)`.
    fetched: VecDeque<(usize, u32, Vec<FlashbackRow>)>,
    /// The parallel readers (`snapshot.maxThreads` > 1), each on a session of its own; empty
    /// when chunks are read on the engine's own source.
    readers: Vec<Box<dyn FlashbackReader + Send>>,
}

/// Why a read of the snapshot failed: the source (which [`Engine::read_failed`] judges), or
/// the capture's own writing.
enum Failure {
    Source(SourceError),
    Capture(CaptureError),
}

impl<S: OracleSource> Engine<S> {
    /// Where the run starts: the stored bookmark, a new snapshot, or the start position.
    pub(super) fn position(
        config: &CaptureConfig,
        table_names: &[(String, String)],
        source: &mut S,
        stored: Option<Bookmark>,
        resetlogs_scn: u64,
        pdb_incarnation: Option<u64>,
    ) -> Result<(Bookmark, SnapshotPhase), CaptureError> {
        let mode = config.snapshot.mode;
        if mode == SnapshotMode::SchemaOnly {
            tracing::warn!(
                "snapshot.mode schema_only is the old name of no_data (as in Debezium); it is \
                 read as no_data: set no_data instead"
            );
        }
        let redo_missing = match &stored {
            Some(bookmark) if mode == SnapshotMode::WhenNeeded => {
                match source.logs_covering(bookmark.restart_scn) {
                    Ok(_) => false,
                    Err(error @ SourceError::RedoMissing { .. }) => {
                        tracing::warn!(
                            %error,
                            restart_scn = bookmark.restart_scn,
                            "the bookmark's redo is gone: snapshot.mode when_needed takes a new \
                             snapshot instead of stopping"
                        );
                        true
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            _ => false,
        };
        let action = decide(
            mode,
            match &stored {
                None => Stored::Nothing,
                Some(bookmark) => Stored::Bookmark {
                    snapshot: bookmark.snapshot.as_ref(),
                    redo_missing,
                },
            },
        );
        let idle_after = mode == SnapshotMode::InitialOnly;
        let read = if idle_after {
            SnapshotPhase::ReadThenIdle
        } else {
            SnapshotPhase::Read
        };
        Ok(match (action, stored) {
            (StartAction::Snapshot, previous) => {
                // Unlike `startPosition: current`, a snapshot cannot do without the open
                // transactions (an error here is retried or stops the run): one open at S that
                // commits later would lose its changes made before S.
                let position = FreshPosition::read(source)?;
                let scn = position.scn;
                // Only commits after S stream; mining starts at the oldest open transaction.
                let mut bookmark =
                    Bookmark::initial(scn.saturating_add(1), resetlogs_scn, pdb_incarnation, 0);
                bookmark.restart_scn = position.restart_scn;
                bookmark.snapshot = Some(SnapshotState::new(
                    scn,
                    table_names
                        .iter()
                        .map(|(owner, table)| format!("{owner}.{table}")),
                ));
                if let Some(previous) = previous {
                    // The journal and the ledger of dropped transactions outlive a position.
                    bookmark.journal_generation = previous.journal_generation;
                    bookmark.released = previous.released;
                }
                tracing::info!(
                    scn,
                    restart_scn = bookmark.restart_scn,
                    "a new snapshot starts"
                );
                (bookmark, read)
            }
            (StartAction::Resume, Some(bookmark)) => {
                tracing::info!(
                    scn = bookmark.snapshot.as_ref().map(|s| s.scn),
                    "the snapshot in progress goes on from its last committed batch"
                );
                (bookmark, read)
            }
            (StartAction::Idle, Some(bookmark)) => (bookmark, SnapshotPhase::ReadThenIdle),
            (StartAction::StreamFromCurrent, _) => (
                Self::anchor(
                    &StartPosition::default(),
                    source,
                    resetlogs_scn,
                    pdb_incarnation,
                )?,
                SnapshotPhase::None,
            ),
            (_, Some(bookmark)) => (bookmark, SnapshotPhase::None),
            (_, None) => (
                Self::anchor(
                    &config.start_position,
                    source,
                    resetlogs_scn,
                    pdb_incarnation,
                )?,
                SnapshotPhase::None,
            ),
        })
    }

    /// Runs the snapshot phase; `Some` ends the run there (a stop request, or `initial_only`).
    pub(super) fn before_streaming(&mut self) -> Result<Option<Finish>, CaptureError> {
        if self.snapshot_phase == SnapshotPhase::None {
            return Ok(None);
        }
        if let Some(finish) = self.read_snapshot()? {
            return Ok(Some(finish));
        }
        if self.snapshot_phase == SnapshotPhase::Read {
            return Ok(None);
        }
        self.idle().map(Some)
    }

    /// Reads every table not done; `Some(Stopped)` when asked to stop between batches.
    fn read_snapshot(&mut self) -> Result<Option<Finish>, CaptureError> {
        let Some(mut state) = self.pipeline.bookmark().snapshot.clone() else {
            return Ok(None);
        };
        if state.completed {
            return Ok(None);
        }
        let tables = self.snapshot_tables(&state)?;
        let estimates: Vec<Option<u64>> = tables
            .iter()
            .map(|SnapshotTable { schema, .. }| {
                self.source
                    .row_estimate(schema.schema(), schema.table())
                    .unwrap_or_else(|error| {
                        tracing::warn!(%error, table = %schema.qualified_name(), "no row estimate");
                        None
                    })
            })
            .collect();
        self.show_snapshot(&state, &estimates, CaptureState::Snapshotting);
        let fetch_size = usize::try_from(self.pipeline.config().snapshot.fetch_size)
            .unwrap_or(usize::MAX)
            .max(1);
        let mut reading = Reading {
            tables,
            estimates,
            fetch_size,
            fetched: VecDeque::new(),
            readers: self.parallel_readers()?,
        };
        while let Some(index) = state.current() {
            if self.options.stop.load(Ordering::Relaxed) {
                return Ok(Some(Finish::Stopped));
            }
            let table = &state.tables[index];
            let read = if table.after.is_some() && table.chunks.is_none() {
                // A bookmark of a snapshot begun before chunks: its table goes on in batches
                // after the last ROWID written.
                self.read_batch(&mut state, &reading, index)
            } else {
                self.read_chunk(&mut state, &mut reading, index)
            };
            match read {
                Ok(()) => {}
                Err(Failure::Source(error)) => {
                    reading.fetched.clear();
                    self.read_failed(&mut state, &reading.tables, index, error)?;
                }
                Err(Failure::Capture(error)) => return Err(error),
            }
        }
        tracing::info!(
            scn = state.scn,
            rows = state.progress(&[]).rows_scanned,
            "the snapshot is complete"
        );
        Ok(None)
    }

    /// What a failed read of table `index` means: ORA-01555 reads the table again from its
    /// start at the current SCN; a failure with a `selectOverrides` condition is most likely
    /// the condition's; anything else is the run's error.
    fn read_failed(
        &mut self,
        state: &mut SnapshotState,
        tables: &[SnapshotTable],
        index: usize,
        error: SourceError,
    ) -> Result<(), CaptureError> {
        let table = &state.tables[index];
        match error {
            error @ SourceError::SnapshotTooOld { .. } => {
                let scn = self.source.current_scn()?;
                tracing::warn!(
                    %error,
                    table = %table.table,
                    rows_again = table.rows,
                    new_scn = scn,
                    "the undo for the snapshot SCN is gone (ORA-01555): the table is read \
                     again from its start at a new SCN, so its rows already written appear \
                     again as `r` events; raise UNDO_RETENTION (or the undo tablespace) or \
                     lower snapshot.fetchSize's page time to avoid it"
                );
                state.restart_table(index, scn);
                Ok(())
            }
            error @ SourceError::Database { .. } if tables[index].condition.is_some() => {
                // Most likely the condition itself (ORA-00904, ORA-00920...): retrying
                // cannot help, the operator must fix it.
                Err(Stop::new(
                    StopCode::InvalidConfiguration,
                    format!(
                        "the snapshot query of {} with its snapshot.selectOverrides \
                         condition failed: {error}; fix or remove the condition",
                        table.table
                    ),
                )
                .into())
            }
            error => Err(error.into()),
        }
    }

    /// One batch of a table begun before chunks, after its last ROWID: `fetchSize` rows, and
    /// one more read to tell whether the batch ends the table.
    fn read_batch(
        &mut self,
        state: &mut SnapshotState,
        reading: &Reading,
        index: usize,
    ) -> Result<(), Failure> {
        let fetch_size = reading.fetch_size;
        let SnapshotTable { schema, condition } = &reading.tables[index];
        let table = &state.tables[index];
        let mut batch = self
            .source
            .flashback_batch(
                schema,
                table.scn,
                table.after.as_deref(),
                condition.as_deref(),
                fetch_size.saturating_add(1),
            )
            .map_err(Failure::Source)?;
        let end = if batch.len() > fetch_size {
            batch.truncate(fetch_size);
            BatchEnd::More
        } else {
            BatchEnd::TableDone
        };
        let first_batch = table.rows == 0 && table.after.is_none();
        let empty_after = self.write_rows(state, reading, index, &batch, first_batch, end)?;
        let last_position = batch.last().map(|row| row.position.clone());
        state.record_batch(index, batch.len() as u64, last_position, end);
        self.commit_snapshot(state, reading, empty_after)
            .map_err(Failure::Capture)
    }

    /// The next chunk of table `index` (planning the table first): its rows, and every empty
    /// chunk after it, are written in one page. Reading one non-empty chunk ahead tells
    /// whether this chunk's last row is the table's last (its marker); that chunk is kept for
    /// the next call rather than read again.
    fn read_chunk(
        &mut self,
        state: &mut SnapshotState,
        reading: &mut Reading,
        index: usize,
    ) -> Result<(), Failure> {
        if state.tables[index].chunks.is_none() {
            let schema = &reading.tables[index].schema;
            let rows_per_chunk = reading.fetch_size as u64;
            let plan = self
                .source
                .table_chunks(schema, rows_per_chunk)
                .map_err(Failure::Source)?;
            tracing::info!(
                table = %state.tables[index].table,
                chunks = plan.len(),
                rows_per_chunk,
                "the table is read in chunks"
            );
            state.plan_table(index, plan);
        }
        let first_chunk = state.tables[index].chunks_done.is_empty();
        let Some((next, range)) =
            (state.next_chunk(index)).map(|(next, range)| (next, range.clone()))
        else {
            // No segment, so no chunk: the table is empty.
            let empty_after =
                self.write_rows(state, reading, index, &[], first_chunk, BatchEnd::TableDone)?;
            state.record_chunks(index, 0..0, 0);
            return self
                .commit_snapshot(state, reading, empty_after)
                .map_err(Failure::Capture);
        };
        let mut rows = self
            .chunk_rows(state, reading, index, next, &range)
            .map_err(Failure::Source)?;
        // The chunks after this one up to the next with a row: empty ones are written (as
        // done) with this one; the first with a row is kept for the next call.
        let planned = (state.tables[index].chunks.as_ref()).map_or(0, |plan| plan.len());
        let mut end_chunk = next + 1;
        let mut ahead = false;
        while u64::from(end_chunk) < planned {
            let Some(range) = (state.tables[index].chunks.as_ref())
                .and_then(|plan| plan.get(u64::from(end_chunk)))
                .cloned()
            else {
                break;
            };
            let later = self
                .chunk_rows(state, reading, index, end_chunk, &range)
                .map_err(Failure::Source)?;
            if rows.is_empty() {
                // Nothing written yet in this page: the later chunk's rows join it.
                rows = later;
                end_chunk += 1;
                continue;
            }
            if later.is_empty() {
                end_chunk += 1;
                continue;
            }
            reading.fetched.push_front((index, end_chunk, later));
            ahead = true;
            break;
        }
        let end = if ahead {
            BatchEnd::More
        } else {
            BatchEnd::TableDone
        };
        let empty_after = self.write_rows(state, reading, index, &rows, first_chunk, end)?;
        state.record_chunks(index, next..end_chunk, rows.len() as u64);
        self.commit_snapshot(state, reading, empty_after)
            .map_err(Failure::Capture)
    }

    /// The rows of chunk `chunk` (`range`) of table `index`: read ahead already, or read now,
    /// with the chunks after it when there are parallel readers (one chunk each, on their own
    /// threads; the rows are kept in chunk order, so pages are written as a single reader
    /// writes them).
    fn chunk_rows(
        &mut self,
        state: &SnapshotState,
        reading: &mut Reading,
        index: usize,
        chunk: u32,
        range: &RowRange,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        if let Some(position) = (reading.fetched.iter())
            .position(|(table, fetched, _)| *table == index && *fetched == chunk)
        {
            // Chunks are consumed in order: anything before this one is stale.
            reading.fetched.drain(..position);
            if let Some((_, _, rows)) = reading.fetched.pop_front() {
                return Ok(rows);
            }
        }
        reading.fetched.clear();
        let table = &state.tables[index];
        let SnapshotTable { schema, condition } = &reading.tables[index];
        let condition = condition.as_deref();
        if reading.readers.len() < 2 {
            return self
                .source
                .flashback_range(schema, table.scn, range, condition);
        }
        let later = table
            .chunks
            .as_ref()
            .map_or(&[][..], |plan| plan.chunks_from(u64::from(chunk) + 1));
        let ranges: Vec<&RowRange> = std::iter::once(range)
            .chain(later)
            .take(reading.readers.len())
            .collect();
        let scn = table.scn;
        let results: Vec<Result<Vec<FlashbackRow>, SourceError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (reading.readers.iter_mut())
                .zip(&ranges)
                .map(|(reader, range)| {
                    scope.spawn(move || reader.flashback_range(schema, scn, range, condition))
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        Err(SourceError::Malformed {
                            what: table.table.clone(),
                            message: "a snapshot reader thread panicked".to_owned(),
                        })
                    })
                })
                .collect()
        });
        let mut rows = None;
        for (offset, result) in (0u32..).zip(results) {
            let read = result?;
            if rows.is_none() {
                rows = Some(read);
            } else {
                reading.fetched.push_back((index, chunk + offset, read));
            }
        }
        Ok(rows.unwrap_or_default())
    }

    /// The readers of `snapshot.maxThreads` > 1, each on a session of its own; none (chunks
    /// read on the engine's source) with 1, or when the source cannot open more.
    fn parallel_readers(&mut self) -> Result<Vec<Box<dyn FlashbackReader + Send>>, CaptureError> {
        let wanted = self.pipeline.config().snapshot.max_threads;
        let mut readers = Vec::new();
        if wanted < 2 {
            return Ok(readers);
        }
        for _ in 0..wanted {
            match self.source.parallel_reader()? {
                Some(reader) => readers.push(reader),
                None => {
                    tracing::warn!(
                        max_threads = wanted,
                        "this source reads on one session: the snapshot is read by one reader"
                    );
                    return Ok(Vec::new());
                }
            }
        }
        Ok(readers)
    }

    /// Writes the `r` events of `rows`, read from table `index`; `first` when they are the
    /// table's first, `end` whether the table ends with them. Returns the tables after this one
    /// found empty when the table ends (its last row is then the snapshot's last).
    fn write_rows(
        &mut self,
        state: &SnapshotState,
        reading: &Reading,
        index: usize,
        rows: &[FlashbackRow],
        first: bool,
        end: BatchEnd,
    ) -> Result<Option<Vec<usize>>, Failure> {
        let last_table = state.tables.len().saturating_sub(1);
        let count = rows.len();
        let schema = &reading.tables[index].schema;
        let table_scn = state.tables[index].scn;
        // The tables after this one that turn out empty: this batch's last row is then the
        // snapshot's last, and is marked `last` as Debezium marks the final record whatever
        // table it comes from.
        let empty_after = if end == BatchEnd::TableDone && count > 0 {
            self.empty_tables_after(state, &reading.tables, index)
        } else {
            None
        };
        let read_at = Timestamp::now();
        for (position, row) in rows.iter().enumerate() {
            let place = RowPlace {
                first_table: index == 0,
                last_table: index == last_table || empty_after.is_some(),
                first_in_table: first && position == 0,
                last_in_table: end == BatchEnd::TableDone && position + 1 == count,
            };
            let event = ChangeEvent {
                op: Operation::Read,
                table: Arc::clone(schema),
                before: None,
                after: Some(row.values.clone()),
                // As Debezium fills a snapshot read: the snapshot's SCN, the read time, no
                // transaction, commit SCN or redo address.
                source: SourceInfo {
                    scn: table_scn,
                    change_time: Some(read_at),
                    snapshot: marker(place),
                    ..SourceInfo::default()
                },
            };
            self.pipeline
                .write_read_event(&event, read_at)
                .map_err(Failure::Capture)?;
        }
        Ok(empty_after)
    }

    /// Commits the page written with the snapshot's progress in its bookmark (the tables found
    /// empty after the last recorded as done with it).
    fn commit_snapshot(
        &mut self,
        state: &mut SnapshotState,
        reading: &Reading,
        empty_after: Option<Vec<usize>>,
    ) -> Result<(), CaptureError> {
        for empty in empty_after.into_iter().flatten() {
            state.record_batch(empty, 0, None, BatchEnd::TableDone);
        }
        self.pipeline.commit_snapshot(state.clone())?;
        // A committed batch is progress: it resets the restart budget as a window does.
        self.windows_completed += 1;
        self.show_snapshot(state, &reading.estimates, CaptureState::Snapshotting);
        Ok(())
    }

    /// The indexes of the tables after `index`, when every one of them has no row at its
    /// snapshot SCN; `None` as soon as one has a row (or cannot be read now: the main loop
    /// reads it again and handles the error).
    fn empty_tables_after(
        &mut self,
        state: &SnapshotState,
        tables: &[SnapshotTable],
        index: usize,
    ) -> Option<Vec<usize>> {
        let mut empty = Vec::new();
        let later_tables = tables.iter().zip(&state.tables).enumerate().skip(index + 1);
        for (later, (SnapshotTable { schema, condition }, table)) in later_tables {
            let probe = self.source.flashback_batch(
                schema,
                table.scn,
                table.after.as_deref(),
                condition.as_deref(),
                1,
            );
            match probe {
                Ok(rows) if rows.is_empty() => empty.push(later),
                Ok(_) => return None,
                Err(error) => {
                    tracing::debug!(%error, table = %table.table, "the look-ahead read failed");
                    return None;
                }
            }
        }
        Some(empty)
    }

    /// The schema and `selectOverrides` condition of every table of the snapshot, by index.
    fn snapshot_tables(
        &mut self,
        state: &SnapshotState,
    ) -> Result<Vec<SnapshotTable>, CaptureError> {
        let conditions: Vec<(String, String)> = (self.pipeline.config().snapshot.select_overrides)
            .iter()
            .filter_map(|(name, condition)| {
                split_table_name(name)
                    .map(|(owner, table)| (format!("{owner}.{table}"), condition.clone()))
            })
            .collect();
        state
            .tables
            .iter()
            .map(|entry| {
                let schema = self
                    .pipeline
                    .tables()
                    .names()
                    .into_iter()
                    .find(|(owner, table)| format!("{owner}.{table}") == entry.table)
                    .and_then(|(owner, table)| self.pipeline.table_now(&owner, &table))
                    .ok_or_else(|| CaptureError::SnapshotTableUnselected {
                        table: entry.table.clone(),
                    })?;
                let condition = conditions
                    .iter()
                    .find(|(name, _)| *name == entry.table)
                    .map(|(_, condition)| condition.clone());
                Ok(SnapshotTable { schema, condition })
            })
            .collect()
    }

    /// The progress on `/status` and in the metrics.
    fn show_snapshot(
        &self,
        state: &SnapshotState,
        estimates: &[Option<u64>],
        capture_state: CaptureState,
    ) {
        let progress = state.progress(estimates);
        self.pipeline.metrics().set_snapshot(&progress);
        self.pipeline
            .metrics()
            .commit_scn
            .set(to_gauge(self.pipeline.bookmark().commit_scn));
        self.board.update(Timestamp::now(), |report| {
            report.state = capture_state;
            report.snapshot.initial = Some(progress);
            report.commit_scn = Some(self.pipeline.bookmark().commit_scn);
            report.restart_scn = Some(self.pipeline.bookmark().restart_scn);
        });
    }

    /// `initial_only` after its snapshot: the run ends with `--exit-at-end`; a pod stays up,
    /// idle, until asked to stop (exiting would make the kubelet restart it, only to find the
    /// snapshot complete and idle again).
    fn idle(&mut self) -> Result<Finish, CaptureError> {
        tracing::info!("snapshot.mode initial_only: the snapshot is complete; not streaming");
        self.board.update(Timestamp::now(), |report| {
            report.state = CaptureState::Streaming;
            report.snapshot.initial = None;
        });
        if self.options.exit_at_end {
            return Ok(Finish::ReachedEnd);
        }
        let poll = Duration::from_secs(self.pipeline.config().mining.poll_interval_seconds.max(1));
        while !self.options.stop.load(Ordering::Relaxed) {
            self.board.beat(Timestamp::now());
            std::thread::sleep(poll);
        }
        Ok(Finish::Stopped)
    }
}
