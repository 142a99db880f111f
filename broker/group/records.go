package group

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The __consumer_offsets record layouts come from kmsg (OffsetCommitKey/Value,
// GroupMetadataKey/Value). What Kafka 4.4 writes, checked against a running
// 4.4 broker (key and value bytes read back from its __consumer_offsets):
//
//   - offsets: key version 1; value version 4 (flexible, the committed
//     topic's id in tag 0) or version 1 when the commit carried a retention
//     time (OffsetCommit v2-v4), the only version with an expire timestamp;
//   - groups: key version 2; value version 3 (KIP-345 instance ids; 4.4
//     does not write the flexible version 4);
//   - tombstones: the same keys with a null value.
//
// Keys with versions 3 and up belong to consumer (KIP-848), share and
// streams groups, which this coordinator does not serve: replay skips them,
// as Kafka skips record types it does not know.
const (
	offsetKeyVersion        = 1
	offsetValueVersion      = 4
	offsetValueVersionTTL   = 1
	groupKeyVersion         = 2
	groupValueVersion       = 3
	groupKeyVersionMinOther = 3 // first key version that is not ours
)

// errSkipRecord marks a record this coordinator does not interpret.
var errSkipRecord = errors.New("record type not served by the classic group coordinator")

func offsetKey(group, topic string, partition int32) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: topic, Partition: partition}
	return k.AppendTo(nil)
}

func offsetValue(o *offsetEntry) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetValueVersion
	if o.expireMs >= 0 {
		v.Version = offsetValueVersionTTL
		v.ExpireTimestamp = o.expireMs
	}
	v.Offset = o.offset
	v.LeaderEpoch = o.leaderEpoch
	v.Metadata = o.metadata
	v.CommitTimestamp = o.commitMs
	v.TopicID = o.topicID
	return v.AppendTo(nil)
}

func groupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// groupValue encodes the group as Kafka's newGroupMetadataRecord does: every
// member with its subscription for the selected protocol and the given
// assignment (nil assignments map means "use each member's current one").
func groupValue(g *group, assignment map[string][]byte) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.hasProtocol {
		v.Protocol = kmsg.StringPtr(g.protocol)
	}
	if g.leader != "" {
		v.Leader = kmsg.StringPtr(g.leader)
	}
	v.CurrentStateTimestamp = g.stateMs
	for _, id := range g.order {
		m := g.members[id]
		mv := kmsg.NewGroupMetadataValueMember()
		mv.MemberID = m.id
		mv.InstanceID = m.instanceID
		mv.ClientID = m.clientID
		mv.ClientHost = m.clientHost
		mv.RebalanceTimeoutMillis = m.rebalanceTimeoutMs
		mv.SessionTimeoutMillis = m.sessionTimeoutMs
		mv.Subscription = m.metadata(g.protocol)
		if assignment != nil {
			mv.Assignment = assignment[m.id]
		} else {
			mv.Assignment = m.assignment
		}
		if mv.Subscription == nil {
			mv.Subscription = []byte{}
		}
		if mv.Assignment == nil {
			mv.Assignment = []byte{}
		}
		v.Members = append(v.Members, mv)
	}
	return v.AppendTo(nil)
}

// emptyGroupValue is what Kafka writes when a JoinGroup creates a group:
// generation 0, no protocol type, no members.
func emptyGroupValue(stateMs int64) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.CurrentStateTimestamp = stateMs
	return v.AppendTo(nil)
}

// decoded is one replayed record; exactly one of offset/group is set.
type decoded struct {
	group string

	// Offset commit (key versions 0 and 1).
	isOffset  bool
	topic     string
	partition int32
	offset    *offsetEntry // nil: tombstone

	// Group metadata (key version 2).
	meta *kmsg.GroupMetadataValue // nil: tombstone
}

// decodeRecord parses a __consumer_offsets record. Records of other group
// types return errSkipRecord; malformed ones return a descriptive error.
func decodeRecord(key, value []byte) (decoded, error) {
	var d decoded
	if len(key) < 2 {
		return d, fmt.Errorf("key of %d bytes is too short for a version", len(key))
	}
	version := int16(uint16(key[0])<<8 | uint16(key[1]))
	switch {
	case version == 0 || version == 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return d, fmt.Errorf("decode offset commit key: %w", err)
		}
		d.isOffset, d.group, d.topic, d.partition = true, k.Group, k.Topic, k.Partition
		if value == nil {
			return d, nil
		}
		v := kmsg.NewOffsetCommitValue()
		if err := v.ReadFrom(value); err != nil {
			return d, fmt.Errorf("decode offset commit value for group %q %s-%d: %w", k.Group, k.Topic, k.Partition, err)
		}
		if v.Version < 0 {
			return d, fmt.Errorf("offset commit value has negative version %d", v.Version)
		}
		o := &offsetEntry{offset: v.Offset, leaderEpoch: -1, metadata: v.Metadata, commitMs: v.CommitTimestamp, expireMs: -1, topicID: v.TopicID}
		if v.Version >= 3 {
			o.leaderEpoch = v.LeaderEpoch
		}
		// Only version 1 carries an expire timestamp (KIP-211 dropped it).
		if v.Version == 1 && v.ExpireTimestamp >= 0 {
			o.expireMs = v.ExpireTimestamp
		}
		d.offset = o
		return d, nil
	case version == groupKeyVersion:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return d, fmt.Errorf("decode group metadata key: %w", err)
		}
		d.group = k.Group
		if value == nil {
			return d, nil
		}
		v := kmsg.NewGroupMetadataValue()
		if err := v.ReadFrom(value); err != nil {
			return d, fmt.Errorf("decode group metadata value for group %q: %w", k.Group, err)
		}
		if v.Version < 0 {
			return d, fmt.Errorf("group metadata value has negative version %d", v.Version)
		}
		d.meta = &v
		return d, nil
	case version >= groupKeyVersionMinOther:
		return d, errSkipRecord
	default:
		return d, fmt.Errorf("unknown key version %d", version)
	}
}
