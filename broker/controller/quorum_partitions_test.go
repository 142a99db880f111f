package controller

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// alterISR sends AlterPartition from the partition's current leader with
// its current epochs.
func alterISR(q *Quorum, epochs map[int32]int64, topic string, part int32, isr ...int32) (metadata.Partition, *Error) {
	img := q.Image()
	p := img.Partition(topic, part)
	return q.AlterPartition(context.Background(), AlterPartitionRequest{BrokerID: p.Leader, BrokerEpoch: epochs[p.Leader],
		TopicID: img.Topics[topic].ID, Partition: part, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, NewISR: isr})
}

func createAssigned(t *testing.T, q *Quorum, name string, configs map[string]string, a ...[]int32) {
	t.Helper()
	r := q.CreateTopics(context.Background(), []CreateTopic{{Name: name, Assignment: a, Partitions: -1, ReplicationFactor: -1, Configs: configs}}, false)
	if r[0].Err != nil {
		t.Fatalf("create %s: %v", name, r[0].Err)
	}
}

func heartbeat(t *testing.T, q *Quorum, id int32, epoch int64, wantFence bool) HeartbeatResult {
	t.Helper()
	res, err := q.BrokerHeartbeat(context.Background(), BrokerHeartbeat{ID: id, Epoch: epoch, MetadataOffset: q.Image().Offset, WantFence: wantFence})
	if err != nil {
		t.Fatalf("heartbeat %d: %v", id, err)
	}
	return res
}

func TestAlterPartition(t *testing.T) {
	q := oneVoter(t, nil)
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	createAssigned(t, q, "ap", nil, []int32{1, 2, 3})
	tid := q.Image().Topics["ap"].ID
	req := func(broker int32, le, pe int32, isr ...int32) AlterPartitionRequest {
		return AlterPartitionRequest{BrokerID: broker, BrokerEpoch: epochs[broker], TopicID: tid, Partition: 0, LeaderEpoch: le, PartitionEpoch: pe, NewISR: isr}
	}

	// Shrink: the partition epoch moves, the leader epoch does not.
	p, err := q.AlterPartition(ctx, req(1, 0, 0, 1, 2))
	if err != nil || !slices.Equal(p.ISR, []int32{1, 2}) || p.PartitionEpoch != 1 || p.LeaderEpoch != 0 || p.Leader != 1 {
		t.Fatalf("shrink: %+v %v", p, err)
	}
	if got := q.Image().Partition("ap", 0); !slices.Equal(got.ISR, []int32{1, 2}) || got.PartitionEpoch != 1 {
		t.Fatalf("image after shrink: %+v", got)
	}
	for _, c := range []struct {
		name string
		req  AlterPartitionRequest
		want *kerr.Error
	}{
		{"stale partition epoch", req(1, 0, 0, 1), kerr.InvalidUpdateVersion},
		{"older leader epoch", req(1, -1, 1, 1), kerr.FencedLeaderEpoch},
		{"newer leader epoch", req(1, 1, 1, 1), kerr.NotController},
		{"newer partition epoch", req(1, 0, 2, 1), kerr.NotController},
		{"not the leader", req(2, 0, 1, 2), kerr.NotLeaderForPartition},
		{"non-replica in ISR", req(1, 0, 1, 1, 9), kerr.InvalidRequest},
		{"duplicate in ISR", req(1, 0, 1, 1, 1), kerr.InvalidRequest},
		{"ISR without the leader", req(1, 0, 1, 2, 3), kerr.InvalidRequest},
		{"stale broker epoch", AlterPartitionRequest{BrokerID: 1, BrokerEpoch: epochs[1] + 100, TopicID: tid, LeaderEpoch: 0, PartitionEpoch: 1, NewISR: []int32{1}}, kerr.StaleBrokerEpoch},
		{"unknown topic id", AlterPartitionRequest{BrokerID: 1, BrokerEpoch: epochs[1], TopicID: metadata.NewUUID(), NewISR: []int32{1}}, kerr.UnknownTopicID},
		{"unknown partition", AlterPartitionRequest{BrokerID: 1, BrokerEpoch: epochs[1], TopicID: tid, Partition: 3, NewISR: []int32{1}}, kerr.UnknownTopicOrPartition},
	} {
		if _, err := q.AlterPartition(ctx, c.req); errCode(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want.Message)
		}
	}

	// A fenced broker cannot join the ISR.
	if res := heartbeat(t, q, 3, epochs[3], true); !res.IsFenced {
		t.Fatal("broker 3 not fenced on request")
	}
	if _, err := q.AlterPartition(ctx, req(1, 0, 1, 1, 2, 3)); errCode(err) != kerr.IneligibleReplica {
		t.Fatalf("fenced broker into ISR: %v", err)
	}
	heartbeat(t, q, 3, epochs[3], false)
	p, err = q.AlterPartition(ctx, req(1, 0, 1, 1, 2, 3))
	if err != nil || !slices.Equal(p.ISR, []int32{1, 2, 3}) || p.PartitionEpoch != 2 {
		t.Fatalf("expand: %+v %v", p, err)
	}
	// The same ISR again changes nothing and writes nothing.
	off := q.Image().Offset
	if p, err = q.AlterPartition(ctx, req(1, 0, 2, 1, 2, 3)); err != nil || p.PartitionEpoch != 2 || q.Image().Offset != off {
		t.Fatalf("no-op alter: %+v %v, offset %d -> %d", p, err, off, q.Image().Offset)
	}
}

func TestUncleanLeaderElection(t *testing.T) {
	q := oneVoter(t, func(o *QuorumOptions) { o.BrokerSessionTimeout = time.Minute })
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2)
	createAssigned(t, q, "clean", nil, []int32{1, 2})
	createAssigned(t, q, "dirty", map[string]string{"unclean.leader.election.enable": "true"}, []int32{1, 2})
	createAssigned(t, q, "late", nil, []int32{1, 2})
	for _, topic := range []string{"clean", "dirty", "late"} {
		if _, err := alterISR(q, epochs, topic, 0, 1); err != nil {
			t.Fatalf("shrink %s: %v", topic, err)
		}
	}
	heartbeat(t, q, 1, epochs[1], true) // broker 1, the only ISR member, is fenced
	img := q.Image()
	if p := img.Partition("clean", 0); p.Leader != -1 || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("clean-0 with unclean election off: %+v", p)
	}
	if p := img.Partition("dirty", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderEpoch != 1 {
		t.Fatalf("dirty-0 with unclean election on: %+v", p)
	}
	// Unclean election on request.
	r := q.ElectLeaders(ctx, true, []TopicPartition{{"clean", 0}, {"dirty", 0}})
	if len(r) != 2 || r[0].Err != nil || errCode(r[1].Err) != kerr.ElectionNotNeeded {
		t.Fatalf("unclean ElectLeaders: %+v", r)
	}
	if p := q.Image().Partition("clean", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("clean-0 after unclean ElectLeaders: %+v", p)
	}
	// Turning the topic config on later elects the offline partition.
	if p := q.Image().Partition("late", 0); p.Leader != -1 {
		t.Fatalf("late-0 should be offline: %+v", p)
	}
	if err := q.AlterConfigs(ctx, metadata.ConfigResource{Type: metadata.ResourceTopic, Name: "late"}, func(cur map[string]string) (map[string]string, error) {
		m := maps.Clone(cur)
		m["unclean.leader.election.enable"] = "true"
		return m, nil
	}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, q, "late-0 elected uncleanly", func(img *metadata.Image) bool { return img.Partition("late", 0).Leader == 2 })
	// No live replica at all: nothing to elect.
	heartbeat(t, q, 2, epochs[2], true)
	if r := q.ElectLeaders(ctx, true, []TopicPartition{{"clean", 0}}); errCode(r[0].Err) != kerr.EligibleLeadersNotAvailable {
		t.Fatalf("unclean election with no live replica: %+v", r)
	}
}

func TestPreferredElectionAndAutoRebalance(t *testing.T) {
	q := oneVoter(t, func(o *QuorumOptions) {
		o.BrokerConfigs = map[string]string{"auto.leader.rebalance.enable": "false"}
	})
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	createAssigned(t, q, "p", nil, []int32{1, 2}, []int32{2, 3}, []int32{3, 1})

	// Move p-0's leadership away from its preferred replica 1.
	heartbeat(t, q, 1, epochs[1], true)
	heartbeat(t, q, 1, epochs[1], false)
	if p := q.Image().Partition("p", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("p-0 after broker 1 bounced: %+v", p)
	}
	// All partitions: those already led by their preferred replica are
	// left out; p-0's preferred replica is not in the ISR yet.
	r := q.ElectLeaders(ctx, false, nil)
	if len(r) != 1 || r[0].TopicPartition != (TopicPartition{"p", 0}) || errCode(r[0].Err) != kerr.PreferredLeaderNotAvailable {
		t.Fatalf("ElectLeaders(all) before catch-up: %+v", r)
	}
	if _, err := alterISR(q, epochs, "p", 0, 2, 1); err != nil {
		t.Fatal(err)
	}
	before := q.Image().Partition("p", 0)
	r = q.ElectLeaders(ctx, false, []TopicPartition{{"p", 0}, {"p", 1}, {"nope", 0}, {"p", 9}})
	want := []*kerr.Error{nil, kerr.ElectionNotNeeded, kerr.UnknownTopicOrPartition, kerr.UnknownTopicOrPartition}
	for i := range want {
		if errCode(r[i].Err) != want[i] {
			t.Fatalf("ElectLeaders result %d: %v, want %v", i, r[i].Err, want[i])
		}
	}
	if p := q.Image().Partition("p", 0); p.Leader != 1 || p.LeaderEpoch != before.LeaderEpoch+1 || p.PartitionEpoch != before.PartitionEpoch+1 {
		t.Fatalf("p-0 after preferred election: %+v (before %+v)", p, before)
	}

	// Automatic: move it away again, then turn auto rebalance on with a
	// one-second interval through the cluster-wide dynamic config.
	heartbeat(t, q, 1, epochs[1], true)
	heartbeat(t, q, 1, epochs[1], false)
	if _, err := alterISR(q, epochs, "p", 0, 2, 1); err != nil {
		t.Fatal(err)
	}
	if q.Image().Partition("p", 0).Leader != 2 {
		t.Fatal("p-0 did not move")
	}
	hb := startHeartbeats(t, q, epochs) // keep sessions alive while waiting
	defer hb.stop()
	if err := q.AlterConfigs(ctx, metadata.ConfigResource{Type: metadata.ResourceBroker}, func(cur map[string]string) (map[string]string, error) {
		m := maps.Clone(cur)
		m["auto.leader.rebalance.enable"] = "true"
		m["leader.imbalance.check.interval.seconds"] = "1"
		return m, nil
	}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, q, "automatic preferred election of p-0", func(img *metadata.Image) bool { return img.Partition("p", 0).Leader == 1 })
}

func TestReassignment(t *testing.T) {
	q := oneVoter(t, nil)
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	createAssigned(t, q, "r", nil, []int32{1, 2})
	reassign := func(replicas ...int32) *Error {
		return q.AlterPartitionReassignments(ctx, []Reassignment{{TopicPartition{"r", 0}, replicas}})[0]
	}

	if err := reassign(2, 3); err != nil {
		t.Fatal(err)
	}
	p := q.Image().Partition("r", 0)
	if !slices.Equal(p.Replicas, []int32{2, 3, 1}) || !slices.Equal(p.AddingReplicas, []int32{3}) ||
		!slices.Equal(p.RemovingReplicas, []int32{1}) || p.Leader != 1 || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 {
		t.Fatalf("reassignment started: %+v", p)
	}
	if l := q.ListPartitionReassignments(ctx, nil); len(l) != 1 || !slices.Equal(l[0].AddingReplicas, []int32{3}) || !slices.Equal(l[0].Replicas, []int32{2, 3, 1}) {
		t.Fatalf("list all: %+v", l)
	}
	if l := q.ListPartitionReassignments(ctx, []TopicPartition{{"r", 1}, {"other", 0}}); len(l) != 0 {
		t.Fatalf("list of partitions not moving: %+v", l)
	}
	// The leader (1) adds 3 to the ISR: the reassignment completes, 1
	// leaves, and since the leader is not a target replica leadership
	// moves (NEW_LEADER_ELECTED tells the old leader).
	np, err := alterISR(q, epochs, "r", 0, 1, 2, 3)
	if errCode(err) != kerr.NewLeaderElected {
		t.Fatalf("completing alter: %v", err)
	}
	p = q.Image().Partition("r", 0)
	if !slices.Equal(p.Replicas, []int32{2, 3}) || !slices.Equal(p.ISR, []int32{2, 3}) || p.AddingReplicas != nil ||
		p.RemovingReplicas != nil || p.Leader != 2 || p.LeaderEpoch != 1 || np.Leader != 2 {
		t.Fatalf("reassignment completed: %+v (returned %+v)", p, np)
	}
	if l := q.ListPartitionReassignments(ctx, nil); len(l) != 0 {
		t.Fatalf("list after completion: %+v", l)
	}

	// Cancel puts the replicas back (the ones being added go).
	if err := reassign(3, 1); err != nil {
		t.Fatal(err)
	}
	if err := q.AlterPartitionReassignments(ctx, []Reassignment{{TopicPartition: TopicPartition{"r", 0}}})[0]; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	p = q.Image().Partition("r", 0)
	if !slices.Equal(p.Replicas, []int32{3, 2}) || !slices.Equal(p.ISR, []int32{2, 3}) || p.Reassigning() || p.Leader != 2 {
		t.Fatalf("after cancel: %+v", p)
	}
	if err := q.AlterPartitionReassignments(ctx, []Reassignment{{TopicPartition: TopicPartition{"r", 0}}})[0]; errCode(err) != kerr.NoReassignmentInProgress {
		t.Fatalf("cancel with none in progress: %v", err)
	}
	// Reordering existing replicas completes at once.
	if err := reassign(2, 3); err != nil {
		t.Fatal(err)
	}
	if p = q.Image().Partition("r", 0); !slices.Equal(p.Replicas, []int32{2, 3}) || p.Reassigning() {
		t.Fatalf("reorder: %+v", p)
	}
	errs := q.AlterPartitionReassignments(ctx, []Reassignment{
		{TopicPartition{"r", 0}, []int32{1, 9}},
		{TopicPartition{"r", 0}, []int32{1, 1}},
		{TopicPartition{"r", 0}, []int32{}},
		{TopicPartition{"nope", 0}, []int32{1}},
		{TopicPartition{"r", 4}, []int32{1}},
	})
	want := []*kerr.Error{kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment, kerr.UnknownTopicOrPartition, kerr.UnknownTopicOrPartition}
	for i := range want {
		if errCode(errs[i]) != want[i] {
			t.Errorf("bad reassignment %d: %v, want %v", i, errs[i], want[i])
		}
	}
}
