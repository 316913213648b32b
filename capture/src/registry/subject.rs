//! Subject names: where in the registry a schema's versions live. The strategies are
//! Confluent's (`io.confluent.kafka.serializers.subject`): `TopicNameStrategy` names
//! `<topic>-key` / `<topic>-value`, `RecordNameStrategy` the record's full name whatever the
//! topic or role, `TopicRecordNameStrategy` `<topic>-<full name>`.

use redoline_crds::v1alpha1::SubjectNameStrategy;

use super::{SchemaRole, SchemaUse};

/// The subject `strategy` gives a schema used as `usage` says.
pub fn subject(strategy: SubjectNameStrategy, usage: SchemaUse<'_>) -> String {
    match strategy {
        SubjectNameStrategy::TopicName => {
            let suffix = match usage.role {
                SchemaRole::Key => "key",
                SchemaRole::Value => "value",
            };
            format!("{}-{suffix}", usage.topic)
        }
        SubjectNameStrategy::RecordName => usage.record_name.to_owned(),
        SubjectNameStrategy::TopicRecordName => format!("{}-{}", usage.topic, usage.record_name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(role: SchemaRole) -> SchemaUse<'static> {
        SchemaUse {
            topic: "orders.APP.T",
            record_name: "orders.APP.T.Envelope",
            role,
        }
    }

    #[test]
    fn each_strategy_names_subjects_as_confluents_does() {
        let names = |strategy| {
            (
                subject(strategy, usage(SchemaRole::Key)),
                subject(strategy, usage(SchemaRole::Value)),
            )
        };
        assert_eq!(
            names(SubjectNameStrategy::TopicName),
            ("orders.APP.T-key".into(), "orders.APP.T-value".into())
        );
        // The record's name alone: a key and a value record of the same name share a subject,
        // as they do under Confluent's RecordNameStrategy.
        assert_eq!(
            names(SubjectNameStrategy::RecordName),
            (
                "orders.APP.T.Envelope".into(),
                "orders.APP.T.Envelope".into()
            )
        );
        assert_eq!(
            names(SubjectNameStrategy::TopicRecordName),
            (
                "orders.APP.T-orders.APP.T.Envelope".into(),
                "orders.APP.T-orders.APP.T.Envelope".into()
            )
        );
    }
}
