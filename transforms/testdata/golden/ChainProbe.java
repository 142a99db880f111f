// ChainProbe asks Kafka Connect 4.4 which errors its connector config
// validation (ConnectorConfig.enrich(...).validate(...), what
// PUT /connector-plugins/{p}/config/validate runs) reports for
// transforms/predicates configs, one JSON line per config:
// {"props":{...},"errors":{"key":["message",...]}}. Run by generate.sh;
// transforms/chain_test.go compares BuildChain's problems.
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;

public class ChainProbe {
    static final String T = "org.apache.kafka.connect.transforms.";

    static Map<String, String> props(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return m;
    }

    public static void main(String[] a) throws Exception {
        Plugins plugins = new Plugins(new HashMap<>());
        ObjectMapper om = new ObjectMapper();
        List<Map<String, String>> cases = List.of(
                props("transforms", "a,b,c,d,e",
                        "transforms.b.type", "com.example.Nope",
                        "transforms.c.type", T + "predicates.HasHeaderKey",
                        "transforms.d.type", T + "Cast$Value", "transforms.d.spec", "x:bytes",
                        "transforms.e.type", T + "Filter", "transforms.e.negate", "true",
                        "predicates", "p,q", "predicates.p.type", T + "predicates.HasHeaderKey"),
                props("transforms", "a,a", "transforms.a.type", T + "Filter"),
                props("transforms", "h,m", "transforms.h.type", T + "HeaderFrom$Value",
                        "transforms.h.fields", "", "transforms.h.headers", "x", "transforms.h.operation", "swap",
                        "transforms.m.type", T + "MaskField$Key", "transforms.m.fields", "a,a", "transforms.m.replacement", ""),
                props("transforms", "r", "transforms.r.type", T + "RegexRouter", "transforms.r.regex", "x",
                        "predicates", "p", "predicates.p.type", T + "predicates.TopicNameMatches", "predicates.p.pattern", ""),
                props("transforms", "ok", "transforms.ok.type", T + "RegexRouter", "transforms.ok.regex", "(.*)",
                        "transforms.ok.replacement", "$1", "transforms.ok.predicate", "p",
                        "predicates", "p", "predicates.p.type", T + "predicates.RecordIsTombstone"));
        for (Map<String, String> p : cases) {
            Map<String, String> full = new LinkedHashMap<>(p);
            full.put("name", "x");
            full.put("connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector");
            ConfigDef def = ConnectorConfig.enrich(plugins, ConnectorConfig.configDef(), full, false);
            Map<String, List<String>> errors = new TreeMap<>();
            for (ConfigValue v : def.validate(full)) {
                if (!v.errorMessages().isEmpty() && (v.name().startsWith("transforms") || v.name().startsWith("predicates"))) {
                    errors.put(v.name(), v.errorMessages());
                }
            }
            System.out.println(om.writeValueAsString(Map.of("props", p, "errors", errors)));
        }
    }
}
