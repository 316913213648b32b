//! The journal's record format: chunk keys, chunk values and the JSON form of a [`LogMinerRow`].
//!
//! Key (JSON, field order fixed so the same chunk always has the same key bytes):
//! `{"capture":"sales/orders","container":"SALESPDB","xid":"0A000B0057030000","chunk":3,"generation":7}`
//! (`container` is null outside a container database).
//!
//! Value (JSON): the key's fields, `format`, an optional `cut_scn` and the chunk's `rows`:
//! `{"format":1,"capture":..,"container":..,"xid":..,"chunk":3,"generation":7,"cut_scn":2146790,"rows":[{..},..]}`.
//! `cut_scn` is written on the first chunk after a restart rebuilt the transaction: rows of
//! earlier chunks at or above it were dropped at that rebuild and mined again, so a later rebuild
//! drops them too instead of holding them twice.
//!
//! A row is `V$LOGMNR_CONTENTS` as plain JSON, lower-case column names, nulls omitted:
//! `{"scn":..,"start_scn":..,"commit_scn":..,"timestamp":"2024-01-02T03:04:05","xid":"..",
//! "operation_code":1,"rollback":false,"row_id":"..","rs_id":" 0x000007.000228b7.0010 ",
//! "ssn":0,"csf":false,"seg_owner":"APP","table_name":"ORDERS","username":"APP","session":12,
//! "serial":3456,"thread":1,"info":"..","status":0,"sql_redo":"..","sql_undo":"..",
//! "src_con_name":"SALESPDB","con_id":3,"object_id":74103}` (`object_id` is `DATA_OBJ#`, absent
//! in journals written before it was read).
//!
//! Reading accepts keys and values with or without Kafka Connect's JSON envelope
//! (`{"schema":..,"payload":..}`), so a journal written by a worker's JsonConverter in either mode
//! reads back.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::source::{LogMinerRow, OperationCode, Xid};

/// The chunk value format this build writes and the newest it reads.
pub const JOURNAL_FORMAT: u32 = 1;

/// A chunk's identity: its record key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChunkKey {
    pub capture: String,
    pub container: Option<String>,
    /// 16 upper-case hex digits.
    pub xid: String,
    pub chunk: u32,
    pub generation: u64,
}

impl ChunkKey {
    /// The key's JSON text.
    pub fn encode(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Reads a key, with or without the Connect envelope.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        decode_enveloped(bytes)
    }
}

/// A chunk value's fields besides `rows`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkHeader {
    pub format: u32,
    #[serde(flatten)]
    pub key: ChunkKey,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_scn: Option<u64>,
}

/// A decoded chunk value.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ChunkValue {
    #[serde(flatten)]
    pub header: ChunkHeader,
    pub rows: Vec<RowJson<'static>>,
}

impl ChunkValue {
    /// Reads a value, with or without the Connect envelope.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let value: ChunkValue = decode_enveloped(bytes)?;
        if value.header.format > JOURNAL_FORMAT {
            return Err(format!(
                "journal format {} is newer than this redoline reads ({JOURNAL_FORMAT})",
                value.header.format
            ));
        }
        Ok(value)
    }
}

/// Writes a chunk value from its header and rows already in JSON (each row is serialised once,
/// when the chunk is sized).
pub fn encode_chunk(header: &ChunkHeader, rows: &[String]) -> Result<String, serde_json::Error> {
    let head = serde_json::to_string(header)?;
    // A struct always serialises as an object: `{...}`.
    let open = head.strip_suffix('}').unwrap_or(&head);
    let size = open.len() + rows.iter().map(|r| r.len() + 1).sum::<usize>() + 12;
    let mut out = String::with_capacity(size);
    out.push_str(open);
    out.push_str(",\"rows\":[");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(row);
    }
    out.push_str("]}");
    Ok(out)
}

/// Deserialises JSON that may be wrapped in `{"schema":..,"payload":..}`.
fn decode_enveloped<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let inner = match value {
        Value::Object(mut object)
            if object.len() == 2
                && object.contains_key("schema")
                && object.contains_key("payload") =>
        {
            object.remove("payload").unwrap_or(Value::Null)
        }
        other => other,
    };
    serde_json::from_value(inner).map_err(|e| e.to_string())
}

/// [`LogMinerRow`] as JSON (see the module docs). Borrowing when written, owned when read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowJson<'a> {
    pub scn: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_scn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_scn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_timestamp: Option<String>,
    pub xid: String,
    pub operation_code: u16,
    pub rollback: bool,
    pub row_id: Cow<'a, str>,
    pub rs_id: Cow<'a, str>,
    pub ssn: u64,
    pub csf: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seg_owner: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_name: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u32>,
    pub thread: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Cow<'a, str>>,
    pub status: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql_redo: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql_undo: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_con_name: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub con_id: Option<u32>,
    /// `DATA_OBJ#`; absent in journals written before the capture read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<u64>,
}

impl<'a> From<&'a LogMinerRow> for RowJson<'a> {
    fn from(row: &'a LogMinerRow) -> Self {
        // This literal names every JSON field and `into_row`'s every row field, so a new column
        // on either side does not compile until the other carries it too.
        let text = |s: &'a Option<Arc<str>>| s.as_deref().map(Cow::Borrowed);
        RowJson {
            scn: row.scn,
            start_scn: row.start_scn,
            commit_scn: row.commit_scn,
            timestamp: row.timestamp.map(|t| t.to_string()),
            commit_timestamp: row.commit_timestamp.map(|t| t.to_string()),
            xid: row.xid.to_upper_hex(),
            operation_code: row.operation.code(),
            rollback: row.rollback,
            row_id: Cow::Borrowed(&row.row_id),
            rs_id: Cow::Borrowed(&row.rs_id),
            ssn: row.ssn,
            csf: row.csf,
            seg_owner: text(&row.seg_owner),
            table_name: text(&row.table_name),
            username: text(&row.username),
            session: row.session,
            serial: row.serial,
            thread: row.thread,
            info: text(&row.info),
            status: row.status,
            sql_redo: row.sql_redo.as_deref().map(Cow::Borrowed),
            sql_undo: row.sql_undo.as_deref().map(Cow::Borrowed),
            src_con_name: text(&row.src_con_name),
            con_id: row.con_id,
            object_id: row.object_id,
        }
    }
}

impl RowJson<'_> {
    /// Back to a row; an unreadable xid or timestamp is an error naming it.
    pub fn into_row(self) -> Result<LogMinerRow, String> {
        let scn = self.scn;
        let time = |t: Option<String>| -> Result<_, String> {
            t.map(|text| {
                text.parse::<jiff::civil::DateTime>()
                    .map_err(|e| format!("row at SCN {scn}: timestamp {text:?}: {e}"))
            })
            .transpose()
        };
        let shared = |s: Option<Cow<'_, str>>| s.map(|s| Arc::<str>::from(s.as_ref()));
        Ok(LogMinerRow {
            scn,
            start_scn: self.start_scn,
            commit_scn: self.commit_scn,
            timestamp: time(self.timestamp)?,
            commit_timestamp: time(self.commit_timestamp)?,
            xid: Xid::from_hex(&self.xid).map_err(|e| format!("row at SCN {scn}: {e}"))?,
            operation: OperationCode::from_code(self.operation_code),
            rollback: self.rollback,
            row_id: Arc::from(self.row_id.as_ref()),
            rs_id: Arc::from(self.rs_id.as_ref()),
            ssn: self.ssn,
            csf: self.csf,
            seg_owner: shared(self.seg_owner),
            table_name: shared(self.table_name),
            username: shared(self.username),
            session: self.session,
            serial: self.serial,
            thread: self.thread,
            info: shared(self.info),
            status: self.status,
            sql_redo: self.sql_redo.map(Cow::into_owned),
            sql_undo: self.sql_undo.map(Cow::into_owned),
            src_con_name: shared(self.src_con_name),
            con_id: self.con_id,
            object_id: self.object_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil;
    use proptest::prelude::*;

    use crate::source::fixtures;

    fn round_trip(row: &LogMinerRow) -> LogMinerRow {
        let text = serde_json::to_string(&RowJson::from(row)).unwrap();
        serde_json::from_str::<RowJson<'static>>(&text)
            .unwrap()
            .into_row()
            .unwrap()
    }

    proptest! {
        #[test]
        fn rows_round_trip_exactly(row in fixtures::arbitrary::row()) {
            prop_assert_eq!(round_trip(&row), row);
        }
    }

    #[test]
    fn a_full_row_round_trips_and_reads_as_documented() {
        let row = LogMinerRow {
            scn: 2_146_947,
            start_scn: Some(2_146_900),
            commit_scn: None,
            timestamp: Some(civil::date(2024, 1, 2).at(3, 4, 5, 500)),
            commit_timestamp: None,
            xid: Xid::from_hex("07000C00F3010000").unwrap(),
            operation: OperationCode::Update,
            rollback: true,
            row_id: Arc::from("AAASQ2AAEAAAACFAAA"),
            rs_id: Arc::from(" 0x000007.000228b7.0010 "),
            ssn: 3,
            csf: true,
            seg_owner: Some(Arc::from("APP")),
            table_name: Some(Arc::from("ORDERS")),
            username: Some(Arc::from("APP")),
            session: Some(12),
            serial: Some(3456),
            thread: 2,
            info: Some(Arc::from("info")),
            status: 0,
            sql_redo: Some("update \"APP\".\"ORDERS\" set \"STATUS\" = 'paid'".into()),
            sql_undo: Some("update ...".into()),
            src_con_name: Some(Arc::from("SALESPDB")),
            con_id: Some(3),
            object_id: Some(74_103),
        };
        assert_eq!(round_trip(&row), row);
        let json = serde_json::to_value(RowJson::from(&row)).unwrap();
        assert_eq!(json["timestamp"], "2024-01-02T03:04:05.0000005");
        assert_eq!(json["operation_code"], 3);
        assert_eq!(json["xid"], "07000C00F3010000");
        assert!(json.get("commit_scn").is_none());
    }

    #[test]
    fn chunks_read_with_and_without_the_connect_envelope() {
        let key = ChunkKey {
            capture: "sales/orders".into(),
            container: None,
            xid: "07000C00F3010000".into(),
            chunk: 2,
            generation: 5,
        };
        let header = ChunkHeader {
            format: JOURNAL_FORMAT,
            key: key.clone(),
            cut_scn: Some(10),
        };
        let row = r#"{"scn":7,"xid":"07000C00F3010000","operation_code":1,"rollback":false,"row_id":"r","rs_id":"s","ssn":0,"csf":false,"thread":1,"status":0}"#;
        let value = encode_chunk(&header, &[row.to_owned(), row.to_owned()]).unwrap();
        let bare = ChunkValue::decode(value.as_bytes()).unwrap();
        assert_eq!(bare.header, header);
        assert_eq!(bare.rows.len(), 2);
        let wrapped = format!(r#"{{"schema":{{"type":"struct"}},"payload":{value}}}"#);
        assert_eq!(ChunkValue::decode(wrapped.as_bytes()).unwrap(), bare);

        let key_text = key.encode().unwrap();
        assert_eq!(
            key_text,
            r#"{"capture":"sales/orders","container":null,"xid":"07000C00F3010000","chunk":2,"generation":5}"#
        );
        let wrapped_key = format!(r#"{{"schema":null,"payload":{key_text}}}"#);
        assert_eq!(ChunkKey::decode(wrapped_key.as_bytes()).unwrap(), key);
        assert!(ChunkKey::decode(b"garbage").is_err());
        let newer = value.replacen("\"format\":1", "\"format\":2", 1);
        assert!(ChunkValue::decode(newer.as_bytes()).is_err());
    }
}
