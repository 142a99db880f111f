// ProbeValidation feeds (config, value) pairs through Apache Kafka's own
// ConfigDef parsing and validators, exactly as ConfigDef.parseValue does,
// and prints what Kafka makes of each: the canonical value
// (ConfigDef.convertToString of the parsed value) or the error message.
// Input: JSON array of {"resource":"topic"|"broker","name":..,"value":..}
// on stdin; output: the same objects with "ok", "canonical", "error".
//
//   java -cp ".cache/kafka-4.4/libs/*" internal/kafkaref/java/ProbeValidation.java \
//     < internal/kafkaref/testdata/configdef/validation_cases.json \
//     > internal/kafkaref/testdata/configdef/validation.json
import java.util.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.core.type.TypeReference;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;

public class ProbeValidation {
  public static void main(String[] a) throws Exception {
    ObjectMapper om = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    List<Map<String,Object>> cases = om.readValue(System.in, new TypeReference<List<Map<String,Object>>>(){});
    Map<String, ConfigDef.ConfigKey> topic = LogConfig.configKeys();
    Map<String, ConfigDef.ConfigKey> broker = AbstractKafkaConfig.CONFIG_DEF.configKeys();
    for (Map<String,Object> c : cases) {
      String name = (String) c.get("name");
      String value = (String) c.get("value");
      ConfigDef.ConfigKey k = ("topic".equals(c.get("resource")) ? topic : broker).get(name);
      if (k == null) { c.put("ok", false); c.put("error", "unknown key"); continue; }
      try {
        Object parsed = ConfigDef.parseType(k.name, value, k.type);
        if (k.validator != null) k.validator.ensureValid(k.name, parsed);
        c.put("ok", true);
        c.put("canonical", k.type == ConfigDef.Type.PASSWORD ? null : ConfigDef.convertToString(parsed, k.type));
      } catch (ConfigException e) {
        c.put("ok", false);
        c.put("error", e.getMessage());
      } catch (Exception e) {
        c.put("ok", false);
        c.put("error", e.getClass().getName() + ": " + e.getMessage());
      }
    }
    System.out.println(om.writeValueAsString(cases));
  }
}
