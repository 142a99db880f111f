// Generator applies Kafka Connect 4.4's own transformations and predicates
// (connect-transforms) to a fixed corpus of records and prints one JSON
// line per (case, record): the config, the input record and Kafka's
// output (or error). Fjord's golden test (transforms/golden_test.go)
// replays every line through Fjord's plugins and compares.
//
// Schema'd keys, values and headers are written with Kafka's JsonConverter
// (schemas.enable=true), so schemas are compared too. Schemaless data is
// written as plain JSON where Long, Double, String, Boolean, List and Map
// map onto JSON directly, and other Java types carry a tag:
// {"$int8":n} {"$int16":n} {"$int32":n} {"$float32":x} {"$bytes":"b64"}
// {"$date":millis} {"$decimal":"1.50"}.
//
// Run by generate.sh; see there.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public class Generator {
    static final ObjectMapper M = new ObjectMapper();
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final JsonConverter CONV = new JsonConverter();
    static {
        // Nulls stay null (no defaults substituted), so inputs decode to
        // exactly the records the transformations saw.
        CONV.configure(Map.of("schemas.enable", "true", "converter.type", "value", "replace.null.with.default", "false"));
    }
    static final String T = "org.apache.kafka.connect.transforms.";

    // ---- corpus ----
    static final Schema ADDRESS = SchemaBuilder.struct().name("com.example.Address").optional()
            .field("street", Schema.STRING_SCHEMA)
            .field("city", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    static final Schema USER = SchemaBuilder.struct().name("com.example.User").version(2).doc("a user")
            .field("id", Schema.INT64_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("age", Schema.OPTIONAL_INT32_SCHEMA)
            .field("score", Schema.FLOAT64_SCHEMA)
            .field("active", Schema.BOOLEAN_SCHEMA)
            .field("email", SchemaBuilder.string().optional().defaultValue("none@example.com").build())
            .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
            .field("address", ADDRESS)
            .field("born", org.apache.kafka.connect.data.Date.builder().optional().build())
            .field("created", Timestamp.SCHEMA)
            .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
            .field("ratio", Schema.OPTIONAL_FLOAT32_SCHEMA)
            .field("small", SchemaBuilder.int16().optional().defaultValue((short) 7).build())
            .field("epoch", Schema.OPTIONAL_INT64_SCHEMA)
            .field("when", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    static final Schema KEY = SchemaBuilder.struct().name("com.example.Key").field("id", Schema.INT64_SCHEMA).build();
    static final Schema ENVELOPE_ROW = SchemaBuilder.struct().name("dbserver1.inventory.customers.Value").optional()
            .field("id", Schema.INT32_SCHEMA)
            .field("first_name", Schema.STRING_SCHEMA)
            .field("email", Schema.OPTIONAL_STRING_SCHEMA)
            .build();

    static Struct address(String street, String city) {
        return new Struct(ADDRESS).put("street", street).put("city", city);
    }

    static Struct user(long id, String name, Integer age, String email, Struct addr) {
        return new Struct(USER).put("id", id).put("name", name).put("age", age).put("score", 97.5)
                .put("active", true).put("email", email).put("tags", List.of("a", "b")).put("address", addr)
                .put("born", new java.util.Date(19000L * 86400000L)).put("created", new java.util.Date(1700000000123L))
                .put("blob", "hi!".getBytes(StandardCharsets.UTF_8)).put("ratio", 0.25f).put("small", null)
                .put("epoch", 1700000000L).put("when", "2024-02-29 13:14:15.678");
    }

    static ConnectHeaders headers() {
        ConnectHeaders h = new ConnectHeaders();
        h.addString("h1", "a");
        h.addInt("h2", 5);
        h.add("h3", "free", null);
        return h;
    }

    static Map<String, Object> userMap(long id) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("name", "carol");
        m.put("age", 41L);
        m.put("score", 12.5);
        m.put("active", false);
        m.put("email", null);
        m.put("tags", new ArrayList<>(List.of("x")));
        Map<String, Object> addr = new LinkedHashMap<>();
        addr.put("street", "Main");
        addr.put("city", "Oslo");
        m.put("address", addr);
        m.put("created", 1700000000123L);
        m.put("when", "2024-02-29 13:14:15.678");
        return m;
    }

    static Map<String, List<ConnectRecord<?>>> corpus() {
        Map<String, List<ConnectRecord<?>>> c = new LinkedHashMap<>();
        c.put("user", List.of(
                new SinkRecord("users", 3, KEY, new Struct(KEY).put("id", 1L), USER,
                        user(1, "alice", 30, "alice@example.com", address("Main", "Oslo")), 42L, 1700000000123L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, headers()),
                new SinkRecord("users", 0, KEY, new Struct(KEY).put("id", 2L), USER,
                        user(2, "bob", null, null, null), 43L, 1700000000124L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders())));
        c.put("schemaless", List.of(
                new SinkRecord("orders", 1, null, "k1", null, userMap(7), 5L, 1700000000125L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, headers())));
        c.put("primitive", List.of(
                new SinkRecord("nums", 0, Schema.STRING_SCHEMA, "k", Schema.INT64_SCHEMA, 1700000000999L, 6L, 1700000000126L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()),
                new SinkRecord("nums", 0, null, null, null, 86400000L, 7L, 1700000000127L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()),
                new SinkRecord("strs", 0, null, null, Schema.OPTIONAL_STRING_SCHEMA, "2024-02-29 13:14:15.678", 8L, 1700000000128L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders())));
        c.put("tombstones", List.of(
                new SinkRecord("users", 3, KEY, new Struct(KEY).put("id", 1L), ADDRESS, null, 44L, 1700000000129L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()),
                new SinkRecord("users", 3, null, "k", null, null, 45L, null,
                        org.apache.kafka.common.record.TimestampType.NO_TIMESTAMP_TYPE, new ConnectHeaders())));
        c.put("source", List.of(
                new SourceRecord(Map.of("file", "a"), Map.of("pos", 1L), "src", null, Schema.STRING_SCHEMA, "k",
                        USER, user(3, "dave", 50, "d@example.com", address("High", null)), 1700000000130L, headers())));
        c.put("nested", nested());
        c.put("debezium", debezium());
        return c;
    }

    // Nested structs with defaults and optional parents, decimals, maps
    // and arrays of structs: the corners of Flatten, Cast and MaskField.
    static final Schema INNER = SchemaBuilder.struct().name("Inner").optional()
            .field("x", SchemaBuilder.int32().defaultValue(5).build())
            .field("y", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    // (A struct default cannot be built: SchemaBuilder.defaultValue compares
    // the struct's ConnectSchema with the builder, never equal.)
    static final Schema OUTER_DEFAULT_INNER = SchemaBuilder.struct().name("Inner2").optional()
            .field("x", SchemaBuilder.int32().defaultValue(5).build())
            .field("y", SchemaBuilder.string().optional().defaultValue("dflt").build())
            .build();
    static final Schema NESTED = SchemaBuilder.struct().name("Nested")
            .field("id", Schema.INT32_SCHEMA)
            .field("inner", INNER)
            .field("innerWithDefault", OUTER_DEFAULT_INNER)
            .field("price", Decimal.builder(2).optional().build())
            .field("ratio", Schema.OPTIONAL_FLOAT64_SCHEMA)
            .field("flag", Schema.OPTIONAL_STRING_SCHEMA)
            .field("list", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().build())
            .field("t", Time.builder().optional().build())
            .field("d", org.apache.kafka.connect.data.Date.builder().optional().build())
            .build();
    static final Schema WITH_MAP = SchemaBuilder.struct().name("WithMap")
            .field("id", Schema.INT32_SCHEMA)
            .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build())
            .build();

    static List<ConnectRecord<?>> nested() {
        Struct a = new Struct(NESTED).put("id", 1).put("inner", new Struct(INNER).put("x", 1).put("y", "a"))
                .put("innerWithDefault", new Struct(OUTER_DEFAULT_INNER).put("x", 3))
                .put("price", new BigDecimal("12.34")).put("ratio", -7.9).put("flag", "TRUE").put("list", List.of(1, 2))
                .put("t", new java.util.Date(45296789L)).put("d", new java.util.Date(19724L * 86400000L));
        Struct b = new Struct(NESTED).put("id", 2).put("price", new BigDecimal("-0.05")).put("ratio", 1e10).put("flag", "no");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", 3L);
        m.put("inner", new LinkedHashMap<>(Map.of("x", 1L)));
        m.put("ratio", 2.5);
        m.put("flag", "1");
        m.put("big", 12345678901L);
        Struct wm = new Struct(WITH_MAP).put("id", 4).put("attrs", Map.of("k", "v"));
        return List.of(
                new SinkRecord("nested", 0, null, null, NESTED, a, 1L, 1709212455678L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()),
                new SinkRecord("nested", 0, null, null, NESTED, b, 2L, 946684799999L,
                        org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME, new ConnectHeaders()),
                new SinkRecord("nested", 0, null, null, null, m, 3L, 0L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()),
                new SinkRecord("withmap", 0, null, null, WITH_MAP, wm, 4L, 1L,
                        org.apache.kafka.common.record.TimestampType.CREATE_TIME, new ConnectHeaders()));
    }

    static List<ConnectRecord<?>> debezium() {
        Schema source = SchemaBuilder.struct().name("io.debezium.connector.postgresql.Source")
                .field("version", Schema.STRING_SCHEMA).field("connector", Schema.STRING_SCHEMA)
                .field("name", Schema.STRING_SCHEMA).field("ts_ms", Schema.INT64_SCHEMA)
                .field("db", Schema.STRING_SCHEMA).field("schema", Schema.STRING_SCHEMA)
                .field("table", Schema.STRING_SCHEMA).field("lsn", Schema.OPTIONAL_INT64_SCHEMA).build();
        Schema tx = SchemaBuilder.struct().name("event.block").optional()
                .field("id", Schema.STRING_SCHEMA).field("total_order", Schema.INT64_SCHEMA)
                .field("data_collection_order", Schema.INT64_SCHEMA).build();
        Schema env = SchemaBuilder.struct().name("dbserver1.inventory.customers.Envelope").version(2)
                .field("before", ENVELOPE_ROW).field("after", ENVELOPE_ROW).field("source", source)
                .field("transaction", tx).field("op", Schema.STRING_SCHEMA).field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA).build();
        Schema key = SchemaBuilder.struct().name("dbserver1.inventory.customers.Key").field("id", Schema.INT32_SCHEMA).build();
        Struct src = new Struct(source).put("version", "3.6.1.Final").put("connector", "postgresql").put("name", "dbserver1")
                .put("ts_ms", 1700000000000L).put("db", "postgres").put("schema", "inventory").put("table", "customers").put("lsn", 24023128L);
        Struct row1 = new Struct(ENVELOPE_ROW).put("id", 1001).put("first_name", "Sally").put("email", "sally@example.com");
        Struct row2 = new Struct(ENVELOPE_ROW).put("id", 1001).put("first_name", "Sal").put("email", null);
        Struct k = new Struct(key).put("id", 1001);
        List<ConnectRecord<?>> out = new ArrayList<>();
        Struct create = new Struct(env).put("after", row1).put("source", src).put("op", "c").put("ts_ms", 1700000000500L);
        Struct update = new Struct(env).put("before", row1).put("after", row2).put("source", src).put("op", "u").put("ts_ms", 1700000000600L)
                .put("transaction", new Struct(tx).put("id", "571:53195829").put("total_order", 1L).put("data_collection_order", 1L));
        Struct delete = new Struct(env).put("before", row2).put("source", src).put("op", "d").put("ts_ms", 1700000000700L);
        Struct truncate = new Struct(env).put("source", src).put("op", "t").put("ts_ms", 1700000000800L);
        out.add(new SourceRecord(Map.of(), Map.of(), "dbserver1.inventory.customers", null, key, k, env, create, 1700000000500L, new ConnectHeaders()));
        out.add(new SourceRecord(Map.of(), Map.of(), "dbserver1.inventory.customers", null, key, k, env, update, 1700000000600L, new ConnectHeaders()));
        out.add(new SourceRecord(Map.of(), Map.of(), "dbserver1.inventory.customers", null, key, k, env, delete, 1700000000700L, new ConnectHeaders()));
        out.add(new SourceRecord(Map.of(), Map.of(), "dbserver1.inventory.customers", null, key, k, null, null, 1700000000700L, new ConnectHeaders()));
        out.add(new SourceRecord(Map.of(), Map.of(), "dbserver1.inventory.customers", null, key, k, env, truncate, 1700000000800L, new ConnectHeaders()));
        out.add(new SourceRecord(Map.of(), Map.of(), "heartbeat", null, key, k, ENVELOPE_ROW, row1, 1700000000900L, new ConnectHeaders()));
        return out;
    }

    // ---- cases ----
    record Case(String name, String cls, Map<String, String> config, List<String> sets) {}

    static List<Case> cases = new ArrayList<>();

    static void add(String name, String cls, String config, String... sets) {
        Map<String, String> m = new LinkedHashMap<>();
        if (!config.isEmpty()) {
            for (String kv : config.split("\\|")) {
                int i = kv.indexOf('=');
                m.put(kv.substring(0, i), kv.substring(i + 1));
            }
        }
        cases.add(new Case(name, cls, m, List.of(sets)));
    }

    static void defineCases() {
        String all = "user,schemaless,primitive,tombstones,source";
        String[] everything = all.split(",");
        // Cast
        add("cast-fields", T + "Cast$Value", "spec=age:int64,score:int32,active:int8,id:string,ratio:float64,small:boolean", everything);
        add("cast-logical", T + "Cast$Value", "spec=created:int64,born:int32,blob:string,created:string", "user");
        add("cast-timestamp-string", T + "Cast$Value", "spec=created:string,born:string", "user");
        add("cast-name-int", T + "Cast$Value", "spec=name:int32", "user", "schemaless");
        add("cast-no-default", T + "Cast$Value", "spec=email:string,small:int32|replace.null.with.default=false", "user");
        add("cast-with-default", T + "Cast$Value", "spec=small:int32", "user");
        add("cast-whole", T + "Cast$Value", "spec=int32", "primitive", "schemaless");
        add("cast-whole-string", T + "Cast$Value", "spec=string", "primitive");
        add("cast-whole-float", T + "Cast$Value", "spec=float32", "primitive");
        add("cast-key", T + "Cast$Key", "spec=id:string", "user", "schemaless");
        add("cast-bad-type", T + "Cast$Value", "spec=foo:bytes");
        add("cast-unknown-type", T + "Cast$Value", "spec=foo:widget");
        add("cast-two-whole", T + "Cast$Value", "spec=int8,foo:int8");
        add("cast-empty", T + "Cast$Value", "spec=");
        add("cast-missing", T + "Cast$Value", "");
        add("cast-three-parts", T + "Cast$Value", "spec=a:b:c");
        // DropHeaders
        add("drop-headers", T + "DropHeaders", "headers=h1,h3", "user", "schemaless");
        add("drop-headers-empty", T + "DropHeaders", "headers=");
        add("drop-headers-dup", T + "DropHeaders", "headers=a,a");
        // ExtractField
        add("extract-name", T + "ExtractField$Value", "field=name", everything);
        add("extract-struct", T + "ExtractField$Value", "field=address", "user", "schemaless");
        add("extract-nested-v2", T + "ExtractField$Value", "field=address.city|field.syntax.version=V2", "user", "schemaless");
        add("extract-nested-v1", T + "ExtractField$Value", "field=address.city", "user", "schemaless");
        add("extract-missing", T + "ExtractField$Value", "field=nope", "user", "schemaless");
        add("extract-default", T + "ExtractField$Value", "field=email", "user");
        add("extract-no-default", T + "ExtractField$Value", "field=email|replace.null.with.default=false", "user");
        add("extract-key", T + "ExtractField$Key", "field=id", "user", "tombstones");
        add("extract-bad-syntax", T + "ExtractField$Value", "field=a|field.syntax.version=V3");
        add("extract-backtick", T + "ExtractField$Value", "field=`a.b|field.syntax.version=V2");
        // Filter
        add("filter", T + "Filter", "", "user", "tombstones");
        // Flatten
        add("flatten", T + "Flatten$Value", "", everything);
        add("flatten-delim", T + "Flatten$Value", "delimiter=_", "user", "schemaless");
        add("flatten-key", T + "Flatten$Key", "", "user", "schemaless");
        // HeaderFrom
        add("header-copy", T + "HeaderFrom$Value", "fields=name,age,email|headers=hn,ha,he|operation=copy", "user", "schemaless", "tombstones");
        add("header-move", T + "HeaderFrom$Value", "fields=name,age|headers=hn,ha|operation=move", "user", "schemaless");
        add("header-move-key", T + "HeaderFrom$Key", "fields=id|headers=kid|operation=move", "user");
        add("header-mismatch", T + "HeaderFrom$Value", "fields=a,b|headers=x|operation=copy");
        add("header-bad-op", T + "HeaderFrom$Value", "fields=a|headers=x|operation=swap");
        add("header-empty", T + "HeaderFrom$Value", "fields=|headers=x|operation=copy");
        // HoistField
        add("hoist", T + "HoistField$Value", "field=wrapped", everything);
        add("hoist-key", T + "HoistField$Key", "field=k", "user", "schemaless", "tombstones");
        // InsertField
        add("insert-all", T + "InsertField$Value", "topic.field=t!|partition.field=p|offset.field=o?|timestamp.field=ts|static.field=s|static.value=v", everything);
        add("insert-topic", T + "InsertField$Value", "topic.field=t", "user", "schemaless", "source", "tombstones");
        add("insert-key", T + "InsertField$Key", "topic.field=t|timestamp.field=ts!", "user", "schemaless");
        add("insert-nothing", T + "InsertField$Value", "");
        add("insert-static-novalue", T + "InsertField$Value", "static.field=s");
        add("insert-no-default", T + "InsertField$Value", "topic.field=t|replace.null.with.default=false", "user");
        // InsertHeader
        String[] literals = {"hello", "42", "300", "70000", "5000000000", "-7", "3.14", "1e400", "true", "false", "null",
                "[1,2,3]", "[1,2.5]", "[a,b]", "{a:1,b:2}", "{\"k\":\"v\"}", "2024-01-02", "12:34:56.789Z", "2024-01-02T03:04:05.678Z",
                "hello world", "[1,", "  spaced  ", "12345678901234567890123", "0.001"};
        for (int i = 0; i < literals.length; i++) {
            add("insert-header-" + i, T + "InsertHeader", "header=x|value.literal=" + literals[i], "primitive");
        }
        add("insert-header-missing", T + "InsertHeader", "header=x");
        // MaskField
        add("mask", T + "MaskField$Value", "fields=name,age,score,active,tags,born,ratio,small", "user", "schemaless", "tombstones");
        add("mask-string", T + "MaskField$Value", "fields=name,email|replacement=***", "user", "schemaless");
        add("mask-number", T + "MaskField$Value", "fields=age,score,ratio,small|replacement=99", "user", "schemaless");
        add("mask-bad-number", T + "MaskField$Value", "fields=age|replacement=abc", "user");
        add("mask-bool-replacement", T + "MaskField$Value", "fields=active|replacement=x", "user");
        add("mask-struct", T + "MaskField$Value", "fields=address", "user");
        add("mask-bytes", T + "MaskField$Value", "fields=blob", "user");
        add("mask-no-default", T + "MaskField$Value", "fields=name|replace.null.with.default=false", "user");
        add("mask-empty-replacement", T + "MaskField$Value", "fields=a|replacement=");
        add("mask-key", T + "MaskField$Key", "fields=id", "user");
        // RegexRouter
        add("regex", T + "RegexRouter", "regex=(.*)s|replacement=$1-copy", everything);
        add("regex-named", T + "RegexRouter", "regex=(?<base>[a-z]+)|replacement=x.${base}.y", "user", "primitive");
        add("regex-escape", T + "RegexRouter", "regex=u(.*)|replacement=\\$1-$1$10", "user");
        add("regex-bad", T + "RegexRouter", "regex=(|replacement=x");
        // ReplaceField
        add("replace-exclude", T + "ReplaceField$Value", "exclude=age,email,nope", everything);
        add("replace-include", T + "ReplaceField$Value", "include=id,name,email", "user", "schemaless");
        add("replace-renames", T + "ReplaceField$Value", "renames=name:full_name,age:years|exclude=tags", "user", "schemaless");
        add("replace-both", T + "ReplaceField$Value", "include=id,name,age|exclude=age", "user", "schemaless");
        add("replace-no-default", T + "ReplaceField$Value", "include=email|replace.null.with.default=false", "user");
        add("replace-bad-renames", T + "ReplaceField$Value", "renames=a:b:c");
        add("replace-dup", T + "ReplaceField$Value", "exclude=a,a");
        add("replace-key", T + "ReplaceField$Key", "renames=id:key_id", "user");
        // SetSchemaMetadata
        add("set-schema", T + "SetSchemaMetadata$Value", "schema.name=com.example.Renamed|schema.version=3", everything);
        add("set-schema-name", T + "SetSchemaMetadata$Value", "schema.name=x", "user", "primitive");
        add("set-schema-key", T + "SetSchemaMetadata$Key", "schema.version=9", "user");
        add("set-schema-none", T + "SetSchemaMetadata$Value", "");
        add("set-schema-bad-version", T + "SetSchemaMetadata$Value", "schema.version=x");
        // TimestampConverter
        add("ts-string", T + "TimestampConverter$Value", "field=created|target.type=string|format=yyyy-MM-dd HH:mm:ss.SSS", "user", "schemaless");
        add("ts-string-fancy", T + "TimestampConverter$Value", "field=created|target.type=string|format=EEE, d MMM yyyy hh:mm:ss a z '(day' D')' Z XXX", "user");
        add("ts-unix", T + "TimestampConverter$Value", "field=created|target.type=unix", "user", "schemaless");
        add("ts-unix-seconds", T + "TimestampConverter$Value", "field=created|target.type=unix|unix.precision=seconds", "user");
        add("ts-unix-micros", T + "TimestampConverter$Value", "field=created|target.type=unix|unix.precision=microseconds", "user", "schemaless");
        add("ts-date", T + "TimestampConverter$Value", "field=created|target.type=Date", "user", "schemaless");
        add("ts-time", T + "TimestampConverter$Value", "field=created|target.type=Time", "user", "schemaless");
        add("ts-born", T + "TimestampConverter$Value", "field=born|target.type=Timestamp", "user");
        add("ts-epoch-seconds", T + "TimestampConverter$Value", "field=epoch|target.type=Timestamp|unix.precision=seconds", "user");
        add("ts-parse", T + "TimestampConverter$Value", "field=when|target.type=unix|format=yyyy-MM-dd HH:mm:ss.SSS", "user", "schemaless");
        add("ts-parse-bad", T + "TimestampConverter$Value", "field=when|target.type=unix|format=dd/MM/yyyy", "user");
        add("ts-whole", T + "TimestampConverter$Value", "target.type=Timestamp", "primitive");
        add("ts-whole-string", T + "TimestampConverter$Value", "target.type=string|format=yyyyMMdd'T'HHmmss", "primitive");
        add("ts-whole-date", T + "TimestampConverter$Value", "target.type=Date|format=yyyy-MM-dd HH:mm:ss.SSS", "primitive");
        add("ts-key", T + "TimestampConverter$Key", "target.type=string|format=yyyy", "primitive");
        add("ts-wrong-type", T + "TimestampConverter$Value", "field=name|target.type=unix", "user");
        add("ts-no-format", T + "TimestampConverter$Value", "target.type=string");
        add("ts-bad-type", T + "TimestampConverter$Value", "target.type=epoch");
        add("ts-bad-pattern", T + "TimestampConverter$Value", "target.type=string|format=yyyy-qq");
        // TimestampRouter
        add("ts-router", T + "TimestampRouter", "", everything);
        add("ts-router-format", T + "TimestampRouter", "topic.format=${topic}_${timestamp}_${topic}|timestamp.format=yyyy-MM HH", "user", "tombstones");
        // ValueToKey
        add("value-to-key", T + "ValueToKey", "fields=id,name", everything);
        add("value-to-key-v2", T + "ValueToKey", "fields=address.city,id|field.syntax.version=v2", "user", "schemaless");
        add("value-to-key-missing", T + "ValueToKey", "fields=id,nope", "user", "schemaless");
        add("value-to-key-default", T + "ValueToKey", "fields=email|replace.null.with.default=false", "user");
        add("value-to-key-empty", T + "ValueToKey", "fields=");
        // Corners: nested defaults, decimals, logical types, maps.
        add("n-flatten", T + "Flatten$Value", "", "nested");
        add("n-flatten-delim", T + "Flatten$Value", "delimiter=::", "nested");
        add("n-cast", T + "Cast$Value", "spec=price:string,ratio:int32,flag:boolean,t:int32,d:string", "nested");
        add("n-cast-price-int", T + "Cast$Value", "spec=price:int64,ratio:float32", "nested");
        add("n-cast-schemaless", T + "Cast$Value", "spec=ratio:int8,flag:boolean,big:int16,id:float64,missing:int32", "nested");
        add("n-cast-list", T + "Cast$Value", "spec=list:string", "nested");
        add("n-mask", T + "MaskField$Value", "fields=price,t,d,list,inner,ratio", "nested");
        add("n-mask-schemaless", T + "MaskField$Value", "fields=inner,ratio,flag,missing", "nested");
        add("n-mask-map", T + "MaskField$Value", "fields=attrs", "nested");
        add("n-extract-v2", T + "ExtractField$Value", "field=inner.x|field.syntax.version=V2", "nested");
        add("n-extract-v2-default", T + "ExtractField$Value", "field=innerWithDefault.y|field.syntax.version=V2", "nested");
        add("n-header-from-missing", T + "HeaderFrom$Value", "fields=nope|headers=h|operation=copy", "nested");
        add("n-header-from-struct", T + "HeaderFrom$Value", "fields=inner,price|headers=hi,hp|operation=move", "nested");
        add("n-replace-collision", T + "ReplaceField$Value", "renames=ratio:id", "nested");
        add("n-insert", T + "InsertField$Value", "timestamp.field=ts!|partition.field=p!", "nested");
        add("n-ts-time", T + "TimestampConverter$Value", "field=t|target.type=string|format=HH:mm:ss.SSS a", "nested");
        add("n-ts-date-unix", T + "TimestampConverter$Value", "field=d|target.type=unix|unix.precision=nanoseconds", "nested");
        add("n-ts-missing", T + "TimestampConverter$Value", "field=nope|target.type=unix", "nested");
        add("n-ts-string-2digit", T + "TimestampConverter$Value", "field=flag|target.type=unix|format=yy", "nested");
        add("n-router", T + "TimestampRouter", "topic.format=${timestamp}/${topic}|timestamp.format=yyyy-'W'ww-u EEEE MMMM hh a D", "nested");
        add("n-router-year-end", T + "TimestampRouter", "timestamp.format=YYYY-ww", "nested");
        add("n-value-to-key", T + "ValueToKey", "fields=inner,price,d", "nested");
        add("n-value-to-key-v2", T + "ValueToKey", "fields=inner.y,innerWithDefault.x|field.syntax.version=V2", "nested");
        add("n-set-schema", T + "SetSchemaMetadata$Value", "schema.name=N|schema.version=1", "nested");
        add("n-hoist", T + "HoistField$Value", "field=h", "nested");
        add("n-regex-groups", T + "RegexRouter", "regex=(n)(e)(s)(t)(e)(d)(.*)|replacement=$7$6$5$4$3$2$1-$10", "nested");
        // Predicates
        add("p-topic", T + "predicates.TopicNameMatches", "pattern=u.*", everything);
        add("p-topic-partial", T + "predicates.TopicNameMatches", "pattern=ser", "user");
        add("p-topic-empty", T + "predicates.TopicNameMatches", "pattern=");
        add("p-header", T + "predicates.HasHeaderKey", "name=h2", everything);
        add("p-header-missing", T + "predicates.HasHeaderKey", "");
        add("p-tombstone", T + "predicates.RecordIsTombstone", "", everything);
    }

    // Debezium 3.6's ExtractNewRecordState on change events (create,
    // update, delete, tombstone, truncate, and a non-envelope record).
    static void defineDebeziumCases() {
        String D = "io.debezium.transforms.ExtractNewRecordState";
        add("dbz-default", D, "", "debezium");
        for (String mode : new String[] {"drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"}) {
            add("dbz-" + mode, D, "delete.tombstone.handling.mode=" + mode, "debezium");
        }
        add("dbz-add-fields", D, "add.fields=op,table,lsn,source.ts_ms,ts_ms,transaction.id,db:database,nope", "debezium");
        add("dbz-add-fields-prefix", D, "add.fields=op,version|add.fields.prefix=meta_|delete.tombstone.handling.mode=rewrite", "debezium");
        add("dbz-add-headers", D, "add.headers=op,source.ts_ms,table,transaction.total_order", "debezium");
        add("dbz-add-headers-prefix", D, "add.headers=op|add.headers.prefix=x-", "debezium");
        add("dbz-route", D, "route.by.field=first_name|delete.tombstone.handling.mode=rewrite", "debezium");
        add("dbz-rewrite-no-default", D, "delete.tombstone.handling.mode=rewrite|replace.null.with.default=false|add.fields=op", "debezium");
        add("dbz-rwt-headers", D, "delete.tombstone.handling.mode=rewrite-with-tombstone|add.headers=op,table:tbl|add.fields=name,ts_ms:when", "debezium");
        add("dbz-route-delete", D, "route.by.field=first_name|delete.tombstone.handling.mode=tombstone", "debezium");
        add("dbz-bad-mode", D, "delete.tombstone.handling.mode=bogus");
    }

    // ---- encoding ----
    static JsonNode envelope(Schema schema, Object value) throws Exception {
        if (schema == null) {
            ObjectNode o = F.objectNode();
            o.putNull("schema");
            o.set("payload", tagged(value));
            return o;
        }
        byte[] b = CONV.fromConnectData("t", schema, value);
        return M.readTree(b);
    }

    static JsonNode tagged(Object v) throws Exception {
        if (v == null) return F.nullNode();
        if (v instanceof String s) return F.textNode(s);
        if (v instanceof Boolean b) return F.booleanNode(b);
        if (v instanceof Long l) return F.numberNode(l);
        if (v instanceof Double d) return F.numberNode(d);
        ObjectNode o = F.objectNode();
        if (v instanceof Byte b) return o.put("$int8", b);
        if (v instanceof Short s) return o.put("$int16", s);
        if (v instanceof Integer i) return o.put("$int32", i);
        if (v instanceof Float f) return o.put("$float32", f);
        if (v instanceof byte[] b) return o.put("$bytes", Base64.getEncoder().encodeToString(b));
        if (v instanceof ByteBuffer bb) return o.put("$bytes", Base64.getEncoder().encodeToString(bb.array()));
        if (v instanceof java.util.Date d) return o.put("$date", d.getTime());
        if (v instanceof BigDecimal d) return o.put("$decimal", d.toString());
        if (v instanceof Struct s) return o.set("$struct", envelope(s.schema(), s));
        if (v instanceof List<?> l) {
            ArrayNode a = F.arrayNode();
            for (Object e : l) a.add(tagged(e));
            return a;
        }
        if (v instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) o.set(String.valueOf(e.getKey()), tagged(e.getValue()));
            return o;
        }
        throw new IllegalArgumentException("cannot tag " + v.getClass());
    }

    static JsonNode record(ConnectRecord<?> r) throws Exception {
        ObjectNode o = F.objectNode();
        o.put("sink", r instanceof SinkRecord);
        o.put("topic", r.topic());
        if (r.kafkaPartition() == null) o.putNull("partition"); else o.put("partition", r.kafkaPartition());
        if (r.timestamp() == null) o.putNull("timestamp"); else o.put("timestamp", r.timestamp());
        if (r instanceof SinkRecord s) {
            o.put("offset", s.kafkaOffset());
            o.put("timestampType", s.timestampType().name);
        }
        o.set("key", envelope(r.keySchema(), r.key()));
        o.set("value", envelope(r.valueSchema(), r.value()));
        ArrayNode hs = F.arrayNode();
        for (Header h : r.headers()) {
            ObjectNode ho = F.objectNode();
            ho.put("key", h.key());
            ho.set("value", envelope(h.schema(), h.value()));
            hs.add(ho);
        }
        o.set("headers", hs);
        return o;
    }

    static String message(Throwable e) {
        return e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("debezium")) defineDebeziumCases(); else defineCases();
        StringBuilder out = new StringBuilder();
        for (Case c : cases) {
            // A fresh corpus per case: some transformations (Debezium's)
            // add headers to the record they are given.
            Map<String, List<ConnectRecord<?>>> corpus = corpus();
            Object plugin = Class.forName(c.cls()).getDeclaredConstructor().newInstance();
            ObjectNode line = F.objectNode();
            line.put("case", c.name());
            line.put("class", c.cls());
            line.set("config", M.valueToTree(c.config()));
            try {
                if (plugin instanceof Transformation t) t.configure(c.config());
                else ((Predicate) plugin).configure(c.config());
            } catch (Exception e) {
                line.put("configError", message(e));
                out.append(M.writeValueAsString(line)).append('\n');
                continue;
            }
            for (String set : c.sets()) {
                List<ConnectRecord<?>> records = corpus.get(set);
                for (int i = 0; i < records.size(); i++) {
                    ConnectRecord r = records.get(i);
                    ObjectNode l = line.deepCopy();
                    l.put("set", set);
                    l.put("index", i);
                    l.set("input", record(r));
                    try {
                        if (plugin instanceof Predicate p) {
                            l.put("test", p.test(r));
                        } else {
                            ConnectRecord res = (ConnectRecord) ((Transformation) plugin).apply(r);
                            if (res == null) l.putNull("output"); else l.set("output", record(res));
                        }
                    } catch (Exception e) {
                        l.put("error", message(e));
                        l.put("errorClass", e.getClass().getName());
                    }
                    out.append(M.writeValueAsString(l)).append('\n');
                }
            }
        }
        System.out.print(out);
    }
}
