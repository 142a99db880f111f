package controller

import (
	"maps"
	"math"
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

var (
	_ quorumEpoch  = (*Quorum)(nil)
	_ quorumVoters = (*Quorum)(nil)
)
