package source

import (
	"fmt"
	"math"

	"github.com/fjordhq/fjord/connect"
)

// The keys of MM2's source partitions and offsets (MirrorUtils), so that
// offsets stored by MM2 and Fjord read the same.
const (
	clusterKey   = "cluster"
	topicKey     = "topic"
	partitionKey = "partition"
	offsetKey    = "offset"
)

// wrapPartition is MirrorUtils.wrapPartition: the source partition of a
// record of tp on the cluster alias.
func wrapPartition(tp connect.TopicPartition, alias string) map[string]any {
	return map[string]any{topicKey: tp.Topic, partitionKey: tp.Partition, clusterKey: alias}
}

// wrapOffset is MirrorUtils.wrapOffset.
func wrapOffset(offset int64) map[string]any {
	return map[string]any{offsetKey: offset}
}

// unwrapOffset is MirrorUtils.unwrapOffset: -1 when none is stored.
func unwrapOffset(o map[string]any) int64 {
	if o == nil {
		return -1
	}
	n, ok := connect.OffsetLong(o[offsetKey])
	if !ok {
		return -1
	}
	return n
}

// unwrapPartition reads the topic-partition of a source partition the
// task made.
func unwrapPartition(p map[string]any) (connect.TopicPartition, bool) {
	t, ok := p[topicKey].(string)
	if !ok {
		return connect.TopicPartition{}, false
	}
	n, ok := connect.OffsetLong(p[partitionKey])
	if !ok {
		return connect.TopicPartition{}, false
	}
	return connect.TopicPartition{Topic: t, Partition: int32(n)}, true
}

// checkAlteredOffset is MirrorSourceConnector.alterOffsets' check of one
// entry (MirrorUtils.validateSourcePartition* and validateSourceOffset),
// with MM2's messages.
func checkAlteredOffset(po connect.SourcePartitionOffset) error {
	if po.Offset == nil {
		// Tombstones are allowed for anything, so that garbage can be
		// cleaned up over REST.
		return nil
	}
	p := po.Partition
	if p == nil {
		return fmt.Errorf("Source partitions may not be null")
	}
	for _, k := range []string{clusterKey, topicKey} {
		v, ok := p[k]
		if !ok {
			return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, k)
		}
		if _, ok := v.(string); !ok {
			return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be a string", p, v, k)
		}
	}
	v, ok := p[partitionKey]
	if !ok {
		return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, partitionKey)
	}
	n, ok := connect.OffsetLong(v)
	if !ok || n > math.MaxInt32 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be an integer", p, v, partitionKey)
	}
	if n < 0 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which cannot be negative", p, v, partitionKey)
	}
	o := po.Offset
	ov, ok := o[offsetKey]
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v is missing the '%s' key, which is required", o, p, offsetKey)
	}
	off, ok := connect.OffsetLong(ov)
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which must be an integer", o, p, ov, offsetKey)
	}
	if off < 0 {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which cannot be negative", o, p, ov, offsetKey)
	}
	return nil
}
