//! Every stop code has exactly one runbook entry, headed `## CDC-NNNN Reason`.

use redoline_crds::StopCode;

const RUNBOOK: &str = include_str!("../../docs/runbook.md");

#[test]
fn every_stop_code_has_one_runbook_entry() {
    let headings: Vec<&str> = RUNBOOK
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    let expected: Vec<String> = StopCode::ALL
        .iter()
        .map(|c| format!("{} {}", c.code(), c.reason()))
        .collect();
    assert_eq!(
        headings, expected,
        "docs/runbook.md headings must follow StopCode::ALL"
    );
}
