package source

import (
	"fmt"
	"math"

	"github.com/fjordhq/fjord/connect"
)

// Source partition and offset keys. A record's source partition is its
// Kafka partition as the bucket names it, {"topic": t, "partition": p};
// its offset says which object it came from and its index there, so a
// task that starts again resumes right after the last committed record.
const (
	TopicField     = "topic"
	PartitionField = "partition"
	ObjectField    = "object" // the value object's key
	StartField     = "start"  // the object's start offset (from its name)
	RecordField    = "record" // the record's index in the object, from 0
)

func sourcePartition(tp connect.TopicPartition) map[string]any {
	return map[string]any{TopicField: tp.Topic, PartitionField: int64(tp.Partition)}
}

func sourceOffset(o objectRef, index int64) map[string]any {
	return map[string]any{ObjectField: o.Key, StartField: o.Start, RecordField: index}
}

// cursorFrom reads a committed offset back; nil (never committed) is the
// start. parseStart recovers the start offset from the object's key when
// the offset lacks it (altered by hand).
func cursorFrom(off map[string]any, parseStart func(key string) (int64, bool)) (cursor, error) {
	if off == nil {
		return cursor{}, nil
	}
	key, ok := off[ObjectField].(string)
	if !ok || key == "" {
		return cursor{}, fmt.Errorf("offset %v has no %q string", off, ObjectField)
	}
	rec, ok := connect.OffsetLong(off[RecordField])
	if !ok || rec < -1 {
		return cursor{}, fmt.Errorf("offset %v has no %q record index", off, RecordField)
	}
	start, ok := connect.OffsetLong(off[StartField])
	if !ok {
		if start, ok = parseStart(key); !ok {
			return cursor{}, fmt.Errorf("offset %v has no %q and its object's name carries no start offset", off, StartField)
		}
	}
	return cursor{Set: true, Key: key, Start: start, Record: rec}, nil
}

// checkOffset is the shape check of an offset altered over REST.
func checkOffset(po connect.SourcePartitionOffset) error {
	if po.Partition == nil {
		return fmt.Errorf("Partition objects cannot be null")
	}
	if t, ok := po.Partition[TopicField].(string); !ok || t == "" {
		return fmt.Errorf("Partition objects should contain the key '%s' with the topic name", TopicField)
	}
	if p, ok := connect.OffsetLong(po.Partition[PartitionField]); !ok || p < 0 || p > math.MaxInt32 {
		return fmt.Errorf("Partition objects should contain the key '%s' with a Kafka partition number", PartitionField)
	}
	if po.Offset == nil {
		return nil // a tombstone: read the partition from its first object again
	}
	_, err := cursorFrom(po.Offset, func(string) (int64, bool) { return 0, true })
	return err
}
