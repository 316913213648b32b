//! The file sink for local runs: JSON Lines, one event per line, in commit order, with the
//! bookmark beside the data so a restart neither repeats nor loses a line.
//!
//! A page is committed in two steps, each durable before the next:
//! 1. its lines are appended to the data file ([`FileSink::append_line`]) and, at
//!    [`FileSink::commit`], the file is synced;
//! 2. `<data file>.bookmark` is replaced atomically (write a temporary file, sync, rename) with
//!    `{"dataBytes": <length of the data file>, "bookmark": {...}}`.
//!
//! At start the bookmark file is read and the data file is cut back to `dataBytes`: lines past it
//! belong to a page whose bookmark never landed, and mining produces them again from the
//! bookmark. So the data file always ends exactly at a committed page. A data file shorter than
//! its bookmark says, or a bookmark file that does not parse, is CDC-5002: the position cannot be
//! trusted, and the capture stops rather than restart from somewhere else.
//!
//! The schema history ([`crate::schema_history`]) lives beside them in
//! `<data file>.schema-history`, one record value a line, appended and synced before the page
//! whose bookmark passes the DDL ([`FileSink::append_history`]). A line whose page never landed
//! stays: it is the version the DDL makes, and mining the DDL again finds it. A last line without
//! its newline (a write cut short) is cut off at start ([`read_history_lines`]).

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use redoline_crds::StopCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::json;
use crate::stop::Stop;

/// What the bookmark file holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredBookmark {
    data_bytes: u64,
    bookmark: Value,
}

/// A file sink failure.
#[derive(Debug, thiserror::Error)]
pub enum FileSinkError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

impl FileSinkError {
    /// The typed stop: an unreadable position is CDC-5002; an I/O failure is not typed (the
    /// process fails and is restarted).
    pub fn stop(&self) -> Option<Stop> {
        match self {
            Self::Unreadable { .. } => Some(Stop::new(
                StopCode::BookmarkUnreadable,
                format!(
                    "{self}; the file sink's position cannot be trusted: move the data and \
                     bookmark files away to start over"
                ),
            )),
            Self::Io { .. } => None,
        }
    }
}

/// An open file sink.
#[derive(Debug)]
pub struct FileSink {
    path: PathBuf,
    bookmark_path: PathBuf,
    history_path: PathBuf,
    data: File,
    /// Lines of the page not yet written to the file (written in 1 MiB batches and at commit).
    pending: Vec<u8>,
    data_bytes: u64,
    /// Bytes appended since the last commit.
    page_bytes: u64,
}

/// Lines are written to the file in batches of this size.
const WRITE_BATCH_BYTES: usize = 1 << 20;

impl Drop for FileSink {
    /// A page that was not committed (the capture stopped while writing it) leaves nothing behind:
    /// its buffered lines are dropped and any written ones cut, so the file ends at the bookmark
    /// even before the next start would cut it.
    fn drop(&mut self) {
        if self.page_bytes > 0
            && let Err(error) = self.data.set_len(self.data_bytes)
        {
            tracing::warn!(path = %self.path.display(), %error, "cannot cut the uncommitted page; the next start cuts it");
        }
    }
}

impl FileSink {
    /// Opens (or creates) the data file and returns the stored bookmark, after cutting the data
    /// back to it.
    pub fn open(path: &Path) -> Result<(Self, Option<Value>), FileSinkError> {
        let io = |source| FileSinkError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let bookmark_path = bookmark_path(path);
        let stored = read_bookmark(&bookmark_path)?;
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        let data_bytes = stored.as_ref().map_or(0, |stored| stored.data_bytes);
        if length < data_bytes {
            return Err(FileSinkError::Unreadable {
                path: path.to_owned(),
                message: format!(
                    "the data file holds {length} bytes but its bookmark says {data_bytes} were committed"
                ),
            });
        }
        if length > data_bytes {
            tracing::info!(
                path = %path.display(),
                dropped = length - data_bytes,
                "cutting lines of an uncommitted page; mining produces them again"
            );
            file.set_len(data_bytes).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let mut data = file;
        data.seek(SeekFrom::Start(data_bytes)).map_err(io)?;
        let sink = Self {
            path: path.to_owned(),
            bookmark_path,
            history_path: history_path(path),
            data,
            pending: Vec::with_capacity(WRITE_BATCH_BYTES),
            data_bytes,
            page_bytes: 0,
        };
        Ok((sink, stored.map(|stored| stored.bookmark)))
    }

    /// Appends one line, given as the parts it is made of and without its newline, to the page
    /// being written; nothing is committed until [`FileSink::commit`]. Parts, so a line is
    /// copied once, into the write buffer, and never assembled on its own first.
    pub fn append_line(&mut self, parts: &[&[u8]]) -> Result<(), FileSinkError> {
        let io = |source| FileSinkError::Io {
            path: self.path.clone(),
            source,
        };
        let before = self.pending.len();
        for part in parts {
            self.pending.extend_from_slice(part);
        }
        self.pending.push(b'\n');
        self.page_bytes += (self.pending.len() - before) as u64;
        if self.pending.len() >= WRITE_BATCH_BYTES {
            self.data.write_all(&self.pending).map_err(io)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Appends the line of one keyed record, `{"topic":…,"key":…,"value":…}`, with `key` and
    /// `value` already JSON (`None`: `null`), as [`FileSink::append_line`] does.
    pub fn append_record_line(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<(), FileSinkError> {
        let mut quoted_topic = String::with_capacity(topic.len() + 2);
        json::string(&mut quoted_topic, topic);
        self.append_line(&[
            b"{\"topic\":",
            quoted_topic.as_bytes(),
            b",\"key\":",
            key.unwrap_or(b"null"),
            b",\"value\":",
            value.unwrap_or(b"null"),
            b"}",
        ])
    }

    /// Commits the page: the lines are synced, then the bookmark replaces the stored one.
    pub fn commit(&mut self, bookmark: &Value) -> Result<(), FileSinkError> {
        let io = |source| FileSinkError::Io {
            path: self.path.clone(),
            source,
        };
        self.data.write_all(&self.pending).map_err(io)?;
        self.pending.clear();
        self.data.sync_data().map_err(io)?;
        let stored = StoredBookmark {
            data_bytes: self.data_bytes + self.page_bytes,
            bookmark: bookmark.clone(),
        };
        write_atomically(&self.bookmark_path, &stored)?;
        self.data_bytes = stored.data_bytes;
        self.page_bytes = 0;
        Ok(())
    }

    /// Bytes of committed data.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Appends one schema history record value to the history file and syncs it.
    pub fn append_history(&mut self, value: &str) -> Result<(), FileSinkError> {
        let io = |source| FileSinkError::Io {
            path: self.history_path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.history_path)
            .map_err(io)?;
        let mut line = Vec::with_capacity(value.len() + 1);
        line.extend_from_slice(value.as_bytes());
        line.push(b'\n');
        file.write_all(&line).map_err(io)?;
        file.sync_data().map_err(io)
    }
}

/// `<data file>.schema-history`.
pub fn history_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".schema-history");
    PathBuf::from(name)
}

/// The schema history file's lines (none when there is no file). A last line without its
/// newline was cut short by a crash before its page could commit: it is cut off the file.
pub fn read_history_lines(path: &Path) -> Result<Vec<String>, FileSinkError> {
    let io = |source| FileSinkError::Io {
        path: path.to_owned(),
        source,
    };
    let bytes = match std::fs::read(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(io)?,
    };
    let complete = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1);
    if complete < bytes.len() {
        tracing::warn!(path = %path.display(), "cutting an unfinished last schema history line");
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(complete as u64).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    let text =
        std::str::from_utf8(&bytes[..complete]).map_err(|error| FileSinkError::Unreadable {
            path: path.to_owned(),
            message: format!("the schema history is not UTF-8: {error}"),
        })?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// `<data file>.bookmark`.
pub fn bookmark_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".bookmark");
    PathBuf::from(name)
}

/// The bookmark the file sink writing `path` stored, without opening the sink (nothing is cut):
/// what `doctor` shows. `None` before the first page.
pub fn stored_bookmark(path: &Path) -> Result<Option<Value>, FileSinkError> {
    Ok(read_bookmark(&bookmark_path(path))?.map(|stored| stored.bookmark))
}

fn read_bookmark(path: &Path) -> Result<Option<StoredBookmark>, FileSinkError> {
    match std::fs::read(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(FileSinkError::Io {
            path: path.to_owned(),
            source,
        }),
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|error| FileSinkError::Unreadable {
                    path: path.to_owned(),
                    message: format!("the bookmark does not parse: {error}"),
                })
        }
    }
}

fn write_atomically(path: &Path, stored: &StoredBookmark) -> Result<(), FileSinkError> {
    let io = |source| FileSinkError::Io {
        path: path.to_owned(),
        source,
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let bytes = serde_json::to_vec(stored).map_err(|error| FileSinkError::Unreadable {
        path: path.to_owned(),
        message: error.to_string(),
    })?;
    let mut file = File::create(&temporary).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)?;
    // The rename is durable once the directory is synced.
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        File::open(dir).and_then(|dir| dir.sync_all()).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn history_lines_read_back_and_an_unfinished_one_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        assert!(read_history_lines(&history_path(&path)).unwrap().is_empty());
        let (mut sink, _) = FileSink::open(&path).unwrap();
        sink.append_history(r#"{"v":1}"#).unwrap();
        sink.append_history(r#"{"v":2}"#).unwrap();
        let history = history_path(&path);
        let mut file = OpenOptions::new().append(true).open(&history).unwrap();
        file.write_all(br#"{"v":"#).unwrap();
        assert_eq!(
            read_history_lines(&history).unwrap(),
            [r#"{"v":1}"#, r#"{"v":2}"#]
        );
        sink.append_history(r#"{"v":3}"#).unwrap();
        assert_eq!(
            read_history_lines(&history).unwrap(),
            [r#"{"v":1}"#, r#"{"v":2}"#, r#"{"v":3}"#],
            "the cut line does not spoil the next one"
        );
    }

    #[test]
    fn pages_append_and_the_bookmark_follows_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let (mut sink, stored) = FileSink::open(&path).unwrap();
        assert_eq!(stored, None);
        sink.append_line(&[br#"{"a":1}"#]).unwrap();
        sink.append_line(&[br#"{"a":2}"#]).unwrap();
        sink.commit(&json!({"commit_scn": 10})).unwrap();
        sink.append_line(&[br#"{"a":3}"#]).unwrap();
        sink.commit(&json!({"commit_scn": 11})).unwrap();
        drop(sink);
        let (sink, stored) = FileSink::open(&path).unwrap();
        assert_eq!(stored, Some(json!({"commit_scn": 11})));
        assert_eq!(sink.data_bytes(), 24);
        assert_eq!(lines(&path), ["{\"a\":1}", "{\"a\":2}", "{\"a\":3}"]);
    }

    #[test]
    fn lines_of_a_page_without_its_bookmark_are_cut_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let (mut sink, _) = FileSink::open(&path).unwrap();
        sink.append_line(&[b"kept"]).unwrap();
        sink.commit(&json!({"commit_scn": 1})).unwrap();
        drop(sink);
        // A crash after the data but before the bookmark.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"uncommitted\n")
            .unwrap();
        let (mut sink, stored) = FileSink::open(&path).unwrap();
        assert_eq!(stored, Some(json!({"commit_scn": 1})));
        assert_eq!(lines(&path), ["kept"]);
        sink.append_line(&[b"next"]).unwrap();
        sink.commit(&json!({"commit_scn": 2})).unwrap();
        assert_eq!(lines(&path), ["kept", "next"]);
    }

    #[test]
    fn an_untrustworthy_position_is_cdc_5002() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let (mut sink, _) = FileSink::open(&path).unwrap();
        sink.append_line(&[b"line"]).unwrap();
        sink.commit(&json!({})).unwrap();
        drop(sink);
        std::fs::write(&path, b"").unwrap();
        let error = FileSink::open(&path).unwrap_err();
        assert_eq!(error.stop().unwrap().code.code(), "CDC-5002");
        std::fs::write(bookmark_path(&path), b"{not json").unwrap();
        let error = FileSink::open(&path).unwrap_err();
        assert!(error.to_string().contains("does not parse"), "{error}");
        assert_eq!(error.stop().unwrap().code.code(), "CDC-5002");
    }
}
