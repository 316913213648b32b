//! docs/reference.md is the reference generated from the current CRD schema.

#[test]
fn committed_reference_matches_the_crd() {
    let committed = include_str!("../../docs/reference.md");
    let generated = redoline_crds::reference::markdown(&redoline_crds::crd());
    assert!(
        generated == committed,
        "docs/reference.md is stale: run `make docs` and commit the result"
    );
}

/// `mining.readOnly` only skips the flush-table write: the capture never lists a standby's
/// standby redo logs (`V$STANDBY_LOG`), so wherever the docs mention the field next to a
/// standby they must say that mining a standby is not supported (the reference and the API page
/// offered the field for standbys).
#[test]
fn read_only_is_never_offered_for_standbys() {
    for (name, text) in [
        ("docs/reference.md", include_str!("../../docs/reference.md")),
        ("docs/api.md", include_str!("../../docs/api.md")),
        (
            "docs/migration-debezium.md",
            include_str!("../../docs/migration-debezium.md"),
        ),
        ("docs/limits.md", include_str!("../../docs/limits.md")),
    ] {
        let mentions = text
            .lines()
            .filter(|line| line.contains("readOnly") || line.contains("read.only"));
        for line in mentions {
            if line.to_lowercase().contains("standby") {
                assert!(line.contains("not supported"), "{name}: {line}");
            }
        }
    }
}
