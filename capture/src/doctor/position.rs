//! The stored position as `doctor` shows it (seed 001: `doctor` asks the lag "from the stored
//! bookmark"), so the lag is known while no capture runs: a stalled or crash-looping capture, or
//! one not started yet.
//!
//! The bookmark is read as the capture would read it at start (the offsets topic with a consumer
//! alone, fencing no running capture; or the file sink's bookmark file). The lag is the one the
//! capture reports while it streams: the database time of the current SCN minus the position's
//! database time, both UTC instants from the database's clock. The position's time is the
//! bookmark's `commit_time`, or, in a bookmark written before redoline stored it,
//! `SCN_TO_TIMESTAMP` of its commit SCN. The position never affects whether doctor passes: an
//! unreadable bookmark is the capture's CDC-5002 at start, not a missing prerequisite.

use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use crate::lag::seconds_behind;
use crate::sink::Bookmark;
use crate::source::{DatabaseCatalog, SourceError};

/// What doctor found of the stored position.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum StoredPosition {
    /// No bookmark yet: the capture starts as a new one at `spec.startPosition`.
    None,
    /// The stored bookmark, with the lag behind the database now.
    #[serde(rename_all = "camelCase")]
    Stored {
        commit_scn: u64,
        restart_scn: u64,
        /// As stored; absent in a bookmark written before redoline stored it.
        commit_time: Option<Timestamp>,
        lag_seconds: Option<f64>,
        /// Why the lag is unknown, when it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        lag_unknown: Option<String>,
    },
    /// The bookmark (or the sink holding it) cannot be read.
    Unreadable { error: String },
}

impl StoredPosition {
    /// The position `stored` (or why it cannot be read), with its lag asked from `source`.
    pub fn of<S: DatabaseCatalog>(
        source: &mut S,
        stored: Result<Option<Bookmark>, String>,
    ) -> Self {
        let bookmark = match stored {
            Ok(Some(bookmark)) => bookmark,
            Ok(None) => return StoredPosition::None,
            Err(error) => return StoredPosition::Unreadable { error },
        };
        let (lag_seconds, lag_unknown) = match lag(source, &bookmark) {
            Ok(Some(seconds)) => (Some(seconds), None),
            Ok(None) => (
                None,
                Some(
                    "the position is older than the database's SCN-to-time mapping (ORA-08181)"
                        .to_owned(),
                ),
            ),
            Err(error) => (None, Some(format!("the lag query failed: {error}"))),
        };
        StoredPosition::Stored {
            commit_scn: bookmark.commit_scn,
            restart_scn: bookmark.restart_scn,
            commit_time: bookmark.commit_time,
            lag_seconds,
            lag_unknown,
        }
    }
}

/// The database time of the current SCN minus that of the position; `None` when Oracle no longer
/// maps an SCN to a time.
fn lag<S: DatabaseCatalog>(
    source: &mut S,
    bookmark: &Bookmark,
) -> Result<Option<f64>, SourceError> {
    let offset = source.database_utc_offset()?;
    let utc = |local: Option<jiff::civil::DateTime>| {
        local.and_then(|local| offset.to_timestamp(local).ok())
    };
    let current_scn = source.current_scn()?;
    let current = utc(source.scn_to_timestamp(current_scn)?);
    let position = match bookmark.commit_time {
        Some(time) => Some(time),
        None => utc(source.scn_to_timestamp(bookmark.commit_scn)?),
    };
    Ok(current
        .zip(position)
        .map(|(current, position)| seconds_behind(current, position)))
}

impl fmt::Display for StoredPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoredPosition::None => write!(
                f,
                "stored position: none yet; the capture starts at spec.startPosition"
            ),
            StoredPosition::Stored {
                commit_scn,
                restart_scn,
                commit_time,
                lag_seconds,
                lag_unknown,
            } => {
                write!(f, "stored position: commit SCN {commit_scn}")?;
                match commit_time {
                    Some(time) => write!(f, " at {}", time.strftime("%Y-%m-%dT%H:%M:%SZ"))?,
                    None => write!(f, " (its time is not stored)")?,
                }
                write!(f, ", restart SCN {restart_scn}; ")?;
                match (lag_seconds, lag_unknown) {
                    (Some(seconds), _) => write!(f, "lag {seconds:.0}s behind the database"),
                    (None, Some(why)) => write!(f, "lag unknown: {why}"),
                    (None, None) => write!(f, "lag unknown"),
                }
            }
            StoredPosition::Unreadable { error } => {
                write!(f, "stored position: cannot be read: {error}")
            }
        }
    }
}
