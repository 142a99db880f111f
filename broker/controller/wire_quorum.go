package controller

import (
	"maps"
	"math"
	"time"
)

// What DescribeQuorum and the metadata Fetch report about the raft
// quorum beyond the fixed Quorum API (see quorumEpoch, quorumVoters in
// wire.go). They live here, with the wire side that uses them.

// LeaderEpoch is the raft term, which KRaft reports as the leader epoch
// of __cluster_metadata.
func (q *Quorum) LeaderEpoch() int32 {
	return int32(min(q.raft.CurrentTerm(), math.MaxInt32))
}

// Voters is controller.quorum.voters as this voter was started with.
func (q *Quorum) Voters() map[int32]string { return maps.Clone(q.opts.Voters) }

// VoterProgress is what the active controller knows of a voter that is
// also a broker (a combined node): the metadata offset it last reported
// applied and when. hashicorp/raft does not expose its followers' match
// index, so DescribeQuorum reports this instead, the closest measure of
// how far the node has caught up. ok is false for controller-only voters,
// on a controller that is not active, and before the first heartbeat.
func (q *Quorum) VoterProgress(id int32) (offset int64, at time.Time, ok bool) {
	if !q.IsActive() {
		return 0, time.Time{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sessions[id]
	if s == nil || s.heartbeat.IsZero() {
		return 0, time.Time{}, false
	}
	return s.metadataOffset, s.heartbeat, true
}

var (
	_ quorumEpoch    = (*Quorum)(nil)
	_ quorumVoters   = (*Quorum)(nil)
	_ quorumProgress = (*Quorum)(nil)
)
