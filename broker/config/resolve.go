package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Dynamic holds the dynamic broker configs (AlterConfigs on BROKER
// resources) as the metadata image stores them: raw strings, already
// validated by ValidateBrokerConfigs when they were set.
type Dynamic struct {
	// ClusterDefault is the resource named "" (kafka-configs --entity-default).
	ClusterDefault map[string]string
	// Broker is this broker's own resource (named by its node id).
	Broker map[string]string
}

// layers are the raw config maps a broker sees, in the order Kafka's
// DescribeConfigs lists synonyms: per-broker dynamic, cluster-default
// dynamic, static (server.properties), and Kafka's defaults.
type layers struct {
	broker, clusterDefault, static map[string]string
}

// Source numbers, as DescribeConfigs' config_source (kmsg.ConfigSource).
const (
	sourceTopic          int8 = 1
	sourceDynamicBroker  int8 = 2
	sourceDynamicDefault int8 = 3
	sourceStatic         int8 = 4
	sourceDefault        int8 = 5
)

// brokerDefaults is Kafka's staticDefaultConfigs: the canonical default of
// every broker key whose default is not null.
var brokerDefaults = func() map[string]string {
	m := map[string]string{}
	for _, s := range brokerTable.specs {
		if !s.NoDefault {
			m[s.Name] = canonical(s.Type, s.defaultValue())
		}
	}
	return m
}()

// effectiveProps is Kafka's DynamicBrokerConfig.updateCurrentConfig: the
// static properties with the cluster defaults and then the per-broker
// configs laid over them. Setting a key dynamically removes its synonyms
// first, so that a dynamic log.retention.ms is not beaten by a static
// log.retention.minutes.
func effectiveProps(static map[string]string, d Dynamic) map[string]string {
	props := maps.Clone(static)
	for _, over := range []map[string]string{d.ClusterDefault, d.Broker} {
		for _, k := range slices.Sorted(maps.Keys(over)) {
			// Kafka leaves the base of a listener override in place: other
			// listeners may use it, and the override beats it anyway.
			if _, isListener := listenerBase(k); !isListener {
				for _, syn := range brokerSynonyms(k) {
					delete(props, syn)
				}
			}
			props[k] = over[k]
		}
	}
	return props
}

// brokerValues parses every known broker key of props, falling back to
// Kafka's defaults (nil for a null default).
func brokerValues(props map[string]string) (map[string]any, error) {
	vals := make(map[string]any, len(brokerTable.specs))
	var errs []error
	for i := range brokerTable.specs {
		s := &brokerTable.specs[i]
		raw, ok := props[s.Name]
		if !ok {
			vals[s.Name] = s.defaultValue()
			continue
		}
		v, err := s.parse(raw)
		if err != nil {
			errs = append(errs, err)
			vals[s.Name] = s.defaultValue()
			continue
		}
		vals[s.Name] = v
	}
	return vals, errors.Join(errs...)
}

// topicDefault is a topic key's value when the topic does not override
// it: the first of its broker synonyms that has a value (set, or a
// non-null default), in the topic key's unit; the topic key's own default
// if it has no broker synonym. This is Kafka's KafkaConfig.extractLogConfigMap.
func topicDefault(s *Spec, brokerVals map[string]any) any {
	for _, syn := range s.Synonyms {
		v := brokerVals[syn.Name]
		if v == nil {
			continue
		}
		return convertSynonym(s, syn, v)
	}
	return s.defaultValue()
}

// convertSynonym turns a broker synonym's value into the topic key's type
// and unit (log.retention.hours=168 into retention.ms=604800000).
func convertSynonym(s *Spec, syn Synonym, v any) any {
	var i int64
	switch x := v.(type) {
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	default:
		return v // DOUBLE, STRING, LIST and BOOLEAN synonyms share the topic key's type
	}
	i *= syn.Scale
	if s.Name == "retention.ms" && i < 0 {
		i = -1 // Kafka: any negative retention means "no limit"
	}
	switch s.Type {
	case TypeInt:
		return int32(i)
	case TypeShort:
		return int16(i)
	}
	return i
}

// topicValues resolves every topic key: a valid override, else the broker
// default. Invalid overrides are skipped and reported.
func topicValues(overrides map[string]string, brokerVals map[string]any) (map[string]any, error) {
	vals := make(map[string]any, len(topicTable.specs))
	var errs []error
	for i := range topicTable.specs {
		s := &topicTable.specs[i]
		if raw, ok := overrides[s.Name]; ok {
			v, err := s.parse(raw)
			if err == nil {
				vals[s.Name] = v
				continue
			}
			errs = append(errs, err)
		}
		vals[s.Name] = topicDefault(s, brokerVals)
	}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if _, ok := topicTable.byName[k]; !ok {
			errs = append(errs, fmt.Errorf("unknown topic config %q ignored", k))
		}
	}
	return vals, errors.Join(errs...)
}

// Topic is a topic's effective configuration: its overrides, else the
// broker's (dynamic, then static) settings, else Kafka's defaults. Field
// names are the Kafka keys in Go spelling; times are milliseconds as in
// Kafka (-1 means "no limit" where Kafka says so).
type Topic struct {
	CleanupPolicy []string // "delete", "compact" or both
	Compact       bool     // cleanup.policy contains compact
	Delete        bool     // cleanup.policy contains delete

	CompressionType      string // producer, uncompressed, gzip, snappy, lz4, zstd
	CompressionGzipLevel int32
	CompressionLz4Level  int32
	CompressionZstdLevel int32

	DeleteRetentionMs      int64
	FileDeleteDelayMs      int64
	FlushMessages          int64
	FlushMs                int64
	IndexIntervalBytes     int32
	MaxCompactionLagMs     int64
	MinCompactionLagMs     int64
	MinCleanableDirtyRatio float64

	MaxMessageBytes             int32
	MaxDecompressedMessageBytes int32

	MessageTimestampType        string // CreateTime or LogAppendTime
	LogAppendTime               bool   // MessageTimestampType == LogAppendTime
	MessageTimestampBeforeMaxMs int64
	MessageTimestampAfterMaxMs  int64

	MinInsyncReplicas           int32
	UncleanLeaderElectionEnable bool
	Preallocate                 bool

	RetentionBytes    int64 // -1: no size limit
	RetentionMs       int64 // -1: no time limit
	SegmentBytes      int32
	SegmentIndexBytes int32
	SegmentJitterMs   int64
	SegmentMs         int64

	// Accepted for compatibility; Fjord does not act on these.
	RemoteStorageEnable                  bool
	LocalRetentionMs                     int64
	LocalRetentionBytes                  int64
	RemoteLogCopyDisable                 bool
	RemoteLogDeleteOnDisable             bool
	RemoteCopyLagMs                      int64
	RemoteCopyLagBytes                   int64
	ErrorsDeadletterqueueGroupEnable     bool
	LeaderReplicationThrottledReplicas   []string
	FollowerReplicationThrottledReplicas []string
}

// Equal reports whether two topic configurations are the same.
func (t Topic) Equal(o Topic) bool { return reflect.DeepEqual(t, o) }

// getter reads typed values out of a resolved map. Values were parsed by
// the key's own spec, so the assertions hold; a null value reads as zero.
type getter map[string]any

func (g getter) b(k string) bool {
	v, _ := g[k].(bool)
	return v
}
func (g getter) i16(k string) int16 {
	v, _ := g[k].(int16)
	return v
}
func (g getter) i32(k string) int32 {
	v, _ := g[k].(int32)
	return v
}
func (g getter) i64(k string) int64 {
	v, _ := g[k].(int64)
	return v
}
func (g getter) f64(k string) float64 {
	v, _ := g[k].(float64)
	return v
}
func (g getter) s(k string) string {
	v, _ := g[k].(string)
	return v
}
func (g getter) list(k string) []string {
	v, _ := g[k].([]string)
	return slices.Clone(v)
}

func newTopic(vals map[string]any) Topic {
	g := getter(vals)
	t := Topic{
		CleanupPolicy:                        g.list("cleanup.policy"),
		CompressionType:                      g.s("compression.type"),
		CompressionGzipLevel:                 g.i32("compression.gzip.level"),
		CompressionLz4Level:                  g.i32("compression.lz4.level"),
		CompressionZstdLevel:                 g.i32("compression.zstd.level"),
		DeleteRetentionMs:                    g.i64("delete.retention.ms"),
		FileDeleteDelayMs:                    g.i64("file.delete.delay.ms"),
		FlushMessages:                        g.i64("flush.messages"),
		FlushMs:                              g.i64("flush.ms"),
		IndexIntervalBytes:                   g.i32("index.interval.bytes"),
		MaxCompactionLagMs:                   g.i64("max.compaction.lag.ms"),
		MinCompactionLagMs:                   g.i64("min.compaction.lag.ms"),
		MinCleanableDirtyRatio:               g.f64("min.cleanable.dirty.ratio"),
		MaxMessageBytes:                      g.i32("max.message.bytes"),
		MaxDecompressedMessageBytes:          g.i32("max.decompressed.message.bytes"),
		MessageTimestampType:                 g.s("message.timestamp.type"),
		MessageTimestampBeforeMaxMs:          g.i64("message.timestamp.before.max.ms"),
		MessageTimestampAfterMaxMs:           g.i64("message.timestamp.after.max.ms"),
		MinInsyncReplicas:                    g.i32("min.insync.replicas"),
		UncleanLeaderElectionEnable:          g.b("unclean.leader.election.enable"),
		Preallocate:                          g.b("preallocate"),
		RetentionBytes:                       g.i64("retention.bytes"),
		RetentionMs:                          g.i64("retention.ms"),
		SegmentBytes:                         g.i32("segment.bytes"),
		SegmentIndexBytes:                    g.i32("segment.index.bytes"),
		SegmentJitterMs:                      g.i64("segment.jitter.ms"),
		SegmentMs:                            g.i64("segment.ms"),
		RemoteStorageEnable:                  g.b("remote.storage.enable"),
		LocalRetentionMs:                     g.i64("local.retention.ms"),
		LocalRetentionBytes:                  g.i64("local.retention.bytes"),
		RemoteLogCopyDisable:                 g.b("remote.log.copy.disable"),
		RemoteLogDeleteOnDisable:             g.b("remote.log.delete.on.disable"),
		RemoteCopyLagMs:                      g.i64("remote.copy.lag.ms"),
		RemoteCopyLagBytes:                   g.i64("remote.copy.lag.bytes"),
		ErrorsDeadletterqueueGroupEnable:     g.b("errors.deadletterqueue.group.enable"),
		LeaderReplicationThrottledReplicas:   g.list("leader.replication.throttled.replicas"),
		FollowerReplicationThrottledReplicas: g.list("follower.replication.throttled.replicas"),
	}
	t.Compact = slices.Contains(t.CleanupPolicy, "compact")
	t.Delete = slices.Contains(t.CleanupPolicy, "delete")
	t.LogAppendTime = t.MessageTimestampType == "LogAppendTime"
	return t
}
