// DumpConfigDef prints Apache Kafka's config definitions as JSON: every topic
// config (LogConfig) and broker config (AbstractKafkaConfig) with type,
// default, importance, validator, documentation, plus the dynamic update
// modes and synonym tables. It is run once per Kafka release to refresh
// internal/kafkaref/testdata/configdef/kafka_configdef.json (see README.md):
//
//   java -cp ".cache/kafka-4.4/libs/*" internal/kafkaref/java/DumpConfigDef.java
import java.util.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.server.config.*;

public class DumpConfigDef {
  static Map<String,Object> key(ConfigDef.ConfigKey k) {
    Map<String,Object> m = new LinkedHashMap<>();
    m.put("name", k.name);
    m.put("type", k.type.name());
    m.put("hasDefault", k.hasDefault());
    m.put("default", k.hasDefault() && k.defaultValue != null ? ConfigDef.convertToString(k.defaultValue, k.type) : null);
    m.put("importance", k.importance == null ? null : k.importance.name());
    m.put("validator", k.validator == null ? null : k.validator.toString());
    m.put("internal", k.internalConfig);
    m.put("doc", k.documentation);
    return m;
  }
  public static void main(String[] a) throws Exception {
    Map<String,Object> out = new LinkedHashMap<>();
    List<Object> topic = new ArrayList<>();
    for (ConfigDef.ConfigKey k : LogConfig.configKeys().values()) {
      Map<String,Object> m = key(k);
      List<String> syn = new ArrayList<>();
      for (ConfigSynonym s : ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.getOrDefault(k.name, List.of())) syn.add(s.name());
      m.put("brokerSynonyms", syn);
      topic.add(m);
    }
    out.put("topic", topic);
    List<Object> broker = new ArrayList<>();
    Map<String,String> modes = DynamicBrokerConfig.dynamicConfigUpdateModes();
    for (ConfigDef.ConfigKey k : AbstractKafkaConfig.CONFIG_DEF.configKeys().values()) {
      Map<String,Object> m = key(k);
      m.put("dynamicMode", modes.get(k.name));
      m.put("synonyms", DynamicBrokerConfig.brokerConfigSynonyms(k.name, true));
      broker.add(m);
    }
    out.put("broker", broker);
    out.put("allDynamic", new TreeSet<>(DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS));
    out.put("dynamicLogConfig", new TreeSet<>(DynamicBrokerConfig.DynamicLogConfig.RECONFIGURABLE_CONFIGS));
    out.put("dynamicConfigBrokerNames", new TreeSet<>(DynamicConfig.Broker.names()));
    out.put("topicConfigSynonyms", new TreeMap<>(ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS));
    ObjectMapper om = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    System.out.println(om.writeValueAsString(out));
  }
}
