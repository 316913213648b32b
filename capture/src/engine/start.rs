//! Starting a run: the stored bookmark checked against the database (or a fresh position
//! anchored by `startPosition`), the captured tables and their structures, and the pipeline
//! that mining feeds.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use redoline_crds::v1alpha1::{StartPosition, StartPositionType};

use super::captured_tables::{CapturedTables, TableListing, check_key_logging};
use super::idle::IdlePacer;
use super::journaling::Journaling;
use super::pipeline::{Pipeline, PipelineParts};
use super::reposition;
use super::{Engine, RunOptions, Wiring, to_gauge};
use crate::config::{CaptureConfig, ConfigError};
use crate::error::CaptureError;
use crate::event::RecordEncoder;
use crate::filter::TableSelection;
use crate::filter::{Filters, unsupported};
use crate::heartbeat::{HeartbeatClock, heartbeat_topic};
use crate::lag::LagTracker;
use crate::sink::kafka::topics::data_topics;
use crate::sink::{Bookmark, PagePolicy};
use crate::source::window::WindowPlanner;
use crate::source::window_size::{SizeBounds, WindowSizer};
use crate::source::{DatabaseCatalog, OpenTransaction, OracleSource, SourceError};

impl<S: OracleSource> Engine<S> {
    /// Prepares a run: reads the dictionary and the stored bookmark (or anchors a fresh one),
    /// checks the incarnation, and positions mining.
    pub fn start(
        config: CaptureConfig,
        mut source: S,
        wiring: Wiring,
        options: RunOptions,
    ) -> Result<Self, CaptureError> {
        let Wiring {
            mut sink,
            journal,
            rebuilt,
            stored_bookmark,
            schema_history,
            mut buffer,
            metrics,
            board,
            schema_registry,
        } = wiring;
        let database = source.database()?;
        // Read once: how values are stored, which the rows LogMiner writes by object number
        // (`OBJ# n`) need; the captured tables hold it. A set without a decoder is no reason
        // to stop here; it is named when such a row needs it.
        let storage = source.storage_settings()?;
        tracing::info!(
            character_set = storage.character_set,
            national_character_set = storage.national_character_set,
            dbtimezone = storage.database_time_zone,
            decodable = storage.formats().is_ok(),
            "database storage settings"
        );
        let filters = Arc::new(
            Filters::new(&config.filters, &config.columns)
                .map_err(|error| ConfigError::new(error.field, error.problem).stop())?,
        );
        // The captured tables: spec.tables and what the schema and table lists select.
        let mut table_listing = TableListing::new(
            &filters,
            &config.mining.flush_table,
            database.supplemental,
            Duration::from_secs(config.mining.table_listing_interval_seconds.max(1)),
        );
        let table_names = table_listing.captured(&mut source, config.table_names())?;
        // Before anything is mined or stored: every captured table's changes carry its key.
        check_key_logging(&mut source, &table_names, &database.supplemental, &filters)?;
        let pdb_incarnation = match &config.database.pdb {
            Some(pdb) => readable_pdb_incarnation(&mut source, pdb)?,
            None => None,
        };
        let resumed = stored_bookmark.is_some();
        let stored = stored_bookmark
            .map(|value| Bookmark::resume(value, database.resetlogs_scn, pdb_incarnation))
            .transpose()?;
        // Snapshot hook (engine/snapshot.rs): `snapshot.mode` and the stored bookmark decide
        // where the run starts and whether it snapshots first.
        let (mut bookmark, snapshot_phase) = Self::position(
            &config,
            &table_names,
            &mut source,
            stored,
            database.resetlogs_scn,
            pdb_incarnation,
        )?;
        // spec.reposition, once per id (engine/reposition.rs). A moved position is mined
        // afresh from its SCN: the transactions the journal rebuilt belong to the old one.
        let reposition = reposition::apply(
            config.reposition.as_ref(),
            &mut bookmark,
            resumed,
            &mut source,
        )?;
        let mut journal = journal;
        let rebuilt = if reposition.moved {
            // Their chunks are removed in the first page, before the moved bookmark (left live,
            // a later start would rebuild them at the new position; removed without the
            // bookmark, the next start moves again and mines them from the new SCN anyway).
            let tombstones: Vec<_> = rebuilt
                .iter()
                .flat_map(|transaction| journal.forget(&transaction.key))
                .collect();
            sink.push_records(tombstones)?;
            Vec::new()
        } else {
            rebuilt
        };
        board.update(Timestamp::now(), |report| {
            report.reposition = reposition.status.clone();
        });
        let mut journaling = Journaling::new(journal);
        if let Some(generation) = journaling.generation() {
            bookmark.journal_generation = generation;
        }
        journaling.restore(&mut buffer, rebuilt, Timestamp::now())?;
        tracing::info!(
            commit_scn = bookmark.commit_scn,
            restart_scn = bookmark.restart_scn,
            "mining starts"
        );
        let next_scn = bookmark.restart_scn;
        // Schema history hook: the structures in force from the resume position.
        let (tables, first_versions) = CapturedTables::start(
            &mut source,
            &table_names,
            schema_history,
            bookmark.restart_scn,
            resumed,
        )?;
        let tables = tables
            .with_formats(storage.formats())
            .with_selection(TableSelection::new(
                &config.table_names(),
                &filters,
                &config.mining.flush_table,
            ));
        // Before mining: a selected column of a type the capture cannot decode would be emitted
        // without its value, so the capture stops and names the exclusion that fixes it.
        let unsupported: Vec<_> = tables
            .structures()
            .iter()
            .flat_map(|table| unsupported::unsupported_columns(table, &filters))
            .collect();
        if let Some(stop) = unsupported::stop(&unsupported) {
            return Err(CaptureError::Stop(Box::new(stop)));
        }
        let topic_prefix = config
            .kafka
            .as_ref()
            .map_or("redoline", |k| k.topic_prefix.as_str())
            .to_owned();
        let encoder = RecordEncoder::new(
            &config.format,
            &topic_prefix,
            &database.name,
            Arc::clone(&filters),
            schema_registry,
        )?;
        // The data topics are made ready (created, or found) before the first Kafka transaction.
        let structures = tables.structures();
        let known_topics = data_topics(
            &config,
            &topic_prefix,
            structures.iter().map(|t| (t.schema(), t.table())),
        );
        sink.prepare_topics(&known_topics)?;
        let end_scn = if options.exit_at_end {
            // Everything committed before the flush write: on RAC the flush reaches only the
            // connected instance, so its own SCN may lie above another thread's written redo.
            let end = source.current_scn()?;
            if !config.mining.read_only {
                source.flush_redo()?;
            }
            Some(end)
        } else {
            None
        };
        metrics.restart_scn.set(to_gauge(bookmark.restart_scn));
        let page_policy = match &config.kafka {
            Some(kafka) => PagePolicy::for_kafka(&kafka.transactions)?,
            None => PagePolicy::from_batch_size(config.mining.batch_size),
        };
        let mut pipeline = Pipeline::new(PipelineParts {
            tables,
            buffer,
            sink,
            encoder,
            filters,
            page_policy,
            journaling,
            board: board.clone(),
            bookmark,
            metrics,
            heartbeat_topic: heartbeat_topic(&config.heartbeat.topic_prefix, &topic_prefix),
            // A fresh position is stored before anything else happens (`run`): a restart must
            // resume from it, not anchor again at a later SCN and miss what came in between.
            bookmark_moved: !resumed || reposition.moved,
            topic_prefix,
            database_name: database.name.clone(),
            stop: Arc::clone(&options.stop),
            config,
        });
        pipeline.record_versions(&first_versions)?;
        let heartbeat = HeartbeatClock::new(
            pipeline.config().heartbeat.interval_seconds,
            Timestamp::now(),
        );
        let mining = &pipeline.config().mining;
        let seconds = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        let idle = IdlePacer::new(
            Duration::from_secs(mining.poll_interval_seconds.max(1)),
            pipeline
                .config()
                .sla
                .as_ref()
                .and_then(|sla| seconds(sla.max_lag_seconds)),
            seconds(pipeline.config().heartbeat.interval_seconds),
        );
        let window_sizer = WindowSizer::new(SizeBounds {
            min_scns: mining.min_scn_window,
            max_scns: mining.max_scn_window,
            max_duration: seconds(mining.window_max_seconds),
            max_pga_bytes: {
                let field = "mining.sessionPgaMaxBytes";
                let bytes = mining
                    .session_pga_max_bytes
                    .bytes()
                    .map_err(|error| ConfigError::new(field, error.to_string()).stop())?;
                (bytes > 0).then_some(bytes)
            },
        });
        pipeline.metrics().set_window_max_scns(window_sizer.cap());
        Ok(Self {
            heartbeat,
            idle,
            mining_since: None,
            session_memory_failed: false,
            log_listing: None,
            row_estimates: std::collections::BTreeMap::new(),
            requests_generation: 0,
            planner: WindowPlanner::new(window_sizer.cap()),
            window_sizer,
            source,
            pipeline,
            board,
            lag: LagTracker::default(),
            next_scn,
            end_scn,
            options,
            table_listing,
            windows_completed: 0,
            snapshot_phase,
        })
    }

    /// The position of a capture with no bookmark (seed 001 start positions).
    pub(super) fn anchor(
        start: &StartPosition,
        source: &mut S,
        resetlogs_scn: u64,
        pdb_incarnation: Option<u64>,
    ) -> Result<Bookmark, CaptureError> {
        let (anchor, restart) = match start.type_ {
            StartPositionType::Current => {
                // Transactions open now began earlier: mine from the oldest one's start so they
                // are captured whole.
                let before = source.current_scn()?;
                match source.open_transactions() {
                    Ok(open) => {
                        let position =
                            FreshPosition::from_reads(before, &open, source.current_scn()?);
                        warn_of_transactions_older_than_the_redo(source, &open)?;
                        (position.scn, position.restart_scn)
                    }
                    Err(error) => {
                        tracing::warn!(%error, "open transactions could not be read; transactions open now may be captured only from here");
                        (before, before)
                    }
                }
            }
            StartPositionType::Earliest => {
                let oldest = source
                    .redo_logs(0)?
                    .iter()
                    .map(|log| log.first_scn)
                    .min()
                    .ok_or(CaptureError::NoRedoLog)?;
                tracing::warn!(
                    oldest,
                    "starting at the oldest redo: transactions open before it are captured from there on"
                );
                (oldest.saturating_sub(1), oldest)
            }
            StartPositionType::Scn => {
                let scn = start.scn.unwrap_or(1);
                (scn.saturating_sub(1), scn)
            }
        };
        let mut bookmark =
            Bookmark::initial(anchor.saturating_add(1), resetlogs_scn, pdb_incarnation, 0);
        bookmark.restart_scn = restart.min(anchor.saturating_add(1));
        Ok(bookmark)
    }
}

/// The PDB's incarnation SCN for the bookmark's check; `None` (the check skipped, with a
/// warning, as seed 001 says) when the capture user may not read V$PDB_INCARNATION, and
/// [`SourceError::NoSuchPdb`] when the view is readable and does not know the PDB.
fn readable_pdb_incarnation<S: DatabaseCatalog>(
    source: &mut S,
    pdb: &str,
) -> Result<Option<u64>, SourceError> {
    match source.pdb_incarnation(pdb) {
        Ok(Some(incarnation)) => Ok(Some(incarnation.incarnation_scn)),
        // Readable, and no such PDB: a misspelt name would otherwise mine nothing, silently.
        Ok(None) => Err(SourceError::NoSuchPdb {
            pdb: pdb.to_owned(),
            known: "V$PDB_INCARNATION has no current incarnation of it".to_owned(),
        }),
        Err(error) if error.is_not_granted() => {
            tracing::warn!(
                pdb,
                %error,
                "V$PDB_INCARNATION cannot be read: the bookmark is not checked against the PDB's \
                 incarnation, so a flashback or point-in-time recovery of the PDB would go \
                 unnoticed; grant SELECT ON V_$PDB_INCARNATION to the capture user"
            );
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// A position taken now (`startPosition: current`, a new snapshot): the SCN it stands at (commits
/// at or below it are before the position) and where mining must start so that every
/// transaction committing after it is mined from its first change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FreshPosition {
    pub(super) scn: u64,
    pub(super) restart_scn: u64,
}

impl FreshPosition {
    /// Reads the current SCN, the open transactions, and the current SCN again.
    pub(super) fn read<S: DatabaseCatalog>(source: &mut S) -> Result<Self, SourceError> {
        let before = source.current_scn()?;
        let open = source.open_transactions()?;
        let after = source.current_scn()?;
        Ok(Self::from_reads(before, &open, after))
    }

    /// `GV$TRANSACTION` is not read consistently with `V$DATABASE.CURRENT_SCN` (a fixed view has
    /// no read consistency), so a transaction can commit between the two reads, missing from the
    /// list yet committing after an SCN read first. Standing at `after`, read once the list was
    /// complete, every transaction that commits later was open while the list was read: it is
    /// either listed (mining starts at its start) or began after the list was read, so above
    /// `before`, where mining starts at the latest.
    fn from_reads(before: u64, open: &[OpenTransaction], after: u64) -> Self {
        Self {
            scn: after.max(before),
            restart_scn: oldest_start(open).unwrap_or(before).min(before),
        }
    }
}

/// A transaction open at start that began before the oldest redo still listed cannot be
/// captured whole: mining must start at its start, whose logs are gone, so the first window
/// stops with RedoMissing. Say which transaction it is, since it is often one left open by a
/// forgotten session, which the DBA can end.
fn warn_of_transactions_older_than_the_redo<S: crate::source::RedoMiner>(
    source: &mut S,
    open: &[OpenTransaction],
) -> Result<(), SourceError> {
    let Some(oldest) = open
        .iter()
        .filter(|t| t.start_scn > 1)
        .min_by_key(|t| t.start_scn)
    else {
        return Ok(());
    };
    let oldest_redo = source.redo_logs(0)?.iter().map(|log| log.first_scn).min();
    if let Some(oldest_redo) = oldest_redo.filter(|&first| oldest.start_scn < first) {
        tracing::warn!(
            xid = %oldest.xid,
            instance = oldest.instance,
            start_scn = oldest.start_scn,
            oldest_redo_scn = oldest_redo,
            "a transaction open now began before the oldest redo still available, so it cannot \
             be captured whole and the capture stops (CDC-2001) at its first window; end that \
             transaction (often a forgotten session) or restore the archived logs from its start"
        );
    }
    Ok(())
}

/// The start SCN of the oldest of `open` transactions (a start SCN of 0 or 1 is unknown).
fn oldest_start(open: &[OpenTransaction]) -> Option<u64> {
    open.iter()
        .map(|t| t.start_scn)
        .filter(|&scn| scn > 1)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Xid;

    fn open(start_scn: u64) -> OpenTransaction {
        OpenTransaction {
            xid: Xid::from_parts(1, 2, 3),
            instance: 1,
            start_scn,
            status: "ACTIVE".to_owned(),
            con_id: None,
        }
    }

    #[test]
    fn a_fresh_position_stands_after_the_list_and_mines_from_before_it() {
        // Nothing open: stand at the second read, mine from the first (a transaction may have
        // begun in between, after the list was read).
        assert_eq!(
            FreshPosition::from_reads(100, &[], 105),
            FreshPosition {
                scn: 105,
                restart_scn: 100
            }
        );
        // The oldest listed transaction's start; unknown start SCNs (0, 1) do not count.
        assert_eq!(
            FreshPosition::from_reads(100, &[open(1), open(40), open(70)], 105),
            FreshPosition {
                scn: 105,
                restart_scn: 40
            }
        );
    }
}
