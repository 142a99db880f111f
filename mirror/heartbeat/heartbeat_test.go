package heartbeat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

func props(kv ...string) map[string]string {
	p := map[string]string{"source.cluster.alias": "primary", "target.cluster.alias": "backup", "name": "MirrorHeartbeatConnector"}
	for i := 0; i < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func startConnector(t *testing.T, p map[string]string) *Connector {
	t.Helper()
	// The background topic creation has no cluster to reach here; a
	// short admin timeout ends it quickly.
	p["admin.timeout.ms"] = "50"
	p["target.cluster.bootstrap.servers"] = "127.0.0.1:1"
	c := &Connector{}
	if err := c.Start(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// TestTaskConfigs follows MirrorHeartBeatConnectorTest: no task when
// heartbeats are off, one task even when replication is disabled.
func TestTaskConfigs(t *testing.T) {
	for _, tc := range []struct {
		kv   []string
		want int
	}{
		{nil, 1},
		{[]string{"emit.heartbeats.enabled", "false"}, 0},
		{[]string{"enabled", "false"}, 1},
		{[]string{"emit.heartbeats.interval.seconds", "-1"}, 0},
	} {
		c := startConnector(t, props(tc.kv...))
		got, err := c.TaskConfigs(5)
		if err != nil || len(got) != tc.want {
			t.Errorf("%v: %d task configs (%v), want %d", tc.kv, len(got), err, tc.want)
		}
		if len(got) == 1 && got[0]["source.cluster.alias"] != "primary" {
			t.Errorf("task config %v lacks the connector's", got[0])
		}
	}
}

func TestStartRefusesBadConfig(t *testing.T) {
	c := &Connector{}
	err := c.Start(context.Background(), map[string]string{"target.cluster.alias": "b"})
	if err == nil || !strings.Contains(err.Error(), "source.cluster.alias") {
		t.Errorf("Start without source.cluster.alias: %v", err)
	}
	err = c.Start(context.Background(), props("emit.heartbeats.interval.seconds", "soon"))
	if err == nil || !strings.Contains(err.Error(), "emit.heartbeats.interval.seconds") {
		t.Errorf("Start with a bad interval: %v", err)
	}
}

// TestTaskPoll: a heartbeat every interval, to partition 0 of the
// policy's heartbeats topic, its key and value MM2's encoding of the pair
// and the time, its source partition the pair (MirrorHeartbeatTaskTest).
func TestTaskPoll(t *testing.T) {
	for _, kv := range [][]string{nil, {"replication.policy.separator", "__"},
		{"replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}} {
		fixed := time.UnixMilli(1_700_000_000_123)
		task := &Task{now: func() time.Time { return fixed }}
		if err := task.Start(context.Background(), props(append(kv, "emit.heartbeats.interval.seconds", "0")...)); err != nil {
			t.Fatal(err)
		}
		recs, err := task.Poll(context.Background())
		if err != nil || len(recs) != 1 {
			t.Fatalf("Poll: %v, %v", recs, err)
		}
		r := recs[0]
		if r.Topic != "heartbeats" || r.Partition != 0 || r.Timestamp != fixed.UnixMilli() ||
			r.KeySchema != connect.BytesSchema || r.ValueSchema != connect.BytesSchema {
			t.Errorf("%v: record %+v", kv, r)
		}
		if r.SourcePartition["sourceClusterAlias"] != "primary" || r.SourcePartition["targetClusterAlias"] != "backup" ||
			len(r.SourcePartition) != 2 || r.SourceOffset["offset"] != int64(0) {
			t.Errorf("source partition %v offset %v", r.SourcePartition, r.SourceOffset)
		}
		hb, err := records.DecodeHeartbeat(r.Key.([]byte), r.Value.([]byte))
		want := records.Heartbeat{SourceClusterAlias: "primary", TargetClusterAlias: "backup", Timestamp: fixed.UnixMilli()}
		if err != nil || hb != want {
			t.Errorf("heartbeat %v, %v; want %v", hb, err, want)
		}
	}
}

// TestTaskWaitsAndStops: Poll waits out the interval and returns nothing
// once the task is stopped.
func TestTaskWaitsAndStops(t *testing.T) {
	task := &Task{}
	if err := task.Start(context.Background(), props("emit.heartbeats.interval.seconds", "1")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if recs, _ := task.Poll(context.Background()); len(recs) != 1 || time.Since(start) < 900*time.Millisecond {
		t.Errorf("first heartbeat after %v: %v", time.Since(start), recs)
	}
	done := make(chan []*connect.SourceRecord, 1)
	go func() { r, _ := task.Poll(context.Background()); done <- r }()
	time.Sleep(20 * time.Millisecond)
	task.Stop()
	select {
	case r := <-done:
		if r != nil {
			t.Errorf("Poll after Stop returned %v", r)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Poll did not return after Stop")
	}
}

// TestAlterOffsets follows MirrorHeartBeatConnectorTest's alterOffsets
// cases.
func TestAlterOffsets(t *testing.T) {
	c := &Connector{}
	part := func() map[string]any {
		return map[string]any{"sourceClusterAlias": "primary", "targetClusterAlias": "backup"}
	}
	alter := func(p, o map[string]any) error {
		_, err := c.AlterOffsets(nil, []connect.SourcePartitionOffset{{Partition: p, Offset: o}})
		return err
	}
	zero := map[string]any{"offset": int64(0)}
	if err := alter(part(), zero); err != nil {
		t.Errorf("valid offset refused: %v", err)
	}
	if err := alter(part(), map[string]any{"offset": float64(0)}); err != nil {
		t.Errorf("0 read back from JSON refused: %v", err)
	}
	for _, k := range []string{"sourceClusterAlias", "targetClusterAlias"} {
		p := part()
		delete(p, k)
		if err := alter(p, zero); err == nil || !strings.Contains(err.Error(), "is missing the '"+k+"' key") {
			t.Errorf("without %s: %v", k, err)
		}
	}
	if err := alter(map[string]any{"sourceClusterAlias": 618, "targetClusterAlias": "b"}, zero); err == nil {
		t.Error("a non-string alias was accepted")
	}
	if err := alter(nil, zero); err == nil {
		t.Error("a null partition was accepted")
	}
	for _, v := range []any{"nan", nil, 3.14, int64(-420), "-420", "10", int64(10), int64(1) << 31} {
		if err := alter(part(), map[string]any{"offset": v}); err == nil {
			t.Errorf("offset %v accepted", v)
		}
	}
	if err := alter(part(), map[string]any{"unused_offset_key": 0}); err == nil {
		t.Error("an offset without the offset key was accepted")
	}
	// Tombstones are always fine: they clean up whatever is there.
	for _, p := range []map[string]any{part(), nil, {}, {"unused_partition_key": "x"}, {"sourceClusterAlias": 618}} {
		if err := alter(p, nil); err != nil {
			t.Errorf("tombstone for %v refused: %v", p, err)
		}
	}
	if ok, err := c.AlterOffsets(nil, nil); !ok || err != nil {
		t.Errorf("empty alter: %v %v", ok, err)
	}
}
