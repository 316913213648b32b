//! How the database stores column values beyond each column's type: its character sets and
//! time zone, read once at start.
//!
//! What for: a row LogMiner cannot render with the online catalog (`"UNKNOWN"."OBJ# n"`, issue
//! 32) carries each value as `HEXTORAW` of its internal bytes, and
//! [`crate::value::internal::decode_internal`] reads CHAR/VARCHAR2 in the database character
//! set, NCHAR/NVARCHAR2 in the national one, and TIMESTAMP WITH LOCAL TIME ZONE as a reading in
//! the database time zone. The sources:
//! - `NLS_DATABASE_PARAMETERS` rows `NLS_CHARACTERSET` and `NLS_NCHAR_CHARACTERSET` (Oracle
//!   Database Reference 19c, "NLS_DATABASE_PARAMETERS": `PARAMETER`, `VALUE`, the permanent
//!   NLS settings of the database, not the session's);
//! - `DBTIMEZONE` (SQL Language Reference, "DBTIMEZONE": an offset `[+|-]TZH:TZM` or a time
//!   zone region name, as the latest CREATE or ALTER DATABASE set it; "TIMESTAMP WITH LOCAL
//!   TIME ZONE Data Type": values are stored normalised to it, and Oracle refuses to change it
//!   while a table has such a column, so one value holds for all stored data).
//!
//! The names are kept as the database gave them, and turned into decoders only when a row
//! needs them ([`StorageSettings::formats`]): a character set without a decoder matters only
//! to a capture that meets an `OBJ# n` row, so it is an error then, naming the set, not a
//! refusal to start.

use jiff::tz::Offset;

use crate::value::internal::{CharacterSet, DatabaseFormats, NationalCharacterSet};

/// The database's character sets and time zone, as Oracle names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageSettings {
    /// `NLS_CHARACTERSET` (`AL32UTF8`).
    pub character_set: String,
    /// `NLS_NCHAR_CHARACTERSET` (`AL16UTF16`).
    pub national_character_set: String,
    /// `DBTIMEZONE` as Oracle returns it: `+00:00`, or a region name such as `Europe/Berlin`.
    pub database_time_zone: String,
}

/// A setting the internal-format decoders cannot work with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StorageFormatError {
    #[error(
        "the database character set (NLS_CHARACTERSET) {0} has no decoder for internal-format \
         values (AL32UTF8, UTF8, WE8MSWIN1252, WE8ISO8859P1, US7ASCII)"
    )]
    CharacterSet(String),
    #[error(
        "the national character set (NLS_NCHAR_CHARACTERSET) {0} has no decoder for \
         internal-format values (AL16UTF16, UTF8)"
    )]
    NationalCharacterSet(String),
    #[error(
        "the database time zone (DBTIMEZONE) {0:?} is not a fixed offset: TIMESTAMP WITH LOCAL \
         TIME ZONE values stored in a region's local time cannot be read back without knowing \
         which side of a DST change each was written on"
    )]
    TimeZone(String),
    #[error("the database's storage settings were not read")]
    NotRead,
}

impl StorageSettings {
    /// The decoders' view of the settings, or what they cannot read.
    pub fn formats(&self) -> Result<DatabaseFormats, StorageFormatError> {
        let character_set = CharacterSet::from_name(&self.character_set)
            .map_err(|_| StorageFormatError::CharacterSet(self.character_set.clone()))?;
        let national_character_set = NationalCharacterSet::from_name(&self.national_character_set)
            .map_err(|_| {
                StorageFormatError::NationalCharacterSet(self.national_character_set.clone())
            })?;
        let database_time_zone = database_time_zone(&self.database_time_zone)
            .ok_or_else(|| StorageFormatError::TimeZone(self.database_time_zone.clone()))?;
        Ok(DatabaseFormats {
            character_set,
            national_character_set,
            database_time_zone,
        })
    }
}

/// `DBTIMEZONE` as an offset: `±HH:MM`, or a region name that is UTC under another name
/// (`UTC`, `GMT`, `Etc/UTC`, ...: zones with no offset change, as the system's tz database
/// says). A region with DST has no single offset.
fn database_time_zone(text: &str) -> Option<Offset> {
    let text = text.trim();
    if let Some(offset) = parse_utc_offset(text) {
        return Some(offset);
    }
    let zone = jiff::tz::TimeZone::get(text).ok()?;
    if let Ok(offset) = zone.to_fixed_offset() {
        return Some(offset);
    }
    // A zone from the tz database with no transition at all is one offset for all time.
    let start = jiff::Timestamp::MIN;
    zone.following(start)
        .next()
        .is_none()
        .then(|| zone.to_offset(start))
}

/// `±HH:MM` as an offset; `None` for anything else (or beyond Oracle's -12:59..+14:59 hours).
/// Oracle writes offsets so in `TO_CHAR(.., 'TZH:TZM')` and in `DBTIMEZONE`.
pub fn parse_utc_offset(text: &str) -> Option<Offset> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let all_digits = |part: &str| part.len() == 2 && part.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(hours) || !all_digits(minutes) {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    if hours > 14 || minutes > 59 {
        return None;
    }
    Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(character_set: &str, national: &str, zone: &str) -> StorageSettings {
        StorageSettings {
            character_set: character_set.to_owned(),
            national_character_set: national.to_owned(),
            database_time_zone: zone.to_owned(),
        }
    }

    #[test]
    fn the_default_settings_of_a_database_since_12_2_are_decoded() {
        let formats = settings("AL32UTF8", "AL16UTF16", "+00:00")
            .formats()
            .unwrap();
        assert_eq!(formats.character_set, CharacterSet::Al32Utf8);
        assert_eq!(
            formats.national_character_set,
            NationalCharacterSet::Al16Utf16
        );
        assert_eq!(formats.database_time_zone, Offset::UTC);
        let formats = settings("WE8MSWIN1252", "UTF8", "-05:30")
            .formats()
            .unwrap();
        assert_eq!(formats.character_set, CharacterSet::We8MsWin1252);
        assert_eq!(formats.database_time_zone.seconds(), -(5 * 3600 + 1800));
    }

    #[test]
    fn a_set_without_a_decoder_is_named_in_the_error() {
        let error = settings("JA16SJIS", "AL16UTF16", "+00:00")
            .formats()
            .unwrap_err();
        assert_eq!(
            error,
            StorageFormatError::CharacterSet("JA16SJIS".to_owned())
        );
        assert!(error.to_string().contains("JA16SJIS"), "{error}");
        let error = settings("AL32UTF8", "AL32UTF8", "+00:00")
            .formats()
            .unwrap_err();
        assert!(
            error.to_string().contains("NLS_NCHAR_CHARACTERSET"),
            "{error}"
        );
    }

    #[test]
    fn a_region_is_an_offset_only_when_it_never_changes() {
        assert_eq!(
            settings("AL32UTF8", "AL16UTF16", "UTC")
                .formats()
                .unwrap()
                .database_time_zone,
            Offset::UTC
        );
        let error = settings("AL32UTF8", "AL16UTF16", "Europe/Berlin")
            .formats()
            .unwrap_err();
        assert_eq!(
            error,
            StorageFormatError::TimeZone("Europe/Berlin".to_owned())
        );
        assert!(
            settings("AL32UTF8", "AL16UTF16", "+15:00")
                .formats()
                .is_err()
        );
    }
}
