package cdc

import (
	"maps"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// runtimePrefixes are keys every connector config may carry that the
// runtime (not the connector) reads.
var runtimePrefixes = []string{
	"key.converter", "value.converter", "header.converter", "transforms", "predicates", "errors.",
	"topic.creation.", "producer.override.", "consumer.override.", "admin.override.", "transaction.boundary",
}

var runtimeKeys = map[string]bool{
	"name": true, "connector.class": true, "tasks.max": true, "tasks.max.enforce": true, "config.action.reload": true,
	"exactly.once.support": true, "offsets.storage.topic": true, "connector.plugin.version": true,
}

// passThroughPrefixes are Debezium's families of keys handed to a driver
// or to optional subsystems; a key under them is never a typo we can
// tell.
var passThroughPrefixes = []string{"driver.", "database.", "converters", "custom.metric.tags", "notification.", "signal.", "snapshot.select.statement.overrides", "message.prefix.", "post.processors", "openlineage.",
	"column.mask.", "column.truncate.", "internal.", "snapshot.mode.configuration.based.", "memory.management."}

// unknownKeys reports keys neither Fjord, Debezium nor the runtime
// knows: almost always a typo, which would otherwise be silently ignored.
// Debezium keys Fjord does not implement are accepted (a pasted Debezium
// config keeps working) and listed in debeziumOnlyKeys.
func unknownKeys(props map[string]string) []connect.ConfigValue {
	var out []connect.ConfigValue
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if connectorKeys.Key(k) != nil || runtimeKeys[k] || debeziumOnlyKeys[k] || hasAnyPrefix(k, runtimePrefixes) || hasAnyPrefix(k, passThroughPrefixes) {
			continue
		}
		out = append(out, connect.ConfigValue{Name: k, Value: props[k], Visible: true,
			Errors: []string{"Unknown configuration '" + k + "' for the PostgreSQL connector: check its spelling against Debezium's PostgreSQL connector documentation"}})
	}
	return out
}

func hasAnyPrefix(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// debeziumOnlyKeys are Debezium PostgreSQL connector settings Fjord
// accepts and ignores (tuning of Debezium's own machinery, or features
// outside what Fjord implements).
var debeziumOnlyKeys = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		snapshot.max.threads snapshot.lock.timeout.ms snapshot.locking.mode snapshot.isolation.mode snapshot.delay.ms
		snapshot.include.collection.list snapshot.query.mode snapshot.mode.custom.name snapshot.tables.order.by.row.count
		snapshot.new.tables streaming.delay.ms include.schema.changes include.schema.comments
		schema.name.adjustment.mode field.name.adjustment.mode message.key.columns column.propagate.source.type
		datatype.propagate.source.type column.truncate.to.length.chars column.mask.with.length.chars
		event.processing.failure.handling.mode retriable.restart.connector.wait.ms errors.max.retries
		max.queue.size.in.bytes query.fetch.size provide.transaction.metadata tombstones.on.delete
		table.ignore.builtin xmin.fetch.interval.ms toasted.value.placeholder publish.via.partition.root
		replica.identity.autoset.values lsn.flush.mode flush.lsn.source slot.stream.params slot.failover
		topic.naming.strategy topic.delimiter topic.cache.size schema.history.internal
		incremental.snapshot.allow.schema.changes incremental.snapshot.watermarking.strategy read.only
		sourceinfo.struct.maker custom.sanitize.pattern skipped.operations database.initial.statements
		unavailable.value.placeholder heartbeat.topics.prefix status.update.interval.ms
		time.precision.mode decimal.handling.mode binary.handling.mode interval.handling.mode hstore.handling.mode
		guardrail.collections.max guardrail.collections.limit.action extended.headers.enabled
		log.position.check.enabled offset.mismatch.strategy connection.validation.timeout.ms executor.shutdown.timeout.ms
		legacy.snapshot.max.threads lsn.flush.timeout.action lsn.flush.timeout.ms schema.refresh.mode
		snapshot.locking.mode.custom.name snapshot.max.threads.multiplier snapshot.query.mode.custom.name
		statistics.metrics.enabled transaction.metadata.factory`) {
		if connectorKeys.Key(k) == nil {
			debeziumOnlyKeys[k] = true
		}
	}
}
