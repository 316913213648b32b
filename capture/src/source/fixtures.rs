//! Rows for tests and benches, built one way rather than once per test module: a row of
//! `APP.ORDERS` in container `PDB1` ([`CON_ID`]), by user `APP` in session 100 serial 7 on
//! thread 1, its RS_ID derived from its SCN. A test sets what it is about with struct update
//! syntax (`LogMinerRow { rollback: true, ..fixtures::row(..) }`).

use std::sync::Arc;

use super::{LogMinerRow, OperationCode, Xid};

/// The container id of every fixture row.
pub const CON_ID: u32 = 3;

/// A row of transaction `xid` at `scn`, without SQL.
pub fn row(xid: Xid, operation: OperationCode, scn: u64) -> LogMinerRow {
    LogMinerRow {
        scn,
        xid,
        operation,
        row_id: Arc::from("AAAR9JAAHAAAACFAAA"),
        rs_id: Arc::from(format!(" 0x000007.{scn:08x}.0010 ")),
        seg_owner: Some(Arc::from("APP")),
        table_name: Some(Arc::from("ORDERS")),
        username: Some(Arc::from("APP")),
        session: Some(100),
        serial: Some(7),
        thread: 1,
        sql_redo: None,
        src_con_name: Some(Arc::from("PDB1")),
        con_id: Some(CON_ID),
        ..Default::default()
    }
}

/// The INSERT of transaction `xid` at `scn` of the row whose `ID` is `scn`.
pub fn insert(xid: Xid, scn: u64) -> LogMinerRow {
    LogMinerRow {
        sql_redo: Some(format!(
            "insert into \"APP\".\"ORDERS\"(\"ID\") values ('{scn}');"
        )),
        ..row(xid, OperationCode::Insert, scn)
    }
}
