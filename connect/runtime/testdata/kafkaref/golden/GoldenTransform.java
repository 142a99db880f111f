package dev.fjord.golden;

import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.Transformation;

/** A transformation with one required key, returning records unchanged. */
public class GoldenTransform<R extends ConnectRecord<R>> implements Transformation<R> {
    static final ConfigDef CONFIG = new ConfigDef()
        .define("field", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
            "Field name to act on")
        .define("times", ConfigDef.Type.INT, 1, ConfigDef.Range.between(1, 10), ConfigDef.Importance.LOW,
            "How many times");
    @Override public R apply(R record) { return record; }
    @Override public ConfigDef config() { return CONFIG; }
    @Override public void close() {}
    @Override public void configure(Map<String, ?> configs) {}
}
