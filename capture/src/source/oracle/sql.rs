//! Every SQL text the real client sends, in one place, each with why it is shaped that way.
//!
//! Conventions:
//! - Values are bind variables (`:1`, `:2`, ...) so statements are parsed once and cached.
//!   Identifiers cannot be bound; the only identifiers interpolated are captured table and column
//!   names (quoted with [`quote_identifier`], which refuses a name containing `"`) and the flush
//!   table (validated by [`flush_table_name`]).
//! - Dates are converted with an explicit `TO_CHAR` format, never left to NLS, so the row mapping
//!   reads one fixed shape whatever the session's settings; `SQL_REDO` itself is rendered under the
//!   fixed NLS settings of [`crate::value::nls::ALTER_SESSION_STATEMENTS`], run on every new session.
//! - `V$` views, not `GV$`, for logs and threads: `V$` already shows every thread, `GV$` repeats
//!   each row once per instance. `GV$` for transactions and sessions, which are per instance.

use std::fmt::Write as _;

use crate::dictionary::{OracleType, TableSchema};
use crate::value::nls;

/// Identity and state of the database. `CDB` exists from 12c on, the oldest release supported.
pub const DATABASE: &str = "SELECT D.DBID, D.NAME, I.VERSION, D.LOG_MODE, \
     D.SUPPLEMENTAL_LOG_DATA_MIN, D.SUPPLEMENTAL_LOG_DATA_PK, D.SUPPLEMENTAL_LOG_DATA_UI, \
     D.SUPPLEMENTAL_LOG_DATA_FK, D.SUPPLEMENTAL_LOG_DATA_ALL, D.CURRENT_SCN, \
     D.RESETLOGS_CHANGE#, TO_CHAR(D.RESETLOGS_TIME, 'YYYY-MM-DD HH24:MI:SS'), D.CDB \
     FROM V$DATABASE D, V$INSTANCE I";

/// What the client learns at connect, on a session still in the container it connected to:
/// that container (`CDB$ROOT`, a PDB's name, or the database name on a non-CDB), the release,
/// and whether the database is a CDB.
pub const TOPOLOGY: &str = "SELECT SYS_CONTEXT('USERENV', 'CON_NAME'), I.VERSION, D.CDB \
     FROM V$DATABASE D, V$INSTANCE I";

/// The containers of a CDB with their open mode, read from the root when a PDB is named: the
/// name must match one of them exactly (the config folds an unquoted name to upper case, as
/// Oracle does), and a PDB that is only MOUNTED cannot be read.
pub const CONTAINERS: &str = "SELECT NAME, OPEN_MODE, CON_ID FROM V$CONTAINERS ORDER BY CON_ID";

/// The current SCN alone: the cheapest call of the mining loop, made once per window.
pub const CURRENT_SCN: &str = "SELECT CURRENT_SCN FROM V$DATABASE";

/// The current incarnation of a PDB, by name. A PDB point-in-time recovery or flashback starts a
/// new incarnation whose redo is not a continuation of the old one.
pub const PDB_INCARNATION: &str = "SELECT P.CON_ID, P.DB_INCARNATION#, P.PDB_INCARNATION#, \
     P.INCARNATION_SCN FROM V$PDB_INCARNATION P, V$CONTAINERS C \
     WHERE C.CON_ID = P.CON_ID AND C.NAME = :1 AND P.STATUS = 'CURRENT'";

/// One row per redo thread, every thread from `V$THREAD` alone (`GV$THREAD` repeats them per
/// instance). `LAST_REDO_CHANGE#` is the SCN of the newest redo LGWR has written for the thread:
/// LogMiner reads the online log on disk, not the instance's log buffer, so the window planner
/// ends a window below it (`source/window.rs`; Debezium does the same since DBZ-8055 and
/// DBZ-8503). `CHECKPOINT_CHANGE#` moves only at checkpoints and log switches, so it would hold
/// capture back for no reason.
pub const THREADS: &str = "SELECT THREAD#, STATUS, ENABLED, CHECKPOINT_CHANGE#, SEQUENCE#, \
     ENABLE_CHANGE#, LAST_REDO_CHANGE# FROM V$THREAD";

/// Every log whose range reaches past the SCN, online and archived, in one statement: two
/// separate queries can disagree while a log is being archived (one read before, one after), and
/// an online log reused in between would be in neither. Binds: the SCN twice. The seventh column
/// says which view a row comes from.
///
/// Online logs: one member per group (any member holds the same redo), leaving out members
/// Oracle marks `INVALID` (never written or inaccessible), `STALE` (incomplete) or `DELETED`;
/// a blank `STATUS` is a member in use. `NEXT_CHANGE#` of the CURRENT group is a huge sentinel;
/// the mapping reads the status instead.
///
/// Archived logs of the current incarnation (the RESETLOGS columns keep logs of an incarnation
/// opened out by RESETLOGS away) that are still on disk (`STATUS = 'A'`, a name), written by this
/// database (not a standby destination), at a local destination: chosen by the destination's
/// type, not its status, because a destination in ERROR (a full recovery area, say) still holds
/// every log archived there before the error. `DEST_ID = 0` is a log whose destination Oracle no
/// longer knows, as for logs restored by RMAN or registered by hand. Copies at several
/// destinations repeat a sequence; the planner keeps one.
///
/// The eighth column is an archived log's `COMPLETION_TIME` (when archiving it completed;
/// Database Reference, V$ARCHIVED_LOG), NULL for an online log, and the ninth `SYSDATE`: both
/// are DATEs on the database host's clock in its zone, so their difference is the log's age on
/// the database's clock, whatever the capture's clock says, for the hours of archived redo
/// left before a time-based deletion policy removes it (`source/archive_retention.rs`). Not
/// `NEXT_TIME`: a log is archived after the switch that closes it, and deletion policies count
/// from the completion (RMAN's `COMPLETED BEFORE`, Amazon RDS's retention hours).
pub const REDO_LOGS: &str = "SELECT MIN(F.MEMBER), L.THREAD#, L.SEQUENCE#, L.FIRST_CHANGE#, \
     L.NEXT_CHANGE#, L.STATUS, 'ONLINE', NULL, TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') \
     FROM V$LOG L, V$LOGFILE F \
     WHERE F.GROUP# = L.GROUP# AND L.NEXT_CHANGE# > :1 \
     AND NVL(F.STATUS, 'IN USE') NOT IN ('INVALID', 'STALE', 'DELETED') \
     GROUP BY L.GROUP#, L.THREAD#, L.SEQUENCE#, L.FIRST_CHANGE#, L.NEXT_CHANGE#, L.STATUS \
     UNION ALL \
     SELECT A.NAME, A.THREAD#, A.SEQUENCE#, A.FIRST_CHANGE#, A.NEXT_CHANGE#, NULL, 'ARCHIVED', \
     TO_CHAR(A.COMPLETION_TIME, 'YYYY-MM-DD HH24:MI:SS'), \
     TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') \
     FROM V$ARCHIVED_LOG A, V$DATABASE D \
     WHERE A.NAME IS NOT NULL AND A.ARCHIVED = 'YES' AND A.STATUS = 'A' \
     AND A.STANDBY_DEST = 'NO' AND A.NEXT_CHANGE# > :2 \
     AND A.RESETLOGS_CHANGE# = D.RESETLOGS_CHANGE# AND A.RESETLOGS_TIME = D.RESETLOGS_TIME \
     AND (A.DEST_ID = 0 OR A.DEST_ID IN \
     (SELECT DEST_ID FROM V$ARCHIVE_DEST_STATUS WHERE TYPE = 'LOCAL'))";

/// Open transactions on every instance. The fallback below serves users granted `V$` only.
/// Read from the root of a CDB, these views list the transactions of every container; the
/// `_IN_CONTAINER` forms keep the captured PDB's (bound by its `CON_ID`), so a session left open
/// in another PDB cannot hold the start position back.
///
/// The id is read from the numeric columns as `USN.SLOT.SQN`, never as `RAWTOHEX(XID)`: the RAW
/// holds the three numbers in the platform's byte order (`0A000B0057030000` on Linux x86-64),
/// which is neither portable nor what the mapping reads.
/// `V$TRANSACTION` names the slot column `XIDSLOT`, where LogMiner names it `XIDSLT`.
pub const OPEN_TRANSACTIONS: &str = "SELECT XIDUSN || '.' || XIDSLOT || '.' || XIDSQN, INST_ID, \
     START_SCN, STATUS, CON_ID FROM GV$TRANSACTION";
pub const OPEN_TRANSACTIONS_LOCAL: &str = "SELECT XIDUSN || '.' || XIDSLOT || '.' || XIDSQN, 1, \
     START_SCN, STATUS, CON_ID FROM V$TRANSACTION";
pub const OPEN_TRANSACTIONS_IN_CONTAINER: &str = "SELECT XIDUSN || '.' || XIDSLOT || '.' || \
     XIDSQN, INST_ID, START_SCN, STATUS, CON_ID FROM GV$TRANSACTION WHERE CON_ID = :1";
pub const OPEN_TRANSACTIONS_LOCAL_IN_CONTAINER: &str = "SELECT XIDUSN || '.' || XIDSLOT || '.' \
     || XIDSQN, 1, START_SCN, STATUS, CON_ID FROM V$TRANSACTION WHERE CON_ID = :1";

/// Live sessions on every instance; the orphan check asks whether a START row's session lives.
/// A LogMiner row names its session by redo `THREAD#`, `SESSION#` and `SERIAL#`, so each session
/// is given its instance's thread (`GV$INSTANCE.THREAD#`), not its `INST_ID`: the two agree only
/// by custom. The local form reads the connected instance's thread.
pub const SESSIONS: &str = "SELECT I.THREAD#, S.SID, S.SERIAL# FROM GV$SESSION S, GV$INSTANCE I \
     WHERE I.INST_ID = S.INST_ID";
pub const SESSIONS_LOCAL: &str =
    "SELECT I.THREAD#, S.SID, S.SERIAL# FROM V$SESSION S, V$INSTANCE I";

/// The open instances of the database, each with its name and redo thread: the instances whose
/// log writers the flush must reach (`instances.rs`). One row on a single instance. `GV$`, since
/// `V$INSTANCE` shows only the instance the session runs on; `STATUS` is `OPEN` for an instance
/// that can run a transaction (Database Reference, V$INSTANCE).
pub const INSTANCES: &str =
    "SELECT INSTANCE_NAME, THREAD# FROM GV$INSTANCE WHERE STATUS = 'OPEN' ORDER BY INST_ID";

/// SCN to wall-clock time; ORA-08181 when the SCN is older than Oracle's mapping.
pub const SCN_TO_TIMESTAMP: &str =
    "SELECT TO_CHAR(SCN_TO_TIMESTAMP(:1), 'YYYY-MM-DD HH24:MI:SS') FROM DUAL";

/// The database host's current UTC offset, as `+01:00` / `-05:30`: `SYSTIMESTAMP` is the host's
/// clock with the host operating system's offset (`SYSDATE` and LogMiner's DATE columns are the
/// same clock without it). Not `DBTIMEZONE` or `SESSIONTIMEZONE`: those are set in the database
/// or the session and say nothing of the host's zone.
pub const DATABASE_UTC_OFFSET: &str = "SELECT TO_CHAR(SYSTIMESTAMP, 'TZH:TZM') FROM DUAL";

/// A table's object numbers (`ALL_OBJECTS`, Database Reference 19c): `OBJECT_ID` is what a row
/// LogMiner cannot name carries (`"UNKNOWN"."OBJ# n"`) and survives a rename; `DATA_OBJECT_ID`
/// is the segment's, new after TRUNCATE or MOVE, NULL for a partitioned table. Debezium reads
/// the same pair (`OracleConnection.getDatabaseObjectDetails`).
pub const TABLE_OBJECT: &str = "SELECT OBJECT_ID, DATA_OBJECT_ID FROM ALL_OBJECTS \
     WHERE OWNER = :1 AND OBJECT_NAME = :2 AND OBJECT_TYPE = 'TABLE'";

/// The database's character sets: `NLS_DATABASE_PARAMETERS` holds the permanent NLS settings
/// of the database, one row per `PARAMETER` with its `VALUE` (Database Reference 19c). The
/// session's own NLS settings (`NLS_SESSION_PARAMETERS`) do not say how data is stored.
pub const CHARACTER_SETS: &str = "SELECT PARAMETER, VALUE FROM NLS_DATABASE_PARAMETERS \
     WHERE PARAMETER IN ('NLS_CHARACTERSET', 'NLS_NCHAR_CHARACTERSET')";

/// The database time zone, which TIMESTAMP WITH LOCAL TIME ZONE values are stored in (SQL
/// Language Reference, "DBTIMEZONE"): an offset or a region name.
pub const DATABASE_TIME_ZONE: &str = "SELECT DBTIMEZONE FROM DUAL";

/// Columns in table order, from `ALL_TAB_COLS`: the columns the user defined
/// (`USER_GENERATED = 'YES'`), INVISIBLE ones included, without virtual columns. An INVISIBLE
/// column is hidden from `SELECT *` (`HIDDEN_COLUMN = 'YES'`, no `COLUMN_ID`) but is user data
/// that SQL_REDO names like any other, so leaving it out made every change that sets it fail
/// as an unknown column; it sorts after the visible ones, by `INTERNAL_COLUMN_ID`. Hidden columns
/// Oracle makes itself (SET UNUSED, function-based index and object columns) are not
/// user-generated, and virtual columns never appear in SQL_REDO. `DATA_TYPE` already carries
/// fractional precision and time-zone words (`TIMESTAMP(6) WITH TIME ZONE`).
///
/// `SEGMENT_COLUMN_ID` is the column's place in the stored row: the number LogMiner writes as
/// `"COL n"` for a row it cannot render with the current dictionary (see
/// [`crate::dictionary::Column::segment_column`]). `COLUMN_ID` is the `SELECT *` order and
/// `INTERNAL_COLUMN_ID` counts hidden columns too; neither is what the redo holds.
pub const TABLE_COLUMNS: &str = "SELECT COLUMN_NAME, DATA_TYPE, DATA_LENGTH, DATA_PRECISION, \
     DATA_SCALE, CHAR_LENGTH, CHAR_USED, NULLABLE, DATA_TYPE_OWNER, SEGMENT_COLUMN_ID \
     FROM ALL_TAB_COLS \
     WHERE OWNER = :1 AND TABLE_NAME = :2 AND USER_GENERATED = 'YES' AND VIRTUAL_COLUMN = 'NO' \
     ORDER BY COLUMN_ID NULLS LAST, INTERNAL_COLUMN_ID";

/// The tables the schema and table lists choose from: every readable table outside
/// Oracle-maintained schemas, without temporary, nested, secondary (domain index) and IOT
/// overflow or mapping tables, and without tables in the recycle bin.
pub const LIST_TABLES: &str = "SELECT T.OWNER, T.TABLE_NAME FROM ALL_TABLES T, ALL_USERS U \
     WHERE U.USERNAME = T.OWNER AND U.ORACLE_MAINTAINED = 'N' AND T.TEMPORARY = 'N' \
     AND T.NESTED = 'NO' AND T.SECONDARY = 'N' AND T.DROPPED = 'NO' \
     AND (T.IOT_TYPE IS NULL OR T.IOT_TYPE = 'IOT') ORDER BY T.OWNER, T.TABLE_NAME";

/// Primary key columns in key order.
pub const PRIMARY_KEY: &str = "SELECT CC.COLUMN_NAME, CC.POSITION FROM ALL_CONSTRAINTS C, \
     ALL_CONS_COLUMNS CC WHERE C.OWNER = :1 AND C.TABLE_NAME = :2 AND C.CONSTRAINT_TYPE = 'P' \
     AND CC.OWNER = C.OWNER AND CC.CONSTRAINT_NAME = C.CONSTRAINT_NAME \
     AND CC.TABLE_NAME = C.TABLE_NAME ORDER BY CC.POSITION";

/// The columns of a table's unique indexes (a primary key's index among them), in index-name
/// and column order: a table without a primary key takes its key from one of them
/// ([`crate::source::unique_key`]). Indexes rather than unique constraints, as Debezium reads
/// them (JDBC `getIndexInfo`, which Oracle's driver answers from these two views): a unique index
/// created without a constraint identifies a row just as well, and a unique constraint is
/// enforced by a unique index (a constraint using a non-unique index is left out, as Debezium
/// leaves it out). The index's owner can differ from the table's, so the table is matched by
/// `TABLE_OWNER` and the columns by the index's own owner.
pub const UNIQUE_INDEXES: &str = "SELECT I.INDEX_NAME, C.COLUMN_NAME, C.COLUMN_POSITION \
     FROM ALL_INDEXES I, ALL_IND_COLUMNS C WHERE I.TABLE_OWNER = :1 AND I.TABLE_NAME = :2 \
     AND I.UNIQUENESS = 'UNIQUE' AND C.INDEX_OWNER = I.OWNER AND C.INDEX_NAME = I.INDEX_NAME \
     ORDER BY I.INDEX_NAME, C.COLUMN_POSITION";

/// Supplemental log groups of a table (`ALL COLUMN LOGGING` is what a full before image needs).
pub const LOG_GROUPS: &str =
    "SELECT LOG_GROUP_TYPE, ALWAYS FROM ALL_LOG_GROUPS WHERE OWNER = :1 AND TABLE_NAME = :2";

/// What the session may do; roles matter for `EXECUTE_CATALOG_ROLE` (DBMS_LOGMNR).
pub const SESSION_PRIVILEGES: &str = "SELECT PRIVILEGE FROM SESSION_PRIVS";
pub const SESSION_ROLES: &str = "SELECT ROLE FROM SESSION_ROLES";
/// EXECUTE on DBMS_LOGMNR granted to the user (or PUBLIC) directly, which serves instead of
/// EXECUTE_CATALOG_ROLE; written as doctor names it.
pub const PACKAGE_PRIVILEGES: &str = "SELECT PRIVILEGE || ' ON ' || TABLE_SCHEMA || '.' || \
     TABLE_NAME FROM ALL_TAB_PRIVS WHERE TABLE_SCHEMA = 'SYS' AND TABLE_NAME = 'DBMS_LOGMNR' \
     AND GRANTEE IN (USER, 'PUBLIC')";
/// The tablespace the flush table is created in, for doctor's quota statement.
pub const DEFAULT_TABLESPACE: &str = "SELECT DEFAULT_TABLESPACE FROM USER_USERS";

/// Registers the first log of a new log set. `NEW` ends any earlier LogMiner session and starts
/// a new list, so a new set never inherits files of the previous one (ORA-01289 on duplicates).
pub const ADD_FIRST_LOGFILE: &str = "BEGIN SYS.DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, \
     OPTIONS => SYS.DBMS_LOGMNR.NEW); END;";
/// Registers each further log of the set.
pub const ADD_LOGFILE: &str = "BEGIN SYS.DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, \
     OPTIONS => SYS.DBMS_LOGMNR.ADDFILE); END;";

/// Starts LogMiner over `[STARTSCN, ENDSCN]` (both inclusive) with the online catalog as
/// dictionary. Deliberately without:
/// - `COMMITTED_DATA_ONLY`: it stages whole transactions in the database's memory and shows a
///   transaction only when its start and commit both fall in the window; the capture buffers
///   itself, within its own budget;
/// - `CONTINUOUS_MINE`: removed in 19c; the capture registers logs itself;
/// - `NO_ROWID_IN_STMT`: the ROWID predicate is kept, as the parser and undo matching expect
///   the default statement shape (the `ROW_ID` column is read either way).
pub const START_LOGMNR: &str = "BEGIN SYS.DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, \
     ENDSCN => :2, OPTIONS => SYS.DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG); END;";

/// Ends the session; ORA-01307 (none active) is not an error.
pub const END_LOGMNR: &str = "BEGIN SYS.DBMS_LOGMNR.END_LOGMNR; END;";

/// The memory of the session it runs on (the mining session): `V$MYSTAT` holds the statistics
/// of the querying session, named through `V$STATNAME`. The query Debezium runs for its
/// `*GlobalAreaMemory` metrics (`OracleConnection.getSessionStatisticByName`), both figures in
/// one round trip instead of one per statistic.
pub const SESSION_MEMORY: &str = "SELECT N.NAME, M.VALUE FROM V$MYSTAT M, V$STATNAME N \
     WHERE N.STATISTIC# = M.STATISTIC# AND N.NAME IN ('session pga memory', 'session pga memory max')";

/// The transaction id as `USN.SLOT.SQN`, from the numeric columns: `RAWTOHEX(XID)` writes the
/// RAW in the platform's byte order, so the same id has another text on a big-endian server
/// (`Xid::from_decimal_parts`).
pub const XID_PARTS: &str = "XIDUSN || '.' || XIDSLT || '.' || XIDSQN";

/// The columns of the contents query, in select order; [`super::mapping`] reads them by these
/// positions. `SQL_UNDO` is not selected: the capture never needs it, and each VARCHAR2(4000)
/// column costs 4000 bytes per row of the fetch array.
pub const CONTENTS_COLUMNS: [&str; 24] = [
    "SCN",
    "START_SCN",
    "COMMIT_SCN",
    "TO_CHAR(TIMESTAMP, 'YYYY-MM-DD HH24:MI:SS')",
    "TO_CHAR(COMMIT_TIMESTAMP, 'YYYY-MM-DD HH24:MI:SS')",
    XID_PARTS,
    "OPERATION_CODE",
    "ROLLBACK",
    "ROW_ID",
    "RS_ID",
    "SSN",
    "CSF",
    "SEG_OWNER",
    "TABLE_NAME",
    "USERNAME",
    "SESSION#",
    "SERIAL#",
    "THREAD#",
    "INFO",
    "STATUS",
    "SQL_REDO",
    "SRC_CON_NAME",
    "CON_ID",
    "DATA_OBJ#",
];

/// Operation codes every window needs whatever the table: START, COMMIT, MISSING_SCN, ROLLBACK.
const CONTROL_OPERATION_CODES: &str = "6, 7, 34, 36";

/// Leaves out DDL that Oracle runs on its own behalf (`INFO` starting `INTERNAL DDL`), such as
/// the rename of a table dropped into the recycle bin: it names a captured table but is not a
/// statement anyone issued, and would otherwise become a schema change and a dictionary reload.
/// Debezium leaves these rows out of its query for the same reason (DBZ-2916, in
/// `BufferedLogMinerQueryBuilder`'s DDL predicate). Written so a NULL `INFO`, the usual value on
/// DML rows, keeps the row: `INFO NOT LIKE ...` alone would be unknown there and drop it.
pub const NOT_INTERNAL_DDL: &str =
    "(OPERATION_CODE <> 5 OR INFO IS NULL OR INFO NOT LIKE 'INTERNAL DDL%')";

/// The most expressions an IN list may hold: "A comma-delimited list of expressions can contain
/// no more than 1000 expressions" (SQL Language Reference, Expression Lists); one more is
/// ORA-01795. Debezium's `in` filter mode cuts its lists at the same number
/// (`AbstractLogMinerQueryBuilder.IN_CLAUSE_MAX_ELEMENTS`).
pub const MAX_IN_LIST: usize = 1000;

/// The rows LogMiner names by object number (`"UNKNOWN"."OBJ# n"`): with the online catalog it
/// writes a row of a table altered since the row was written that way, and the schema history
/// matches it to the captured table's version in force (`schema_history::object_row`).
///
/// Debezium's `hybrid` strategy keeps the same rows with `TABLE_NAME LIKE 'OBJ#%'`
/// (`AbstractLogMinerQueryBuilder`, the table predicate of its `in` and `regex` filter modes).
/// Chosen over binding the captured tables' object numbers (`TABLE_NAME IN ('OBJ# n', ...)`):
/// a literal costs no binds and keeps the statement the same whatever is captured, and it also
/// keeps rows of a captured object whose number the history has not recorded (a version from
/// before the capture read object numbers), so those stop typed instead of being filtered out
/// unseen. Rows of objects that are not captured are few (only after DDL) and are left out in
/// the assembler, which knows the captured object numbers. `SEG_OWNER = 'UNKNOWN'` is what
/// LogMiner writes for the owner of such a row.
pub const NUMBERED_OBJECTS: &str = "(SEG_OWNER = 'UNKNOWN' AND TABLE_NAME LIKE 'OBJ#%')";

/// The contents query for a window and its bind values, in order.
///
/// The filter keeps transaction control rows and every row of a captured table, so LogMiner
/// does not ship the rest (internal DML on `SYS.OBJ$`, other applications' tables) over the
/// network. Oracle's internal DDL on captured tables is left out too ([`NOT_INTERNAL_DDL`]). In
/// classic mining from the CDB root, rows of other PDBs are left out by `SRC_CON_NAME`, as
/// Debezium does; inside a PDB (21c+ per-PDB mining) LogMiner returns only that PDB's redo and
/// no container filter is needed.
/// No `ORDER BY`: the view already returns rows in SCN order, and sorting would make Oracle
/// materialize the whole window before the first row.
///
/// The captured tables are written by [`captured_rows`]; the statement stays short and its binds
/// few however many tables are captured (figures in `docs/oracle.md`, "Many tables").
pub fn contents_query(
    tables: &[(String, String)],
    objects: &[u64],
    container: Option<&str>,
) -> (String, Vec<String>) {
    let mut sql = String::with_capacity(640 + tables.len() * 8);
    sql.push_str("SELECT ");
    sql.push_str(&CONTENTS_COLUMNS.join(", "));
    sql.push_str(" FROM V$LOGMNR_CONTENTS WHERE SCN >= :1 AND SCN <= :2 AND (OPERATION_CODE IN (");
    sql.push_str(CONTROL_OPERATION_CODES);
    sql.push(')');
    // The SCN bounds are :1 and :2.
    let mut binds = Vec::with_capacity(tables.len() + 2);
    for disjunct in captured_rows(tables, 3, &mut binds) {
        sql.push_str(" OR ");
        sql.push_str(&disjunct);
    }
    for disjunct in captured_objects(objects) {
        sql.push_str(" OR ");
        sql.push_str(&disjunct);
    }
    if !tables.is_empty() {
        sql.push_str(" OR ");
        sql.push_str(NUMBERED_OBJECTS);
    }
    sql.push(')');
    sql.push_str(" AND ");
    sql.push_str(NOT_INTERNAL_DDL);
    if let Some(container) = container {
        let _ = write!(sql, " AND SRC_CON_NAME = :{}", binds.len() + 3);
        binds.push(container.to_owned());
    }
    (sql, binds)
}

/// The conditions that keep the rows of the captured tables, each to be ORed with the others,
/// their bind values pushed onto `binds` with placeholders numbered from `first_placeholder`.
///
/// Tables are grouped by owner, `(SEG_OWNER = :o AND TABLE_NAME IN (:t1, ..., :tn))`, an owner
/// with more than [`MAX_IN_LIST`] tables taking several groups. So a table costs one bind and
/// about seven characters, where a `(SEG_OWNER = :a AND TABLE_NAME = :b)` pair per table cost two
/// binds and 45 characters: 2,000 tables are about 13.5 KB and 2,000 binds instead of 91 KB and
/// 4,000. Chosen over the other ways (measured in `docs/oracle.md`, "Many tables"):
/// - `(SEG_OWNER, TABLE_NAME) IN ((:a, :b), ...)`: a list of sets has no length limit (SQL
///   Language Reference, Expression Lists), but still two binds per table;
/// - Debezium's `in` mode (`SEG_OWNER || '.' || TABLE_NAME IN ('A.B', ...)`, cut at 1000) writes
///   the names into the text as literals, which must then be escaped, and applies a function
///   to both columns of every row; binds keep names out of the text;
/// - Debezium's `regex` mode (`REGEXP_LIKE`) and `none` (filter in the client) fetch rows of
///   tables that are not captured, or run a regular expression on every row LogMiner returns.
///
/// The rows of objects LogMiner can name only by number are kept by [`NUMBERED_OBJECTS`].
pub fn captured_rows(
    tables: &[(String, String)],
    first_placeholder: usize,
    binds: &mut Vec<String>,
) -> Vec<String> {
    let mut by_owner: Vec<(&str, Vec<&str>)> = Vec::new();
    for (owner, table) in tables {
        match by_owner.iter_mut().find(|(known, _)| known == owner) {
            Some((_, names)) => names.push(table),
            None => by_owner.push((owner, vec![table])),
        }
    }
    let mut disjuncts = Vec::new();
    for (owner, names) in by_owner {
        for chunk in names.chunks(MAX_IN_LIST) {
            let mut placeholder = first_placeholder + binds.len();
            let mut condition = format!("(SEG_OWNER = :{placeholder} AND TABLE_NAME IN (");
            binds.push(owner.to_owned());
            for (index, name) in chunk.iter().enumerate() {
                placeholder += 1;
                if index > 0 {
                    condition.push_str(", ");
                }
                let _ = write!(condition, ":{placeholder}");
                binds.push((*name).to_owned());
            }
            condition.push_str("))");
            disjuncts.push(condition);
        }
    }
    disjuncts
}

/// The conditions that keep the rows of the captured tables by object number, `DATA_OBJ# IN
/// (n, ...)` cut at [`MAX_IN_LIST`], each to be ORed with the others.
///
/// With the online catalog LogMiner names a row by the table's name *when mining*: once a
/// captured table is renamed (or dropped into the recycle bin, which renames it `BIN$...`), the
/// rows written before carry the new name, which the name conditions of [`captured_rows`] do not
/// select, and a capture still behind the rename would lose them without a trace. The object
/// number survives renames and ALTERs (Oracle Database Reference, ALL_OBJECTS: `OBJECT_ID`
/// "Dictionary object number of the object"), so these rows are kept by it and matched to the
/// table's version in force by the schema history. Numbers are written as literals: they are
/// digits the capture formats itself (nothing to escape), and binds would add one per table.
pub fn captured_objects(objects: &[u64]) -> Vec<String> {
    objects
        .chunks(MAX_IN_LIST)
        .map(|chunk| {
            let mut condition = String::with_capacity(16 + chunk.len() * 8);
            condition.push_str("DATA_OBJ# IN (");
            for (index, object) in chunk.iter().enumerate() {
                if index > 0 {
                    condition.push_str(", ");
                }
                let _ = write!(condition, "{object}");
            }
            condition.push(')');
            condition
        })
        .collect()
}

/// A flush table name that is safe to interpolate: `NAME` or `OWNER.NAME`, unquoted identifiers
/// (the CRD validates the same pattern; this is the last line of defence).
pub fn flush_table_name(name: &str) -> Option<String> {
    let valid_part = |part: &str| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && part.len() <= 128
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#'))
    };
    let parts: Vec<&str> = name.split('.').collect();
    (parts.len() <= 2 && parts.iter().all(|part| valid_part(part))).then(|| name.to_uppercase())
}

/// The flush write: one committed update makes LGWR write the redo buffer, so a window ending at
/// the current SCN finds all of its redo in the online log. Debezium does the same.
pub fn flush_update(table: &str) -> String {
    format!("UPDATE {table} SET LAST_SCN = (SELECT CURRENT_SCN FROM V$DATABASE)")
}

/// The heartbeat action query as sent: without surrounding blanks, and without a statement's
/// trailing `;` (OCI refuses it in SQL), which a PL/SQL block (`BEGIN ... END;`) keeps.
pub fn action_statement(query: &str) -> &str {
    let trimmed = query.trim();
    let plsql = trimmed.get(..5).is_some_and(|head| {
        head.eq_ignore_ascii_case("begin") || head.eq_ignore_ascii_case("decla")
    });
    if plsql {
        trimmed
    } else {
        trimmed.strip_suffix(';').unwrap_or(trimmed).trim_end()
    }
}

/// Creates the flush table when it is missing (ORA-00942 on the update); [`flush_insert`] then
/// gives it its row.
pub fn flush_create(table: &str) -> String {
    format!("CREATE TABLE {table} (LAST_SCN NUMBER(19,0) NOT NULL)")
}

/// The flush table's one row. The flush needs exactly one: an UPDATE that changes no row writes
/// no redo and so makes LGWR write nothing (Debezium's `CommitLogWriterFlushStrategy` inserts
/// one into an empty table for the same reason).
pub fn flush_insert(table: &str) -> String {
    format!("INSERT INTO {table} (LAST_SCN) VALUES (0)")
}

/// Clears a flush table that holds several rows, before [`flush_insert`] gives it one again.
pub fn flush_delete(table: &str) -> String {
    format!("DELETE FROM {table}")
}

/// `"NAME"` for an identifier from the dictionary; `None` when it holds a double quote, which no
/// Oracle identifier can.
pub fn quote_identifier(name: &str) -> Option<String> {
    (!name.contains('"') && !name.is_empty()).then(|| format!("\"{name}\""))
}

/// How a column is selected for a flashback read: as text in the shape SQL_REDO writes it, so
/// snapshot rows are typed by exactly the code that types streamed rows.
pub fn flashback_expression(column: &str, data_type: &OracleType) -> String {
    use OracleType as T;
    match data_type {
        T::Number { .. } | T::Float { .. } => format!("TO_CHAR({column}, 'TM9')"),
        T::BinaryFloat | T::BinaryDouble => format!("TO_CHAR({column})"),
        // SYYYY, as the session formats: YYYY drops the sign of a BC year.
        T::Date => format!("TO_CHAR({column}, '{}')", nls::NLS_DATE_FORMAT),
        T::Timestamp { .. } => format!("TO_CHAR({column}, '{}')", nls::NLS_TIMESTAMP_FORMAT),
        T::TimestampWithTimeZone { .. } | T::TimestampWithLocalTimeZone { .. } => {
            format!("TO_CHAR({column}, '{}')", nls::NLS_TIMESTAMP_TZ_FORMAT)
        }
        T::IntervalYearToMonth { .. } | T::IntervalDayToSecond { .. } => {
            format!("TO_CHAR({column})")
        }
        T::Raw { .. } => format!("RAWTOHEX({column})"),
        // A LONG or LONG RAW column may stand in a select list only as itself: any function of
        // it is ORA-00997 (illegal use of LONG datatype), RAWTOHEX included. LONG RAW is fetched
        // as bytes, as BLOB is, and LONG as text (the fallback below). Neither can be a key,
        // so the read's WHERE and ORDER BY never name one.
        T::LongRaw => column.to_owned(),
        T::RowId | T::URowId { .. } => format!("ROWIDTOCHAR({column})"),
        T::XmlType => format!("XMLSERIALIZE(CONTENT {column} AS CLOB)"),
        // Character data and LOBs are fetched as they are (BLOBs as bytes).
        _ => column.to_owned(),
    }
}

/// Whether a table is index-organised (`IOT_TYPE = 'IOT'`), which decides its [`RowOrder`].
pub const TABLE_ORGANIZATION: &str =
    "SELECT IOT_TYPE FROM ALL_TABLES WHERE OWNER = :1 AND TABLE_NAME = :2";

/// The order a flashback read walks a table in, so that a batch resumes after the last row
/// delivered without an offset scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowOrder {
    /// A heap table: by ROWID, physical and fixed as of the read's SCN.
    RowId,
    /// An index-organised table, by its primary key (indexes into the columns, in key order).
    /// Its rows have logical ROWIDs (UROWID, `*` followed by the key in base 64): CHARTOROWID
    /// refuses them (ORA-01410) and Oracle documents no order for them, while the primary key
    /// is the order the IOT is stored in, so a key range is also the cheapest read.
    PrimaryKey(Vec<usize>),
}

/// A flashback statement and where the key values of its bounds are bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlashbackQuery {
    pub sql: String,
    /// For [`RowOrder::PrimaryKey`] with key bounds: for each placeholder after the SCN's (and
    /// in order), the value it takes, as an index into the lower bound's key values followed by
    /// the upper bound's (`key.len() + i` is the upper bound's `i`th). Empty otherwise.
    pub key_binds: Vec<usize>,
}

/// What bounds a flashback read besides its SCN and condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBounds {
    /// A batch: after a position when `resume`, at most the last placeholder's number of rows.
    Batch { resume: bool },
    /// A heap table's chunk: `ROWID BETWEEN CHARTOROWID(:2) AND CHARTOROWID(:3)`, every row.
    RowIds,
    /// An index-organised table's chunk: keys above a lower bound (when `after`) and at most
    /// an upper bound (when `through`), every row.
    Keys { after: bool, through: bool },
}

/// A flashback batch: rows as of an SCN (`:1`), in `order` after a position when `resume`, at
/// most the last placeholder's number of rows ([`read_query`]).
pub fn flashback_query(
    table: &TableSchema,
    order: &RowOrder,
    resume: bool,
    condition: Option<&str>,
) -> Result<FlashbackQuery, String> {
    read_query(table, order, ReadBounds::Batch { resume }, condition)
}

/// A flashback read: rows as of an SCN (`:1`) in `order`, within `bounds`. A `condition`
/// (`snapshot.selectOverrides`: trusted operator input, validated only as naming a captured
/// table) is added in parentheses, so its own ORs cannot widen the bounds.
///
/// A heap read selects the ROWID first. A batch resumes with `ROWID > CHARTOROWID(:2)`; a chunk
/// is `ROWID BETWEEN CHARTOROWID(:2) AND CHARTOROWID(:3)`, which Oracle answers with a ROWID
/// range scan reading only the blocks between the two (`TABLE ACCESS BY ROWID RANGE`;
/// Database SQL Tuning Guide, "Optimizer Access Paths", "Table Access by Rowid"; the statement
/// `DBMS_PARALLEL_EXECUTE.CREATE_CHUNKS_BY_ROWID`'s chunks are run with). An IOT read selects only the columns and bounds the key with the
/// lexicographic comparison Oracle has no row-value form for:
/// `K1 >= v1 AND (K1 > v1 OR (K1 = v1 AND K2 > v2))` above a key, and its mirror
/// `K1 <= v1 AND (K1 < v1 OR (K1 = v1 AND K2 <= v2))` up to one, whose leading bounds let the
/// optimiser run an index range scan. Key values are bound as the text the select wrote them in
/// and read back with the inverse conversion ([`key_value`]). Errors name what cannot be
/// written.
pub fn read_query(
    table: &TableSchema,
    order: &RowOrder,
    bounds: ReadBounds,
    condition: Option<&str>,
) -> Result<FlashbackQuery, String> {
    statement(table, order, bounds, condition, Shape::Rows)
}

/// What a statement selects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Rows as of an SCN: the ROWID of a heap row, then every column.
    Rows,
    /// The key of one row, current ([`key_boundary_query`]).
    KeyBoundary,
}

fn statement(
    table: &TableSchema,
    order: &RowOrder,
    bounds: ReadBounds,
    condition: Option<&str>,
    shape: Shape,
) -> Result<FlashbackQuery, String> {
    let quoted = |name: &str| {
        quote_identifier(name).ok_or_else(|| format!("the name {name:?} holds a double quote"))
    };
    let mut sql = String::from("SELECT ");
    if *order == RowOrder::RowId {
        sql.push_str("ROWIDTOCHAR(ROWID), ");
    }
    let selected: Vec<&crate::dictionary::Column> = match (shape, order) {
        (Shape::KeyBoundary, RowOrder::PrimaryKey(key)) => key
            .iter()
            .map(|&index| {
                table
                    .columns()
                    .get(index)
                    .ok_or_else(|| format!("key column {index} is not a column"))
            })
            .collect::<Result<_, _>>()?,
        _ => table.columns().iter().collect(),
    };
    let mut expressions = Vec::with_capacity(selected.len());
    for column in selected {
        expressions.push(flashback_expression(
            &quoted(&column.name)?,
            &column.data_type,
        ));
    }
    sql.push_str(&expressions.join(", "));
    let _ = write!(
        sql,
        " FROM {}.{}",
        quoted(table.schema())?,
        quoted(table.table())?
    );
    let mut next_placeholder = 1;
    if shape == Shape::Rows {
        sql.push_str(" AS OF SCN :1");
        next_placeholder = 2;
    }
    let mut predicates = Vec::with_capacity(2);
    if let Some(condition) = condition {
        predicates.push(format!("({condition})"));
    }
    let mut key_binds = Vec::new();
    let ordering = match order {
        RowOrder::RowId => {
            match bounds {
                ReadBounds::Batch { resume: true } => {
                    predicates.push(format!("ROWID > CHARTOROWID(:{next_placeholder})"));
                    next_placeholder += 1;
                }
                ReadBounds::RowIds => {
                    predicates.push(format!(
                        "ROWID BETWEEN CHARTOROWID(:{}) AND CHARTOROWID(:{})",
                        next_placeholder,
                        next_placeholder + 1
                    ));
                    next_placeholder += 2;
                }
                ReadBounds::Batch { resume: false } => {}
                ReadBounds::Keys { .. } => {
                    return Err("a key range for a table that is not index-organised".to_owned());
                }
            }
            "ROWID".to_owned()
        }
        RowOrder::PrimaryKey(key) => {
            let mut names = Vec::with_capacity(key.len());
            let mut conversions = Vec::with_capacity(key.len());
            for &index in key {
                let column = table
                    .columns()
                    .get(index)
                    .ok_or_else(|| format!("key column {index} is not a column"))?;
                names.push(quoted(&column.name)?);
                conversions.push(key_value(&column.data_type).ok_or_else(|| {
                    format!(
                        "key column {} has a type ({}) a key range cannot be written for",
                        column.name, column.data_type
                    )
                })?);
            }
            let (after, through) = match bounds {
                ReadBounds::Batch { resume } => (resume, false),
                ReadBounds::Keys { after, through } => (after, through),
                ReadBounds::RowIds => {
                    return Err("a ROWID range for an index-organised table".to_owned());
                }
            };
            let sides = [
                (after, KeySide::Above, 0),
                (through, KeySide::AtMost, key.len()),
            ];
            for (wanted, side, offset) in sides {
                if wanted && !key.is_empty() {
                    let mut bind = |position: usize| {
                        key_binds.push(offset + position);
                        let placeholder = format!(":{next_placeholder}");
                        next_placeholder += 1;
                        conversions[position].replace('?', &placeholder)
                    };
                    predicates.push(key_comparison(&names, side, &mut bind));
                }
            }
            names.join(", ")
        }
    };
    if !predicates.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&predicates.join(" AND "));
    }
    let _ = write!(sql, " ORDER BY {ordering}");
    if shape == Shape::KeyBoundary {
        let _ = write!(
            sql,
            " OFFSET :{next_placeholder} ROWS FETCH NEXT 1 ROWS ONLY"
        );
    } else if let ReadBounds::Batch { .. } = bounds {
        let _ = write!(sql, " FETCH FIRST :{next_placeholder} ROWS ONLY");
    }
    Ok(FlashbackQuery { sql, key_binds })
}

/// Which side of a key bound a row must be on.
#[derive(Clone, Copy)]
enum KeySide {
    /// Strictly above the key (after a resume position, above a chunk's lower bound).
    Above,
    /// At or below the key (a chunk's upper bound).
    AtMost,
}

/// The lexicographic comparison of the key `names` with a bound whose value at a key position
/// `bind` writes (binding it).
fn key_comparison(
    names: &[String],
    side: KeySide,
    bind: &mut dyn FnMut(usize) -> String,
) -> String {
    let (lead, strict, last_op) = match side {
        KeySide::Above => (">=", ">", ">"),
        KeySide::AtMost => ("<=", "<", "<="),
    };
    let last = names.len() - 1;
    let mut comparisons = Vec::with_capacity(2);
    if last > 0 {
        let lower = bind(0);
        comparisons.push(format!("{} {lead} {lower}", names[0]));
    }
    let mut nested = String::new();
    for (position, name) in names.iter().enumerate().take(last) {
        let beyond = bind(position);
        let equal = bind(position);
        let _ = write!(
            nested,
            "({name} {strict} {beyond} OR ({name} = {equal} AND "
        );
    }
    let final_value = bind(last);
    let _ = write!(nested, "{} {last_op} {final_value}", names[last]);
    nested.push_str(&"))".repeat(last));
    comparisons.push(nested);
    comparisons.join(" AND ")
}

/// How a key value bound as the text [`flashback_expression`] wrote it is read back as the
/// column's type (`?` stands for the placeholder); `None` for types a primary key cannot have.
/// The session's fixed NLS settings make the number and date texts unambiguous.
fn key_value(data_type: &OracleType) -> Option<String> {
    use OracleType as T;
    Some(match data_type {
        T::Number { .. } | T::Float { .. } => "TO_NUMBER(?)".to_owned(),
        T::BinaryFloat => "TO_BINARY_FLOAT(?)".to_owned(),
        T::BinaryDouble => "TO_BINARY_DOUBLE(?)".to_owned(),
        T::Date => format!("TO_DATE(?, '{}')", nls::NLS_DATE_FORMAT),
        T::Timestamp { .. } => format!("TO_TIMESTAMP(?, '{}')", nls::NLS_TIMESTAMP_FORMAT),
        T::TimestampWithTimeZone { .. } | T::TimestampWithLocalTimeZone { .. } => {
            format!("TO_TIMESTAMP_TZ(?, '{}')", nls::NLS_TIMESTAMP_TZ_FORMAT)
        }
        T::IntervalYearToMonth { .. } => "TO_YMINTERVAL(?)".to_owned(),
        T::IntervalDayToSecond { .. } => "TO_DSINTERVAL(?)".to_owned(),
        T::Raw { .. } => "HEXTORAW(?)".to_owned(),
        T::RowId | T::URowId { .. } => "CHARTOROWID(?)".to_owned(),
        T::Char { .. } | T::NChar { .. } | T::Varchar2 { .. } | T::NVarchar2 { .. } => {
            "?".to_owned()
        }
        // A BOOLEAN key is read back from the text 'TRUE' / 'FALSE' or '1' / '0'.
        T::Boolean => "?".to_owned(),
        T::Long
        | T::Clob
        | T::NClob
        | T::Blob
        | T::LongRaw
        | T::XmlType
        | T::Json
        | T::Unsupported { .. } => return None,
    })
}

/// What a call needs granted, by the name the client gives the call: what the capture user
/// lacks when the call fails with ORA-00942 (the view is not visible) or ORA-01031. The views are
/// the `V_$` objects behind the `V$` synonyms, which is what a DBA grants on.
pub fn grants_for(call: &str) -> Option<&'static [&'static str]> {
    Some(match call {
        "read database layout" | "read V$DATABASE" | "read current SCN" => {
            &["SELECT ON V_$DATABASE", "SELECT ON V_$INSTANCE"]
        }
        "read V$CONTAINERS" => &["SELECT ON V_$CONTAINERS"],
        "read V$THREAD" => &["SELECT ON V_$THREAD"],
        "list redo logs" => &[
            "SELECT ON V_$LOG",
            "SELECT ON V_$LOGFILE",
            "SELECT ON V_$ARCHIVED_LOG",
            "SELECT ON V_$ARCHIVE_DEST_STATUS",
        ],
        "read open transactions" => &["SELECT ON GV_$TRANSACTION"],
        "read sessions" => &["SELECT ON GV_$SESSION", "SELECT ON GV_$INSTANCE"],
        "read instances" => &["SELECT ON GV_$INSTANCE"],
        "register log" | "start LogMiner" => &["LOGMINING", "EXECUTE ON SYS.DBMS_LOGMNR"],
        "read V$LOGMNR_CONTENTS" => &["LOGMINING", "SELECT ON V_$LOGMNR_CONTENTS"],
        "flashback read" => &["FLASHBACK ANY TABLE"],
        "read table extents" => &["SELECT ON SYS.DBA_EXTENTS", "SELECT ON SYS.DBA_OBJECTS"],
        _ => return None,
    })
}

/// The optimizer's row count of a table (NULL without statistics).
pub const ROW_ESTIMATE: &str =
    "SELECT NUM_ROWS FROM ALL_TABLES WHERE OWNER = :1 AND TABLE_NAME = :2";

/// The optimizer's rows and blocks of a table (NULL without statistics): how many blocks a
/// chunk of so many rows takes (`chunks::blocks_per_chunk`).
pub const TABLE_STATISTICS: &str =
    "SELECT NUM_ROWS, BLOCKS FROM ALL_TABLES WHERE OWNER = :1 AND TABLE_NAME = :2";

/// The extents of a table's segments with each segment's data object id: one segment for a
/// plain table, one per partition or subpartition of a partitioned one (`PARTITION_NAME` in
/// DBA_EXTENTS is the subobject DBA_OBJECTS names in `SUBOBJECT_NAME`; both NULL for a plain
/// table). ROWIDs carry `DATA_OBJECT_ID`, not `OBJECT_ID` (they differ after a TRUNCATE or a
/// MOVE), and `RELATIVE_FNO`, not the absolute `FILE_ID` (Database Reference, DBA_EXTENTS and
/// ALL_OBJECTS; PL/SQL Packages and Types Reference, DBMS_ROWID). The join is in WHERE and the
/// order is the planner's.
pub const TABLE_EXTENTS: &str = "SELECT O.DATA_OBJECT_ID, E.RELATIVE_FNO, E.BLOCK_ID, E.BLOCKS \
     FROM DBA_EXTENTS E, DBA_OBJECTS O \
     WHERE E.OWNER = :1 AND E.SEGMENT_NAME = :2 \
     AND E.SEGMENT_TYPE IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION') \
     AND O.OWNER = E.OWNER AND O.OBJECT_NAME = E.SEGMENT_NAME \
     AND O.OBJECT_TYPE = E.SEGMENT_TYPE \
     AND NVL(O.SUBOBJECT_NAME, ' ') = NVL(E.PARTITION_NAME, ' ')";

/// A chunk's bounds as ROWIDs, built by Oracle itself from `(data object, relative file,
/// block)` of its first and last blocks: row 0 of the first block to row 32767 of the last,
/// as `DBMS_PARALLEL_EXECUTE.CREATE_CHUNKS_BY_ROWID`'s ranges run (`ROWID_CREATE` type 1 is an
/// extended ROWID; PL/SQL Packages and Types Reference, DBMS_ROWID).
pub const CHUNK_ROW_IDS: &str = "SELECT \
     ROWIDTOCHAR(DBMS_ROWID.ROWID_CREATE(1, :1, :2, :3, 0)), \
     ROWIDTOCHAR(DBMS_ROWID.ROWID_CREATE(1, :4, :5, :6, 32767)) FROM DUAL";

/// The key of an index-organised table's row `:n` rows after a key (or from the start, when
/// not `after`): a chunk's upper bound; no row when fewer are left (the last chunk is then
/// unbounded above). Each statement walks the key index from the previous bound with a
/// stopkey, so planning reads the index once in all. The key is selected as the flashback read
/// writes it, so a bound is bound back with the same conversion ([`read_query`]); there is no
/// `AS OF`: the bounds only split the key space, whatever SCN the chunks are read at. Key
/// values are bound from `:1`, the offset last.
pub fn key_boundary_query(
    table: &TableSchema,
    key: &[usize],
    after: bool,
) -> Result<FlashbackQuery, String> {
    statement(
        table,
        &RowOrder::PrimaryKey(key.to_vec()),
        ReadBounds::Keys {
            after,
            through: false,
        },
        None,
        Shape::KeyBoundary,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictionary::Column;

    #[test]
    fn contents_query_binds_tables_and_container_in_order() {
        let tables = vec![
            ("APP".to_owned(), "ORDERS".to_owned()),
            ("HR".to_owned(), "STAFF".to_owned()),
            ("APP".to_owned(), "LINES".to_owned()),
        ];
        let (sql, binds) = contents_query(&tables, &[74_103, 74_104], Some("PDB1"));
        assert!(sql.starts_with("SELECT SCN, START_SCN, COMMIT_SCN, "));
        assert!(
            sql.contains(
                "WHERE SCN >= :1 AND SCN <= :2 AND (OPERATION_CODE IN (6, 7, 34, 36) \
                 OR (SEG_OWNER = :3 AND TABLE_NAME IN (:4, :5)) \
                 OR (SEG_OWNER = :6 AND TABLE_NAME IN (:7)) \
                 OR DATA_OBJ# IN (74103, 74104) \
                 OR (SEG_OWNER = 'UNKNOWN' AND TABLE_NAME LIKE 'OBJ#%')) \
                 AND (OPERATION_CODE <> 5 OR INFO IS NULL OR INFO NOT LIKE 'INTERNAL DDL%') \
                 AND SRC_CON_NAME = :8"
            ),
            "{sql}"
        );
        assert_eq!(
            binds,
            ["APP", "ORDERS", "LINES", "HR", "STAFF", "PDB1"],
            "one bind per table and one per owner"
        );
        assert!(!sql.contains("SQL_UNDO") && !sql.contains("ORDER BY"));
        let (sql, binds) = contents_query(&tables[..1], &[], None);
        assert!(sql.ends_with(
            "OR (SEG_OWNER = :3 AND TABLE_NAME IN (:4)) \
             OR (SEG_OWNER = 'UNKNOWN' AND TABLE_NAME LIKE 'OBJ#%')) \
             AND (OPERATION_CODE <> 5 OR INFO IS NULL OR INFO NOT LIKE 'INTERNAL DDL%')"
        ));
        assert_eq!(binds.len(), 2);
    }

    /// An owner with more tables than an IN list may hold (ORA-01795 past 1000) takes several
    /// lists, each of at most 1000, and every table is bound exactly once.
    #[test]
    fn an_owner_with_more_than_a_thousand_tables_takes_several_in_lists() {
        let tables: Vec<(String, String)> = (0..2_500)
            .map(|n| ("APP".to_owned(), format!("T{n}")))
            .collect();
        let objects: Vec<u64> = (0..2_500).collect();
        let (sql, binds) = contents_query(&tables, &objects, None);
        assert_eq!(sql.matches("SEG_OWNER = :").count(), 3);
        // The object numbers too: three lists of at most 1000 literals, no binds.
        assert_eq!(sql.matches("DATA_OBJ# IN (").count(), 3);
        for list in sql.split("DATA_OBJ# IN (").skip(1) {
            let list = &list[..list.find(')').unwrap()];
            assert!(list.split(", ").count() <= MAX_IN_LIST, "{list}");
        }
        for list in sql.split("TABLE_NAME IN (").skip(1) {
            let list = &list[..list.find(')').unwrap()];
            assert!(list.split(", ").count() <= MAX_IN_LIST, "{list}");
        }
        assert_eq!(binds.len(), 2_500 + 3);
        assert_eq!(binds.iter().filter(|b| b.starts_with('T')).count(), 2_500);
        assert!(sql.contains(&format!(":{}", binds.len() + 2)));
        assert!(!sql.contains(&format!(":{}", binds.len() + 3)));
    }

    #[test]
    fn the_log_listing_keeps_logs_a_failed_destination_holds_and_skips_bad_members() {
        assert!(REDO_LOGS.contains("WHERE TYPE = 'LOCAL'"));
        assert!(
            !REDO_LOGS.contains("STATUS = 'VALID'"),
            "a destination in ERROR still holds its logs"
        );
        assert!(REDO_LOGS.contains("A.DEST_ID = 0 OR"));
        assert!(REDO_LOGS.contains("NOT IN ('INVALID', 'STALE', 'DELETED')"));
        assert!(REDO_LOGS.contains(":1") && REDO_LOGS.contains(":2") && !REDO_LOGS.contains(":3"));
    }

    #[test]
    fn invisible_columns_are_read_and_oracles_own_hidden_ones_are_not() {
        assert!(
            !TABLE_COLUMNS.contains("HIDDEN_COLUMN"),
            "INVISIBLE columns are user data"
        );
        assert!(TABLE_COLUMNS.contains("USER_GENERATED = 'YES'"));
        assert!(TABLE_COLUMNS.contains("VIRTUAL_COLUMN = 'NO'"));
        assert!(TABLE_COLUMNS.ends_with("ORDER BY COLUMN_ID NULLS LAST, INTERNAL_COLUMN_ID"));
    }

    #[test]
    fn the_table_list_leaves_out_oracle_schemas_and_helper_tables() {
        for condition in [
            "U.ORACLE_MAINTAINED = 'N'",
            "T.TEMPORARY = 'N'",
            "T.NESTED = 'NO'",
            "T.SECONDARY = 'N'",
            "T.DROPPED = 'NO'",
            "T.IOT_TYPE IS NULL OR T.IOT_TYPE = 'IOT'",
        ] {
            assert!(LIST_TABLES.contains(condition), "{condition}");
        }
        assert!(!LIST_TABLES.contains(':'), "no binds");
    }

    #[test]
    fn logminer_calls_never_use_removed_or_staging_options() {
        for sql in [START_LOGMNR, ADD_FIRST_LOGFILE, ADD_LOGFILE] {
            assert!(!sql.contains("CONTINUOUS_MINE") && !sql.contains("COMMITTED_DATA_ONLY"));
        }
        assert!(START_LOGMNR.contains("DICT_FROM_ONLINE_CATALOG"));
    }

    #[test]
    fn flush_table_names_are_validated_before_interpolation() {
        assert_eq!(
            flush_table_name("log_mining_flush").as_deref(),
            Some("LOG_MINING_FLUSH")
        );
        assert_eq!(
            flush_table_name("C##CDC.FLUSH").as_deref(),
            Some("C##CDC.FLUSH")
        );
        assert_eq!(
            flush_table_name("CDC.FLUSH$1").as_deref(),
            Some("CDC.FLUSH$1")
        );
        for bad in ["", "1T", "A.B.C", "T; DROP TABLE X", "\"T\""] {
            assert_eq!(flush_table_name(bad), None, "{bad}");
        }
        assert_eq!(
            flush_update("CDC.FLUSH"),
            "UPDATE CDC.FLUSH SET LAST_SCN = (SELECT CURRENT_SCN FROM V$DATABASE)"
        );
    }

    #[test]
    fn action_queries_lose_a_statements_semicolon_but_not_a_blocks() {
        assert_eq!(
            action_statement("  UPDATE APP.BEAT SET N = N + 1 ;\n"),
            "UPDATE APP.BEAT SET N = N + 1"
        );
        assert_eq!(
            action_statement("INSERT INTO APP.BEAT VALUES (1)"),
            "INSERT INTO APP.BEAT VALUES (1)"
        );
        assert_eq!(
            action_statement("begin app.beat_proc; end;"),
            "begin app.beat_proc; end;"
        );
        assert_eq!(
            action_statement("DECLARE n NUMBER; BEGIN NULL; END;"),
            "DECLARE n NUMBER; BEGIN NULL; END;"
        );
    }

    #[test]
    fn flashback_query_renders_each_type_as_sql_redo_would() {
        let table = TableSchema::new(
            "APP",
            "ORDERS",
            vec![
                Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("AT", OracleType::parse("TIMESTAMP(3)").unwrap()),
                Column::new("BODY", OracleType::parse("RAW(16)").unwrap()),
                Column::new("NOTE", OracleType::parse("VARCHAR2(20)").unwrap()),
            ],
        )
        .unwrap();
        let heap = |resume, condition| {
            flashback_query(&table, &RowOrder::RowId, resume, condition)
                .unwrap()
                .sql
        };
        assert_eq!(
            heap(true, None),
            "SELECT ROWIDTOCHAR(ROWID), TO_CHAR(\"ID\", 'TM9'), \
             TO_CHAR(\"AT\", 'SYYYY-MM-DD HH24:MI:SS.FF9'), RAWTOHEX(\"BODY\"), \"NOTE\" \
             FROM \"APP\".\"ORDERS\" AS OF SCN :1 WHERE ROWID > CHARTOROWID(:2) \
             ORDER BY ROWID FETCH FIRST :3 ROWS ONLY"
        );
        assert!(
            heap(false, None).ends_with("AS OF SCN :1 ORDER BY ROWID FETCH FIRST :2 ROWS ONLY")
        );
        assert!(
            heap(true, Some("ID > 5 OR NOTE IS NULL")).ends_with(
                "AS OF SCN :1 WHERE (ID > 5 OR NOTE IS NULL) AND ROWID > CHARTOROWID(:2) \
                 ORDER BY ROWID FETCH FIRST :3 ROWS ONLY"
            ),
            "the condition is bracketed so its OR stays inside"
        );
        assert!(
            heap(false, Some("ID > 5"))
                .ends_with("AS OF SCN :1 WHERE (ID > 5) ORDER BY ROWID FETCH FIRST :2 ROWS ONLY")
        );
        assert_eq!(quote_identifier("A\"B"), None);
    }

    /// An IOT is read in primary-key order and resumes after the last key with the
    /// lexicographic comparison, each key value read back as its type.
    #[test]
    fn an_index_organised_table_is_read_in_key_order_after_the_last_key() {
        let table = TableSchema::new(
            "APP",
            "LINES",
            vec![
                Column::new("NOTE", OracleType::parse("VARCHAR2(20)").unwrap()),
                Column::new("ORDER_ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("AT", OracleType::parse("DATE").unwrap()).key(2),
                Column::new("LINE", OracleType::parse("VARCHAR2(8)").unwrap()).key(3),
            ],
        )
        .unwrap();
        let order = RowOrder::PrimaryKey(vec![1, 2, 3]);
        let first = flashback_query(&table, &order, false, None).unwrap();
        assert_eq!(
            first.sql,
            "SELECT \"NOTE\", TO_CHAR(\"ORDER_ID\", 'TM9'), \
             TO_CHAR(\"AT\", 'SYYYY-MM-DD HH24:MI:SS'), \"LINE\" \
             FROM \"APP\".\"LINES\" AS OF SCN :1 \
             ORDER BY \"ORDER_ID\", \"AT\", \"LINE\" FETCH FIRST :2 ROWS ONLY"
        );
        assert!(first.key_binds.is_empty());
        let next = flashback_query(&table, &order, true, Some("NOTE IS NULL")).unwrap();
        let date = "TO_DATE(:5, 'SYYYY-MM-DD HH24:MI:SS')";
        let date_again = "TO_DATE(:6, 'SYYYY-MM-DD HH24:MI:SS')";
        assert!(
            next.sql.ends_with(&format!(
                "AS OF SCN :1 WHERE (NOTE IS NULL) AND \"ORDER_ID\" >= TO_NUMBER(:2) AND \
                 (\"ORDER_ID\" > TO_NUMBER(:3) OR (\"ORDER_ID\" = TO_NUMBER(:4) AND \
                 (\"AT\" > {date} OR (\"AT\" = {date_again} AND \"LINE\" > :7)))) \
                 ORDER BY \"ORDER_ID\", \"AT\", \"LINE\" FETCH FIRST :8 ROWS ONLY"
            )),
            "{}",
            next.sql
        );
        assert_eq!(next.key_binds, [0, 0, 0, 1, 1, 2]);
        let single = RowOrder::PrimaryKey(vec![1]);
        assert!(
            flashback_query(&table, &single, true, None)
                .unwrap()
                .sql
                .ends_with(
                    "WHERE \"ORDER_ID\" > TO_NUMBER(:2) ORDER BY \"ORDER_ID\" \
                     FETCH FIRST :3 ROWS ONLY"
                )
        );
        let lob = TableSchema::new(
            "APP",
            "DOCS",
            vec![Column::new("BODY", OracleType::parse("CLOB").unwrap()).key(1)],
        )
        .unwrap();
        let refused = flashback_query(&lob, &RowOrder::PrimaryKey(vec![0]), true, None);
        assert!(refused.is_err_and(|reason| reason.contains("BODY")));
    }

    /// A heap chunk is a ROWID range, every row of it, in ROWID order; an IOT chunk a key
    /// range above one key and up to another; the IOT's bounds are found by a stopkey walk of
    /// the key without AS OF.
    #[test]
    fn chunk_reads_are_bounded_by_rowid_or_key_ranges() {
        let table = TableSchema::new(
            "APP",
            "LINES",
            vec![
                Column::new("ORDER_ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("LINE", OracleType::parse("VARCHAR2(8)").unwrap()).key(2),
                Column::new("NOTE", OracleType::parse("VARCHAR2(20)").unwrap()),
            ],
        )
        .unwrap();
        let heap = read_query(
            &table,
            &RowOrder::RowId,
            ReadBounds::RowIds,
            Some("A = 1 OR B = 2"),
        )
        .unwrap();
        assert_eq!(
            heap.sql,
            "SELECT ROWIDTOCHAR(ROWID), TO_CHAR(\"ORDER_ID\", 'TM9'), \"LINE\", \"NOTE\" \
             FROM \"APP\".\"LINES\" AS OF SCN :1 WHERE (A = 1 OR B = 2) AND \
             ROWID BETWEEN CHARTOROWID(:2) AND CHARTOROWID(:3) ORDER BY ROWID"
        );
        let key = RowOrder::PrimaryKey(vec![0, 1]);
        let both = ReadBounds::Keys {
            after: true,
            through: true,
        };
        let iot = read_query(&table, &key, both, None).unwrap();
        assert!(
            iot.sql.ends_with(
                "AS OF SCN :1 WHERE \"ORDER_ID\" >= TO_NUMBER(:2) AND (\"ORDER_ID\" > \
                 TO_NUMBER(:3) OR (\"ORDER_ID\" = TO_NUMBER(:4) AND \"LINE\" > :5)) AND \
                 \"ORDER_ID\" <= TO_NUMBER(:6) AND (\"ORDER_ID\" < TO_NUMBER(:7) OR \
                 (\"ORDER_ID\" = TO_NUMBER(:8) AND \"LINE\" <= :9)) \
                 ORDER BY \"ORDER_ID\", \"LINE\""
            ),
            "{}",
            iot.sql
        );
        // After's values (0, 1), then through's (2 + 0, 2 + 1).
        assert_eq!(iot.key_binds, [0, 0, 0, 1, 2, 2, 2, 3]);
        let last = ReadBounds::Keys {
            after: true,
            through: false,
        };
        assert!(
            !read_query(&table, &key, last, None)
                .unwrap()
                .sql
                .contains("<=")
        );
        assert!(read_query(&table, &key, ReadBounds::RowIds, None).is_err());
        assert!(read_query(&table, &RowOrder::RowId, last, None).is_err());
        let first = key_boundary_query(&table, &[0, 1], false).unwrap();
        assert_eq!(
            first.sql,
            "SELECT TO_CHAR(\"ORDER_ID\", 'TM9'), \"LINE\" FROM \"APP\".\"LINES\" \
             ORDER BY \"ORDER_ID\", \"LINE\" OFFSET :1 ROWS FETCH NEXT 1 ROWS ONLY"
        );
        let next = key_boundary_query(&table, &[0, 1], true).unwrap();
        assert!(
            next.sql.contains("WHERE \"ORDER_ID\" >= TO_NUMBER(:1)"),
            "{}",
            next.sql
        );
        assert!(
            next.sql.ends_with("OFFSET :5 ROWS FETCH NEXT 1 ROWS ONLY"),
            "{}",
            next.sql
        );
        assert_eq!(next.key_binds, [0, 0, 0, 1]);
    }
}
