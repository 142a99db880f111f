package main

import (
	"context"
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
	"github.com/twmb/franz-go/pkg/kgo"

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
	rcs, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		for _, cfg := range rc.Configs {
			if strings.HasSuffix(cfg.Key, "replication.throttled.replicas") && cfg.Value != nil && *cfg.Value != "" && cfg.Source == 1 {
				t.Errorf("after verify %s=%s is still set", cfg.Key, *cfg.Value)
			}
		}
	}
	if out := mustCluster(t, addr, "cluster", "reassign", "list"); !strings.Contains(out, "No partition reassignments found.") {
		t.Errorf("reassign list after completion:\n%s", out)
	}

	// elect-leaders: restart node 1 so its partitions are led elsewhere,
	// then move preferred leadership back.
	if err := c.Node(1).Stop(); err != nil {
		t.Logf("node 1 stop: %v", err)
	}
	c.Node(1).Restart()
	c.WaitReady(t, time.Minute)
	testkit.CheckFor(t, 30*time.Second, 500*time.Millisecond, func() error {
		if d := describe(t, addr); len(d.UnderReplicated) > 0 {
			return fmt.Errorf("%d under-replicated partitions", len(d.UnderReplicated))
		}
		return nil
	})
	// Round-robin placement of 6 partitions on 4 brokers makes node 1 the
	// preferred leader of at least one, which its restart moved.
	if d := describe(t, addr); len(d.NotPreferred) == 0 {
		t.Errorf("no partition lost its preferred leader with the restart of node 1")
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
	if c.LeaderOf(t, "orders", 0) != 4 {
		t.Errorf("orders-0 led by %d after a preferred election, want 4", c.LeaderOf(t, "orders", 0))
	}
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
