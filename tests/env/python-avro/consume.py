"""Reads Avro records from Kafka with Confluent's Python client, as a consumer in another language
would: confluent_kafka's AvroDeserializer fetches each writer schema from the schema registry by
the id in the record's framing and decodes with fastavro. Prints one JSON line per record:

    {"topic", "partition", "offset", "keySchemaId", "valueSchemaId", "key", "value"}

Decoded values are made JSON: a decimal (Avro's decimal logical type) becomes its plain text
("10.50"), bytes their base64, dates, times and timestamps their ISO 8601 text, NaN and the
infinities the strings "NaN", "Infinity" and "-Infinity" (as Debezium's JSON writes them); a
tombstone's value and a missing key are null. With --raw, Avro's logical types are left
undecoded (fastavro's logical readers off): a decimal stays its unscaled bytes, a timestamp its
number, as Kafka Connect's JSON carries them, so that the output compares with the JSON encoding's
payloads field for field. Records are read from the start of each topic, committed
transactions only (read_committed: what the capture writes is transactional), until --count
records have been read (exit 0) or --timeout seconds pass (exit 1, after printing what came).

Run it with tests/env/python-avro/venv.sh consume ARGS.
"""

import argparse
import base64
import datetime
import decimal
import json
import math
import struct
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaError
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext


def plain(value):
    """The decoded Avro datum as JSON values (see the module docs)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def schema_id(data):
    """The schema id of Confluent's framing (magic byte 0, 4-byte big-endian id), or None."""
    if data is None or len(data) < 5 or data[0] != 0:
        return None
    return struct.unpack(">I", data[1:5])[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True, help="Kafka bootstrap.servers")
    parser.add_argument("--registry", required=True, help="the registry's Confluent API root")
    parser.add_argument("--ca", help="CA file for an https registry")
    parser.add_argument("--basic", help="USER:PASSWORD for a registry that requires it")
    parser.add_argument("--topics", required=True, help="comma-separated topics")
    parser.add_argument("--count", type=int, required=True, help="records to read")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up")
    parser.add_argument("--group", default=None, help="consumer group (default: a fresh one)")
    parser.add_argument("--raw", action="store_true", help="leave Avro's logical types undecoded")
    args = parser.parse_args()
    if args.raw:
        import fastavro.read
        fastavro.read.LOGICAL_READERS.clear()

    # A request the registry never answers (seen once from Apicurio under load, on a kept-alive
    # connection) would block the read forever: time it out, and the client retries it.
    registry_conf = {"url": args.registry, "timeout": 10}
    if args.ca:
        registry_conf["ssl.ca.location"] = args.ca
    if args.basic:
        registry_conf["basic.auth.user.info"] = args.basic
    registry = SchemaRegistryClient(registry_conf)
    deserializer = AvroDeserializer(registry)

    consumer = Consumer({
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group or f"redoline-python-avro-{uuid.uuid4()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    })
    consumer.subscribe(args.topics.split(","))
    read = 0
    deadline = time.monotonic() + args.timeout
    try:
        while read < args.count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                # Topics the capture has not created yet come and go while it starts.
                if message.error().code() in (KafkaError._PARTITION_EOF,
                                              KafkaError.UNKNOWN_TOPIC_OR_PART):
                    continue
                raise RuntimeError(f"consuming: {message.error()}")
            topic = message.topic()
            key = message.key()
            value = message.value()
            decoded_key = None if key is None else deserializer(
                key, SerializationContext(topic, MessageField.KEY))
            decoded_value = None if value is None else deserializer(
                value, SerializationContext(topic, MessageField.VALUE))
            print(json.dumps({
                "topic": topic,
                "partition": message.partition(),
                "offset": message.offset(),
                "keySchemaId": schema_id(key),
                "valueSchemaId": schema_id(value),
                "key": plain(decoded_key),
                "value": plain(decoded_value),
            }, sort_keys=True), flush=True)
            read += 1
    finally:
        consumer.close()
    if read < args.count:
        print(f"consume.py: read {read} of {args.count} records within {args.timeout}s",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
