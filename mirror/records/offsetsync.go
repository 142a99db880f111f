package records

import "fmt"

// OffsetSync says that the record at UpstreamOffset of a source partition
// was written at DownstreamOffset of its remote partition (MM2's
// OffsetSync, written to mm2-offset-syncs.<cluster>.internal). Topic is
// the source topic's name.
//
// Key: topic STRING, partition INT32.
// Value: upstreamOffset INT64, offset INT64 (no version header: MM2's
// OffsetSync never had one).
type OffsetSync struct {
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// Validate reports whether the sync can be encoded (Topic fits a STRING).
func (s OffsetSync) Validate() error { return checkStrings("topic", s.Topic) }

// Key is the record key; nil when Validate fails.
func (s OffsetSync) Key() []byte {
	if s.Validate() != nil {
		return nil
	}
	w := writer{b: make([]byte, 0, 2+len(s.Topic)+4)}
	w.string(s.Topic)
	w.int32(s.Partition)
	return w.b
}

// Value is the record value.
func (s OffsetSync) Value() []byte {
	w := writer{b: make([]byte, 0, 16)}
	w.int64(s.UpstreamOffset)
	w.int64(s.DownstreamOffset)
	return w.b
}

func (s OffsetSync) String() string {
	return fmt.Sprintf("OffsetSync{topicPartition=%s-%d, upstreamOffset=%d, downstreamOffset=%d}",
		s.Topic, s.Partition, s.UpstreamOffset, s.DownstreamOffset)
}

// DecodeOffsetSync reads an offset-syncs record as MM2's
// OffsetSync.deserializeRecord does (bytes after the last field are
// ignored, as Kafka's Schema.read ignores them).
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	k := reader{b: key}
	s := OffsetSync{Topic: k.string("topic"), Partition: k.int32("partition")}
	if k.err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync key: %w", k.err)
	}
	v := reader{b: value}
	s.UpstreamOffset = v.int64("upstreamOffset")
	s.DownstreamOffset = v.int64("offset")
	if v.err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync value: %w", v.err)
	}
	return s, nil
}
