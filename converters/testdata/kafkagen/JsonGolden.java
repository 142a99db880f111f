// JsonGolden writes what Kafka's JsonConverter produces for a fixed set
// of Connect values (encode/*.json, encode.tsv) and what it decodes from
// a fixed set of inputs (decode.jsonl), including the errors it raises.
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
import java.util.TreeMap;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

final class JsonGolden {
    private final Path dir;
    private final StringBuilder encodeTsv = new StringBuilder();
    private final List<Map<String, Object>> decode = new ArrayList<>();
    // Every encoded output is also decoded with the same config.
    private final List<Object[]> roundTrip = new ArrayList<>();

    JsonGolden(Path dir) {
        this.dir = dir;
    }

    static JsonConverter converter(String config) {
        Map<String, Object> props = new LinkedHashMap<>();
        // schema.content (JSON, with commas) comes last and takes the rest.
        String content = null;
        int sc = config.indexOf("schema.content=");
        if (sc >= 0) {
            content = config.substring(sc + "schema.content=".length());
            config = config.substring(0, sc).replaceAll(",$", "");
        }
        if (!config.isEmpty()) {
            for (String kv : config.split(",")) {
                String[] p = kv.split("=", 2);
                props.put(p[0], p[1]);
            }
        }
        if (content != null) props.put("schema.content", content);
        JsonConverter c = new JsonConverter();
        c.configure(props, false);
        return c;
    }

    void encode(String name, String config, Schema schema, Object value) throws IOException {
        String result;
        try {
            byte[] out = converter(config).fromConnectData("topic", schema, value);
            if (out == null) {
                result = "null";
            } else {
                Files.write(dir.resolve("encode").resolve(name + ".json"), out);
                result = "ok";
                roundTrip.add(new Object[] {name, config, out});
            }
        } catch (Exception e) {
            result = "error: " + Gen.oneLine(e.getMessage());
        }
        encodeTsv.append(name).append('\t').append(config).append('\t').append(Dump.schema(schema)).append('\t')
            .append(Dump.value(value)).append('\t').append(result).append('\n');
    }

    void decode(String name, String config, byte[] input) {
        Map<String, Object> rec = new LinkedHashMap<>();
        rec.put("name", name);
        rec.put("config", config);
        rec.put("input", Gen.b64(input));
        try {
            SchemaAndValue sv = converter(config).toConnectData("topic", input);
            rec.put("schema", Dump.schema(sv.schema()));
            rec.put("value", Dump.value(sv.value()));
        } catch (Exception e) {
            rec.put("error", e.getMessage());
        }
        decode.add(rec);
    }

    void decode(String name, String config, String input) {
        decode(name, config, input.getBytes(StandardCharsets.UTF_8));
    }

    static Map<String, Object> tree(Object... kv) {
        Map<String, Object> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    void run() throws IOException {
        Files.createDirectories(dir.resolve("encode"));
        String[] configs = {"", "schemas.enable=false"};

        // Primitives, both modes.
        for (String cfg : configs) {
            String p = cfg.isEmpty() ? "" : "nos_";
            encode(p + "int8", cfg, Schema.INT8_SCHEMA, (byte) -42);
            encode(p + "int16", cfg, Schema.INT16_SCHEMA, (short) 31000);
            encode(p + "int32", cfg, Schema.INT32_SCHEMA, Integer.MIN_VALUE);
            encode(p + "int64", cfg, Schema.INT64_SCHEMA, Long.MAX_VALUE);
            encode(p + "float32", cfg, Schema.FLOAT32_SCHEMA, 3.14f);
            encode(p + "float64", cfg, Schema.FLOAT64_SCHEMA, 2.718281828459045);
            encode(p + "boolean", cfg, Schema.BOOLEAN_SCHEMA, true);
            encode(p + "string", cfg, Schema.STRING_SCHEMA, "héllo \"q\" \\ / \n\t\r\b\f \u0001\u001f\u007f \u2028 ☃ 😀 </script>");
            encode(p + "bytes", cfg, Schema.BYTES_SCHEMA, new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff, 0x7f, 0x10});
            encode(p + "empty_string", cfg, Schema.STRING_SCHEMA, "");
            encode(p + "empty_bytes", cfg, Schema.BYTES_SCHEMA, new byte[0]);
            encode(p + "optional_null", cfg, Schema.OPTIONAL_STRING_SCHEMA, null);
            encode(p + "null_null", cfg, null, null);
            encode(p + "required_null", cfg, Schema.INT32_SCHEMA, null);
            encode(p + "default_for_null", cfg, SchemaBuilder.int32().defaultValue(5).build(), null);
            encode(p + "wrong_type", cfg, Schema.INT32_SCHEMA, "not an int");
        }
        // Floating point formatting (Java's Float/Double.toString; NaN and
        // infinities written as strings by Jackson).
        double[] doubles = {0.0, -0.0, 1.0, 100.0, 1e7, 9999999.0, 1e-3, 9.99e-4, 123456789.0, 1.5e300, 1e-7, 4.9e-324,
            1.7976931348623157e308, 0.1, 1.0 / 3, -2.5e-10, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
        for (int i = 0; i < doubles.length; i++) {
            encode("double_" + i, "schemas.enable=false", Schema.FLOAT64_SCHEMA, doubles[i]);
        }
        float[] floats = {0.0f, 1.0f, 0.1f, 1e-5f, 3.4028235e38f, 1.4e-45f, 16777216f, 1e7f, 123.456f, Float.NaN};
        for (int i = 0; i < floats.length; i++) {
            encode("float_" + i, "schemas.enable=false", Schema.FLOAT32_SCHEMA, floats[i]);
        }

        // Schema attributes: name, version, doc, parameters (insertion
        // order), defaults.
        Schema named = SchemaBuilder.string().name("com.example.Name").version(3).doc("a \"doc\"")
            .parameter("b", "1").parameter("a", "2").parameter("c", "x\ny").optional().defaultValue("dflt").build();
        encode("schema_attrs", "", named, "v");
        encode("schema_attrs_null", "", named, null);
        encode("schema_attrs_null_noreplace", "replace.null.with.default=false", named, null);

        // Arrays and maps.
        Schema arrInt = SchemaBuilder.array(Schema.INT32_SCHEMA).build();
        encode("array_int32", "", arrInt, Arrays.asList(1, 2, 3));
        encode("array_empty", "", arrInt, List.of());
        Schema arrOpt = SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build();
        encode("array_optional_elems", "", arrOpt, Arrays.asList("a", null, "c"));
        encode("array_null_elem_required", "", arrInt, Arrays.asList(1, null));
        Schema mapStr = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build();
        encode("map_string_keys", "", mapStr, tree("b", 2L, "a", 1L, "c", -3L));
        Schema mapInt = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build();
        Map<Integer, String> mi = new TreeMap<>();
        mi.put(2, "two");
        mi.put(1, "one");
        mi.put(-7, "minus seven");
        encode("map_int_keys", "", mapInt, mi);
        encode("nos_map_int_keys", "schemas.enable=false", mapInt, mi);
        encode("map_empty", "", mapStr, Map.of());
        Schema arrArr = SchemaBuilder.array(SchemaBuilder.array(Schema.INT8_SCHEMA).build()).build();
        encode("array_of_arrays", "", arrArr, List.of(List.of((byte) 1, (byte) 2), List.of()));

        // Structs.
        Schema address = SchemaBuilder.struct().name("com.example.Address").optional()
            .field("street", Schema.STRING_SCHEMA)
            .field("zip", Schema.OPTIONAL_INT32_SCHEMA).build();
        Schema person = SchemaBuilder.struct().name("com.example.Person").version(2).doc("A person")
            .field("id", Schema.INT64_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("email", Schema.OPTIONAL_STRING_SCHEMA)
            .field("age", SchemaBuilder.int32().optional().defaultValue(18).build())
            .field("active", SchemaBuilder.bool().defaultValue(true).build())
            .field("address", address)
            .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
            .field("scores", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).optional().build())
            .field("fi\"eld", Schema.OPTIONAL_BYTES_SCHEMA)
            .build();
        Struct p1 = new Struct(person).put("id", 1L).put("name", "Ada").put("email", null)
            .put("address", new Struct(address).put("street", "1 Main St").put("zip", 12345))
            .put("tags", List.of("x", "y")).put("scores", tree("math", 9.5, "art", 7.0))
            .put("fi\"eld", new byte[] {9});
        for (String cfg : new String[] {"", "schemas.enable=false", "replace.null.with.default=false", "schemas.enable=false,replace.null.with.default=false"}) {
            encode("struct_person" + suffix(cfg), cfg, person, p1);
        }
        Struct p2 = new Struct(person).put("id", -1L).put("name", "").put("active", false);
        encode("struct_person_sparse", "", person, p2);
        encode("struct_person_sparse_noreplace", "replace.null.with.default=false", person, p2);
        Schema other = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build();
        encode("struct_mismatch", "", person, new Struct(other).put("x", 1));
        Schema arrStruct = SchemaBuilder.array(address).build();
        encode("array_of_structs", "", arrStruct, Arrays.asList(new Struct(address).put("street", "a"), null));
        Schema mapStruct = SchemaBuilder.map(Schema.STRING_SCHEMA, address).build();
        encode("map_of_structs", "", mapStruct, tree("home", new Struct(address).put("street", "h").put("zip", 1)));

        // Logical types.
        Schema dec2 = Decimal.schema(2);
        BigDecimal d1 = new BigDecimal("12345.67");
        for (String cfg : new String[] {"", "decimal.format=NUMERIC", "schemas.enable=false", "schemas.enable=false,decimal.format=numeric"}) {
            String s = suffix(cfg);
            encode("decimal" + s, cfg, dec2, d1);
            encode("decimal_neg" + s, cfg, dec2, new BigDecimal("-0.01"));
            encode("decimal_128" + s, cfg, dec2, new BigDecimal("1.28"));
            encode("decimal_big" + s, cfg, Decimal.schema(0), new BigDecimal("-123456789012345678901234567890"));
            encode("decimal_negscale" + s, cfg, Decimal.schema(-2), new BigDecimal(BigInteger.valueOf(15), -2));
            encode("decimal_tiny" + s, cfg, Decimal.schema(9), new BigDecimal(BigInteger.ONE, 9));
            encode("decimal_wrong_scale" + s, cfg, dec2, new BigDecimal("1.5"));
        }
        Schema debeziumDecimal = Decimal.builder(3).parameter("connect.decimal.precision", "10").optional().build();
        encode("decimal_debezium", "", debeziumDecimal, new BigDecimal("3.140"));
        encode("date", "", Date.SCHEMA, new java.util.Date(19000L * 86400000L));
        encode("date_negative", "", Date.SCHEMA, new java.util.Date(-3L * 86400000L));
        encode("date_not_midnight", "", Date.SCHEMA, new java.util.Date(19000L * 86400000L + 1));
        encode("time", "", Time.SCHEMA, new java.util.Date(45296789L));
        encode("timestamp", "", Timestamp.SCHEMA, new java.util.Date(1700000000123L));
        encode("timestamp_negative", "", Timestamp.SCHEMA, new java.util.Date(-1000L));
        encode("nos_timestamp", "schemas.enable=false", Timestamp.SCHEMA, new java.util.Date(1700000000123L));
        Schema logicalStruct = SchemaBuilder.struct().name("L")
            .field("d", Decimal.builder(2).optional().defaultValue(new BigDecimal("1.00")).build())
            .field("date", Date.builder().optional().defaultValue(new java.util.Date(0)).build())
            .field("time", Time.builder().optional().build())
            .field("ts", Timestamp.builder().defaultValue(new java.util.Date(86400000L)).build())
            .field("arr", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().defaultValue(List.of(1, 2)).build())
            .field("map", SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.BOOLEAN_SCHEMA).optional().build())
            .build();
        Map<Byte, Boolean> mb = new TreeMap<>();
        mb.put((byte) 3, true);
        mb.put((byte) -1, false);
        Struct l1 = new Struct(logicalStruct).put("d", new BigDecimal("-9.99")).put("time", new java.util.Date(1000))
            .put("ts", new java.util.Date(1700000000123L)).put("map", mb);
        for (String cfg : new String[] {"", "decimal.format=NUMERIC", "schemas.enable=false", "replace.null.with.default=false"}) {
            encode("struct_logical" + suffix(cfg), cfg, logicalStruct, l1);
            encode("struct_logical_empty" + suffix(cfg), cfg, logicalStruct, new Struct(logicalStruct));
        }

        // Schemaless values (no schema).
        Map<String, Object> sl = tree("long", 5L, "int", 7, "byte", (byte) 1, "short", (short) 2, "float", 1.5f,
            "double", 2.25, "bool", false, "str", "s", "null", null, "bytes", new byte[] {1, 2},
            "list", Arrays.asList(1L, "two", null, List.of()), "map", tree("nested", tree()));
        for (String cfg : configs) {
            encode("schemaless_map" + suffix(cfg), cfg, null, sl);
            encode("schemaless_list" + suffix(cfg), cfg, null, Arrays.asList(1L, 2.5, "x", true, null));
            encode("schemaless_string" + suffix(cfg), cfg, null, "just a string");
            encode("schemaless_long" + suffix(cfg), cfg, null, 42L);
            Map<Object, Object> mixed = new LinkedHashMap<>();
            mixed.put(1L, "a");
            mixed.put(2L, "b");
            encode("schemaless_int_keys" + suffix(cfg), cfg, null, mixed);
            encode("schemaless_decimal" + suffix(cfg), cfg, null, new BigDecimal("1.5"));
            encode("schemaless_struct" + suffix(cfg), cfg, null, new Struct(other).put("x", 1));
        }

        // Inputs Kafka decodes (beyond its own outputs): envelopes, schema
        // errors, coercions, schemaless values, syntax errors.
        for (Object[] rt : roundTrip) {
            decode("rt_" + rt[0], (String) rt[1], (byte[]) rt[2]);
        }
        decodeCases();
        schemaContentCases();

        Files.writeString(dir.resolve("encode.tsv"), encodeTsv.toString());
        Gen.writeJsonl(dir.resolve("decode.jsonl"), decode);
    }

    static String suffix(String cfg) {
        if (cfg.isEmpty()) return "";
        return "_" + cfg.replace("schemas.enable=false", "nos").replace("replace.null.with.default=false", "noreplace")
            .replace("decimal.format=NUMERIC", "numeric").replace("decimal.format=numeric", "numeric").replace(",", "_");
    }

    // schema.content (KIP-1054): with schemas.enable, a schema from the
    // config decodes payloads that come without the envelope.
    void schemaContentCases() {
        String st = "{\"type\":\"struct\",\"name\":\"com.example.User\",\"fields\":["
            + "{\"field\":\"id\",\"type\":\"int64\"},"
            + "{\"field\":\"name\",\"type\":\"string\",\"optional\":true},"
            + "{\"field\":\"score\",\"type\":\"double\",\"optional\":true,\"default\":1.5},"
            + "{\"field\":\"tags\",\"type\":\"array\",\"items\":{\"type\":\"string\"},\"optional\":true}]}";
        String c = "schema.content=" + st;
        decode("sc_struct", c, "{\"id\":7,\"name\":\"ann\",\"score\":2.5,\"tags\":[\"a\",\"b\"]}");
        decode("sc_struct_defaults", c, "{\"id\":8}");
        decode("sc_struct_null_default", c, "{\"id\":8,\"score\":null}");
        decode("sc_struct_null_noreplace", "replace.null.with.default=false," + c, "{\"id\":8,\"score\":null}");
        decode("sc_struct_extra_field", c, "{\"id\":9,\"other\":true}");
        decode("sc_struct_missing_required", c, "{\"name\":\"x\"}");
        decode("sc_struct_envelope", c, "{\"schema\":{\"type\":\"int64\"},\"payload\":1}");
        decode("sc_struct_not_object", c, "[1]");
        decode("sc_struct_null", c, "null");
        decode("sc_struct_empty", c, "");
        decode("sc_struct_null_input", c, (byte[]) null);
        decode("sc_struct_trailing", c, "{\"id\":1} x");
        decode("sc_struct_bad_json", c, "{\"id\":");
        decode("sc_struct_type_error", c, "{\"id\":\"seven\"}");
        decode("sc_struct_nos", "schemas.enable=false," + c, "{\"id\":7}");
        String i32 = "schema.content={\"type\":\"int32\"}";
        decode("sc_int32", i32, "42");
        decode("sc_int32_trailing", i32, "42x");
        decode("sc_int32_space", i32, " 42 ");
        decode("sc_int32_null", i32, "null");
        decode("sc_int32_string", i32, "\"42\"");
        decode("sc_int32_envelope", i32, "{\"schema\":{\"type\":\"int32\"},\"payload\":1}");
        decode("sc_opt_int32_null", "schema.content={\"type\":\"int32\",\"optional\":true}", "null");
        decode("sc_default_int32_null", "schema.content={\"type\":\"int32\",\"default\":5}", "null");
        decode("sc_string", "schema.content={\"type\":\"string\"}", "\"h\u00e9\"");
        decode("sc_map", "schema.content={\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}}", "{\"a\":1,\"b\":2}");
        decode("sc_decimal", "schema.content={\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}}", "\"AQ==\"");
        decode("sc_timestamp", "schema.content={\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\"}", "1700000000000");
        decode("sc_spaces_around", "schema.content=  {\"type\":\"int32\"}  ", "3");
        // An empty message is Jackson's MissingNode, neither null nor a value.
        String[] missing = {"{\"type\":\"int8\"}", "{\"type\":\"int64\"}", "{\"type\":\"float\"}", "{\"type\":\"double\"}",
            "{\"type\":\"boolean\"}", "{\"type\":\"string\"}", "{\"type\":\"bytes\"}", "{\"type\":\"string\",\"optional\":true,\"default\":\"d\"}",
            "{\"type\":\"array\",\"items\":{\"type\":\"int32\"}}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"int32\"}}",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}}",
            "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\"}",
            "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Time\"}",
            "{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\"}"};
        for (int i = 0; i < missing.length; i++) {
            decode("sc_missing_" + i, "schema.content=" + missing[i], "");
            decode("sc_blank_" + i, "schema.content=" + missing[i], " \n");
        }
        // "null" is no schema: the envelope is required again.
        decode("sc_null_schema_env", "schema.content=null", "{\"schema\":{\"type\":\"int32\"},\"payload\":4}");
        decode("sc_null_schema_bare", "schema.content=null", "4");
        decode("sc_empty_content", "schema.content=", "{\"schema\":null,\"payload\":4}");
        // Bad schema.content fails when the converter is configured.
        decode("sc_bad_json", "schema.content={\"type\":", "1");
        decode("sc_bad_type", "schema.content={\"type\":\"nope\"}", "1");
        decode("sc_no_type", "schema.content={\"x\":1}", "1");
        decode("sc_array_no_items", "schema.content={\"type\":\"array\"}", "[1]");
        decode("sc_not_json_text", "schema.content=int32", "1");
    }

    void decodeCases() {
        String e = "";
        String n = "schemas.enable=false";
        // Envelope shape.
        decode("env_payload_only", e, "{\"payload\":1}");
        decode("env_schema_only", e, "{\"schema\":null}");
        decode("env_extra", e, "{\"schema\":null,\"payload\":1,\"x\":2}");
        decode("env_array", e, "[1]");
        decode("env_number", e, "1");
        decode("env_string", e, "\"x\"");
        decode("env_null", e, "null");
        decode("env_empty_object", e, "{}");
        decode("env_empty_input", e, "");
        decode("env_whitespace", e, " \n\t ");
        decode("env_null_schema", e, "{\"schema\":null,\"payload\":{\"a\":[1,2.5]}}");
        decode("env_payload_first", e, "{\"payload\":{\"k\":7},\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}}}");
        decode("env_dup_payload", e, "{\"schema\":{\"type\":\"int32\"},\"payload\":1,\"payload\":2}");
        decode("env_dup_schema", e, "{\"schema\":{\"type\":\"string\"},\"payload\":3,\"schema\":{\"type\":\"int64\"}}");
        decode("env_missing_payload_value", e, "{\"schema\":{\"type\":\"int32\",\"optional\":true},\"payload\":null}");
        decode("env_required_null_payload", e, "{\"schema\":{\"type\":\"int32\"},\"payload\":null}");
        decode("env_default_null_payload", e, "{\"schema\":{\"type\":\"int32\",\"default\":9},\"payload\":null}");
        decode("env_default_null_payload_noreplace", "replace.null.with.default=false", "{\"schema\":{\"type\":\"int32\",\"optional\":true,\"default\":9},\"payload\":null}");
        decode("env_bom", e, new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf, '{', '"', 's', 'c', 'h', 'e', 'm', 'a', '"', ':', 'n', 'u', 'l', 'l', ',', '"', 'p', 'a', 'y', 'l', 'o', 'a', 'd', '"', ':', '1', '}'});
        decode("env_trailing", e, "{\"schema\":null,\"payload\":1} trailing");
        decode("env_null_input", e, (byte[]) null);
        decode("nos_null_input", n, (byte[]) null);
        // Schemas.
        String[] schemas = {
            "{}", "{\"type\":\"foo\"}", "{\"type\":5}", "{\"type\":\"array\"}", "{\"type\":\"array\",\"items\":null}",
            "{\"type\":\"map\",\"values\":{\"type\":\"int8\"}}", "{\"type\":\"map\",\"keys\":{\"type\":\"int8\"}}",
            "{\"type\":\"struct\"}", "{\"type\":\"struct\",\"fields\":{}}", "{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\"}]}",
            "{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\",\"field\":1}]}",
            "{\"type\":\"string\",\"parameters\":{\"a\":1}}", "{\"type\":\"string\",\"parameters\":[]}",
            "{\"type\":\"string\",\"version\":\"1\",\"optional\":\"true\",\"name\":5,\"doc\":false}",
            "{\"type\":\"string\",\"version\":2.5}", "{\"type\":\"string\",\"version\":7}",
            "{\"type\":\"int32\",\"default\":null}", "{\"type\":\"int32\",\"optional\":true,\"default\":null}",
            "{\"type\":\"int32\",\"default\":\"x\"}", "{\"type\":\"string\",\"default\":5}",
            "{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\",\"field\":\"a\"},{\"type\":\"int8\",\"field\":\"a\"}]}",
            "{\"type\":\"struct\",\"fields\":[]}", "{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\",\"field\":\"\"}]}",
            "{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\",\"field\":\"a\",\"default\":3}],\"default\":{\"a\":4}}",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\"}",
            "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,\"default\":10}",
            "{\"type\":\"string\",\"name\":\"org.apache.kafka.connect.data.Date\"}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"bytes\"},\"values\":{\"type\":\"int8\"}}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"array\",\"items\":{\"type\":\"int8\"}},\"values\":{\"type\":\"int8\"}}",
            "{\"type\":\"int8\",\"optional\":true,\"extra\":[1,{\"x\":null}]}",
            "{\"type\":\"STRING\"}", "[]", "\"int32\"",
            "{\"type\":\"map\",\"keys\":null,\"values\":{\"type\":\"int8\"}}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"int8\"},\"values\":null}",
            "{\"type\":\"array\",\"items\":5}", "{\"type\":\"struct\",\"fields\":[null]}",
            "{\"type\":\"struct\",\"fields\":[{\"type\":\"foo\",\"field\":\"a\"}]}",
            "{\"type\":\"struct\",\"fields\":[{\"field\":\"a\"}]}",
            "{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"default\":\"x\"}",
            "{\"type\":\"array\",\"items\":{\"type\":\"int8\"},\"default\":[1,null]}",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"default\":[1]}",
            "{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int8\"},\"default\":{\"a\":1}}",
            "{\"type\":\"bytes\",\"default\":\"QQ==\"}", "{\"type\":\"bytes\",\"default\":\"QQ\"}",
            "{\"type\":\"int32\",\"version\":3000000000}", "{\"type\":\"string\",\"optional\":true,\"default\":5}",
            "{\"type\":\"struct\",\"optional\":true,\"fields\":[],\"default\":null}",
            "{\"type\":\"int8\",\"parameters\":{\"b\":\"1\",\"a\":\"2\",\"b\":\"3\"}}",
        };
        for (int i = 0; i < schemas.length; i++) {
            decode("schema_" + i + "_null", e, "{\"schema\":" + schemas[i] + ",\"payload\":null}");
            decode("schema_" + i + "_value", e, "{\"schema\":" + schemas[i] + ",\"payload\":[[1,2]]}");
        }
        // Payload coercions against a schema (Jackson's intValue(),
        // textValue(), ... on the wrong node type).
        String[] types = {"int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes"};
        String[] payloads = {"1", "-1", "1.9", "-1.9", "300", "70000", "3000000000", "12345678901234567890", "1e20", "1E+2", "0.5e1",
            "true", "false", "\"5\"", "\"QUJD\"", "\" QUJD \"", "\"QQ\"", "\"QQ=\"", "\"Q Q==\"", "\"@@@@\"", "\"\"", "[]", "{}", "[1]",
            "1e400", "-1e400", "1e-400", "0.1", "16777217", "9007199254740993", "1.00000001", "-0", "-0.0", "007"};
        for (String t : types) {
            for (int i = 0; i < payloads.length; i++) {
                decode("coerce_" + t + "_" + i, e, "{\"schema\":{\"type\":\"" + t + "\"},\"payload\":" + payloads[i] + "}");
                decode("coerce_opt_" + t + "_" + i, e, "{\"schema\":{\"type\":\"" + t + "\",\"optional\":true},\"payload\":" + payloads[i] + "}");
            }
        }
        String decimal = "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":{\"scale\":\"2\"}}";
        String date = "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1}";
        String time = "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Time\",\"version\":1}";
        String ts = "{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1}";
        for (String[] lt : new String[][] {{"decimal", decimal}, {"date", date}, {"time", time}, {"ts", ts}}) {
            for (int i = 0; i < payloads.length; i++) {
                decode("logical_" + lt[0] + "_" + i, e, "{\"schema\":" + lt[1] + ",\"payload\":" + payloads[i] + "}");
            }
        }
        decode("decimal_no_scale", e, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\"},\"payload\":\"AQ==\"}");
        decode("decimal_bad_scale", e, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"x\"}},\"payload\":\"AQ==\"}");
        decode("decimal_numeric_exp", e, "{\"schema\":" + decimal + ",\"payload\":1.50E+3}");
        decode("decimal_numeric_long", e, "{\"schema\":" + decimal + ",\"payload\":123456789012345678901234567890.123456789}");
        // Structured payloads.
        String st = "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"field\":\"a\"},{\"type\":\"string\",\"optional\":true,\"field\":\"b\"},{\"type\":\"int8\",\"default\":3,\"field\":\"c\"}]}";
        String[] stp = {"{\"a\":1}", "{\"a\":1,\"b\":\"x\",\"c\":null}", "{\"b\":\"x\"}", "{\"a\":1,\"b\":5}", "{\"a\":\"x\"}", "{\"a\":1,\"z\":[1,{}]}",
            "[]", "1", "\"s\"", "{\"a\":1,\"a\":2}", "{\"a\":null,\"a\":2}", "{\"a\":1,\"c\":1000}", "{\"c\":null,\"a\":1}"};
        for (int i = 0; i < stp.length; i++) {
            decode("struct_" + i, e, "{\"schema\":" + st + ",\"payload\":" + stp[i] + "}");
            decode("struct_noreplace_" + i, "replace.null.with.default=false", "{\"schema\":" + st + ",\"payload\":" + stp[i] + "}");
        }
        String arrStr = "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}";
        String arrOptStr = "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true}}";
        String mapIS = "{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"string\"}}";
        String mapSS = "{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"string\",\"optional\":true}}";
        String[] coll = {"[]", "[\"a\",\"b\"]", "[\"a\",null]", "[1]", "{}", "{\"a\":\"b\"}", "{\"a\":null}", "[[1,\"x\"]]", "[[1,\"x\"],[1,\"y\"]]",
            "[[1]]", "[[1,2,3]]", "[1]", "[{}]", "\"s\"", "5", "[[null,\"x\"]]", "[[\"7\",\"x\"]]", "{\"a\":\"b\",\"a\":\"c\"}"};
        for (String[] cs : new String[][] {{"arr", arrStr}, {"arropt", arrOptStr}, {"mapis", mapIS}, {"mapss", mapSS}}) {
            for (int i = 0; i < coll.length; i++) {
                decode("coll_" + cs[0] + "_" + i, e, "{\"schema\":" + cs[1] + ",\"payload\":" + coll[i] + "}");
            }
        }
        String structArr = "{\"type\":\"struct\",\"fields\":[{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"field\":\"l\"}]}";
        decode("struct_arr_null_elem", e, "{\"schema\":" + structArr + ",\"payload\":{\"l\":[\"a\",5]}}");
        // Schemaless inputs.
        String[] sl = {"1", "-1", "1.5", "-0.0", "1e2", "1E-2", "12345678901234567890", "-9223372036854775809", "1e400", "1e-400",
            "\"s\"", "true", "false", "null", "[1,\"a\",null,{\"b\":[]}]", "{\"a\":{\"b\":1}}", "{}", "[]", "007", "-007", "0.1",
            "0.1000000000000000055511151231257827", "3.4028235677973366e38", "{\"a\":1,\"a\":2}", "\"\\u00e9\\n\\/\\\"\"",
            "\"\\ud83d\\ude00\"", "[1] ]", "{} x", "1 2", "0", "-0", "9223372036854775807", "9223372036854775808", "2147483648",
            "123456789012345678901234567890.5", "1.0", "100", "1e0", "0e5", "-1.5e-3"};
        for (int i = 0; i < sl.length; i++) {
            decode("schemaless_" + i, n, sl[i]);
        }
        // Syntax errors (both modes).
        String[] bad = {"{", "{\"a\":}", "[1,]", "[,1]", "tru", "truex", "nul", "1x", "{\"a\" 1}", "{'a':1}", "NaN", "1.", ".5", "+1",
            "-", "01.5", "\"abc", "\"\\q\"", "\"\\u12\"", "{\"a\":1,}", "[1 2]", "{\"a\":1 \"b\":2}", "}", "]", "\"a\u0001\"", "-a",
            "1e", "1e+", "[1]x", "{\"a\":1}}", "[", "\"\\u00e9\"x", "Infinity", "-Infinity", "/* c */ 1", "[1,2", "{\"a\":[}",
            "{1:2}", "{\"schema\":null,\"payload\":1,}"};
        for (int i = 0; i < bad.length; i++) {
            decode("bad_" + i, n, bad[i]);
            decode("bad_env_" + i, e, bad[i]);
        }
        // Raw bytes: invalid UTF-8 and control characters.
        byte[][] raw = {{'"', (byte) 0xff, '"'}, {'"', (byte) 0xc3, '"'}, {'"', (byte) 0xe2, (byte) 0x82, '"'}, {'"', (byte) 0xc0, (byte) 0x80, '"'},
            {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, {'"', (byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80, '"'},
            {'"', 0x7f, '"'}, {'"', '\t', '"'}, {(byte) 0xff}, {0}, {'1', 0}, {' ', 0x0b, '1'}, {'[', 0x0c, ']'}};
        for (int i = 0; i < raw.length; i++) {
            decode("raw_" + i, n, raw[i]);
        }
        // Limits: nesting depth and number length (Jackson's
        // StreamReadConstraints).
        decode("depth_1000", n, "[".repeat(1000) + "]".repeat(1000));
        decode("depth_1001", n, "[".repeat(1001) + "]".repeat(1001));
        decode("depth_obj_1001", n, "{\"a\":".repeat(1001) + "1" + "}".repeat(1001));
        decode("numlen_1000", n, "1".repeat(1000));
        decode("numlen_1001", n, "1".repeat(1001));
        decode("numlen_frac_1001", n, "1." + "1".repeat(999));
    }
}
