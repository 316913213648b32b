//! The Service in front of the capture pod: its HTTP port serves `/metrics` for Prometheus and
//! `/status` for the operator's lag and position polls.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{HTTP_PORT, Identity};

pub(super) fn build(identity: &Identity) -> Service {
    Service {
        metadata: identity.metadata(identity.workload_name()),
        spec: Some(ServiceSpec {
            selector: Some(identity.selector_labels()),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: HTTP_PORT,
                target_port: Some(IntOrString::String("http".into())),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{build as build_all, fixtures};

    #[test]
    fn selects_the_capture_pod_on_the_http_port() {
        let children = build_all(&fixtures::sample(), &fixtures::settings()).unwrap();
        let spec = children.service.spec.unwrap();
        let pod_labels = children
            .stateful_set
            .spec
            .unwrap()
            .template
            .metadata
            .unwrap()
            .labels
            .unwrap();
        for (k, v) in spec.selector.unwrap() {
            assert_eq!(pod_labels.get(&k), Some(&v), "pod lacks selector label {k}");
        }
        assert_eq!(spec.ports.unwrap()[0].port, 8080);
    }
}
