//! The scenario format: JSON Lines, one [`Step`] a line (`docs/simulator.md` lists every step).
//!
//! Reading is strict: an unknown key, a missing or mistyped field is a [`ScenarioError`] naming
//! the line and the field, so a typo never silently changes what a test exercises. Values stay
//! JSON here; they are typed against the table when the step is applied, because the table
//! (and so the column type) may change between reading and applying (DDL).

use std::collections::BTreeSet;

use serde_json::{Map, Value as Json};

/// A step that cannot be read or applied: which line (the step's 1-based ordinal when driven
/// from Rust), which field, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("scenario line {line}, field `{field}`: {message}")]
pub struct ScenarioError {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(line: usize, field: &str, message: impl Into<String>) -> Self {
        Self {
            line,
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// Column values by column name, in the order written.
pub type Values = Vec<(String, Json)>;

/// Supplemental logging of a table (`logging` in a table declaration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLogging {
    /// `ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS`.
    All,
    /// `ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS`.
    PrimaryKey,
    /// No table-level logging.
    None,
}

/// One column of a table declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDecl {
    pub name: String,
    pub data_type: String,
    pub key: bool,
    pub nullable: bool,
}

/// A unique constraint of a table declaration (`unique`), enforced by a unique index of the
/// same name, as Oracle creates one for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniqueDecl {
    pub name: String,
    /// Column names in index order.
    pub columns: Vec<String>,
}

/// How a declared table stores its rows: `"range"` (partitioned) or `"organization": "index"`
/// in a table declaration; a heap table otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Layout {
    #[default]
    Heap,
    /// `PARTITION BY RANGE (column)`: `"range": {"column": C, "partitions": [{"name": P1,
    /// "below": 1000}, ..., {"name": PMAX}]}`. A row goes to the first partition whose bound
    /// (`VALUES LESS THAN`) is above its value; a partition without one is `MAXVALUE`. With
    /// `"subcolumn": S`, a partition may list `"subpartitions"` the same way (range-range
    /// composite partitioning: `SUBPARTITION BY RANGE (S)`), each a segment of its own.
    Range {
        column: String,
        subcolumn: Option<String>,
        partitions: Vec<PartitionDecl>,
    },
    /// `ORGANIZATION INDEX`: the rows are kept in the primary key index.
    IndexOrganized,
}

/// A range partition of a table declaration, with its range subpartitions (none: the
/// partition is a segment itself).
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionDecl {
    pub name: String,
    /// `VALUES LESS THAN`; `None` is MAXVALUE.
    pub below: Option<i64>,
    /// Name and bound of each subpartition, in bound order.
    pub subpartitions: Vec<(String, Option<i64>)>,
}

/// A DML statement's common fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Dml {
    pub tx: String,
    pub table: String,
    /// `"fails": true`: the statement fails (e.g. a constraint violation) after writing its
    /// redo, so an undo row follows at once.
    pub fails: bool,
    /// `"user"`: the session user of a transaction this step starts.
    pub user: Option<String>,
}

/// What a LOB step does to the LOB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobChange {
    Write { offset: u64, data: String },
    Trim { length: u64 },
    Erase { offset: u64, amount: u64 },
}

/// Database-level settings (`{"database":{...}}`); absent fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatabaseSettings {
    pub log_mode_archivelog: Option<bool>,
    /// `min`, `pk`, `ui`, `fk`, `all` → value (`YES`, `NO`, `IMPLICIT` for min).
    pub supplemental: Vec<(String, String)>,
    pub dbid: Option<u64>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub pdb: Option<String>,
    pub con_id: Option<u32>,
    pub user: Option<String>,
    pub capture_user: Option<String>,
    pub scn: Option<u64>,
    /// The clock, as a UTC time.
    pub time: Option<String>,
    /// The host's time zone, an IANA name (`Europe/Berlin`) or `UTC`.
    pub time_zone: Option<String>,
    pub online_log_groups: Option<usize>,
    pub log_switch_records: Option<u64>,
    pub scn_time_retention_seconds: Option<i64>,
    /// Views the capture user is not granted (`V$PDB_INCARNATION`): reading them fails with
    /// ORA-00942, as for a user granted views one by one who misses one.
    pub ungranted_views: Option<Vec<String>>,
    /// `MAX_STRING_SIZE`: `STANDARD` (the default: VARCHAR2 / NVARCHAR2 up to 4000 bytes, RAW up
    /// to 2000) or `EXTENDED` (up to 32767, longer values logged as 32K_BEGIN / 32K_WRITE rows).
    pub max_string_size_extended: Option<bool>,
    /// `NLS_CHARACTERSET`, an Oracle character set name.
    pub character_set: Option<String>,
    /// `NLS_NCHAR_CHARACTERSET`: `AL16UTF16` or `UTF8`, the only two Oracle allows.
    pub national_character_set: Option<String>,
    /// `DBTIMEZONE`: `±HH:MM` or a region name.
    pub dbtimezone: Option<String>,
}

/// One scenario step.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Declares a table (no redo: the table already exists when the scenario starts).
    Table {
        name: String,
        columns: Vec<ColumnDecl>,
        logging: TableLogging,
        unique: Vec<UniqueDecl>,
        layout: Layout,
    },
    Insert {
        dml: Dml,
        values: Values,
    },
    Update {
        dml: Dml,
        where_: Values,
        set: Values,
    },
    Delete {
        dml: Dml,
        where_: Values,
    },
    Savepoint {
        tx: String,
        name: String,
    },
    RollbackTo {
        tx: String,
        name: String,
    },
    Commit {
        tx: String,
    },
    Rollback {
        tx: String,
    },
    Kill {
        tx: String,
    },
    Lob {
        dml: Dml,
        where_: Values,
        column: String,
        change: LobChange,
    },
    Ddl {
        statement: String,
        user: Option<String>,
    },
    Truncate {
        table: String,
    },
    /// An UNSUPPORTED row, in `tx` when given, else in a transaction of its own.
    Unsupported {
        tx: Option<String>,
        table: String,
    },
    /// An INTERNAL row with an all-zero XID (with a zero-XID START row before it when `start`).
    Internal {
        table: String,
        start: bool,
    },
    /// Switches the current thread's online log (all threads when `all_threads`).
    LogSwitch {
        all_threads: bool,
    },
    ArchivePurgeBeforeScn(u64),
    AdvanceSeconds(i64),
    Thread(u16),
    /// Writes the current thread's redo to disk (its checkpoint catches up).
    Checkpoint,
    /// The next N START_LOGMNR calls lose the race with the archiver: an online log the listing
    /// named is archived and reused before LogMiner starts (ORA-01291).
    ArchiverRace(u32),
    /// The undo generated so far is overwritten (the undo tablespace cycled past its
    /// retention): flashback reads as of an earlier SCN that need it fail with ORA-01555.
    UndoLost,
    /// `ALTER DATABASE OPEN RESETLOGS`: a new database incarnation.
    Resetlogs,
    /// A PDB point-in-time recovery or flashback: a new PDB incarnation.
    PdbIncarnation,
    Database(Box<DatabaseSettings>),
    Grant(String),
    Revoke(String),
    TableLogging {
        table: String,
        logging: TableLogging,
    },
}

/// Parses one scenario line (already known not to be blank).
pub fn parse_step(line: usize, text: &str) -> Result<Step, ScenarioError> {
    let json: Json = serde_json::from_str(text)
        .map_err(|e| ScenarioError::new(line, "(line)", format!("not JSON: {e}")))?;
    let Json::Object(map) = json else {
        return Err(ScenarioError::new(
            line,
            "(line)",
            "a step is a JSON object",
        ));
    };
    let step = Fields {
        line,
        map: &map,
        used: BTreeSet::new(),
    };
    step.parse()
}

/// The keys of one step, so unknown keys can be refused once the step is read.
/// A non-empty JSON array.
fn bounded_list(json: Option<&Json>) -> Option<&Vec<Json>> {
    match json {
        Some(Json::Array(list)) if !list.is_empty() => Some(list),
        _ => None,
    }
}

/// `{"name": P, "below": N}` or `{"name": P}` (MAXVALUE), subpartitions aside.
fn named_bound(json: &Json) -> Option<(String, Option<i64>)> {
    let name = json.get("name")?.as_str()?.to_owned();
    match json.get("below") {
        None => Some((name, None)),
        Some(bound) => Some((name, Some(bound.as_i64()?))),
    }
}

/// Whether range bounds ascend with MAXVALUE (`None`) only last, as Oracle requires.
fn ascending(bounds: &[(String, Option<i64>)]) -> bool {
    bounds.windows(2).all(|pair| match (pair[0].1, pair[1].1) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        (None, _) => false,
    })
}

struct Fields<'a> {
    line: usize,
    map: &'a Map<String, Json>,
    used: BTreeSet<&'static str>,
}

impl<'a> Fields<'a> {
    fn error(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.line, field, message)
    }

    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Json> {
        self.used.insert(key);
        self.map.get(key)
    }

    fn string(&mut self, key: &'static str) -> Result<String, ScenarioError> {
        match self.get(key) {
            Some(Json::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.error(key, format!("expected a string, found {other}"))),
            None => Err(self.error(key, "missing")),
        }
    }

    fn optional_string(&mut self, key: &'static str) -> Result<Option<String>, ScenarioError> {
        if self.has(key) {
            self.string(key).map(Some)
        } else {
            self.used.insert(key);
            Ok(None)
        }
    }

    fn unsigned(&mut self, key: &'static str) -> Result<u64, ScenarioError> {
        match self.get(key) {
            Some(json) => json.as_u64().ok_or_else(|| {
                self.error(key, format!("expected an unsigned integer, found {json}"))
            }),
            None => Err(self.error(key, "missing")),
        }
    }

    fn flag(&mut self, key: &'static str) -> Result<bool, ScenarioError> {
        match self.get(key) {
            Some(Json::Bool(b)) => Ok(*b),
            Some(other) => Err(self.error(key, format!("expected true or false, found {other}"))),
            None => Ok(false),
        }
    }

    /// A `true` marker (`"commit": true`).
    fn marker(&mut self, key: &'static str) -> Result<(), ScenarioError> {
        match self.get(key) {
            Some(Json::Bool(true)) => Ok(()),
            Some(other) => Err(self.error(key, format!("expected true, found {other}"))),
            None => Err(self.error(key, "missing")),
        }
    }

    fn values(&mut self, key: &'static str) -> Result<Values, ScenarioError> {
        match self.get(key) {
            Some(Json::Object(map)) if !map.is_empty() => {
                Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            Some(other) => Err(self.error(
                key,
                format!("expected an object of column values, found {other}"),
            )),
            None => Err(self.error(key, "missing")),
        }
    }

    fn logging(&mut self, key: &'static str) -> Result<TableLogging, ScenarioError> {
        match self.optional_string(key)?.as_deref() {
            None | Some("all") => Ok(TableLogging::All),
            Some("pk") => Ok(TableLogging::PrimaryKey),
            Some("none") => Ok(TableLogging::None),
            Some(other) => Err(self.error(key, format!("{other:?} is not all, pk or none"))),
        }
    }

    fn dml(&mut self, table_key: &'static str) -> Result<Dml, ScenarioError> {
        Ok(Dml {
            tx: self.string("tx")?,
            table: self.string(table_key)?,
            fails: self.flag("fails")?,
            user: self.optional_string("user")?,
        })
    }

    fn finish(self, step: Step) -> Result<Step, ScenarioError> {
        match self
            .map
            .keys()
            .find(|key| !self.used.contains(key.as_str()))
        {
            Some(unknown) => Err(self.error(unknown, "unknown field for this step")),
            None => Ok(step),
        }
    }

    fn parse(mut self) -> Result<Step, ScenarioError> {
        let step = if self.has("table") && self.has("columns") {
            self.table()?
        } else if self.has("insert") {
            let dml = self.dml("insert")?;
            Step::Insert {
                dml,
                values: self.values("values")?,
            }
        } else if self.has("update") {
            let dml = self.dml("update")?;
            Step::Update {
                dml,
                where_: self.values("where")?,
                set: self.values("set")?,
            }
        } else if self.has("delete") {
            let dml = self.dml("delete")?;
            Step::Delete {
                dml,
                where_: self.values("where")?,
            }
        } else if self.has("lob_write") || self.has("lob_trim") || self.has("lob_erase") {
            self.lob()?
        } else if self.has("savepoint") {
            Step::Savepoint {
                tx: self.string("tx")?,
                name: self.string("savepoint")?,
            }
        } else if self.has("rollback_to") {
            Step::RollbackTo {
                tx: self.string("tx")?,
                name: self.string("rollback_to")?,
            }
        } else if self.has("commit") {
            self.marker("commit")?;
            Step::Commit {
                tx: self.string("tx")?,
            }
        } else if self.has("rollback") {
            self.marker("rollback")?;
            Step::Rollback {
                tx: self.string("tx")?,
            }
        } else if self.has("kill") {
            self.marker("kill")?;
            Step::Kill {
                tx: self.string("tx")?,
            }
        } else if self.has("ddl") {
            Step::Ddl {
                statement: self.string("ddl")?,
                user: self.optional_string("user")?,
            }
        } else if self.has("truncate") {
            Step::Truncate {
                table: self.string("truncate")?,
            }
        } else if self.has("unsupported") {
            Step::Unsupported {
                tx: self.optional_string("tx")?,
                table: self.string("unsupported")?,
            }
        } else if self.has("internal") {
            Step::Internal {
                table: self.string("internal")?,
                start: self.flag("start")?,
            }
        } else if self.has("log_switch") {
            match self.get("log_switch") {
                Some(Json::Bool(true)) => Step::LogSwitch { all_threads: false },
                Some(Json::String(s)) if s == "all" => Step::LogSwitch { all_threads: true },
                _ => return Err(self.error("log_switch", "expected true or \"all\"")),
            }
        } else if self.has("archive_purge_before_scn") {
            Step::ArchivePurgeBeforeScn(self.unsigned("archive_purge_before_scn")?)
        } else if self.has("advance_seconds") {
            match self.get("advance_seconds").and_then(Json::as_i64) {
                Some(seconds) if seconds >= 0 => Step::AdvanceSeconds(seconds),
                _ => {
                    return Err(self.error("advance_seconds", "expected a non-negative integer"));
                }
            }
        } else if self.has("thread") {
            match u16::try_from(self.unsigned("thread")?) {
                Ok(thread) if thread > 0 => Step::Thread(thread),
                _ => return Err(self.error("thread", "expected a thread number 1..=65535")),
            }
        } else if self.has("checkpoint") {
            self.marker("checkpoint")?;
            Step::Checkpoint
        } else if self.has("archiver_race") {
            match u32::try_from(self.unsigned("archiver_race")?) {
                Ok(races) => Step::ArchiverRace(races),
                Err(_) => return Err(self.error("archiver_race", "expected a count")),
            }
        } else if self.has("undo_lost") {
            self.marker("undo_lost")?;
            Step::UndoLost
        } else if self.has("resetlogs") {
            self.marker("resetlogs")?;
            Step::Resetlogs
        } else if self.has("pdb_incarnation") {
            self.marker("pdb_incarnation")?;
            Step::PdbIncarnation
        } else if self.has("database") {
            self.database()?
        } else if self.has("grant") {
            Step::Grant(self.string("grant")?.to_ascii_uppercase())
        } else if self.has("revoke") {
            Step::Revoke(self.string("revoke")?.to_ascii_uppercase())
        } else if self.has("table_logging") {
            Step::TableLogging {
                table: self.string("table_logging")?,
                logging: self.logging("logging")?,
            }
        } else {
            let first = self.map.keys().next().map_or("(line)", String::as_str);
            return Err(self.error(first, "not a known step"));
        };
        self.finish(step)
    }

    fn table(&mut self) -> Result<Step, ScenarioError> {
        let name = self.string("table")?;
        let Some(Json::Array(list)) = self.get("columns") else {
            return Err(self.error("columns", "expected an array of columns"));
        };
        let mut columns = Vec::with_capacity(list.len());
        for (index, column) in list.iter().enumerate() {
            let field = |name: &str| format!("columns[{index}].{name}");
            let Json::Object(column) = column else {
                return Err(self.error(&format!("columns[{index}]"), "expected an object"));
            };
            if let Some(unknown) = column
                .keys()
                .find(|k| !matches!(k.as_str(), "name" | "type" | "key" | "nullable"))
            {
                return Err(self.error(&field(unknown), "unknown column field"));
            }
            let text = |key: &str| match column.get(key) {
                Some(Json::String(s)) => Ok(s.clone()),
                _ => Err(self.error(&field(key), "expected a string")),
            };
            let flag = |key: &str, default: bool| match column.get(key) {
                None => Ok(default),
                Some(Json::Bool(b)) => Ok(*b),
                Some(_) => Err(self.error(&field(key), "expected true or false")),
            };
            let key = flag("key", false)?;
            columns.push(ColumnDecl {
                name: text("name")?,
                data_type: text("type")?,
                key,
                nullable: flag("nullable", !key)?,
            });
        }
        let logging = self.logging("logging")?;
        let unique = self.unique_constraints()?;
        let layout = self.layout()?;
        Ok(Step::Table {
            name,
            columns,
            logging,
            unique,
            layout,
        })
    }

    /// `"range": {...}` or `"organization": "index"` (both optional, not together).
    fn layout(&mut self) -> Result<Layout, ScenarioError> {
        let organization = self.optional_string("organization")?;
        let range = self.get("range");
        match (organization.as_deref(), range) {
            (None | Some("heap"), None) => Ok(Layout::Heap),
            (Some("index"), None) => Ok(Layout::IndexOrganized),
            (None | Some("heap"), Some(range)) => {
                let expected =
                    "expected {\"column\": C, \"partitions\": [{\"name\": P, \"below\": N}, ...]}";
                let Json::Object(range) = range else {
                    return Err(self.error("range", expected));
                };
                let column = match range.get("column") {
                    Some(Json::String(column)) => column.clone(),
                    _ => return Err(self.error("range.column", expected)),
                };
                let subcolumn = match range.get("subcolumn") {
                    None => None,
                    Some(Json::String(column)) => Some(column.clone()),
                    Some(_) => return Err(self.error("range.subcolumn", expected)),
                };
                let mut partitions = Vec::new();
                for (index, partition) in bounded_list(range.get("partitions"))
                    .ok_or_else(|| self.error("range.partitions", expected))?
                    .iter()
                    .enumerate()
                {
                    let field = format!("range.partitions[{index}]");
                    let (name, below) =
                        named_bound(partition).ok_or_else(|| self.error(&field, expected))?;
                    let subpartitions = match partition.get("subpartitions") {
                        // Every partition of a composite partitioned table has subpartitions.
                        None if subcolumn.is_some() => {
                            return Err(self.error(&field, "expected its subpartitions"));
                        }
                        None => Vec::new(),
                        Some(list) if subcolumn.is_some() => bounded_list(Some(list))
                            .ok_or_else(|| self.error(&field, expected))?
                            .iter()
                            .map(named_bound)
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| self.error(&field, expected))?,
                        Some(_) => {
                            return Err(self.error(&field, "subpartitions need range.subcolumn"));
                        }
                    };
                    if !subpartitions.is_empty() && !ascending(&subpartitions) {
                        return Err(self.error(
                            &field,
                            "subpartition bounds must ascend, MAXVALUE last (ORA-14037)",
                        ));
                    }
                    partitions.push(PartitionDecl {
                        name,
                        below,
                        subpartitions,
                    });
                }
                let bounds: Vec<(String, Option<i64>)> = (partitions.iter())
                    .map(|p| (p.name.clone(), p.below))
                    .collect();
                if partitions.is_empty() || !ascending(&bounds) {
                    return Err(self.error(
                        "range.partitions",
                        "partition bounds must ascend, MAXVALUE last (ORA-14037)",
                    ));
                }
                Ok(Layout::Range {
                    column,
                    subcolumn,
                    partitions,
                })
            }
            _ => Err(self.error(
                "organization",
                "expected \"heap\" or \"index\", and no \"range\" with \"index\"",
            )),
        }
    }

    /// `"unique": [{"name": "UK_X", "columns": ["A", "B"]}, ...]` (optional).
    fn unique_constraints(&mut self) -> Result<Vec<UniqueDecl>, ScenarioError> {
        let list = match self.get("unique") {
            None => return Ok(Vec::new()),
            Some(Json::Array(list)) => list,
            Some(_) => return Err(self.error("unique", "expected an array of constraints")),
        };
        let mut unique = Vec::with_capacity(list.len());
        for (index, constraint) in list.iter().enumerate() {
            let field = format!("unique[{index}]");
            let expected = "expected {\"name\": NAME, \"columns\": [COLUMN, ...]}";
            let Json::Object(constraint) = constraint else {
                return Err(self.error(&field, expected));
            };
            let name = match constraint.get("name") {
                Some(Json::String(name)) => name.clone(),
                _ => return Err(self.error(&field, expected)),
            };
            let columns: Option<Vec<String>> = match constraint.get("columns") {
                Some(Json::Array(columns)) if !columns.is_empty() => columns
                    .iter()
                    .map(|column| column.as_str().map(str::to_owned))
                    .collect(),
                _ => None,
            };
            match columns {
                Some(columns) if constraint.len() == 2 => unique.push(UniqueDecl { name, columns }),
                _ => return Err(self.error(&field, expected)),
            }
        }
        Ok(unique)
    }

    fn lob(&mut self) -> Result<Step, ScenarioError> {
        let (dml, change) = if self.has("lob_write") {
            let dml = self.dml("lob_write")?;
            let offset = self.unsigned("offset")?;
            let data = self.string("data")?;
            (dml, LobChange::Write { offset, data })
        } else if self.has("lob_trim") {
            let dml = self.dml("lob_trim")?;
            (
                dml,
                LobChange::Trim {
                    length: self.unsigned("length")?,
                },
            )
        } else {
            let dml = self.dml("lob_erase")?;
            let offset = self.unsigned("offset")?;
            let amount = self.unsigned("amount")?;
            (dml, LobChange::Erase { offset, amount })
        };
        if matches!(
            change,
            LobChange::Write { offset: 0, .. } | LobChange::Erase { offset: 0, .. }
        ) {
            return Err(self.error("offset", "LOB offsets are 1-based"));
        }
        Ok(Step::Lob {
            dml,
            where_: self.values("where")?,
            column: self.string("column")?,
            change,
        })
    }

    fn database(&mut self) -> Result<Step, ScenarioError> {
        let Some(Json::Object(map)) = self.get("database") else {
            return Err(self.error("database", "expected an object"));
        };
        let mut settings = DatabaseSettings::default();
        for (key, value) in map {
            let field = format!("database.{key}");
            let text = || {
                value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| self.error(&field, "expected a string"))
            };
            let number = || {
                value
                    .as_u64()
                    .ok_or_else(|| self.error(&field, "expected an unsigned integer"))
            };
            match key.as_str() {
                "log_mode" => {
                    settings.log_mode_archivelog = Some(match text()?.as_str() {
                        "ARCHIVELOG" => true,
                        "NOARCHIVELOG" => false,
                        _ => return Err(self.error(&field, "expected ARCHIVELOG or NOARCHIVELOG")),
                    });
                }
                "supplemental" => {
                    let Json::Object(flags) = value else {
                        return Err(self.error(&field, "expected an object"));
                    };
                    for (flag, setting) in flags {
                        let field = format!("{field}.{flag}");
                        let setting = setting.as_str().unwrap_or_default();
                        let ok = match flag.as_str() {
                            "min" => matches!(setting, "YES" | "NO" | "IMPLICIT"),
                            "pk" | "ui" | "fk" | "all" => matches!(setting, "YES" | "NO"),
                            _ => return Err(self.error(&field, "expected min, pk, ui, fk or all")),
                        };
                        if !ok {
                            return Err(
                                self.error(&field, "expected YES or NO (min: IMPLICIT too)")
                            );
                        }
                        settings
                            .supplemental
                            .push((flag.clone(), setting.to_owned()));
                    }
                }
                "dbid" => settings.dbid = Some(number()?),
                "name" => settings.name = Some(text()?),
                "version" => settings.version = Some(text()?),
                "pdb" => settings.pdb = Some(text()?),
                "con_id" => {
                    settings.con_id = Some(
                        u32::try_from(number()?).map_err(|_| self.error(&field, "too large"))?,
                    );
                }
                "user" => settings.user = Some(text()?),
                "capture_user" => settings.capture_user = Some(text()?),
                "scn" => settings.scn = Some(number()?),
                "time" => settings.time = Some(text()?),
                "time_zone" => settings.time_zone = Some(text()?),
                "character_set" => {
                    let name = text()?;
                    // Oracle's names are upper-case letters and digits (AL32UTF8, JA16SJIS).
                    if name.is_empty()
                        || !name
                            .bytes()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                    {
                        return Err(self.error(&field, "expected a character set name"));
                    }
                    settings.character_set = Some(name);
                }
                "national_character_set" => {
                    let name = text()?;
                    // Globalization Support Guide, "Choosing a National Character Set".
                    if name != "AL16UTF16" && name != "UTF8" {
                        return Err(self.error(&field, "expected AL16UTF16 or UTF8"));
                    }
                    settings.national_character_set = Some(name);
                }
                "dbtimezone" => settings.dbtimezone = Some(text()?),
                "max_string_size" => {
                    settings.max_string_size_extended =
                        Some(match text()?.to_ascii_uppercase().as_str() {
                            "STANDARD" => false,
                            "EXTENDED" => true,
                            _ => return Err(self.error(&field, "expected STANDARD or EXTENDED")),
                        });
                }
                "online_log_groups" => {
                    let groups = number()?;
                    if !(2..=16).contains(&groups) {
                        return Err(self.error(&field, "expected 2..=16 groups"));
                    }
                    settings.online_log_groups = Some(groups as usize);
                }
                "log_switch_records" => settings.log_switch_records = Some(number()?),
                "scn_time_retention_seconds" => {
                    settings.scn_time_retention_seconds = Some(
                        i64::try_from(number()?).map_err(|_| self.error(&field, "too large"))?,
                    );
                }
                "ungranted_views" => {
                    let views = value
                        .as_array()
                        .and_then(|views| {
                            views
                                .iter()
                                .map(|v| v.as_str().map(str::to_ascii_uppercase))
                                .collect::<Option<Vec<_>>>()
                        })
                        .ok_or_else(|| self.error(&field, "expected a list of view names"))?;
                    settings.ungranted_views = Some(views);
                }
                _ => return Err(self.error(&field, "unknown database setting")),
            }
        }
        Ok(Step::Database(Box::new(settings)))
    }
}
