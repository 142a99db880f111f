package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestMirrorSharedFlow runs two mirror processes (in this test process)
// on one flow with dedicated.mode.enable.internal.rest: they form one
// worker group, split its connectors and tasks, and a member running a
// connector hands its task configs to the leader through the leader's
// /<source>/<target> REST path — every connector gets its tasks, and
// records flow.
func TestMirrorSharedFlow(t *testing.T) {
	testkit.SkipShort(t, "two mirror processes on one flow")
	a := testkit.StartBroker(t, nil)
	hub := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	if _, err := testkit.Admin(t, a.Addr).CreateTopics(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	file := func(listen string) string {
		return writeMM2(t, "mm2.properties", fmt.Sprintf(`clusters = a, hub
a.bootstrap.servers = %s
hub.bootstrap.servers = %s
a->hub.enabled = true
a->hub.topics = orders
tasks.max = 2
refresh.topics.interval.seconds = 1
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset.storage.replication.factor = 1
config.storage.replication.factor = 1
status.storage.replication.factor = 1
hub.scheduled.rebalance.max.delay.ms = 0
dedicated.mode.enable.internal.rest = true
listeners = http://%s
`, a.Addr, hub.Addr, listen))
	}
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	metricsAddrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	var outs [2]syncBuffer
	for i, addr := range addrs {
		go func() { done <- runMirror(runCtx, &outs[i], file(addr), []string{"hub"}, metricsAddrs[i]) }()
		if i == 0 {
			time.Sleep(time.Second) // let the first lead
		}
	}
	defer func() {
		stop()
		for range addrs {
			if err := <-done; err != nil {
				t.Errorf("mirror: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("first mirror:\n%s\nsecond mirror:\n%s", outs[0].String(), outs[1].String())
		}
	}()

	status := func(name string) (*herder.ConnectorStateInfo, error) {
		resp, err := http.Get("http://" + addrs[0] + "/a/hub/connectors/" + name + "/status")
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET status of %s: %s", name, resp.Status)
		}
		var st herder.ConnectorStateInfo
		return &st, json.NewDecoder(resp.Body).Decode(&st)
	}
	var workers []string
	testkit.CheckFor(t, 40*time.Second, 200*time.Millisecond, func() error {
		workers = nil
		for name, tasks := range map[string]int{"MirrorSourceConnector": 2, "MirrorHeartbeatConnector": 1, "MirrorCheckpointConnector": 0} {
			st, err := status(name)
			if err != nil {
				return err
			}
			if st.Connector.State != herder.StateRunning || len(st.Tasks) != tasks {
				return fmt.Errorf("%s: %+v", name, st)
			}
			workers = append(workers, st.Connector.WorkerID)
			for _, ts := range st.Tasks {
				if ts.State != herder.StateRunning {
					return fmt.Errorf("%s task %d: %+v", name, ts.ID, ts)
				}
				workers = append(workers, ts.WorkerID)
			}
		}
		slices.Sort(workers)
		workers = slices.Compact(workers)
		if len(workers) != 2 {
			return fmt.Errorf("the work runs on %v, want both mirrors", workers)
		}
		return nil
	})
	t.Logf("work split over %v", workers)

	// A new source partition makes MirrorSourceConnector, wherever it
	// runs, hand the leader new task configs; where it runs on the
	// second mirror that goes through the first one's REST path.
	if _, err := testkit.Admin(t, a.Addr).CreatePartitions(ctx, 1, "orders"); err != nil {
		t.Fatal(err)
	}
	cl := testkit.Client(t, a.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 30 {
		r := &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: fmt.Append(nil, i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A short metadata max age: the consumer must notice a.orders' new
	// partition.
	hubCl := testkit.Client(t, hub.Addr, kgo.ConsumeTopics("a.orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(500*time.Millisecond))
	perPartition := map[int32]int{}
	n := 0
	for n < 30 && ctx.Err() == nil {
		hubCl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { perPartition[r.Partition]++; n++ })
	}
	if n < 30 || perPartition[2] != 10 {
		t.Fatalf("%d of 30 records on the hub, by partition %v", n, perPartition)
	}

	// --http-addr: the source tasks' metrics, whichever mirror runs them,
	// count the 30 records replicated from a's orders.
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		var all strings.Builder
		for _, addr := range metricsAddrs {
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				return err
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			all.Write(b)
		}
		if !strings.Contains(all.String(), "fjord_mirror_source_record_count") || !strings.Contains(all.String(), `orders"`) {
			return fmt.Errorf("no mirror source record-count for orders on either /metrics")
		}
		return nil
	})
}
