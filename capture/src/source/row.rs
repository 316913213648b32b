//! One row of `V$LOGMNR_CONTENTS`, as plain data.
//!
//! The row is what LogMiner wrote, not an interpretation of it: CSF continuation rows stay separate
//! (the consumer joins them), undo rows keep `rollback = true`, and every column the capture reads
//! is here so the layers above are tested without Oracle. Both the real client and the simulator
//! produce exactly this struct.

use std::fmt;
use std::sync::Arc;

use jiff::civil;

/// `OPERATION_CODE`: what a row records. Codes follow `logminer.md` §1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OperationCode {
    #[default]
    Internal,
    Insert,
    Delete,
    Update,
    Ddl,
    /// Transaction start (`set transaction read write;`).
    Start,
    Commit,
    SelectLobLocator,
    LobWrite,
    LobTrim,
    SelectForUpdate,
    /// LOB_ERASE: Oracle's documentation says 28, real databases write 29 (Debezium since 2021).
    /// Both read as this variant; the simulator writes 29.
    LobErase,
    /// A gap in the redo (STATUS 1291, INFO `Missing SCN lo - hi`).
    MissingScn,
    /// Full transaction rollback.
    Rollback,
    XmlDocBegin,
    XmlDocWrite,
    XmlDocEnd,
    /// 32K_BEGIN: a VARCHAR2 / NVARCHAR2 / RAW value over 4000 bytes (`MAX_STRING_SIZE =
    /// EXTENDED`) starts; its pieces follow as [`Self::ExtendedStringWrite`] rows (Debezium's
    /// `EventType.EXTENDED_STRING_BEGIN`, DBZ-8039).
    ExtendedStringBegin,
    /// 32K_WRITE: the next piece of the value.
    ExtendedStringWrite,
    /// 32K_END: the value is complete.
    ExtendedStringEnd,
    /// A change LogMiner cannot render.
    Unsupported,
    /// Any code not listed (GoldenGate markers, ...), kept verbatim.
    Other(u16),
}

impl OperationCode {
    /// Maps `OPERATION_CODE`.
    pub fn from_code(code: u16) -> Self {
        match code {
            0 => Self::Internal,
            1 => Self::Insert,
            2 => Self::Delete,
            3 => Self::Update,
            5 => Self::Ddl,
            6 => Self::Start,
            7 => Self::Commit,
            9 => Self::SelectLobLocator,
            10 => Self::LobWrite,
            11 => Self::LobTrim,
            25 => Self::SelectForUpdate,
            28 | 29 => Self::LobErase,
            34 => Self::MissingScn,
            36 => Self::Rollback,
            68 => Self::XmlDocBegin,
            70 => Self::XmlDocWrite,
            71 => Self::XmlDocEnd,
            91 => Self::ExtendedStringBegin,
            92 => Self::ExtendedStringWrite,
            93 => Self::ExtendedStringEnd,
            255 => Self::Unsupported,
            other => Self::Other(other),
        }
    }

    /// The code LogMiner writes for this operation.
    pub fn code(self) -> u16 {
        match self {
            Self::Internal => 0,
            Self::Insert => 1,
            Self::Delete => 2,
            Self::Update => 3,
            Self::Ddl => 5,
            Self::Start => 6,
            Self::Commit => 7,
            Self::SelectLobLocator => 9,
            Self::LobWrite => 10,
            Self::LobTrim => 11,
            Self::SelectForUpdate => 25,
            Self::LobErase => 29,
            Self::MissingScn => 34,
            Self::Rollback => 36,
            Self::XmlDocBegin => 68,
            Self::XmlDocWrite => 70,
            Self::XmlDocEnd => 71,
            Self::ExtendedStringBegin => 91,
            Self::ExtendedStringWrite => 92,
            Self::ExtendedStringEnd => 93,
            Self::Unsupported => 255,
            Self::Other(code) => code,
        }
    }

    /// The `OPERATION` text LogMiner writes next to the code.
    pub fn name(self) -> &'static str {
        match self {
            Self::Internal => "INTERNAL",
            Self::Insert => "INSERT",
            Self::Delete => "DELETE",
            Self::Update => "UPDATE",
            Self::Ddl => "DDL",
            Self::Start => "START",
            Self::Commit => "COMMIT",
            Self::SelectLobLocator => "SEL_LOB_LOCATOR",
            Self::LobWrite => "LOB_WRITE",
            Self::LobTrim => "LOB_TRIM",
            Self::SelectForUpdate => "SELECT_FOR_UPDATE",
            Self::LobErase => "LOB_ERASE",
            Self::MissingScn => "MISSING_SCN",
            Self::Rollback => "ROLLBACK",
            Self::XmlDocBegin => "XML DOC BEGIN",
            Self::XmlDocWrite => "XML DOC WRITE",
            Self::XmlDocEnd => "XML DOC END",
            Self::ExtendedStringBegin => "32K_BEGIN",
            Self::ExtendedStringWrite => "32K_WRITE",
            Self::ExtendedStringEnd => "32K_END",
            Self::Unsupported => "UNSUPPORTED",
            Self::Other(_) => "UNKNOWN",
        }
    }

    /// Whether the row changes table data (and so belongs to a transaction's buffered changes).
    pub fn is_data_change(self) -> bool {
        matches!(
            self,
            Self::Insert
                | Self::Delete
                | Self::Update
                | Self::SelectLobLocator
                | Self::LobWrite
                | Self::LobTrim
                | Self::LobErase
                | Self::XmlDocBegin
                | Self::XmlDocWrite
                | Self::XmlDocEnd
                | Self::ExtendedStringBegin
                | Self::ExtendedStringWrite
                | Self::ExtendedStringEnd
                | Self::Ddl
                | Self::Unsupported
        )
    }
}

/// The SCN range of a MISSING_SCN row's `INFO` (`Missing SCN 100 - 200`, logminer.md §2).
pub fn missing_scn_range(info: &str) -> Option<(u64, u64)> {
    let range = info.trim().strip_prefix("Missing SCN")?;
    let (from, to) = range.split_once('-')?;
    Some((from.trim().parse().ok()?, to.trim().parse().ok()?))
}

/// `ROW_ID` of COMMIT rows and of INSERTs of rows with LOB columns (the real rowid follows later).
pub const PLACEHOLDER_ROW_ID: &str = "AAAAAAAAAAAAAAAAAA";
/// `ROW_ID` of DDL rows.
pub const DDL_ROW_ID: &str = "AAAAAAAAAAAAAAAAAB";
/// `XIDSQN` of an undo row whose original change was read in an earlier mining session.
pub const SEQUENCELESS_XIDSQN: u32 = u32::MAX;

/// The redo record address `RS_ID` names: log sequence, block and byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RedoAddress {
    pub sequence: u32,
    pub block: u32,
    pub offset: u16,
}

impl RedoAddress {
    /// Reads `RS_ID` text, with or without LogMiner's surrounding spaces (`' 0x000007.000228b7.0010 '`).
    pub fn parse(rs_id: &str) -> Option<Self> {
        let text = rs_id.trim().strip_prefix("0x")?;
        let mut parts = text.split('.');
        let sequence = u32::from_str_radix(parts.next()?, 16).ok()?;
        let block = u32::from_str_radix(parts.next()?, 16).ok()?;
        let offset = u16::from_str_radix(parts.next()?, 16).ok()?;
        parts.next().is_none().then_some(Self {
            sequence,
            block,
            offset,
        })
    }
}

impl fmt::Display for RedoAddress {
    /// LogMiner's exact `RS_ID` text, leading and trailing space included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            " 0x{:06x}.{:08x}.{:04x} ",
            self.sequence, self.block, self.offset
        )
    }
}

/// An Oracle transaction id: the 8 bytes of `V$LOGMNR_CONTENTS.XID` (USN, slot, sequence).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xid(pub [u8; 8]);

/// Text that is not a transaction id (16 hex digits, or `USN.SLOT.SQN`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("transaction id {0:?} is neither 16 hex digits nor USN.SLOT.SQN")]
pub struct XidError(pub String);

impl fmt::Display for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_upper_hex())
    }
}

/// Stored positions and ledgers write an XID as `RAWTOHEX` does (16 upper-case hex digits, as in
/// seed 001's `committed_xids`); either case reads back.
impl serde::Serialize for Xid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_upper_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Xid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Self::from_hex(&text).map_err(serde::de::Error::custom)
    }
}

impl Xid {
    /// Parses the 16 hex digits `RAWTOHEX(XID)` gives.
    pub fn from_hex(text: &str) -> Result<Self, XidError> {
        let bytes =
            crate::value::binary::decode_hex(text).map_err(|_| XidError(text.to_owned()))?;
        let array: [u8; 8] = bytes.try_into().map_err(|_| XidError(text.to_owned()))?;
        Ok(Self(array))
    }

    /// Upper-case hex, as Oracle's `RAWTOHEX` writes it (`07000C00F3010000`).
    pub fn to_upper_hex(&self) -> String {
        crate::value::binary::encode_hex(&self.0).to_ascii_uppercase()
    }

    /// Lower-case hex, as Debezium's LogMiner adapter writes `txId`.
    pub fn to_lower_hex(&self) -> String {
        crate::value::binary::encode_hex(&self.0)
    }

    /// Builds the RAW(8) from its parts, little-endian as LogMiner writes it on x86.
    pub fn from_parts(usn: u16, slot: u16, sequence: u32) -> Self {
        let mut bytes = [0u8; 8];
        bytes[0..2].copy_from_slice(&usn.to_le_bytes());
        bytes[2..4].copy_from_slice(&slot.to_le_bytes());
        bytes[4..8].copy_from_slice(&sequence.to_le_bytes());
        Self(bytes)
    }

    /// Undo segment number (`XIDUSN`).
    pub fn usn(&self) -> u16 {
        u16::from_le_bytes([self.0[0], self.0[1]])
    }

    /// Slot (`XIDSLT`).
    pub fn slot(&self) -> u16 {
        u16::from_le_bytes([self.0[2], self.0[3]])
    }

    /// Sequence (`XIDSQN`).
    pub fn sequence(&self) -> u32 {
        u32::from_le_bytes([self.0[4], self.0[5], self.0[6], self.0[7]])
    }

    /// LogMiner's all-zero id for some internal operations: it never owns changes.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 8]
    }

    /// An undo row for a change read in an earlier mining session carries `XIDSQN` 0xFFFFFFFF;
    /// it belongs to the open transaction with the same USN and slot.
    pub fn is_sequenceless(&self) -> bool {
        self.sequence() == SEQUENCELESS_XIDSQN
    }

    /// Whether `self` (possibly sequence-less) names the same undo slot as `other`.
    pub fn same_slot(&self, other: &Xid) -> bool {
        self.0[0..4] == other.0[0..4]
    }

    /// Oracle's human form `USN.SLOT.SQN` (`DBMS_TRANSACTION.LOCAL_TRANSACTION_ID`).
    pub fn to_decimal_parts(&self) -> String {
        format!("{}.{}.{}", self.usn(), self.slot(), self.sequence())
    }

    /// Reads `USN.SLOT.SQN`, as the client selects it from the numeric columns (`XIDUSN`,
    /// `XIDSLT`/`XIDSLOT`, `XIDSQN`): the RAW(8) `XID` is in the platform's byte order, big-endian
    /// on AIX, Solaris SPARC and HP-UX, so its bytes would decode to other parts there. The parts
    /// are stored in the little-endian layout whatever the platform, which is the `RAWTOHEX(XID)`
    /// text on Linux and Windows.
    pub fn from_decimal_parts(text: &str) -> Result<Self, XidError> {
        let invalid = || XidError(text.to_owned());
        let mut parts = text.split('.');
        let usn = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(invalid)?;
        let slot = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(invalid)?;
        let sequence = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(invalid)?;
        match parts.next() {
            None => Ok(Self::from_parts(usn, slot, sequence)),
            Some(_) => Err(invalid()),
        }
    }
}

/// One row of `V$LOGMNR_CONTENTS`. Text columns that repeat across many rows (owner, table, user,
/// container) are shared `Arc<str>` so producing and cloning rows stays cheap. `Default` is an
/// empty INTERNAL row with an all-zero XID, a base for rows built field by field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogMinerRow {
    /// `SCN`: the change's SCN; on a COMMIT row, the commit SCN.
    pub scn: u64,
    /// `START_SCN`: NULL without COMMITTED_DATA_ONLY on DML; may be set (or 0) on COMMIT rows.
    pub start_scn: Option<u64>,
    /// `COMMIT_SCN`: NULL without COMMITTED_DATA_ONLY.
    pub commit_scn: Option<u64>,
    /// `TIMESTAMP`: the change time, a DATE in the database's time zone.
    pub timestamp: Option<civil::DateTime>,
    /// `COMMIT_TIMESTAMP`.
    pub commit_timestamp: Option<civil::DateTime>,
    /// `XID`.
    pub xid: Xid,
    pub operation: OperationCode,
    /// `ROLLBACK = 1`: an undo row written by a savepoint rollback or a failed statement.
    pub rollback: bool,
    /// `ROW_ID` (18 characters).
    pub row_id: Arc<str>,
    /// `RS_ID` as written, with its surrounding spaces.
    pub rs_id: Arc<str>,
    /// `SSN`.
    pub ssn: u64,
    /// `CSF = 1`: SQL_REDO continues in the next row.
    pub csf: bool,
    /// `SEG_OWNER` (NULL on START/COMMIT rows).
    pub seg_owner: Option<Arc<str>>,
    /// `TABLE_NAME`.
    pub table_name: Option<Arc<str>>,
    /// `USERNAME`.
    pub username: Option<Arc<str>>,
    /// `SESSION#`.
    pub session: Option<u32>,
    /// `SERIAL#`.
    pub serial: Option<u32>,
    /// `THREAD#`: the RAC redo thread.
    pub thread: u16,
    /// `INFO`.
    pub info: Option<Arc<str>>,
    /// `STATUS`: 0 valid SQL, 2 invalid (dictionary mismatch), 3 not guaranteed, 5 assembly
    /// required, 1291 missing SCN.
    pub status: u32,
    /// `SQL_REDO` (at most 4000 bytes per row; see `csf`).
    pub sql_redo: Option<String>,
    /// `SQL_UNDO`.
    pub sql_undo: Option<String>,
    /// `SRC_CON_NAME`: the PDB (NULL in a non-CDB).
    pub src_con_name: Option<Arc<str>>,
    /// `CON_ID`.
    pub con_id: Option<u32>,
    /// `DATA_OBJ#`: the number of the object the row changed (`ALL_OBJECTS.OBJECT_ID`), which a
    /// rename, a drop into the recycle bin and an ALTER keep. It names the table where
    /// `SEG_OWNER`/`TABLE_NAME` cannot: a row mined after its table was renamed carries the new
    /// name, one of a table since altered or purged `"UNKNOWN"."OBJ# n"`. Debezium reads the
    /// same column as the row's object id (`LogMinerEventRow.getObjectId`). 0 on control rows;
    /// `None` where the source does not give it.
    pub object_id: Option<u64>,
}

impl LogMinerRow {
    /// The redo address, when `RS_ID` is well formed.
    pub fn redo_address(&self) -> Option<RedoAddress> {
        RedoAddress::parse(&self.rs_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_scn_row_names_its_range() {
        assert_eq!(missing_scn_range("Missing SCN 100 - 200"), Some((100, 200)));
        assert_eq!(missing_scn_range(" Missing SCN 7-9 "), Some((7, 9)));
        assert_eq!(missing_scn_range("corrupt blocks 4 to 19 skipped"), None);
    }

    #[test]
    fn xid_parts_are_little_endian() {
        // Real 19c captures: 03000E00CC020000 is 3/14/716, 0A000B0057030000 is 10/11/855.
        let xid = Xid::from_hex("03000E00CC020000").unwrap();
        assert_eq!((xid.usn(), xid.slot(), xid.sequence()), (3, 14, 716));
        assert_eq!(
            Xid::from_parts(10, 11, 855).to_upper_hex(),
            "0A000B0057030000"
        );
        assert_eq!(xid.to_decimal_parts(), "3.14.716");
        let sequenceless = Xid::from_parts(3, 14, SEQUENCELESS_XIDSQN);
        assert!(sequenceless.is_sequenceless() && sequenceless.same_slot(&xid));
        assert!(!xid.is_sequenceless() && !xid.is_zero());
        assert!(Xid([0; 8]).is_zero());
    }

    #[test]
    fn rs_id_keeps_logminer_spacing() {
        let address = RedoAddress {
            sequence: 7,
            block: 141_495,
            offset: 16,
        };
        assert_eq!(address.to_string(), " 0x000007.000228b7.0010 ");
        assert_eq!(
            RedoAddress::parse(" 0x000007.000228b7.0010 "),
            Some(address)
        );
        assert_eq!(RedoAddress::parse("0x000007.000228b7"), None);
    }

    #[test]
    fn operation_codes_round_trip_and_lob_erase_accepts_both() {
        for code in [
            0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 25, 29, 34, 36, 68, 70, 71, 255, 27,
        ] {
            assert_eq!(OperationCode::from_code(code).code(), code);
        }
        assert_eq!(OperationCode::from_code(28), OperationCode::LobErase);
        assert_eq!(OperationCode::from_code(27), OperationCode::Other(27));
    }
}
