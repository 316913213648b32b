//! Throughput of the SQL_REDO parser, one thread, on a generated LogMiner-style corpus.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench redo_parse
//! # also time Debezium's LogMinerDmlParser on the same statements (needs Java 17 + Maven):
//! REDO_BENCH_DEBEZIUM=1 cargo bench -p redoline-capture --bench redo_parse
//! # pin both to one core:
//! taskset -c 1 env REDO_BENCH_DEBEZIUM=1 cargo bench -p redoline-capture --bench redo_parse
//! ```
//!
//! Shapes: insert, update (a quarter of the columns set, all columns in the before image, ROWID)
//! and delete (all columns, ROWID), each with 1, 5, 20 and 50 columns. Values cycle through
//! NUMBER text, plain VARCHAR2, VARCHAR2 with `''`, `TO_DATE(..)`, `TO_TIMESTAMP(..)` and decimal
//! NUMBER, with about one NULL in ten (never the first column). The corpus is written to
//! `$CARGO_TARGET_TMPDIR/redo_parse_corpus.tsv` (`SHAPE<TAB>COLUMNS<TAB>SQL_REDO`, columns named
//! `C1..Cn` of `"BENCH"."T"`), the file `tests/env/debezium-parser/run.sh` reads.
//!
//! The corpus is in LogMiner's exact spelling, so `parse_dml` reads it by its fast path; other
//! spellings (comments, other spacing, `UNISTR`, `||`) go through the general grammar and are
//! slower. Each figure is the best of six 250 ms rounds after a 300 ms warm-up, on one thread.
//! Figures are printed, never asserted; on a shared machine they vary by up to twice between runs,
//! on both sides, so compare the two columns of one run.

mod support;

use std::error::Error;
use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use redoline_capture::redo::cli::render_statement;
use redoline_capture::redo::parse_dml;
use redoline_testenv::random::Xorshift;

const STATEMENTS_PER_GROUP: usize = 4096;
const COLUMN_COUNTS: [usize; 4] = [1, 5, 20, 50];
const SHAPES: [&str; 3] = ["INSERT", "UPDATE", "DELETE"];
const WARM_UP: Duration = Duration::from_millis(300);
const ROUND: Duration = Duration::from_millis(250);
const ROUNDS: usize = 6;

/// A value for column `index` (0-based) as LogMiner would render it.
fn value(index: usize, random: &mut Xorshift, out: &mut String) -> Result<bool, std::fmt::Error> {
    if index > 0 && random.below(10) == 0 {
        out.push_str("NULL");
        return Ok(true);
    }
    let n = random.below(1_000_000);
    match index % 6 {
        0 => write!(out, "'{n}'")?,
        1 => write!(out, "'Customer name {n}'")?,
        2 => write!(out, "'O''Brien''s order {n}'")?,
        3 => write!(
            out,
            "TO_DATE('2024-{:02}-{:02} {:02}:{:02}:{:02}', 'YYYY-MM-DD HH24:MI:SS')",
            n % 12 + 1,
            n % 28 + 1,
            n % 24,
            n % 60,
            n / 60 % 60
        )?,
        4 => write!(
            out,
            "TO_TIMESTAMP('2024-{:02}-{:02} {:02}:{:02}:{:02}.{:06}')",
            n % 12 + 1,
            n % 28 + 1,
            n % 24,
            n % 60,
            n / 60 % 60,
            n
        )?,
        _ => write!(out, "'{}.{:02}'", n / 100, n % 100)?,
    }
    Ok(false)
}

fn rowid(random: &mut Xorshift, out: &mut String) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.push_str("ROWID = '");
    for _ in 0..18 {
        let index = usize::try_from(random.below(64)).unwrap_or_default();
        out.push(char::from(ALPHABET.get(index).copied().unwrap_or(b'A')));
    }
    out.push('\'');
}

fn where_clause(columns: usize, random: &mut Xorshift, out: &mut String) -> std::fmt::Result {
    out.push_str(" where ");
    for index in 0..columns {
        write!(out, "\"C{}\"", index + 1)?;
        let mut rendered = String::new();
        if value(index, random, &mut rendered)? {
            out.push_str(" IS NULL");
        } else {
            out.push_str(" = ");
            out.push_str(&rendered);
        }
        out.push_str(" and ");
    }
    rowid(random, out);
    Ok(())
}

fn statement(
    shape: &str,
    columns: usize,
    random: &mut Xorshift,
) -> Result<String, std::fmt::Error> {
    let mut sql = String::new();
    match shape {
        "INSERT" => {
            sql.push_str("insert into \"BENCH\".\"T\"(");
            for index in 0..columns {
                let comma = if index > 0 { "," } else { "" };
                write!(sql, "{comma}\"C{}\"", index + 1)?;
            }
            sql.push_str(") values (");
            for index in 0..columns {
                if index > 0 {
                    sql.push(',');
                }
                value(index, random, &mut sql)?;
            }
            sql.push(')');
        }
        "UPDATE" => {
            sql.push_str("update \"BENCH\".\"T\" set ");
            let first = usize::from(columns > 1);
            let set = (columns / 4).max(1);
            for index in first..first + set {
                if index > first {
                    sql.push_str(", ");
                }
                write!(sql, "\"C{}\" = ", index + 1)?;
                value(index, random, &mut sql)?;
            }
            where_clause(columns, random, &mut sql)?;
        }
        _ => {
            sql.push_str("delete from \"BENCH\".\"T\"");
            where_clause(columns, random, &mut sql)?;
        }
    }
    sql.push(';');
    Ok(sql)
}

/// Statements per second of `work` over `statements`: the best of several timed rounds after a
/// warm-up (the best round is the one least disturbed by other processes on the machine).
fn rate(statements: &[String], mut work: impl FnMut(&str)) -> f64 {
    let mut round = |least: Duration| {
        let start = Instant::now();
        let mut count = 0usize;
        loop {
            for sql in statements {
                work(sql);
            }
            count += statements.len();
            let elapsed = start.elapsed();
            if elapsed >= least {
                return count as f64 / elapsed.as_secs_f64();
            }
        }
    };
    round(WARM_UP);
    (0..ROUNDS).map(|_| round(ROUND)).fold(0.0, f64::max)
}

struct Group {
    shape: &'static str,
    columns: usize,
    statements: Vec<String>,
}

fn main() -> Result<(), Box<dyn Error>> {
    // `cargo bench ... -- FILTER` runs only the groups whose "SHAPE COLUMNS" contains FILTER.
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let mut random = Xorshift::new(0x5eed_1234_abcd_ef01);
    let mut groups = Vec::new();
    for shape in SHAPES {
        for columns in COLUMN_COUNTS {
            let statements = (0..STATEMENTS_PER_GROUP)
                .map(|_| statement(shape, columns, &mut random))
                .collect::<Result<Vec<_>, _>>()?;
            groups.push(Group {
                shape,
                columns,
                statements,
            });
        }
    }

    let corpus_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redo_parse_corpus.tsv");
    let mut corpus = std::io::BufWriter::new(std::fs::File::create(&corpus_path)?);
    for group in &groups {
        for sql in &group.statements {
            writeln!(corpus, "{}\t{}\t{sql}", group.shape, group.columns)?;
        }
    }
    corpus
        .into_inner()
        .map_err(|error| error.into_error())?
        .sync_all()?;
    println!("corpus: {}", corpus_path.display());

    println!(
        "{:<7} {:>4} {:>10} {:>14} {:>9} {:>18}",
        "shape", "cols", "bytes/stmt", "parse stmts/s", "MB/s", "parse+JSON stmts/s"
    );
    let mut ours = Vec::new();
    for group in &groups {
        let name = format!("{} {}", group.shape, group.columns);
        if filter
            .as_ref()
            .is_some_and(|filter| !name.contains(filter.as_str()))
        {
            continue;
        }
        let failures = group
            .statements
            .iter()
            .filter(|sql| parse_dml(sql).is_err())
            .count();
        if failures > 0 {
            return Err(format!(
                "{failures} {} statements with {} columns did not parse",
                group.shape, group.columns
            )
            .into());
        }
        let bytes: usize = group.statements.iter().map(String::len).sum();
        let mean_bytes = bytes as f64 / group.statements.len() as f64;
        let parse_rate = rate(&group.statements, |sql| {
            let _ = black_box(parse_dml(black_box(sql)));
        });
        let mut json = Vec::with_capacity(16 * 1024);
        let render_rate = rate(&group.statements, |sql| {
            json.clear();
            if let Ok(statement) = parse_dml(black_box(sql)) {
                render_statement(&statement, &mut json);
            }
            black_box(&json);
        });
        println!(
            "{:<7} {:>4} {:>10.0} {:>14.0} {:>9.0} {:>18.0}",
            group.shape,
            group.columns,
            mean_bytes,
            parse_rate,
            parse_rate * mean_bytes / 1e6,
            render_rate
        );
        ours.push((group.shape, group.columns, parse_rate));
    }

    if std::env::var_os("REDO_BENCH_DEBEZIUM").is_some() {
        compare_with_debezium(&corpus_path, &ours)?;
    } else {
        println!("(set REDO_BENCH_DEBEZIUM=1 to time Debezium's parser on the same corpus)");
    }
    Ok(())
}

/// Runs the Java harness on the corpus and prints both figures side by side.
fn compare_with_debezium(corpus: &Path, ours: &[(&str, usize, f64)]) -> Result<(), Box<dyn Error>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/env/debezium-parser/run.sh");
    println!(
        "running {} (builds with Maven on first use)",
        script.display()
    );
    let output = Command::new(&script).arg(corpus).output()?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!(
        "{:<7} {:>4} {:>16} {:>16} {:>7} {:>15}",
        "shape", "cols", "redoline stmts/s", "debezium stmts/s", "ratio", "debezium failed"
    );
    for (shape, columns, our_rate) in ours {
        let theirs = stdout.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                ["debezium", s, c, rate, failed]
                    if s == shape && c.parse::<usize>().ok() == Some(*columns) =>
                {
                    Some((rate.parse::<f64>().ok(), (*failed).to_owned()))
                }
                _ => None,
            }
        });
        match theirs {
            Some((Some(rate), failed)) => println!(
                "{shape:<7} {columns:>4} {our_rate:>16.0} {rate:>16.0} {:>7.2} {failed:>15}",
                our_rate / rate
            ),
            Some((None, failed)) => println!(
                "{shape:<7} {columns:>4} {our_rate:>16.0} {:>16} {:>7} {failed:>15}",
                "n/a", "-"
            ),
            None => println!("{shape:<7} {columns:>4} {our_rate:>16.0} {:>16}", "missing"),
        }
    }
    Ok(())
}
