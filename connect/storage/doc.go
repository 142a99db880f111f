// Package storage keeps what a Connect worker must remember: source
// offsets, connector and task configs, and connector, task and topic
// statuses. Each kind has a small interface (OffsetStore, ConfigStore,
// StatusStore) with an in-memory twin for tests and standalone mode, a
// JSON file for standalone offsets (FileOffsetStore), and Kafka-topic-backed
// implementations for distributed mode (KafkaOffsetStore, KafkaConfigStore,
// KafkaStatusStore) that read and write the same compacted topics, keys
// and JSON values as Kafka Connect 4.4, so a Fjord worker can join or
// replace a Kafka Connect cluster on its existing topics:
//
//	offsets  key ["<connector>",{<source partition>}]  value {<source offset>}
//	configs  connector-<name>      {"properties":{...}}
//	         task-<name>-<n>       {"properties":{...}}
//	         commit-<name>         {"tasks":<n>}
//	         target-state-<name>   {"state":"PAUSED","state.v2":"STOPPED"}
//	         restart-connector-<name> {"include-tasks":true,"only-failed":false}
//	         session-key           {"key":...,"algorithm":...,"creation-timestamp":...}
//	status   status-connector-<name>, status-task-<name>-<n>
//	                               {"state":...,"trace":...,"worker_id":...,"generation":...,"version":...}
//	         status-topic-<topic>:connector-<name>
//	                               {"topic":{"name":...,"connector":...,"task":...,"discoverTimestamp":...}}
//
// Values are what Kafka's JsonConverter writes with schemas disabled;
// JSON integers read back as int64 and other numbers as float64, as
// JsonConverter yields Long and Double. Tombstones (nil values) delete.
//
// The topic-backed stores share one pattern (Kafka's KafkaBasedLog): on
// Start the topic is created compacted if missing, then read to its end;
// a goroutine keeps consuming, and every write goes through the topic, so
// a store sees its own writes in the same order as every other worker. The
// file store differs from Kafka on purpose: Kafka's
// offset.storage.file.filename holds a Java-serialized HashMap, which Go
// cannot read or write sensibly; Fjord writes the same keys and values as a
// JSON document (see FileOffsetStore), replaced atomically on each flush.
package storage
