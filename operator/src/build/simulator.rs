//! Captures on the Oracle simulator instead of Oracle, for demos and tests on a real node.
//!
//! An operator started with `--simulator-scenarios DIR` renders every capture it manages with
//! `database.simulator` in place of the connection, following the scenario file
//! `DIR/<namespace>.<name>.jsonl` on the pod's node, mounted read-only through a `hostPath`
//! volume. This is the only way a capture pod that the kubelet runs can reach the simulator (it
//! cannot be told to by its spec: a `hostPath` chosen by whoever may create an OracleCapture
//! would be a way onto the node), so it is a setting of the operator, which the cluster
//! administrator installs. Never set in production: the captures then read no database at all.

use k8s_openapi::api::core::v1::{HostPathVolumeSource, Volume, VolumeMount};
use serde_json::{Value, json};

use super::Identity;

/// Where the scenario directory is mounted in the capture pod.
const MOUNT_DIR: &str = "/var/run/redoline/simulator";
const VOLUME: &str = "simulator-scenarios";

/// The scenario file of a capture, by its name in the scenario directory.
pub fn scenario_file_name(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}.jsonl")
}

/// Replaces the rendered config's `database` with the simulator following this capture's
/// scenario in the mounted directory.
pub(super) fn simulated_database(config: &mut serde_json::Map<String, Value>, identity: &Identity) {
    let scenario = format!(
        "{MOUNT_DIR}/{}",
        scenario_file_name(&identity.namespace, &identity.capture_name)
    );
    config.insert(
        "database".into(),
        json!({"simulator": {"scenario": scenario, "follow": true}}),
    );
}

/// The scenario directory on the node, as a volume.
pub(super) fn volume(host_dir: &str) -> Volume {
    Volume {
        name: VOLUME.into(),
        host_path: Some(HostPathVolumeSource {
            path: host_dir.into(),
            type_: Some("Directory".into()),
        }),
        ..Volume::default()
    }
}

/// Its mount in the doctor and capture containers, read-only.
pub(super) fn volume_mount() -> VolumeMount {
    VolumeMount {
        name: VOLUME.into(),
        mount_path: MOUNT_DIR.into(),
        read_only: Some(true),
        ..VolumeMount::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{build, fixtures};
    use serde_json::Value;

    #[test]
    fn the_capture_follows_its_scenario_on_the_node_instead_of_the_database() {
        let mut settings = fixtures::settings();
        settings.simulator_scenarios = Some("/srv/scenarios".into());
        let children = build(&fixtures::sample(), &settings).unwrap();

        let rendered = &children.config_map.data.as_ref().unwrap()[super::super::CONFIG_FILE];
        let config: Value = serde_norway::from_str(rendered).unwrap();
        assert_eq!(
            config["database"],
            serde_json::json!({"simulator": {
                "scenario": "/var/run/redoline/simulator/sales.orders.jsonl",
                "follow": true,
            }})
        );

        let pod = children.stateful_set.spec.unwrap().template.spec.unwrap();
        let volume = pod
            .volumes
            .unwrap()
            .into_iter()
            .find(|v| v.name == "simulator-scenarios")
            .expect("the scenario volume");
        let host_path = volume.host_path.unwrap();
        assert_eq!(host_path.path, "/srv/scenarios");
        assert_eq!(host_path.type_.as_deref(), Some("Directory"));
        let init = &pod.init_containers.unwrap()[0];
        for container in [init, &pod.containers[0]] {
            let mount = container
                .volume_mounts
                .as_ref()
                .unwrap()
                .iter()
                .find(|m| m.name == "simulator-scenarios")
                .expect("mounted in every container");
            assert_eq!(mount.mount_path, "/var/run/redoline/simulator");
            assert_eq!(mount.read_only, Some(true));
        }
    }

    #[test]
    fn without_the_setting_nothing_of_the_simulator_is_rendered() {
        let children = build(&fixtures::sample(), &fixtures::settings()).unwrap();
        let rendered = &children.config_map.data.as_ref().unwrap()[super::super::CONFIG_FILE];
        assert!(!rendered.contains("simulator"), "{rendered}");
        let pod = children.stateful_set.spec.unwrap().template.spec.unwrap();
        assert!(
            pod.volumes
                .unwrap()
                .iter()
                .all(|v| v.name != "simulator-scenarios")
        );
    }
}
