// Package group is Fjord's group coordinator for Kafka's classic group
// protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup, the protocol the
// Java, librdkafka, kafka-python and franz-go clients and Kafka Connect
// workers speak), with group metadata and committed offsets persisted in
// the compacted __consumer_offsets topic in Kafka 4.4's record format.
//
// Usage: the broker creates one Coordinator with a Store backed by the
// __consumer_offsets partition logs and its topic metadata (TopicMetadata:
// OffsetCommit and OffsetFetch v10, which franz-go uses, name topics by
// id), calls Load for each partition it leads (Unload when leadership
// moves), and hands each decoded group request to the handler of the same
// name; the handler returns the response of the request's version.
// FindCoordinator is the broker's: PartitionFor names the partition, and
// Owns says whether it is loaded here. WithClient attaches the
// connection's client id and host, which new members record.
//
//	c := group.New(group.DefaultConfig(), store, group.Options{Logger: log, Topics: topics})
//	if err := c.Load(p); err != nil { ... }
//	resp := c.JoinGroup(group.WithClient(ctx, clientID, "/"+ip), req)
//
// Design. The state machine follows Kafka's GroupMetadataManager and
// ClassicGroup (states Empty, PreparingRebalance, CompletingRebalance,
// Stable, Dead; delayed initial rebalance; static membership; KIP-394
// member ids); each API has its own file named after its key, like kfake.
//
// State has one owner per group: group.mu guards a group's membership,
// timers and offsets. JoinGroup and SyncGroup park the request on the
// member (a channel) and wait outside the lock. Timers (sessions,
// rebalance and sync deadlines, the initial delay) are time.AfterFunc
// callbacks that take the group lock and check a sequence token, so a
// timer that fired late does nothing.
//
// Persistence never holds a lock across I/O. Each loaded partition has a
// writer goroutine that appends queued writes in order, merging those that
// queue up during an Append into one Store.Append (a group commit). A
// handler queues its records while holding the group lock (queueing does
// not block), so a group's records reach the log in the order its state
// changed; the write's callback then applies the change (offsets become
// visible, a rebalance becomes Stable) on the writer goroutine, and the
// handler answers only after that: everything acknowledged is durable.
// Failed writes are answered with the error Kafka maps them to, and the
// state they would have changed is left (or put back) as it was.
//
// Lock order: Coordinator.mu (the partition and group maps), then
// group.mu, then writer.mu (a leaf, only for the queue). Nothing waits
// for the writer goroutine while holding Coordinator.mu or a group lock,
// because its callbacks take those locks.
//
// Load replays a partition (see records.go for the formats, load.go for
// replay); members come back as the last completed rebalance left them,
// with fresh session timers. Offsets expire as Kafka 2.1+ expires them
// (expire.go). Transactional offset commits and KIP-848 consumer groups
// are not served: their records are skipped on replay.
package group
