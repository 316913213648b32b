//! The watches of one namespace (or all) and the caches they feed: the same streams trigger
//! reconciles and fill the stores the reconciler reads ([`Caches`]), so reading the cluster costs
//! no API call. What is cached is trimmed to what the reconciler reads.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::{BoxStream, Stream};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod, Service, ServiceAccount};
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use redoline_crds::OracleCapture;

/// The caches the reconciler reads instead of asking the API server: one reflector per watched
/// kind, fed by the same watches that trigger reconciles, so reading them costs no API call.
///
/// To keep the operator small with many captures, what is cached is trimmed to what the
/// reconciler reads: no `managedFields` anywhere, no pod template spec in StatefulSets, no pod
/// spec in Pods. ConfigMaps, Services and ServiceAccounts are kept as metadata only. No Secret is
/// watched or read: a missing Secret or key is learnt from the kubelet's `FailedMount` Events.
#[derive(Clone)]
pub struct Caches {
    pub stateful_sets: Store<StatefulSet>,
    pub pods: Store<Pod>,
    /// The kubelet's `FailedMount` Events about pods (a missing Secret or key of a capture pod:
    /// [`crate::status::mount_problem`]).
    pub mount_failures: Store<Event>,
    pub config_maps: Store<PartialObjectMeta<ConfigMap>>,
    pub services: Store<PartialObjectMeta<Service>>,
    pub service_accounts: Store<PartialObjectMeta<ServiceAccount>>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("stateful_sets", &self.stateful_sets.len())
            .field("pods", &self.pods.len())
            .field("mount_failures", &self.mount_failures.len())
            .finish_non_exhaustive()
    }
}

/// A watch already passed through its cache, ready to trigger reconciles.
pub type Feed<K> = BoxStream<'static, Result<K, watcher::Error>>;

/// The watch streams behind [`Caches`]; each must be polled (by the controller) for its cache to
/// fill.
pub struct Feeds {
    pub stateful_sets: Feed<StatefulSet>,
    pub pods: Feed<Pod>,
    pub mount_failures: Feed<Event>,
    pub config_maps: Feed<PartialObjectMeta<ConfigMap>>,
    pub services: Feed<PartialObjectMeta<Service>>,
    pub service_accounts: Feed<PartialObjectMeta<ServiceAccount>>,
}

impl std::fmt::Debug for Feeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeds").finish_non_exhaustive()
    }
}

impl Caches {
    /// Waits until every cache holds its initial list (immediate once they did), for at most
    /// `limit`; false when some cache is still empty then (its watch keeps failing, e.g. for want
    /// of a permission).
    pub async fn ready(&self, limit: Duration) -> bool {
        let all = async {
            futures::join!(
                self.stateful_sets.wait_until_ready(),
                self.pods.wait_until_ready(),
                self.mount_failures.wait_until_ready(),
                self.config_maps.wait_until_ready(),
                self.services.wait_until_ready(),
                self.service_accounts.wait_until_ready(),
            )
        };
        // An error inside means the watch was dropped: the controller is shutting down.
        tokio::time::timeout(limit, all).await.is_ok()
    }
}

/// The kubelet's Events saying that a pod's volume cannot be mounted.
pub const FAILED_MOUNT_SELECTOR: &str = "involvedObject.kind=Pod,reason=FailedMount";

/// Sets up the watches of one namespace (or all) and their caches.
pub fn watch(client: &Client, namespace: Option<&str>) -> (Caches, Feeds) {
    // Lists may come from the API server's watch cache (`any_semantic`): a slightly old start is
    // fine for a level-based reconciler, and it keeps restarts cheap for etcd.
    let owned = || {
        watcher::Config::default()
            .labels(super::MANAGED_SELECTOR)
            .any_semantic()
    };
    let (stateful_sets, stateful_set_feed) = cached(
        watcher(super::api(client, namespace), owned()),
        trim_stateful_set,
    );
    let (pods, pod_feed) = cached(
        watcher(
            super::api(client, namespace),
            watcher::Config::default()
                .labels(super::CAPTURE_POD_SELECTOR)
                .any_semantic(),
        ),
        trim_pod,
    );
    // Only what the kubelet says when a volume cannot be mounted: the Events of a namespace are
    // many, these few (filtered by the API server).
    let (mount_failures, mount_failure_feed) = cached(
        watcher(
            super::api::<Event>(client, namespace),
            watcher::Config::default()
                .fields(FAILED_MOUNT_SELECTOR)
                .any_semantic(),
        ),
        trim_meta,
    );
    let (config_maps, config_map_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    let (services, service_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    let (service_accounts, service_account_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    (
        Caches {
            stateful_sets,
            pods,
            mount_failures,
            config_maps,
            services,
            service_accounts,
        },
        Feeds {
            stateful_sets: stateful_set_feed,
            pods: pod_feed,
            mount_failures: mount_failure_feed,
            config_maps: config_map_feed,
            services: service_feed,
            service_accounts: service_account_feed,
        },
    )
}

/// The watch of the OracleCaptures themselves and the controller's store of them, trimmed like
/// the other caches: no `managedFields`, no `kubectl.kubernetes.io/last-applied-configuration`
/// (nothing reads them, and with many resources they are most of the memory).
pub fn watch_captures(
    client: &Client,
    namespace: Option<&str>,
) -> (Store<OracleCapture>, Feed<OracleCapture>) {
    let (store, writer) = reflector::store();
    let feed = watcher(
        super::api(client, namespace),
        watcher::Config::default().any_semantic(),
    )
    .default_backoff()
    .modify(trim_capture)
    .reflect(writer)
    .applied_objects()
    .boxed();
    (store, feed)
}

fn trim_capture(capture: &mut OracleCapture) {
    trim_meta(capture);
    if let Some(annotations) = capture.metadata.annotations.as_mut() {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

/// Trims each object, keeps it in a new cache, and passes every touched object (deletions
/// included, so a deleted child is put back) on as a trigger.
fn cached<K>(
    events: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    trim: fn(&mut K),
) -> (Store<K>, Feed<K>)
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let feed = events
        .default_backoff()
        .modify(trim)
        .reflect(writer)
        .touched_objects()
        .boxed();
    (store, feed)
}

fn trim_meta<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

fn trim_stateful_set(sts: &mut StatefulSet) {
    trim_meta(sts);
    if let Some(spec) = sts.spec.as_mut() {
        spec.template.spec = None;
    }
}

fn trim_pod(pod: &mut Pod) {
    trim_meta(pod);
    pod.spec = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::fixtures;

    #[test]
    fn cached_pods_and_stateful_sets_lose_their_specs() {
        let children = crate::build::build(&fixtures::sample(), &fixtures::settings()).unwrap();
        let mut sts = children.stateful_set;
        trim_stateful_set(&mut sts);
        let spec = sts.spec.as_ref().unwrap();
        assert!(spec.template.spec.is_none());
        assert!(spec.volume_claim_templates.is_some(), "kept for resizes");
        let mut pod = Pod {
            spec: Some(Default::default()),
            ..Pod::default()
        };
        trim_pod(&mut pod);
        assert!(pod.spec.is_none());
    }
}
