//! Rows of the catalog views and `V$LOGMNR_CONTENTS`, as fetched text, into boundary data.
//!
//! Every column is fetched as optional text (numbers included: the `oracle` crate renders them
//! exactly), so the mapping is pure and tested without a server. A value of the wrong shape is a
//! [`SourceError::Malformed`] naming the view and column, never a default.

use std::borrow::Cow;
use std::sync::Arc;

use jiff::civil;

use super::session::Cell;
use super::sql::CONTENTS_COLUMNS;
use crate::dictionary::{Column, OracleType};
use crate::redo::ast::RawValue;
use crate::source::storage::parse_utc_offset;
use crate::source::{
    Completion, LogGroup, LogGroupType, LogMinerRow, LogMode, MinimalLogging, OpenTransaction,
    OperationCode, RedoLog, RedoLogKind, RedoThread, SessionId, SessionMemory, SourceError,
    SupplementalLogging, ThreadEnabled, Xid,
};
use crate::value::binary::encode_hex;
use crate::value::{Value, typed};

/// One fetched row: each column as text, `None` for NULL.
pub type Cells = [Option<String>];

/// Reads typed cells of one row of `view`, naming the view and column in every error.
#[derive(Debug)]
pub struct CellReader<'a> {
    view: &'static str,
    names: &'a [&'a str],
    cells: &'a mut Cells,
}

impl<'a> CellReader<'a> {
    pub fn new(view: &'static str, names: &'a [&'a str], cells: &'a mut Cells) -> Self {
        Self { view, names, cells }
    }

    fn malformed(&self, index: usize, message: impl Into<String>) -> SourceError {
        let column = self.names.get(index).copied().unwrap_or("?");
        SourceError::Malformed {
            what: format!("{}.{column}", self.view),
            message: message.into(),
        }
    }

    /// Takes the text of a column (each column is read once).
    pub fn text(&mut self, index: usize) -> Result<Option<String>, SourceError> {
        match self.cells.get_mut(index) {
            Some(cell) => Ok(cell.take()),
            None => Err(self.malformed(index, "column missing from the row")),
        }
    }

    pub fn required_text(&mut self, index: usize) -> Result<String, SourceError> {
        self.text(index)?
            .ok_or_else(|| self.malformed(index, "NULL where a value is required"))
    }

    pub fn number<T: std::str::FromStr>(&mut self, index: usize) -> Result<Option<T>, SourceError> {
        match self.text(index)? {
            None => Ok(None),
            Some(text) => text.trim().parse().map(Some).map_err(|_| {
                self.malformed(index, format!("{text:?} is not a whole number in range"))
            }),
        }
    }

    pub fn required_number<T: std::str::FromStr>(
        &mut self,
        index: usize,
    ) -> Result<T, SourceError> {
        self.number(index)?
            .ok_or_else(|| self.malformed(index, "NULL where a number is required"))
    }

    /// A DATE selected with `TO_CHAR(.., 'YYYY-MM-DD HH24:MI:SS')`.
    pub fn date(&mut self, index: usize) -> Result<Option<civil::DateTime>, SourceError> {
        match self.text(index)? {
            None => Ok(None),
            Some(text) => civil::DateTime::strptime("%Y-%m-%d %H:%M:%S", &text)
                .map(Some)
                .map_err(|_| {
                    self.malformed(index, format!("{text:?} is not YYYY-MM-DD HH24:MI:SS"))
                }),
        }
    }

    pub fn required_date(&mut self, index: usize) -> Result<civil::DateTime, SourceError> {
        self.date(index)?
            .ok_or_else(|| self.malformed(index, "NULL where a date is required"))
    }

    /// An offset from UTC selected with `TO_CHAR(.., 'TZH:TZM')`: `+01:00`, `-05:30`, `+00:00`.
    pub fn required_utc_offset(&mut self, index: usize) -> Result<jiff::tz::Offset, SourceError> {
        let text = self.required_text(index)?;
        parse_utc_offset(text.trim())
            .ok_or_else(|| self.malformed(index, format!("{text:?} is not an offset TZH:TZM")))
    }

    /// A transaction id selected as [`super::sql::XID_PARTS`] (`USN.SLOT.SQN`).
    pub fn required_xid(&mut self, index: usize) -> Result<Xid, SourceError> {
        let text = self.required_text(index)?;
        Xid::from_decimal_parts(&text).map_err(|error| self.malformed(index, error.to_string()))
    }

    /// `YES` / `NO`.
    pub fn yes_no(&mut self, index: usize) -> Result<bool, SourceError> {
        match self.required_text(index)?.as_str() {
            "YES" => Ok(true),
            "NO" => Ok(false),
            other => Err(self.malformed(index, format!("{other:?} is neither YES nor NO"))),
        }
    }
}

/// Text shared across rows: owner, table, user and container names repeat on nearly every row,
/// so one allocation serves them all.
#[derive(Debug, Default)]
pub struct SharedNames {
    names: std::collections::HashSet<Arc<str>>,
}

impl SharedNames {
    pub fn get(&mut self, text: Option<String>) -> Option<Arc<str>> {
        let text = text?;
        if let Some(shared) = self.names.get(text.as_str()) {
            return Some(Arc::clone(shared));
        }
        // Row ids and redo addresses are unique per row; only short repeating names are kept,
        // and the set is bounded so a stream of distinct names cannot grow it without end.
        let shared: Arc<str> = Arc::from(text);
        if self.names.len() < 4096 {
            self.names.insert(Arc::clone(&shared));
        }
        Some(shared)
    }
}

/// Maps one contents row selected with [`CONTENTS_COLUMNS`].
pub fn contents_row(
    cells: &mut Cells,
    names: &mut SharedNames,
) -> Result<LogMinerRow, SourceError> {
    let mut r = CellReader::new("V$LOGMNR_CONTENTS", &CONTENTS_COLUMNS, cells);
    Ok(LogMinerRow {
        scn: r.required_number(0)?,
        start_scn: r.number(1)?,
        commit_scn: r.number(2)?,
        timestamp: r.date(3)?,
        commit_timestamp: r.date(4)?,
        xid: r.required_xid(5)?,
        operation: OperationCode::from_code(r.required_number(6)?),
        rollback: r.number::<u8>(7)?.unwrap_or(0) == 1,
        row_id: Arc::from(r.text(8)?.unwrap_or_default()),
        rs_id: Arc::from(r.text(9)?.unwrap_or_default()),
        ssn: r.number(10)?.unwrap_or(0),
        csf: r.number::<u8>(11)?.unwrap_or(0) == 1,
        seg_owner: names.get(r.text(12)?),
        table_name: names.get(r.text(13)?),
        username: names.get(r.text(14)?),
        session: r.number(15)?,
        serial: r.number(16)?,
        thread: r.number(17)?.unwrap_or(1),
        info: names.get(r.text(18)?.filter(|info| !info.is_empty())),
        status: r.number(19)?.unwrap_or(0),
        sql_redo: r.text(20)?,
        sql_undo: None,
        src_con_name: names.get(r.text(21)?),
        con_id: r.number(22)?,
        object_id: r.number(23)?,
    })
}

pub const DATABASE_COLUMNS: [&str; 13] = [
    "DBID",
    "NAME",
    "VERSION",
    "LOG_MODE",
    "SUPPLEMENTAL_LOG_DATA_MIN",
    "SUPPLEMENTAL_LOG_DATA_PK",
    "SUPPLEMENTAL_LOG_DATA_UI",
    "SUPPLEMENTAL_LOG_DATA_FK",
    "SUPPLEMENTAL_LOG_DATA_ALL",
    "CURRENT_SCN",
    "RESETLOGS_CHANGE#",
    "RESETLOGS_TIME",
    "CDB",
];

/// Maps the row of [`super::sql::DATABASE`].
pub fn database(cells: &mut Cells) -> Result<crate::source::DatabaseInfo, SourceError> {
    let mut r = CellReader::new("V$DATABASE", &DATABASE_COLUMNS, cells);
    let dbid = r.required_number(0)?;
    let name = r.required_text(1)?;
    let version = r.required_text(2)?;
    let log_mode = match r.required_text(3)?.as_str() {
        "ARCHIVELOG" => LogMode::Archivelog,
        "NOARCHIVELOG" => LogMode::NoArchivelog,
        _ => LogMode::Other,
    };
    let min = match r.required_text(4)?.as_str() {
        "YES" => MinimalLogging::Yes,
        "IMPLICIT" => MinimalLogging::Implicit,
        _ => MinimalLogging::No,
    };
    let supplemental = SupplementalLogging {
        min,
        primary_key: r.yes_no(5)?,
        unique: r.yes_no(6)?,
        foreign_key: r.yes_no(7)?,
        all: r.yes_no(8)?,
    };
    let current_scn = r.required_number(9)?;
    let resetlogs_scn = r.required_number(10)?;
    let resetlogs_time = r
        .date(11)?
        .ok_or_else(|| r.malformed(11, "NULL where a date is required"))?;
    let cdb = r.yes_no(12)?;
    Ok(crate::source::DatabaseInfo {
        dbid,
        name,
        version,
        log_mode,
        supplemental,
        current_scn,
        resetlogs_scn,
        resetlogs_time,
        cdb,
    })
}

const THREAD_COLUMNS: [&str; 7] = [
    "THREAD#",
    "STATUS",
    "ENABLED",
    "CHECKPOINT_CHANGE#",
    "SEQUENCE#",
    "ENABLE_CHANGE#",
    "LAST_REDO_CHANGE#",
];

/// Maps a row of [`super::sql::THREADS`].
pub fn thread(cells: &mut Cells) -> Result<RedoThread, SourceError> {
    let mut r = CellReader::new("V$THREAD", &THREAD_COLUMNS, cells);
    let thread = r.required_number(0)?;
    let open = r.required_text(1)? == "OPEN";
    let enabled = match r.required_text(2)?.as_str() {
        "PUBLIC" => ThreadEnabled::Public,
        "PRIVATE" => ThreadEnabled::Private,
        _ => ThreadEnabled::Disabled,
    };
    let checkpoint_scn = r.required_number(3)?;
    Ok(RedoThread {
        thread,
        open,
        enabled,
        checkpoint_scn,
        sequence: r.required_number(4)?,
        enable_scn: r.number(5)?.unwrap_or(0),
        // The view allows NULL (a thread with no redo written yet): the checkpoint is the
        // newest SCN known to be on disk then.
        last_redo_scn: r.number(6)?.unwrap_or(checkpoint_scn),
    })
}

const LOG_COLUMNS: [&str; 9] = [
    "MEMBER",
    "THREAD#",
    "SEQUENCE#",
    "FIRST_CHANGE#",
    "NEXT_CHANGE#",
    "STATUS",
    "KIND",
    "COMPLETION_TIME",
    "SYSDATE",
];

/// Maps a row of [`super::sql::REDO_LOGS`]; the seventh column says online or archived.
pub fn redo_log(cells: &mut Cells) -> Result<RedoLog, SourceError> {
    let mut r = CellReader::new("V$LOG / V$ARCHIVED_LOG", &LOG_COLUMNS, cells);
    let kind = match r.required_text(6)?.as_str() {
        "ONLINE" => RedoLogKind::Online,
        "ARCHIVED" => RedoLogKind::Archived,
        other => return Err(r.malformed(6, format!("{other:?} is neither ONLINE nor ARCHIVED"))),
    };
    let name = r.required_text(0)?;
    let thread = r.required_number(1)?;
    let sequence = r.required_number(2)?;
    let first_scn = r.required_number(3)?;
    let next_scn: Option<u64> = r.number(4)?;
    let next_scn = match kind {
        // The CURRENT group is still being written: its NEXT_CHANGE# is a sentinel.
        RedoLogKind::Online if r.required_text(5)? == "CURRENT" => None,
        _ => next_scn,
    };
    // An archived row without a completion time (a view that answers NULL) is a log whose age
    // is unknown: it never counts towards the hours left.
    let completion = match (kind, r.date(7)?) {
        (RedoLogKind::Archived, Some(time)) => Some(Completion {
            time,
            age: r.required_date(8)?.duration_since(time),
        }),
        _ => None,
    };
    Ok(RedoLog {
        name,
        thread,
        sequence,
        first_scn,
        next_scn,
        kind,
        completion,
    })
}

/// Maps the rows of [`super::sql::SESSION_MEMORY`]: one per statistic, by name. Both are
/// needed; a missing one is malformed (the view answered without it).
pub fn session_memory(mut rows: Vec<Vec<Option<String>>>) -> Result<SessionMemory, SourceError> {
    let (mut pga, mut pga_max) = (None, None);
    for row in &mut rows {
        let mut r = CellReader::new("V$MYSTAT / V$STATNAME", &["NAME", "VALUE"], row);
        let name = r.required_text(0)?;
        let value: u64 = r.required_number(1)?;
        match name.as_str() {
            "session pga memory" => pga = Some(value),
            "session pga memory max" => pga_max = Some(value),
            _ => {}
        }
    }
    match (pga, pga_max) {
        (Some(pga_bytes), Some(pga_max_bytes)) => Ok(SessionMemory {
            pga_bytes,
            pga_max_bytes,
        }),
        _ => Err(SourceError::Malformed {
            what: "V$MYSTAT / V$STATNAME".to_owned(),
            message: "no row for session pga memory or session pga memory max".to_owned(),
        }),
    }
}

const TRANSACTION_COLUMNS: [&str; 5] = [
    "XID (USN.SLOT.SQN)",
    "INST_ID",
    "START_SCN",
    "STATUS",
    "CON_ID",
];

/// Maps a row of [`super::sql::OPEN_TRANSACTIONS`].
pub fn open_transaction(cells: &mut Cells) -> Result<OpenTransaction, SourceError> {
    let mut r = CellReader::new("GV$TRANSACTION", &TRANSACTION_COLUMNS, cells);
    Ok(OpenTransaction {
        xid: r.required_xid(0)?,
        instance: r.required_number(1)?,
        start_scn: r.number(2)?.unwrap_or(0),
        status: r.text(3)?.unwrap_or_default(),
        con_id: r.number(4)?,
    })
}

const SESSION_COLUMNS: [&str; 3] = ["THREAD#", "SID", "SERIAL#"];

/// Maps a row of [`super::sql::SESSIONS`].
pub fn session(cells: &mut Cells) -> Result<SessionId, SourceError> {
    let mut r = CellReader::new("GV$SESSION", &SESSION_COLUMNS, cells);
    Ok(SessionId {
        thread: r.required_number(0)?,
        sid: r.required_number(1)?,
        serial: r.required_number(2)?,
    })
}

const INSTANCE_COLUMNS: [&str; 2] = ["INSTANCE_NAME", "THREAD#"];

/// Maps a row of [`super::sql::INSTANCES`].
pub fn instance(cells: &mut Cells) -> Result<super::instances::Instance, SourceError> {
    let mut r = CellReader::new("GV$INSTANCE", &INSTANCE_COLUMNS, cells);
    Ok(super::instances::Instance {
        name: r.required_text(0)?,
        thread: r.required_number(1)?,
    })
}

const COLUMN_COLUMNS: [&str; 10] = [
    "COLUMN_NAME",
    "DATA_TYPE",
    "DATA_LENGTH",
    "DATA_PRECISION",
    "DATA_SCALE",
    "CHAR_LENGTH",
    "CHAR_USED",
    "NULLABLE",
    "DATA_TYPE_OWNER",
    "SEGMENT_COLUMN_ID",
];

/// Maps a row of [`super::sql::TABLE_COLUMNS`] to a column (without its key position): the catalog splits a
/// type over several columns; this writes it back as a declaration and parses that. A type the
/// capture cannot decode becomes [`OracleType::Unsupported`] named `OWNER.TYPE` when the
/// catalog gives the type an owner (object types such as `MDSYS.SDO_GEOMETRY`), for the start
/// check to report with the column to exclude.
pub fn table_column(cells: &mut Cells) -> Result<Column, SourceError> {
    let mut r = CellReader::new("ALL_TAB_COLS", &COLUMN_COLUMNS, cells);
    let name = r.required_text(0)?;
    let data_type = r.required_text(1)?;
    let data_length: Option<u32> = r.number(2)?;
    let precision: Option<u32> = r.number(3)?;
    let scale: Option<i32> = r.number(4)?;
    let char_length: Option<u32> = r.number(5)?;
    let char_semantics = r.text(6)?.as_deref() == Some("C");
    let nullable = r.text(7)?.as_deref() != Some("N");
    let type_owner = r.text(8)?;
    // NULL for a virtual column, which the query leaves out.
    let segment_column: Option<u16> = r.number(9)?;
    let bytes = data_length.unwrap_or(0);
    let chars = char_length.unwrap_or(bytes);
    let declaration = match data_type.as_str() {
        "NUMBER" => match (precision, scale) {
            (None, None) => "NUMBER".to_owned(),
            (None, Some(scale)) => format!("NUMBER(*,{scale})"),
            (Some(precision), scale) => format!("NUMBER({precision},{})", scale.unwrap_or(0)),
        },
        "FLOAT" => format!("FLOAT({})", precision.unwrap_or(126)),
        "VARCHAR2" | "CHAR" if char_semantics => format!("{data_type}({chars} CHAR)"),
        "VARCHAR2" | "CHAR" => format!("{data_type}({bytes} BYTE)"),
        "NVARCHAR2" | "NCHAR" => format!("{data_type}({chars})"),
        "RAW" => format!("RAW({bytes})"),
        "UROWID" => format!("UROWID({bytes})"),
        _ => data_type.clone(),
    };
    let oracle_type = match (OracleType::parse_catalog(&declaration), type_owner) {
        (Ok(OracleType::Unsupported { .. }), Some(owner)) => OracleType::Unsupported {
            name: format!("{owner}.{declaration}"),
        },
        (Ok(parsed), _) => parsed,
        (Err(error), _) => {
            return Err(SourceError::Malformed {
                what: format!("ALL_TAB_COLS.DATA_TYPE of {name}"),
                message: format!("{declaration:?}: {error}"),
            });
        }
    };
    let column = Column::new(name, oracle_type).nullable(nullable);
    Ok(match segment_column {
        Some(number) => column.segment(number),
        None => column,
    })
}

/// Maps a row of [`super::sql::LOG_GROUPS`].
pub fn log_group(cells: &mut Cells) -> Result<LogGroup, SourceError> {
    let mut r = CellReader::new("ALL_LOG_GROUPS", &["LOG_GROUP_TYPE", "ALWAYS"], cells);
    let kind = match r.required_text(0)?.as_str() {
        "ALL COLUMN LOGGING" => LogGroupType::AllColumn,
        "PRIMARY KEY LOGGING" => LogGroupType::PrimaryKey,
        "UNIQUE KEY LOGGING" => LogGroupType::UniqueKey,
        "FOREIGN KEY LOGGING" => LogGroupType::ForeignKey,
        _ => LogGroupType::User,
    };
    let always = r.text(1)?.as_deref() == Some("ALWAYS");
    Ok(LogGroup { kind, always })
}

/// One column of a flashback row, fetched as [`super::sql::flashback_expression`] renders it,
/// typed by the same code that types SQL_REDO values (so a snapshot row and a streamed row of the
/// same data are equal). BLOBs arrive as bytes, everything else as text.
pub fn flashback_value(fetched: Cell, column: &Column) -> Result<Value, SourceError> {
    let text = match fetched {
        Cell::Null => return Ok(Value::Null),
        Cell::Bytes(bytes) => {
            return typed(&call("HEXTORAW", encode_hex(&bytes)), column).map_err(invalid);
        }
        Cell::Text(text) => text,
    };
    use OracleType as T;
    let raw = match &column.data_type {
        T::Date => RawValue::Call {
            name: Cow::Borrowed("TO_DATE"),
            args: vec![
                RawValue::Text(Cow::Owned(text)),
                RawValue::Text(Cow::Borrowed(crate::value::nls::NLS_DATE_FORMAT)),
            ],
        },
        T::Timestamp { .. } => call("TO_TIMESTAMP", text),
        T::TimestampWithTimeZone { .. } | T::TimestampWithLocalTimeZone { .. } => {
            call("TO_TIMESTAMP_TZ", text)
        }
        T::IntervalYearToMonth { .. } => call("TO_YMINTERVAL", text),
        T::IntervalDayToSecond { .. } => call("TO_DSINTERVAL", text),
        T::Raw { .. } | T::LongRaw | T::Blob => call("HEXTORAW", text),
        _ => RawValue::Text(Cow::Owned(text)),
    };
    typed(&raw, column).map_err(invalid)
}

fn call(name: &'static str, text: String) -> RawValue<'static> {
    RawValue::Call {
        name: Cow::Borrowed(name),
        args: vec![RawValue::Text(Cow::Owned(text))],
    }
}

fn invalid(error: crate::value::InvalidValue) -> SourceError {
    SourceError::Malformed {
        what: "flashback read".to_owned(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(values: &[Option<&str>]) -> Vec<Option<String>> {
        values.iter().map(|v| v.map(str::to_owned)).collect()
    }

    /// A real 19c PDB UPDATE row (KDP capture) as the contents query fetches it.
    fn update_row() -> Vec<Option<String>> {
        cells(&[
            Some("2175456"),
            None,
            None,
            Some("2021-09-14 07:36:49"),
            None,
            Some("10.11.855"),
            Some("3"),
            Some("0"),
            Some("AAAR9JAAHAAAACFAAB"),
            Some(" 0x000007.000228b7.0010 "),
            Some("0"),
            Some("0"),
            Some("C##MYUSER"),
            Some("CUSTOMERS"),
            Some("C##MYUSER"),
            Some("501"),
            Some("47243"),
            Some("1"),
            None,
            Some("0"),
            Some(
                "update \"C##MYUSER\".\"CUSTOMERS\" set \"CLUB_STATUS\" = 'gold' where \"ID\" = '43' and ROWID = 'AAAR9JAAHAAAACFAAB';",
            ),
            Some("ORCLPDB1"),
            Some("3"),
            Some("74103"),
        ])
    }

    #[test]
    fn contents_row_maps_every_column() {
        let mut names = SharedNames::default();
        let row = contents_row(&mut update_row(), &mut names).unwrap();
        assert_eq!(row.scn, 2_175_456);
        assert_eq!((row.start_scn, row.commit_scn), (None, None));
        assert_eq!(
            row.timestamp,
            Some(civil::date(2021, 9, 14).at(7, 36, 49, 0))
        );
        assert_eq!(row.xid.to_decimal_parts(), "10.11.855");
        assert_eq!(row.operation, OperationCode::Update);
        assert!(!row.rollback && !row.csf);
        assert_eq!(&*row.row_id, "AAAR9JAAHAAAACFAAB");
        assert_eq!(row.redo_address().map(|a| a.sequence), Some(7));
        assert_eq!(row.seg_owner.as_deref(), Some("C##MYUSER"));
        assert_eq!(
            (row.session, row.serial, row.thread),
            (Some(501), Some(47243), 1)
        );
        assert_eq!(row.info, None);
        assert_eq!(row.src_con_name.as_deref(), Some("ORCLPDB1"));
        assert_eq!(row.con_id, Some(3));
        assert_eq!(row.object_id, Some(74_103));
        assert!(row.sql_redo.unwrap().starts_with("update "));
        // Owner and user are the same text: one shared allocation.
        let again = contents_row(&mut update_row(), &mut names).unwrap();
        assert!(Arc::ptr_eq(
            again.seg_owner.as_ref().unwrap(),
            again.username.as_ref().unwrap()
        ));
    }

    #[test]
    fn malformed_cells_name_view_and_column() {
        for bad in ["0A000B0057030000", "10.11", "10.11.855.1", "70000.1.1"] {
            let mut row = update_row();
            row[5] = Some(bad.to_owned());
            let error = contents_row(&mut row, &mut SharedNames::default()).unwrap_err();
            assert!(
                matches!(&error, SourceError::Malformed { what, .. } if what.ends_with("XIDSQN")),
                "{bad}: {error}"
            );
        }
        let mut row = update_row();
        row[5] = Some("10.11.4294967295".to_owned());
        let undo = contents_row(&mut row, &mut SharedNames::default()).unwrap();
        assert!(undo.xid.is_sequenceless());
        assert_eq!(undo.xid.to_upper_hex(), "0A000B00FFFFFFFF");
        let mut row = update_row();
        row[0] = None;
        let error = contents_row(&mut row, &mut SharedNames::default()).unwrap_err();
        assert!(
            error.to_string().contains("V$LOGMNR_CONTENTS.SCN"),
            "{error}"
        );
        let mut row = update_row();
        row[3] = Some("14-SEP-21".to_owned());
        assert!(contents_row(&mut row, &mut SharedNames::default()).is_err());
    }

    #[test]
    fn database_and_thread_rows() {
        let mut row = cells(&[
            Some("1234567"),
            Some("ORCLCDB"),
            Some("19.0.0.0.0"),
            Some("ARCHIVELOG"),
            Some("IMPLICIT"),
            Some("NO"),
            Some("NO"),
            Some("NO"),
            Some("YES"),
            Some("9000"),
            Some("1"),
            Some("2024-01-02 03:04:05"),
            Some("YES"),
        ]);
        let info = database(&mut row).unwrap();
        assert_eq!(info.log_mode, LogMode::Archivelog);
        assert_eq!(info.supplemental.min, MinimalLogging::Implicit);
        assert!(info.supplemental.all && !info.supplemental.primary_key && info.cdb);
        assert_eq!(info.current_scn, 9000);

        let mut row = cells(&[
            Some("2"),
            Some("OPEN"),
            Some("PRIVATE"),
            Some("800"),
            Some("17"),
            Some("0"),
            Some("950"),
        ]);
        let t = thread(&mut row).unwrap();
        assert_eq!(
            (
                t.thread,
                t.open,
                t.enabled,
                t.checkpoint_scn,
                t.last_redo_scn
            ),
            (2, true, ThreadEnabled::Private, 800, 950)
        );
        let mut row = cells(&[
            Some("3"),
            Some("CLOSED"),
            Some("DISABLED"),
            Some("700"),
            Some("1"),
            None,
            None,
        ]);
        assert_eq!(thread(&mut row).unwrap().last_redo_scn, 700);
    }

    #[test]
    fn current_online_log_has_no_end() {
        let mut row = cells(&[
            Some("/u01/redo01.log"),
            Some("1"),
            Some("7"),
            Some("1000"),
            Some("281474976710655"),
            Some("CURRENT"),
            Some("ONLINE"),
            None,
            Some("2026-12-05 12:00:00"),
        ]);
        let online = redo_log(&mut row).unwrap();
        assert_eq!((online.next_scn, online.completion), (None, None));
        let archived = |kind| {
            cells(&[
                Some("/arch/1_6.arc"),
                Some("1"),
                Some("6"),
                Some("500"),
                Some("1000"),
                None,
                Some(kind),
                Some("2026-12-04 22:30:00"),
                Some("2026-12-05 12:00:00"),
            ])
        };
        let log = redo_log(&mut archived("ARCHIVED")).unwrap();
        assert_eq!(
            (log.sequence, log.next_scn, log.kind),
            (6, Some(1000), RedoLogKind::Archived)
        );
        // The age is SYSDATE - COMPLETION_TIME, both on the database host's clock.
        let completion = log.completion.unwrap();
        assert_eq!(completion.time, civil::date(2026, 12, 4).at(22, 30, 0, 0));
        assert_eq!(
            completion.age,
            jiff::SignedDuration::from_mins(13 * 60 + 30)
        );
        assert!(redo_log(&mut archived("STANDBY")).is_err());
    }

    #[test]
    fn catalog_types_become_declarations() {
        let cases: [([Option<&str>; 8], &str); 7] = [
            (id_number_column(), "NUMBER(10)"),
            (
                [
                    Some("N"),
                    Some("NUMBER"),
                    Some("22"),
                    None,
                    None,
                    Some("0"),
                    None,
                    Some("Y"),
                ],
                "NUMBER",
            ),
            (
                [
                    Some("I"),
                    Some("NUMBER"),
                    Some("22"),
                    None,
                    Some("0"),
                    Some("0"),
                    None,
                    Some("Y"),
                ],
                "NUMBER(*,0)",
            ),
            (
                [
                    Some("S"),
                    Some("VARCHAR2"),
                    Some("80"),
                    None,
                    None,
                    Some("20"),
                    Some("C"),
                    Some("Y"),
                ],
                "VARCHAR2(20 CHAR)",
            ),
            (
                [
                    Some("B"),
                    Some("CHAR"),
                    Some("8"),
                    None,
                    None,
                    Some("8"),
                    Some("B"),
                    Some("Y"),
                ],
                "CHAR(8 BYTE)",
            ),
            (
                [
                    Some("T"),
                    Some("TIMESTAMP(3) WITH TIME ZONE"),
                    Some("13"),
                    None,
                    Some("3"),
                    Some("0"),
                    None,
                    Some("Y"),
                ],
                "TIMESTAMP(3) WITH TIME ZONE",
            ),
            (
                [
                    Some("R"),
                    Some("RAW"),
                    Some("16"),
                    None,
                    None,
                    Some("0"),
                    None,
                    Some("Y"),
                ],
                "RAW(16)",
            ),
        ];
        for (row, declaration) in cases {
            let column = table_column(&mut owned_row(&row, None)).unwrap();
            assert_eq!(
                column.data_type,
                OracleType::parse(declaration).unwrap(),
                "{declaration}"
            );
        }
        let column = table_column(&mut owned_row(&id_number_column(), None)).unwrap();
        assert_eq!(
            (column.name.as_str(), column.nullable, column.segment_column),
            ("ID", false, Some(1))
        );
        // A known type out of Oracle's range is still a malformed catalog row.
        let mut bad = owned_row(
            &[
                Some("X"),
                Some("NUMBER"),
                Some("22"),
                Some("39"),
                Some("0"),
                Some("0"),
                None,
                Some("Y"),
            ],
            None,
        );
        assert!(matches!(
            table_column(&mut bad),
            Err(SourceError::Malformed { .. })
        ));
    }

    /// A catalog row of `ID_NUMBER_COLUMN`'s shape with DATA_TYPE_OWNER and SEGMENT_COLUMN_ID
    /// (the first column) appended.
    fn owned_row(row: &[Option<&str>], type_owner: Option<&str>) -> Vec<Option<String>> {
        let mut cells = cells(row);
        cells.push(type_owner.map(str::to_owned));
        cells.push(Some("1".to_owned()));
        cells
    }

    #[test]
    fn types_the_capture_cannot_decode_are_kept_with_their_owner() {
        // Before, an unknown DATA_TYPE made the dictionary load Malformed: a restart loop with
        // no stop code. Now the column is kept, typed Unsupported, for the start check.
        let row = |data_type| {
            [
                Some("SHAPE"),
                Some(data_type),
                Some("1"),
                None,
                None,
                Some("0"),
                None,
                Some("Y"),
            ]
        };
        let column = table_column(&mut owned_row(&row("SDO_GEOMETRY"), Some("MDSYS"))).unwrap();
        assert_eq!(column.name, "SHAPE");
        assert_eq!(
            column.data_type,
            OracleType::Unsupported {
                name: "MDSYS.SDO_GEOMETRY".to_owned()
            }
        );
        let column = table_column(&mut owned_row(&row("VECTOR"), None)).unwrap();
        assert_eq!(
            column.data_type,
            OracleType::Unsupported {
                name: "VECTOR".to_owned()
            }
        );
        // JSON and BOOLEAN are decoded types; XMLTYPE keeps its SYS owner out of the name.
        for (data_type, owner, expected) in [
            ("JSON", None, OracleType::Json),
            ("BOOLEAN", None, OracleType::Boolean),
            ("XMLTYPE", Some("SYS"), OracleType::XmlType),
        ] {
            let column = table_column(&mut owned_row(&row(data_type), owner)).unwrap();
            assert_eq!(column.data_type, expected, "{data_type}");
        }
    }

    /// The catalog row of a mandatory `ID NUMBER(10)`.
    fn id_number_column() -> [Option<&'static str>; 8] {
        [
            Some("ID"),
            Some("NUMBER"),
            Some("22"),
            Some("10"),
            Some("0"),
            Some("0"),
            None,
            Some("N"),
        ]
    }

    #[test]
    fn flashback_cells_type_like_redo_values() {
        let column = |declaration: &str| Column::new("C", OracleType::parse(declaration).unwrap());
        let text = |t: &str| Cell::Text(t.to_owned());
        let cases = [
            (column("NUMBER(10,2)"), text("-.5"), "-0.5"),
            (
                column("DATE"),
                text("2024-01-02 03:04:05"),
                "2024-01-02T03:04:05",
            ),
            (
                column("TIMESTAMP(3)"),
                text("2024-01-02 03:04:05.120000000"),
                "2024-01-02T03:04:05.12",
            ),
            (column("RAW(4)"), text("CAFE"), "cafe"),
            (column("BLOB"), Cell::Bytes(vec![0xca, 0xfe]), "cafe"),
            (column("VARCHAR2(10)"), text("it's"), "it's"),
        ];
        for (column, cell, expected) in cases {
            let value = flashback_value(cell, &column).unwrap();
            let shown = value.to_string();
            assert!(
                shown.contains(expected),
                "{} gave {shown}",
                column.data_type
            );
        }
        assert_eq!(
            flashback_value(Cell::Null, &column("DATE")).unwrap(),
            Value::Null
        );
        assert!(flashback_value(text("12.345"), &column("NUMBER(10,2)")).is_err());
    }
}
