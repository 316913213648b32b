//! The mining loop: a window at a time, from the SCN reached to what LGWR has written, with the
//! work due between windows (orphans, maximum age, the journal, lag, heartbeats, `/status`).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use super::idle::pause_unless_stopped;
use super::{Engine, Finish, to_gauge};
use crate::buffer::OrphanCheck;
use crate::error::CaptureError;
use crate::http::CaptureState;
use crate::source::archive_retention::{self, Needed};
use crate::source::logs::plan_logs;
use crate::source::window::{Bound, Plan};
use crate::source::window_size::{CapChange, MinedWindow, WindowCost};
use crate::source::{
    LogPlan, MiningWindow, OracleSource, RedoLog, RedoLogKind, RedoThread, SourceError,
};
use redoline_crds::capture::{ThreadPosition, Time};
use redoline_crds::v1alpha1::{ArchivedRedoStatus, NeededArchivedLog};

/// Tries of a window whose listed logs LogMiner cannot use, and the pause after the first
/// (doubling: 0.2 + 0.4 + 0.8 + 1.6 s in all, time for the archiver to finish a log).
const LOG_RELIST_ATTEMPTS: u32 = 5;
const LOG_RELIST_FIRST_PAUSE: Duration = Duration::from_millis(200);
/// Times a window is mined again in place after an online log was overwritten under its fetch
/// (ORA-00310), before the error goes to the run, which starts again from the bookmark. One
/// switch is routine on a busy database; several in a row mean logs are too small for the
/// window, and a restart (with its backoff) is then the better pace.
const LOG_SWITCH_REMINES: u32 = 3;

/// A LogMiner session started over a window.
struct MiningStarted {
    /// When the `START_LOGMNR` that succeeded was sent.
    at: Instant,
    /// Whether an attempt before it ran out of memory (ORA-04030).
    out_of_memory: bool,
}

/// The `RedoMissing` for logs LogMiner still cannot use after the retries: the log it named, or
/// the thread whose listed logs begin latest (the one least likely to reach the start).
fn unusable_logs(window: &MiningWindow, log: Option<&crate::source::RedoLog>) -> SourceError {
    if let Some(log) = log {
        return SourceError::RedoMissing {
            thread: log.thread,
            from_scn: log.first_scn.max(window.start_scn),
            to_scn: log.next_scn.unwrap_or(window.end_scn).min(window.end_scn),
        };
    }
    let mut first_by_thread: BTreeMap<u16, u64> = BTreeMap::new();
    for log in &window.logs {
        let first = first_by_thread.entry(log.thread).or_insert(log.first_scn);
        *first = (*first).min(log.first_scn);
    }
    let thread = first_by_thread
        .iter()
        .max_by_key(|(_, first)| **first)
        .map_or(1, |(thread, _)| *thread);
    SourceError::RedoMissing {
        thread,
        from_scn: window.start_scn,
        to_scn: window.end_scn,
    }
}

/// Per thread, the first log of a window's plan (ordered by thread and sequence): the log its
/// mining starts in, for `/status`.
fn thread_positions(logs: &[RedoLog]) -> Vec<ThreadPosition> {
    let mut threads: Vec<ThreadPosition> = Vec::new();
    for log in logs {
        if threads.last().is_some_and(|t| t.thread == log.thread) {
            continue;
        }
        threads.push(ThreadPosition {
            thread: log.thread,
            sequence: log.sequence,
            first_scn: log.first_scn,
            archived: log.kind == RedoLogKind::Archived,
        });
    }
    threads
}

impl<S: OracleSource> Engine<S> {
    /// Runs until stopped, a typed stop, or (with `exit_at_end`) the end.
    pub fn run(&mut self) -> Result<Finish, CaptureError> {
        // Snapshot hook (engine/snapshot.rs): the snapshot first; `initial_only` ends there.
        let started = self
            .pipeline
            .commit_page()
            .and_then(|()| self.before_streaming());
        let result = match started {
            Ok(Some(finish)) => Ok(finish),
            Ok(None) => {
                self.board.update(Timestamp::now(), |report| {
                    report.state = CaptureState::Streaming;
                    report.snapshot.initial = None;
                });
                // The position and the transactions rebuilt from the journal, before the
                // first window.
                self.pipeline.publish_status(Timestamp::now());
                self.start_incremental()
                    .and_then(|()| self.mine_until_done())
            }
            Err(error) => Err(error),
        };
        // The LogMiner session kept across windows ends with the run (its memory is the
        // database's); a failure here changes nothing about how the run ended.
        if let Err(error) = self.source.end_mining() {
            tracing::debug!(%error, "ending LogMiner at the end of the run");
        }
        if result.is_ok() {
            // The lag once more at stop, so the last figure reported is the final one.
            let now = Timestamp::now();
            if self.lag.due(now, true)
                && let Ok(current_scn) = self.source.current_scn()
            {
                self.poll_lag(now, current_scn);
            }
        }
        let lag = self.lag.lag_seconds();
        self.board.update(Timestamp::now(), |report| {
            report.state = CaptureState::Stopping;
            report.lag_seconds = lag;
        });
        if let Some(stop) = result.as_ref().err().and_then(CaptureError::stop) {
            self.pipeline.metrics().stopped(stop.code.code());
        }
        result
    }

    fn mine_until_done(&mut self) -> Result<Finish, CaptureError> {
        let poll = Duration::from_secs(self.pipeline.config().mining.poll_interval_seconds);
        loop {
            if self.options.stop.load(Ordering::Relaxed) {
                return Ok(Finish::Stopped);
            }
            // A window boundary: snapshot requests changed in the config file apply here.
            self.apply_live_requests()?;
            if self.end_scn.is_some_and(|end| self.next_scn > end) {
                self.pipeline.commit_page()?;
                // Requested snapshots finish too, as of the end.
                while !self.options.stop.load(Ordering::Relaxed) && self.incremental_chunk()? {}
                return Ok(Finish::ReachedEnd);
            }
            let now = Timestamp::now();
            let window_began = Instant::now();
            self.board.beat(now);
            // The SCN first, then the flush: the flush commit makes LGWR write everything in
            // the log buffer, so all redo at or below an SCN read before it is on disk once it
            // returns. Redo other sessions make after the SCN read may still be in the buffer;
            // the planner keeps the window below what LGWR has written (`LAST_REDO_CHANGE#`,
            // read after the flush), which is also what makes `mining.readOnly` safe.
            let current = self.source.current_scn()?;
            if !self.pipeline.config().mining.read_only {
                self.source.flush_redo()?;
            }
            if self.table_listing.due() {
                let joined = self.pipeline.refresh_tables(
                    &mut self.table_listing,
                    &mut self.source,
                    self.next_scn,
                )?;
                if joined {
                    self.incremental_tables_joined();
                }
            }
            let threads = self.source.threads()?;
            let (plan, delay) = self.planner.plan(self.next_scn, current, &threads, now);
            if let Some(delay) = delay {
                tracing::warn!("{}", delay.message());
            }
            match plan {
                Plan::Idle => {
                    self.pipeline.commit_page()?;
                    self.after_window(current)?;
                    // A snapshot chunk between polls; with one read, the next poll follows at
                    // once, as after a busy window.
                    self.heartbeat_if_due()?;
                    if self.incremental_chunk()? {
                        self.windows_completed += 1;
                        continue;
                    }
                    let pause = match self.end_scn {
                        Some(_) => poll,
                        None => self.idle.nothing_to_mine(),
                    };
                    if pause_unless_stopped(pause, &self.options.stop, &self.board) {
                        return Ok(Finish::Stopped);
                    }
                }
                Plan::Mine { window, bound } => {
                    self.read_database_offset()?;
                    let end = match self.end_scn {
                        Some(end_scn) => window.end_scn.min(end_scn),
                        None => window.end_scn,
                    };
                    self.pipeline.start_window();
                    let cost = self.mine_window(window.start_scn, end, &threads)?;
                    if self.options.stop.load(Ordering::Relaxed) {
                        // The window's pages are committed; nothing else is due before exiting.
                        return Ok(Finish::Stopped);
                    }
                    let capped = bound == Bound::MaxWindow && end == window.end_scn;
                    self.size_next_window(MinedWindow {
                        scns: end - window.start_scn + 1,
                        capped,
                        cost,
                    })?;
                    self.after_window(current)?;
                    // Snapshot hook (engine/incremental.rs): at most one chunk per window.
                    self.incremental_chunk()?;
                    self.heartbeat_if_due()?;
                    let mut pause = self.idle.after_window(self.pipeline.window_yield());
                    // Caught up under load: the next window a little later (`busy_pause`).
                    if !capped && !self.pipeline.window_yield().is_idle() {
                        pause = self.idle.busy_pause(window_began.elapsed());
                    }
                    // A run with an end (`--exit-at-end`) mines on to it without pausing: the
                    // end was read at start, so every window until then has redo to reach.
                    if self.end_scn.is_none()
                        && !pause.is_zero()
                        && pause_unless_stopped(pause, &self.options.stop, &self.board)
                    {
                        self.windows_completed += 1;
                        return Ok(Finish::Stopped);
                    }
                }
            }
            self.windows_completed += 1;
        }
    }

    /// Mines one window and returns what it cost the database (`window_size`).
    fn mine_window(
        &mut self,
        start_scn: u64,
        end_scn: u64,
        threads: &[RedoThread],
    ) -> Result<WindowCost, CaptureError> {
        let started = Instant::now();
        let metrics = self.pipeline.metrics();
        metrics.window_start_scn.set(to_gauge(start_scn));
        metrics.window_end_scn.set(to_gauge(end_scn));
        let mut from_scn = start_scn;
        let mut remines = 0;
        let mut cost = WindowCost::default();
        self.recycle_if_old()?;
        loop {
            // The threads read for this window's plan; a window mined again lists afresh.
            let threads = (remines == 0).then_some(threads);
            let mining_started = self.start_mining_with_fresh_logs(from_scn, end_scn, threads)?;
            cost.out_of_memory |= mining_started.out_of_memory;
            self.mining_since.get_or_insert_with(Instant::now);
            let pipeline = &mut self.pipeline;
            // The LogMiner session is kept for the next window (the source ends it when the
            // logs change, when it is recycled, or at the end of the run).
            let streamed = self.source.stream_rows(&mut |row| pipeline.push_row(row));
            // The database's part of the window: from START_LOGMNR to the end of the fetch (the
            // rows are handled as they come, so the query stays open for that too), without the
            // log listings and their pauses before it, or the sink's commit after it.
            cost.duration += mining_started.at.elapsed();
            if let Some(failure) = self.pipeline.take_failure() {
                return Err(failure);
            }
            match streamed {
                Ok(fetched) => {
                    self.pipeline.metrics().rows_fetched.inc_by(fetched);
                    break;
                }
                // An online log of the window was overwritten while it was read (ORA-00310): its
                // redo is in the archived copy now, which a fresh listing names. The window is
                // mined again in this process from the SCN of the last row given, so no row
                // reaches the buffer twice, and the buffer's open transactions, which a restart
                // from the bookmark would mine again from their start, are kept.
                Err(SourceError::LogSwitched { message }) if remines < LOG_SWITCH_REMINES => {
                    // The failed fetch ended the session: the next start registers the logs
                    // of a fresh listing.
                    self.source.end_mining()?;
                    remines += 1;
                    from_scn = self.pipeline.resume_after_failed_fetch(from_scn);
                    tracing::warn!(
                        attempt = remines,
                        from_scn,
                        end_scn,
                        %message,
                        "an online log was overwritten while it was mined; mining the rest of \
                         the window again from the archived copy"
                    );
                    self.pipeline.metrics().retried("log_switched");
                }
                // The mining session's server process ran out of memory (ORA-04030): a fresh
                // session gives it back, and the window is mined again on it from the last row
                // given, as after an overwritten log.
                Err(SourceError::SessionMemory { message }) if remines < LOG_SWITCH_REMINES => {
                    remines += 1;
                    cost.out_of_memory = true;
                    from_scn = self.pipeline.resume_after_failed_fetch(from_scn);
                    tracing::warn!(
                        attempt = remines,
                        from_scn,
                        end_scn,
                        %message,
                        "the mining session ran out of memory; mining the rest of the window \
                         again on a fresh session"
                    );
                    self.recycle_mining("memory")?;
                    self.pipeline.metrics().retried("session_memory");
                }
                Err(error) => return Err(error.into()),
            }
        }
        cost.pga_bytes = self.read_session_memory();
        self.next_scn = self.pipeline.end_window(&mut self.source, end_scn)?;
        self.pipeline
            .metrics()
            .window_duration
            .observe(started.elapsed().as_secs_f64());
        Ok(cost)
    }

    /// Sets the cap on the next window from what this one cost (`window_size`): smaller after a
    /// window over `mining.windowMaxSeconds` or `mining.sessionPgaMaxBytes`, or one that ran out
    /// of memory, larger again after windows well within both. A session over its PGA bound is
    /// ended for a fresh one, since its server process gives the memory back only when it ends.
    fn size_next_window(&mut self, window: MinedWindow) -> Result<(), CaptureError> {
        let verdict = self.window_sizer.after_window(window);
        if let Some(change) = verdict.change {
            match change {
                CapChange::Shrunk { .. } => tracing::warn!("{}", change.message()),
                CapChange::Grew { .. } => tracing::info!("{}", change.message()),
            }
            self.pipeline.metrics().window_cap_changed(&change);
            self.planner.set_max_window(self.window_sizer.cap());
        }
        if verdict.recycle {
            tracing::info!(
                pga_bytes = window.cost.pga_bytes,
                "the mining session's PGA is above mining.sessionPgaMaxBytes; starting a fresh one"
            );
            self.recycle_mining("pga")?;
        }
        Ok(())
    }

    /// The logs covering `start_scn` on every thread: from the last listing while no thread has
    /// switched logs since it ([`super::LogListing`]), else from a new one, kept.
    fn logs_from_listing(
        &mut self,
        start_scn: u64,
        threads: &[RedoThread],
    ) -> Result<LogPlan, CaptureError> {
        let sequences: Vec<(u16, u32)> = threads.iter().map(|t| (t.thread, t.sequence)).collect();
        let listed = match &self.log_listing {
            Some(listing) if listing.sequences == sequences && start_scn >= listing.from_scn => {
                listing.logs.clone()
            }
            _ => {
                // From the restart SCN when it is older: the planner keeps only the logs
                // reaching the window, the rest tell how long a restart's redo is kept.
                let from_scn = start_scn.min(self.pipeline.bookmark().restart_scn);
                let logs = self.source.redo_logs(from_scn)?;
                self.log_listing = Some(super::LogListing {
                    from_scn,
                    sequences,
                    logs: logs.clone(),
                    threads: threads.to_vec(),
                    listed_at: Instant::now(),
                });
                logs
            }
        };
        Ok(plan_logs(threads, listed, start_scn)?)
    }

    /// Lists the logs and starts LogMiner over the window. When LogMiner cannot use logs the
    /// listing named (a log archived, reused or deleted in between: ORA-01291 at START_LOGMNR,
    /// ORA-01284/00308 at ADD_LOGFILE), the window is tried again on a fresh listing, a few
    /// times with a growing pause, as Debezium's log collector does. A listing that shows a gap
    /// is `RedoMissing` at once, naming its thread; a failure that outlasts the retries is
    /// `RedoMissing` for the log LogMiner could not use, or, when it named none, for the thread
    /// whose listed logs begin latest.
    fn start_mining_with_fresh_logs(
        &mut self,
        start_scn: u64,
        end_scn: u64,
        threads: Option<&[RedoThread]>,
    ) -> Result<MiningStarted, CaptureError> {
        let mut pause = LOG_RELIST_FIRST_PAUSE;
        let mut out_of_memory = false;
        // Every path of the last attempt returns: its failures are not retried.
        let mut attempt = 0;
        loop {
            attempt += 1;
            // The first try on the threads just read and, while none switched logs, the last
            // listing; a retry on fresh ones (the listing was stale).
            let logs = match threads.filter(|_| attempt == 1) {
                Some(threads) => self.logs_from_listing(start_scn, threads)?,
                None => {
                    let threads = self.source.threads()?;
                    self.log_listing = None;
                    self.logs_from_listing(start_scn, &threads)?
                }
            };
            let window = MiningWindow {
                start_scn,
                end_scn,
                logs: logs.logs,
                objects: self.pipeline.tables().object_ids(),
                tables: self.pipeline.tables().names(),
                pdb: self.pipeline.config().database.pdb.clone(),
                // The capture never reads SQL_UNDO: undo rows carry their own SQL_REDO.
                with_sql_undo: false,
            };
            let at = Instant::now();
            let (log, message) = match self.source.start_mining(&window) {
                Ok(()) => {
                    let threads = thread_positions(&window.logs);
                    self.board
                        .update(Timestamp::now(), |report| report.threads = threads);
                    return Ok(MiningStarted { at, out_of_memory });
                }
                Err(SourceError::LogsChanged { log, message }) => (log, message),
                // Out of process memory at the start (ORA-04030): once more on a fresh session.
                Err(SourceError::SessionMemory { message }) if attempt < LOG_RELIST_ATTEMPTS => {
                    out_of_memory = true;
                    tracing::warn!(
                        attempt,
                        %message,
                        "the mining session ran out of memory at START_LOGMNR; starting again on \
                         a fresh session"
                    );
                    self.recycle_mining("memory")?;
                    self.pipeline.metrics().retried("session_memory");
                    continue;
                }
                Err(error) => return Err(error.into()),
            };
            if attempt == LOG_RELIST_ATTEMPTS {
                return Err(unusable_logs(&window, log.as_ref()).into());
            }
            tracing::warn!(
                attempt,
                start_scn,
                end_scn,
                %message,
                "LogMiner cannot use the listed logs; listing them again"
            );
            self.pipeline.metrics().retried("logs_changed");
            std::thread::sleep(pause);
            pause *= 2;
        }
    }

    /// Ends the mining session for a fresh one once it is older than `mining.sessionMaxSeconds`
    /// (0: never for age). LogMiner's memory in the server process grows over a long session;
    /// Debezium bounds it the same way (`log.mining.session.max.ms`,
    /// `isMiningSessionRestartRequired`, then a new connection with
    /// `log.mining.restart.connection`).
    fn recycle_if_old(&mut self) -> Result<(), CaptureError> {
        let bound = self.pipeline.config().mining.session_max_seconds;
        let old = self
            .mining_since
            .is_some_and(|since| bound > 0 && since.elapsed() >= Duration::from_secs(bound));
        if old {
            tracing::info!(
                seconds = bound,
                "the mining session reached mining.sessionMaxSeconds; starting a fresh one"
            );
            self.recycle_mining("age")?;
        }
        Ok(())
    }

    /// Ends the mining session and the database session under it; the next window starts on a
    /// fresh one.
    fn recycle_mining(&mut self, reason: &str) -> Result<(), CaptureError> {
        self.source.recycle_mining()?;
        self.mining_since = None;
        self.pipeline.metrics().session_recycled(reason);
        Ok(())
    }

    /// The mining session's memory for `/metrics` and `mining.sessionPgaMaxBytes`, read after
    /// each window on the session itself (as Debezium does after each mining iteration); its
    /// `session pga memory` is returned. A failure (no grant on V$MYSTAT, say) leaves the gauges
    /// as they were and is reported once: mining goes on without the PGA bound.
    fn read_session_memory(&mut self) -> Option<u64> {
        match self.source.mining_session_memory() {
            Ok(Some(memory)) => {
                self.pipeline.metrics().set_session_memory(memory);
                Some(memory.pga_bytes)
            }
            Ok(None) => None,
            Err(error) => {
                if !std::mem::replace(&mut self.session_memory_failed, true) {
                    tracing::warn!(
                        %error,
                        "cannot read the mining session's memory (V$MYSTAT, V$STATNAME); the \
                         PGA gauges stay unset and mining.sessionPgaMaxBytes is not enforced"
                    );
                }
                None
            }
        }
    }

    /// Between windows: orphans, maximum age, lag, and the status the operator reads.
    fn after_window(&mut self, current_scn: u64) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        self.report_archived_redo(now);
        // First: the lag poll reads the database's clock, which transaction ages count from.
        if self.lag.due(now, false) {
            self.poll_lag(now, current_scn);
        }
        if self.pipeline.orphan_check_due(now) {
            let open = self.source.open_transactions()?;
            let sessions = self.source.sessions()?;
            // A transaction missing from the list was gone when the list was read: the SCN read
            // after the lists is one its end (if any) lies below. The SCN read before the window
            // is not: a transaction committing during the window would look released by mistake.
            let listed_at_scn = self.source.current_scn()?;
            self.pipeline.release_orphans(OrphanCheck {
                now,
                current_scn: listed_at_scn,
                mined_through_scn: self.next_scn.saturating_sub(1),
                open_transactions: &open,
                sessions: &sessions,
            })?;
        }
        self.pipeline.after_window(now)?;
        let lag = self.lag.lag_seconds();
        self.board.update(now, |report| report.lag_seconds = lag);
        self.pipeline.publish_status(now);
        Ok(())
    }

    /// Heartbeat hook: at each interval, the action query, then a heartbeat record in a page
    /// whose bookmark moves to what mining has reached when no transaction is open.
    fn heartbeat_if_due(&mut self) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        if !self.heartbeat.due(now) {
            return Ok(());
        }
        self.heartbeat.sent(now);
        if let Some(query) = &self.pipeline.config().heartbeat.action_query {
            self.source.heartbeat_action(query)?;
        }
        // Mining has given every row up to the SCN before `next_scn` to the buffer.
        let mined_through = self.next_scn.saturating_sub(1);
        // The bookmark moves there only with no transaction open: its time is asked only then.
        let moves = self.pipeline.heartbeat_moves_bookmark(mined_through);
        let mined_time = if moves {
            self.time_of_scn(mined_through)
        } else {
            None
        };
        self.pipeline.heartbeat(mined_through, mined_time, now)
    }

    /// The archived redo a restart at the bookmark's restart SCN needs and the hours left before
    /// `mining.archiveRetentionHours` lets the database delete it, for `/status` and the
    /// metric: from the last log listing, with no round trip of its own (the logs' ages were
    /// read on the database's clock with the listing; the time since is the capture's
    /// monotonic clock). Nothing before the first listing.
    fn report_archived_redo(&mut self, now: Timestamp) {
        let Some(listing) = &self.log_listing else {
            return;
        };
        let Some(needed) = archive_retention::needed(
            &listing.threads,
            &listing.logs,
            listing.from_scn,
            self.pipeline.bookmark().restart_scn,
        ) else {
            return;
        };
        let retention_hours = self.pipeline.config().mining.archive_retention_hours;
        let retention = retention_hours.map(|hours| SignedDuration::from_hours(i64::from(hours)));
        let since_listing =
            SignedDuration::try_from(listing.listed_at.elapsed()).unwrap_or(SignedDuration::MAX);
        // Redo already gone has no time left, whatever the retention.
        let hours_left = match (needed, retention) {
            (Needed::Gone { .. }, _) => Some(0.0),
            (_, Some(retention)) => Some(archive_retention::hours_left(
                needed,
                retention,
                since_listing,
            )),
            (_, None) => None,
        };
        // Completion times are the host's local time: UTC with the offset read for the window.
        let zone = self.pipeline.time_zone();
        let utc = |local: jiff::civil::DateTime| zone.to_timestamp(local).ok().map(Time);
        let (oldest_needed, deletable_from) = match needed {
            Needed::Archived(log) => (
                Some(NeededArchivedLog {
                    thread: log.thread,
                    sequence: log.sequence,
                    completed_at: utc(log.completion.time),
                }),
                retention.and_then(|retention| utc(log.completion.time + retention)),
            ),
            Needed::OnlineOnly | Needed::Gone { .. } => (None, None),
        };
        self.pipeline
            .metrics()
            .archived_redo_hours_left
            .set(hours_left.unwrap_or(-1.0));
        let status = ArchivedRedoStatus {
            retention_hours,
            hours_left,
            deletable_from,
            oldest_needed,
        };
        self.board
            .update(now, |report| report.archived_redo = Some(status));
    }

    /// The database time of `scn` as a UTC instant (`SCN_TO_TIMESTAMP` in the host's local time,
    /// made UTC with the host's offset read now), for the bookmark's commit time. `None` when it
    /// cannot be read: the bookmark then keeps its earlier time, which only makes the position
    /// look older, so a failure is logged at debug level and never fails the run (the lag poll
    /// warns about a failing SCN_TO_TIMESTAMP once).
    fn time_of_scn(&mut self, scn: u64) -> Option<Timestamp> {
        let source = &mut self.source;
        let time = source.database_utc_offset().and_then(|offset| {
            Ok(source
                .scn_to_timestamp(scn)?
                .and_then(|local| offset.to_timestamp(local).ok()))
        });
        time.unwrap_or_else(|error| {
            tracing::debug!(scn, %error, "the time of the SCN mining reached cannot be read");
            None
        })
    }

    /// The database host's offset from UTC, read before each window so its rows' local
    /// times (TIMESTAMP, COMMIT_TIMESTAMP) become UTC instants with the offset in force now.
    ///
    /// Debezium does the same: its LogMiner streaming loop calls
    /// `updateDatabaseTimeDifference()` (AbstractLogMinerStreamingChangeEventSource) at the
    /// top of every mining iteration, which reads `SELECT SYSTIMESTAMP FROM DUAL`
    /// (`OracleConnection.getDatabaseSystemTime`) and keeps its offset; the buffered and
    /// unbuffered sources then subtract `databaseOffset.getTotalSeconds()` from each row's
    /// change time and the commit time (`setSourceTime`, `setCommitTime`).
    ///
    /// One round trip per window rather than per N windows: a window already costs several
    /// (current SCN, flush, threads, logs, START_LOGMNR, the fetch), so one DUAL query adds
    /// little, and reading it every window bounds the time after a DST switch during which rows
    /// are converted with the old offset to one window. Idle polls do not read it: they convert
    /// nothing. The limitation that remains: a window's rows all take the offset read before it,
    /// so rows written before a switch but mined after it (a capture behind by more than the
    /// time since the switch, or the first window after it) are shifted by the switch, as are
    /// rows whose local time falls in the hour repeated when clocks go back, which an offset
    /// alone cannot tell apart.
    fn read_database_offset(&mut self) -> Result<(), CaptureError> {
        let offset = self.source.database_utc_offset()?;
        self.pipeline.set_time_zone(offset);
        Ok(())
    }

    /// Asks for the lag (seed 001: the time of the current SCN and the commit time of the
    /// emitted one, as UTC instants); a failure is logged once and leaves the lag unknown, never
    /// failing the run.
    fn poll_lag(&mut self, now: Timestamp, current_scn: u64) {
        let emitted_scn = self.pipeline.bookmark().commit_scn;
        // The emitted commit's time as its events carried it, when this run emitted it.
        let emitted_known = self.pipeline.commit_time_of(emitted_scn);
        let source = &mut self.source;
        let times = source.database_utc_offset().and_then(|offset| {
            let utc = |local: Option<jiff::civil::DateTime>| {
                local.and_then(|local| offset.to_timestamp(local).ok())
            };
            let current = source.scn_to_timestamp(current_scn)?;
            let emitted = match emitted_known {
                Some(time) => Some(time),
                None => utc(source.scn_to_timestamp(emitted_scn)?),
            };
            Ok((current, utc(current), emitted))
        });
        match times {
            Ok((current_local, current, emitted)) => {
                // Transaction ages compare the database's clock with their START rows'
                // TIMESTAMP (both the host's local time); a position whose time this run has
                // not seen yet (a fresh start, a bookmark written before the time was stored)
                // has it stored with the next page.
                self.pipeline
                    .observe_database_time(now, current_local, emitted);
                self.lag.record(now, current, emitted);
            }
            Err(error) => {
                if self.lag.record_failure(now) {
                    tracing::warn!(%error, "the lag query failed; lag is unknown until it works again");
                }
            }
        }
        self.pipeline.metrics().set_lag(self.lag.lag_seconds());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(thread: u16, sequence: u32, first_scn: u64, kind: RedoLogKind) -> RedoLog {
        RedoLog {
            name: format!("/redo/{thread}_{sequence}.arc"),
            thread,
            sequence,
            first_scn,
            next_scn: None,
            kind,
            completion: None,
        }
    }

    #[test]
    fn each_thread_is_reported_at_the_first_log_of_the_plan() {
        let logs = [
            log(1, 7, 100, RedoLogKind::Archived),
            log(1, 8, 200, RedoLogKind::Online),
            log(2, 3, 150, RedoLogKind::Online),
        ];
        let threads = thread_positions(&logs);
        assert_eq!(
            threads,
            [
                ThreadPosition {
                    thread: 1,
                    sequence: 7,
                    first_scn: 100,
                    archived: true
                },
                ThreadPosition {
                    thread: 2,
                    sequence: 3,
                    first_scn: 150,
                    archived: false
                },
            ]
        );
    }
}
