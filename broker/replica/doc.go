// Package replica is partition replication: the leader side (Leader:
// follower positions, the high watermark, ISR changes, acks=all waits)
// and the follower side (FetcherManager: fetchers that copy the leader's
// log, truncating divergent records first). It follows Kafka's
// Partition.scala, Replica.scala, AbstractFetcherThread and
// ReplicaFetcherThread; names and error codes are Kafka's.
//
// # How the broker uses it
//
// When the metadata image makes this broker a partition's leader the
// broker calls NewLeader with the image's partition state and the high
// watermark it knew, Update on every later image, and Stop when the
// leadership ends. Its Produce handler checks CheckMinISR before an
// acks=all append, calls OnAppend after every append and WaitReplicated
// for acks=all. Its Fetch handler, for a fetch from a replica (ReplicaID
// or ReplicaState.ID >= 0), calls CheckEpoch with the partition's
// CurrentLeaderEpoch, then FollowerFetch before reading; it answers the
// diverging epoch (and no records) when FollowerFetch returns one, reads
// up to the log end offset (not the high watermark), and puts the
// returned high watermark in the answer. OnHighWatermark wakes parked
// consumer fetches and produce waits.
//
// When the image makes this broker a follower, the broker calls
// FetcherManager.Set with the leader and leader epoch, and Remove when it
// leads or drops the partition. OnHighWatermark gives the follower's high
// watermark; unlike the leader's it can go down (truncation, a new leader
// that knows less), and the broker stores it as given.
//
// The leader must answer OffsetForLeaderEpoch from a replica without
// capping at the high watermark, and ListOffsets from a replica (ReplicaID
// >= 0) with the log end offset for LATEST (-1): the fetcher uses both.
//
// # Leader
//
// Each follower's state is updated by its fetches (Kafka's
// Replica.updateFetchStateOrThrow): its log end offset is the fetch
// offset, and its last caught-up time moves to the fetch time when it
// fetched from the leader's end, or to its previous fetch time when it
// reached the end the leader had then. The high watermark is the smallest
// log end offset among the leader and the maximal ISR (the committed ISR
// plus a member being added; a member being removed counts until the
// controller commits the removal) and among caught-up followers about to
// join (Kafka's maybeIncrementLeaderHW). It never goes backwards.
//
// A new leader starts with the high watermark it knew, clamped to its
// log, and records its epoch at its log end offset in the epoch cache
// (Kafka's makeLeader). ISR members' positions are unknown until they
// fetch in the new epoch, so the high watermark waits for all of them.
// It does not wait for a record of the new epoch to be replicated: Kafka's
// partitions do not (that is a rule of Raft, which KRaft applies to its own
// metadata log), because the ISR, committed by the controller, already
// guarantees every member has what the high watermark covers.
//
// Kafka 4 with eligible leader replicas (KIP-966) also stops the high
// watermark while the ISR is below min.insync.replicas. The controller
// does not keep ELR, so that rule is not applied: with the ISR below the
// minimum, acks=all appends are refused up front (CheckMinISR) and
// waits in flight end with NOT_ENOUGH_REPLICAS_AFTER_APPEND, as in Kafka
// before ELR.
//
// ISR changes go through AlterPartition, one at a time per partition. A
// follower is added when it reached the high watermark and the start of
// this leader epoch (and, with BrokerEpoch set, its broker is eligible);
// members are removed when they have not caught up for ReplicaLagTime,
// checked every ReplicaLagTime/2. The controller's answer is applied when
// its epochs are current; OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA
// revert the proposal; INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH and the
// other "your state is stale" errors leave it pending until Update brings
// the image; anything else is retried after RetryBackoff.
//
// # Fetchers
//
// A partition passed to Set starts truncating: OffsetForLeaderEpoch (v4,
// with this broker's id) for the latest epoch in its log, then Kafka's
// getOffsetTruncationState decides the truncation offset (truncationFor),
// possibly over several rounds with lower epochs. A log with no epochs at
// all is truncated to its high watermark (Follow.HighWatermark). Then it
// fetches (Fetch v15 with topic ids, ReplicaState with the broker epoch,
// CurrentLeaderEpoch and LastFetchedEpoch); a DivergingEpoch in an answer
// truncates the same way and fetching goes on. Truncation never depends
// on the high watermark otherwise: the leader's epochs say where the logs
// diverge, even below it.
//
// Errors per partition: FENCED_LEADER_EPOCH (our epoch is older) pauses
// the partition until Set gives a newer epoch; NOT_LEADER_OR_FOLLOWER,
// UNKNOWN_LEADER_EPOCH (the leader has not seen its election yet) and
// unknown-topic errors retry after BackoffOnError, as Kafka does, since
// they are transient while metadata propagates; OFFSET_OUT_OF_RANGE asks
// the leader for its end offset (truncate to it if ours is beyond: an
// unclean election) and else its start offset (start over empty there if
// ours is below: we were away while it deleted segments). A failed
// request or connection backs every partition of that leader off, and the
// next request dials again, resolving the address anew.
//
// follower.replication.throttled.rate applies to partitions Throttled
// names while they are not in sync: when the Throttle is in debt they are
// left out of fetches (Kafka's shouldFollowerThrottle).
package replica
