package io.redoline.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.debezium.config.Configuration;
import io.debezium.connector.oracle.OracleConnectorConfig;
import io.debezium.connector.oracle.logminer.parser.LogMinerDmlEntry;
import io.debezium.connector.oracle.logminer.parser.LogMinerDmlParser;
import io.debezium.relational.Column;
import io.debezium.relational.Table;
import io.debezium.relational.TableEditor;
import io.debezium.relational.TableId;

/**
 * Times Debezium's LogMinerDmlParser over the corpus the redoline redo_parse bench writes.
 *
 * <p>Input: one statement a line, {@code SHAPE<TAB>COLUMNS<TAB>SQL_REDO}; the table has columns
 * C1..C{COLUMNS}. Output: one line a group, {@code debezium SHAPE COLUMNS STATEMENTS_PER_SECOND
 * FAILED}, where FAILED counts statements the parser rejected in a checking pass before timing.
 * Each figure is the best of six 250 ms rounds after two seconds of JIT warm-up, like the Rust
 * bench (best of six rounds after its warm-up).
 */
public final class DebeziumParserBench {

    private static final long WARMUP_NANOS = 2_000_000_000L;
    private static final long ROUND_NANOS = 250_000_000L;
    private static final int ROUNDS = 6;

    private DebeziumParserBench() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: DebeziumParserBench CORPUS_FILE");
            System.exit(2);
        }
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            String[] fields = line.split("\t", 3);
            if (fields.length != 3) {
                continue;
            }
            groups.computeIfAbsent(fields[0] + " " + fields[1], key -> new ArrayList<>()).add(fields[2]);
        }

        OracleConnectorConfig config = new OracleConnectorConfig(Configuration.create()
                .with("topic.prefix", "bench")
                .with("database.hostname", "localhost")
                .with("database.user", "bench")
                .with("database.dbname", "BENCH")
                .build());
        LogMinerDmlParser parser = new LogMinerDmlParser(config);

        long sink = 0;
        for (Map.Entry<String, List<String>> group : groups.entrySet()) {
            int columns = Integer.parseInt(group.getKey().split(" ")[1]);
            Table table = table(columns);
            String[] statements = group.getValue().toArray(new String[0]);

            int failed = 0;
            for (String sql : statements) {
                try {
                    LogMinerDmlEntry entry = parser.parse(sql, table);
                    if (entry == null) {
                        failed++;
                    }
                }
                catch (RuntimeException e) {
                    failed++;
                }
            }
            if (failed == statements.length) {
                System.out.printf("debezium %s n/a %d%n", group.getKey(), failed);
                continue;
            }

            sink += run(parser, table, statements, WARMUP_NANOS)[1];
            double perSecond = 0;
            for (int round = 0; round < ROUNDS; round++) {
                long[] measured = run(parser, table, statements, ROUND_NANOS);
                perSecond = Math.max(perSecond, measured[0] * 1e9 / measured[2]);
                sink += measured[1];
            }
            System.out.printf("debezium %s %.0f %d%n", group.getKey(), perSecond, failed);
        }
        // Keeps the parse results observable so the JIT cannot drop the work.
        System.err.println("checksum " + sink);
    }

    /** Parses the statements round after round for at least {@code nanos}: {count, checksum, elapsed}. */
    private static long[] run(LogMinerDmlParser parser, Table table, String[] statements, long nanos) {
        long count = 0;
        long checksum = 0;
        long start = System.nanoTime();
        long elapsed;
        do {
            for (String sql : statements) {
                try {
                    LogMinerDmlEntry entry = parser.parse(sql, table);
                    checksum += entry.getNewValues().length + entry.getOldValues().length;
                }
                catch (RuntimeException e) {
                    checksum--;
                }
            }
            count += statements.length;
            elapsed = System.nanoTime() - start;
        } while (elapsed < nanos);
        return new long[]{ count, checksum, elapsed };
    }

    private static Table table(int columns) {
        TableEditor editor = Table.editor().tableId(new TableId("BENCH", "BENCH", "T"));
        for (int index = 1; index <= columns; index++) {
            editor.addColumn(Column.editor()
                    .name("C" + index)
                    .position(index)
                    .jdbcType(Types.VARCHAR)
                    .type("VARCHAR2")
                    .optional(true)
                    .create());
        }
        return editor.create();
    }
}
