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
