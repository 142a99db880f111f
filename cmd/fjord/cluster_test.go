package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestClusterCommandsKafka drives `fjord cluster` against a 4-node Apache
// Kafka 4.4 process cluster (3 combined nodes, 1 broker-only): describe,
// reassign generate/execute --throttle/verify/cancel/list, elect-leaders
// after a broker restart, and remove-broker. Kafka is the reference the
// commands must work against; runClusterCommands is the scenario a Fjord
// process cluster must pass too. Needs FJORD_KAFKA_TESTS=1.
func TestClusterCommandsKafka(t *testing.T) {
	if os.Getenv("FJORD_KAFKA_TESTS") == "" {
		t.Skip("needs Apache Kafka 4.4 JVMs: set FJORD_KAFKA_TESTS=1 (after scripts/kafka.sh fetch)")
	}
	runClusterCommands(t, true)
}

// TestClusterCommandsFjord runs the same scenario against a 4-node Fjord
// process cluster (3 combined nodes, 1 broker-only).
func TestClusterCommandsFjord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-process cluster; skipped with -short")
	}
	runClusterCommands(t, false)
}

// clusterRun runs `fjord cluster|topic args...` in-process against addr.
func clusterRun(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "fjord", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newClusterCmd(), newTopicCmd())
	var out, errOut strings.Builder
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(args, "-b", addr))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		t.Logf("fjord %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), err
}

func mustCluster(t *testing.T, addr string, args ...string) string {
	t.Helper()
	out, err := clusterRun(t, addr, args...)
	if err != nil {
		t.Fatalf("fjord %s: %v", strings.Join(args, " "), err)
	}
	return out
}

type describedCluster struct {
	ClusterID  string `json:"cluster_id"`
	Controller int32  `json:"controller"`
	Brokers    []struct {
		ID     int32 `json:"id"`
		Fenced bool  `json:"fenced"`
	} `json:"brokers"`
	Partitions      int               `json:"partitions"`
	UnderReplicated []json.RawMessage `json:"under_replicated"`
	Offline         []json.RawMessage `json:"offline"`
	NotPreferred    []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
	} `json:"not_preferred_leader"`
}

func describe(t *testing.T, addr string) describedCluster {
	t.Helper()
	return decodeJSON[describedCluster](t, mustCluster(t, addr, "cluster", "describe", "-o", "json"))
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runClusterCommands(t *testing.T, kafka bool) {
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{
		Nodes: 4, NodeRoles: map[int32]string{4: "broker"}, Kafka: kafka,
		// Preferred leaders come back only when the test asks.
		Props: map[string]string{"auto.leader.rebalance.enable": "false"},
	})
	c.WaitReady(t, 2*time.Minute)
	addr := c.Bootstrap()

	mustCluster(t, addr, "topic", "create", "orders", "--partitions", "6", "--replication-factor", "3")
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		d := describe(t, addr)
		if d.Partitions < 6 || len(d.UnderReplicated) > 0 || len(d.Offline) > 0 {
			return fmt.Errorf("%d partitions, %d under-replicated, %d offline", d.Partitions, len(d.UnderReplicated), len(d.Offline))
		}
		return nil
	})
	// Every broker, not only the one describe asked: the commands below
	// may ask any of them.
	seenEverywhere(t, c, "orders", 6)
	d := describe(t, addr)
	if kafka && d.ClusterID != c.ClusterID {
		t.Errorf("cluster id %q, want %q (the id the nodes were formatted with)", d.ClusterID, c.ClusterID)
	}
	if len(d.Brokers) != 4 {
		t.Fatalf("describe lists %d brokers, want 4: %+v", len(d.Brokers), d.Brokers)
	}
	for _, b := range d.Brokers {
		if b.Fenced {
			t.Errorf("broker %d fenced in a ready cluster", b.ID)
		}
	}
	text := mustCluster(t, addr, "cluster", "describe")
	for _, want := range []string{"Cluster ID: ", "Under-replicated partitions: none", "Offline partitions: none"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe text lacks %q:\n%s", want, text)
		}
	}

	// generate: a proposal on brokers 1,2,3 keeps RF 3 on exactly those.
	topicsFile := writeFile(t, "topics.json", `{"version":1,"topics":[{"topic":"orders"}]}`)
	gen := decodeJSON[struct {
		Proposed struct {
			Partitions []struct {
				Partition int32   `json:"partition"`
				Replicas  []int32 `json:"replicas"`
			} `json:"partitions"`
		} `json:"proposed"`
	}](t, mustCluster(t, addr, "cluster", "reassign", "generate", "--topics-to-move-json-file", topicsFile, "--broker-list", "1,2,3", "-o", "json"))
	if len(gen.Proposed.Partitions) != 6 {
		t.Fatalf("proposal has %d partitions, want 6", len(gen.Proposed.Partitions))
	}
	for _, p := range gen.Proposed.Partitions {
		s := slices.Clone(p.Replicas)
		slices.Sort(s)
		if !slices.Equal(s, []int32{1, 2, 3}) {
			t.Errorf("proposed replicas of orders-%d: %v", p.Partition, p.Replicas)
		}
	}

	// execute with a throttle, then verify until done: the replicas are
	// the file's and verify removed the throttle configs.
	moveFile := writeFile(t, "move.json", `{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,1,2],"log_dirs":["any","any","any"]}]}`)
	out := mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", moveFile, "--throttle", "50000000")
	for _, want := range []string{"Save this to use as the --reassignment-json-file option during rollback", "The inter-broker throttle limit was set to 50000000 B/s", "Successfully started partition reassignment for orders-0"} {
		if !strings.Contains(out, want) {
			t.Errorf("execute output lacks %q:\n%s", want, out)
		}
	}
	testkit.CheckFor(t, 60*time.Second, 500*time.Millisecond, func() error {
		v := decodeJSON[struct {
			InProgress bool     `json:"in_progress"`
			Mismatched []string `json:"mismatched"`
			Cleared    bool     `json:"throttles_cleared"`
		}](t, mustCluster(t, addr, "cluster", "reassign", "verify", "--reassignment-json-file", moveFile, "-o", "json"))
		if v.InProgress || !v.Cleared || len(v.Mismatched) > 0 {
			return fmt.Errorf("verify: in progress %v, mismatched %v, throttles cleared %v", v.InProgress, v.Mismatched, v.Cleared)
		}
		return nil
	})
	if out := mustCluster(t, addr, "cluster", "reassign", "verify", "--reassignment-json-file", moveFile); !strings.Contains(out, "Reassignment of partition orders-0 is completed.") {
		t.Errorf("verify text:\n%s", out)
	}
	adm := newAdmin(t, c.Seeds())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Brokers apply the metadata change a moment after the controller
	// answered (Kafka's too), so a broker may still describe the throttle.
	cleared := time.Now()
	testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		rcs, err := adm.DescribeTopicConfigs(ctx, "orders")
		if err != nil {
			return err
		}
		for _, rc := range rcs {
			for _, cfg := range rc.Configs {
				if strings.HasSuffix(cfg.Key, "replication.throttled.replicas") && cfg.Value != nil && *cfg.Value != "" && cfg.Source == 1 {
					return fmt.Errorf("after verify %s=%s is still set", cfg.Key, *cfg.Value)
				}
			}
		}
		return nil
	})
	t.Logf("throttle configs gone from the described topic %v after verify", time.Since(cleared))
	if out := mustCluster(t, addr, "cluster", "reassign", "list"); !strings.Contains(out, "No partition reassignments found.") {
		t.Errorf("reassign list after completion:\n%s", out)
	}

	// elect-leaders: restart node 4 so its partitions are led elsewhere,
	// then move preferred leadership back. Node 4 is the preferred leader
	// of orders-0 since the reassignment above; which other partitions a
	// node prefers depends on the random start of the topic's placement.
	stopAt := time.Now()
	if err := c.Node(4).Stop(); err != nil {
		t.Logf("node 4 stop: %v", err)
	}
	t.Logf("node 4 stopped (controlled shutdown) in %v", time.Since(stopAt))
	c.Node(4).Restart()
	c.WaitReady(t, time.Minute)
	testkit.CheckFor(t, 30*time.Second, 500*time.Millisecond, func() error {
		if d := describe(t, addr); len(d.UnderReplicated) > 0 {
			return fmt.Errorf("%d under-replicated partitions", len(d.UnderReplicated))
		}
		return nil
	})
	// orders-0's leadership moved off node 4 with its restart.
	if d := describe(t, addr); len(d.NotPreferred) == 0 {
		t.Errorf("no partition lost its preferred leader with the restart of node 4")
	}
	el := decodeJSON[struct {
		Results []struct {
			Topic  string `json:"topic"`
			Result string `json:"result"`
			Error  string `json:"error"`
		} `json:"results"`
	}](t, mustCluster(t, addr, "cluster", "elect-leaders", "--all", "-o", "json"))
	for _, r := range el.Results {
		if r.Result == "error" {
			t.Errorf("elect-leaders --all: %s: %s", r.Topic, r.Error)
		}
	}
	testkit.CheckFor(t, 15*time.Second, 300*time.Millisecond, func() error {
		if d := describe(t, addr); len(d.NotPreferred) > 0 {
			return fmt.Errorf("still not led by their preferred replica: %+v", d.NotPreferred)
		}
		return nil
	})
	// Brokers apply the election a few milliseconds apart: the one
	// LeaderOf asks may not have it yet.
	testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if l := c.LeaderOf(t, "orders", 0); l != 4 {
			return fmt.Errorf("orders-0 led by %d after a preferred election, want 4", l)
		}
		return nil
	})
	out = mustCluster(t, addr, "cluster", "elect-leaders", "--topic", "orders", "--partition", "0")
	if !strings.Contains(out, "Valid replica already elected for partitions orders-0") {
		t.Errorf("elect-leaders on a partition led by its preferred replica:\n%s", out)
	}
	if _, err := clusterRun(t, addr, "cluster", "elect-leaders", "--topic", "orders", "--all"); err == nil {
		t.Error("elect-leaders with both --topic and --all succeeded")
	}

	// remove-broker: stop broker 4, move its replicas away, unregister it.
	if err := c.Node(4).Stop(); err != nil {
		t.Logf("node 4 stop: %v", err)
	}
	rm := decodeJSON[struct {
		Moves []struct {
			Topic     string  `json:"topic"`
			Partition int32   `json:"partition"`
			To        []int32 `json:"to"`
		} `json:"moves"`
		Unregistered bool `json:"unregistered"`
		StillRunning bool `json:"still_running"`
	}](t, mustCluster(t, addr, "cluster", "remove-broker", "4", "--wait", "2m", "-o", "json"))
	if !rm.Unregistered || rm.StillRunning {
		t.Errorf("remove-broker: unregistered %v, still running %v", rm.Unregistered, rm.StillRunning)
	}
	if len(rm.Moves) == 0 {
		t.Error("remove-broker moved nothing, but broker 4 held orders-0")
	}
	testkit.CheckFor(t, 30*time.Second, 500*time.Millisecond, func() error {
		d := describe(t, addr)
		for _, b := range d.Brokers {
			if b.ID == 4 {
				return fmt.Errorf("broker 4 still listed: %+v", d.Brokers)
			}
		}
		if len(d.UnderReplicated) > 0 || len(d.Offline) > 0 {
			return fmt.Errorf("%d under-replicated, %d offline", len(d.UnderReplicated), len(d.Offline))
		}
		return nil
	})
	tds, err := adm.ListTopics(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tds["orders"].Partitions {
		if slices.Contains(p.Replicas, 4) || len(p.Replicas) != 3 {
			t.Errorf("orders-%d replicas %v after removing broker 4", p.Partition, p.Replicas)
		}
	}
	if _, err := clusterRun(t, addr, "cluster", "remove-broker", "4"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("remove-broker of an unregistered broker: %v", err)
	}
	// Every broker serves UnregisterBroker, the active controller's node
	// or not (the others forward it): all answer from the controller.
	for _, n := range c.Nodes() {
		if !n.IsBroker() || !n.Running() {
			continue
		}
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = 4
		resp, err := testkit.RawRequest(n.ClientAddr, req, 10*time.Second)
		if err != nil {
			t.Errorf("UnregisterBroker to node %d: %v", n.ID, err)
			continue
		}
		if code := resp.(*kmsg.UnregisterBrokerResponse).ErrorCode; code != kerr.BrokerIDNotRegistered.Code {
			t.Errorf("UnregisterBroker of the removed broker 4 via node %d: %v", n.ID, kerr.ErrorForCode(code))
		}
	}
}

// seenEverywhere waits until every running broker's Metadata lists
// topic with n partitions: brokers apply a metadata change a moment after
// the controller answered (Kafka's too).
func seenEverywhere(t *testing.T, c *testkit.ProcessCluster, topic string, n int) {
	t.Helper()
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		for _, node := range c.Nodes() {
			if !node.IsBroker() || !node.Running() {
				continue
			}
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
			resp, err := testkit.RawRequest(node.ClientAddr, req, 2*time.Second)
			if err != nil {
				return fmt.Errorf("node %d: %w", node.ID, err)
			}
			ts := resp.(*kmsg.MetadataResponse).Topics
			if len(ts) != 1 || ts[0].ErrorCode != 0 || len(ts[0].Partitions) != n {
				return fmt.Errorf("node %d does not list %s with %d partitions yet", node.ID, topic, n)
			}
		}
		return nil
	})
}

func newAdmin(t *testing.T, seeds []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// TestClusterReassignThrottleFjord: a reassignment that adds a replica
// to a partition holding ~12 MiB, run with `reassign execute --throttle`,
// copies at roughly the throttle (leader and follower side both limit
// the new, out-of-sync replica); with only the leader side configured by
// hand it does too; the same copy without a throttle is much faster, so
// the limit is what made it slow. The rates are dynamic broker configs
// set while the brokers run.
func TestClusterReassignThrottleFjord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-process cluster; skipped with -short")
	}
	runReassignThrottle(t, false)
}

// TestClusterReassignThrottleKafka is the same against Apache Kafka 4.4,
// the reference for the figures. Needs FJORD_KAFKA_TESTS=1.
func TestClusterReassignThrottleKafka(t *testing.T) {
	if os.Getenv("FJORD_KAFKA_TESTS") == "" {
		t.Skip("needs Apache Kafka 4.4 JVMs: set FJORD_KAFKA_TESTS=1 (after scripts/kafka.sh fetch)")
	}
	runReassignThrottle(t, true)
}

func runReassignThrottle(t *testing.T, kafka bool) {
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Kafka: kafka})
	c.WaitReady(t, 2*time.Minute)
	addr := c.Bootstrap()
	ctx := testkit.Context(t, 3*time.Minute)
	adm := newAdmin(t, c.Seeds())

	// One replica on broker 1, then copies to 2 (throttled) and 3 (not).
	mustCluster(t, addr, "topic", "create", "bulk", "--partitions", "1", "--replication-factor", "1")
	seenEverywhere(t, c, "bulk", 1)
	if leader := c.LeaderOf(t, "bulk", 0); leader != 1 {
		move := writeFile(t, "to1.json", `{"version":1,"partitions":[{"topic":"bulk","partition":0,"replicas":[1]}]}`)
		mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", move)
		waitReplicas(t, ctx, c, adm, "bulk", []int32{1}, time.Minute)
	}
	const recordSize = 100 << 10
	const records = 120 // 12000 KiB, random so no codec shrinks it
	cl := testkit.Client(t, addr, kgo.DefaultProduceTopic("bulk"), kgo.ProducerBatchMaxBytes(1<<20))
	payload := make([]byte, recordSize)
	for i := range records {
		rand.Read(payload)
		cl.Produce(ctx, &kgo.Record{Value: slices.Clone(payload)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %d: %v", i, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	size := int64(recordSize * records)

	const rate = 3 << 20 // bytes/s
	move := writeFile(t, "to12.json", `{"version":1,"partitions":[{"topic":"bulk","partition":0,"replicas":[1,2]}]}`)
	start := time.Now()
	mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", move, "--throttle", fmt.Sprint(rate))
	waitReplicas(t, ctx, c, adm, "bulk", []int32{1, 2}, 2*time.Minute)
	throttled := time.Since(start)
	measured := float64(size) / throttled.Seconds()
	t.Logf("throttled copy of %d bytes at --throttle %d B/s: %v, %.0f B/s (%.2f× the throttle)", size, rate, throttled, measured, measured/rate)
	// The first fetch is not held back (the bucket starts full), and the
	// copy ends with the reassignment's metadata round trips: a band, not
	// a point.
	if measured < 0.6*rate || measured > 1.4*rate {
		t.Errorf("throttled copy ran at %.0f B/s, want about %d B/s", measured, rate)
	}
	mustCluster(t, addr, "cluster", "reassign", "verify", "--reassignment-json-file", move)

	// The leader side alone, configured by hand while the brokers run:
	// broker 1's leader quota for bulk-0, nothing on broker 3.
	alter := func(rs kadm.AlterConfigsResponses, err error) {
		t.Helper()
		for _, r := range rs {
			if err == nil {
				err = r.Err
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	v := fmt.Sprint(rate)
	alter(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr("0:1")}}, "bulk"))
	alter(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: &v}}, 1))
	to123 := writeFile(t, "to123.json", `{"version":1,"partitions":[{"topic":"bulk","partition":0,"replicas":[1,2,3]}]}`)
	start = time.Now()
	mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", to123)
	waitReplicas(t, ctx, c, adm, "bulk", []int32{1, 2, 3}, 2*time.Minute)
	leaderOnly := time.Since(start)
	measured = float64(size) / leaderOnly.Seconds()
	t.Logf("leader-side throttle only: %v, %.0f B/s (%.2f× the rate)", leaderOnly, measured, measured/rate)
	if measured < 0.6*rate || measured > 1.4*rate {
		t.Errorf("leader-throttled copy ran at %.0f B/s, want about %d B/s", measured, rate)
	}

	// Without throttles (verify clears them): drop replica 3 and copy to
	// it again from scratch.
	mustCluster(t, addr, "cluster", "reassign", "verify", "--reassignment-json-file", to123)
	mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", move)
	waitReplicas(t, ctx, c, adm, "bulk", []int32{1, 2}, time.Minute)
	start = time.Now()
	mustCluster(t, addr, "cluster", "reassign", "execute", "--reassignment-json-file", to123)
	waitReplicas(t, ctx, c, adm, "bulk", []int32{1, 2, 3}, time.Minute)
	free := time.Since(start)
	t.Logf("unthrottled copy of the same partition: %v", free)
	if free*2 > throttled {
		t.Errorf("unthrottled copy took %v, throttled %v: the throttle did not slow the copy", free, throttled)
	}
}

// waitReplicas waits until topic's partition 0 has exactly want as
// replicas and ISR and no reassignment is in progress. Metadata is asked
// of a broker directly: kadm caches it for MetadataMinAge (5 s), which
// would blur the timing.
func waitReplicas(t *testing.T, ctx context.Context, c *testkit.ProcessCluster, adm *kadm.Client, topic string, want []int32, wait time.Duration) {
	t.Helper()
	testkit.CheckFor(t, wait, 20*time.Millisecond, func() error {
		ongoing, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			return err
		}
		if len(ongoing) > 0 {
			return fmt.Errorf("reassignment of %s-0 in progress", topic)
		}
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
		resp, err := testkit.RawRequest(c.Node(1).ClientAddr, req, 2*time.Second)
		if err != nil {
			return err
		}
		ts := resp.(*kmsg.MetadataResponse).Topics
		if len(ts) != 1 || len(ts[0].Partitions) != 1 {
			return fmt.Errorf("%s not described: %+v", topic, ts)
		}
		p := ts[0].Partitions[0]
		isr := slices.Sorted(slices.Values(p.ISR))
		if !slices.Equal(p.Replicas, want) || !slices.Equal(isr, want) {
			return fmt.Errorf("%s-0 replicas %v ISR %v, want %v", topic, p.Replicas, p.ISR, want)
		}
		return nil
	})
}

// TestClusterAutoLeaderRebalanceFjord: with auto.leader.rebalance.enable
// (Kafka's default) a restarted broker gets its preferred leaderships back
// by itself, without an ElectLeaders call, once it is back in the ISR and
// the controller's next imbalance check runs.
func TestClusterAutoLeaderRebalanceFjord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-process cluster; skipped with -short")
	}
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{
		Nodes: 3,
		Props: map[string]string{"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "1"},
	})
	c.WaitReady(t, 2*time.Minute)
	addr := c.Bootstrap()
	mustCluster(t, addr, "topic", "create", "pref", "--partitions", "6", "--replication-factor", "3")
	seenEverywhere(t, c, "pref", 6)
	var restart int32 = -1
	for p := range int32(6) {
		if l := c.LeaderOf(t, "pref", p); l > 0 {
			restart = l
			break
		}
	}
	if restart < 0 {
		t.Fatal("pref has no leader")
	}
	if err := c.Node(restart).Stop(); err != nil {
		t.Logf("node %d stop: %v", restart, err)
	}
	if d := describe(t, addr); len(d.NotPreferred) == 0 {
		t.Fatalf("stopping node %d moved no preferred leadership", restart)
	}
	c.Node(restart).Restart()
	back := time.Now()
	c.WaitReady(t, time.Minute)
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		if d := describe(t, addr); len(d.NotPreferred) > 0 || len(d.UnderReplicated) > 0 {
			return fmt.Errorf("not led by the preferred replica: %+v; under-replicated: %d", d.NotPreferred, len(d.UnderReplicated))
		}
		return nil
	})
	t.Logf("node %d led its preferred partitions again %v after its restart", restart, time.Since(back))
}
