//! Leader election over a `coordination.k8s.io/v1` Lease, so that several replicas can run and
//! only one reconciles.
//!
//! The algorithm is client-go's leader elector, in a few lines:
//!
//! * Every [`LeaderSettings::retry_period`] a replica reads the Lease. A Lease held by another
//!   identity counts as expired once its record (holder and `renewTime`) has not changed for
//!   `leaseDurationSeconds` **as measured by this replica's own monotonic clock** since it first saw
//!   that record, so clock skew between nodes does not matter. An expired, empty or missing Lease
//!   is taken; the write is an update carrying the `resourceVersion` read (or a create), so of two
//!   replicas racing for it exactly one wins and the other gets a conflict.
//! * The leader renews the Lease every retry period. When the Lease turns out to be held by someone
//!   else, or no renewal has succeeded for [`LeaderSettings::renew_deadline`] (shorter than the
//!   lease duration, so the leader gives up before anyone else may take over), leadership is lost:
//!   the controller is cancelled at once (running reconciles included, as client-go stops: the
//!   Lease may already be someone else's), and [`run_elected`] returns [`LeaderError::Lost`]. The binary
//!   then exits non-zero and the pod restarts as a fresh standby; that is simpler and safer than
//!   rejoining with caches and per-object state from the previous term.
//! * On a graceful shutdown the leader lets running reconciles finish, then releases the Lease
//!   (clears `holderIdentity`), so a standby takes over at its next retry instead of waiting for
//!   the lease to expire.
//!
//! API permissions: `leases` get, create and update in the Lease's namespace.
//!
//! Why ours (compared when issue 37 asked): kube-runtime 5.0 has no Lease support;
//! `kube-leader-election` 0.44 is built on kube 4 (we are on 5); `kube-lease-manager` 0.13 (kube
//! 5) takes a Lease as expired at the holder's `renewTime` plus the duration read against this
//! node's wall clock (`SystemTime::now() > renew + duration` in its `state.rs`), so a clock
//! ahead on the standby's node lets it take a Lease that is still held, two leaders at once. The
//! expiry on our own monotonic clock (above) is what makes skew harmless; the cancellation of the
//! controller on loss and the release after draining are ours to wire in any case.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt, Shared};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

use crate::metrics::Metrics;

/// The default name of the Lease.
pub const DEFAULT_LEASE_NAME: &str = "redoline-operator";

/// Default of [`LeaderSettings::drain_timeout`]: within Kubernetes' default 30 s grace period.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// How the election runs.
#[derive(Clone, Debug)]
pub struct LeaderSettings {
    /// The namespace of the Lease (the operator's own).
    pub namespace: String,
    pub lease_name: String,
    /// This replica's identity, unique among replicas (the pod name).
    pub identity: String,
    /// How long a Lease stays valid after its last renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal; less than
    /// `lease_duration`.
    pub renew_deadline: Duration,
    /// How often the Lease is read, renewed or tried.
    pub retry_period: Duration,
    /// How long running reconciles may take to finish after the shutdown signal; the Lease keeps
    /// being renewed meanwhile.
    pub drain_timeout: Duration,
}

impl LeaderSettings {
    /// client-go's defaults: 15 s lease, 10 s renew deadline, 2 s retry period.
    pub fn new(namespace: String, identity: String) -> Self {
        Self {
            namespace,
            lease_name: DEFAULT_LEASE_NAME.to_owned(),
            identity,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            drain_timeout: DRAIN_TIMEOUT,
        }
    }

    /// Checks the timing rules: retry period < renew deadline < lease duration, whole seconds
    /// of lease duration (the Lease stores seconds).
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_duration.as_secs() == 0 || self.lease_duration.subsec_nanos() != 0 {
            return Err("the lease duration must be a positive number of whole seconds".into());
        }
        if self.renew_deadline >= self.lease_duration {
            return Err("the renew deadline must be shorter than the lease duration".into());
        }
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(
                "the retry period must be positive and shorter than the renew deadline".into(),
            );
        }
        Ok(())
    }
}

/// What this replica is doing, for `/readyz` and the logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Role {
    /// Not yet able to read the Lease (or starting up).
    Starting = 0,
    /// Another replica leads; this one is ready to take over.
    Standby = 1,
    /// This replica reconciles.
    Leader = 2,
    /// Shutting down, or leadership lost.
    Stopping = 3,
}

/// The shared, current [`Role`] of this replica.
#[derive(Clone, Debug, Default)]
pub struct RoleCell(Arc<AtomicU8>);

impl RoleCell {
    pub fn get(&self) -> Role {
        match self.0.load(Ordering::Acquire) {
            1 => Role::Standby,
            2 => Role::Leader,
            3 => Role::Stopping,
            _ => Role::Starting,
        }
    }

    pub fn set(&self, role: Role) {
        self.0.store(role as u8, Ordering::Release);
    }
}

/// Why an elected run ended other than by the shutdown signal.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    #[error("lost the leader Lease {namespace}/{name}: {why}")]
    Lost {
        namespace: String,
        name: String,
        why: String,
    },
    #[error("invalid leader election settings: {0}")]
    Settings(String),
}

/// The last Lease record this replica saw, and when (on its own clock) it first saw it.
#[derive(Debug)]
struct Observed {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    lease_duration: Duration,
    since: Instant,
}

/// One replica's view of the election.
struct Elector {
    api: Api<Lease>,
    settings: LeaderSettings,
    observed: Option<Observed>,
}

impl Elector {
    fn observe(&mut self, spec: &LeaseSpec) {
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let lease_duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.settings.lease_duration, Duration::from_secs);
        let same = self
            .observed
            .as_ref()
            .is_some_and(|o| o.holder == holder && o.renew_time == spec.renew_time);
        if !same {
            self.observed = Some(Observed {
                holder,
                renew_time: spec.renew_time.clone(),
                lease_duration,
                since: Instant::now(),
            });
        }
    }

    /// Whether the Lease as last observed may be taken (or renewed) by this replica.
    fn may_take(&self) -> bool {
        match &self.observed {
            None => true,
            Some(observed) => match &observed.holder {
                None => true,
                Some(holder) if *holder == self.settings.identity => true,
                Some(_) => observed.since.elapsed() >= observed.lease_duration,
            },
        }
    }

    fn spec_for_me(&self, previous: Option<&LeaseSpec>) -> LeaseSpec {
        let now = MicroTime(Timestamp::now());
        let seconds = i32::try_from(self.settings.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let mine = previous
            .and_then(|s| s.holder_identity.as_deref())
            .is_some_and(|h| h == self.settings.identity);
        let transitions = previous.and_then(|s| s.lease_transitions).unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(self.settings.identity.clone()),
            lease_duration_seconds: Some(seconds),
            acquire_time: if mine {
                previous.and_then(|s| s.acquire_time.clone())
            } else {
                Some(now.clone())
            },
            renew_time: Some(now),
            lease_transitions: Some(if mine || previous.is_none() {
                transitions
            } else {
                transitions.saturating_add(1)
            }),
            ..previous.cloned().unwrap_or_default()
        }
    }

    /// Takes or renews the Lease; `Ok(true)` when this replica holds it afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let name = self.settings.lease_name.clone();
        let Some(mut lease) = self.api.get_opt(&name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(self.settings.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec_for_me(None)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(&created.spec.unwrap_or_default());
                    Ok(true)
                }
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            };
        };
        let previous = lease.spec.clone().unwrap_or_default();
        self.observe(&previous);
        if !self.may_take() {
            return Ok(false);
        }
        lease.spec = Some(self.spec_for_me(Some(&previous)));
        // `lease.metadata.resourceVersion` makes this a compare-and-swap.
        match self
            .api
            .replace(&name, &PostParams::default(), &lease)
            .await
        {
            Ok(written) => {
                self.observe(&written.spec.unwrap_or_default());
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// [`Self::try_acquire_or_renew`] bounded by `timeout`.
    async fn attempt(&mut self, timeout: Duration) -> Result<bool, String> {
        match tokio::time::timeout(timeout, self.try_acquire_or_renew()).await {
            Ok(Ok(held)) => Ok(held),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer from the API server within {timeout:?}")),
        }
    }

    /// Clears `holderIdentity` if this replica still holds the Lease.
    async fn release(&mut self) -> Result<(), kube::Error> {
        let name = self.settings.lease_name.clone();
        let Some(mut lease) = self.api.get_opt(&name).await? else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.settings.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.api
            .replace(&name, &PostParams::default(), &lease)
            .await
            .map(drop)
    }

    fn holder(&self) -> Option<&str> {
        self.observed.as_ref().and_then(|o| o.holder.as_deref())
    }
}

/// Waits for leadership, then runs `work` while leading.
///
/// `work` gets a future that resolves at `shutdown`, when it should finish what it does and
/// return. `work` runs on a task of its own, aborted when this future is dropped, when it does not
/// return within [`LeaderSettings::drain_timeout`] of the shutdown, and at once when leadership is
/// lost. Returns `Ok(())` after a shutdown (the Lease released once `work` ended) and
/// [`LeaderError::Lost`] when leadership was lost (once `work` is cancelled).
pub async fn run_elected<F, Fut>(
    client: Client,
    settings: LeaderSettings,
    role: RoleCell,
    metrics: Option<Arc<Metrics>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    work: F,
) -> Result<(), LeaderError>
where
    F: FnOnce(BoxFuture<'static, ()>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    settings.validate().map_err(LeaderError::Settings)?;
    let shutdown: Shared<BoxFuture<'static, ()>> = shutdown.boxed().shared();
    let set_leader = |leading: bool| {
        if let Some(metrics) = &metrics {
            metrics.set_leader(leading);
        }
    };
    set_leader(false);
    let mut elector = Elector {
        api: Api::namespaced(client, &settings.namespace),
        settings: settings.clone(),
        observed: None,
    };
    let lease = format!("{}/{}", settings.namespace, settings.lease_name);

    // Standby until the Lease is ours.
    let mut shutdown_wait = shutdown.clone();
    loop {
        match elector.attempt(settings.renew_deadline).await {
            Ok(true) => break,
            Ok(false) => {
                if role.get() != Role::Standby {
                    tracing::info!(%lease, holder = elector.holder().unwrap_or(""), identity = %settings.identity, "standing by: another replica leads");
                }
                role.set(Role::Standby);
            }
            Err(error) => {
                tracing::warn!(%lease, %error, "cannot read or take the leader Lease");
                role.set(Role::Starting);
            }
        }
        tokio::select! {
            _ = &mut shutdown_wait => {
                role.set(Role::Stopping);
                return Ok(());
            }
            _ = tokio::time::sleep(settings.retry_period) => {}
        }
    }

    tracing::info!(%lease, identity = %settings.identity, "leading: starting the controller");
    role.set(Role::Leader);
    set_leader(true);
    let stop = shutdown.clone().boxed();
    // On a task of its own, so that a slow Lease call never holds the controller up; aborted if
    // this future is dropped or gives up on it.
    let mut work = AbortOnDrop(tokio::spawn(work(stop)));
    let mut last_renewal = Instant::now();
    let mut lost: Option<String> = None;
    let mut drain_deadline: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = &mut work.0 => break,
            _ = &mut shutdown_wait, if drain_deadline.is_none() => {
                role.set(Role::Stopping);
                drain_deadline = Some(tokio::time::Instant::now() + settings.drain_timeout);
            }
            _ = sleep_until_or_forever(drain_deadline) => {
                tracing::warn!(%lease, timeout = ?settings.drain_timeout, "the controller did not stop in time; abandoning it");
                break;
            }
            _ = tokio::time::sleep(settings.retry_period) => {
                // A renewal that hangs must not keep this replica leading past the deadline.
                let left = settings
                    .renew_deadline
                    .saturating_sub(last_renewal.elapsed())
                    .max(Duration::from_millis(100));
                let why = match elector.attempt(left).await {
                    Ok(true) => {
                        last_renewal = Instant::now();
                        continue;
                    }
                    Ok(false) => format!(
                        "it is held by {:?}",
                        elector.holder().unwrap_or("")
                    ),
                    Err(error) if last_renewal.elapsed() >= settings.renew_deadline => format!(
                        "no renewal for {:?}; last error: {error}",
                        last_renewal.elapsed()
                    ),
                    Err(error) => {
                        tracing::warn!(%lease, %error, "renewing the leader Lease failed; retrying");
                        continue;
                    }
                };
                tracing::error!(%lease, %why, "leadership lost: stopping the controller");
                role.set(Role::Stopping);
                set_leader(false);
                // Stop at once, as client-go's elector does: the Lease may already be another
                // replica's, and a reconcile left running would write beside the new leader.
                work.0.abort();
                // Cancelled at its next await: no request is sent after this returns.
                let _ = (&mut work.0).await;
                lost = Some(why);
                break;
            }
        }
    }
    // Stops the controller if it was abandoned, before the Lease is released.
    drop(work);
    role.set(Role::Stopping);
    set_leader(false);
    if let Some(why) = lost {
        return Err(LeaderError::Lost {
            namespace: settings.namespace,
            name: settings.lease_name,
            why,
        });
    }
    match tokio::time::timeout(settings.renew_deadline, elector.release()).await {
        Ok(Ok(())) => tracing::info!(%lease, "released the leader Lease"),
        Ok(Err(error)) => tracing::warn!(%lease, %error, "could not release the leader Lease"),
        Err(_) => tracing::warn!(%lease, "releasing the leader Lease timed out"),
    }
    Ok(())
}

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sleeps until `deadline`, or forever without one.
async fn sleep_until_or_forever(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elector(identity: &str) -> Elector {
        let settings = LeaderSettings::new("ops".into(), identity.into());
        // A client that is never called: these tests only exercise the pure parts.
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let client = Client::try_from(config).unwrap();
        Elector {
            api: Api::namespaced(client, "ops"),
            settings,
            observed: None,
        }
    }

    fn held_by(holder: &str, renewed: i64, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            renew_time: Some(MicroTime(Timestamp::from_second(renewed).unwrap())),
            lease_duration_seconds: Some(seconds),
            ..LeaseSpec::default()
        }
    }

    #[tokio::test]
    async fn a_lease_held_by_another_is_taken_only_after_its_duration_on_our_clock() {
        let mut e = elector("b");
        // The renewTime may be far in the past by our wall clock: it is not trusted.
        e.observe(&held_by("a", 1, 1));
        assert!(!e.may_take());
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert!(e.may_take());
        // A renewal seen restarts the wait.
        e.observe(&held_by("a", 2, 1));
        assert!(!e.may_take());
    }

    #[tokio::test]
    async fn an_empty_or_own_lease_may_be_taken() {
        let mut e = elector("b");
        assert!(e.may_take());
        e.observe(&LeaseSpec::default());
        assert!(e.may_take());
        e.observe(&held_by("b", 1, 15));
        assert!(e.may_take());
    }

    #[tokio::test]
    async fn taking_a_lease_counts_a_transition() {
        let e = elector("b");
        let taken = e.spec_for_me(Some(&LeaseSpec {
            lease_transitions: Some(4),
            ..held_by("a", 1, 15)
        }));
        assert_eq!(taken.holder_identity.as_deref(), Some("b"));
        assert_eq!(taken.lease_transitions, Some(5));
        assert_eq!(taken.lease_duration_seconds, Some(15));
        let renewed = e.spec_for_me(Some(&taken));
        assert_eq!(renewed.lease_transitions, Some(5));
        assert_eq!(renewed.acquire_time, taken.acquire_time);
        assert_eq!(e.spec_for_me(None).lease_transitions, Some(0));
    }

    #[test]
    fn timing_rules() {
        let mut s = LeaderSettings::new("ops".into(), "a".into());
        assert_eq!(s.validate(), Ok(()));
        s.renew_deadline = s.lease_duration;
        assert!(s.validate().is_err());
        s = LeaderSettings::new("ops".into(), "a".into());
        s.lease_duration = Duration::from_millis(15500);
        assert!(s.validate().is_err());
        s = LeaderSettings::new("ops".into(), "a".into());
        s.retry_period = s.renew_deadline;
        assert!(s.validate().is_err());
    }

    #[test]
    fn roles_round_trip() {
        let cell = RoleCell::default();
        assert_eq!(cell.get(), Role::Starting);
        for role in [Role::Standby, Role::Leader, Role::Stopping, Role::Starting] {
            cell.set(role);
            assert_eq!(cell.get(), role);
        }
    }
}
