//! The capture's `/status` answers across polls. One lost or slow answer must not flip Ready or
//! drop the lag: the latest report stands in for up to [`KEPT_FOR_FAILED_POLLS`] failed polls.
//! After that the operator stops trusting it, falls back to the pod's readiness (the capture's
//! `/readyz` passes only while streaming) and says, once, that `/status` does not answer: a
//! NetworkPolicy, a service mesh or an operator outside the pod network can make it unreachable
//! for good while the capture streams.

use super::CaptureReport;

/// Failed polls in a row after which the kept report is dropped and the operator warns.
pub const KEPT_FOR_FAILED_POLLS: u32 = 3;

/// The `/status` answers of one capture pod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusPolls {
    /// The pod the answers came from: a new pod starts afresh.
    pod_uid: String,
    report: Option<CaptureReport>,
    failures: u32,
    last_error: String,
}

/// `/status` has not answered for [`KEPT_FOR_FAILED_POLLS`] polls or more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    pub polls: u32,
    pub error: String,
}

impl Unanswered {
    /// What the Ready and LagWithinSLA messages add.
    pub fn note(&self) -> String {
        format!(
            "the capture's /status has not answered the last {} polls ({}), so lag and position \
             are not updated; let the operator reach the capture's HTTP port (the chart's \
             NetworkPolicy allows exactly that)",
            self.polls, self.error
        )
    }
}

impl StatusPolls {
    /// Takes the outcome of a poll of pod `pod_uid`; `true` when this poll is the one after
    /// which `/status` counts as unanswered (time for the one warning).
    pub fn record(&mut self, pod_uid: &str, poll: Result<CaptureReport, String>) -> bool {
        if self.pod_uid != pod_uid {
            *self = Self {
                pod_uid: pod_uid.to_owned(),
                ..Self::default()
            };
        }
        match poll {
            Ok(report) => {
                self.report = Some(report);
                self.failures = 0;
                self.last_error.clear();
                false
            }
            Err(error) => {
                self.failures = self.failures.saturating_add(1);
                self.last_error = error;
                self.failures == KEPT_FOR_FAILED_POLLS
            }
        }
    }

    /// The report to go by: the latest answer, unless too many polls failed since.
    pub fn report(&self) -> Option<&CaptureReport> {
        self.report
            .as_ref()
            .filter(|_| self.failures < KEPT_FOR_FAILED_POLLS)
    }

    pub fn unanswered(&self) -> Option<Unanswered> {
        (self.failures >= KEPT_FOR_FAILED_POLLS).then(|| Unanswered {
            polls: self.failures,
            error: self.last_error.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redoline_crds::capture::CaptureState;

    fn report(state: CaptureState) -> CaptureReport {
        CaptureReport {
            state: Some(state),
            lag_seconds: Some(1.5),
            ..CaptureReport::default()
        }
    }

    #[test]
    fn a_report_stands_in_for_a_few_failed_polls_then_the_operator_warns_once() {
        let mut polls = StatusPolls::default();
        assert!(!polls.record("pod-1", Ok(report(CaptureState::Streaming))));
        for _ in 1..KEPT_FOR_FAILED_POLLS {
            assert!(!polls.record("pod-1", Err("no answer within 3s".into())));
            assert_eq!(polls.report(), Some(&report(CaptureState::Streaming)));
            assert_eq!(polls.unanswered(), None);
        }
        assert!(polls.record("pod-1", Err("no answer within 3s".into())));
        assert_eq!(polls.report(), None);
        assert_eq!(
            polls.unanswered(),
            Some(Unanswered {
                polls: KEPT_FOR_FAILED_POLLS,
                error: "no answer within 3s".into()
            })
        );
        // One warning per episode.
        assert!(!polls.record("pod-1", Err("connecting: refused".into())));
        assert_eq!(
            polls.unanswered().map(|u| u.error),
            Some("connecting: refused".into())
        );
        // An answer ends it.
        assert!(!polls.record("pod-1", Ok(report(CaptureState::Streaming))));
        assert_eq!(polls.unanswered(), None);
        assert!(polls.report().is_some());
    }

    #[test]
    fn a_new_pod_does_not_inherit_the_old_pods_report() {
        let mut polls = StatusPolls::default();
        polls.record("pod-1", Ok(report(CaptureState::Streaming)));
        polls.record("pod-2", Err("connecting: refused".into()));
        assert_eq!(polls.report(), None);
        assert_eq!(polls.unanswered(), None);
    }
}
