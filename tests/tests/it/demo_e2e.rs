//! The Kubernetes demo's flow (`make demo`, `redoline_tests::demo`), asserted: a real control
//! plane, node and Kafka broker, the operator installed by the Helm chart from its image, the
//! capture pod run by the kubelet from the capture image, on the Oracle simulator with a live
//! workload.

use redoline_tests::demo::{self, Options};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_goes_ready_breaches_the_sla_and_reports_a_typed_stop() {
    let report = demo::run(&Options {
        narrate: false,
        keep: false,
    })
    .await
    .expect("the demo runs to its end");

    // Streaming: events of every captured table, read back read_committed.
    assert_eq!(report.ready_message, "the capture is streaming");
    assert_eq!(report.events_by_topic.len(), 3);
    for (topic, count) in &report.events_by_topic {
        assert!(*count > 0, "no events in {topic}");
    }
    let event: serde_json::Value =
        serde_json::from_str(report.sample_event.as_deref().expect("an event")).unwrap();
    assert_eq!(event["source"]["connector"], "oracle");
    assert!(
        ["c", "u", "d"].contains(&event["op"].as_str().unwrap()),
        "{event}"
    );
    assert!(
        report.describe_ready.contains("Streaming"),
        "{}",
        report.describe_ready
    );

    // The pod ran on the node from the image built here.
    let node = redoline_tests::node::NodeEnv::from_env().unwrap();
    assert_eq!(report.running_pod.node, node.name);
    assert!(
        report.running_pod.image.ends_with(&node.capture_image),
        "{:?}",
        report.running_pod
    );
    assert!(
        report.running_pod.container_id.starts_with("containerd://"),
        "{:?}",
        report.running_pod
    );

    // The quiet RAC instance breaches the SLA; the log switches restore it.
    assert!(
        report.breach_message.contains("exceeds the SLA of 10s"),
        "{}",
        report.breach_message
    );
    assert!(report.describe_breach.contains("LagSLABreached"));
    assert!(
        report.restored_message.contains("within the SLA of 10s"),
        "{}",
        report.restored_message
    );

    // The batch job: CDC-4001 in the termination message, the status and an Event.
    // The kubelet read the termination message of the container that ended.
    assert_ne!(report.stop.exit_code, 0);
    assert_eq!(report.stop.reason.as_deref(), Some("Error"));
    let message: serde_json::Value = serde_json::from_str(
        report
            .stop
            .message
            .as_deref()
            .expect("a termination message"),
    )
    .expect("the termination message is JSON");
    assert_eq!(message["code"], "CDC-4001");
    assert_eq!(message["reason"], "SpillCapacityExceeded");
    let largest = &message["details"]["transactions"][0];
    assert!(
        largest["diskBytes"].as_u64().unwrap() > 30 << 20,
        "{message}"
    );
    assert_eq!(report.last_stop_code.as_deref(), Some("CDC-4001"));
    assert!(report.stalled_message.starts_with("CDC-4001"));
    assert!(report.describe_stopped.contains("SpillCapacityExceeded"));
    let position = |reason: &str| {
        report
            .event_reasons
            .iter()
            .position(|r| r == reason)
            .unwrap_or_else(|| panic!("no {reason} Event in {:?}", report.event_reasons))
    };
    assert!(position("PrerequisitesMet") < position("LagSLABreached"));
    assert!(position("LagSLABreached") < position("LagSLARecovered"));
    assert!(position("LagSLARecovered") < position("SpillCapacityExceeded"));
}
