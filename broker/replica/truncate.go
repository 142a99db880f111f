package replica

// truncation is where a follower cuts its log and whether it must ask
// the leader again (Kafka's OffsetTruncationState).
type truncation struct {
	offset   int64
	complete bool
}

// localLog is what truncation needs from the follower's log.
type localLog interface {
	LogEndOffset() int64
	EndOffsetForEpoch(epoch int32) (int32, int64)
}

// truncationFor is Kafka's AbstractFetcherThread.getOffsetTruncationState:
// given the leader's answer for the follower's latest epoch (from
// OffsetForLeaderEpoch, or a fetch's DivergingEpoch), where to truncate.
//
//   - The leader does not know the epoch (end offset -1): truncate to the
//     follower's high watermark, the only offset known to be committed.
//   - The leader answers without an epoch: truncate to its end offset.
//   - The leader's epoch is one the follower has: truncate to the
//     smaller of the two end offsets of that epoch. Done.
//   - The follower does not have the leader's epoch: truncate to the end
//     of the follower's largest epoch below it and ask again with that
//     epoch (the answer's epoch is never above the one asked, so each
//     round asks a strictly lower epoch).
//   - The follower has no epoch that low: truncate to the leader's end
//     offset.
//
// Every result is capped at the follower's log end offset. hw is the
// follower's high watermark.
func truncationFor(l localLog, leaderEpoch int32, leaderEnd int64, hw int64) truncation {
	leo := l.LogEndOffset()
	switch {
	case leaderEnd < 0:
		return truncation{min(hw, leo), true}
	case leaderEpoch < 0:
		return truncation{min(leaderEnd, leo), true}
	}
	epoch, end := l.EndOffsetForEpoch(leaderEpoch)
	switch {
	case epoch < 0 || end < 0:
		return truncation{min(leaderEnd, leo), true}
	case epoch != leaderEpoch:
		return truncation{min(end, leo), false}
	default:
		return truncation{min(end, leaderEnd, leo), true}
	}
}
