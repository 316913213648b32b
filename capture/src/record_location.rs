//! Where a record of the capture's own topics (the bookmark topic, the schema history topic)
//! was read from, and the stop that names it when the record cannot be read. Both the sink's
//! bookmark and the schema history read such records, so neither owns this.

use redoline_crds::StopCode;

use crate::stop::Stop;

/// Where a bookmark record was read from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLocation {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// CDC-5002 naming where the unreadable record is.
pub fn unreadable(at: &RecordLocation, why: &str) -> Stop {
    Stop::new(
        StopCode::BookmarkUnreadable,
        format!(
            "the record at {}/{} offset {} cannot be read: {why}",
            at.topic, at.partition, at.offset
        ),
    )
    .with_detail("topic", at.topic.clone())
    .with_detail("partition", at.partition)
    .with_detail("offset", at.offset)
}
