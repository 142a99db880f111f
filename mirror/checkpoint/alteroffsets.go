package checkpoint

import (
	"errors"
	"fmt"

	"github.com/fjordhq/fjord/connect"
)

// AlterOffsets checks offsets altered over REST as MM2's
// MirrorCheckpointConnector.alterOffsets: the task never reads them, so
// only their shape is checked (group and topic strings, a non-negative
// partition, offset 0); tombstones are always allowed.
func (c *Connector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, o := range offsets {
		if o.Offset == nil {
			continue
		}
		if o.Partition == nil {
			return false, errors.New("Source partitions may not be null")
		}
		for _, k := range []string{partitionGroupKey, partitionTopicKey} {
			if err := checkPartitionString(o.Partition, k); err != nil {
				return false, err
			}
		}
		if err := checkPartitionNumber(o.Partition); err != nil {
			return false, err
		}
		if err := checkZeroOffset(o.Partition, o.Offset); err != nil {
			return false, err
		}
	}
	return true, nil
}

func checkPartitionString(p map[string]any, k string) error {
	v, ok := p[k]
	if !ok {
		return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, k)
	}
	if _, ok := v.(string); !ok {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be a string", p, v, k)
	}
	return nil
}

func checkPartitionNumber(p map[string]any) error {
	v, ok := p[partitionPartitionKey]
	if !ok {
		return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, partitionPartitionKey)
	}
	n, ok := connect.OffsetLong(v)
	if !ok || n > 1<<31-1 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be an integer", p, v, partitionPartitionKey)
	}
	if n < 0 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which cannot be negative", p, v, partitionPartitionKey)
	}
	return nil
}

func checkZeroOffset(p, o map[string]any) error {
	v, ok := o[offsetKey]
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v is missing the '%s' key, which is required", o, p, offsetKey)
	}
	n, ok := connect.OffsetLong(v)
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which must be an integer", o, p, v, offsetKey)
	}
	if n != 0 {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key; the only accepted value is 0", o, p, v, offsetKey)
	}
	return nil
}
