// DumpConnectConfigDef prints Kafka Connect 4.4's worker and connector
// config definitions as JSON (name, type, default, importance, group,
// order, width, display name, validator, doc): DistributedConfig,
// StandaloneConfig, the common, sink and source ConnectorConfig, and the
// producer, consumer and admin client configs. connect/runtime builds its
// config definitions from the output (connect/runtime/kafkadefs.json,
// embedded). Run by gen.sh:
//
//   java -cp ".cache/kafka-4.4/libs/*" connect/runtime/testdata/kafkaref/DumpConnectConfigDef.java > connect/runtime/kafkadefs.json
import java.util.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.runtime.*;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;

public class DumpConnectConfigDef {
  static List<Object> keys(ConfigDef d) {
    List<Object> out = new ArrayList<>();
    for (ConfigDef.ConfigKey k : d.configKeys().values()) {
      Map<String,Object> m = new LinkedHashMap<>();
      m.put("name", k.name);
      m.put("type", k.type.name());
      m.put("hasDefault", k.hasDefault());
      m.put("default", k.hasDefault() && k.defaultValue != null ? ConfigDef.convertToString(k.defaultValue, k.type) : null);
      m.put("importance", k.importance == null ? null : k.importance.name());
      m.put("group", k.group);
      m.put("order", k.orderInGroup);
      m.put("width", k.width == null ? null : k.width.name());
      m.put("displayName", k.displayName);
      // Validators without a toString print an identity hash; drop it so
      // reruns compare equal.
      m.put("validator", k.validator == null ? null : k.validator.toString().replaceAll("@[0-9a-f]+$", ""));
      m.put("internal", k.internalConfig);
      m.put("doc", k.documentation);
      out.add(m);
    }
    return out;
  }
  public static void main(String[] a) throws Exception {
    Map<String,Object> out = new LinkedHashMap<>();
    // Neither class exposes its definition; read the private fields.
    java.lang.reflect.Method dm = DistributedConfig.class.getDeclaredMethod("config", Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto"));
    dm.setAccessible(true);
    Object crypto = Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto").getField("SYSTEM").get(null);
    out.put("distributed", keys((ConfigDef) dm.invoke(null, crypto)));
    java.lang.reflect.Field sf = StandaloneConfig.class.getDeclaredField("CONFIG");
    sf.setAccessible(true);
    out.put("standalone", keys((ConfigDef) sf.get(null)));
    out.put("connector", keys(ConnectorConfig.configDef()));
    out.put("sink", keys(SinkConnectorConfig.configDef()));
    out.put("source", keys(SourceConnectorConfig.configDef()));
    // Connector client overrides (producer.override.* ...) are validated
    // against the clients' own definitions.
    out.put("producer", keys(org.apache.kafka.clients.producer.ProducerConfig.configDef()));
    out.put("consumer", keys(org.apache.kafka.clients.consumer.ConsumerConfig.configDef()));
    out.put("admin", keys(org.apache.kafka.clients.admin.AdminClientConfig.configDef()));
    ObjectMapper om = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    System.out.println(om.writeValueAsString(out));
  }
}
