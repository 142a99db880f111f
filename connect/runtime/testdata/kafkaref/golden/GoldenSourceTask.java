package dev.fjord.golden;

import java.util.*;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** Emits "count" string records once, then idles. */
public class GoldenSourceTask extends SourceTask {
    private String topic, file;
    private int count, next;

    @Override public String version() { return "1.0"; }
    @Override public void start(Map<String, String> props) {
        topic = props.get("topic");
        file = props.getOrDefault("file", "golden");
        count = Integer.parseInt(props.getOrDefault("count", "3"));
        Map<String, Object> off = context.offsetStorageReader().offset(Map.of("file", file));
        next = off == null ? 0 : ((Number) off.get("position")).intValue() + 1;
    }
    @Override public List<SourceRecord> poll() throws InterruptedException {
        if (next >= count) {
            Thread.sleep(200);
            return null;
        }
        int i = next++;
        return List.of(new SourceRecord(Map.of("file", file), Map.of("position", (long) i),
            topic, null, Schema.STRING_SCHEMA, "k" + i, Schema.STRING_SCHEMA, "v" + i));
    }
    @Override public void stop() {}
}
