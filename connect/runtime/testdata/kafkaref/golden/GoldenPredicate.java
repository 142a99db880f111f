package dev.fjord.golden;

import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/** A predicate with one required key, true for every record. */
public class GoldenPredicate<R extends ConnectRecord<R>> implements Predicate<R> {
    static final ConfigDef CONFIG = new ConfigDef()
        .define("pattern", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.MEDIUM,
            "A pattern");
    @Override public ConfigDef config() { return CONFIG; }
    @Override public boolean test(R record) { return true; }
    @Override public void close() {}
    @Override public void configure(Map<String, ?> configs) {}
}
