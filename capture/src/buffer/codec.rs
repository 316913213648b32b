//! The binary form of one buffered [`LogMinerRow`]: the payload of a spill frame.
//!
//! Spill files live only as long as the process (they are removed at start), so the format needs
//! no evolution story beyond the version in the file header (`spill.rs`). It is a flat sequence of
//! fields in the struct's declaration order, little-endian, without padding:
//!
//! | type | bytes |
//! |---|---|
//! | `u8`, `bool` | 1 (`bool` is 0 or 1; anything else is refused) |
//! | `u16`, `u32`, `u64` | 2, 4, 8, little-endian |
//! | text | `u32` byte length, then UTF-8 bytes |
//! | `Option<T>` | tag `0` (none) or `1` followed by `T` |
//! | date-time | year `i16`, month, day, hour, minute, second (`i8` each), nanosecond `i32` |
//! | `Xid` | its 8 raw bytes |
//! | operation | `OPERATION_CODE` as `u16` ([`OperationCode::code`]) |
//!
//! Decoding never panics and never trusts a length: a length past the end of the payload, text
//! that is not UTF-8, an impossible date or bytes left over are a [`CodecError`] naming the byte
//! offset. A frame whose CRC matches but whose payload does not decode is corruption all the same
//! (CDC-3002), so the caller treats both alike.

use std::sync::Arc;

use jiff::civil;

use crate::source::{LogMinerRow, OperationCode, Xid};

/// A payload that is not a well-formed row.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("undecodable spilled row at payload byte {offset}: {what}")]
pub struct CodecError {
    pub offset: usize,
    pub what: &'static str,
}

/// Appends the encoding of `row` to `out`.
pub fn encode_row(row: &LogMinerRow, out: &mut Vec<u8>) {
    // Destructured without `..`: a new column must be given a place in the format.
    let LogMinerRow {
        scn,
        start_scn,
        commit_scn,
        timestamp,
        commit_timestamp,
        xid,
        operation,
        rollback,
        row_id,
        rs_id,
        ssn,
        csf,
        seg_owner,
        table_name,
        username,
        session,
        serial,
        thread,
        info,
        status,
        sql_redo,
        sql_undo,
        src_con_name,
        con_id,
        object_id,
    } = row;
    out.extend_from_slice(&scn.to_le_bytes());
    put_option(out, start_scn.as_ref(), |out, v| put_u64(out, *v));
    put_option(out, commit_scn.as_ref(), |out, v| put_u64(out, *v));
    put_option(out, timestamp.as_ref(), put_date_time);
    put_option(out, commit_timestamp.as_ref(), put_date_time);
    out.extend_from_slice(&xid.0);
    out.extend_from_slice(&operation.code().to_le_bytes());
    out.push(u8::from(*rollback));
    put_text(out, row_id);
    put_text(out, rs_id);
    put_u64(out, *ssn);
    out.push(u8::from(*csf));
    put_option(out, seg_owner.as_deref(), put_text);
    put_option(out, table_name.as_deref(), put_text);
    put_option(out, username.as_deref(), put_text);
    put_option(out, session.as_ref(), |out, v| put_u32(out, *v));
    put_option(out, serial.as_ref(), |out, v| put_u32(out, *v));
    out.extend_from_slice(&thread.to_le_bytes());
    put_option(out, info.as_deref(), put_text);
    put_u32(out, *status);
    put_option(out, sql_redo.as_deref(), put_text);
    put_option(out, sql_undo.as_deref(), put_text);
    put_option(out, src_con_name.as_deref(), put_text);
    put_option(out, con_id.as_ref(), |out, v| put_u32(out, *v));
    put_option(out, object_id.as_ref(), |out, v| put_u64(out, *v));
}

/// Decodes one row from exactly `payload`.
pub fn decode_row(payload: &[u8]) -> Result<LogMinerRow, CodecError> {
    RowDecoder::default().decode(payload)
}

/// Decodes rows one after the other, sharing the text of owner, table, user, `INFO` and
/// container name with the previous row when it is the same: as the source shares them, and
/// without an allocation per row and column.
#[derive(Debug, Default)]
pub struct RowDecoder {
    recent: [Option<Arc<str>>; SHARED_COLUMNS],
}

const SHARED_COLUMNS: usize = 5;
// Indexes into `RowDecoder::recent`.
const OWNER: usize = 0;
const TABLE: usize = 1;
const USER: usize = 2;
const INFO: usize = 3;
const CONTAINER: usize = 4;

impl RowDecoder {
    pub fn decode(&mut self, payload: &[u8]) -> Result<LogMinerRow, CodecError> {
        let mut r = Reader {
            bytes: payload,
            at: 0,
        };
        let row = LogMinerRow {
            scn: r.u64()?,
            start_scn: r.option(Reader::u64)?,
            commit_scn: r.option(Reader::u64)?,
            timestamp: r.option(Reader::date_time)?,
            commit_timestamp: r.option(Reader::date_time)?,
            xid: Xid(r.array()?),
            operation: OperationCode::from_code(u16::from_le_bytes(r.array()?)),
            rollback: r.bool()?,
            row_id: r.str().map(Arc::from)?,
            rs_id: r.str().map(Arc::from)?,
            ssn: r.u64()?,
            csf: r.bool()?,
            seg_owner: r.option(|r| self.shared(r, OWNER))?,
            table_name: r.option(|r| self.shared(r, TABLE))?,
            username: r.option(|r| self.shared(r, USER))?,
            session: r.option(Reader::u32)?,
            serial: r.option(Reader::u32)?,
            thread: u16::from_le_bytes(r.array()?),
            info: r.option(|r| self.shared(r, INFO))?,
            status: r.u32()?,
            sql_redo: r.option(Reader::text)?,
            sql_undo: r.option(Reader::text)?,
            src_con_name: r.option(|r| self.shared(r, CONTAINER))?,
            con_id: r.option(Reader::u32)?,
            object_id: r.option(Reader::u64)?,
        };
        if r.at != payload.len() {
            return Err(r.error("bytes left after the last column"));
        }
        Ok(row)
    }

    fn shared(&mut self, r: &mut Reader<'_>, column: usize) -> Result<Arc<str>, CodecError> {
        let text = r.str()?;
        let recent = &mut self.recent[column];
        match recent {
            Some(shared) if **shared == *text => Ok(shared.clone()),
            _ => Ok(recent.insert(Arc::from(text)).clone()),
        }
    }
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    // A LogMiner column holds at most 4000 bytes (32 KiB for extended strings): far below u32.
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    put_u32(out, len);
    out.extend_from_slice(text.as_bytes());
}

fn put_date_time(out: &mut Vec<u8>, value: &civil::DateTime) {
    out.extend_from_slice(&value.year().to_le_bytes());
    for part in [
        value.month(),
        value.day(),
        value.hour(),
        value.minute(),
        value.second(),
    ] {
        out.extend_from_slice(&part.to_le_bytes());
    }
    out.extend_from_slice(&value.subsec_nanosecond().to_le_bytes());
}

fn put_option<T: ?Sized>(out: &mut Vec<u8>, value: Option<&T>, put: impl Fn(&mut Vec<u8>, &T)) {
    match value {
        None => out.push(0),
        Some(value) => {
            out.push(1);
            put(out, value);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &'static str) -> CodecError {
        CodecError {
            offset: self.at,
            what,
        }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], CodecError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| self.error("a field runs past the end of the payload"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn i8(&mut self) -> Result<i8, CodecError> {
        Ok(i8::from_le_bytes(self.array()?))
    }

    fn bool(&mut self) -> Result<bool, CodecError> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.error("a flag is neither 0 nor 1")),
        }
    }

    fn str(&mut self) -> Result<&'a str, CodecError> {
        let len = usize::try_from(self.u32()?).map_err(|_| self.error("text too long"))?;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes).map_err(|_| self.error("text is not UTF-8"))
    }

    fn text(&mut self) -> Result<String, CodecError> {
        self.str().map(str::to_owned)
    }

    fn date_time(&mut self) -> Result<civil::DateTime, CodecError> {
        let year = i16::from_le_bytes(self.array()?);
        let (month, day, hour, minute, second) =
            (self.i8()?, self.i8()?, self.i8()?, self.i8()?, self.i8()?);
        let nanosecond = i32::from_le_bytes(self.array()?);
        civil::DateTime::new(year, month, day, hour, minute, second, nanosecond)
            .map_err(|_| self.error("an impossible date-time"))
    }

    fn option<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, CodecError>,
    ) -> Result<Option<T>, CodecError> {
        match self.take(1)?[0] {
            0 => Ok(None),
            1 => read(self).map(Some),
            _ => Err(self.error("an optional column's tag is neither 0 nor 1")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::source::fixtures;

    const ALL_CODES: [u16; 20] = [
        0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 25, 29, 34, 36, 68, 70, 71, 255, 27, 65535,
    ];

    fn full_row() -> LogMinerRow {
        LogMinerRow {
            scn: u64::MAX,
            start_scn: Some(0),
            commit_scn: Some(u64::MAX - 1),
            timestamp: Some(civil::date(2026, 11, 29).at(10, 11, 12, 123_456_789)),
            commit_timestamp: Some(civil::DateTime::MIN),
            xid: Xid::from_parts(3, 14, u32::MAX),
            operation: OperationCode::Update,
            rollback: true,
            row_id: Arc::from("AAAR9JAAHAAAACFAAB"),
            rs_id: Arc::from(" 0x000007.000228b9.0010 "),
            ssn: u64::MAX,
            csf: true,
            seg_owner: Some(Arc::from("APP")),
            table_name: Some(Arc::from("ORDERS")),
            username: Some(Arc::from("")),
            session: Some(u32::MAX),
            serial: Some(0),
            thread: u16::MAX,
            info: Some(Arc::from("USER DDL (PlSql=0 RecDep=0)")),
            status: 1291,
            sql_redo: Some("update \"APP\".\"ORDERS\" set \"N\" = 'é€😀';".into()),
            sql_undo: Some(String::new()),
            src_con_name: Some(Arc::from("PDB1")),
            con_id: Some(3),
            object_id: Some(74_103),
        }
    }

    fn empty_row() -> LogMinerRow {
        LogMinerRow {
            scn: 0,
            start_scn: None,
            commit_scn: None,
            timestamp: None,
            commit_timestamp: None,
            xid: Xid([0; 8]),
            operation: OperationCode::Internal,
            rollback: false,
            row_id: Arc::from(""),
            rs_id: Arc::from(""),
            ssn: 0,
            csf: false,
            seg_owner: None,
            table_name: None,
            username: None,
            session: None,
            serial: None,
            thread: 0,
            info: None,
            status: 0,
            sql_redo: None,
            sql_undo: None,
            src_con_name: None,
            con_id: None,
            object_id: None,
        }
    }

    fn round_trip(row: &LogMinerRow) -> LogMinerRow {
        let mut bytes = Vec::new();
        encode_row(row, &mut bytes);
        decode_row(&bytes).unwrap()
    }

    #[test]
    fn every_column_set_and_every_column_empty_round_trip() {
        for row in [full_row(), empty_row()] {
            assert_eq!(round_trip(&row), row);
        }
    }

    #[test]
    fn every_operation_code_round_trips() {
        for code in ALL_CODES {
            let row = LogMinerRow {
                operation: OperationCode::from_code(code),
                ..full_row()
            };
            assert_eq!(round_trip(&row).operation.code(), code);
        }
    }

    #[test]
    fn extreme_date_times_round_trip() {
        for timestamp in [civil::DateTime::MIN, civil::DateTime::MAX] {
            let row = LogMinerRow {
                timestamp: Some(timestamp),
                ..empty_row()
            };
            assert_eq!(round_trip(&row), row);
        }
    }

    #[test]
    fn a_decoder_shares_repeated_text_like_the_source_does() {
        let mut decoder = RowDecoder::default();
        let mut bytes = Vec::new();
        encode_row(&full_row(), &mut bytes);
        let first = decoder.decode(&bytes).unwrap();
        let second = decoder.decode(&bytes).unwrap();
        assert_eq!(first, second);
        let shared = |a: &Option<Arc<str>>, b: &Option<Arc<str>>| {
            Arc::ptr_eq(a.as_ref().unwrap(), b.as_ref().unwrap())
        };
        assert!(shared(&first.seg_owner, &second.seg_owner));
        assert!(shared(&first.table_name, &second.table_name));
        assert!(shared(&first.username, &second.username));
        assert!(shared(&first.info, &second.info));
        assert!(shared(&first.src_con_name, &second.src_con_name));
        // Per-row text is never shared, and a different value replaces the shared one.
        assert!(!Arc::ptr_eq(&first.row_id, &second.row_id));
        let other = LogMinerRow {
            table_name: Some(Arc::from("LINES")),
            ..full_row()
        };
        let mut other_bytes = Vec::new();
        encode_row(&other, &mut other_bytes);
        assert_eq!(decoder.decode(&other_bytes).unwrap(), other);
        assert_eq!(decoder.decode(&bytes).unwrap(), full_row());
    }

    #[test]
    fn every_truncation_is_refused() {
        let mut bytes = Vec::new();
        encode_row(&full_row(), &mut bytes);
        for len in 0..bytes.len() {
            assert!(decode_row(&bytes[..len]).is_err(), "prefix of {len} bytes");
        }
        bytes.push(0);
        assert_eq!(
            decode_row(&bytes).unwrap_err().what,
            "bytes left after the last column"
        );
    }

    #[test]
    fn bad_flags_text_and_dates_are_refused_with_their_offset() {
        let mut bytes = Vec::new();
        encode_row(&empty_row(), &mut bytes);
        // scn(8) start(1) commit(1) timestamp(1) commit_ts(1) xid(8) op(2) = 22: `rollback`.
        let mut bad_flag = bytes.clone();
        bad_flag[22] = 2;
        assert_eq!(
            decode_row(&bad_flag).unwrap_err(),
            CodecError {
                offset: 23,
                what: "a flag is neither 0 nor 1"
            }
        );
        let mut bad_tag = bytes.clone();
        bad_tag[8] = 7;
        assert!(decode_row(&bad_tag).is_err());

        let mut text = empty_row();
        text.row_id = Arc::from("ab");
        let mut bad_utf8 = Vec::new();
        encode_row(&text, &mut bad_utf8);
        bad_utf8[27] = 0xff; // first byte of the row id's text
        assert_eq!(decode_row(&bad_utf8).unwrap_err().what, "text is not UTF-8");

        let mut dated = empty_row();
        dated.timestamp = Some(civil::date(2024, 2, 29).at(0, 0, 0, 0));
        let mut bad_date = Vec::new();
        encode_row(&dated, &mut bad_date);
        bad_date[14] = 30; // the day (after year and month): 30 February
        assert_eq!(
            decode_row(&bad_date).unwrap_err().what,
            "an impossible date-time"
        );
    }

    proptest! {
        #[test]
        fn any_row_round_trips(row in fixtures::arbitrary::row()) {
            prop_assert_eq!(round_trip(&row), row);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            // Whatever decodes encodes back to something that decodes to the same row (LOB_ERASE
            // 28 reads as 29, so the bytes themselves may differ).
            if let Ok(row) = decode_row(&bytes) {
                prop_assert_eq!(round_trip(&row), row);
            }
        }
    }
}
