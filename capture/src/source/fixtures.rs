//! Rows for tests and benches, built one way rather than once per test module: a row of
//! `APP.ORDERS` in container `PDB1` ([`CON_ID`]), by user `APP` in session 100 serial 7 on
//! thread 1, its RS_ID derived from its SCN. A test sets what it is about with struct update
//! syntax (`LogMinerRow { rollback: true, ..fixtures::row(..) }`).

use std::sync::Arc;

use super::{LogMinerRow, OperationCode, RedoThread, ThreadEnabled, Xid};

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

/// An open, public redo thread enabled at `enable_scn`, its checkpoint and last redo at SCN 1000.
pub fn redo_thread(number: u16, enable_scn: u64) -> RedoThread {
    RedoThread {
        thread: number,
        open: true,
        enabled: ThreadEnabled::Public,
        checkpoint_scn: 1_000,
        last_redo_scn: 1_000,
        sequence: 0,
        enable_scn,
    }
}

/// Proptest strategies for rows, shared by the round-trip properties of the row codecs (spill
/// and journal).
#[cfg(test)]
pub mod arbitrary {
    use std::sync::Arc;

    use jiff::civil;
    use proptest::prelude::*;

    use crate::source::{LogMinerRow, OperationCode, Xid};

    fn text() -> impl Strategy<Value = Option<Arc<str>>> {
        proptest::option::of(".{0,12}".prop_map(Arc::from))
    }

    fn time() -> impl Strategy<Value = Option<civil::DateTime>> {
        proptest::option::of(
            (
                1i16..=9999,
                1i8..=12,
                1i8..=28,
                0i8..24,
                0i8..60,
                0i8..60,
                0i32..1_000_000_000,
            )
                .prop_map(|(y, mo, d, h, mi, s, ns)| civil::date(y, mo, d).at(h, mi, s, ns)),
        )
    }

    fn operation() -> impl Strategy<Value = OperationCode> {
        prop_oneof![
            (0u16..=300).prop_map(OperationCode::from_code),
            Just(OperationCode::LobErase),
            Just(OperationCode::Other(65535)),
        ]
    }

    prop_compose! {
        /// Any row the source can produce.
        pub fn row()(
            scn in any::<u64>(), start_scn in any::<Option<u64>>(), commit_scn in any::<Option<u64>>(),
            times in (time(), time()), xid in any::<[u8; 8]>(), operation in operation(),
            flags in any::<(bool, bool)>(), row_id in ".{0,18}", rs_id in ".{0,26}", ssn in any::<u64>(),
            names in (text(), text(), text(), text(), text()),
            session in any::<(Option<u32>, Option<u32>)>(), thread in any::<u16>(), status in any::<u32>(),
            sql in (proptest::option::of(".{0,40}"), proptest::option::of(".{0,40}")),
            con_id in any::<Option<u32>>(), object_id in any::<Option<u64>>(),
        ) -> LogMinerRow {
            LogMinerRow {
                scn, start_scn, commit_scn,
                timestamp: times.0, commit_timestamp: times.1,
                xid: Xid(xid), operation, rollback: flags.0,
                row_id: Arc::from(row_id), rs_id: Arc::from(rs_id), ssn, csf: flags.1,
                seg_owner: names.0, table_name: names.1, username: names.2,
                session: session.0, serial: session.1, thread,
                info: names.3, status, sql_redo: sql.0, sql_undo: sql.1,
                src_con_name: names.4, con_id, object_id,
            }
        }
    }
}
