//! The local demo (`make demo-local`, examples/demo-local.sh), one of the two commands README.md
//! gives a newcomer, run as written: the capture alone on the simulator into a JSON Lines file.
//! Nothing ran it, and a change to the simulator made it stop with CDC-2002 unnoticed (a row
//! written before the scenario's DDL, first mined after it, comes by object number; the demo now
//! mines the first part before the database goes on).

use std::path::Path;
use std::time::Duration;

use redoline_tests::process::run_script;

#[test]
fn the_local_demo_resumes_past_its_ddl_without_repeats_and_ends_with_a_typed_stop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = std::env::current_exe().unwrap();
    let capture = redoline_tests::capture_binary_beside(&exe).unwrap();
    let output = run_script(
        &root.join("examples/demo-local.sh"),
        &[] as &[&str],
        &[
            ("REDOLINE_CAPTURE_BINARY", capture.to_str().unwrap()),
            ("RUST_LOG", "error"),
        ],
        Duration::from_secs(300),
    )
    .unwrap();
    // The doctor passes, then the first run writes the first part's five events.
    assert!(output.contains("all 16 checks passed"), "{output}");
    assert!(
        output.contains(r#""restart_scn":1000017"#),
        "the bookmark after the first part: {output}"
    );
    // The second run follows the DDL: its event, the update with the added column, the delete.
    assert!(
        output.contains("ddl SALES.ORDERS     ALTER TABLE SALES.ORDERS ADD (PRIORITY NUMBER(1))"),
        "{output}"
    );
    assert!(output.contains(r#""STATUS": "SHIPPED""#), "{output}");
    assert!(output.contains(r#""PRIORITY": 1}"#), "{output}");
    assert!(output.contains("8 events, none twice"), "{output}");
    assert!(
        output.contains("events before: 8, after the third run: 8"),
        "{output}"
    );
    // The typed stop, as the termination message Kubernetes would show.
    assert!(output.contains("exit status 3"), "{output}");
    assert!(output.contains(r#""code":"CDC-4001""#), "{output}");
    assert!(!output.contains("CDC-2002"), "{output}");
}
