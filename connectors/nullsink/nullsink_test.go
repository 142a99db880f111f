package nullsink

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/str"
	"github.com/fjordhq/fjord/internal/testkit"
)

// commitCounter is the part of SinkTaskContext Put uses; the rest panics
// through the nil embedded interface if Put ever reaches for it.
type commitCounter struct {
	connect.SinkTaskContext
	requests int
}

func (c *commitCounter) RequestCommit() { c.requests++ }

func batch(n int) []*connect.SinkRecord { return make([]*connect.SinkRecord, n) }

func TestPutCountsAndRequestsCommits(t *testing.T) {
	name := t.Name() + strconv.FormatInt(time.Now().UnixNano(), 36) // unique under -count
	for _, tc := range []struct {
		every    string
		batches  []int
		requests int
	}{
		{"0", []int{500, 500}, 0},
		{"10", []int{7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, 7}, // crosses 10, 20, ..., 70
		{"10", []int{25}, 1},                           // one batch crossing twice: one commit covers it
		{"100", []int{99, 1, 0, 100, 50}, 2},
	} {
		var ctx commitCounter
		task := &Task{}
		task.Initialize(&ctx)
		if err := task.Start(context.Background(), map[string]string{"name": name, CommitEveryConfig: tc.every}); err != nil {
			t.Fatal(err)
		}
		before := Received(name)
		var sum int64
		for _, n := range tc.batches {
			if err := task.Put(context.Background(), batch(n)); err != nil {
				t.Fatal(err)
			}
			sum += int64(n)
		}
		if ctx.requests != tc.requests {
			t.Errorf("every=%s batches %v: %d commit requests, want %d", tc.every, tc.batches, ctx.requests, tc.requests)
		}
		if got := Received(name) - before; got != sum {
			t.Errorf("every=%s: Received grew by %d, want %d", tc.every, got, sum)
		}
		if err := task.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if Received("never-ran") != 0 {
		t.Error("Received of an unknown connector is not 0")
	}
}

func TestPreCommitReturnsOffsets(t *testing.T) {
	in := map[connect.TopicPartition]int64{{Topic: "a", Partition: 0}: 5, {Topic: "a", Partition: 3}: 9}
	out, err := (&Task{}).PreCommit(context.Background(), in)
	if err != nil || len(out) != 2 || out[connect.TopicPartition{Topic: "a", Partition: 3}] != 9 {
		t.Fatalf("PreCommit = %v, %v", out, err)
	}
}

func TestConfigAndRegistration(t *testing.T) {
	for _, name := range []string{ConnectorClass, Alias, "NullSinkConnector"} {
		p, err := plugins.LookupKind(name, plugins.Sink)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := p.New().(connect.SinkConnector); !ok {
			t.Fatalf("%s does not make a sink connector", name)
		}
	}
	c := &Connector{}
	if err := c.Start(context.Background(), map[string]string{CommitEveryConfig: "-1"}); err == nil {
		t.Error("commit.every.records=-1 accepted")
	}
	if err := c.Start(context.Background(), map[string]string{"name": "n", CommitEveryConfig: "7"}); err != nil {
		t.Fatal(err)
	}
	tcs, err := c.TaskConfigs(3)
	if err != nil || len(tcs) != 3 || tcs[2]["name"] != "n" || tcs[2][CommitEveryConfig] != "7" {
		t.Fatalf("TaskConfigs = %v, %v", tcs, err)
	}
}

// TestEndToEndCommitsWhenAsked runs the null sink in a real worker on a
// real broker with offset.flush.interval.ms at an hour: the consumer
// group reaches the end of the topic only because the task asked for
// commits (the last when its count reached n, a multiple of
// commit.every.records), and every record was counted once.
func TestEndToEndCommitsWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 60*time.Second)
	adm := testkit.Admin(t, b.Addr)
	const topic, n = "in", 5000
	if _, err := adm.CreateTopics(ctx, 4, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	const sc = "org.apache.kafka.connect.storage.StringConverter"
	cfg, err := runtime.ParseWorkerConfig(map[string]string{
		"bootstrap.servers": b.Addr, "key.converter": sc, "value.converter": sc,
		"offset.storage.file.filename": "/nonexistent", "offset.flush.interval.ms": "3600000",
	}, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := runtime.NewWorker(cfg, runtime.WorkerOptions{WorkerID: "127.0.0.1:8083", Offsets: storage.NewMemoryOffsetStore()})
	if err != nil {
		t.Fatal(err)
	}
	h := herder.NewStandalone(herder.StandaloneConfig{WorkerID: "127.0.0.1:8083"},
		herder.StandaloneDeps{Worker: w, Offsets: w, Validate: w.ValidateConnectorConfig, ConnectorType: w.ConnectorType})
	t.Cleanup(func() {
		h.Close(context.Background())
		w.Close(context.Background())
	})
	name := "null-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, _, err := h.PutConnectorConfig(ctx, name, map[string]string{
		"name": name, "connector.class": Alias, "topics": topic, "tasks.max": "1", CommitEveryConfig: "1000",
	}, "", false); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		st, err := h.ConnectorStatus(ctx, name)
		if err != nil {
			return err
		}
		for _, ts := range st.Tasks {
			if ts.State == herder.StateFailed {
				t.Fatalf("task %d failed: %s", ts.ID, ts.Trace)
			}
		}
		offs, err := adm.FetchOffsets(ctx, runtime.SinkGroupID(name))
		if err != nil {
			return err
		}
		var committed int64
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Topic == topic && o.At > 0 {
				committed += o.At
			}
		})
		if got := Received(name); got < n || committed != n {
			return fmt.Errorf("received %d, group committed %d of %d", got, committed, n)
		}
		return nil
	})
	if got := Received(name); got != n {
		t.Fatalf("received %d records, want %d (no rewinds happened)", got, n)
	}
}
