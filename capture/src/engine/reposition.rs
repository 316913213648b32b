//! `spec.reposition`: a declared move of the stored position, applied once per id.
//!
//! At start, after the bookmark is read, the capture compares the spec's id with the one the
//! bookmark records. A new id moves the bookmark to the SCN ([`Bookmark::reposition`]) when the
//! redo from that SCN is still listed on every thread; the first page of the run stores the moved
//! bookmark, with the id, in one Kafka transaction, so a move applies exactly once whether or not
//! the capture is killed before that page: until it is stored, the next start sees the old id and
//! applies the move again.
//!
//! A refusal keeps the position and lets the capture stream on from it: the spec asks for
//! something the database cannot give, which is the operator's to fix (a new SCN, or the archived
//! logs restored), and a stop would only turn a refused edit into an outage. The refusal is on
//! `/status` (and from there `status.reposition` and a Warning Event), naming the SCN asked for
//! and the oldest SCN whose redo is still available. The id is not recorded, so the same spec is
//! tried again at the next start, when the logs may have been restored.

use jiff::Timestamp;
use redoline_crds::capture::Time;
use redoline_crds::v1alpha1::{Reposition, RepositionState, RepositionStatus};

use crate::sink::Bookmark;
use crate::source::{DatabaseCatalog, RedoMiner, SourceError};

/// What a start does with `spec.reposition`, decided from the spec and the stored bookmark alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// No `spec.reposition`.
    None,
    /// The bookmark records this id: applied by an earlier run.
    AppliedBefore,
    /// The capture had no bookmark: it starts at `startPosition`, and the id is recorded so it
    /// never moves the position later.
    Fresh,
    /// The initial snapshot has not finished: its rows are placed at its own SCN, which a move
    /// would contradict.
    SnapshotRunning,
    /// A new id: move if the redo is there.
    Move,
}

/// See [`Decision`]. `resumed` says whether `bookmark` was stored by an earlier run.
pub(super) fn decide(spec: Option<&Reposition>, bookmark: &Bookmark, resumed: bool) -> Decision {
    let Some(spec) = spec else {
        return Decision::None;
    };
    if bookmark
        .reposition
        .as_ref()
        .is_some_and(|applied| applied.id == spec.id)
    {
        Decision::AppliedBefore
    } else if !resumed {
        Decision::Fresh
    } else if bookmark.snapshot.as_ref().is_some_and(|s| !s.completed) {
        Decision::SnapshotRunning
    } else {
        Decision::Move
    }
}

/// The outcome of a start's reposition: the status to report, and whether the position moved
/// (the transactions rebuilt from the journal then belong to the old position).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Outcome {
    pub(super) status: Option<RepositionStatus>,
    pub(super) moved: bool,
}

/// Applies `spec` to `bookmark` as [`decide`] says, checking the redo for a move.
pub(super) fn apply<S: RedoMiner + DatabaseCatalog>(
    spec: Option<&Reposition>,
    bookmark: &mut Bookmark,
    resumed: bool,
    source: &mut S,
) -> Result<Outcome, SourceError> {
    let decision = decide(spec, bookmark, resumed);
    let Some(spec) = spec else {
        return Ok(Outcome {
            status: None,
            moved: false,
        });
    };
    let now = Some(Time(Timestamp::now()));
    let status = |state, message: String| RepositionStatus {
        id: spec.id.clone(),
        scn: spec.scn,
        state,
        at: now.clone(),
        message: Some(message),
    };
    // A move applied or refused now: logged as the status reports it.
    let settled = |state, message: String, moved: bool| {
        let what = if moved { "applied" } else { "refused" };
        tracing::warn!(
            id = spec.id,
            scn = spec.scn,
            message,
            "spec.reposition {what}"
        );
        Ok(Outcome {
            status: Some(status(state, message)),
            moved,
        })
    };
    let refused = |message| settled(RepositionState::Refused, message, false);
    match decision {
        Decision::None => Ok(Outcome {
            status: None,
            moved: false,
        }),
        Decision::AppliedBefore => Ok(Outcome {
            status: Some(RepositionStatus {
                id: spec.id.clone(),
                scn: spec.scn,
                state: RepositionState::Applied,
                at: None,
                message: Some("applied by an earlier run (the bookmark records this id)".into()),
            }),
            moved: false,
        }),
        Decision::Fresh => {
            bookmark.reposition = Some(crate::sink::bookmark::AppliedReposition {
                id: spec.id.clone(),
                scn: spec.scn,
            });
            refused(format!(
                "the capture had no stored position and started at spec.startPosition (SCN {}); \
                 the id is recorded and will not move it later",
                bookmark.commit_scn
            ))
        }
        Decision::SnapshotRunning => refused(format!(
            "the initial snapshot at SCN {} has not finished; set a new id once it has",
            bookmark.snapshot.as_ref().map_or(0, |s| s.scn)
        )),
        Decision::Move => match source.logs_covering(spec.scn) {
            Ok(_) => {
                let from = (bookmark.commit_scn, bookmark.restart_scn);
                bookmark.reposition(&spec.id, spec.scn);
                let message = format!(
                    "moved from commit SCN {} (restart SCN {}) to SCN {}",
                    from.0, from.1, spec.scn
                );
                settled(RepositionState::Applied, message, true)
            }
            Err(SourceError::RedoMissing {
                thread,
                from_scn,
                to_scn,
            }) => {
                let oldest = source.redo_logs(0)?.iter().map(|log| log.first_scn).min();
                let oldest = match oldest {
                    Some(scn) => format!("the oldest SCN still available is {scn}"),
                    None => "no redo log is listed".to_owned(),
                };
                refused(format!(
                    "the redo for SCN {} is gone (thread {thread}, SCN {from_scn} to {to_scn} \
                     not available): {oldest}; the capture keeps commit SCN {}",
                    spec.scn, bookmark.commit_scn
                ))
            }
            Err(error) => Err(error),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SnapshotState;

    fn spec(id: &str) -> Reposition {
        Reposition {
            id: id.into(),
            scn: 50,
        }
    }

    #[test]
    fn each_id_applies_once_and_only_to_a_stored_position() {
        let mut bookmark = Bookmark::initial(100, 1, None, 0);
        assert_eq!(decide(None, &bookmark, true), Decision::None);
        assert_eq!(decide(Some(&spec("a")), &bookmark, false), Decision::Fresh);
        assert_eq!(decide(Some(&spec("a")), &bookmark, true), Decision::Move);
        bookmark.reposition("a", 50);
        assert_eq!(
            decide(Some(&spec("a")), &bookmark, true),
            Decision::AppliedBefore
        );
        assert_eq!(decide(Some(&spec("b")), &bookmark, true), Decision::Move);
    }

    #[test]
    fn a_running_initial_snapshot_is_not_moved() {
        let mut bookmark = Bookmark::initial(100, 1, None, 0);
        bookmark.snapshot = Some(SnapshotState::new(99, Vec::<String>::new()));
        assert_eq!(
            decide(Some(&spec("a")), &bookmark, true),
            Decision::SnapshotRunning
        );
    }
}
