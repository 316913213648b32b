//! A scenario file that keeps growing: a workload feeds the simulated database while a capture
//! mines it (the Kubernetes demo, long-running local runs).
//!
//! The simulator remembers how far it has read; [`Simulator::apply_appended`] applies every
//! complete line written since. A line still being written (no newline yet) waits for the next
//! call, so a writer never has to append a step atomically. The capture calls it whenever it asks
//! the database for its current SCN, so the redo of appended steps is there for the next window.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{Simulator, SimulatorError};
use crate::source::SourceError;

/// The file followed and the position of the first byte not applied yet.
#[derive(Debug)]
pub(super) struct FollowedScenario {
    path: PathBuf,
    offset: u64,
}

impl Simulator {
    /// A simulator with every complete line of `path` applied, that applies lines appended to it
    /// later through [`Simulator::apply_appended`].
    pub fn following_scenario_file(path: impl AsRef<Path>) -> Result<Self, SimulatorError> {
        let mut simulator = Self::new();
        simulator.follow = Some(FollowedScenario {
            path: path.as_ref().to_owned(),
            offset: 0,
        });
        simulator.apply_appended_lines()?;
        Ok(simulator)
    }

    /// Applies the complete lines appended to the followed scenario since the last call; nothing
    /// for a simulator that follows no file.
    pub fn apply_appended(&mut self) -> Result<(), SourceError> {
        self.apply_appended_lines()
            .map_err(|error| SourceError::Malformed {
                what: "an appended scenario step".to_owned(),
                message: error.to_string(),
            })
    }

    fn apply_appended_lines(&mut self) -> Result<(), SimulatorError> {
        let Some(follow) = &self.follow else {
            return Ok(());
        };
        let read_error = |source| SimulatorError::Read {
            path: follow.path.display().to_string(),
            source,
        };
        let mut file = File::open(&follow.path).map_err(read_error)?;
        file.seek(SeekFrom::Start(follow.offset))
            .map_err(read_error)?;
        let mut appended = Vec::new();
        file.read_to_end(&mut appended).map_err(read_error)?;
        // Only complete lines: the rest is still being written.
        let Some(end) = appended.iter().rposition(|&byte| byte == b'\n') else {
            return Ok(());
        };
        let complete = &appended[..=end];
        let text = std::str::from_utf8(complete).map_err(|error| {
            read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, error))
        })?;
        let consumed = complete.len() as u64;
        if let Some(follow) = &mut self.follow {
            follow.offset += consumed;
        }
        for line in text.lines() {
            self.apply_line(line)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::source::DatabaseCatalog;

    const TABLE: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#;

    #[test]
    fn appended_complete_lines_are_applied_and_a_partial_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feed.jsonl");
        std::fs::write(&path, format!("{TABLE}\n")).unwrap();
        let mut sim = Simulator::following_scenario_file(&path).unwrap();
        let start = sim.current_scn().unwrap();

        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let insert = r#"{"tx":"a","insert":"APP.T","values":{"ID":1}}"#;
        let half_commit = r#"{"tx":"a","com"#;
        write!(file, "{insert}\n{half_commit}").unwrap();
        sim.apply_appended().unwrap();
        assert_eq!(sim.open_transaction_names(), ["a"], "the insert is applied");
        assert!(sim.current_scn().unwrap() > start);

        writeln!(file, r#"mit":true}}"#).unwrap();
        sim.apply_appended().unwrap();
        assert!(
            sim.open_transaction_names().is_empty(),
            "the commit, once complete"
        );
        assert_eq!(sim.committed_rows("APP", "T").unwrap().len(), 1);
    }

    #[test]
    fn a_bad_appended_step_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feed.jsonl");
        std::fs::write(&path, format!("{TABLE}\n")).unwrap();
        let mut sim = Simulator::following_scenario_file(&path).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(
            file,
            r#"{{"tx":"a","insert":"APP.NOPE","values":{{"ID":1}}}}"#
        )
        .unwrap();
        let error = sim.apply_appended().unwrap_err().to_string();
        assert!(error.contains("line 2"), "{error}");
    }
}
