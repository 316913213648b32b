package io.redoline.jsonconverter;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import io.debezium.data.VariableScaleDecimal;
import io.debezium.transforms.ExtractNewRecordState;

/**
 * Reads redoline's Debezium-format records back with Kafka Connect's JsonConverter
 * (schemas.enable=true), as a Kafka Connect sink or a schema-aware consumer would.
 *
 * <p>Change event values must be envelopes from connector {@code oracle}; values without an
 * {@code op} field are transaction metadata records and must carry a {@code status}.
 *
 * <p>Input: JSON Lines, each {"topic":..,"key":<key JSON or null>,"value":<value JSON or null>}.
 * The key and value text is handed to the converter byte for byte (cut out of the line by the
 * parser's offsets, never re-serialized). Any conversion error, a struct that fails validation,
 * or a Decimal / Timestamp field that does not come back as BigDecimal / java.util.Date fails
 * the run (exit 1). For each value it prints the decoded numbers and times, one per line:
 * {@code decimal <op> <field>=<plain>}, {@code variable <op> <field>=<plain>},
 * {@code timestamp <op> <field>=<epoch ms>}, then {@code checked <n> records}.
 *
 * <p>Every data record (and every tombstone) also goes through Debezium's own
 * {@code ExtractNewRecordState} SMT twice: with its defaults, and with deletes rewritten and
 * {@code add.fields} naming every Oracle source field, which the SMT reads from the source struct
 * by name (a field the schema lacks fails the run). The second prints
 * {@code flattened <op> <field>=<value>} for the added fields. {@code VariableScaleDecimal} values
 * are decoded with Debezium's own {@code VariableScaleDecimal.toLogical}.
 *
 * <p>The structure each record was read with is printed too, for checks of schema evolution:
 * {@code row schema <topic> <op> scn=<source.scn> envelope=<name>/<version> value=<row schema
 * name> fields=<row fields> key=<key fields>} for each change event, and for each table change of
 * a schema change event {@code table change scn=<source.scn> <type> <id>
 * columns=<name>@<position>,... key=<primary key columns>}.
 */
public final class Check {
  private Check() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: Check RECORDS.jsonl");
      System.exit(2);
    }
    JsonConverter keys = new JsonConverter();
    keys.configure(Map.of("schemas.enable", "true"), true);
    JsonConverter values = new JsonConverter();
    values.configure(Map.of("schemas.enable", "true"), false);
    ExtractNewRecordState<SourceRecord> unwrap = new ExtractNewRecordState<>();
    unwrap.configure(Map.of());
    ExtractNewRecordState<SourceRecord> unwrapWithSource = new ExtractNewRecordState<>();
    unwrapWithSource.configure(Map.of(
        "delete.tombstone.handling.mode", "rewrite",
        "add.fields", String.join(",", ADDED_FIELDS)));
    JsonFactory factory = new JsonFactory();
    List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
    int checked = 0;
    int lineNumber = 0;
    for (String line : lines) {
      lineNumber++;
      if (line.isBlank()) {
        continue;
      }
      String topic = null;
      String key = null;
      String value = null;
      try (JsonParser parser = factory.createParser(line)) {
        expect(parser.nextToken() == JsonToken.START_OBJECT, lineNumber, "an object");
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String name = parser.getCurrentName();
          JsonToken token = parser.nextToken();
          int start = (int) parser.getTokenLocation().getCharOffset();
          parser.skipChildren();
          int end = (int) parser.getCurrentLocation().getCharOffset();
          String raw = line.substring(start, end);
          switch (name) {
            case "topic" -> topic = parser.getText();
            case "key" -> key = token == JsonToken.VALUE_NULL ? null : raw;
            case "value" -> value = token == JsonToken.VALUE_NULL ? null : raw;
            default -> fail(lineNumber, "unexpected member " + name);
          }
        }
      }
      expect(topic != null, lineNumber, "a topic");
      SchemaAndValue keyData = keys.toConnectData(topic, bytes(key));
      SchemaAndValue valueData = values.toConnectData(topic, bytes(value));
      boolean dataTopic = topic.split("\\.").length == 3 && !topic.endsWith(".transaction");
      if (dataTopic) {
        SourceRecord record = new SourceRecord(null, null, topic, 0,
            keyData.schema(), keyData.value(), valueData.schema(), valueData.value());
        unwrap.apply(record);
        SourceRecord flat = unwrapWithSource.apply(record);
        if (flat != null && flat.value() instanceof Struct row) {
          row.validate();
          String op = row.schema().field("__op") != null ? row.getString("__op") : "?";
          for (String added : ADDED_FIELDS) {
            String name = "__" + added.replace('.', '_');
            expect(row.schema().field(name) != null, lineNumber, "the added field " + name);
            System.out.println("flattened " + op + " " + name + "=" + row.get(name));
          }
        }
      }
      if (key != null) {
        expect(keyData.value() instanceof Struct, lineNumber, "a struct key");
        ((Struct) keyData.value()).validate();
        describe("key", (Struct) keyData.value(), lineNumber);
      }
      if (value != null) {
        expect(valueData.value() instanceof Struct, lineNumber, "a struct value");
        Struct envelope = (Struct) valueData.value();
        envelope.validate();
        if (envelope.schema().field("tableChanges") != null) {
          // A schema change event: the DDL and the structure it made.
          expect(envelope.getString("ddl") != null, lineNumber, "a DDL statement");
          for (Object change : envelope.getArray("tableChanges")) {
            Struct table = ((Struct) change).getStruct("table");
            expect(!table.getArray("columns").isEmpty(), lineNumber, "the table's columns");
          }
          System.out.println("schema change " + envelope.getString("ddl"));
          String ddlScn = envelope.getStruct("source").getString("scn");
          for (Object change : envelope.getArray("tableChanges")) {
            Struct tableChange = (Struct) change;
            Struct table = tableChange.getStruct("table");
            List<String> columns = new ArrayList<>();
            for (Object column : table.getArray("columns")) {
              Struct c = (Struct) column;
              columns.add(c.getString("name") + "@" + c.getInt32("position"));
            }
            List<Object> primaryKey = table.getArray("primaryKeyColumnNames");
            System.out.println("table change scn=" + ddlScn + " " + tableChange.getString("type")
                + " " + tableChange.getString("id") + " columns=" + String.join(",", columns)
                + " key=" + (primaryKey == null ? "" : joined(primaryKey)));
          }
          checked++;
          continue;
        }
        if (envelope.schema().field("op") == null && envelope.schema().field("status") == null) {
          // A heartbeat: its time alone.
          expect(envelope.getInt64("ts_ms") != null, lineNumber, "a heartbeat time");
          checked++;
          continue;
        }
        if (envelope.schema().field("op") == null) {
          // Not a change event: a transaction metadata record.
          expect(envelope.getString("status") != null, lineNumber, "a transaction status");
          checked++;
          continue;
        }
        String op = envelope.getString("op");
        // The structure this event was written with, as the converter read it: the row schema
        // of `before` and `after` (one schema, Debezium's `<topic>.Value`), its envelope's
        // name and version, and the key's fields.
        Schema rowSchema = envelope.schema().field("after").schema();
        expect(rowSchema.equals(envelope.schema().field("before").schema()), lineNumber,
            "one row schema for before and after");
        System.out.println("row schema " + topic + " " + op
            + " scn=" + envelope.getStruct("source").getString("scn")
            + " envelope=" + envelope.schema().name() + "/" + envelope.schema().version()
            + " value=" + rowSchema.name() + " fields=" + fieldNames(rowSchema)
            + " key=" + (keyData.schema() == null ? "" : fieldNames(keyData.schema())));
        for (String image : new String[] {"before", "after"}) {
          Struct row = envelope.getStruct(image);
          if (row != null) {
            row.validate();
            describe(op, row, lineNumber);
          }
        }
        Struct source = envelope.getStruct("source");
        expect("oracle".equals(source.getString("connector")), lineNumber, "connector oracle");
      }
      checked++;
    }
    System.out.println("checked " + checked + " records");
  }

  private static void describe(String op, Struct row, int lineNumber) {
    for (Field field : row.schema().fields()) {
      Object v = row.get(field);
      if (v == null) {
        continue;
      }
      Schema schema = field.schema();
      String name = schema.name() == null ? "" : schema.name();
      switch (name) {
        case Decimal.LOGICAL_NAME -> {
          expect(v instanceof BigDecimal, lineNumber, field.name() + " as BigDecimal");
          System.out.println("decimal " + op + " " + field.name() + "=" + ((BigDecimal) v).toPlainString());
        }
        case Timestamp.LOGICAL_NAME -> {
          expect(v instanceof Date, lineNumber, field.name() + " as java.util.Date");
          System.out.println("timestamp " + op + " " + field.name() + "=" + ((Date) v).getTime());
        }
        case "io.debezium.data.VariableScaleDecimal" -> {
          BigDecimal d = VariableScaleDecimal.toLogical((Struct) v).getDecimalValue()
              .orElseThrow(() -> new IllegalStateException("line " + lineNumber + ": no value"));
          System.out.println("variable " + op + " " + field.name() + "=" + d.toPlainString());
        }
        default -> { }
      }
    }
  }

  /** Every Oracle source field Debezium 3.6 writes, as ExtractNewRecordState names them. */
  private static final List<String> ADDED_FIELDS = List.of(
      "op", "source.ts_ms", "source.snapshot", "source.scn", "source.commit_scn",
      "source.txId", "source.txSeq", "source.start_scn", "source.start_ts_ms",
      "source.commit_ts_ms", "source.lcr_position", "source.redo_sql", "source.rs_id",
      "source.ssn", "source.redo_thread", "source.user_name", "source.row_id");

  private static String fieldNames(Schema schema) {
    List<String> names = new ArrayList<>();
    for (Field field : schema.fields()) {
      names.add(field.name());
    }
    return String.join(",", names);
  }

  private static String joined(List<Object> items) {
    List<String> texts = new ArrayList<>();
    for (Object item : items) {
      texts.add(String.valueOf(item));
    }
    return String.join(",", texts);
  }

  private static byte[] bytes(String text) {
    return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  private static void expect(boolean ok, int lineNumber, String what) {
    if (!ok) {
      fail(lineNumber, "expected " + what);
    }
  }

  private static void fail(int lineNumber, String message) {
    throw new IllegalStateException("line " + lineNumber + ": " + message);
  }
}
