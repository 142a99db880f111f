package dev.fjord.golden;

import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A source connector with a required "topic" and a "count": its task
 * emits count records with source partition {"file": <file>} and offset
 * {"position": i}, so the offsets topic shows Kafka's record format.
 */
public class GoldenSourceConnector extends SourceConnector {
    static final ConfigDef CONFIG = new ConfigDef()
        .define("topic", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
            ConfigDef.Importance.HIGH, "The topic to publish data to")
        .define("file", ConfigDef.Type.STRING, "golden", ConfigDef.Importance.HIGH,
            "Source partition name")
        .define("count", ConfigDef.Type.INT, 3, ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
            "Number of records to emit");
    private Map<String, String> props;

    @Override public String version() { return "1.0"; }
    @Override public void start(Map<String, String> props) { this.props = props; }
    @Override public Class<? extends Task> taskClass() { return GoldenSourceTask.class; }
    @Override public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(new HashMap<>(props));
    }
    @Override public void stop() {}
    @Override public ConfigDef config() { return CONFIG; }
}
