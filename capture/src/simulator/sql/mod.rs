//! The simulator's SQL door: a model of Oracle that runs each statement the real client sends
//! (`source/oracle/sql.rs`) as written, against views holding the simulator's own state in
//! Oracle's representation, so that the real client ([`crate::source::oracle::OracleClient`])
//! runs every scenario the simulator runs.
//!
//! ```text
//! OracleClient ── SqlSession::query/execute ── SimulatorPool (door.rs)
//!                                                 │ statement::parse (sqlparser, OracleDialect)
//!                                                 ├ SELECT → engine.rs over views.rs' relations
//!                                                 │   (WHERE and select list: compiled.rs)
//!                                                 ├ BEGIN DBMS_LOGMNR.… END; → LogMiner calls
//!                                                 └ ALTER SESSION, flush table DML, COMMIT
//! ```
//!
//! Why a parser and an evaluator of our own rather than an embedded SQL engine: the statements
//! are Oracle's dialect (`AS OF SCN`, `FETCH FIRST`, `V$` names, `'' IS NULL`, NUMBER as exact
//! decimals, `TO_CHAR` format models), and an engine such as SQLite would need each of those
//! rewritten into its own dialect first, which is the text matching this model replaces. The
//! `sqlparser` crate's Oracle dialect parses the statements; the evaluator implements what they
//! use with Oracle's semantics, and refuses the rest (ORA-00900) so a new statement shape fails a
//! test until the model evaluates it.
//!
//! Every view and its columns are written down once, in [`views`], with the section of the
//! Oracle Database Reference 19c they follow.

mod compiled;
mod datum;
mod door;
mod engine;
mod functions;
mod operators;
mod scope;
mod statement;
mod views;

#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod tests;

pub use datum::Datum;
pub use door::{SimulatorPool, SimulatorSession};
pub use statement::{Statement, parse};
pub use views::VIEWS;

use jiff::civil;

use crate::source::SourceError;

/// An Oracle error as the server reports it: `ORA-00904: "X": invalid identifier`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ORA-{code:05}: {message}")]
pub struct OraError {
    pub code: i32,
    pub message: String,
}

impl OraError {
    pub fn new(code: i32, message: &str) -> Self {
        Self {
            code,
            message: message.to_owned(),
        }
    }

    pub fn invalid_identifier(name: &str) -> Self {
        Self::new(904, &format!("\"{name}\": invalid identifier"))
    }

    /// A statement, or part of one, the model does not evaluate: ORA-00900 with what it was, so
    /// a new statement shape fails its test until the model learns it.
    pub fn invalid_sql(what: &str) -> Self {
        Self::new(
            900,
            &format!("invalid SQL statement (the model does not evaluate {what})"),
        )
    }

    /// A simulator error as the ORA- error Oracle raises in its place.
    pub(super) fn of(error: &SourceError) -> Self {
        let message = error.to_string();
        let code = message
            .find("ORA-")
            .and_then(|at| message.get(at + 4..at + 9))
            .and_then(|digits| digits.parse().ok());
        match (error, code) {
            (SourceError::RedoMissing { .. }, _) => Self::new(1291, "missing logfile"),
            (
                SourceError::Database {
                    code: Some(code),
                    message,
                    ..
                },
                _,
            ) => Self::new(
                code.trim_start_matches("ORA-").parse().unwrap_or(600),
                message
                    .split_once(": ")
                    .map_or(message.as_str(), |(_, text)| text),
            ),
            (_, Some(code)) => Self::new(
                code,
                message
                    .split_once(&format!("ORA-{code:05}: "))
                    .map_or(message.as_str(), |(_, t)| t),
            ),
            _ => Self::new(600, &message),
        }
    }
}

/// Rows with named columns: a view, a table, or a query's result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Relation {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Datum>>,
}

/// What the evaluator asks of the database a statement runs in.
pub trait Database {
    /// A view or table as the session sees it; `as_of_scn` for `AS OF SCN` reads. Unknown or
    /// not granted: ORA-00942.
    fn relation(
        &mut self,
        owner: Option<&str>,
        name: &str,
        as_of_scn: Option<u64>,
    ) -> Result<Relation, OraError>;
    /// `USER`.
    fn user(&self) -> String;
    /// The database host's clock in the host's time zone (`SYSDATE`, `SYSTIMESTAMP`).
    fn now(&self) -> jiff::Zoned;
    /// `DBTIMEZONE`: the database time zone as set, an offset or a region name.
    fn dbtimezone(&self) -> String;
    /// `SYS_CONTEXT('USERENV', parameter)`.
    fn sys_context(&self, parameter: &str) -> Result<Datum, OraError>;
    /// `SCN_TO_TIMESTAMP`; ORA-08181 outside the retained mapping.
    fn scn_to_timestamp(&self, scn: u64) -> Result<civil::DateTime, OraError>;
}
