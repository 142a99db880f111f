// HeaderGolden writes what Kafka's SimpleHeaderConverter makes of header
// bytes (parse.jsonl: Values.parseString, with the bytes fallback) and
// the bytes it writes for Connect values (format.tsv:
// Values.convertToString).
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.data.Values;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;

final class HeaderGolden {
    private final Path dir;
    private final SimpleHeaderConverter conv = new SimpleHeaderConverter();
    private final List<Map<String, Object>> parse = new ArrayList<>();
    private final StringBuilder format = new StringBuilder();

    HeaderGolden(Path dir) {
        this.dir = dir;
        conv.configure(Map.of());
    }

    void parse(String name, byte[] in) {
        Map<String, Object> rec = new LinkedHashMap<>();
        rec.put("name", name);
        rec.put("input", Gen.b64(in));
        try {
            SchemaAndValue sv = conv.toConnectHeader("topic", "key", in);
            rec.put("schema", sv == null ? "null" : Dump.schema(sv.schema()));
            rec.put("value", sv == null ? "null" : Dump.value(sv.value()));
            // Formatting the parsed value again (maps in their parsed
            // order: LinkedHashMap).
            if (sv != null && sv.value() != null) {
                rec.put("format", Values.convertToString(sv.schema(), sv.value()));
            }
        } catch (Exception e) {
            rec.put("error", Gen.oneLine(e.getMessage()));
        }
        parse.add(rec);
    }

    void parse(String name, String in) {
        parse(name, in.getBytes(StandardCharsets.UTF_8));
    }

    void format(String name, Schema s, Object v) {
        String out;
        try {
            byte[] b = conv.fromConnectHeader("topic", "key", s, v);
            out = b == null ? "null" : "ok:" + Gen.b64(b);
        } catch (Exception e) {
            out = "error: " + Gen.oneLine(e.getMessage());
        }
        format.append(name).append('\t').append(Dump.schema(s)).append('\t').append(Dump.value(v)).append('\t').append(out).append('\n');
    }

    void run() throws IOException {
        Files.createDirectories(dir);
        String[] inputs = {
            "", " ", "hello", "hello world", "  padded  ", "true", "false", "TRUE", "null", "NULL", "true}", "{true", "true false",
            "0", "1", "-1", "127", "128", "-128", "-129", "32767", "32768", "2147483647", "2147483648", "-2147483649",
            "9223372036854775807", "9223372036854775808", "-9223372036854775809", "99999999999999999999", "1.5", "-1.5", "0.1",
            "1.0", "1.00", "100.000", "1e3", "1E3", "1e-3", "1.5e3", "1e30", "1e39", "1e40", "1e308", "1e309", "1e400", "-1e400",
            "1e-50", "1e-400", "3.4028235e38", "3.4028236e38", "1.7976931348623157e308", "+5", "+5.5", "-0", "-0.0", "007", "0x10",
            "1_000", "1,000", "1.2.3", "12abc", "5 ", " 5", "- 5", "1e", ".5", "5.", "+.5",
            "[]", "[1]", "[1,2,3]", "[1, 2, 3]", "[ 1 , 2 ]", "[1,2.5]", "[1,300]", "[1,70000]", "[1,3000000000]", "[1.5,2.5e300]",
            "[1,\"a\"]", "[\"a\",\"b\"]", "[true,false]", "[true,1]", "[null]", "[null,1]", "[1,null]", "[[1],[2,3]]", "[[1],[\"a\"]]",
            "[{},{}]", "[{\"a\":1}]", "[1,]", "[,1]", "[1 2]", "[1", "[", "]", "[[]", "[\"a]", "[\"a\\\"b\"]", "[a]", "[\"\"]",
            "{}", "{\"a\":1}", "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":\"x\"}", "{\"a\":null}", "{1:2}", "{1:\"a\",2:\"b\"}", "{\"a\":1,2:3}",
            "{\"a\":[1,2]}", "{\"a\":{\"b\":true}}", "{\"a\"}", "{\"a\":}", "{:1}", "{\"a\":1,}", "{,}", "{\"a\":1", "{null:1}",
            "{\"a\" : 1 , \"b\" : 2}", "{a:1}", "{\"a\":1 \"b\":2}", "{\"a\":1}}", "{\"a\":1}x",
            "\"quoted\"", "\"quoted", "say \"hi\"", "\"a\",\"b\"", "a,b", "a:b", "a\\:b", "a\\,b", "\\\\", "\\",
            "2024-01-15", "1970-01-01", "2024-13-45", "2024-1-1xx", "0001-01-01", "9999-12-31", "2024-02-30",
            "12:34:56.789Z", "00:00:00.000Z", "23:59:59.999Z", "25:61:61.999Z", "12:34:56.789X", "12\\:34\\:56.789Z",
            "2024-01-15T12:34:56.789Z", "2024-01-15T12\\:34\\:56.789Z", "2024-01-15T12:34:56.789", "2024-01-15T25:00:00.000Z",
            "[2024-01-15]", "[\"2024-01-15\"]", "[12:34:56.789Z]", "{\"d\":\"2024-01-15\"}", "[2024-01-15T12:34:56.789Z]",
            "\"2024-01-15\"", "\"12:34:56.789Z\"", "2024-01-15 extra", "1 2", "true 1",
            "héllo", "日本語", "😀", "[\"é\"]", "\u0000", "tab\there", "line\nbreak", "١٢٣", "[١]", "٢٠٢٤-٠١-١٥"};
        for (int i = 0; i < inputs.length; i++) {
            parse("fixed_" + i, inputs[i]);
        }
        byte[][] raw = {{(byte) 0xff}, {'a', (byte) 0xff, 'b'}, {(byte) 0xe2, (byte) 0x82, 'A'}, {(byte) 0xc0, (byte) 0x80},
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xf0, (byte) 0x9f, (byte) 0x98},
            {'1', (byte) 0xff}, {(byte) 0xff, (byte) 0xfe}};
        for (int i = 0; i < raw.length; i++) {
            parse("raw_" + i, raw[i]);
        }
        parse("null_bytes", (byte[]) null);
        // A deterministic random corpus of token soups.
        String[] tokens = {"1", "-2", "3.5", "true", "false", "null", "[", "]", "{", "}", ":", ",", "\"", "a", "b c", " ", "\\",
            "2024-01-15", "12:34:56.789Z", "2024-01-15T12:34:56.789Z", "1e5", "99999999999999999999", "-0", "0.1", "x\\:y", "T",
            "Z", ".", "e", "+", "é", "300", "70000", "\\\"", "\\,", "[1,2]", "{\"k\":1}"};
        Random r = new Random(42);
        for (int i = 0; i < 600; i++) {
            int n = 1 + r.nextInt(7);
            StringBuilder b = new StringBuilder();
            for (int j = 0; j < n; j++) b.append(tokens[r.nextInt(tokens.length)]);
            parse("random_" + i, b.toString());
        }
        Files.createDirectories(dir);
        Gen.writeJsonl(dir.resolve("parse.jsonl"), parse);

        // Formatting Connect values.
        format("null", Schema.OPTIONAL_STRING_SCHEMA, null);
        format("string", Schema.STRING_SCHEMA, "plain \"quoted\" \\ text");
        format("int8", Schema.INT8_SCHEMA, (byte) -5);
        format("int16", Schema.INT16_SCHEMA, (short) 300);
        format("int32", Schema.INT32_SCHEMA, 70000);
        format("int64", Schema.INT64_SCHEMA, Long.MIN_VALUE);
        format("float32", Schema.FLOAT32_SCHEMA, 0.1f);
        format("float64", Schema.FLOAT64_SCHEMA, 1e-7);
        format("float64_nan", Schema.FLOAT64_SCHEMA, Double.NaN);
        format("boolean", Schema.BOOLEAN_SCHEMA, false);
        format("bytes", Schema.BYTES_SCHEMA, new byte[] {0, (byte) 0xff, 10});
        format("array", SchemaBuilder.array(Schema.STRING_SCHEMA).build(), Arrays.asList("a\"b", "c\\d", null));
        format("array_nested", SchemaBuilder.array(SchemaBuilder.array(Schema.INT32_SCHEMA).build()).build(), List.of(List.of(1, 2), List.of()));
        format("array_bytes", SchemaBuilder.array(Schema.BYTES_SCHEMA).build(), List.of(new byte[] {1}));
        Map<String, Object> m = new TreeMap<>();
        m.put("k1", 1);
        m.put("k\"2", "v");
        format("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), m);
        Map<Integer, Boolean> mi = new TreeMap<>();
        mi.put(1, true);
        format("map_int", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.BOOLEAN_SCHEMA).build(), mi);
        Schema st = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA)
            .field("c", SchemaBuilder.int8().defaultValue((byte) 7).build()).field("d", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().build()).build();
        format("struct", st, new Struct(st).put("a", 1).put("b", "x").put("d", List.of(1)));
        format("struct_nulls", st, new Struct(st).put("a", 2));
        format("decimal", Decimal.schema(2), new BigDecimal("12.34"));
        format("decimal_exp", Decimal.schema(-3), new BigDecimal(BigInteger.valueOf(15), -3));
        format("decimal_tiny", Decimal.schema(10), new BigDecimal(BigInteger.valueOf(15), 10));
        format("date", Date.SCHEMA, new java.util.Date(19737L * 86400000L));
        format("date_epoch", Date.SCHEMA, new java.util.Date(0));
        format("time", Time.SCHEMA, new java.util.Date(45296789L));
        format("timestamp", Timestamp.SCHEMA, new java.util.Date(1705322096789L));
        format("timestamp_midnight", Timestamp.SCHEMA, new java.util.Date(1705276800000L));
        format("timestamp_negative", Timestamp.SCHEMA, new java.util.Date(-1L));
        format("timestamp_before_epoch", Timestamp.SCHEMA, new java.util.Date(-86400000L * 400 + 5));
        format("schemaless_string", null, "s");
        format("schemaless_long", null, 5L);
        Files.writeString(dir.resolve("format.tsv"), format.toString());
    }
}
