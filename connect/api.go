package connect

import (
	"context"
	"time"
)

// Connector configures a source or sink and splits its work into task
// configs (Kafka's Connector). The runtime calls Start once, TaskConfigs
// whenever it (re)plans tasks, and Stop at the end.
type Connector interface {
	// Config describes the connector's own keys (the runtime adds the
	// common ones: name, connector.class, tasks.max, converters, ...).
	Config() *ConfigDef
	Start(ctx context.Context, props map[string]string) error
	TaskConfigs(maxTasks int) ([]map[string]string, error)
	Stop() error
}

// SourceConnector is a connector whose tasks read from a system into Kafka.
type SourceConnector interface {
	Connector
	NewTask() SourceTask
}

// SinkConnector is a connector whose tasks write Kafka records to a system.
type SinkConnector interface {
	Connector
	NewTask() SinkTask
}

// ConnectorContext lets a connector talk back to the runtime.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the runtime to call TaskConfigs
	// again (the source's shape changed: new tables, new files).
	RequestTaskReconfiguration()
	// RaiseError fails the connector with err.
	RaiseError(err error)
	// Offsets reads committed source offsets (source connectors only;
	// nil for sinks).
	Offsets() OffsetReader
}

// ContextualConnector is implemented by connectors that want their
// context; Initialize is called before Start.
type ContextualConnector interface {
	Initialize(ctx ConnectorContext)
}

// ConfigValidator is implemented by connectors that validate across keys
// (Kafka's Connector.validate): it returns the ConfigValue of every key of
// the connector's ConfigDef — usually Config().Validate(props) with the
// cross-key errors added, as Kafka connectors call super.validate — and
// the runtime uses that list instead of validating the ConfigDef itself.
type ConfigValidator interface {
	Validate(props map[string]string) []ConfigValue
}

// Versioned plugins report a version (the REST API lists it).
type Versioned interface {
	Version() string
}

// SourceTask reads records from a source system.
type SourceTask interface {
	Start(ctx context.Context, props map[string]string) error
	// Poll returns the next records, blocking until some are available or
	// ctx is done (then nil, nil). It may return an empty batch.
	Poll(ctx context.Context) ([]*SourceRecord, error)
	// Commit is called after offsets up to the last acknowledged record
	// were written to the offset store.
	Commit(ctx context.Context) error
	Stop() error
}

// RecordMetadata is where a source record landed in Kafka.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
}

// RecordCommitter is implemented by source tasks that want to know each
// record was acknowledged by Kafka (Kafka's SourceTask.commitRecord);
// md is nil when a transform dropped the record.
type RecordCommitter interface {
	CommitRecord(r *SourceRecord, md *RecordMetadata) error
}

// OffsetReader reads the last committed source offsets.
type OffsetReader interface {
	Offset(partition map[string]any) (map[string]any, error)
	Offsets(partitions []map[string]any) (map[string]map[string]any, error) // keyed by canonical JSON of the partition
}

// SourceTaskContext is a source task's view of the runtime.
type SourceTaskContext interface {
	Offsets() OffsetReader
	Config() map[string]string
}

// ContextualSourceTask is implemented by source tasks that want their
// context; Initialize is called before Start.
type ContextualSourceTask interface {
	Initialize(ctx SourceTaskContext)
}

// SinkTask writes records to a destination system.
type SinkTask interface {
	Start(ctx context.Context, props map[string]string) error
	// Open is called when partitions are assigned to the task.
	Open(partitions []TopicPartition) error
	// Put delivers records; it may buffer them until PreCommit.
	Put(ctx context.Context, records []*SinkRecord) error
	// PreCommit flushes and returns the offsets (next offset to read, per
	// partition) that are durable in the destination and may be
	// committed; returning offsets unchanged means "everything put is
	// durable". Only these are committed.
	PreCommit(ctx context.Context, offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
	// Close is called when partitions are revoked; buffered data for them
	// should be written or dropped.
	Close(partitions []TopicPartition) error
	Stop() error
}

// SinkTaskContext is a sink task's view of the runtime (Kafka's
// SinkTaskContext).
type SinkTaskContext interface {
	// ResetOffsets makes the consumer rewind or skip to the given next
	// offsets (for sinks that keep their own offsets).
	ResetOffsets(offsets map[TopicPartition]int64)
	// Timeout asks to retry the current batch after d (on RetriableError).
	Timeout(d time.Duration)
	Assignment() []TopicPartition
	Pause(partitions ...TopicPartition)
	Resume(partitions ...TopicPartition)
	// RequestCommit asks for an offset commit soon.
	RequestCommit()
	// ErrantRecordReporter reports a record that failed in the task, to
	// the dead letter queue when one is configured (nil when errors are
	// not tolerated).
	ErrantRecordReporter() ErrantRecordReporter
	Config() map[string]string
}

// CauseReporter is implemented by Fjord's task contexts: a task that is
// RUNNING but cannot make progress (its destination is down and it is
// retrying) reports why, and the cause shows as the trace of its RUNNING
// status until the task reports nil. Kafka Connect has no such call;
// tasks type-assert their context for it.
type CauseReporter interface {
	ReportCause(err error)
}

// ContextualSinkTask is implemented by sink tasks that want their
// context; Initialize is called before Start.
type ContextualSinkTask interface {
	Initialize(ctx SinkTaskContext)
}

// ErrantRecordReporter reports a bad record and returns when it is
// recorded (written to the DLQ).
type ErrantRecordReporter interface {
	Report(ctx context.Context, r *SinkRecord, err error) error
}

// RetriableError marks an error the runtime should retry (Kafka's
// RetriableException).
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string { return e.Err.Error() }
func (e *RetriableError) Unwrap() error { return e.Err }

// Converter turns Connect data into bytes for Kafka and back. Configure is
// called once with the converter's settings (the `key.converter.` or
// `value.converter.` prefixed keys, prefix removed).
type Converter interface {
	Configure(props map[string]string, isKey bool) error
	FromConnectData(topic string, headers *Headers, s *Schema, v any) ([]byte, error)
	ToConnectData(topic string, headers *Headers, b []byte) (*Schema, any, error)
}

// ConcurrentConverter is a Converter whose ToConnectData and
// FromConnectData may be called from several goroutines at once, once it
// is configured. Kafka runs a task's converters on the task's thread
// only; a sink task whose key and value converters both say this may have
// a batch's records converted in parallel (Put still gets them in order).
type ConcurrentConverter interface {
	Converter
	// ConcurrentSafe marks the guarantee; it does nothing.
	ConcurrentSafe()
}

// HeaderConverter turns one header's Connect value into bytes and back.
type HeaderConverter interface {
	Configure(props map[string]string) error
	FromConnectHeader(topic, key string, s *Schema, v any) ([]byte, error)
	ToConnectHeader(topic, key string, b []byte) (*Schema, any, error)
}

// Transformation changes or drops records (Kafka's SMTs). Apply may
// modify r and return it, return a new record, or return nil to drop it.
type Transformation interface {
	Config() *ConfigDef
	Configure(props map[string]string) error
	Apply(r *Record) (*Record, error)
	Close() error
}

// Predicate decides whether a transformation applies to a record.
type Predicate interface {
	Config() *ConfigDef
	Configure(props map[string]string) error
	Test(r *Record) bool
	Close() error
}

// ExactlyOnceSupport is a source connector's answer to whether it can
// deliver exactly once with a given config (Kafka's ExactlyOnceSupport,
// KIP-618).
type ExactlyOnceSupport int8

const (
	// ExactlyOnceUnknown: the connector does not say (Kafka's null).
	ExactlyOnceUnknown ExactlyOnceSupport = iota
	ExactlyOnceSupported
	ExactlyOnceUnsupported
)

func (e ExactlyOnceSupport) String() string {
	switch e {
	case ExactlyOnceSupported:
		return "SUPPORTED"
	case ExactlyOnceUnsupported:
		return "UNSUPPORTED"
	}
	return "UNKNOWN"
}

// ExactlyOnceSourceConnector is implemented by source connectors that
// report exactly-once support for a config (Kafka's
// SourceConnector.exactlyOnceSupport); connectors that do not implement it
// answer ExactlyOnceUnknown.
type ExactlyOnceSourceConnector interface {
	ExactlyOnceSupport(props map[string]string) ExactlyOnceSupport
}

// SourcePartitionOffset is one source partition's offset in a KIP-875
// alter request; a nil Offset resets the partition (a tombstone).
type SourcePartitionOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// SourceOffsetsAlterer is implemented by source connectors that check
// offsets altered over REST before the runtime writes them (Kafka's
// SourceConnector.alterOffsets). An error refuses the whole request;
// handled reports that the connector vouches for the new offsets (Kafka's
// true), which selects the REST answer's message.
type SourceOffsetsAlterer interface {
	AlterOffsets(connectorConfig map[string]string, offsets []SourcePartitionOffset) (handled bool, err error)
}

// SinkOffsetsAlterer is the sink twin of SourceOffsetsAlterer (Kafka's
// SinkConnector.alterOffsets); a nil offset resets the partition.
type SinkOffsetsAlterer interface {
	AlterOffsets(connectorConfig map[string]string, offsets map[TopicPartition]*int64) (handled bool, err error)
}
