//! The capture pod's ServiceAccount: an identity with no API permissions. The capture never talks
//! to the Kubernetes API, so its token is not mounted either.

use k8s_openapi::api::core::v1::ServiceAccount;

use super::Identity;

pub(super) fn build(identity: &Identity) -> ServiceAccount {
    ServiceAccount {
        metadata: identity.metadata(identity.workload_name()),
        automount_service_account_token: Some(false),
        ..ServiceAccount::default()
    }
}
