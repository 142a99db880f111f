package connect

// Header is one record header with its Connect schema and value (Kafka's
// ConnectHeader). Keys may repeat.
type Header struct {
	Key    string
	Schema *Schema
	Value  any
}

// Headers is an ordered list of headers.
type Headers []Header

// Add appends a header.
func (h *Headers) Add(key string, s *Schema, v any) { *h = append(*h, Header{key, s, v}) }

// Last returns the last header with key.
func (h Headers) Last(key string) (Header, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Key == key {
			return h[i], true
		}
	}
	return Header{}, false
}

// Remove deletes every header with key.
func (h *Headers) Remove(key string) {
	out := (*h)[:0]
	for _, x := range *h {
		if x.Key != key {
			out = append(out, x)
		}
	}
	*h = out
}

// Clone returns a copy of the list (values are shared).
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	return append(Headers(nil), h...)
}

// TimestampType is how a record's timestamp was set (Kafka's
// TimestampType).
type TimestampType int8

const (
	NoTimestampType TimestampType = iota - 1
	CreateTime
	LogAppendTime
)

func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// Record is a Connect record. One type serves both directions, as Kafka's
// ConnectRecord with its SourceRecord and SinkRecord subclasses: source
// records carry SourcePartition/SourceOffset, sink records Offset and
// TimestampType. Transformations and predicates see *Record.
type Record struct {
	Topic string
	// Partition is the Kafka partition, or -1 to let the producer's
	// partitioner choose (source records).
	Partition   int32
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any
	// Timestamp in milliseconds since the epoch, or -1 for none.
	Timestamp int64
	Headers   Headers

	// Source records: where in the source system the record came from
	// and how far the source has got (stored in the offset store).
	SourcePartition map[string]any
	SourceOffset    map[string]any
	// LazyOffset, when SourceOffset is nil, makes the source offset from
	// OffsetArg on demand (SourceOffsetMap). A source emitting many
	// records per poll sets one shared function and a number per record
	// instead of a map per record; the runtime builds maps only for the
	// offsets it commits, which at hundreds of thousands of records a
	// second is most of a map's cost saved.
	LazyOffset OffsetFunc
	OffsetArg  int64

	// Sink records: the Kafka offset and timestamp type, and where the
	// record was read before transforms renamed its topic (KIP-793).
	Offset            int64
	TimestampType     TimestampType
	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
}

// OffsetFunc makes a source offset from a record's OffsetArg. It must be
// safe to call from any goroutine and return a new map each call.
type OffsetFunc func(arg int64) map[string]any

// SourceOffsetMap is the record's source offset: SourceOffset, or what
// LazyOffset makes of OffsetArg.
func (r *Record) SourceOffsetMap() map[string]any {
	if r.SourceOffset != nil || r.LazyOffset == nil {
		return r.SourceOffset
	}
	return r.LazyOffset(r.OffsetArg)
}

// SourceRecord and SinkRecord name the two uses of Record.
type (
	SourceRecord = Record
	SinkRecord   = Record
)

// NewSourceRecord returns a source record for topic with no partition,
// timestamp or headers chosen.
func NewSourceRecord(sourcePartition, sourceOffset map[string]any, topic string, keySchema *Schema, key any, valueSchema *Schema, value any) *Record {
	return &Record{
		Topic: topic, Partition: -1, Timestamp: -1,
		KeySchema: keySchema, Key: key, ValueSchema: valueSchema, Value: value,
		SourcePartition: sourcePartition, SourceOffset: sourceOffset,
		Offset: -1, TimestampType: NoTimestampType,
	}
}

// Clone returns a shallow copy with its own header list, which a
// transformation can change without touching the original.
func (r *Record) Clone() *Record {
	c := *r
	c.Headers = r.Headers.Clone()
	return &c
}

// TopicPartition names a Kafka partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}
