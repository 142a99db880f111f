package records

import "fmt"

// Version is the value-format version MM2 writes in the header of
// checkpoints and heartbeats (Checkpoint.VERSION, Heartbeat.VERSION).
const Version int16 = 0

// Checkpoint is a consumer group's committed offset on the source
// (UpstreamOffset) translated to the target (DownstreamOffset), written to
// <source>.checkpoints.internal on the target (MM2's Checkpoint). Topic is
// the remote (target-side) topic name.
//
// Key: group STRING, topic STRING, partition INT32.
// Value: version INT16 (header), then upstreamOffset INT64, offset INT64,
// metadata STRING.
type Checkpoint struct {
	ConsumerGroupID  string
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
	Metadata         string
}

// Validate reports whether the checkpoint can be encoded: every string
// fits a STRING. Java's MM2 throws on such a record; Key and Value return
// nil instead, so check Validate where the input is not bounded.
func (c Checkpoint) Validate() error {
	return checkStrings("group", c.ConsumerGroupID, "topic", c.Topic, "metadata", c.Metadata)
}

// Key is the record key; nil when Validate fails.
func (c Checkpoint) Key() []byte {
	if c.Validate() != nil {
		return nil
	}
	w := writer{b: make([]byte, 0, 2+len(c.ConsumerGroupID)+2+len(c.Topic)+4)}
	w.string(c.ConsumerGroupID)
	w.string(c.Topic)
	w.int32(c.Partition)
	return w.b
}

// Value is the record value (version 0); nil when Validate fails.
func (c Checkpoint) Value() []byte {
	if c.Validate() != nil {
		return nil
	}
	w := writer{b: make([]byte, 0, 2+8+8+2+len(c.Metadata))}
	w.int16(Version)
	w.int64(c.UpstreamOffset)
	w.int64(c.DownstreamOffset)
	w.string(c.Metadata)
	return w.b
}

func (c Checkpoint) String() string {
	return fmt.Sprintf("Checkpoint{consumerGroupId=%s, topicPartition=%s-%d, upstreamOffset=%d, downstreamOffset=%d, metadata=%s}",
		c.ConsumerGroupID, c.Topic, c.Partition, c.UpstreamOffset, c.DownstreamOffset, c.Metadata)
}

// DecodeCheckpoint reads a checkpoints record as MM2's
// Checkpoint.deserializeRecord does. The version header is read but, as
// in MM2 running without Java assertions, any version is read with the
// version-0 layout; trailing bytes are ignored, so a later version that
// appends fields still decodes.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	var c Checkpoint
	v := reader{b: value}
	v.int16("version")
	c.UpstreamOffset = v.int64("upstreamOffset")
	c.DownstreamOffset = v.int64("offset")
	c.Metadata = v.string("metadata")
	if v.err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint value: %w", v.err)
	}
	k := reader{b: key}
	c.ConsumerGroupID = k.string("group")
	c.Topic = k.string("topic")
	c.Partition = k.int32("partition")
	if k.err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint key: %w", k.err)
	}
	return c, nil
}
