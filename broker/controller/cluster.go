package controller

// The cluster contract: what the broker needs from a metadata controller,
// and what the raft quorum offers the controller listener. Local (the
// single-node journal used by `fjord dev` and one-node `fjord broker`) and
// Quorum (hashicorp/raft, quorum.go) both implement Controller.
//
// How a cluster fits together (Kafka's KRaft model):
//
//   - Controllers (process.roles contains "controller") run a Quorum: a
//     raft voter whose FSM applies []metadata.Record entries to an Image.
//     Only the raft leader — the active controller — validates requests
//     and proposes records.
//   - Every controller node has a controller listener (the first name in
//     controller.listener.names, the address in controller.quorum.voters).
//     MuxListener splits it: raft's connections start with RaftMagic, the
//     rest is the Kafka protocol, served by the broker package's handler,
//     which answers the controller APIs through ServeControllerRequest and
//     runs admin requests (CreateTopics, …) against the local Quorum.
//   - Brokers (process.roles contains "broker") do not run raft. They
//     learn metadata by fetching the metadata log from the active
//     controller (MetadataFollower, Kafka's Fetch on __cluster_metadata),
//     register and heartbeat (BrokerLifecycle: BrokerRegistration,
//     BrokerHeartbeat), send ISR changes (AlterPartition) and ask for
//     producer id blocks (AllocateProducerIds) through a ControllerClient.
//   - A broker that is not the active controller forwards admin requests
//     verbatim to the active controller's listener (ControllerClient.Forward);
//     NOT_CONTROLLER answers make it look the controller up again.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Controller is what the broker's admin handlers call. On a Quorum that is
// not the active controller the mutating methods return an *Error with
// kerr.NotController (AllocateProducerIDs: an error wrapping it).
type Controller interface {
	Image() *metadata.Image
	CreateTopics(ctx context.Context, reqs []CreateTopic, validateOnly bool) []TopicResult
	DeleteTopics(ctx context.Context, names []string) []*Error
	CreatePartitions(ctx context.Context, topic string, count int32, assignment [][]int32, validateOnly bool) *Error
	AlterConfigs(ctx context.Context, res metadata.ConfigResource, mutate func(current map[string]string) (map[string]string, error), validateOnly bool) *Error
	AllocateProducerIDs(ctx context.Context, n int64) (int64, error)
	Close() error
}

var _ Controller = (*Local)(nil)

// RaftMagic is the first four bytes of every raft connection on a
// controller listener. Read as a Kafka frame size it is ~1.2 GB, above any
// socket.request.max.bytes, so it cannot be mistaken for a Kafka request.
const RaftMagic uint32 = 0x464A5246 // "FJRF"

// ControllerAPIs are the Kafka APIs a controller listener serves itself
// (ServeControllerRequest); admin APIs are served by the broker handlers.
var ControllerAPIs = []kmsg.Key{
	kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.AlterPartition,
	kmsg.AllocateProducerIDs, kmsg.Fetch, // Fetch: __cluster_metadata only
	kmsg.DescribeQuorum, kmsg.FetchSnapshot, kmsg.UnregisterBroker,
}

// BrokerRegistration is what a broker sends when it starts
// (BrokerRegistrationRequest).
type BrokerRegistration struct {
	ID            int32
	IncarnationID metadata.UUID // new on every process start
	Host          string        // the advertised client listener
	Port          int32
	Rack          string
	// Listeners are all advertised listeners by name (PLAINTEXT, …), for
	// Metadata on other listeners later.
	Listeners []Listener
}

// Listener is one advertised listener of a broker.
type Listener struct {
	Name string
	Host string
	Port int32
}

// BrokerHeartbeat is a broker's periodic heartbeat (BrokerHeartbeatRequest).
type BrokerHeartbeat struct {
	ID             int32
	Epoch          int64 // from RegisterBroker
	MetadataOffset int64 // the broker's applied metadata offset
	WantFence      bool  // true until the broker has caught up
	WantShutdown   bool  // controlled shutdown: move leaderships away first
}

// HeartbeatResult answers a heartbeat.
type HeartbeatResult struct {
	IsCaughtUp     bool
	IsFenced       bool
	ShouldShutdown bool // leaderships moved; the broker may stop now
}

// AlterPartitionRequest is a leader's ISR change (AlterPartition).
type AlterPartitionRequest struct {
	BrokerID       int32
	BrokerEpoch    int64
	TopicID        metadata.UUID
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []int32
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ElectResult is the outcome of one partition's election.
type ElectResult struct {
	TopicPartition
	Err *Error // nil: elected; ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, …
}

// Reassignment moves a partition to Replicas; nil Replicas cancels an
// ongoing reassignment (AlterPartitionReassignments).
type Reassignment struct {
	TopicPartition
	Replicas []int32
}

// OngoingReassignment is one in-progress reassignment.
type OngoingReassignment struct {
	TopicPartition
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// LogEntry is one entry of the metadata log; Offset is the raft index.
// Entries that carry no records (raft no-ops, configuration changes) have
// empty Records but still take an offset.
type LogEntry struct {
	Offset  int64
	Records []metadata.Record
}
