#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The SQL_REDO parsers against the golden corpus, typed LOB and DDL shapes, error offsets, a
//! render → parse round trip of generated statements, and "never panics" on arbitrary input.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use redoline_capture::redo::cli::render_line;
use redoline_capture::redo::{
    DdlKind, DdlStatement, DmlStatement, LobData, LobKind, LobLocator, LobStatement, LobWrite,
    ObjectName, ParseErrorKind, RawValue, TableRef, parse_ddl, parse_dml, parse_lob,
};

const CORPUS: &str = include_str!("../fixtures/redo/dml.jsonl");
const EXPECTED: &str = include_str!("../fixtures/redo/dml.expected.jsonl");

// ---------------------------------------------------------------------------------------------
// Golden corpus (logminer.md §3 verbatim rows, Debezium parser test rows, the brief's shapes)

#[test]
fn every_corpus_line_renders_exactly_as_expected() {
    let inputs: Vec<&str> = CORPUS.lines().collect();
    let expected: Vec<&str> = EXPECTED.lines().collect();
    assert_eq!(
        inputs.len(),
        expected.len(),
        "corpus and expected differ in length"
    );
    for (number, (input, expected)) in inputs.iter().zip(&expected).enumerate() {
        let mut rendered = Vec::new();
        render_line(input.as_bytes(), &mut rendered);
        let rendered = String::from_utf8(rendered).unwrap();
        assert_eq!(
            &rendered,
            expected,
            "line {} of dml.jsonl: {input}",
            number + 1
        );
        // Every output line is one JSON object.
        let _: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&rendered).unwrap();
    }
}

#[test]
fn the_binary_streams_the_corpus_through_redo_parse() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redoline-capture"))
        .args(["redo", "parse"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(CORPUS.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "status {:?}", output.status);
    similar_lines(&String::from_utf8(output.stdout).unwrap(), EXPECTED);
}

#[test]
fn the_binary_answers_a_last_line_without_newline_and_exits_zero_on_garbage() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redoline-capture"))
        .args(["redo", "parse"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"\xff\xfe not utf-8\n\n{\"sql_redo\":\"delete from \\\"A\\\".\\\"B\\\"\"}")
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("{\"error\":"));
    assert!(lines[1].starts_with("{\"error\":"));
    assert_eq!(
        lines[2],
        r#"{"op":"DELETE","schema":"A","table":"B","where":{}}"#
    );
}

fn similar_lines(actual: &str, expected: &str) {
    let actual: Vec<&str> = actual.lines().collect();
    let expected: Vec<&str> = expected.lines().collect();
    assert_eq!(actual.len(), expected.len());
    for (number, (actual, expected)) in actual.iter().zip(&expected).enumerate() {
        assert_eq!(actual, expected, "output line {}", number + 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Typed results and borrowing

fn text(value: &str) -> RawValue<'_> {
    RawValue::Text(Cow::Borrowed(value))
}

#[test]
fn literals_without_escapes_borrow_from_the_statement() {
    let sql = r#"update "APP"."T" set "A" = 'plain', "B" = 'it''s' where "ID" = '1'"#;
    let DmlStatement::Update { set, where_, .. } = parse_dml(sql).unwrap() else {
        panic!("not an update");
    };
    assert!(matches!(&set[0].0, Cow::Borrowed("A")));
    assert!(matches!(&set[0].1, RawValue::Text(Cow::Borrowed("plain"))));
    assert!(matches!(&set[1].1, RawValue::Text(Cow::Owned(text)) if text == "it's"));
    assert!(matches!(&where_[0].1, RawValue::Text(Cow::Borrowed("1"))));
}

#[test]
fn rowid_and_alias_are_not_columns() {
    let sql = r#"delete from "C##MYUSER"."CUSTOMERS" a where a."RECID" = '1' and a.ROWID = 'AAAR1AAAMAAAACFAAA';"#;
    assert_eq!(
        parse_dml(sql).unwrap(),
        DmlStatement::Delete {
            table: TableRef {
                schema: Some(Cow::Borrowed("C##MYUSER")),
                table: Cow::Borrowed("CUSTOMERS"),
            },
            where_: vec![(Cow::Borrowed("RECID"), text("1"))],
            rowid: Some(Cow::Borrowed("AAAR1AAAMAAAACFAAA")),
        }
    );
}

#[test]
fn a_quoted_rowid_column_is_a_column() {
    let sql = r#"delete from "A"."T" where "ROWID" = 'x'"#;
    let DmlStatement::Delete { where_, rowid, .. } = parse_dml(sql).unwrap() else {
        panic!("not a delete");
    };
    assert_eq!(where_, vec![(Cow::Borrowed("ROWID"), text("x"))]);
    assert_eq!(rowid, None);
}

// ---------------------------------------------------------------------------------------------
// Error kinds and offsets

#[test]
fn errors_carry_kind_offset_and_excerpt() {
    let cases: &[(&str, ParseErrorKind, usize)] = &[
        (
            "commit;",
            ParseErrorKind::UnknownStatement("an insert, update or delete statement"),
            0,
        ),
        (r#"insert "A"."T""#, ParseErrorKind::Expected("`into`"), 7),
        (
            r#"insert into "A"."T"("X") values ('1','2')"#,
            ParseErrorKind::ValueCountMismatch {
                columns: 1,
                values: 2,
            },
            32,
        ),
        (
            r#"insert into "A"."T"("X") values ('1"#,
            ParseErrorKind::UnterminatedString,
            33,
        ),
        (
            r#"insert into "A"."T("X") values ('1')"#,
            ParseErrorKind::Expected("`(` before the column list"),
            20,
        ),
        (
            r#"delete from "A"."T" where "X" = '1' or "Y" = '2'"#,
            ParseErrorKind::TrailingText,
            36,
        ),
        (
            r#"delete from "A"."T" where "X" IS NOT NULL"#,
            ParseErrorKind::Expected("`NULL` after `IS`"),
            33,
        ),
        (
            r#"delete from "A"."T" a where b."X" = '1'"#,
            ParseErrorKind::UnknownAlias,
            28,
        ),
        (
            r#"delete from "A"."T" where ROWID = 'a' and ROWID = 'b'"#,
            ParseErrorKind::DuplicateRowid,
            42,
        ),
        (
            r#"update "A"."T" set ROWID = 'a'"#,
            ParseErrorKind::Expected("a quoted column name"),
            19,
        ),
        (
            r#"update "A"."T" set "X" = UNISTR('\12')"#,
            ParseErrorKind::InvalidUnistr,
            32,
        ),
        (
            r#"update "A"."T" set "X" = 'a' || HEXTORAW('00')"#,
            ParseErrorKind::NonTextConcatenation,
            32,
        ),
        (
            r#"update "A"."T" set "X" = /* open"#,
            ParseErrorKind::UnterminatedComment,
            25,
        ),
        (
            r#"update "A"."T" set "X" = Unsupported"#,
            ParseErrorKind::Expected("`Type` after `Unsupported`"),
            36,
        ),
        (
            r#"update "A"."T" set "X" = BOGUS"#,
            ParseErrorKind::Expected("a value"),
            25,
        ),
        (
            r#"update "A"."T" set "X" = 'a';;"#,
            ParseErrorKind::TrailingText,
            29,
        ),
    ];
    for (sql, kind, offset) in cases {
        let error = parse_dml(sql).unwrap_err();
        assert_eq!((&error.kind, error.offset), (kind, *offset), "{sql}");
        assert!(sql[error.offset..].starts_with(&error.excerpt), "{sql}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let sql = format!(
        r#"insert into "A"."T"("X") values ({}'x'{})"#,
        "F(".repeat(depth),
        ")".repeat(depth)
    );
    let error = parse_dml(&sql).unwrap_err();
    assert_eq!(error.kind, ParseErrorKind::NestingTooDeep(32));
}

// ---------------------------------------------------------------------------------------------
// LOB shapes (logminer.md §3 "LOBs"; Debezium SelectLobParserTest)

const LOB_DECLARE: &str = "DECLARE \n loc_c CLOB; \n buf_c VARCHAR2(6156); \n loc_b BLOB; \n buf_b RAW(6156); \n loc_nc NCLOB; \n buf_nc NVARCHAR2(6156); \nBEGIN\n";

fn admin_t() -> TableRef<'static> {
    TableRef {
        schema: Some(Cow::Borrowed("ADMIN")),
        table: Cow::Borrowed("T"),
    }
}

#[test]
fn sel_lob_locator_gives_column_table_and_key() {
    let sql = format!(
        "{LOB_DECLARE} select \"C\" into loc_c from \"ADMIN\".\"T\" where \"ID\" = '4' for update;"
    );
    assert_eq!(
        parse_lob(&sql).unwrap(),
        LobStatement::Locator(LobLocator {
            column: Cow::Borrowed("C"),
            kind: LobKind::Clob,
            table: admin_t(),
            where_: vec![(Cow::Borrowed("ID"), text("4"))],
            rowid: None,
        })
    );
    let debezium = r#" select "VAL_CLOB" into loc_c from "DEBEZIUM"."CLOB_TEST" where "ID" = '2' and "VAL_DATA" = 'Test2' for update;"#;
    let LobStatement::Locator(locator) = parse_lob(debezium).unwrap() else {
        panic!("not a locator");
    };
    assert_eq!(locator.column, "VAL_CLOB");
    assert_eq!(
        locator.where_,
        vec![
            (Cow::Borrowed("ID"), text("2")),
            (Cow::Borrowed("VAL_DATA"), text("Test2"))
        ]
    );
    let blob = format!(
        "{LOB_DECLARE} select \"B\" into loc_b from \"ADMIN\".\"T\" a where a.\"ID\" = '4' and a.ROWID = 'AAAB' for update;\nEND;"
    );
    let LobStatement::Locator(locator) = parse_lob(&blob).unwrap() else {
        panic!("not a locator");
    };
    assert_eq!(
        (locator.kind, locator.rowid.as_deref()),
        (LobKind::Blob, Some("AAAB"))
    );
    let nclob = "select \"N\" into loc_nc from \"ADMIN\".\"T\" where \"ID\" = '4' for update;";
    let LobStatement::Locator(locator) = parse_lob(nclob).unwrap() else {
        panic!("not a locator");
    };
    assert_eq!(locator.kind, LobKind::Nclob);
}

#[test]
fn lob_write_pieces() {
    assert_eq!(
        parse_lob(" buf_c := 'it''s a\nchunk'; \n  dbms_lob.write(loc_c, 12, 1, buf_c);").unwrap(),
        LobStatement::Write(LobWrite {
            kind: LobKind::Clob,
            data: LobData::Text(Cow::Owned("it's a\nchunk".to_owned())),
            amount: 12,
            offset: 1,
            locator: None,
        })
    );
    assert_eq!(
        parse_lob(" buf_b := HEXTORAW('0aff'); \n  dbms_lob.write(loc_b, 2, 8193, buf_b);")
            .unwrap(),
        LobStatement::Write(LobWrite {
            kind: LobKind::Blob,
            data: LobData::Hex(Cow::Borrowed("0aff")),
            amount: 2,
            offset: 8193,
            locator: None,
        })
    );
    assert_eq!(
        parse_lob(" buf_nc := UNISTR('\\0412\\044B'); \n  DBMS_LOB.WRITE(loc_nc, 2, 3, buf_nc);")
            .unwrap(),
        LobStatement::Write(LobWrite {
            kind: LobKind::Nclob,
            data: LobData::Text(Cow::Owned("Вы".to_owned())),
            amount: 2,
            offset: 3,
            locator: None,
        })
    );
}

#[test]
fn lob_write_with_the_whole_block() {
    let sql = format!(
        "{LOB_DECLARE} select \"C\" into loc_c from \"ADMIN\".\"T\" where \"ID\" = '4' for update;\n buf_c := 'abc'; \n  dbms_lob.write(loc_c, 3, 1, buf_c);\nEND;"
    );
    let LobStatement::Write(write) = parse_lob(&sql).unwrap() else {
        panic!("not a write");
    };
    assert_eq!(write.data, LobData::Text(Cow::Borrowed("abc")));
    assert_eq!(
        write.locator.map(|locator| locator.column),
        Some(Cow::Borrowed("C"))
    );
}

#[test]
fn lob_trim_and_erase() {
    assert_eq!(
        parse_lob("dbms_lob.trim(loc_c, 10);").unwrap(),
        LobStatement::Trim {
            kind: LobKind::Clob,
            new_length: 10
        }
    );
    assert_eq!(
        parse_lob(&format!("{LOB_DECLARE} dbms_lob.erase(loc_b, 4, 2);\nEND;")).unwrap(),
        LobStatement::Erase {
            kind: LobKind::Blob,
            amount: 4,
            offset: 2
        }
    );
}

#[test]
fn lob_errors() {
    let cases: &[(&str, ParseErrorKind)] = &[
        ("", ParseErrorKind::UnknownStatement("a LOB statement")),
        ("DECLARE loc_c CLOB;", ParseErrorKind::Expected("`BEGIN`")),
        (
            " buf_c := 'a'; dbms_lob.write(loc_c, 1, 1, buf_b);",
            ParseErrorKind::Expected("the buffer assigned above"),
        ),
        (
            " buf_c := 'a'; dbms_lob.write(loc_x, 1, 1, buf_c);",
            ParseErrorKind::Expected("loc_c, loc_nc or loc_b"),
        ),
        (
            "dbms_lob.trim(loc_c, -1);",
            ParseErrorKind::Expected("the new length"),
        ),
        (
            "dbms_lob.trim(loc_c, 99999999999999999999);",
            ParseErrorKind::InvalidInteger,
        ),
        (
            "dbms_lob.append(loc_c, x);",
            ParseErrorKind::Expected("`trim` or `erase`"),
        ),
        (
            " buf_b := TO_DATE('x'); dbms_lob.write(loc_b, 1, 1, buf_b);",
            ParseErrorKind::Expected("a quoted literal or HEXTORAW('..')"),
        ),
        (
            "dbms_lob.trim(loc_c, 1); trailing",
            ParseErrorKind::TrailingText,
        ),
    ];
    for (sql, kind) in cases {
        assert_eq!(&parse_lob(sql).unwrap_err().kind, kind, "{sql}");
    }
}

// ---------------------------------------------------------------------------------------------
// DDL heads

fn object<'a>(schema: Option<&'a str>, name: &'a str) -> Option<ObjectName<'a>> {
    Some(ObjectName {
        schema: schema.map(Cow::Borrowed),
        name: Cow::Borrowed(name),
    })
}

#[test]
fn ddl_kinds_and_objects() {
    let cases: &[(&str, DdlKind, Option<ObjectName<'_>>)] = &[
        (
            "  alter table CUSTOMERS add (\n    country VARCHAR(50)\n  );",
            DdlKind::AlterTable,
            object(None, "CUSTOMERS"),
        ),
        (
            "create table t (id number(8,0), c clob);",
            DdlKind::CreateTable,
            object(None, "T"),
        ),
        (
            "ALTER TABLE APP.T ADD (PRIORITY NUMBER(1));",
            DdlKind::AlterTable,
            object(Some("APP"), "T"),
        ),
        (
            "DROP TABLE \"App\".\"My Tab#1\" PURGE;",
            DdlKind::DropTable,
            object(Some("App"), "My Tab#1"),
        ),
        (
            "truncate table app.orders;",
            DdlKind::TruncateTable,
            object(Some("APP"), "ORDERS"),
        ),
        (
            "/* why */ CREATE GLOBAL TEMPORARY TABLE s.tmp (x number) ON COMMIT DELETE ROWS;",
            DdlKind::CreateTable,
            object(Some("S"), "TMP"),
        ),
        (
            "create table if not exists \"s\".t2 (x int);",
            DdlKind::CreateTable,
            object(Some("s"), "T2"),
        ),
        (
            "drop table if exists x;",
            DdlKind::DropTable,
            object(None, "X"),
        ),
        (
            "Create /* c */ Table\n\"A\" . \"B\"(x int);",
            DdlKind::CreateTable,
            object(Some("A"), "B"),
        ),
        (
            "rename orders to orders_2024;",
            DdlKind::RenameTable,
            object(None, "ORDERS"),
        ),
        ("create index i on t(x);", DdlKind::Other, None),
        ("alter index i rebuild;", DdlKind::Other, None),
        ("comment on table t is 'x';", DdlKind::Other, None),
        ("grant select on t to u;", DdlKind::Other, None),
    ];
    for (sql, kind, object) in cases {
        assert_eq!(
            parse_ddl(sql).unwrap(),
            DdlStatement {
                kind: *kind,
                object: object.clone(),
                renamed_to: (*kind == DdlKind::RenameTable).then_some(Cow::Borrowed("ORDERS_2024")),
            },
            "{sql}"
        );
    }
}

#[test]
fn ddl_renames_name_the_new_table() {
    let renamed = |sql: &str| parse_ddl(sql).unwrap().renamed_to.map(|n| n.into_owned());
    assert_eq!(
        renamed("ALTER TABLE APP.T RENAME TO T2;"),
        Some("T2".to_owned())
    );
    assert_eq!(
        renamed("alter table app.t rename to \"New t\";"),
        Some("New t".to_owned())
    );
    assert_eq!(renamed("RENAME t TO t_old;"), Some("T_OLD".to_owned()));
    // Renames of a column or a constraint leave the table's name.
    assert_eq!(renamed("ALTER TABLE APP.T RENAME COLUMN A TO B;"), None);
    assert_eq!(renamed("ALTER TABLE APP.T RENAME CONSTRAINT C TO D;"), None);
    assert_eq!(renamed("ALTER TABLE APP.T ADD (X NUMBER);"), None);
    assert!(parse_ddl("RENAME t;").is_err());
}

#[test]
fn ddl_errors() {
    assert_eq!(
        parse_ddl("  ").unwrap_err().kind,
        ParseErrorKind::Expected("a DDL statement")
    );
    let error = parse_ddl("alter table (x)").unwrap_err();
    assert_eq!(
        (&error.kind, error.offset),
        (&ParseErrorKind::Expected("a table name"), 12)
    );
    assert_eq!(
        parse_ddl("create table \"open").unwrap_err().kind,
        ParseErrorKind::UnterminatedIdentifier
    );
}

// ---------------------------------------------------------------------------------------------
// Round trip: generated statements, rendered in LogMiner's style with random spelling, parse back

/// A tiny deterministic generator for rendering choices.
struct Choices(u64);

impl Choices {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
    fn keyword(&mut self, keyword: &str) -> String {
        match self.next(3) {
            0 => keyword.to_ascii_lowercase(),
            1 => keyword.to_ascii_uppercase(),
            _ => keyword
                .chars()
                .enumerate()
                .map(|(index, c)| {
                    if index % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect(),
        }
    }
    /// Trivia that may be empty (next to punctuation).
    fn gap(&mut self) -> &'static str {
        ["", "", " ", "\n", " /* c */ ", "/**/", "\t "][self.next(7) as usize]
    }
    /// Trivia that separates two words.
    fn space(&mut self) -> &'static str {
        [" ", " ", "\n", " /* JSON */ ", "/**/", "\r\n  "][self.next(6) as usize]
    }
}

fn render_literal(text: &str, out: &mut String) {
    out.push('\'');
    out.push_str(&text.replace('\'', "''"));
    out.push('\'');
}

fn render_unistr(text: &str, choices: &mut Choices, out: &mut String) {
    out.push_str("UNISTR('");
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if c == '\'' {
            out.push_str("''");
        } else if choices.next(2) == 0 {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(out, "\\{unit:04X}").unwrap();
            }
        }
    }
    out.push_str("')");
}

fn render_value(value: &RawValue<'_>, choices: &mut Choices, out: &mut String) {
    match value {
        RawValue::Null => out.push_str(&choices.keyword("NULL")),
        RawValue::Unsupported => {
            out.push_str(&choices.keyword("Unsupported"));
            out.push_str(choices.space());
            out.push_str(&choices.keyword("Type"));
        }
        RawValue::Text(text) => match choices.next(4) {
            0 => render_unistr(text, choices, out),
            1 => {
                // Split into `'head' || UNISTR('tail')`, as LogMiner does for long values.
                let cut = text
                    .char_indices()
                    .map(|(index, _)| index)
                    .nth(text.chars().count() / 2)
                    .unwrap_or(text.len());
                render_literal(&text[..cut], out);
                out.push_str(choices.gap());
                out.push_str("||");
                out.push_str(choices.gap());
                render_unistr(&text[cut..], choices, out);
            }
            _ => render_literal(text, out),
        },
        RawValue::Call { name, args } => {
            out.push_str(name);
            out.push_str(choices.gap());
            out.push('(');
            for (index, arg) in args.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                    out.push_str(choices.gap());
                }
                render_value(arg, choices, out);
            }
            out.push(')');
        }
    }
}

fn render_table(table: &TableRef<'_>, choices: &mut Choices, out: &mut String) {
    if let Some(schema) = &table.schema {
        write!(out, "\"{schema}\"{}.{}", choices.gap(), choices.gap()).unwrap();
    }
    write!(out, "\"{}\"", table.table).unwrap();
}

fn render_column(column: &str, alias: Option<&str>, choices: &mut Choices, out: &mut String) {
    if let Some(alias) = alias.filter(|_| choices.next(4) != 0) {
        write!(out, "{alias}.").unwrap();
    }
    write!(out, "\"{column}\"").unwrap();
}

fn render_where(
    where_: &[(Cow<'_, str>, RawValue<'_>)],
    rowid: Option<&str>,
    alias: Option<&str>,
    choices: &mut Choices,
    out: &mut String,
) {
    if where_.is_empty() && rowid.is_none() {
        return;
    }
    out.push_str(choices.space());
    out.push_str(&choices.keyword("where"));
    let mut first = true;
    for (column, value) in where_ {
        out.push_str(choices.space());
        if !first {
            out.push_str(&choices.keyword("and"));
            out.push_str(choices.space());
        }
        first = false;
        render_column(column, alias, choices, out);
        if matches!(value, RawValue::Null) && choices.next(2) == 0 {
            write!(
                out,
                "{}{}{}",
                choices.space(),
                choices.keyword("IS"),
                choices.space()
            )
            .unwrap();
            out.push_str(&choices.keyword("NULL"));
        } else {
            write!(out, "{}={}", choices.gap(), choices.gap()).unwrap();
            render_value(value, choices, out);
        }
    }
    if let Some(rowid) = rowid {
        out.push_str(choices.space());
        if !first {
            out.push_str(&choices.keyword("and"));
            out.push_str(choices.space());
        }
        if let Some(alias) = alias {
            write!(out, "{alias}.").unwrap();
        }
        write!(
            out,
            "{}{}={}'{rowid}'",
            choices.keyword("ROWID"),
            choices.gap(),
            choices.gap()
        )
        .unwrap();
    }
}

fn render_statement(statement: &DmlStatement<'_>, seed: u64) -> String {
    let mut choices = Choices(seed | 1);
    let mut out = String::from(choices.gap());
    let alias = ["a", "T1", "x"][choices.next(3) as usize];
    let alias = (choices.next(2) == 0).then_some(alias);
    match statement {
        DmlStatement::Insert { table, values } => {
            write!(
                out,
                "{}{}{}",
                choices.keyword("insert"),
                choices.space(),
                choices.keyword("into")
            )
            .unwrap();
            out.push_str(choices.space());
            render_table(table, &mut choices, &mut out);
            out.push_str(choices.gap());
            out.push('(');
            for (index, (column, _)) in values.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write!(out, "\"{column}\"").unwrap();
            }
            write!(
                out,
                "){}{}{}(",
                choices.gap(),
                choices.keyword("values"),
                choices.gap()
            )
            .unwrap();
            for (index, (_, value)) in values.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                    out.push_str(choices.gap());
                }
                render_value(value, &mut choices, &mut out);
            }
            out.push(')');
        }
        DmlStatement::Update {
            table,
            set,
            where_,
            rowid,
        } => {
            out.push_str(&choices.keyword("update"));
            out.push_str(choices.space());
            render_table(table, &mut choices, &mut out);
            if let Some(alias) = alias {
                write!(out, "{}{alias}", choices.space()).unwrap();
            }
            write!(out, "{}{}", choices.space(), choices.keyword("set")).unwrap();
            for (index, (column, value)) in set.iter().enumerate() {
                out.push_str(if index > 0 { "," } else { "" });
                out.push_str(choices.space());
                render_column(column, alias, &mut choices, &mut out);
                write!(out, "{}={}", choices.gap(), choices.gap()).unwrap();
                render_value(value, &mut choices, &mut out);
            }
            render_where(where_, rowid.as_deref(), alias, &mut choices, &mut out);
        }
        DmlStatement::Delete {
            table,
            where_,
            rowid,
        } => {
            write!(
                out,
                "{}{}{}",
                choices.keyword("delete"),
                choices.space(),
                choices.keyword("from")
            )
            .unwrap();
            out.push_str(choices.space());
            render_table(table, &mut choices, &mut out);
            if let Some(alias) = alias {
                write!(out, "{}{alias}", choices.space()).unwrap();
            }
            render_where(where_, rowid.as_deref(), alias, &mut choices, &mut out);
        }
    }
    if choices.next(2) == 0 {
        out.push_str(choices.gap());
        out.push(';');
    }
    out.push_str(choices.gap());
    out
}

fn name() -> impl Strategy<Value = Cow<'static, str>> {
    prop_oneof![
        "[A-Z][A-Z0-9_#$]{0,11}",
        "[^\"]{1,12}",
        "COL [0-9]{1,3}",
        "OBJ# [0-9]{1,6}",
    ]
    .prop_map(Cow::Owned)
}

fn text_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 '\\\\\n]{0,12}",
        "\\PC{0,12}",
        any::<String>(),
        Just("'".to_owned()),
        Just("''".to_owned()),
        Just("|| -- /* not a comment */".to_owned()),
    ]
}

fn raw_value() -> impl Strategy<Value = RawValue<'static>> {
    let leaf = prop_oneof![
        1 => Just(RawValue::Null),
        1 => Just(RawValue::Unsupported),
        4 => text_value().prop_map(|text| RawValue::Text(Cow::Owned(text))),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        (
            prop_oneof![
                Just("TO_DATE"),
                Just("TO_TIMESTAMP"),
                Just("TO_TIMESTAMP_TZ"),
                Just("TO_YMINTERVAL"),
                Just("TO_DSINTERVAL"),
                Just("HEXTORAW"),
                Just("EMPTY_CLOB"),
                Just("EMPTY_BLOB"),
                Just("XMLType"),
            ],
            prop::collection::vec(inner, 0..3),
        )
            .prop_map(|(name, args)| RawValue::Call {
                name: Cow::Borrowed(name),
                args,
            })
    })
}

fn table() -> impl Strategy<Value = TableRef<'static>> {
    (prop::option::weighted(0.9, name()), name())
        .prop_map(|(schema, table)| TableRef { schema, table })
}

fn columns(min: usize) -> impl Strategy<Value = Vec<(Cow<'static, str>, RawValue<'static>)>> {
    prop::collection::vec((name(), raw_value()), min..6)
}

fn rowid() -> impl Strategy<Value = Option<Cow<'static, str>>> {
    prop::option::of("[A-Za-z0-9+/]{18}".prop_map(Cow::Owned))
}

fn statement() -> impl Strategy<Value = DmlStatement<'static>> {
    prop_oneof![
        (table(), columns(1)).prop_map(|(table, values)| DmlStatement::Insert { table, values }),
        (table(), columns(1), columns(0), rowid()).prop_map(|(table, set, where_, rowid)| {
            DmlStatement::Update {
                table,
                set,
                where_,
                rowid,
            }
        }),
        (table(), columns(0), rowid()).prop_map(|(table, where_, rowid)| DmlStatement::Delete {
            table,
            where_,
            rowid
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn generated_statements_round_trip(statement in statement(), seed in any::<u64>()) {
        let sql = render_statement(&statement, seed);
        match parse_dml(&sql) {
            Ok(parsed) => prop_assert_eq!(parsed, statement, "{}", sql),
            Err(error) => prop_assert!(false, "{error} in {sql}"),
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        let _ = parse_dml(&text);
        let _ = parse_lob(&text);
        let _ = parse_ddl(&text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_dml(&text);
        let _ = parse_lob(&text);
        let _ = parse_ddl(&text);
        let mut out = Vec::new();
        render_line(&bytes, &mut out);
        prop_assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
    }

    #[test]
    fn sql_shaped_noise_never_panics(
        tokens in prop::collection::vec(
            prop_oneof![
                Just("insert"), Just("into"), Just("update"), Just("delete"), Just("from"),
                Just("set"), Just("where"), Just("and"), Just("values"), Just("IS"), Just("NULL"),
                Just("ROWID"), Just("a"), Just("."), Just(","), Just("("), Just(")"), Just("="),
                Just("||"), Just(";"), Just("'"), Just("''"), Just("\""), Just("\"C\""),
                Just("'x'"), Just("UNISTR("), Just("'\\D83D'"), Just("'\\0041'"), Just("/*"),
                Just("*/"), Just("Unsupported"), Just("Type"), Just("TO_DATE("), Just("42"),
                Just("-"), Just("é"), Just(" "), Just("\n"), Just("DECLARE"), Just("BEGIN"),
                Just("END"), Just("select"), Just("loc_c"), Just("buf_c"), Just(":="),
                Just("dbms_lob"), Just("write"), Just("trim"), Just("erase"), Just("for"),
                Just("create"), Just("table"), Just("alter"), Just("drop"), Just("truncate"),
            ],
            0..40,
        )
    ) {
        let text = tokens.concat();
        let _ = parse_dml(&text);
        let _ = parse_lob(&text);
        let _ = parse_ddl(&text);
    }
}
