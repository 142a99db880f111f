// Dump renders Connect schemas and values as canonical text. The Go
// tests (converters/internal/dump) render Fjord's values the same way, so
// "decoding Kafka's bytes gives equal Connect values" is a string
// comparison.
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;

final class Dump {
    private Dump() {}

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String value(Object v) {
        if (v == null) return "null";
        if (v instanceof Byte) return "i8:" + v;
        if (v instanceof Short) return "i16:" + v;
        if (v instanceof Integer) return "i32:" + v;
        if (v instanceof Long) return "i64:" + v;
        if (v instanceof Float) return "f32:" + v;
        if (v instanceof Double) return "f64:" + v;
        if (v instanceof Boolean) return "bool:" + v;
        if (v instanceof String) return "str:" + quote((String) v);
        if (v instanceof byte[]) return "bytes:" + Base64.getEncoder().encodeToString((byte[]) v);
        if (v instanceof ByteBuffer) return "bytes:" + Base64.getEncoder().encodeToString(((ByteBuffer) v).array());
        if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            return "dec:" + d.unscaledValue() + "/" + d.scale();
        }
        if (v instanceof java.util.Date) return "time:" + ((java.util.Date) v).getTime();
        if (v instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object o : (List<?>) v) parts.add(value(o));
            return "[" + String.join(",", parts) + "]";
        }
        if (v instanceof Map) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) parts.add(value(e.getKey()) + "=>" + value(e.getValue()));
            parts.sort(null);
            return "{" + String.join(",", parts) + "}";
        }
        if (v instanceof Struct) {
            Struct s = (Struct) v;
            List<String> parts = new ArrayList<>();
            for (Field f : s.schema().fields()) parts.add(f.name() + "=" + value(s.getWithoutDefault(f.name())));
            return "struct{" + String.join(",", parts) + "}";
        }
        return "?" + v.getClass().getName();
    }

    static String schema(Schema s) {
        if (s == null) return "null";
        List<String> a = new ArrayList<>();
        if (s.isOptional()) a.add("opt");
        if (s.name() != null) a.add("name=" + quote(s.name()));
        if (s.version() != null) a.add("ver=" + s.version());
        if (s.doc() != null) a.add("doc=" + quote(s.doc()));
        if (s.parameters() != null) {
            List<String> p = new ArrayList<>();
            for (Map.Entry<String, String> e : s.parameters().entrySet()) p.add(e.getKey() + "=" + quote(e.getValue()));
            a.add("params={" + String.join(",", p) + "}");
        }
        if (s.defaultValue() != null) a.add("default=" + value(s.defaultValue()));
        switch (s.type()) {
            case STRUCT: {
                List<String> f = new ArrayList<>();
                for (Field x : s.fields()) f.add(x.name() + ":" + schema(x.schema()));
                a.add("fields=[" + String.join(",", f) + "]");
                break;
            }
            case ARRAY:
                a.add("value=" + schema(s.valueSchema()));
                break;
            case MAP:
                a.add("key=" + schema(s.keySchema()));
                a.add("value=" + schema(s.valueSchema()));
                break;
            default:
        }
        return s.type() + "(" + String.join(",", a) + ")";
    }
}
