package datagen_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
	_ "github.com/fjordhq/fjord/connectors/datagen"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
)

const jsonConverter = "org.apache.kafka.connect.json.JsonConverter"

// connectHarness is a standalone Connect process in miniature: the
// runtime Worker on a real broker, driven by the standalone herder.
type connectHarness struct {
	w *runtime.Worker
	h *herder.Standalone
}

func startConnect(t testing.TB, addr string, offsets storage.OffsetStore, extra ...string) *connectHarness {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers": addr, "key.converter": jsonConverter, "value.converter": jsonConverter,
		"offset.storage.file.filename": "/nonexistent", "offset.flush.interval.ms": "100",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	cfg, err := runtime.ParseWorkerConfig(props, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := runtime.NewWorker(cfg, runtime.WorkerOptions{WorkerID: "127.0.0.1:8083", Offsets: offsets})
	if err != nil {
		t.Fatal(err)
	}
	h := herder.NewStandalone(herder.StandaloneConfig{WorkerID: "127.0.0.1:8083"},
		herder.StandaloneDeps{Worker: w, Offsets: w, Validate: w.ValidateConnectorConfig, ConnectorType: w.ConnectorType})
	c := &connectHarness{w: w, h: h}
	t.Cleanup(c.stop)
	return c
}

// stop shuts the process down cleanly (tasks commit what they can).
func (c *connectHarness) stop() {
	c.h.Close(context.Background())
	c.w.Close(context.Background())
}

// create POSTs a connector, as the REST API would.
func (c *connectHarness) create(t testing.TB, config map[string]string) {
	t.Helper()
	if _, _, err := c.h.PutConnectorConfig(testkit.Context(t, 30*time.Second), config["name"], config, "", false); err != nil {
		t.Fatal(err)
	}
}

// failed reports a FAILED connector or task, with its trace.
func (c *connectHarness) failed() error {
	ctx := context.Background()
	names, _ := c.h.Connectors(ctx)
	for _, n := range names {
		st, err := c.h.ConnectorStatus(ctx, n)
		if err != nil {
			continue
		}
		if st.Connector.State == herder.StateFailed {
			return fmt.Errorf("connector %s failed: %s", n, st.Connector.Trace)
		}
		for _, ts := range st.Tasks {
			if ts.State == herder.StateFailed {
				return fmt.Errorf("task %s-%d failed: %s", n, ts.ID, ts.Trace)
			}
		}
	}
	return nil
}

// read returns n records of topic (all partitions), failing on more
// arriving within a short while.
func read(t *testing.T, w *connectHarness, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	ctx := testkit.Context(t, 60*time.Second)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for len(out) < n {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s, want %d", len(out), topic, n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	cl.PollFetches(short).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	if len(out) != n {
		t.Fatalf("%s has %d records, want %d", topic, len(out), n)
	}
	return out
}

func kv(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Key) + " => " + string(r.Value)
	}
	return out
}

// TestSeedGivesIdenticalRecords runs the same seeded datagen twice into
// two topics, and once with three tasks: the record bytes are identical,
// in order for one task, as a set for three.
func TestSeedGivesIdenticalRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "dg-a", "dg-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopics(ctx, 3, 1, nil, "dg-c"); err != nil {
		t.Fatal(err)
	}
	w := startConnect(t, b.Addr, storage.NewMemoryOffsetStore())
	const n = 3000
	config := func(name, topic, tasks string) map[string]string {
		return map[string]string{"name": name, "connector.class": "io.confluent.kafka.connect.datagen.DatagenConnector",
			"kafka.topic": topic, "quickstart": "orders", "seed": "20261129", "rate": "0", "count": strconv.Itoa(n), "tasks.max": tasks}
	}
	w.create(t, config("a", "dg-a", "1"))
	w.create(t, config("b", "dg-b", "1"))
	w.create(t, config("c", "dg-c", "3"))
	a, bb, c := kv(read(t, w, b.Addr, "dg-a", n)), kv(read(t, w, b.Addr, "dg-b", n)), kv(read(t, w, b.Addr, "dg-c", n))
	if !slices.Equal(a, bb) {
		for i := range a {
			if a[i] != bb[i] {
				t.Fatalf("record %d differs between two runs with one seed:\n%s\n%s", i, a[i], bb[i])
			}
		}
	}
	if !bytes.Contains([]byte(a[0]), []byte(`"name":"ksql.orders"`)) || !bytes.Contains([]byte(a[0]), []byte(`"orderid":0`)) {
		t.Fatalf("first record %s", a[0])
	}
	slices.Sort(a)
	slices.Sort(c)
	if !slices.Equal(a, c) {
		t.Fatal("three tasks generated other records than one task with the same seed")
	}
}

// TestRestartContinuesSequence stops a paced datagen midway and starts it
// again on the same offsets: every order id arrives exactly once.
func TestRestartContinuesSequence(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 60*time.Second)
	if _, err := testkit.Admin(t, b.Addr).CreateTopics(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	offsets := storage.NewMemoryOffsetStore()
	config := map[string]string{"name": "dg", "connector.class": "datagen", "kafka.topic": "orders", "quickstart": "orders",
		"rate": "2000", "count": "1500", "random.seed": "5"}
	w := startConnect(t, b.Addr, offsets)
	w.create(t, config)
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		o, _ := offsets.Get(ctx, "dg", []map[string]any{{"task.id": int64(0)}})
		if o[0] == nil || o[0]["current.iteration"].(int64) < 300 {
			return fmt.Errorf("committed %v", o[0])
		}
		return nil
	})
	w.stop()
	o, _ := offsets.Get(ctx, "dg", []map[string]any{{"task.id": int64(0)}})
	if o[0]["current.iteration"].(int64) >= 1500 {
		t.Fatalf("datagen finished before the restart: %v", o[0])
	}
	w = startConnect(t, b.Addr, offsets)
	w.create(t, config)
	recs := read(t, w, b.Addr, "orders", 1500)
	for i, r := range recs {
		if want := []byte(`"orderid":` + strconv.Itoa(i) + `,`); !bytes.Contains(r.Value, want) {
			t.Fatalf("record %d is %s, want orderid %d (a repeat or a gap)", i, r.Value, i)
		}
		if string(r.Key) != `{"schema":{"type":"int32","optional":false},"payload":`+strconv.Itoa(i)+`}` {
			t.Fatalf("record %d key %s", i, r.Key)
		}
	}
}

// TestValidateThroughRuntime checks the validate answer the REST API
// gives: single-key and cross-key errors together, internal keys hidden.
func TestValidateThroughRuntime(t *testing.T) {
	v, err := runtime.ValidateConnectorConfig(nil, map[string]string{
		"connector.class": "datagen", "name": "d", "kafka.topic": "t", "quickstart": "users"})
	if err != nil || v.ErrorCount != 0 {
		t.Fatalf("valid config: %d errors, %v", v.ErrorCount, err)
	}
	for _, c := range v.Configs {
		if c.Value.Name == "task.id" || c.Value.Name == "task.count" {
			t.Fatalf("internal key %s listed", c.Value.Name)
		}
	}
	v, err = runtime.ValidateConnectorConfig(nil, map[string]string{
		"connector.class": ConfluentClass, "name": "d", "rate": "-2", "schema.keyfield": "x"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range v.Configs {
		if len(c.Value.Errors) > 0 {
			got[c.Value.Name] = c.Value.Errors
		}
	}
	one := "Must set exactly one of quickstart, value.schema, schema.string, schema.filename"
	want := map[string][]string{
		"kafka.topic":  {`Missing required configuration "kafka.topic" which has no default value.`},
		"rate":         {"Invalid value -2 for configuration rate: Value must be at least 0"},
		"quickstart":   {one},
		"value.schema": {one},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || v.ErrorCount != 4 {
		t.Fatalf("errors (%d)\n got %v\nwant %v", v.ErrorCount, got, want)
	}
}

const ConfluentClass = "io.confluent.kafka.connect.datagen.DatagenConnector"

// BenchmarkDatagenToTopic measures datagen -> JsonConverter -> broker
// through the worker, one task, until every record is acknowledged (its
// offset committed).
func BenchmarkDatagenToTopic(b *testing.B) {
	for _, bc := range []struct{ name string }{{"json"}, {"json-noschema"}} {
		b.Run(bc.name, func(b *testing.B) {
			br := testkit.StartBroker(b, nil)
			ctx := testkit.Context(b, 10*time.Minute)
			if _, err := testkit.Admin(b, br.Addr).CreateTopics(ctx, 1, 1, nil, "bench"); err != nil {
				b.Fatal(err)
			}
			n := max(b.N, 1000)
			offsets := storage.NewMemoryOffsetStore()
			wk := startConnect(b, br.Addr, offsets, "value.converter.schemas.enable", strconv.FormatBool(bc.name == "json"))
			b.ResetTimer()
			start := time.Now()
			wk.create(b, map[string]string{"name": "dg", "connector.class": "datagen", "kafka.topic": "bench", "rate": "0",
				"count": strconv.Itoa(n), "seed": "1", "value.schema": "id:int64:seq,name:string:8..16,amount:float64:0..1000,ok:boolean"})
			for {
				o, _ := offsets.Get(ctx, "dg", []map[string]any{{"task.id": int64(0)}})
				if o[0] != nil && o[0]["current.iteration"].(int64) >= int64(n) {
					break
				}
				if ctx.Err() != nil || wk.failed() != nil {
					b.Fatalf("datagen did not finish: %v %v", ctx.Err(), wk.failed())
				}
				time.Sleep(5 * time.Millisecond) // a benchmark's end is found by polling the offsets
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "records/s")
		})
	}
}
