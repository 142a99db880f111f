package records

import "fmt"

// Heartbeat is MM2's Heartbeat, emitted by MirrorHeartbeatConnector to
// the heartbeats topic on the target and replicated onwards, so its
// arrival anywhere shows the path from SourceClusterAlias is alive.
// Timestamp is milliseconds since the epoch.
//
// Key: sourceClusterAlias STRING, targetClusterAlias STRING.
// Value: version INT16 (header), then timestamp INT64.
type Heartbeat struct {
	SourceClusterAlias string
	TargetClusterAlias string
	Timestamp          int64
}

// Validate reports whether both aliases fit a STRING.
func (h Heartbeat) Validate() error {
	return checkStrings("sourceClusterAlias", h.SourceClusterAlias, "targetClusterAlias", h.TargetClusterAlias)
}

// Key is the record key; nil when Validate fails.
func (h Heartbeat) Key() []byte {
	if h.Validate() != nil {
		return nil
	}
	w := writer{b: make([]byte, 0, 4+len(h.SourceClusterAlias)+len(h.TargetClusterAlias))}
	w.string(h.SourceClusterAlias)
	w.string(h.TargetClusterAlias)
	return w.b
}

// Value is the record value (version 0).
func (h Heartbeat) Value() []byte {
	w := writer{b: make([]byte, 0, 10)}
	w.int16(Version)
	w.int64(h.Timestamp)
	return w.b
}

func (h Heartbeat) String() string {
	return fmt.Sprintf("Heartbeat{sourceClusterAlias=%s, targetClusterAlias=%s, timestamp=%d}",
		h.SourceClusterAlias, h.TargetClusterAlias, h.Timestamp)
}

// DecodeHeartbeat reads a heartbeats record as MM2's
// Heartbeat.deserializeRecord does (any version read as version 0,
// trailing bytes ignored, as DecodeCheckpoint).
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	var h Heartbeat
	v := reader{b: value}
	v.int16("version")
	h.Timestamp = v.int64("timestamp")
	if v.err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat value: %w", v.err)
	}
	k := reader{b: key}
	h.SourceClusterAlias = k.string("sourceClusterAlias")
	h.TargetClusterAlias = k.string("targetClusterAlias")
	if k.err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat key: %w", k.err)
	}
	return h, nil
}
