//! Seeded workloads over every scenario feature at once, with the model of what they commit.
//!
//! A workload is a scenario (`docs/simulator.md`) cut into [`Chunk`]s: the runner gives the
//! capture a growing prefix of them, as a database grows while its capture restarts. Each chunk
//! after the first starts with a jump to an SCN of its own ([`CHUNK_SCN_GAP`] apart), so the
//! steps keep the same SCNs whether a process loaded them at start or a later one did: the SCNs
//! the capture's own flushes took in an earlier process lie in the gap.
//!
//! The generator plays Oracle's rules itself: several transactions open at once, none touching a
//! row another open transaction has locked; savepoints, rollbacks to them (later savepoints are
//! erased, the target stays), failed statements (their redo and at once its undo), rollbacks;
//! CLOB and BLOB columns written whole at insert and in pieces afterwards, with text outside the
//! Basic Multilingual Plane; DDL of every kind on a table the capture lags behind; two RAC threads; log switches; archive purges; and one
//! transaction large enough to spill under a 16 MiB budget (and to be journaled on Kafka), rolled
//! back to a savepoint taken after it spilled; and two tables that join the capture while it
//! runs ([`Feature::TableCreatedMidRun`], [`Feature::TableAddedToSpec`]), written in the same
//! transactions as the others. From its own decisions it records the model: each committed
//! transaction's changes as the capture must publish them, in commit order (an added table's
//! from where it joins, [`super::model::joined`]).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

use redoline_capture::value::binary::{decode_hex, encode_hex};

use super::model::{Change, Committed};

/// SCNs between the starts of two chunks: more than the flushes of one capture process take.
pub const CHUNK_SCN_GAP: u64 = 200_000;
/// The simulator's first SCN (`docs/simulator.md`).
const FIRST_SCN: u64 = 1_000_000;
/// Rows of the large transaction and where its savepoint is taken: each row's SQL_REDO is about
/// 4 KB (a 3,990-character note), so it passes the 16 MiB budget after about 4,100 rows; the
/// savepoint comes after [`BIG_SAVEPOINT_AT`] rows, when it has spilled.
const BIG_ROWS: usize = 4_400;
const BIG_SAVEPOINT_AT: usize = 4_250;
/// Rows the large transaction writes after its savepoint and then rolls back.
const BIG_UNDONE_ROWS: usize = 120;
/// Chunks of a workload: small transactions only (all ended by its end, so a purge behind it
/// can pass the restart SCN), then the large transaction's first rows, then its other rows, its
/// savepoint, the rollback to it, the DDL on TAGS and the commit of everything still open.
const CHUNKS: usize = 3;
/// Rows of the large transaction in the second chunk.
const BIG_ROWS_FIRST: usize = 1_500;
/// One-row transactions at the end of the first and the last chunk.
const AUTOCOMMIT_TRANSACTIONS: usize = 200;
/// Small steps per chunk.
const STEPS_PER_CHUNK: usize = 90;

/// Scenario features the generator can leave out: each one that has a known bug being fixed
/// elsewhere is left out while listed in [`super::UNDER_REPAIR`]. A failure names the added
/// tables a workload had ([`Workload::describe_added`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// An INSERT of a row with a non-NULL LOB that a savepoint rollback or its own failure
    /// undoes (issue 15, item 2: the placeholder ROWID keeps it from being cancelled).
    UndoneLobInsert,
    /// A LOB step (SEL_LOB_LOCATOR and LOB_WRITE pieces) that a rollback to a savepoint
    /// undoes: only some of its rows are cancelled, and the capture publishes the change before
    /// it with a LOB cut to its first pieces (e.g. an UPDATE undone with its 13,457-character
    /// CLOB write is published with 6,000 characters). Found by this test; likely the same
    /// undo matching as [`Feature::UndoneLobInsert`].
    UndoneLobWrite,
    /// SIGKILL (or SIGTERM) during a Kafka capture's very first start, while it creates its
    /// topics: every restart then stops with CDC-1001 "topic <prefix>.redoline.offsets exists
    /// with cleanup.policy=, but it must be compacted" (an empty policy read back), a crash loop
    /// only a person ends. Found by this test (seed 143921005, SIGKILL 2,088 ms into the first
    /// run). The restart's DescribeConfigs reached a broker not showing the topic yet, read as
    /// an empty policy; it is now retried (`sink/kafka/topics.rs`). While listed, the first run on
    /// Kafka is not interrupted.
    InterruptedFirstKafkaStart,
    /// SIGTERM while heartbeats are on (issue 15, item 1: the heartbeat passes the bookmark
    /// over the rest of a window the stop cut short). The runner sends SIGKILL instead.
    SigtermWithHeartbeats,
    /// ORDERS.NOTE values over 4000 bytes (`MAX_STRING_SIZE = EXTENDED`): LogMiner logs them as
    /// 32K_BEGIN / 32K_WRITE / 32K_END rows after the INSERT (issue 31, N3), in every kind of
    /// transaction: committed, rolled back to a savepoint, failed, spilled, across restarts.
    ExtendedString,
    /// APP.LATER, which `filters.tableIncludeList` selects, created by a DDL in the second chunk
    /// and written (inserts, updates, deletes, in transactions with other tables' changes) before
    /// and after the listing that finds it: the capture captures it from then on and reads it as
    /// an incremental snapshot (`snapshot.tablesAdded: snapshot`, issue 34).
    TableCreatedMidRun,
    /// APP.EARLY, written from the first chunk on but not captured, added to `spec.tables` at
    /// the restart before a later chunk: its rows are read as `r` events, its later changes
    /// streamed (issue 34).
    TableAddedToSpec,
}

/// A table that joins the capture while it runs, and when.
#[derive(Clone, Copy, Debug)]
pub struct AddedTable {
    /// How it joins: [`Feature::TableCreatedMidRun`] or [`Feature::TableAddedToSpec`].
    pub feature: Feature,
    /// Its name in events (the schema is APP).
    pub table: &'static str,
    /// The chunk from whose first run it is captured (0-based): the runs before it never
    /// capture it, so its transactions committed in earlier chunks are never streamed.
    pub chunk: usize,
    /// Its transactions committed before that chunk (the most the capture may leave unstreamed).
    pub committed_before: usize,
}

/// A part of the scenario, given to the capture together with every chunk before it.
pub struct Chunk {
    /// The first steps, JSON Lines: the tables (first chunk) or the SCN jump (the others).
    head: String,
    /// The other steps, after the purge line (none in the first chunk).
    steps: String,
    /// The archive purge at the start of the chunk deletes the logs ending at or before this
    /// SCN (the last of the previous chunk) or the capture's restart SCN, whichever is lower: an
    /// operator purges what the capture no longer needs. Where there is no purge, the same line
    /// holds a step that changes nothing, so SCNs stay the same.
    pub purge_before_scn: Option<u64>,
}

/// The purge step, or the step that takes its place.
pub fn purge_line(purge_before_scn: Option<u64>) -> String {
    match purge_before_scn {
        Some(scn) => format!("{}\n", json!({"archive_purge_before_scn": scn})),
        None => "{\"advance_seconds\":0}\n".to_owned(),
    }
}

/// A seeded workload and its model.
pub struct Workload {
    pub seed: u64,
    pub chunks: Vec<Chunk>,
    /// What Oracle committed, in commit order.
    pub committed: Vec<Committed>,
    /// The first SCN of the large transaction: a purge above it is behind the journal.
    pub big_start_scn: u64,
    /// The tables that join the capture while it runs.
    pub added: Vec<AddedTable>,
}

impl Workload {
    /// The added table that joins by `feature`, if the workload has it.
    pub fn added_by(&self, feature: Feature) -> Option<&AddedTable> {
        self.added.iter().find(|added| added.feature == feature)
    }

    /// The added tables in words, for failure messages.
    pub fn describe_added(&self) -> String {
        let chunks = self.chunks.len();
        let described: Vec<String> = self
            .added
            .iter()
            .map(|added| {
                format!(
                    "{:?} APP.{} (captured from chunk {}/{chunks}, {} of its transactions before)",
                    added.feature,
                    added.table,
                    added.chunk + 1,
                    added.committed_before
                )
            })
            .collect();
        format!("[{}]", described.join("; "))
    }
}

/// splitmix64: small, seedable, the same on every platform.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 0..n
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// true with probability `percent` / 100.
    pub fn percent(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const TABLES: &str = r#"{"database":{"max_string_size":"EXTENDED"}}
{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"},{"name":"TOTAL","type":"NUMBER(12,2)"},{"name":"LABEL","type":"NVARCHAR2(1000)"},{"name":"NOTE","type":"VARCHAR2(32767)"}],"logging":"all"}
{"table":"APP.DOCS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"TITLE","type":"VARCHAR2(100)"},{"name":"BODY","type":"CLOB"},{"name":"DATA","type":"BLOB"}],"logging":"all"}
{"table":"APP.TAGS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(30)"}],"logging":"all"}
{"table":"APP.EARLY","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(30)"},{"name":"QTY","type":"NUMBER(6)"}],"logging":"all"}
{"database":{"log_switch_records":1000000000}}
"#;

/// The tables a capture of the workload lists from its start.
pub const CAPTURED: [&str; 3] = ["APP.ORDERS", "APP.DOCS", "APP.TAGS"];

/// The table [`Feature::TableCreatedMidRun`] creates, and the include list that selects it
/// (a YAML flow sequence of single-quoted regular expressions).
pub const CREATED: &str = "LATER";
pub const CREATED_INCLUDE_LIST: &str = "['APP\\.LATER']";
const CREATE_SQL: &str = "CREATE TABLE APP.LATER (ID NUMBER(10) PRIMARY KEY, NAME VARCHAR2(30), \
                          QTY NUMBER(6), SUPPLEMENTAL LOG DATA (ALL) COLUMNS)";
/// The table [`Feature::TableAddedToSpec`] adds to `spec.tables`.
pub const ADDED_TO_SPEC: &str = "EARLY";
/// The chunk in which APP.LATER is created (0-based): not the first, whose runs have no
/// bookmark yet and so take every table they find as captured from the start, and not the
/// last, so that it is written after the listing too.
const CREATED_IN_CHUNK: usize = 1;

/// A DDL on TAGS, the table no long transaction touches. Each workload runs a seeded selection
/// of them, in this order, at random moments of its last chunk (whenever no open transaction
/// holds a TAGS row), between TAGS changes and with transactions of the other tables open. The
/// runner gives the capture the whole chunk at once, so every row written before one of them is
/// mined after it: by its new name, its `BIN$` name or by number, as LogMiner with the online
/// catalog renders it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TagsDdl {
    AddExtra,
    ModifyName,
    RenameNameColumn,
    Truncate,
    DropExtra,
    /// The last ones: TAGS is gone (renamed to a name the capture does not select, or dropped).
    RenameTable,
    Drop,
    DropPurge,
}

/// TAGS's columns after the DDL so far: its name column and whether EXTRA exists.
#[derive(Clone, Copy, Debug)]
struct TagsShape {
    name: &'static str,
    extra: bool,
    /// Renamed away or dropped: no more TAGS steps.
    gone: bool,
}

impl TagsShape {
    fn columns(self) -> Vec<&'static str> {
        let mut columns = vec!["ID", self.name];
        if self.extra {
            columns.push("EXTRA");
        }
        columns
    }
}

/// A row as the generator knows it: column name to compact JSON value, and for LOBs the content
/// as Oracle holds it (characters or bytes) to model writes in pieces.
#[derive(Clone, Debug)]
struct Row {
    values: BTreeMap<String, Value>,
    body: Option<Vec<char>>,
    data: Option<Vec<u8>>,
}

type RowKey = (&'static str, i64);

/// What an undone change restores: the row's state before it (`None`: it did not exist).
struct UndoEntry {
    key: RowKey,
    before: Option<Row>,
}

struct Savepoint {
    name: String,
    changes: usize,
    /// The last change before the savepoint the capture sees, with its index, as it was then:
    /// a LOB written after the savepoint may have been folded into it.
    last_change: Option<(usize, Change)>,
    /// The row of that change.
    last_row: Option<RowKey>,
    undo: usize,
    lob_steps: usize,
}

struct OpenTransaction {
    name: String,
    changes: Vec<Change>,
    undo: Vec<UndoEntry>,
    savepoints: Vec<Savepoint>,
    /// Whether a change (or a failed statement) started it in the redo.
    started: bool,
    /// The row of the last change in `changes` the capture sees ([`Generator::seen`]), which a
    /// LOB step on the same row joins.
    last_row: Option<RowKey>,
    /// LOB steps so far (a rollback to a savepoint before one undoes a LOB write).
    lob_steps: usize,
}

struct Generator<'a> {
    random: Random,
    under_repair: &'a [Feature],
    text: String,
    /// The SCN the last step took.
    scn: u64,
    thread: u16,
    rows: BTreeMap<RowKey, Row>,
    locks: BTreeMap<RowKey, String>,
    open: Vec<OpenTransaction>,
    committed: Vec<Committed>,
    next_id: i64,
    next_transaction: usize,
    tags: TagsShape,
    /// The DDL on TAGS still to run, in order.
    tags_ddl: Vec<TagsDdl>,
    big_start_scn: u64,
    /// Whether APP.LATER exists (created by [`Feature::TableCreatedMidRun`]).
    later_exists: bool,
    /// Whether the workload writes APP.EARLY ([`Feature::TableAddedToSpec`]).
    early: bool,
    /// The chunk being generated, and the one from which APP.EARLY is captured.
    chunk: usize,
    early_chunk: usize,
}

/// The workload of `seed`, leaving out the features `under_repair` lists.
pub fn workload(seed: u64, under_repair: &[Feature]) -> Workload {
    let mut generator = Generator {
        random: Random::new(seed),
        under_repair,
        text: String::new(),
        scn: FIRST_SCN,
        thread: 1,
        rows: BTreeMap::new(),
        locks: BTreeMap::new(),
        open: Vec::new(),
        committed: Vec::new(),
        next_id: 1,
        next_transaction: 0,
        tags: TagsShape {
            name: "NAME",
            extra: false,
            gone: false,
        },
        tags_ddl: Vec::new(),
        big_start_scn: 0,
        later_exists: false,
        early: !under_repair.contains(&Feature::TableAddedToSpec),
        chunk: 0,
        early_chunk: 0,
    };
    generator.tags_ddl = generator.choose_tags_ddl();
    let created = !under_repair.contains(&Feature::TableCreatedMidRun);
    // APP.EARLY joins at the second or the last chunk: with the re-read of ORDERS, or later.
    let early_chunk = 1 + generator.random.below(CHUNKS - 1);
    generator.early_chunk = early_chunk;
    let mut chunks = Vec::new();
    let mut last_switch = None;
    // The number of committed transactions when each chunk starts.
    let mut committed_at_chunk = Vec::new();
    for chunk in 0..CHUNKS {
        committed_at_chunk.push(generator.committed.len());
        let mut purge_before_scn = None;
        if chunk == 0 {
            for line in TABLES.lines() {
                generator.line(line.to_owned());
            }
        } else {
            let base = FIRST_SCN + CHUNK_SCN_GAP * chunk as u64;
            generator.line(json!({"database": {"scn": base}}).to_string());
            // The jump step takes the SCN it names.
            generator.scn = base;
            // The logs closed before the last chunk's final switch (the step before it is its
            // last commit, where a capture with nothing open restarts).
            purge_before_scn = last_switch.map(|scn: u64| scn - 1);
        }
        let head = std::mem::take(&mut generator.text);
        if chunk > 0 {
            // The runner writes the purge (or its stand-in) between head and steps: one SCN.
            generator.scn += 1;
        }
        generator.chunk(chunk, created);
        // Everything written to the online logs and archived, on both threads.
        generator.line("{\"log_switch\":\"all\"}".to_owned());
        last_switch = Some(generator.scn);
        chunks.push(Chunk {
            head,
            steps: std::mem::take(&mut generator.text),
            purge_before_scn,
        });
    }
    let committed_before = |table: &str, chunk: usize| {
        generator.committed[..committed_at_chunk[chunk]]
            .iter()
            .filter(|c| c.changes.iter().any(|change| change.table == table))
            .count()
    };
    let mut added = Vec::new();
    if created {
        added.push(AddedTable {
            feature: Feature::TableCreatedMidRun,
            table: CREATED,
            chunk: CREATED_IN_CHUNK,
            committed_before: committed_before(CREATED, CREATED_IN_CHUNK),
        });
    }
    if generator.early {
        added.push(AddedTable {
            feature: Feature::TableAddedToSpec,
            table: ADDED_TO_SPEC,
            chunk: early_chunk,
            committed_before: committed_before(ADDED_TO_SPEC, early_chunk),
        });
    }
    Workload {
        seed,
        chunks,
        committed: generator.committed,
        big_start_scn: generator.big_start_scn,
        added,
    }
}

impl Chunk {
    /// The chunk's steps with the purge (or its stand-in) in place.
    pub fn render(&self, purge_before_scn: Option<u64>) -> String {
        match self.purge_before_scn {
            Some(_) => format!(
                "{}{}{}",
                self.head,
                purge_line(purge_before_scn),
                self.steps
            ),
            None => format!("{}{}", self.head, self.steps),
        }
    }
}

impl Generator<'_> {
    fn line(&mut self, line: String) {
        self.text.push_str(&line);
        self.text.push('\n');
        self.scn += 1;
    }

    fn step(&mut self, step: &Value) {
        self.line(step.to_string());
    }

    fn chunk(&mut self, chunk: usize, create_later: bool) {
        let big_rows_here = match chunk {
            1 => 0..BIG_ROWS_FIRST,
            2 => BIG_ROWS_FIRST..BIG_ROWS,
            _ => 0..0,
        };
        let big_per_step = big_rows_here.len().div_ceil(STEPS_PER_CHUNK);
        let mut big_row = big_rows_here.start;
        self.chunk = chunk;
        if chunk == 0 && self.early {
            self.early_rows();
        }
        // APP.LATER is created somewhere in the first half of its chunk.
        let create_at = (create_later && chunk == CREATED_IN_CHUNK)
            .then(|| self.random.below(STEPS_PER_CHUNK / 2));
        for step in 0..STEPS_PER_CHUNK {
            if create_at == Some(step) {
                self.create_later();
            }
            self.small_step();
            for _ in 0..big_per_step {
                if big_row < big_rows_here.end {
                    self.big_row(big_row);
                    big_row += 1;
                }
            }
            self.maybe_log_switch();
        }
        match chunk {
            0 => {
                self.end_all(|_| true);
                self.autocommit_burst();
            }
            1 => self.end_all(|tx| tx != "big"),
            _ => {
                self.big_undone_part();
                for _ in 0..STEPS_PER_CHUNK / 3 {
                    self.small_step();
                    self.maybe_log_switch();
                    if self.random.percent(15) {
                        self.try_tags_ddl();
                    }
                }
                while !self.tags_ddl.is_empty() {
                    // Ends what holds TAGS rows first (a DDL needs the table unlocked).
                    self.end_all(|tx| tx != "big");
                    self.try_tags_ddl();
                    self.small_step();
                }
                self.end_all(|_| true);
                self.autocommit_burst();
            }
        }
    }

    /// The rows APP.EARLY has before the capture could capture it: one transaction of 5 to 24
    /// inserts, committed before anything else.
    fn early_rows(&mut self) {
        self.added_rows(ADDED_TO_SPEC);
    }

    /// A transaction of 5 to 24 inserts into `table`, committed at once.
    fn added_rows(&mut self, table: &'static str) {
        let name = format!("t{}", self.next_transaction);
        self.next_transaction += 1;
        let index = self.begin(name);
        for _ in 0..5 + self.random.below(20) {
            self.insert_added(index, table);
        }
        self.commit(index);
    }

    /// `CREATE TABLE APP.LATER`, a DDL transaction of its own, and a transaction of rows in it.
    fn create_later(&mut self) {
        self.step(&json!({ "ddl": CREATE_SQL }));
        self.committed.push(Committed {
            name: "DDL CREATE TABLE APP.LATER".to_owned(),
            changes: vec![Change {
                op: "ddl",
                table: CREATED,
                image: BTreeMap::from([("sql".to_owned(), json!(CREATE_SQL))]),
            }],
        });
        self.later_exists = true;
        self.added_rows(CREATED);
    }

    /// The tables that join the capture while it runs, as far as they exist now.
    fn added_tables(&self) -> Vec<&'static str> {
        let mut tables = Vec::new();
        if self.early {
            tables.push(ADDED_TO_SPEC);
        }
        if self.later_exists {
            tables.push(CREATED);
        }
        tables
    }

    /// A change of a table that joins the capture while it runs: an insert, update or delete.
    fn added_table_step(&mut self, index: usize) {
        let tables = self.added_tables();
        if tables.is_empty() {
            return;
        }
        let table = tables[self.random.below(tables.len())];
        match self.random.below(10) {
            0..=4 => self.insert_added(index, table),
            5..=7 => self.update_in(index, &[table]),
            _ => self.delete_in(index, &[table]),
        }
    }

    fn insert_added(&mut self, index: usize, table: &'static str) {
        let id = self.take_id();
        let values = [
            ("ID", json!(id)),
            ("NAME", json!(format!("{} {id}", table.to_lowercase()))),
            ("QTY", json!(self.random.below(1_000))),
        ];
        self.insert(index, table, id, &values);
    }

    /// One-row transactions one after another, nothing else open: the capture's buffer is
    /// empty between them, where a heartbeat may move the bookmark (issue 15, item 1).
    fn autocommit_burst(&mut self) {
        for _ in 0..AUTOCOMMIT_TRANSACTIONS {
            let name = format!("t{}", self.next_transaction);
            self.next_transaction += 1;
            let index = self.begin(name);
            self.insert_order(index);
            self.commit(index);
        }
    }

    /// Now and then a log switch of the current thread or of both.
    fn maybe_log_switch(&mut self) {
        if self.random.percent(4) {
            let threads = if self.random.percent(50) {
                json!(true)
            } else {
                json!("all")
            };
            self.step(&json!({ "log_switch": threads }));
        }
    }

    /// Ends every open transaction `select` picks, committing most.
    fn end_all(&mut self, select: impl Fn(&str) -> bool) {
        let names: Vec<String> = self
            .open
            .iter()
            .map(|tx| tx.name.clone())
            .filter(|name| select(name))
            .collect();
        for name in names {
            let index = self.index_of(&name);
            if name == "big" || self.random.percent(80) {
                self.commit(index);
            } else {
                self.rollback(index);
            }
        }
    }

    fn index_of(&self, name: &str) -> usize {
        self.open
            .iter()
            .position(|tx| tx.name == name)
            .unwrap_or(usize::MAX)
    }

    /// The large transaction's row `n`: an insert on thread 1.
    fn big_row(&mut self, n: usize) {
        let index = match self.open.iter().position(|tx| tx.name == "big") {
            Some(index) => index,
            None => self.begin("big".to_owned()),
        };
        if n == BIG_SAVEPOINT_AT {
            self.savepoint(index, "mid".to_owned());
        }
        let id = self.take_id();
        let values = [
            ("ID", json!(id)),
            ("STATUS", json!("BIG")),
            ("TOTAL", json!(format!("{}.25", n))),
            ("NOTE", json!(format!("{n:06} {}", "n".repeat(3_983)))),
        ];
        self.insert(index, "ORDERS", id, &values);
    }

    /// After the savepoint taken mid-spill: more rows, changes to its own rows, then the
    /// rollback to it, then a few rows that stay.
    fn big_undone_part(&mut self) {
        let index = self.index_of("big");
        for n in 0..BIG_UNDONE_ROWS {
            let id = self.take_id();
            let values = [
                ("ID", json!(id)),
                ("STATUS", json!("UNDONE")),
                ("TOTAL", json!("0.00")),
                ("LABEL", json!(format!("undone {n} 𝄞"))),
            ];
            self.insert(index, "ORDERS", id, &values);
        }
        self.rollback_to(index, "mid");
        for _ in 0..5 {
            let id = self.take_id();
            let values = [
                ("ID", json!(id)),
                ("STATUS", json!("AFTER")),
                ("TOTAL", json!("1.00")),
                ("LABEL", Value::Null),
            ];
            self.insert(index, "ORDERS", id, &values);
        }
    }

    fn take_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Opens a transaction (nothing is written until its first change).
    fn begin(&mut self, name: String) -> usize {
        self.open.push(OpenTransaction {
            name,
            changes: Vec::new(),
            undo: Vec::new(),
            savepoints: Vec::new(),
            started: false,
            last_row: None,
            lob_steps: 0,
        });
        self.open.len() - 1
    }

    /// Before a transaction's first change: the RAC thread it runs on.
    fn start(&mut self, index: usize) {
        if self.open[index].started {
            return;
        }
        let thread = if self.open[index].name == "big" || self.random.percent(60) {
            1
        } else {
            2
        };
        if thread != self.thread {
            self.step(&json!({ "thread": thread }));
            self.thread = thread;
        }
        if self.open[index].name == "big" {
            // The SCN of its first change, the next step.
            self.big_start_scn = self.scn + 1;
        }
        self.open[index].started = true;
    }

    fn small_step(&mut self) {
        let small_open = self.open.iter().filter(|tx| tx.name != "big").count();
        if small_open < 2 || (small_open < 5 && self.random.percent(25)) {
            let name = format!("t{}", self.next_transaction);
            self.next_transaction += 1;
            self.begin(name);
        }
        let candidates: Vec<usize> = (0..self.open.len())
            .filter(|&i| self.open[i].name != "big")
            .collect();
        let index = candidates[self.random.below(candidates.len())];
        match self.random.below(115) {
            0..=9 if !self.open[index].changes.is_empty() => self.commit(index),
            10..=12 if self.open[index].started => self.rollback(index),
            13..=18 if self.open[index].started => {
                let name = format!(
                    "s{}",
                    self.open[index].savepoints.len() + self.random.below(3)
                );
                self.savepoint(index, name);
            }
            19..=24 if !self.open[index].savepoints.is_empty() => {
                let savepoints = &self.open[index].savepoints;
                let target = savepoints[self.random.below(savepoints.len())].name.clone();
                self.rollback_to(index, &target);
            }
            25..=31 => self.failed_statement(index),
            32..=47 => self.insert_order(index),
            48..=59 => self.insert_doc(index),
            60..=64 if !self.tags.gone => self.insert_tag(index),
            65..=76 => self.update(index),
            77..=84 => self.delete(index),
            85..=94 => self.lob_change(index),
            100.. => self.added_table_step(index),
            _ => {
                if self.random.percent(30) {
                    self.step(&json!({"advance_seconds": 1}));
                }
            }
        }
    }

    /// The tables an update or delete may touch: TAGS until it is renamed away or dropped.
    fn changeable_tables(&self) -> &'static [&'static str] {
        if self.tags.gone {
            &["ORDERS", "DOCS"]
        } else {
            &["ORDERS", "DOCS", "TAGS"]
        }
    }

    /// A seeded selection of [`TagsDdl`], in order: each column change with probability 3/4,
    /// TRUNCATE with 1/4, and one of the last ones (or none).
    fn choose_tags_ddl(&mut self) -> Vec<TagsDdl> {
        let mut chosen = Vec::new();
        for ddl in [
            TagsDdl::AddExtra,
            TagsDdl::ModifyName,
            TagsDdl::RenameNameColumn,
            TagsDdl::Truncate,
            TagsDdl::DropExtra,
        ] {
            let percent = if ddl == TagsDdl::Truncate { 25 } else { 75 };
            // DROP COLUMN EXTRA needs the ADD.
            if self.random.percent(percent)
                && (ddl != TagsDdl::DropExtra || chosen.contains(&TagsDdl::AddExtra))
            {
                chosen.push(ddl);
            }
        }
        match self.random.below(4) {
            0 => chosen.push(TagsDdl::RenameTable),
            1 => chosen.push(TagsDdl::Drop),
            2 => chosen.push(TagsDdl::DropPurge),
            _ => {}
        }
        chosen
    }

    /// Runs the next DDL on TAGS unless an open transaction holds a TAGS row.
    fn try_tags_ddl(&mut self) {
        if self.tags_ddl.is_empty() || self.locks.keys().any(|(table, _)| *table == "TAGS") {
            return;
        }
        let ddl = self.tags_ddl.remove(0);
        let name = self.tags.name;
        let sql = match ddl {
            TagsDdl::AddExtra => "ALTER TABLE APP.TAGS ADD (EXTRA VARCHAR2(20))".to_owned(),
            TagsDdl::ModifyName => format!("ALTER TABLE APP.TAGS MODIFY ({name} VARCHAR2(60))"),
            TagsDdl::RenameNameColumn => {
                format!("ALTER TABLE APP.TAGS RENAME COLUMN {name} TO LABEL")
            }
            TagsDdl::Truncate => "TRUNCATE TABLE APP.TAGS".to_owned(),
            TagsDdl::DropExtra => "ALTER TABLE APP.TAGS DROP COLUMN EXTRA".to_owned(),
            TagsDdl::RenameTable => "ALTER TABLE APP.TAGS RENAME TO TAGS_OLD".to_owned(),
            TagsDdl::Drop => "DROP TABLE APP.TAGS".to_owned(),
            TagsDdl::DropPurge => "DROP TABLE APP.TAGS PURGE".to_owned(),
        };
        self.step(&json!({ "ddl": sql }));
        // The capture publishes a TRUNCATE as its own event, every other DDL with its statement.
        let change = if ddl == TagsDdl::Truncate {
            Change {
                op: "truncate",
                table: "TAGS",
                image: BTreeMap::new(),
            }
        } else {
            Change {
                op: "ddl",
                table: "TAGS",
                image: BTreeMap::from([("sql".to_owned(), json!(sql))]),
            }
        };
        self.committed.push(Committed {
            name: format!("DDL {ddl:?}"),
            changes: vec![change],
        });
        let tags = self
            .rows
            .iter_mut()
            .filter(|((table, _), _)| *table == "TAGS");
        match ddl {
            TagsDdl::AddExtra => {
                for (_, row) in tags {
                    row.values.insert("EXTRA".to_owned(), Value::Null);
                }
                self.tags.extra = true;
            }
            TagsDdl::ModifyName => {}
            TagsDdl::RenameNameColumn => {
                for (_, row) in tags {
                    if let Some(value) = row.values.remove(name) {
                        row.values.insert("LABEL".to_owned(), value);
                    }
                }
                self.tags.name = "LABEL";
            }
            TagsDdl::DropExtra => {
                for (_, row) in tags {
                    row.values.remove("EXTRA");
                }
                self.tags.extra = false;
            }
            TagsDdl::Truncate | TagsDdl::RenameTable | TagsDdl::Drop | TagsDdl::DropPurge => {
                self.rows.retain(|(table, _), _| *table != "TAGS");
                self.tags.gone = ddl != TagsDdl::Truncate;
            }
        }
    }

    /// Text with characters outside the BMP, `len` characters long.
    fn text(&mut self, len: usize) -> String {
        const ALPHABET: [char; 8] = ['a', 'b', 'z', ' ', 'é', '€', '😀', '𝄞'];
        (0..len)
            .map(|_| ALPHABET[self.random.below(ALPHABET.len())])
            .collect()
    }

    fn amount(&mut self) -> String {
        format!(
            "{}.{:02}",
            self.random.below(100_000),
            self.random.below(100)
        )
    }

    fn status(&mut self) -> &'static str {
        ["NEW", "PAID", "SHIPPED", "GONE"][self.random.below(4)]
    }

    fn insert_order(&mut self, index: usize) {
        let id = self.take_id();
        let label = if self.random.percent(30) {
            Value::Null
        } else {
            let len = 1 + self.random.below(40);
            json!(self.text(len))
        };
        let values = [
            ("ID", json!(id)),
            ("STATUS", json!(self.status())),
            ("TOTAL", json!(self.amount())),
            ("LABEL", label),
            ("NOTE", self.note()),
        ];
        self.insert(index, "ORDERS", id, &values);
    }

    /// ORDERS.NOTE: mostly NULL, sometimes an extended string (4,001 to 20,000 bytes, ASCII
    /// with quotes, so bytes and characters agree for the VARCHAR2(32767) byte limit).
    fn note(&mut self) -> Value {
        if self.under_repair.contains(&Feature::ExtendedString) || !self.random.percent(15) {
            return Value::Null;
        }
        const ALPHABET: [char; 6] = ['a', 'q', 'z', ' ', '\'', '0'];
        let len = 4_001 + self.random.below(16_000);
        json!(
            (0..len)
                .map(|_| ALPHABET[self.random.below(ALPHABET.len())])
                .collect::<String>()
        )
    }

    fn insert_tag(&mut self, index: usize) {
        let id = self.take_id();
        let mut values = vec![
            ("ID", json!(id)),
            (self.tags.name, json!(format!("tag {id}"))),
        ];
        if self.tags.extra {
            values.push(("EXTRA", json!("x")));
        }
        self.insert(index, "TAGS", id, &values);
    }

    /// A DOCS row with a CLOB written inline (up to 3,964 bytes) or in 6,000-character pieces,
    /// and a BLOB, either possibly NULL.
    fn insert_doc(&mut self, index: usize) {
        let id = self.take_id();
        let body = match self.random.below(4) {
            0 => None,
            1 => {
                let len = 7_000 + self.random.below(6_000);
                Some(self.text(len))
            }
            _ => {
                let len = 1 + self.random.below(600);
                Some(self.text(len))
            }
        };
        let data: Option<Vec<u8>> = match self.random.below(3) {
            0 => None,
            1 => Some((0..5_000).map(|i| (i % 251) as u8).collect()),
            _ => Some((0..1 + self.random.below(64)).map(|i| i as u8).collect()),
        };
        let values = [
            ("ID", json!(id)),
            ("TITLE", json!(format!("doc {id}"))),
            ("BODY", body.as_ref().map_or(Value::Null, |b| json!(b))),
            (
                "DATA",
                data.as_ref().map_or(Value::Null, |d| json!(encode_hex(d))),
            ),
        ];
        self.insert(index, "DOCS", id, &values);
    }

    /// Inserts a row (scenario values given).
    fn insert(&mut self, index: usize, table: &'static str, id: i64, values: &[(&str, Value)]) {
        self.start(index);
        let mut step = json!({"tx": self.open[index].name, "insert": format!("APP.{table}")});
        step["values"] = values
            .iter()
            .map(|(column, value)| ((*column).to_owned(), value.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        self.step(&step);
        let row = compact_row(table, values, &self.tags.columns());
        let key = (table, id);
        self.locks.insert(key, self.open[index].name.clone());
        self.open[index].undo.push(UndoEntry { key, before: None });
        self.open[index].changes.push(Change {
            op: "i",
            table,
            image: row.values.clone(),
        });
        if self.seen(key.0) {
            self.open[index].last_row = Some(key);
        }
        self.rows.insert(key, row);
    }

    /// A row the transaction may touch: one it holds, or one no open transaction holds.
    fn visible_row(&mut self, index: usize, tables: &[&str]) -> Option<RowKey> {
        let name = &self.open[index].name;
        let rows: Vec<RowKey> = self
            .rows
            .keys()
            .filter(|key| tables.contains(&key.0))
            .filter(|key| self.locks.get(*key).is_none_or(|owner| owner == name))
            .copied()
            .collect();
        if rows.is_empty() {
            None
        } else {
            Some(rows[self.random.below(rows.len())])
        }
    }

    fn lock(&mut self, index: usize, key: RowKey) {
        self.start(index);
        self.locks.insert(key, self.open[index].name.clone());
        let before = self.rows.get(&key).cloned();
        self.open[index].undo.push(UndoEntry { key, before });
    }

    fn update(&mut self, index: usize) {
        self.update_in(index, self.changeable_tables());
    }

    fn update_in(&mut self, index: usize, tables: &[&str]) {
        let Some(key) = self.visible_row(index, tables) else {
            return;
        };
        let set: Vec<(&str, Value)> = match key.0 {
            "ORDERS" => {
                let mut set = vec![("STATUS", json!(self.status()))];
                if self.random.percent(50) {
                    set.push(("TOTAL", json!(self.amount())));
                }
                set
            }
            "DOCS" => vec![(
                "TITLE",
                json!(format!("retitled {}", self.random.below(1000))),
            )],
            ADDED_TO_SPEC | CREATED => {
                let mut set = vec![("QTY", json!(self.random.below(1_000)))];
                if self.random.percent(50) {
                    set.push((
                        "NAME",
                        json!(format!("renamed {}", self.random.below(1000))),
                    ));
                }
                set
            }
            _ => vec![(
                self.tags.name,
                json!(format!("renamed {}", self.random.below(1000))),
            )],
        };
        let mut step = json!({
            "tx": self.open[index].name,
            "update": format!("APP.{}", key.0),
            "where": {"ID": key.1},
        });
        step["set"] = set
            .iter()
            .map(|(c, v)| ((*c).to_owned(), v.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        self.lock(index, key);
        self.step(&step);
        let Some(row) = self.rows.get_mut(&key) else {
            return;
        };
        for (column, value) in &set {
            row.values
                .insert((*column).to_owned(), compact_value(key.0, column, value));
        }
        let image = non_lob_image(key.0, row);
        self.open[index].changes.push(Change {
            op: "u",
            table: key.0,
            image,
        });
        if self.seen(key.0) {
            self.open[index].last_row = Some(key);
        }
    }

    fn delete(&mut self, index: usize) {
        self.delete_in(index, self.changeable_tables());
    }

    fn delete_in(&mut self, index: usize, tables: &[&str]) {
        let Some(key) = self.visible_row(index, tables) else {
            return;
        };
        self.lock(index, key);
        self.step(&json!({
            "tx": self.open[index].name,
            "delete": format!("APP.{}", key.0),
            "where": {"ID": key.1},
        }));
        let Some(row) = self.rows.remove(&key) else {
            return;
        };
        self.open[index].changes.push(Change {
            op: "d",
            table: key.0,
            image: non_lob_image(key.0, &row),
        });
        if self.seen(key.0) {
            self.open[index].last_row = Some(key);
        }
    }

    /// A statement that fails after writing its redo: its rows, then at once its undo rows.
    /// Nothing of it is committed; the rows it touched stay locked (as far as the generator
    /// cares: no other transaction is given them).
    fn failed_statement(&mut self, index: usize) {
        let lob_insert_allowed = !self.under_repair.contains(&Feature::UndoneLobInsert);
        let tx = self.open[index].name.clone();
        let step = match self.random.below(4) {
            0 => {
                let id = self.take_id();
                let note = self.note();
                json!({"tx": tx, "insert": "APP.ORDERS", "fails": true,
                       "values": {"ID": id, "STATUS": "FAILED", "TOTAL": "1.00", "NOTE": note}})
            }
            1 if lob_insert_allowed => {
                let id = self.take_id();
                let body = self.text(20);
                json!({"tx": tx, "insert": "APP.DOCS", "fails": true,
                       "values": {"ID": id, "TITLE": "failed", "BODY": body}})
            }
            2 => {
                let Some(key) = self.visible_row(index, &["ORDERS"]) else {
                    return;
                };
                self.lock(index, key);
                self.open[index].undo.pop();
                json!({"tx": tx, "update": "APP.ORDERS", "fails": true,
                       "where": {"ID": key.1}, "set": {"STATUS": "FAILED"}})
            }
            _ => {
                let Some(key) = self.visible_row(index, &["ORDERS", "DOCS"]) else {
                    return;
                };
                self.lock(index, key);
                self.open[index].undo.pop();
                json!({"tx": tx, "delete": format!("APP.{}", key.0), "fails": true,
                       "where": {"ID": key.1}})
            }
        };
        self.start(index);
        self.step(&step);
    }

    /// A LOB change after the insert. The capture rebuilds a LOB written in pieces from the
    /// value an earlier change of the transaction set for the same row; a write from offset 1
    /// at least as long as the old value (or trimmed to its own length) it reads as a whole new
    /// value, needing none. So: pieces appended to a CLOB the transaction set (right after, or
    /// after other changes), or whole new CLOB or BLOB values at any time.
    fn lob_change(&mut self, index: usize) {
        let Some(key) = self.visible_row(index, &["DOCS"]) else {
            return;
        };
        let Some(row) = self.rows.get(&key).cloned() else {
            return;
        };
        let tx = self.open[index].name.clone();
        let body_known = self.body_set_in_transaction(index, key);
        match (&row.body, &row.data, self.random.below(3)) {
            (Some(body), _, 0) if body_known => {
                let piece = {
                    let len = 1 + self.random.below(3_000);
                    self.text(len)
                };
                let offset = utf16_len(body) + 1;
                self.lock(index, key);
                self.step(
                    &json!({"tx": tx, "lob_write": "APP.DOCS", "where": {"ID": key.1},
                                  "column": "BODY", "offset": offset, "data": piece}),
                );
                let mut content = body.clone();
                content.extend(piece.chars());
                self.set_lob(
                    index,
                    key,
                    "BODY",
                    json!(content.iter().collect::<String>()),
                );
                if let Some(row) = self.rows.get_mut(&key) {
                    row.body = Some(content);
                }
            }
            (Some(body), _, 1) => {
                let len = 1 + self.random.below(2 * body.len().max(10));
                let new = self.text(len);
                self.lock(index, key);
                self.step(
                    &json!({"tx": tx, "lob_write": "APP.DOCS", "where": {"ID": key.1},
                                  "column": "BODY", "offset": 1, "data": new}),
                );
                let count = new.encode_utf16().count();
                if count < utf16_len(body) {
                    self.step(
                        &json!({"tx": tx, "lob_trim": "APP.DOCS", "where": {"ID": key.1},
                                      "column": "BODY", "length": count}),
                    );
                }
                self.set_lob(index, key, "BODY", json!(new));
                if let Some(row) = self.rows.get_mut(&key) {
                    row.body = Some(new.chars().collect());
                }
            }
            (_, Some(data), _) => {
                let len = data.len() + self.random.below(200);
                let new: Vec<u8> = (0..len).map(|i| (i * 7 % 256) as u8).collect();
                self.lock(index, key);
                self.step(
                    &json!({"tx": tx, "lob_write": "APP.DOCS", "where": {"ID": key.1},
                                  "column": "DATA", "offset": 1, "data": encode_hex(&new)}),
                );
                self.set_lob(index, key, "DATA", json!(base64(&new)));
                if let Some(row) = self.rows.get_mut(&key) {
                    row.data = Some(new);
                }
            }
            _ => {}
        }
    }

    /// Whether the transaction set the row's CLOB (an insert or update with BODY, a LOB step)
    /// since the row was inserted: the value an append continues, which the capture knows only
    /// from the transaction's own changes.
    fn body_set_in_transaction(&self, index: usize, key: RowKey) -> bool {
        for change in self.open[index].changes.iter().rev() {
            if change.table != key.0 || change.image.get("ID") != Some(&json!(key.1)) {
                continue;
            }
            if change.image.get("BODY").is_some_and(|v| !v.is_null()) {
                return true;
            }
            if change.op != "u" {
                return false;
            }
        }
        false
    }

    /// Whether the capture mines `table`'s rows written now: APP.EARLY's only from the chunk at
    /// which it joins `spec.tables` (a transaction never spans chunks but the large one, which
    /// writes ORDERS only). The capture assembles a transaction from the rows it mines, so a
    /// LOB step joins the last change of a table it mines, whatever other tables' rows came
    /// between.
    fn seen(&self, table: &str) -> bool {
        table != ADDED_TO_SPEC || self.chunk >= self.early_chunk
    }

    /// The index of the transaction's last change of a table the capture mines.
    fn last_seen_change(&self, index: usize) -> Option<usize> {
        self.open[index]
            .changes
            .iter()
            .rposition(|change| self.seen(change.table))
    }

    /// Whether a LOB step on `key` joins the transaction's last change (an insert or update of
    /// that row), as the capture folds it in.
    fn joins_last_change(&self, index: usize, key: RowKey) -> bool {
        let tx = &self.open[index];
        tx.last_row == Some(key)
            && self
                .last_seen_change(index)
                .is_some_and(|last| tx.changes[last].op != "d")
    }

    /// The model of a LOB step: folded into the transaction's last change when it joins it,
    /// otherwise an update of its own with the key and the new LOB value.
    fn set_lob(&mut self, index: usize, key: RowKey, column: &str, value: Value) {
        self.open[index].lob_steps += 1;
        if let Some(row) = self.rows.get_mut(&key) {
            row.values.insert(column.to_owned(), value.clone());
        }
        if self.joins_last_change(index, key) {
            if let Some(last) = self.last_seen_change(index) {
                self.open[index].changes[last]
                    .image
                    .insert(column.to_owned(), value);
            }
            return;
        }
        self.open[index].changes.push(Change {
            op: "u",
            table: key.0,
            image: BTreeMap::from([("ID".to_owned(), json!(key.1)), (column.to_owned(), value)]),
        });
        self.open[index].last_row = Some(key);
    }

    fn savepoint(&mut self, index: usize, name: String) {
        let last_change = self
            .last_seen_change(index)
            .map(|last| (last, self.open[index].changes[last].clone()));
        let tx = &mut self.open[index];
        // A savepoint of a name already used moves it (Oracle erases the older one).
        tx.savepoints.retain(|s| s.name != name);
        tx.savepoints.push(Savepoint {
            name: name.clone(),
            changes: tx.changes.len(),
            last_change,
            last_row: tx.last_row,
            undo: tx.undo.len(),
            lob_steps: tx.lob_steps,
        });
        let line = json!({"tx": tx.name, "savepoint": name});
        self.step(&line);
    }

    /// Undoes what followed the savepoint; later savepoints are erased, the target stays.
    fn rollback_to(&mut self, index: usize, target: &str) {
        let Some(at) = self.open[index]
            .savepoints
            .iter()
            .position(|s| s.name == target)
        else {
            return;
        };
        let (changes, undo, last_change, last_row) = {
            let savepoint = &self.open[index].savepoints[at];
            if self.under_repair.contains(&Feature::UndoneLobWrite)
                && self.open[index].lob_steps > savepoint.lob_steps
            {
                return;
            }
            (
                savepoint.changes,
                savepoint.undo,
                savepoint.last_change.clone(),
                savepoint.last_row,
            )
        };
        if self.under_repair.contains(&Feature::UndoneLobInsert)
            && self.open[index].changes[changes..]
                .iter()
                .any(|c| c.op == "i" && c.table == "DOCS" && self.has_lob(c))
        {
            return;
        }
        let tx = self.open[index].name.clone();
        self.step(&json!({"tx": tx, "rollback_to": target}));
        let open = &mut self.open[index];
        open.savepoints.truncate(at + 1);
        open.changes.truncate(changes);
        if let Some((last, saved)) = last_change
            && let Some(change) = open.changes.get_mut(last)
        {
            *change = saved;
        }
        // The changes rolled back are cancelled before the capture assembles the rest: a LOB
        // step after this joins the change before the savepoint.
        open.last_row = last_row;
        let undone: Vec<UndoEntry> = open.undo.drain(undo..).collect();
        for entry in undone.into_iter().rev() {
            match entry.before {
                Some(row) => self.rows.insert(entry.key, row),
                None => self.rows.remove(&entry.key),
            };
        }
    }

    fn has_lob(&self, change: &Change) -> bool {
        ["BODY", "DATA"]
            .iter()
            .any(|c| change.image.get(*c).is_some_and(|v| !v.is_null()))
    }

    fn commit(&mut self, index: usize) {
        let tx = self.open.remove(index);
        if tx.started {
            self.step(&json!({"tx": tx.name, "commit": true}));
        }
        self.locks.retain(|_, owner| *owner != tx.name);
        if !tx.changes.is_empty() {
            self.committed.push(Committed {
                name: tx.name,
                changes: tx.changes,
            });
        }
    }

    fn rollback(&mut self, index: usize) {
        let tx = self.open.remove(index);
        if tx.started {
            self.step(&json!({"tx": tx.name, "rollback": true}));
        }
        for entry in tx.undo.into_iter().rev() {
            match entry.before {
                Some(row) => self.rows.insert(entry.key, row),
                None => self.rows.remove(&entry.key),
            };
        }
        self.locks.retain(|_, owner| *owner != tx.name);
    }
}

/// The compact image of an inserted row: every column of the table, NULL where no value.
fn compact_row(table: &'static str, values: &[(&str, Value)], tags: &[&'static str]) -> Row {
    let columns: &[&str] = match table {
        "ORDERS" => &["ID", "STATUS", "TOTAL", "LABEL", "NOTE"],
        "DOCS" => &["ID", "TITLE", "BODY", "DATA"],
        ADDED_TO_SPEC | CREATED => &["ID", "NAME", "QTY"],
        _ => tags,
    };
    let given = |column: &str| {
        values
            .iter()
            .find(|(c, _)| *c == column)
            .map_or(Value::Null, |(_, v)| v.clone())
    };
    let mut row = Row {
        values: BTreeMap::new(),
        body: None,
        data: None,
    };
    for column in columns {
        let value = given(column);
        match (*column, &value) {
            ("BODY", Value::String(text)) => row.body = Some(text.chars().collect()),
            ("DATA", Value::String(text)) => row.data = Some(decode_hex(text).unwrap_or_default()),
            _ => {}
        }
        row.values
            .insert((*column).to_owned(), compact_value(table, column, &value));
    }
    row
}

/// A scenario value as the compact format writes it (`docs/events.md`).
fn compact_value(table: &str, column: &str, value: &Value) -> Value {
    match (table, column, value) {
        (_, _, Value::Null) => Value::Null,
        ("DOCS", "DATA", Value::String(text)) => {
            json!(base64(&decode_hex(text).unwrap_or_default()))
        }
        _ => value.clone(),
    }
}

/// The image of an update's `after` or a delete's `before`: every non-LOB column (with
/// `ALL` supplemental logging; LogMiner logs no LOB in a before image).
fn non_lob_image(table: &str, row: &Row) -> BTreeMap<String, Value> {
    let mut image = row.values.clone();
    if table == "DOCS" {
        image.remove("BODY");
        image.remove("DATA");
    }
    image
}

/// A CLOB's length as DBMS_LOB counts it: UTF-16 code units, two for a character outside the
/// BMP.
fn utf16_len(text: &[char]) -> usize {
    text.iter().map(|c| c.len_utf16()).sum()
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
