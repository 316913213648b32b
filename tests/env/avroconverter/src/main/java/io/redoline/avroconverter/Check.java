package io.redoline.avroconverter;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.utils.converter.AvroConverter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * The independent conversion of redoline's Debezium records to Avro: Kafka Connect's
 * JsonConverter (schemas.enable=true) reads our JSON record, and Apicurio Registry's Kafka Connect
 * {@code AvroConverter} (its port of Confluent's AvroData, default options: connect.meta.data on,
 * enhanced schema support off) writes it through the running registry, in Confluent's wire format
 * (magic byte 0, the 4-byte id of the registry's Confluent API, the Avro binary body).
 *
 * <p>{@code check JSON.jsonl AVRO.jsonl V2_URL CCOMPAT_URL}: line N of AVRO.jsonl must be our Avro
 * encoding of line N of JSON.jsonl, {@code {"topic","keySchema","key","valueSchema","value"}} with
 * the Avro bodies (what follows the magic byte and the schema id) in base64, null for no key and
 * for tombstones. For each key and value, the schema
 * the converter registered (read back from the Confluent API by the id in its framing) must equal
 * ours as parsed Avro schemas ({@link Schema#equals}: names, fields, defaults, logical types and
 * every property) with the same {@code connect.*} properties, and the Avro bodies must be equal
 * byte for byte. The schema ids are not compared: ours come from whichever registry encoded the
 * fixture. Each mismatch is printed with both sides; the run ends with
 * {@code matched <n> records} (exit 0) or {@code mismatched <m> of <n> records} (exit 1).
 *
 * <p>{@code make JSON.jsonl V2_URL CCOMPAT_URL}: prints the converter's own Avro lines for JSON.jsonl
 * in that format (its schemas read back from the registry), for proving the harness before
 * redoline's fixtures exist, and for looking at what the converter makes.
 *
 * <p>V2_URL is the registry's Apicurio v2 API root (what this converter speaks), CCOMPAT_URL its
 * Confluent API root.
 */
public final class Check {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  private final JsonConverter jsonKeys = new JsonConverter();
  private final JsonConverter jsonValues = new JsonConverter();
  private final AvroConverter<Object> avroKeys = new AvroConverter<>();
  private final AvroConverter<Object> avroValues = new AvroConverter<>();
  private final String ccompatUrl;
  private final Map<Integer, String> schemas = new HashMap<>();

  private Check(String v2Url, String ccompatUrl) {
    this.ccompatUrl = ccompatUrl;
    jsonKeys.configure(Map.of("schemas.enable", "true"), true);
    jsonValues.configure(Map.of("schemas.enable", "true"), false);
    Map<String, Object> avro = new HashMap<>();
    avro.put("apicurio.registry.url", v2Url);
    avro.put("apicurio.registry.auto-register", "true");
    // Confluent's framing with the id the Confluent API shows: Apicurio's content id.
    avro.put("apicurio.registry.as-confluent", "true");
    avro.put("apicurio.registry.use-id", "contentId");
    avro.put("apicurio.registry.headers.enabled", "false");
    avroKeys.configure(avro, true);
    avroValues.configure(avro, false);
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("make")) {
      new Check(args[2], args[3]).make(Path.of(args[1]));
    } else if (args.length == 5 && args[0].equals("check")) {
      System.exit(new Check(args[3], args[4]).check(Path.of(args[1]), Path.of(args[2])) ? 0 : 1);
    } else {
      System.err.println(
          "usage: Check check JSON.jsonl AVRO.jsonl V2_URL CCOMPAT_URL | make JSON.jsonl V2_URL CCOMPAT_URL");
      System.exit(2);
    }
  }

  /** One side (key or value) of a record in Avro: the schema text and the framed bytes. */
  private record Framed(String schema, byte[] bytes) {
    /** The Avro body, after the magic byte and the id. */
    byte[] body() {
      return Arrays.copyOfRange(bytes, 5, bytes.length);
    }
  }

  /**
   * The members of a JSON line as their raw text, cut out of the line by the parser's offsets:
   * the converter gets our bytes as we wrote them, never re-serialized.
   */
  private static Map<String, String> members(String line) throws IOException {
    Map<String, String> out = new HashMap<>();
    try (JsonParser parser = JSON.getFactory().createParser(line)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalArgumentException("not a JSON object: " + line);
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken token = parser.nextToken();
        int start = (int) parser.currentTokenLocation().getCharOffset();
        parser.skipChildren();
        int end = (int) parser.currentLocation().getCharOffset();
        out.put(name, token == JsonToken.VALUE_NULL ? null
            : token == JsonToken.VALUE_STRING ? parser.getText() : line.substring(start, end));
      }
    }
    return out;
  }

  /** The converter's Avro of one side of a JSON record, null when the side is null. */
  private Framed convert(String topic, String json, boolean key) throws IOException, InterruptedException {
    if (json == null) {
      return null;
    }
    JsonConverter reader = key ? jsonKeys : jsonValues;
    SchemaAndValue data = reader.toConnectData(topic, json.getBytes(StandardCharsets.UTF_8));
    if (data.value() instanceof Struct struct) {
      restoreNonFinite(struct, JSON.readTree(json).path("payload"), key ? "key" : "value");
    }
    byte[] bytes = (key ? avroKeys : avroValues).fromConnectData(topic, data.schema(), data.value());
    if (bytes == null) {
      return null;
    }
    if (bytes.length < 5 || bytes[0] != 0) {
      throw new IllegalStateException("the converter did not write Confluent's framing: " + hex(bytes));
    }
    return new Framed(schemaById(ByteBuffer.wrap(bytes, 1, 4).getInt()), bytes);
  }

  /**
   * JSON has no NaN or infinities: Debezium's JSON (Jackson's default) writes them as the strings
   * "NaN", "Infinity" and "-Infinity", which JsonConverter reads back as 0 (a text node's float
   * value). This puts the non-finite number back into the Connect value, where the record had one,
   * so that the converter sees the value the change carried; each is printed ({@code restored
   * <path>=<value>}) for the caller to see which.
   */
  private static void restoreNonFinite(Struct struct, JsonNode payload, String path) {
    for (org.apache.kafka.connect.data.Field field : struct.schema().fields()) {
      JsonNode node = payload.path(field.name());
      Object value = struct.get(field);
      String at = path + "." + field.name();
      switch (field.schema().type()) {
        case FLOAT32, FLOAT64 -> {
          if (node.isTextual()) {
            double number = switch (node.asText()) {
              case "NaN" -> Double.NaN;
              case "Infinity" -> Double.POSITIVE_INFINITY;
              case "-Infinity" -> Double.NEGATIVE_INFINITY;
              default -> throw new IllegalArgumentException(at + ": not a number: " + node);
            };
            struct.put(field, field.schema().type() == org.apache.kafka.connect.data.Schema.Type.FLOAT32
                ? (Object) (float) number : (Object) number);
            System.err.println("restored " + at + "=" + node.asText());
          }
        }
        case STRUCT -> {
          if (value instanceof Struct inner) {
            restoreNonFinite(inner, node, at);
          }
        }
        default -> { }
      }
    }
  }

  private String schemaById(int id) throws IOException, InterruptedException {
    String cached = schemas.get(id);
    if (cached != null) {
      return cached;
    }
    HttpRequest request = HttpRequest.newBuilder(URI.create(ccompatUrl + "/schemas/ids/" + id))
        .timeout(Duration.ofSeconds(30)).GET().build();
    HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException("schema " + id + ": HTTP " + response.statusCode() + " " + response.body());
    }
    String schema = JSON.readTree(response.body()).get("schema").asText();
    schemas.put(id, schema);
    return schema;
  }

  private void make(Path jsonFile) throws Exception {
    for (String line : lines(jsonFile)) {
      Map<String, String> record = members(line);
      String topic = record.get("topic");
      Framed key = convert(topic, record.get("key"), true);
      Framed value = convert(topic, record.get("value"), false);
      ObjectNode out = JSON.createObjectNode();
      out.put("topic", topic);
      out.put("keySchema", key == null ? null : key.schema());
      out.put("key", key == null ? null : Base64.getEncoder().encodeToString(key.body()));
      out.put("valueSchema", value == null ? null : value.schema());
      out.put("value", value == null ? null : Base64.getEncoder().encodeToString(value.body()));
      System.out.println(JSON.writeValueAsString(out));
    }
  }

  private boolean check(Path jsonFile, Path avroFile) throws Exception {
    List<String> jsonLines = lines(jsonFile);
    List<String> avroLines = lines(avroFile);
    if (jsonLines.size() != avroLines.size()) {
      System.out.println("the JSON file has " + jsonLines.size() + " records, the Avro file "
          + avroLines.size() + ": they must pair line by line");
      return false;
    }
    int mismatched = 0;
    for (int i = 0; i < jsonLines.size(); i++) {
      Map<String, String> json = members(jsonLines.get(i));
      JsonNode ours = JSON.readTree(avroLines.get(i));
      String topic = json.get("topic");
      List<String> problems = new ArrayList<>();
      if (!topic.equals(ours.path("topic").asText())) {
        problems.add("topic: JSON " + topic + ", Avro " + ours.path("topic").asText());
      }
      compare("key", convert(topic, json.get("key"), true), text(ours, "keySchema"), text(ours, "key"), problems);
      compare("value", convert(topic, json.get("value"), false), text(ours, "valueSchema"), text(ours, "value"), problems);
      if (!problems.isEmpty()) {
        mismatched++;
        System.out.println("---- record " + (i + 1) + " (" + topic + ") differs:");
        problems.forEach(p -> System.out.println("  " + p.replace("\n", "\n  ")));
      }
    }
    if (mismatched == 0) {
      System.out.println("matched " + jsonLines.size() + " records");
      return true;
    }
    System.out.println("mismatched " + mismatched + " of " + jsonLines.size() + " records");
    return false;
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? null : value.asText();
  }

  /** Compares the converter's side with ours (schema text, base64 framed bytes). */
  private static void compare(String side, Framed theirs, String ourSchema, String ourBase64, List<String> problems) {
    if (theirs == null || ourBase64 == null) {
      if (theirs != null || ourBase64 != null) {
        problems.add(side + ": the converter wrote " + (theirs == null ? "null" : hex(theirs.body()))
            + ", we wrote " + (ourBase64 == null ? "null" : hex(Base64.getDecoder().decode(ourBase64))));
      }
      return;
    }
    if (ourSchema == null) {
      problems.add(side + ": our record has no schema");
      return;
    }
    Schema expected = new Schema.Parser().parse(theirs.schema());
    Schema actual;
    try {
      actual = new Schema.Parser().parse(ourSchema);
    } catch (RuntimeException e) {
      problems.add(side + " schema: ours does not parse: " + e.getMessage() + "\n" + ourSchema);
      return;
    }
    if (!expected.equals(actual) || !connectProps(expected).equals(connectProps(actual))) {
      problems.add(side + " schema differs:\n  converter: " + expected.toString(true).replace("\n", "\n  ")
          + "\n  ours:      " + actual.toString(true).replace("\n", "\n  ")
          + "\n  first difference: " + firstDifference(expected.toString(true), actual.toString(true)));
    }
    // Our fixtures hold the Avro body alone: the id in front of it is whichever registry's.
    byte[] ourBody = Base64.getDecoder().decode(ourBase64);
    byte[] theirBody = theirs.body();
    if (!Arrays.equals(theirBody, ourBody)) {
      int at = Arrays.mismatch(theirBody, ourBody);
      problems.add(side + " body differs at byte " + at + ":\n  converter: " + hex(theirBody)
          + "\n  ours:      " + hex(ourBody));
    }
  }

  /** Every connect.* property of the schema and of the schemas within it, by path. */
  private static Map<String, Object> connectProps(Schema schema) {
    Map<String, Object> out = new TreeMap<>();
    collect(schema, "", out, new ArrayList<>());
    return out;
  }

  private static void collect(Schema schema, String path, Map<String, Object> out, List<Schema> seen) {
    if (seen.stream().anyMatch(s -> s == schema)) {
      return;
    }
    seen.add(schema);
    schema.getObjectProps().forEach((k, v) -> {
      if (k.startsWith("connect.")) {
        out.put(path + "@" + k, v);
      }
    });
    switch (schema.getType()) {
      case RECORD -> schema.getFields().forEach(f -> collect(f.schema(), path + "." + f.name(), out, seen));
      case UNION -> {
        for (int i = 0; i < schema.getTypes().size(); i++) {
          collect(schema.getTypes().get(i), path + "|" + i, out, seen);
        }
      }
      case ARRAY -> collect(schema.getElementType(), path + "[]", out, seen);
      case MAP -> collect(schema.getValueType(), path + "{}", out, seen);
      default -> { }
    }
  }

  private static String firstDifference(String a, String b) {
    int at = 0;
    while (at < a.length() && at < b.length() && a.charAt(at) == b.charAt(at)) {
      at++;
    }
    int from = Math.max(0, at - 60);
    return "at character " + at + ": converter …" + a.substring(from, Math.min(a.length(), at + 60))
        + "… ours …" + b.substring(from, Math.min(b.length(), at + 60)) + "…";
  }

  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(String.format("%02x", b));
    }
    return out.toString();
  }

  private static List<String> lines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
        .filter(l -> !l.isBlank()).toList();
  }
}
