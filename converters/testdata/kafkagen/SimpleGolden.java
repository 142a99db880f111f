// SimpleGolden writes what Kafka's StringConverter, ByteArrayConverter
// and number converters produce and decode (cases.jsonl per package).
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.storage.Converter;

final class SimpleGolden {
    private SimpleGolden() {}

    static Converter make(String cls, Map<String, Object> props) throws Exception {
        Converter c = (Converter) Class.forName(cls).getDeclaredConstructor().newInstance();
        c.configure(props, false);
        return c;
    }

    // Each Object[] is {name, schema, value} for fromConnectData.
    static void from(List<Map<String, Object>> out, String cls, Map<String, Object> props, Object[][] cases) throws Exception {
        for (Object[] c : cases) {
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("class", cls);
            rec.put("config", props);
            rec.put("op", "from");
            rec.put("name", c[0]);
            rec.put("schema", Dump.schema((Schema) c[1]));
            rec.put("value", Dump.value(c[2]));
            try {
                byte[] b = make(cls, props).fromConnectData("topic", (Schema) c[1], c[2]);
                rec.put("output", b == null ? null : Gen.b64(b));
            } catch (Exception e) {
                rec.put("error", Gen.oneLine(e.getMessage()));
            }
            out.add(rec);
        }
    }

    static void to(List<Map<String, Object>> out, String cls, Map<String, Object> props, byte[][] inputs) throws Exception {
        for (byte[] in : inputs) {
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("class", cls);
            rec.put("config", props);
            rec.put("op", "to");
            rec.put("input", Gen.b64(in));
            try {
                SchemaAndValue sv = make(cls, props).toConnectData("topic", in);
                rec.put("schema", Dump.schema(sv.schema()));
                rec.put("value", Dump.value(sv.value()));
            } catch (Exception e) {
                rec.put("error", Gen.oneLine(e.getMessage()));
            }
            out.add(rec);
        }
    }

    static void run(Path root) throws Exception {
        Schema st = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA)
            .field("c", SchemaBuilder.array(Schema.FLOAT64_SCHEMA).optional().build()).build();
        Map<String, Object> m = new TreeMap<>();
        m.put("k", 1L);
        m.put("j", Arrays.asList("x", null));
        Object[][] anyValues = {
            {"null", null, null}, {"string", Schema.STRING_SCHEMA, "héllo ☃ 😀"}, {"empty", Schema.STRING_SCHEMA, ""},
            {"int8", Schema.INT8_SCHEMA, (byte) 7}, {"int16", null, (short) -300}, {"int32", Schema.INT32_SCHEMA, 123456},
            {"int64", Schema.INT64_SCHEMA, -5L}, {"float32", Schema.FLOAT32_SCHEMA, 1.5e-5f}, {"float64", Schema.FLOAT64_SCHEMA, 1e21},
            {"float64_plain", null, 12.5}, {"boolean", Schema.BOOLEAN_SCHEMA, true},
            {"decimal", null, new BigDecimal("-1.50")}, {"decimal_exp", null, new BigDecimal("1E+5")},
            {"list", null, Arrays.asList(1, "a", null, List.of(2.5))}, {"map", null, m},
            {"struct", st, new Struct(st).put("a", 1).put("c", List.of(0.5, 2.0))},
            {"date", null, new java.util.Date(1705322096789L)},
        };
        // StringConverter.
        List<Map<String, Object>> str = new ArrayList<>();
        String sc = "org.apache.kafka.connect.storage.StringConverter";
        from(str, sc, Map.of(), anyValues);
        byte[][] strIn = {null, {}, "héllo".getBytes("UTF-8"), {(byte) 0xff, 'a'}, {(byte) 0xe2, (byte) 0x82, 'A'},
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xf0, (byte) 0x9f, (byte) 0x98, (byte) 0x80}, {0}};
        to(str, sc, Map.of(), strIn);
        for (String enc : new String[] {"UTF-16", "UTF-16BE", "UTF-16LE", "ISO-8859-1", "US-ASCII", "utf8"}) {
            Map<String, Object> p = Map.of("converter.encoding", enc);
            from(str, sc, p, new Object[][] {{"enc", Schema.STRING_SCHEMA, "aé☃😀"}, {"enc_empty", Schema.STRING_SCHEMA, ""}});
            to(str, sc, p, new byte[][] {{'a', 0, 'b', 0}, {(byte) 0xfe, (byte) 0xff, 0, 'a'}, {(byte) 0xff, (byte) 0xfe, 'a', 0},
                {(byte) 0xe9, 'x'}, {(byte) 0xd8, 0, 0, 'a'}, {'a'}, {}});
        }
        Gen.writeJsonl(root.resolve("str/testdata/golden/cases.jsonl"), str);

        // ByteArrayConverter.
        List<Map<String, Object>> ba = new ArrayList<>();
        String bc = "org.apache.kafka.connect.converters.ByteArrayConverter";
        from(ba, bc, Map.of(), new Object[][] {
            {"null", null, null}, {"bytes", Schema.BYTES_SCHEMA, new byte[] {1, 2, (byte) 0xff}}, {"noschema", null, new byte[] {}},
            {"optional_null", Schema.OPTIONAL_BYTES_SCHEMA, null}, {"wrong_schema", Schema.STRING_SCHEMA, new byte[] {1}},
            {"wrong_schema_null", Schema.INT32_SCHEMA, null}, {"wrong_value", Schema.BYTES_SCHEMA, "s"}, {"wrong_value_noschema", null, 5L}});
        to(ba, bc, Map.of(), new byte[][] {null, {}, {0, 1, (byte) 0xff}});
        Gen.writeJsonl(root.resolve("bytearray/testdata/golden/cases.jsonl"), ba);

        // Number and boolean converters.
        List<Map<String, Object>> num = new ArrayList<>();
        Object[][] numValues = {
            {"null", null, null}, {"int8", Schema.INT8_SCHEMA, (byte) -1}, {"int16", Schema.INT16_SCHEMA, (short) 0x1234},
            {"int32", Schema.INT32_SCHEMA, -123456789}, {"int64", Schema.INT64_SCHEMA, 0x0102030405060708L},
            {"float32", Schema.FLOAT32_SCHEMA, -1.5f}, {"float64", Schema.FLOAT64_SCHEMA, Math.PI}, {"nan", null, Double.NaN},
            {"boolean_true", Schema.BOOLEAN_SCHEMA, true}, {"boolean_false", null, false}, {"string", Schema.STRING_SCHEMA, "5"},
            {"int64_schema_int32", Schema.INT32_SCHEMA, 5L}};
        byte[][] numIn = {null, {}, {1}, {0}, {2}, {(byte) 0xff}, {1, 2}, {(byte) 0x80, 0}, {1, 2, 3}, {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xfe},
            {0x3f, (byte) 0x80, 0, 0}, {0x7f, (byte) 0xc0, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 8}, {0x40, 0x09, 0x21, (byte) 0xfb, 0x54, 0x44, 0x2d, 0x18},
            {(byte) 0xff, (byte) 0xf8, 0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
        for (String n : new String[] {"Long", "Integer", "Short", "Double", "Float", "Boolean"}) {
            String cls = "org.apache.kafka.connect.converters." + n + "Converter";
            from(num, cls, Map.of(), numValues);
            to(num, cls, Map.of(), numIn);
        }
        Gen.writeJsonl(root.resolve("number/testdata/golden/cases.jsonl"), num);
    }
}
