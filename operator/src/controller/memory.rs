//! What the controller keeps between reconciles, in memory only: a restart loses it, which costs
//! one status write and one apply of each child per capture.
//!
//! Most of it is per capture, keyed by the OracleCapture's uid so that a capture deleted and
//! created again under the same name starts afresh ([`CaptureMemory`]). Failure counts are keyed
//! by namespace/name instead: a reconcile can fail before the uid is read.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::OracleCaptureStatus;

use super::{apply, object_key, resize};
use crate::status::StatusPolls;

/// Everything remembered between reconciles.
#[derive(Default)]
pub(super) struct Memory {
    /// By the OracleCapture's uid.
    pub captures: HashMap<String, CaptureMemory>,
    /// Consecutive failed reconciles, by namespace/name.
    pub failures: HashMap<String, u32>,
}

/// What is remembered of one capture.
#[derive(Default)]
pub(super) struct CaptureMemory {
    /// The last status written; `None` until this process wrote one.
    pub written: Option<OracleCaptureStatus>,
    /// What was last applied of its children.
    pub applied: apply::AppliedChildren,
    /// A spill resize under way.
    pub resizing: Option<resize::Pending>,
    /// The capture pod's `/status` answers.
    pub polls: StatusPolls,
}

impl Memory {
    /// The memory of the capture with `uid`, made empty on first use.
    pub fn capture(&mut self, uid: &str) -> &mut CaptureMemory {
        self.captures.entry(uid.to_owned()).or_default()
    }

    /// Forgets every capture not in `live`.
    pub fn keep_only(&mut self, live: &[Arc<OracleCapture>]) {
        let uids: HashSet<&str> = live
            .iter()
            .filter_map(|c| c.metadata.uid.as_deref())
            .collect();
        let keys: HashSet<String> = live.iter().map(|c| object_key(c)).collect();
        self.captures.retain(|uid, _| uids.contains(uid.as_str()));
        self.failures.retain(|key, _| keys.contains(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::fixtures;

    #[test]
    fn a_deleted_capture_is_forgotten_everywhere() {
        let kept = Arc::new(fixtures::sample_at("sales", "orders", "uid-kept"));
        let gone = Arc::new(fixtures::sample_at("hr", "payroll", "uid-gone"));
        let mut memory = Memory::default();
        for c in [&kept, &gone] {
            let uid = c.metadata.uid.clone().unwrap();
            *memory.capture(&uid) = CaptureMemory {
                written: Some(OracleCaptureStatus::default()),
                applied: apply::AppliedChildren::default(),
                resizing: Some(resize::Pending::new(Vec::new())),
                polls: StatusPolls::default(),
            };
            memory.failures.insert(object_key(c), 2);
        }
        memory.keep_only(std::slice::from_ref(&kept));
        let uids: Vec<&String> = memory.captures.keys().collect();
        assert_eq!(uids, ["uid-kept"]);
        let keys: Vec<&String> = memory.failures.keys().collect();
        assert_eq!(keys, ["sales/orders"]);
    }
}
