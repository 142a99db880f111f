package dev.fjord.golden;

import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * A sink connector with a FileStreamSink-like config ("file", optional),
 * so that Kafka Connect's validate answers can be captured without the
 * connect-file jar. Its Go twin is registered by connect/runtime tests.
 */
public class GoldenSinkConnector extends SinkConnector {
    static final ConfigDef CONFIG = new ConfigDef()
        .define("file", ConfigDef.Type.STRING, null, ConfigDef.Importance.HIGH,
            "Destination filename. If not specified, the standard output will be used");
    private Map<String, String> props;

    @Override public String version() { return "1.0"; }
    @Override public void start(Map<String, String> props) { this.props = props; }
    @Override public Class<? extends Task> taskClass() { return GoldenSinkTask.class; }
    @Override public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> out = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) out.add(new HashMap<>(props));
        return out;
    }
    @Override public void stop() {}
    @Override public ConfigDef config() { return CONFIG; }
}
