package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

func open(t *testing.T, dir string, opts Options) *Local {
	t.Helper()
	if opts.NodeID == 0 {
		opts.NodeID = 1
	}
	c, err := OpenLocal(dir, opts)
	if err != nil {
		t.Fatalf("open controller: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.RegisterBroker(metadata.Broker{ID: opts.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCreateTopicsAndReopen(t *testing.T) {
	dir := t.TempDir()
	var changes int
	c := open(t, dir, Options{DefaultPartitions: 3, BootstrapConfigs: map[string]string{"min.insync.replicas": "1"},
		OnChange: func(old, new *metadata.Image) { changes++ }})
	res := c.CreateTopics(context.Background(), []CreateTopic{
		{Name: "a", Partitions: -1, ReplicationFactor: -1, Configs: map[string]string{"retention.ms": "1000"}},
		{Name: "b", Partitions: 2, ReplicationFactor: 1},
		{Name: "a", Partitions: 1, ReplicationFactor: 1}, // duplicate within the request
		{Name: "bad name", Partitions: 1, ReplicationFactor: 1},
		{Name: "c", Partitions: 1, ReplicationFactor: 2},
		{Name: "d", Partitions: 0, ReplicationFactor: 1},
	}, false)
	wantErr := []*kerr.Error{nil, nil, kerr.TopicAlreadyExists, kerr.InvalidTopicException, kerr.InvalidReplicationFactor, kerr.InvalidPartitions}
	for i, r := range res {
		var got *kerr.Error
		if r.Err != nil {
			got = r.Err.Code
		}
		if got != wantErr[i] {
			t.Errorf("topic %d: error %v, want %v", i, got, wantErr[i])
		}
	}
	img := c.Image()
	if len(img.Topics["a"].Partitions) != 3 || len(img.Topics["b"].Partitions) != 2 {
		t.Fatalf("partition counts: a=%d b=%d", len(img.Topics["a"].Partitions), len(img.Topics["b"].Partitions))
	}
	if img.TopicConfigs("a")["retention.ms"] != "1000" {
		t.Fatalf("topic config not stored: %v", img.TopicConfigs("a"))
	}
	if img.BrokerConfigs("")["min.insync.replicas"] != "1" {
		t.Fatalf("bootstrap config missing: %v", img.BrokerConfigs(""))
	}
	if changes == 0 {
		t.Fatal("OnChange never called")
	}
	clusterID := img.ClusterID
	c.Close()

	// Everything survives a reopen, including the cluster id.
	c2 := open(t, dir, Options{})
	img2 := c2.Image()
	if img2.ClusterID != clusterID || len(img2.Topics) != 2 || img2.Topics["a"].ID != img.Topics["a"].ID {
		t.Fatalf("after reopen: cluster %s topics %v", img2.ClusterID, img2.TopicNames())
	}
}

func TestValidateOnlyWritesNothing(t *testing.T) {
	c := open(t, t.TempDir(), Options{})
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "v", Partitions: 1, ReplicationFactor: 1}}, true)
	if res[0].Err != nil || res[0].Topic == nil {
		t.Fatalf("validate only: %+v", res[0])
	}
	if c.Image().Topics["v"] != nil {
		t.Fatal("validate-only created the topic")
	}
}

func TestCollidingNames(t *testing.T) {
	c := open(t, t.TempDir(), Options{})
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "a.b", Partitions: 1, ReplicationFactor: 1}}, false)
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "a_b", Partitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err == nil || res[0].Err.Code != kerr.InvalidTopicException {
		t.Fatalf("a_b after a.b: %v", res[0].Err)
	}
}

func TestConfigValidationRejects(t *testing.T) {
	c := open(t, t.TempDir(), Options{ValidateTopicConfigs: func(m map[string]string) error {
		if _, ok := m["bad"]; ok {
			return &Error{Code: kerr.InvalidConfig, Message: "Unknown topic config name: bad"}
		}
		return nil
	}})
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "t", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"bad": "1"}}}, false)
	if res[0].Err == nil || res[0].Err.Message != "Unknown topic config name: bad" {
		t.Fatalf("bad config: %v", res[0].Err)
	}
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "t", Partitions: 1, ReplicationFactor: 1}}, false)
	err := c.AlterConfigs(context.Background(), metadata.ConfigResource{Type: metadata.ResourceTopic, Name: "t"},
		func(cur map[string]string) (map[string]string, error) { return map[string]string{"bad": "x"}, nil }, false)
	if err == nil || err.Code != kerr.InvalidConfig {
		t.Fatalf("alter with bad config: %v", err)
	}
	if len(c.Image().TopicConfigs("t")) != 0 {
		t.Fatal("rejected alter changed the configs")
	}
}

func TestAlterDeleteAndPartitions(t *testing.T) {
	c := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	c.CreateTopics(ctx, []CreateTopic{{Name: "t", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"x": "1", "y": "2"}}}, false)
	res := metadata.ConfigResource{Type: metadata.ResourceTopic, Name: "t"}
	if err := c.AlterConfigs(ctx, res, func(cur map[string]string) (map[string]string, error) {
		return map[string]string{"y": "3", "z": "4"}, nil
	}, false); err != nil {
		t.Fatal(err)
	}
	if got := c.Image().TopicConfigs("t"); len(got) != 2 || got["y"] != "3" || got["z"] != "4" {
		t.Fatalf("configs after alter: %v", got)
	}
	if err := c.CreatePartitions(ctx, "t", 4, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartitions(ctx, "t", 2, nil, false); err == nil || err.Code != kerr.InvalidPartitions {
		t.Fatalf("shrink: %v", err)
	}
	if n := len(c.Image().Topics["t"].Partitions); n != 4 {
		t.Fatalf("%d partitions", n)
	}
	errs := c.DeleteTopics(ctx, []string{"t", "missing"})
	if errs[0] != nil || errs[1] == nil || errs[1].Code != kerr.UnknownTopicOrPartition {
		t.Fatalf("delete: %v %v", errs[0], errs[1])
	}
	if c.Image().Topics["t"] != nil || len(c.Image().TopicConfigs("t")) != 0 {
		t.Fatal("topic or its configs survived deletion")
	}
}

func TestProducerIDBlocksNeverRepeat(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, Options{})
	a, _ := c.AllocateProducerIDs(context.Background(), 1000)
	b, _ := c.AllocateProducerIDs(context.Background(), 1000)
	c.Close()
	c2 := open(t, dir, Options{})
	d, _ := c2.AllocateProducerIDs(context.Background(), 1000)
	if !(a < b && b < d && b-a == 1000 && d-b == 1000) {
		t.Fatalf("blocks %d %d %d", a, b, d)
	}
}

func TestTornJournalTailIsDropped(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, Options{})
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "kept", Partitions: 1, ReplicationFactor: 1}}, false)
	c.Close()
	path := filepath.Join(dir, journalName)
	good, _ := os.ReadFile(path)
	// A crash mid-write: half a line, then garbage.
	line, _ := encodeEntry([]metadata.Record{{Topic: &metadata.TopicRecord{Name: "lost", ID: metadata.NewUUID()}}})
	os.WriteFile(path, append(append(good, line[:len(line)/2]...), 0xff, 0x00), 0o644)

	c2 := open(t, dir, Options{})
	if c2.Image().Topics["kept"] == nil || c2.Image().Topics["lost"] != nil {
		t.Fatalf("after torn tail: %v", c2.Image().TopicNames())
	}
	// The journal keeps working after the truncation.
	c2.CreateTopics(context.Background(), []CreateTopic{{Name: "after", Partitions: 1, ReplicationFactor: 1}}, false)
	c2.Close()
	c3 := open(t, dir, Options{})
	if c3.Image().Topics["after"] == nil {
		t.Fatal("write after recovery lost")
	}
}

func TestJournalCompaction(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, Options{})
	ctx := context.Background()
	for i := 0; i < compactEvery+50; i++ {
		name := "t" + strconv.Itoa(i%10)
		if c.Image().Topics[name] != nil {
			c.DeleteTopics(ctx, []string{name})
		} else {
			c.CreateTopics(ctx, []CreateTopic{{Name: name, Partitions: 1, ReplicationFactor: 1}}, false)
		}
	}
	want := c.Image()
	c.Close()
	if c.j.entries > compactEvery {
		t.Fatalf("journal has %d entries, compaction never ran", c.j.entries)
	}
	c2 := open(t, dir, Options{})
	got := c2.Image()
	if len(got.Topics) != len(want.Topics) || got.ClusterID != want.ClusterID {
		t.Fatalf("after compaction: %v vs %v", got.TopicNames(), want.TopicNames())
	}
	for name, tp := range want.Topics {
		if got.Topics[name] == nil || got.Topics[name].ID != tp.ID {
			t.Fatalf("topic %s lost or changed id", name)
		}
	}
}

func TestAssignReplicasSpreadsLeaders(t *testing.T) {
	brokers := []int32{1, 2, 3}
	a := assignReplicas(brokers, 6, 3, 0, 0)
	leaders := map[int32]int{}
	for _, r := range a {
		leaders[r[0]]++
		seen := map[int32]bool{}
		for _, b := range r {
			if seen[b] {
				t.Fatalf("replica list %v repeats a broker", r)
			}
			seen[b] = true
		}
	}
	for _, b := range brokers {
		if leaders[b] != 2 {
			t.Fatalf("leaders %v not spread evenly", leaders)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	e := errorf(kerr.InvalidConfig, "bad %s", "x")
	var ce *Error
	if !errors.As(error(e), &ce) || ce.Code != kerr.InvalidConfig {
		t.Fatal("Error does not unwrap")
	}
}

// FuzzOpenJournal: whatever bytes the journal holds, opening it returns
// an image or an error, never a panic, and a reopen agrees with it.
func FuzzOpenJournal(f *testing.F) {
	line, _ := encodeEntry([]metadata.Record{
		{Cluster: &metadata.ClusterRecord{ClusterID: "c", ControllerID: 1}},
		{Topic: &metadata.TopicRecord{Name: "t", ID: metadata.UUID{1}}},
		{Partition: &metadata.PartitionRecord{TopicID: metadata.UUID{1}, Partition: metadata.Partition{Index: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}}},
	})
	f.Add(line)
	f.Add(append(line, line[:20]...))
	f.Add([]byte("00000000 []\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, journalName), b, 0o644)
		c, err := OpenLocal(dir, Options{NodeID: 1})
		if err != nil {
			return
		}
		names := c.Image().TopicNames()
		c.Close()
		c2, err := OpenLocal(dir, Options{NodeID: 1})
		if err != nil {
			t.Fatalf("reopen after a successful open failed: %v", err)
		}
		defer c2.Close()
		if got := c2.Image().TopicNames(); len(got) != len(names) {
			t.Fatalf("reopen sees %v, first open saw %v", got, names)
		}
	})
}
