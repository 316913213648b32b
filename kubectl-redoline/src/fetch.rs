//! Reading from the cluster: the OracleCapture as JSON, and the capture's `/status` through the
//! API server's pod proxy (`/api/v1/namespaces/NS/pods/POD:PORT/proxy/status`), which needs no
//! route from the user's machine to the pod, only the `pods/proxy` permission.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::config::KubeConfigOptions;
use kube::{Client, Config};
use redoline_crds::OracleCapture;
use serde_json::Value;

use crate::error::PluginError;
use crate::live::LiveStatus;

/// The field manager of the plugin's edits (`kubectl get -o yaml --show-managed-fields`).
pub const FIELD_MANAGER: &str = "kubectl-redoline";
/// The capture's HTTP port when the pod does not name one (the operator's default).
const DEFAULT_HTTP_PORT: u16 = 8080;
/// How long the pod proxy may take to answer; past it the status falls back to the resource.
const LIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A client for the kubeconfig's current context, or `context`, and that context's namespace.
pub async fn client(context: Option<&str>) -> Result<(Client, String), PluginError> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let config = match Config::from_kubeconfig(&options).await {
        Ok(config) => config,
        // In a pod, without a kubeconfig: its ServiceAccount.
        Err(_) if context.is_none() => Config::infer()
            .await
            .map_err(|e| PluginError::Config(e.to_string()))?,
        Err(e) => return Err(PluginError::Config(e.to_string())),
    };
    let namespace = config.default_namespace.clone();
    let client = Client::try_from(config).map_err(|e| PluginError::Config(e.to_string()))?;
    Ok((client, namespace))
}

fn captures(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<OracleCapture>(&());
    Api::namespaced_with(client.clone(), namespace, &resource)
}

/// The OracleCapture as JSON (read as such, so a newer CRD's fields do not stop the plugin).
pub async fn capture(client: &Client, namespace: &str, name: &str) -> Result<Value, PluginError> {
    let object = captures(client, namespace)
        .get_opt(name)
        .await?
        .ok_or_else(|| PluginError::NotFound {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })?;
    serde_json::to_value(object).map_err(|e| PluginError::Unreadable(e.to_string()))
}

/// Writes `patch` as a JSON merge patch; a changed `resourceVersion` is [`PluginError::Conflict`].
pub async fn merge_patch(
    client: &Client,
    namespace: &str,
    name: &str,
    patch: &Value,
) -> Result<Value, PluginError> {
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    match captures(client, namespace)
        .patch(name, &params, &Patch::Merge(patch))
        .await
    {
        Ok(object) => {
            serde_json::to_value(object).map_err(|e| PluginError::Unreadable(e.to_string()))
        }
        Err(kube::Error::Api(status)) if status.code == 409 => Err(PluginError::Conflict),
        Err(e) => Err(e.into()),
    }
}

/// The capture's pod: the operator's StatefulSet `<name>-capture` has one replica.
pub fn pod_name(capture: &str) -> String {
    format!("{capture}-capture-0")
}

/// The capture's `/status` through the pod proxy: the answer with the pod and port, or why
/// there is none (shown on screen).
pub async fn live_status(
    client: &Client,
    namespace: &str,
    capture: &str,
) -> Result<(LiveStatus, String, u16), String> {
    let pod_name = pod_name(capture);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod = match pods.get_opt(&pod_name).await {
        Ok(Some(pod)) => pod,
        Ok(None) => return Err(format!("the capture pod {pod_name} does not exist")),
        Err(e) => return Err(format!("the capture pod {pod_name} cannot be read: {e}")),
    };
    if pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.as_ref())
        .is_none()
    {
        return Err(format!("the capture pod {pod_name} has no IP yet"));
    }
    let port = http_port(&pod);
    let path = format!("/api/v1/namespaces/{namespace}/pods/{pod_name}:{port}/proxy/status");
    let request = http::Request::get(&path)
        .body(Vec::new())
        .map_err(|e| format!("building the request for {path}: {e}"))?;
    let body = match tokio::time::timeout(LIVE_TIMEOUT, client.request_text(request)).await {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => return Err(format!("the capture's /status did not answer: {e}")),
        Err(_) => {
            return Err(format!(
                "the capture's /status did not answer within {} s",
                LIVE_TIMEOUT.as_secs()
            ));
        }
    };
    let live = LiveStatus::parse(&body)?;
    Ok((live, pod_name, port))
}

/// The port named `http` of the capture container, as the operator declares it.
fn http_port(pod: &Pod) -> u16 {
    pod.spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .flat_map(|container| container.ports.iter().flatten())
        .find(|port| port.name.as_deref() == Some("http"))
        .and_then(|port| u16::try_from(port.container_port).ok())
        .unwrap_or(DEFAULT_HTTP_PORT)
}
