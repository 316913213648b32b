//! From a committed transaction's rows to change events.
//!
//! The buffer hands over a committed transaction's rows in redo order, undo rows already
//! applied. [`TransactionAssembler`] turns them into [`ChangeEvent`]s, one row at a time, holding
//! back at most one event: the latest row change, because LOB content for it may still follow.
//!
//! - INSERT / UPDATE / DELETE: SQL_REDO is parsed and typed by the table's current dictionary.
//!   An UPDATE's `after` is its before image with the SET applied (complete where the before image
//!   is); `before` never holds LOB columns.
//! - LOB content is folded into the held event: an UPDATE setting only LOB columns of the same row
//!   (how LogMiner logs small LOBs after an `EMPTY_CLOB()` insert), or SEL_LOB_LOCATOR followed by
//!   LOB_WRITE / LOB_TRIM / LOB_ERASE pieces ([`lob`]). A locator for another row starts an UPDATE
//!   event of its own for that row, continuing the LOB value an earlier event of the transaction
//!   set for that ROWID when it is still kept ([`known_lobs`], a fixed budget, oldest forgotten
//!   first, so memory does not grow with the transaction).
//! - Extended strings (`MAX_STRING_SIZE = EXTENDED`, a VARCHAR2 / NVARCHAR2 / RAW value over
//!   4000 bytes): a 32K_BEGIN row names the column and the row, its 32K_WRITE rows carry the
//!   value's pieces in order, 32K_END closes it. The pieces, joined, are the column's whole value
//!   in the held event when the begin names its row (the DML row holds only a placeholder in the
//!   column's place), else in an UPDATE event of its own, as a LOB locator does. The joined value
//!   is typed by the column's type, so a value longer than the column is refused (CDC-2002).
//!   Debezium merges the same rows the same way (`TransactionCommitConsumer`,
//!   `ExtendedStringUnderConstruction`, DBZ-8039).
//! - DDL on a captured table: a `Ddl` event with the statement (LogMiner's appended `;` removed),
//!   or a `Truncate` event; then the table's columns are reloaded ([`TableLookup::refresh`]) so
//!   later rows use the new shape.
//! - What cannot be rendered: UNSUPPORTED rows, `Unsupported Type` values, XML DOC rows
//!   (CDC-6001); a dictionary that does not fit the redo (STATUS 2, a value that does not fit its
//!   column: CDC-2002); a LOB change that cannot be rebuilt (CDC-6002). With
//!   `onUnsupported: skip` the change is dropped and counted instead; nothing is ever emitted
//!   padded, truncated or guessed.
//! - A row LogMiner names by object number (`"UNKNOWN"."OBJ# n"`, `COL n` = `HEXTORAW('..')`:
//!   the online catalog no longer fits the version it was written with) is matched to the
//!   captured table's version in force at its SCN and decoded from the internal values
//!   ([`TableLookup::numbered_row`], `schema_history::object_row`). What cannot be matched or
//!   decoded stops (CDC-2002) naming SCN, transaction and object, even under
//!   `onUnsupported: skip`: the change belongs to a captured table and is whole in the redo, so
//!   dropping it would lose data the capture could have read with the right history.
//! - Rows of tables that are not captured, and transaction control rows, produce nothing.

pub mod known_lobs;
pub mod lob;

use std::sync::Arc;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::OnUnsupported;

use self::known_lobs::KnownLobs;
use self::lob::{LobBuilder, LobError, LobFlavor};
use crate::dictionary::{LobKind, TableSchema};
use crate::event::{ChangeEvent, Operation, SourceInfo, TransactionStart};
use crate::redo::ast::{ColumnValue, DmlStatement};
use crate::redo::ddl::{DdlKind, parse_ddl};
use crate::redo::extended::{ExtendedPiece, parse_extended_begin, parse_extended_write};
use crate::redo::lob::{LobData, LobLocator, LobStatement, parse_lob};
use crate::redo::parse_dml;
use crate::schema_history::object_row::{
    NumberedValue, ObjectRowError, ResolvedRow, object_number,
};
use crate::source::row::PLACEHOLDER_ROW_ID;
use crate::source::{LogMinerRow, OperationCode, Xid};
use crate::stop::Stop;
use crate::value::{Row, Value, ValueError, typed_row};

/// The captured tables' current dictionary.
pub trait TableLookup {
    /// The schema of a captured table; `None` for a table that is not captured. `object` is
    /// the row's `DATA_OBJ#` when the source gives it: it names the table whatever LogMiner
    /// called it when mining (a renamed table's rows carry the new name).
    fn table(&mut self, owner: &str, table: &str, object: Option<u64>) -> Option<Arc<TableSchema>>;
    /// Reloads a table's columns after a DDL row on it.
    fn refresh(&mut self, owner: &str, table: &str) -> Result<(), String>;
    /// A row LogMiner names by object number: the captured table's version in force at `scn`
    /// with `values` typed into a row of it (`schema_history::object_row::resolve`); `None`
    /// when the object is not a captured table.
    fn numbered_row(
        &mut self,
        object_id: u64,
        scn: u64,
        values: &[NumberedValue],
    ) -> Option<Result<ResolvedRow, ObjectRowError>>;
}

/// The owner LogMiner writes for an object it names by number.
const NUMBERED_OWNER: &str = "UNKNOWN";

/// The committed transaction being assembled.
#[derive(Clone, Debug)]
pub struct CommitInfo {
    pub xid: Xid,
    pub commit_scn: u64,
    pub commit_time: Option<Timestamp>,
}

/// A change that cannot be emitted as logged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AssembleError {
    #[error("{table} at SCN {scn}: LogMiner could not render the change ({what})")]
    Unsupported {
        table: String,
        scn: u64,
        what: String,
    },
    #[error("{table} at SCN {scn}: the redo does not fit the current dictionary ({message})")]
    DictionaryMismatch {
        table: String,
        scn: u64,
        message: String,
    },
    #[error("{table}.{column} at SCN {scn}: {message}")]
    PartialLob {
        table: String,
        column: String,
        scn: u64,
        message: String,
    },
    #[error("{table}: the columns could not be reloaded after DDL: {message}")]
    Refresh { table: String, message: String },
    #[error("transaction {xid}: {message}")]
    NumberedRow { xid: Xid, message: String },
}

impl AssembleError {
    /// Whether `onUnsupported: skip` drops the change instead of stopping.
    fn skippable(&self) -> bool {
        !matches!(self, Self::Refresh { .. } | Self::NumberedRow { .. })
    }

    /// The typed stop for the error.
    pub fn stop(&self) -> Stop {
        let (code, remedy) = match self {
            Self::Unsupported { .. } => (
                StopCode::UnsupportedChange,
                "set spec.mining.onUnsupported to skip to drop such changes, or stop capturing the table",
            ),
            Self::DictionaryMismatch { .. } => (
                StopCode::DictionaryMismatch,
                "re-snapshot the table, or set spec.mining.onUnsupported to skip",
            ),
            Self::PartialLob { .. } => (
                StopCode::PartialLobWrite,
                "re-read the row from the table (a snapshot), or set spec.mining.onUnsupported to skip",
            ),
            Self::Refresh { .. } => (
                StopCode::DictionaryMismatch,
                "check that the capture user can read the table's dictionary",
            ),
            Self::NumberedRow { .. } => (
                StopCode::DictionaryMismatch,
                "the schema history lacks the table version the row was written with: \
                 re-snapshot the table (onUnsupported: skip does not drop a captured table's row)",
            ),
        };
        Stop::new(code, format!("{self}; {remedy}"))
    }
}

/// What one transaction produced besides its events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssembleStats {
    pub events: u64,
    /// Changes dropped under `onUnsupported: skip`.
    pub skipped: u64,
    /// LOB pieces folded into events (they count toward staged-record limits).
    pub lob_pieces: u64,
}

/// The LOB column being rebuilt for the held event.
struct ActiveLob {
    column: usize,
    builder: LobBuilder,
    scn: u64,
}

/// The extended string being joined for the held event.
struct ActiveExtended {
    column: usize,
    /// The pieces so far: text, or hex digits for a RAW column.
    joined: String,
    hex: bool,
    scn: u64,
}

/// Assembles one committed transaction.
pub struct TransactionAssembler<'l, L: TableLookup> {
    lookup: &'l mut L,
    on_unsupported: OnUnsupported,
    time_zone: TimeZone,
    commit: CommitInfo,
    held: Option<ChangeEvent>,
    lob: Option<ActiveLob>,
    extended: Option<ActiveExtended>,
    /// LOB values emitted so far, for pieces that continue them after other changes.
    known_lobs: KnownLobs,
    /// The transaction's first emitted change, for every event's `transaction_start`.
    start: Option<TransactionStart>,
    stats: AssembleStats,
}

impl<L: TableLookup> std::fmt::Debug for TransactionAssembler<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionAssembler")
            .field("commit", &self.commit)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<'l, L: TableLookup> TransactionAssembler<'l, L> {
    /// `time_zone` is the database's: LogMiner's TIMESTAMP column is a DATE in it.
    pub fn new(
        lookup: &'l mut L,
        commit: CommitInfo,
        on_unsupported: OnUnsupported,
        time_zone: TimeZone,
    ) -> Self {
        Self {
            lookup,
            on_unsupported,
            time_zone,
            commit,
            held: None,
            lob: None,
            extended: None,
            known_lobs: KnownLobs::default(),
            start: None,
            stats: AssembleStats::default(),
        }
    }

    /// Feeds the next row (CSF parts already joined).
    pub fn push(
        &mut self,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        let outcome = self.apply(row, emit);
        self.tolerate(outcome)
    }

    /// Emits what is held and returns the transaction's figures.
    pub fn finish(
        mut self,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<AssembleStats, AssembleError> {
        let outcome = self.release(emit);
        self.tolerate(outcome)?;
        Ok(self.stats)
    }

    /// Under `skip`, a skippable error drops the change and is counted.
    fn tolerate(&mut self, outcome: Result<(), AssembleError>) -> Result<(), AssembleError> {
        match outcome {
            Err(error) if self.on_unsupported == OnUnsupported::Skip && error.skippable() => {
                tracing::warn!(%error, "change skipped (onUnsupported: skip)");
                self.stats.skipped += 1;
                Ok(())
            }
            other => other,
        }
    }

    fn apply(
        &mut self,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        if row.rollback {
            // Undo rows were applied by the buffer; one reaching here cancels nothing.
            return Ok(());
        }
        let (Some(owner), Some(table_name)) = (row.seg_owner.as_deref(), row.table_name.as_deref())
        else {
            return Ok(());
        };
        if owner == NUMBERED_OWNER
            && let Some(object_id) = object_number(table_name)
        {
            return self.numbered(object_id, row, emit);
        }
        let Some(table) = self.lookup.table(owner, table_name, row.object_id) else {
            return Ok(());
        };
        match row.operation {
            OperationCode::Insert | OperationCode::Update | OperationCode::Delete => {
                self.dml(&table, row, emit)
            }
            OperationCode::SelectLobLocator
            | OperationCode::LobWrite
            | OperationCode::LobTrim
            | OperationCode::LobErase => self.lob_row(&table, row, emit),
            OperationCode::ExtendedStringBegin
            | OperationCode::ExtendedStringWrite
            | OperationCode::ExtendedStringEnd => self.extended_row(&table, row, emit),
            OperationCode::Ddl => self.ddl(&table, row, emit),
            OperationCode::Unsupported
            | OperationCode::XmlDocBegin
            | OperationCode::XmlDocWrite
            | OperationCode::XmlDocEnd => {
                self.release(emit)?;
                Err(AssembleError::Unsupported {
                    table: table.qualified_name(),
                    scn: row.scn,
                    what: format!("{} row", row.operation.name()),
                })
            }
            _ => Ok(()),
        }
    }

    fn dml(
        &mut self,
        table: &Arc<TableSchema>,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        // The table's name is only needed for an error: built then, not for every row.
        let mismatch = |message: String| AssembleError::DictionaryMismatch {
            table: table.qualified_name(),
            scn: row.scn,
            message,
        };
        if row.status == 2 {
            self.release(emit)?;
            return Err(mismatch(format!(
                "LogMiner marked the SQL invalid{}",
                row.info
                    .as_deref()
                    .map(|i| format!(" ({i})"))
                    .unwrap_or_default()
            )));
        }
        let sql = row.sql_redo.as_deref().unwrap_or_default();
        let statement = match parse_dml(sql) {
            Ok(statement) => statement,
            Err(error) => {
                self.release(emit)?;
                return Err(AssembleError::Unsupported {
                    table: table.qualified_name(),
                    scn: row.scn,
                    what: format!("SQL_REDO not understood: {error}"),
                });
            }
        };
        let typed = |values: &[_]| typed_row(table, values).map_err(|e: ValueError| e.to_string());
        let (op, before, after, set_columns) = match &statement {
            DmlStatement::Insert { values, .. } => (
                Operation::Create,
                None,
                Some(typed(values).map_err(mismatch)?),
                Vec::new(),
            ),
            DmlStatement::Update { set, where_, .. } => {
                let before = typed(where_).map_err(mismatch)?;
                let changes = typed(set).map_err(mismatch)?;
                let columns: Vec<usize> = set
                    .iter()
                    .filter_map(|(column, _)| table.column_index(column))
                    .collect();
                let after = updated(&before, &changes, columns.iter().copied());
                (Operation::Update, Some(before), Some(after), columns)
            }
            DmlStatement::Delete { where_, .. } => (
                Operation::Delete,
                Some(typed(where_).map_err(mismatch)?),
                None,
                Vec::new(),
            ),
        };
        for image in [&before, &after].into_iter().flatten() {
            if (0..table.columns().len()).any(|i| matches!(image.get(i), Some(Value::Unsupported)))
            {
                self.release(emit)?;
                return Err(AssembleError::Unsupported {
                    table: table.qualified_name(),
                    scn: row.scn,
                    what: "a column of a type LogMiner cannot render (Unsupported Type)".to_owned(),
                });
            }
        }

        // An UPDATE that sets only LOB columns of the held row is that row's LOB content.
        if op == Operation::Update
            && !set_columns.is_empty()
            && set_columns.iter().all(|&i| is_lob(table, i))
            && self.fold_lob_update(table, before.as_ref(), after.as_ref(), &set_columns, &row)?
        {
            return Ok(());
        }

        self.release(emit)?;
        self.hold(op, Arc::clone(table), before, after, &row);
        Ok(())
    }

    /// A row named by object number, of a captured table: a change event of the table's version
    /// in force at the row's SCN, its values decoded from their internal bytes. Nothing for
    /// another object (the contents query keeps every `OBJ#` row, `NUMBERED_OBJECTS`).
    fn numbered(
        &mut self,
        object_id: u64,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        if self.lookup.numbered_row(object_id, row.scn, &[]).is_none() {
            return Ok(());
        }
        self.release(emit)?;
        let scn = row.scn;
        let stop = |problem: String| AssembleError::NumberedRow {
            xid: row.xid,
            message: format!(
                "the row at SCN {scn} names object {object_id} (OBJ# {object_id}) of a captured \
                 table: {problem}"
            ),
        };
        if !matches!(
            row.operation,
            OperationCode::Insert | OperationCode::Update | OperationCode::Delete
        ) {
            return Err(stop(format!(
                "a {} row, which the capture rebuilds only with column names",
                row.operation.name()
            )));
        }
        let sql = row.sql_redo.as_deref().unwrap_or_default();
        let statement =
            parse_dml(sql).map_err(|error| stop(format!("SQL_REDO not understood: {error}")))?;
        let mut resolve = |values: &[_]| -> Result<ResolvedRow, AssembleError> {
            let numbered = NumberedValue::from_parsed(values).map_err(|e| stop(e.to_string()))?;
            match self.lookup.numbered_row(object_id, scn, &numbered) {
                Some(Ok(resolved)) => Ok(resolved),
                Some(Err(error)) => Err(AssembleError::NumberedRow {
                    xid: row.xid,
                    message: error.to_string(),
                }),
                None => Err(stop("the object is no longer captured".to_owned())),
            }
        };
        let (op, table, before, after) = match &statement {
            DmlStatement::Insert { values, .. } => {
                let inserted = resolve(values)?;
                (Operation::Create, inserted.table, None, Some(inserted.row))
            }
            DmlStatement::Update { set, where_, .. } => {
                let before = resolve(where_)?;
                let changes = resolve(set)?;
                let after = updated(&before.row, &changes.row, 0..changes.row.len());
                (
                    Operation::Update,
                    before.table,
                    Some(before.row),
                    Some(after),
                )
            }
            DmlStatement::Delete { where_, .. } => {
                let deleted = resolve(where_)?;
                (Operation::Delete, deleted.table, Some(deleted.row), None)
            }
        };
        self.hold(op, table, before, after, &row);
        Ok(())
    }

    /// Folds an UPDATE of LOB columns into the held event when it names the same row; returns
    /// whether it did.
    fn fold_lob_update(
        &mut self,
        table: &Arc<TableSchema>,
        before: Option<&Row>,
        after: Option<&Row>,
        set_columns: &[usize],
        row: &LogMinerRow,
    ) -> Result<bool, AssembleError> {
        let (Some(held), Some(after)) = (self.held.as_ref(), after) else {
            return Ok(false);
        };
        let same = Arc::ptr_eq(&held.table, table)
            && held.op != Operation::Delete
            && before.is_none_or(|before| same_row(table, held, before));
        if !same {
            return Ok(false);
        }
        self.finish_lob()?;
        if let Some(held) = self.held.as_mut() {
            let held_after = held
                .after
                .get_or_insert_with(|| Row::absent(table.columns().len()));
            for &index in set_columns {
                if let Some(value) = after.get(index) {
                    held_after.set(index, value.clone());
                }
            }
            adopt_row_id(held, &row.row_id);
        }
        Ok(true)
    }

    fn lob_row(
        &mut self,
        table: &Arc<TableSchema>,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        let name = table.qualified_name();
        let sql = row.sql_redo.as_deref().unwrap_or_default();
        let statement = parse_lob(sql).map_err(|error| AssembleError::Unsupported {
            table: name.clone(),
            scn: row.scn,
            what: format!("LOB SQL_REDO not understood: {error}"),
        })?;
        self.stats.lob_pieces += u64::from(row.operation != OperationCode::SelectLobLocator);
        let partial = |message: String, column: &str| AssembleError::PartialLob {
            table: name.clone(),
            column: column.to_owned(),
            scn: row.scn,
            message,
        };
        match statement {
            LobStatement::Locator(locator) => self.start_lob(table, &locator, &row, emit),
            LobStatement::Write(write) => {
                if let Some(locator) = &write.locator {
                    self.start_lob(table, locator, &row, emit)?;
                }
                let Some(active) = self.lob.as_mut() else {
                    return Err(partial("a LOB_WRITE without its locator".to_owned(), "?"));
                };
                let column = table.columns()[active.column].name.clone();
                let written = match &write.data {
                    LobData::Text(text) => active.builder.write_text(text, write.offset),
                    LobData::Hex(hex) => match crate::value::binary::decode_hex(hex) {
                        Ok(bytes) => active.builder.write_bytes(&bytes, write.offset),
                        Err(_) => Err(LobError::BadPiece("hex")),
                    },
                };
                written.map_err(|error| partial(error.to_string(), &column))
            }
            LobStatement::Trim { new_length, .. } => {
                match self.lob.as_mut() {
                    Some(active) => active.builder.trim(new_length),
                    None => return Err(partial("a LOB_TRIM without its locator".to_owned(), "?")),
                }
                Ok(())
            }
            LobStatement::Erase { amount, offset, .. } => {
                match self.lob.as_mut() {
                    Some(active) => active.builder.erase(amount, offset),
                    None => return Err(partial("a LOB_ERASE without its locator".to_owned(), "?")),
                }
                Ok(())
            }
        }
    }

    /// The event a LOB's or an extended string's pieces go into: the held event when it changes
    /// the same row (identified by `where_`), else a new UPDATE event of that row, released
    /// events before it. Returns the column's index and whether the held event was kept.
    fn hold_row_of_piece(
        &mut self,
        table: &Arc<TableSchema>,
        kind: &str,
        column_name: &str,
        where_: &[ColumnValue<'_>],
        row: &LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(usize, bool), AssembleError> {
        let name = table.qualified_name();
        let Some(column) = table.column_index(column_name) else {
            return Err(AssembleError::DictionaryMismatch {
                table: name,
                scn: row.scn,
                message: format!("{kind} {column_name} is not in the dictionary"),
            });
        };
        let key = typed_row(table, where_).map_err(|error| AssembleError::DictionaryMismatch {
            table: name,
            scn: row.scn,
            message: error.to_string(),
        })?;
        let attaches = self.held.as_ref().is_some_and(|held| {
            Arc::ptr_eq(&held.table, table)
                && held.op != Operation::Delete
                && same_row(table, held, &key)
        });
        if !attaches {
            self.release(emit)?;
            let (before, after) = (Some(key.clone()), Some(key));
            self.hold(Operation::Update, Arc::clone(table), before, after, row);
        }
        Ok((column, attaches))
    }

    /// A SEL_LOB_LOCATOR: the held event's row gets the LOB, or a new UPDATE event starts.
    fn start_lob(
        &mut self,
        table: &Arc<TableSchema>,
        locator: &LobLocator<'_>,
        row: &LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        self.finish_lob()?;
        let name = table.qualified_name();
        let (column, attaches) = self.hold_row_of_piece(
            table,
            "LOB column",
            &locator.column,
            &locator.where_,
            row,
            emit,
        )?;
        // The value before the pieces: the held event's when it sets the LOB, else one an
        // earlier event of this transaction set for the same row (the locator row carries the
        // row's ROWID; an event in between that does not set the LOB leaves it as it was).
        let known = self
            .held
            .as_ref()
            .filter(|_| attaches)
            .and_then(|held| held.after.as_ref())
            .and_then(|after| after.get(column))
            .or_else(|| self.known_lobs.get(&name, &row.row_id, column));
        let flavor = match table.columns()[column].data_type.lob_kind() {
            Some(LobKind::Blob) => LobFlavor::Binary,
            _ => LobFlavor::Character,
        };
        self.lob = Some(ActiveLob {
            column,
            builder: LobBuilder::new(flavor, known),
            scn: row.scn,
        });
        if let Some(held) = self.held.as_mut() {
            adopt_row_id(held, &row.row_id);
        }
        Ok(())
    }

    /// A 32K_BEGIN, 32K_WRITE or 32K_END row.
    fn extended_row(
        &mut self,
        table: &Arc<TableSchema>,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        let name = table.qualified_name();
        let sql = row.sql_redo.as_deref().unwrap_or_default();
        let not_understood = |error: crate::redo::ParseError| AssembleError::Unsupported {
            table: name.clone(),
            scn: row.scn,
            what: format!("{} SQL_REDO not understood: {error}", row.operation.name()),
        };
        match row.operation {
            OperationCode::ExtendedStringBegin => {
                let begin = parse_extended_begin(sql).map_err(not_understood)?;
                self.finish_lob()?;
                let (column, _) = self.hold_row_of_piece(
                    table,
                    "column",
                    &begin.column,
                    &begin.where_,
                    &row,
                    emit,
                )?;
                if let Some(held) = self.held.as_mut() {
                    adopt_row_id(held, &row.row_id);
                }
                let hex = matches!(
                    table.columns()[column].data_type,
                    crate::dictionary::OracleType::Raw { .. }
                );
                self.extended = Some(ActiveExtended {
                    column,
                    joined: String::new(),
                    hex,
                    scn: row.scn,
                });
                Ok(())
            }
            OperationCode::ExtendedStringWrite => {
                let piece = parse_extended_write(sql).map_err(not_understood)?;
                self.stats.lob_pieces += 1;
                let Some(active) = self.extended.as_mut() else {
                    return Err(AssembleError::PartialLob {
                        table: name,
                        column: "?".to_owned(),
                        scn: row.scn,
                        message: "a 32K_WRITE without its 32K_BEGIN".to_owned(),
                    });
                };
                match (piece, active.hex) {
                    (ExtendedPiece::Text(text), false) | (ExtendedPiece::Hex(text), true) => {
                        active.joined.push_str(&text);
                        Ok(())
                    }
                    _ => Err(AssembleError::DictionaryMismatch {
                        table: name,
                        scn: row.scn,
                        message: format!(
                            "a 32K_WRITE piece of the wrong kind for column {}",
                            table.columns()[active.column].name
                        ),
                    }),
                }
            }
            _ => self.finish_extended(),
        }
    }

    /// Puts the joined extended string into the held event, typed (and length-checked) by the
    /// column's type.
    fn finish_extended(&mut self) -> Result<(), AssembleError> {
        let Some(active) = self.extended.take() else {
            return Ok(());
        };
        let Some(held) = self.held.as_mut() else {
            return Ok(());
        };
        let column = &held.table.columns()[active.column];
        let raw = if active.hex {
            crate::redo::RawValue::Call {
                name: "HEXTORAW".into(),
                args: vec![crate::redo::RawValue::Text(active.joined.into())],
            }
        } else {
            crate::redo::RawValue::Text(active.joined.into())
        };
        match crate::value::typed(&raw, column) {
            Ok(value) => {
                let columns = held.table.columns().len();
                held.after
                    .get_or_insert_with(|| Row::absent(columns))
                    .set(active.column, value);
                Ok(())
            }
            Err(error) => {
                let table = held.table.qualified_name();
                // The held event cannot be emitted as logged: it goes with the error (or skip).
                self.held = None;
                Err(AssembleError::DictionaryMismatch {
                    table,
                    scn: active.scn,
                    message: error.to_string(),
                })
            }
        }
    }

    /// Puts the rebuilt LOB value (or extended string) into the held event.
    fn finish_lob(&mut self) -> Result<(), AssembleError> {
        self.finish_extended()?;
        let Some(active) = self.lob.take() else {
            return Ok(());
        };
        let Some(held) = self.held.as_mut() else {
            return Ok(());
        };
        match active.builder.finish() {
            Ok(value) => {
                let columns = held.table.columns().len();
                held.after
                    .get_or_insert_with(|| Row::absent(columns))
                    .set(active.column, value);
                Ok(())
            }
            Err(error) => {
                let column = held.table.columns()[active.column].name.clone();
                let table = held.table.qualified_name();
                // The held event is incomplete: it is dropped with the error (or the skip).
                self.held = None;
                Err(AssembleError::PartialLob {
                    table,
                    column,
                    scn: active.scn,
                    message: error.to_string(),
                })
            }
        }
    }

    fn ddl(
        &mut self,
        table: &Arc<TableSchema>,
        row: LogMinerRow,
        emit: &mut dyn FnMut(ChangeEvent),
    ) -> Result<(), AssembleError> {
        // DDL Oracle runs on its own behalf (`INTERNAL DDL ...`, such as the rename of a table
        // dropped into the recycle bin) is no statement anyone issued: neither an event nor a
        // reason to read the table's structure again. The real client's query already leaves
        // these rows out (`sql::NOT_INTERNAL_DDL`, as Debezium does, DBZ-2916); this keeps any
        // source that does not filter (a simulator, a changed query) from emitting them.
        if row
            .info
            .as_deref()
            .is_some_and(|info| info.starts_with("INTERNAL DDL"))
        {
            return Ok(());
        }
        self.release(emit)?;
        let sql = row.sql_redo.clone().unwrap_or_default();
        let issued = sql.strip_suffix(';').unwrap_or(&sql).to_owned();
        let truncate = parse_ddl(&sql).is_ok_and(|ddl| ddl.kind == DdlKind::TruncateTable);
        let op = if truncate {
            Operation::Truncate
        } else {
            Operation::Ddl { sql: issued }
        };
        let event = ChangeEvent {
            op,
            table: Arc::clone(table),
            before: None,
            after: None,
            source: self.source(&row),
        };
        self.emit_event(event, emit);
        if !truncate {
            self.lookup
                .refresh(table.schema(), table.table())
                .map_err(|message| AssembleError::Refresh {
                    table: table.qualified_name(),
                    message,
                })?;
        }
        Ok(())
    }

    /// Emits the held event, its LOB content complete.
    fn release(&mut self, emit: &mut dyn FnMut(ChangeEvent)) -> Result<(), AssembleError> {
        self.finish_lob()?;
        if let Some(event) = self.held.take() {
            self.emit_event(event, emit);
        }
        Ok(())
    }

    fn emit_event(&mut self, mut event: ChangeEvent, emit: &mut dyn FnMut(ChangeEvent)) {
        self.note_lobs(&event);
        self.stats.events += 1;
        let start = *self.start.get_or_insert(TransactionStart {
            scn: event.source.scn,
            time: event.source.change_time,
        });
        event.source.transaction_start = Some(start);
        event.source.transaction_sequence = Some(self.stats.events);
        emit(event);
    }

    /// Keeps the LOB values an event sets, for pieces later in the transaction.
    fn note_lobs(&mut self, event: &ChangeEvent) {
        let table = &event.table;
        let name = table.qualified_name();
        let row_id = event.source.row_id.as_deref().unwrap_or(PLACEHOLDER_ROW_ID);
        match (&event.op, &event.after) {
            (Operation::Ddl { .. } | Operation::Truncate, _) => self.known_lobs.clear(),
            (Operation::Delete, _) => {
                self.known_lobs
                    .forget_row(&name, row_id, table.columns().len());
            }
            (_, Some(after)) if row_id != PLACEHOLDER_ROW_ID => {
                for index in (0..table.columns().len()).filter(|&i| is_lob(table, i)) {
                    if let Some(value) = after.get(index) {
                        self.known_lobs.remember(&name, row_id, index, value);
                    }
                }
            }
            _ => {}
        }
    }

    /// Holds the change event `row` makes (its before image without LOB values, which a
    /// before image never carries), for the rows that may still add to it.
    fn hold(
        &mut self,
        op: Operation,
        table: Arc<TableSchema>,
        before: Option<Row>,
        after: Option<Row>,
        row: &LogMinerRow,
    ) {
        self.held = Some(ChangeEvent {
            op,
            before: before.map(|before| without_lobs(&table, before)),
            table,
            after,
            source: self.source(row),
        });
    }

    fn source(&self, row: &LogMinerRow) -> SourceInfo {
        SourceInfo {
            scn: row.scn,
            commit_scn: Some(self.commit.commit_scn),
            xid: Some(self.commit.xid),
            rs_id: Some(row.rs_id.trim().to_owned()),
            ssn: row.ssn,
            redo_thread: row.thread,
            user_name: row.username.as_deref().map(str::to_owned),
            row_id: Some(row.row_id.to_string()),
            change_time: row
                .timestamp
                .and_then(|time| time.to_zoned(self.time_zone.clone()).ok())
                .map(|zoned| zoned.timestamp()),
            commit_time: self.commit.commit_time,
            transaction_start: None,
            transaction_sequence: None,
            snapshot: Default::default(),
        }
    }
}

fn is_lob(table: &TableSchema, index: usize) -> bool {
    table
        .columns()
        .get(index)
        .is_some_and(|column| column.data_type.lob_kind().is_some())
}

/// The after image of an UPDATE: the before image with the values `changes` has at `columns`
/// (a column `changes` has no value for keeps its before value).
fn updated(before: &Row, changes: &Row, columns: impl IntoIterator<Item = usize>) -> Row {
    let mut after = before.clone();
    for index in columns {
        if let Some(value) = changes.get(index) {
            after.set(index, value.clone());
        }
    }
    after
}

/// A row image without its LOB columns (a before image never carries them).
fn without_lobs(table: &TableSchema, row: Row) -> Row {
    let mut out = Row::absent(table.columns().len());
    for index in 0..table.columns().len() {
        if let Some(value) = row.get(index).filter(|_| !is_lob(table, index)) {
            out.set(index, value.clone());
        }
    }
    out
}

/// Whether `key` (a where clause's values) names the held event's row: every key column (or,
/// without a key, every non-LOB column the where clause carries) equals the event's after image.
fn same_row(table: &TableSchema, held: &ChangeEvent, key: &Row) -> bool {
    let Some(after) = held.after.as_ref() else {
        return false;
    };
    let columns: Vec<usize> = if table.has_key() {
        table.key_indexes().to_vec()
    } else {
        (0..table.columns().len())
            .filter(|&i| !is_lob(table, i) && key.get(i).is_some())
            .collect()
    };
    !columns.is_empty()
        && columns
            .iter()
            .all(|&i| matches!((key.get(i), after.get(i)), (Some(a), Some(b)) if a == b))
}

/// An insert of a row with LOB columns carries a placeholder ROWID; the real one comes with the
/// LOB rows.
fn adopt_row_id(held: &mut ChangeEvent, row_id: &str) {
    if held.source.row_id.as_deref() == Some(PLACEHOLDER_ROW_ID) && row_id != PLACEHOLDER_ROW_ID {
        held.source.row_id = Some(row_id.to_owned());
    }
}

#[cfg(test)]
mod tests;
