//! Incremental snapshots, as pure logic: which reads are asked for (`spec.snapshot.requests`,
//! tables that joined the capture), which one reads next, how far each got, and which are over
//! for good. The state travels in the bookmark ([`IncrementalState`]), so a chunk's rows and the
//! progress they make commit together, and a finished id is never read again, whatever the spec
//! says after a restart or an operator upgrade. The loop that reads chunks between mining windows
//! is `engine::incremental`; the procedure is documented in docs/snapshot.md.
//!
//! Rules:
//! - Requests run one at a time, in the order they became known; each reads its tables in order.
//! - A spec request whose id is new (neither running nor finished) is queued; one that leaves
//!   the spec while queued or running is cancelled; a finished id stays finished, so putting it
//!   back does nothing (a new read needs a new id).
//! - A table that joins the capture gets a request of its own (`tables-added-<SCN>`) unless
//!   `snapshot.tablesAdded` is `skip`.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use redoline_crds::capture::Time;
use redoline_crds::v1alpha1::{
    SnapshotRequest, SnapshotRequestState, SnapshotRequestStatus, SnapshotTableStatus,
};
use serde::{Deserialize, Serialize};

use crate::source::chunk_plan::ChunkPlan;
use crate::source::chunks::RowRange;

/// The prefix of the ids of requests made for tables that joined the capture.
pub const TABLES_ADDED_PREFIX: &str = "tables-added-";

/// Finished tables-added requests shown in the status (spec requests show while listed).
const TABLES_ADDED_SHOWN: usize = 8;

/// Where incremental snapshots stand, stored in the bookmark of every page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncrementalState {
    /// The captured tables (`OWNER.TABLE`) as of the last page: a captured table missing here
    /// joined the capture since.
    #[serde(default)]
    pub known_tables: BTreeSet<String>,
    /// Requests not finished, in the order they run; the first is the one being read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue: Vec<RequestProgress>,
    /// Every finished request by id: never read again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub finished: BTreeMap<String, FinishedRequest>,
}

/// Whether a request comes from the spec or from tables that joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Spec,
    TablesAdded,
}

/// A request not finished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestProgress {
    pub id: String,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// When its first chunk was written; `None` while queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    pub tables: Vec<TableProgress>,
}

/// One table of a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableProgress {
    /// `OWNER.TABLE` as written in the request (as in spec.tables).
    pub table: String,
    /// The table's chunks (ROWID ranges of its extents, or key ranges of an index-organised
    /// table), planned when its first chunk is read and kept until the table is done, so a
    /// restart reads the same chunks; `None` before. Only the chunks not written yet are kept,
    /// packed ([`ChunkPlan`]), so the bookmark stays small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranges: Option<ChunkPlan>,
    /// Chunks written: the index of the next one.
    #[serde(default)]
    pub chunks: u64,
    /// Rows written.
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub done: bool,
}

/// A request over for good.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishedRequest {
    pub state: SnapshotRequestState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    pub finished_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each table and the rows written of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<(String, u64)>,
}

/// A change of a request's state, for the log (the operator derives its Events from the status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub id: String,
    pub state: SnapshotRequestState,
}

/// The next chunk to read: the request, the table within it, and the chunk's range (`None`:
/// the table's chunks are not planned yet, [`IncrementalState::plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextChunk {
    pub id: String,
    pub table: String,
    pub condition: Option<String>,
    /// The chunk's index among the table's.
    pub index: u64,
    pub range: Option<RowRange>,
    /// For a request of tables that joined the capture: the SCN mining went on from when they
    /// joined (its id names it).
    pub joined_scn: Option<u64>,
}

impl NextChunk {
    /// Whether the chunk must wait for open transactions (`oldest_open`: the first SCN of the
    /// oldest one). A transaction that began before its tables joined may have written them
    /// before: those rows were never mined as captured (mining asks for the captured tables'
    /// rows only, and a journaled transaction's rows came from the journal), and a read before
    /// the transaction commits does not see them either, so they would reach no consumer.
    /// Once every such transaction has ended, a read as of a later SCN has their rows.
    pub fn waits_for(&self, oldest_open: Option<u64>) -> bool {
        matches!((self.joined_scn, oldest_open), (Some(joined), Some(oldest)) if oldest < joined)
    }
}

impl IncrementalState {
    /// The state of a capture that first meets incremental snapshots: the tables captured now
    /// are known (they were snapshotted, or the capture streams without one), nothing queued.
    pub fn new(captured: impl IntoIterator<Item = String>) -> Self {
        Self {
            known_tables: captured.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Brings the queue in line with the spec's requests: new ids queued, ids no longer listed
    /// cancelled (spec requests only), finished ids left finished.
    pub fn reconcile(&mut self, requests: &[SnapshotRequest], now: Timestamp) -> Vec<Transition> {
        let mut transitions = Vec::new();
        let listed: BTreeSet<&str> = requests.iter().map(|r| r.id.as_str()).collect();
        let (kept, removed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|r| r.origin == Origin::TablesAdded || listed.contains(r.id.as_str()));
        self.queue = kept;
        for request in removed {
            transitions.push(self.finish(request, SnapshotRequestState::Cancelled, None, now));
        }
        for request in requests {
            let known = self.finished.contains_key(&request.id)
                || self.queue.iter().any(|r| r.id == request.id);
            if known {
                continue;
            }
            self.queue.push(RequestProgress {
                id: request.id.clone(),
                origin: Origin::Spec,
                condition: request.condition.clone(),
                started_at: None,
                tables: request
                    .tables
                    .iter()
                    .map(|table| TableProgress::new(table.0.clone()))
                    .collect(),
            });
            transitions.push(Transition {
                id: request.id.clone(),
                state: SnapshotRequestState::Pending,
            });
        }
        transitions
    }

    /// The captured tables now, with the SCN mining goes on from: tables not known before are
    /// known from now on and, when `snapshot` (`tablesAdded: snapshot`), queued for a read.
    pub fn tables_joined(
        &mut self,
        captured: impl IntoIterator<Item = String>,
        scn: u64,
        snapshot: bool,
    ) -> Option<Transition> {
        let joined: Vec<String> = captured
            .into_iter()
            .filter(|table| !self.known_tables.contains(table))
            .collect();
        if joined.is_empty() {
            return None;
        }
        self.known_tables.extend(joined.iter().cloned());
        if !snapshot {
            return None;
        }
        let id = format!("{TABLES_ADDED_PREFIX}{scn}");
        if self.finished.contains_key(&id) || self.queue.iter().any(|r| r.id == id) {
            return None;
        }
        self.queue.push(RequestProgress {
            id: id.clone(),
            origin: Origin::TablesAdded,
            condition: None,
            started_at: None,
            tables: joined.into_iter().map(TableProgress::new).collect(),
        });
        Some(Transition {
            id,
            state: SnapshotRequestState::Pending,
        })
    }

    /// The chunk to read next: the first table not done of the first queued request.
    pub fn next_chunk(&self) -> Option<NextChunk> {
        let request = self.queue.first()?;
        let table = request.tables.iter().find(|t| !t.done)?;
        let range = (table.ranges.as_ref()).and_then(|plan| plan.get(table.chunks).cloned());
        let joined_scn = match request.origin {
            Origin::TablesAdded => request
                .id
                .strip_prefix(TABLES_ADDED_PREFIX)
                .and_then(|scn| scn.parse().ok()),
            Origin::Spec => None,
        };
        Some(NextChunk {
            id: request.id.clone(),
            table: table.table.clone(),
            condition: request.condition.clone(),
            index: table.chunks,
            range,
            joined_scn,
        })
    }

    /// Stores the chunks planned for `chunk.table` (committed with the first chunk's page); the
    /// chunk to read is then the next one. A table with no chunks (no segment) is done.
    pub fn plan(
        &mut self,
        chunk: &NextChunk,
        ranges: Vec<RowRange>,
        now: Timestamp,
    ) -> Vec<Transition> {
        let empty = ranges.is_empty();
        if let Some(table) = self.table_mut(chunk) {
            table.ranges = Some(ChunkPlan::new(ranges));
        }
        if empty {
            return self.record_chunk(chunk, 0, now);
        }
        Vec::new()
    }

    fn table_mut(&mut self, chunk: &NextChunk) -> Option<&mut TableProgress> {
        self.queue
            .iter_mut()
            .find(|r| r.id == chunk.id)?
            .tables
            .iter_mut()
            .find(|t| !t.done && t.table == chunk.table)
    }

    /// Records chunk `chunk.index` of `chunk.table` written, with `rows` rows; the table is done
    /// after its last planned chunk. Returns the transitions it makes (started, done). A chunk
    /// of a request no longer queued changes nothing.
    pub fn record_chunk(
        &mut self,
        chunk: &NextChunk,
        rows: u64,
        now: Timestamp,
    ) -> Vec<Transition> {
        let mut transitions = Vec::new();
        let Some(index) = self.queue.iter().position(|r| r.id == chunk.id) else {
            return transitions;
        };
        let request = &mut self.queue[index];
        if request.started_at.is_none() {
            request.started_at = Some(now);
            transitions.push(Transition {
                id: request.id.clone(),
                state: SnapshotRequestState::Running,
            });
        }
        if let Some(table) = request
            .tables
            .iter_mut()
            .find(|t| !t.done && t.table == chunk.table)
            .filter(|t| t.chunks == chunk.index)
        {
            table.chunks += 1;
            table.rows += rows;
            let planned = table.ranges.as_ref().map_or(0, ChunkPlan::len);
            // The chunks written are needed no more: the bookmark carries only the rest.
            if let Some(plan) = table.ranges.as_mut() {
                plan.forget_before(table.chunks);
            }
            if table.chunks >= planned {
                table.done = true;
                // The plan is needed no more: the bookmark stays small.
                table.ranges = None;
            }
        }
        if request.tables.iter().all(|t| t.done) {
            let request = self.queue.remove(index);
            transitions.push(self.finish(request, SnapshotRequestState::Done, None, now));
        }
        transitions
    }

    /// The request `id` cannot be read (`message` says why): it is over for good.
    pub fn fail(&mut self, id: &str, message: String, now: Timestamp) -> Option<Transition> {
        let index = self.queue.iter().position(|r| r.id == id)?;
        let request = self.queue.remove(index);
        Some(self.finish(request, SnapshotRequestState::Failed, Some(message), now))
    }

    /// Moves `request` to the finished ones in `state`.
    fn finish(
        &mut self,
        request: RequestProgress,
        state: SnapshotRequestState,
        message: Option<String>,
        now: Timestamp,
    ) -> Transition {
        let transition = Transition {
            id: request.id.clone(),
            state,
        };
        self.finished.insert(
            request.id,
            FinishedRequest {
                state,
                started_at: request.started_at,
                finished_at: now,
                message,
                tables: request
                    .tables
                    .into_iter()
                    .map(|t| (t.table, t.rows))
                    .collect(),
            },
        );
        transition
    }

    /// Whether a request is queued.
    pub fn is_busy(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The requests `status.snapshot.requests` shows: the queued ones (the first `Running` once
    /// its first chunk is written), the finished ones the spec still lists, and the latest
    /// finished tables-added ones. `estimate` gives a table's rows by its statistics.
    pub fn statuses(
        &self,
        requests: &[SnapshotRequest],
        mut estimate: impl FnMut(&str) -> Option<u64>,
    ) -> Vec<SnapshotRequestStatus> {
        let mut shown: Vec<SnapshotRequestStatus> = self
            .queue
            .iter()
            .map(|request| {
                let state = if request.started_at.is_some() {
                    SnapshotRequestState::Running
                } else {
                    SnapshotRequestState::Pending
                };
                let mut running_table = state == SnapshotRequestState::Running;
                SnapshotRequestStatus {
                    id: request.id.clone(),
                    state,
                    started_at: request.started_at.map(Time),
                    finished_at: None,
                    message: None,
                    tables: request
                        .tables
                        .iter()
                        .map(|table| {
                            let state = if table.done {
                                SnapshotRequestState::Done
                            } else if std::mem::take(&mut running_table) {
                                SnapshotRequestState::Running
                            } else {
                                SnapshotRequestState::Pending
                            };
                            SnapshotTableStatus {
                                table: table.table.clone(),
                                state,
                                rows_read: table.rows,
                                rows_estimate: estimate(&table.table),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let listed = |id: &str| requests.iter().any(|r| r.id == id);
        let mut added: Vec<(&String, &FinishedRequest)> = self
            .finished
            .iter()
            .filter(|(id, _)| id.starts_with(TABLES_ADDED_PREFIX) && !listed(id))
            .collect();
        added.sort_by_key(|(_, finished)| std::cmp::Reverse(finished.finished_at));
        added.truncate(TABLES_ADDED_SHOWN);
        let in_spec = self.finished.iter().filter(|(id, _)| listed(id));
        for (id, finished) in in_spec.chain(added) {
            shown.push(SnapshotRequestStatus {
                id: id.clone(),
                state: finished.state,
                started_at: finished.started_at.map(Time),
                finished_at: Some(Time(finished.finished_at)),
                message: finished.message.clone(),
                tables: finished
                    .tables
                    .iter()
                    .map(|(table, rows)| SnapshotTableStatus {
                        table: table.clone(),
                        state: finished.state,
                        rows_read: *rows,
                        rows_estimate: None,
                    })
                    .collect(),
            });
        }
        shown
    }
}

impl TableProgress {
    fn new(table: String) -> Self {
        Self {
            table,
            ranges: None,
            chunks: 0,
            rows: 0,
            done: false,
        }
    }
}

#[cfg(test)]
mod tests;
