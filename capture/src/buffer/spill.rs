//! Append-only spill files: CRC32-framed rows of one transaction each.
//!
//! # Format
//!
//! ```text
//! file   = magic frame*
//! magic  = "RDLSPL02"                      8 bytes: format name and version 02
//! frame  = length crc payload
//! length = u32 little-endian               payload bytes, at most MAX_FRAME_PAYLOAD
//! crc    = u32 little-endian               CRC32 (IEEE, crc32fast) of length ‖ payload
//! payload = one row, see codec.rs
//! ```
//!
//! The CRC covers the length too, so a damaged length is caught by the checksum rather than by
//! chance. One frame holds one row; frame *n* (from 0) is the transaction's *n*-th buffered row,
//! undo rows included, which is the sequence number the undo pass in `committed.rs` works with.
//!
//! # Invariants
//! - A file is written by exactly one transaction, only appended to, and read back only after the
//!   transaction's COMMIT. Its writer knows the exact byte length and frame count it wrote; the
//!   reader is given both and refuses anything else. This is what catches a truncation at a frame
//!   boundary (which would otherwise look like a clean end of file), a deleted file and bytes
//!   appended behind our back.
//! - Writes go through one write buffer shared by all spilled transactions (see `mod.rs`), so the
//!   memory spent on spilling is fixed whatever the number of spilled transactions; a file's
//!   `len` includes the bytes still waiting in that buffer.
//! - Files are not durable state: [`SpillDir::open`] removes every `*.spill` file it finds (and
//!   nothing else, so a mistyped directory does not lose unrelated files).
//!
//! # Errors
//! - [`SpillError::VolumeFull`]: the operating system said ENOSPC or EDQUOT; the buffer turns it
//!   into CDC-4001 carrying the OS message and the largest transactions.
//! - [`SpillError::Corrupted`]: missing file, wrong length or magic, checksum mismatch, truncated
//!   frame, undecodable payload: CDC-3002.
//! - [`SpillError::Io`]: any other I/O failure: CDC-3001.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::source::{LogMinerRow, Xid};

use super::codec::{self, CodecError, RowDecoder};

/// The first bytes of every spill file: format name and version.
pub const FILE_MAGIC: [u8; 8] = *b"RDLSPL02";
/// Length and CRC in front of every payload.
pub const FRAME_HEADER_LEN: usize = 8;
/// A row is a few KiB at most (SQL_REDO is split at 4000 bytes); a longer length is damage.
pub const MAX_FRAME_PAYLOAD: u32 = 64 << 20;
/// The extension of spill files; opening the spill directory removes exactly these.
pub const SPILL_EXTENSION: &str = "spill";

/// A spill file that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    #[error("cannot {action} spill file {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the spill volume is full writing {}: {source}", path.display())]
    VolumeFull {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("spill file {} is damaged at byte {offset}: {problem}", path.display())]
    Corrupted {
        path: PathBuf,
        offset: u64,
        problem: Corruption,
    },
}

/// How a spill file is damaged.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    #[error("the file is missing")]
    Missing,
    #[error("the file holds {actual} bytes, {expected} were written")]
    Length { expected: u64, actual: u64 },
    #[error("the file does not start with the spill format's magic bytes")]
    Magic,
    #[error("frame length {0} is larger than any row")]
    FrameTooLong(u32),
    #[error("CRC32 {actual:08x} does not match the frame's {expected:08x}")]
    Checksum { expected: u32, actual: u32 },
    #[error("the file ends inside a frame")]
    Truncated,
    #[error("bytes follow the last frame written")]
    TrailingBytes,
    #[error(transparent)]
    Payload(#[from] CodecError),
}

impl SpillError {
    fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        if matches!(
            source.kind(),
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded
        ) {
            Self::VolumeFull {
                path: path.to_owned(),
                source,
            }
        } else {
            Self::Io {
                action,
                path: path.to_owned(),
                source,
            }
        }
    }

    fn corrupted(path: &Path, offset: u64, problem: Corruption) -> Self {
        Self::Corrupted {
            path: path.to_owned(),
            offset,
            problem,
        }
    }
}

/// The name of the `number`-th spill file a buffer creates (from 1), for `xid`:
/// `000001-07000C00F3010000.spill`.
pub fn spill_file_name(number: u64, xid: Xid) -> String {
    format!("{number:06}-{xid}.{SPILL_EXTENSION}")
}

/// The spill directory: creates spill files with unique names.
#[derive(Debug)]
pub struct SpillDir {
    dir: PathBuf,
    files_created: u64,
}

impl SpillDir {
    /// Creates `dir` if needed and removes the spill files an earlier run left there.
    pub fn open(dir: &Path) -> Result<Self, SpillError> {
        fs::create_dir_all(dir).map_err(|e| SpillError::io("create the directory of", dir, e))?;
        let entries =
            fs::read_dir(dir).map_err(|e| SpillError::io("list the directory of", dir, e))?;
        for entry in entries {
            let path = entry
                .map_err(|e| SpillError::io("list the directory of", dir, e))?
                .path();
            if path.extension().is_some_and(|ext| ext == SPILL_EXTENSION) {
                fs::remove_file(&path).map_err(|e| SpillError::io("remove stale", &path, e))?;
                tracing::info!(path = %path.display(), "Removed a spill file left by an earlier run.");
            }
        }
        Ok(Self {
            dir: dir.to_owned(),
            files_created: 0,
        })
    }

    fn next_file_path(&self, xid: Xid) -> PathBuf {
        self.dir.join(spill_file_name(self.files_created + 1, xid))
    }

    /// Creates the next spill file (magic included, not yet flushed: see [`SpillFile::len`]).
    pub fn create(&mut self, xid: Xid, pending: &mut Vec<u8>) -> Result<SpillFile, SpillError> {
        let path = self.next_file_path(xid);
        self.files_created += 1;
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| SpillError::io("create", &path, e))?;
        pending.extend_from_slice(&FILE_MAGIC);
        Ok(SpillFile {
            path,
            file,
            len: FILE_MAGIC.len() as u64,
            frames: 0,
        })
    }
}

/// The writing end of one transaction's spill file.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    file: File,
    /// Bytes of the file, including those still in the shared write buffer.
    len: u64,
    frames: u64,
}

impl SpillFile {
    /// Bytes written or waiting in the write buffer.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends one frame holding `row` to `pending` (the shared write buffer, which must hold
    /// only this file's bytes) and returns the frame's length.
    pub fn append(&mut self, row: &LogMinerRow, pending: &mut Vec<u8>) -> Result<u64, SpillError> {
        let start = pending.len();
        pending.extend_from_slice(&[0; FRAME_HEADER_LEN]);
        codec::encode_row(row, pending);
        let payload_len = pending.len() - start - FRAME_HEADER_LEN;
        let length = match u32::try_from(payload_len) {
            Ok(length) if length <= MAX_FRAME_PAYLOAD => length.to_le_bytes(),
            _ => {
                pending.truncate(start);
                return Err(SpillError::Io {
                    action: "append a row to",
                    path: self.path.clone(),
                    source: io::Error::new(
                        ErrorKind::InvalidInput,
                        format!("a row of {payload_len} bytes is larger than a spill frame"),
                    ),
                });
            }
        };
        let mut crc = crc32fast::Hasher::new();
        crc.update(&length);
        crc.update(&pending[start + FRAME_HEADER_LEN..]);
        pending[start..start + 4].copy_from_slice(&length);
        pending[start + 4..start + 8].copy_from_slice(&crc.finalize().to_le_bytes());
        let frame_len = (pending.len() - start) as u64;
        self.len += frame_len;
        self.frames += 1;
        Ok(frame_len)
    }

    /// Undoes the last [`append`](Self::append) of `frame_len` bytes still in `pending`.
    pub fn unappend(&mut self, frame_len: u64, pending: &mut Vec<u8>) {
        let keep = pending.len().saturating_sub(frame_len as usize);
        pending.truncate(keep);
        self.len -= frame_len;
        self.frames -= 1;
    }

    /// Writes the shared buffer (holding this file's bytes) to the file and empties it.
    pub fn write_pending(&mut self, pending: &mut Vec<u8>) -> Result<(), SpillError> {
        let result = self.file.write_all(pending);
        pending.clear();
        result.map_err(|e| SpillError::io("write", &self.path, e))
    }

    /// A reader's view of the file as written so far (the shared write buffer must have been
    /// written out first): to read an open transaction's rows without ending its writing.
    pub fn snapshot(&self) -> SealedSpillFile {
        SealedSpillFile {
            path: self.path.clone(),
            len: self.len,
            frames: self.frames,
        }
    }

    /// What a reader needs to check the file: path, length and frame count.
    pub fn seal(self) -> SealedSpillFile {
        SealedSpillFile {
            path: self.path,
            len: self.len,
            frames: self.frames,
        }
    }
}

/// A spill file whose writing is over: the reader's expectations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedSpillFile {
    pub path: PathBuf,
    pub len: u64,
    pub frames: u64,
}

impl SealedSpillFile {
    /// Opens the file for one pass in redo order with `read_ahead` bytes of buffering. Missing
    /// files and wrong lengths are found here, before any row is read.
    pub fn open(&self, read_ahead: usize) -> Result<FrameReader<File>, SpillError> {
        let file = File::open(&self.path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => SpillError::corrupted(&self.path, 0, Corruption::Missing),
            _ => SpillError::io("open", &self.path, e),
        })?;
        let actual = file
            .metadata()
            .map_err(|e| SpillError::io("read the size of", &self.path, e))?
            .len();
        if actual != self.len {
            return Err(SpillError::corrupted(
                &self.path,
                actual.min(self.len),
                Corruption::Length {
                    expected: self.len,
                    actual,
                },
            ));
        }
        FrameReader::new(file, &self.path, self.len, self.frames, read_ahead)
    }

    /// Deletes the file; one already gone is not an error.
    pub fn remove(&self) -> Result<(), SpillError> {
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                Err(SpillError::io("delete", &self.path, e))
            }
            _ => Ok(()),
        }
    }
}

/// Reads the frames of one spill file in order, checking each against its CRC and the whole
/// against the length and frame count written. Reads go through one buffer of the read-ahead
/// size, and frames are checked and decoded where they lie in it (no copy per frame).
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    path: PathBuf,
    /// Bytes read from `reader`; `buffer[start..end]` are not consumed yet.
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes consumed (magic included).
    offset: u64,
    expected_len: u64,
    expected_frames: u64,
    frames: u64,
    decoder: RowDecoder,
}

impl<R: Read> FrameReader<R> {
    /// Reads the magic bytes of `reader`, which should hold `expected_frames` frames in
    /// `expected_len` bytes (magic included), through a buffer of `read_ahead` bytes (more only
    /// for a frame larger than that). `path` names the file in errors.
    pub fn new(
        reader: R,
        path: &Path,
        expected_len: u64,
        expected_frames: u64,
        read_ahead: usize,
    ) -> Result<Self, SpillError> {
        let mut frames = Self {
            reader,
            path: path.to_owned(),
            buffer: vec![0; read_ahead.max(FILE_MAGIC.len())],
            start: 0,
            end: 0,
            offset: 0,
            expected_len,
            expected_frames,
            frames: 0,
            decoder: RowDecoder::default(),
        };
        frames.fill(FILE_MAGIC.len())?;
        let magic = frames.consume(FILE_MAGIC.len());
        if frames.buffer[magic] != FILE_MAGIC {
            return Err(SpillError::corrupted(path, 0, Corruption::Magic));
        }
        Ok(frames)
    }

    /// Bytes read so far (magic included).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next row, `None` after the last frame written.
    pub fn next_row(&mut self) -> Result<Option<LogMinerRow>, SpillError> {
        let frame_start = self.offset;
        let Some(payload) = self.next_frame()? else {
            return Ok(None);
        };
        self.decoder
            .decode(&self.buffer[payload])
            .map(Some)
            .map_err(|e| SpillError::corrupted(&self.path, frame_start, Corruption::Payload(e)))
    }

    /// Checks the next frame and returns where its payload lies in `buffer`.
    fn next_frame(&mut self) -> Result<Option<Range<usize>>, SpillError> {
        if self.frames == self.expected_frames {
            return self.end().map(|()| None);
        }
        let frame_start = self.offset;
        self.fill(FRAME_HEADER_LEN)?;
        let header = self.consume(FRAME_HEADER_LEN);
        let [l0, l1, l2, l3, c0, c1, c2, c3] = self.buffer[header.clone()] else {
            return Err(SpillError::corrupted(
                &self.path,
                frame_start,
                Corruption::Truncated,
            ));
        };
        let length = u32::from_le_bytes([l0, l1, l2, l3]);
        let expected_crc = u32::from_le_bytes([c0, c1, c2, c3]);
        if length > MAX_FRAME_PAYLOAD
            || u64::from(length) > self.expected_len.saturating_sub(self.offset)
        {
            return Err(SpillError::corrupted(
                &self.path,
                frame_start,
                Corruption::FrameTooLong(length),
            ));
        }
        self.fill(length as usize)?;
        let payload = self.consume(length as usize);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&length.to_le_bytes());
        crc.update(&self.buffer[payload.clone()]);
        let actual = crc.finalize();
        if actual != expected_crc {
            return Err(SpillError::corrupted(
                &self.path,
                frame_start,
                Corruption::Checksum {
                    expected: expected_crc,
                    actual,
                },
            ));
        }
        self.frames += 1;
        Ok(Some(payload))
    }

    /// After the last frame: the length must be exact and nothing may follow.
    fn end(&mut self) -> Result<(), SpillError> {
        // The window is empty unless bytes follow; reuse the whole buffer for one more read.
        let more = self.end > self.start || {
            (self.start, self.end) = (0, 0);
            self.read_more()? > 0
        };
        if more {
            return Err(SpillError::corrupted(
                &self.path,
                self.offset,
                Corruption::TrailingBytes,
            ));
        }
        if self.offset != self.expected_len {
            return Err(SpillError::corrupted(
                &self.path,
                self.offset,
                Corruption::Length {
                    expected: self.expected_len,
                    actual: self.offset,
                },
            ));
        }
        Ok(())
    }

    /// Makes `len` unconsumed bytes available from `start`; a file ending first is truncated.
    fn fill(&mut self, len: usize) -> Result<(), SpillError> {
        if self.end - self.start >= len {
            return Ok(());
        }
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buffer.len() < len {
            self.buffer.resize(len, 0);
        }
        while self.end < len {
            if self.read_more()? == 0 {
                return Err(SpillError::corrupted(
                    &self.path,
                    self.offset,
                    Corruption::Truncated,
                ));
            }
        }
        Ok(())
    }

    /// Reads into the free end of the buffer (callers leave room); 0 at the end of the file.
    fn read_more(&mut self) -> Result<usize, SpillError> {
        loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(SpillError::io("read", &self.path, e)),
            }
        }
    }

    fn consume(&mut self, len: usize) -> Range<usize> {
        let range = self.start..self.start + len;
        self.start += len;
        self.offset += len as u64;
        range
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::OperationCode;

    fn read_all(bytes: &[u8], frames: u64) -> Result<Vec<LogMinerRow>, SpillError> {
        // A tiny read-ahead, so frames straddle refills.
        let mut reader =
            FrameReader::new(bytes, Path::new("t.spill"), bytes.len() as u64, frames, 7)?;
        let mut rows = Vec::new();
        while let Some(row) = reader.next_row()? {
            rows.push(row);
        }
        Ok(rows)
    }

    fn problem(error: SpillError) -> Corruption {
        match error {
            SpillError::Corrupted { problem, .. } => problem,
            other => panic!("{other:?}"),
        }
    }

    /// The fuzz seed was written by a separate (Python) implementation of the documented format.
    #[test]
    fn reads_a_file_written_from_the_documented_format() {
        let seed = include_bytes!("../../fuzz/corpus/spill_frame/001.spill");
        let rows = read_all(seed, 2).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].operation, OperationCode::Insert);
        assert_eq!(
            rows[0].sql_redo.as_deref(),
            Some("insert into \"APP\".\"ORDERS\"(\"ID\") values ('1');")
        );
        assert_eq!(rows[0].xid.to_decimal_parts(), "3.14.716");
        assert!(rows[1].rollback && rows[1].operation == OperationCode::Delete);
        // One frame fewer or more than the writer claimed is damage too.
        assert_eq!(
            problem(read_all(seed, 1).unwrap_err()),
            Corruption::TrailingBytes
        );
        assert_eq!(
            problem(read_all(seed, 3).unwrap_err()),
            Corruption::Truncated
        );
        assert_eq!(
            problem(read_all(&seed[..10], 2).unwrap_err()),
            Corruption::Truncated
        );
        // A file of the format before (version 01, without DATA_OBJ#) is refused as such.
        let mut magic = seed.to_vec();
        magic[7] = b'1';
        assert_eq!(problem(read_all(&magic, 2).unwrap_err()), Corruption::Magic);
    }

    #[test]
    fn written_frames_read_back_and_the_length_is_checked_at_open() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.spill"), b"x").unwrap();
        let mut spill_dir = SpillDir::open(dir.path()).unwrap();
        assert!(!dir.path().join("old.spill").exists());
        let mut pending = Vec::new();
        let xid = Xid::from_parts(1, 2, 3);
        let mut file = spill_dir.create(xid, &mut pending).unwrap();
        let seed = include_bytes!("../../fuzz/corpus/spill_frame/001.spill");
        for row in read_all(seed, 2).unwrap() {
            file.append(&row, &mut pending).unwrap();
        }
        assert_eq!(file.len(), seed.len() as u64, "the same bytes as the seed");
        file.write_pending(&mut pending).unwrap();
        assert!(pending.is_empty());
        let sealed = file.seal();
        assert_eq!(sealed.path, dir.path().join(spill_file_name(1, xid)));
        assert_eq!(std::fs::read(&sealed.path).unwrap(), seed);
        let mut reader = sealed.open(64).unwrap();
        assert!(reader.next_row().unwrap().is_some());
        let wrong = SealedSpillFile {
            len: sealed.len + 1,
            ..sealed.clone()
        };
        assert_eq!(
            problem(wrong.open(64).unwrap_err()),
            Corruption::Length {
                expected: sealed.len + 1,
                actual: sealed.len
            }
        );
        sealed.remove().unwrap();
        sealed.remove().unwrap();
        assert_eq!(problem(sealed.open(64).unwrap_err()), Corruption::Missing);
    }
}
