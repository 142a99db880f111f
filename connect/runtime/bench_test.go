package runtime

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/storage"
	jsonconv "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
)

// The benchmarks measure the worker's own cost: a null source (records
// built once, handed out again and again) and a null sink (records
// dropped), with Kafka's JsonConverter, beside plain franz-go against the
// same in-process broker in the same run:
//
//	raw-bytes   franz-go producing (consuming) bytes encoded beforehand;
//	raw-json    franz-go plus the JsonConverter on each record — what an
//	            application producing (consuming) the same JSON does;
//	connect     the worker: task loop, converters, offset tracking.
//
// overhead-% compares connect with raw-json (the target: at most 30%).

var benchSchema = connect.NewStruct().Name("bench.Order").
	Field("id", connect.Int64Schema).
	Field("customer", connect.StringSchema).
	Field("email", connect.OptionalStringSchema).
	Field("amount", connect.Float64Schema).
	Field("created", connect.Int64Schema).Build()

// benchRecords builds n records with distinct keys and source offsets.
func benchRecords(n int) []*connect.Record {
	part := map[string]any{"bench": "0"}
	out := make([]*connect.Record, n)
	for i := range out {
		v := connect.NewStructValue(benchSchema).
			MustPut("id", int64(i)).MustPut("customer", "customer-"+strconv.Itoa(i%1000)).
			MustPut("email", "someone"+strconv.Itoa(i%97)+"@example.com").MustPut("amount", float64(i)*1.25).
			MustPut("created", int64(1700000000000+i))
		out[i] = connect.NewSourceRecord(part, map[string]any{"pos": int64(i)}, "", connect.StringSchema, "key-"+strconv.Itoa(i), benchSchema, v)
	}
	return out
}

var benchState struct {
	records []*connect.Record
	topic   string
	total   atomic.Int64
	polled  atomic.Int64
	put     atomic.Int64
}

type nullSourceConnector struct{}

func (nullSourceConnector) Config() *connect.ConfigDef                     { return connect.NewConfigDef() }
func (nullSourceConnector) Start(context.Context, map[string]string) error { return nil }
func (nullSourceConnector) TaskConfigs(n int) ([]map[string]string, error) {
	return []map[string]string{{}}, nil
}
func (nullSourceConnector) Stop() error                 { return nil }
func (nullSourceConnector) NewTask() connect.SourceTask { return &nullSourceTask{} }

type nullSourceTask struct{ batch []*connect.Record }

func (t *nullSourceTask) Start(context.Context, map[string]string) error { return nil }
func (t *nullSourceTask) Poll(ctx context.Context) ([]*connect.Record, error) {
	recs := benchState.records
	for {
		n := benchState.total.Load() - benchState.polled.Load()
		if n > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(time.Millisecond):
		}
	}
	start := benchState.polled.Load()
	n := min(int64(500), benchState.total.Load()-start)
	benchState.polled.Add(n)
	t.batch = t.batch[:0]
	for i := range n {
		r := recs[(start+i)%int64(len(recs))]
		r.Topic = benchState.topic
		t.batch = append(t.batch, r)
	}
	return t.batch, nil
}
func (t *nullSourceTask) Commit(context.Context) error { return nil }
func (t *nullSourceTask) Stop() error                  { return nil }

type nullSinkConnector struct{ nullSourceConnector }

func (nullSinkConnector) NewTask() connect.SinkTask { return nullSinkTask{} }

type nullSinkTask struct{}

func (nullSinkTask) Start(context.Context, map[string]string) error { return nil }
func (nullSinkTask) Open([]connect.TopicPartition) error            { return nil }
func (nullSinkTask) Put(_ context.Context, rs []*connect.Record) error {
	benchState.put.Add(int64(len(rs)))
	return nil
}
func (nullSinkTask) PreCommit(_ context.Context, o map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	return o, nil
}
func (nullSinkTask) Close([]connect.TopicPartition) error { return nil }
func (nullSinkTask) Stop() error                          { return nil }

func init() {
	plugins.Register(plugins.Plugin{Class: "io.fjord.bench.NullSourceConnector", Kind: plugins.Source, New: func() any { return nullSourceConnector{} }})
	plugins.Register(plugins.Plugin{Class: "io.fjord.bench.NullSinkConnector", Kind: plugins.Sink, New: func() any { return nullSinkConnector{} }})
}

const benchPool = 10000

func jsonBytes(b *testing.B, recs []*connect.Record, schemas bool) (keys, values [][]byte) {
	c := jsonconv.New()
	if err := c.Configure(map[string]string{"schemas.enable": strconv.FormatBool(schemas)}, false); err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		v, err := c.FromConnectData("t", nil, r.ValueSchema, r.Value)
		if err != nil {
			b.Fatal(err)
		}
		keys, values = append(keys, []byte(r.Key.(string))), append(values, v)
	}
	return keys, values
}

func benchWorker(b *testing.B, addr string, schemas bool) *Worker {
	props := workerProps(addr, "value.converter", jsonconv.Class, "value.converter.schemas.enable", strconv.FormatBool(schemas),
		"offset.flush.interval.ms", "1000", "key.converter", "io.fjord.test.StringConverter")
	cfg, err := ParseWorkerConfig(props, Standalone)
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWorker(cfg, WorkerOptions{WorkerID: "bench", Offsets: storage.NewMemoryOffsetStore()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close(context.Background()) })
	return w
}

func BenchmarkSource(b *testing.B) {
	for _, schemas := range []bool{false, true} {
		b.Run(fmt.Sprintf("schemas=%v", schemas), func(b *testing.B) { benchSource(b, schemas) })
	}
}

func benchSource(b *testing.B, schemas bool) {
	br := testkit.StartBroker(b, nil)
	recs := benchRecords(benchPool)
	keys, values := jsonBytes(b, recs, schemas)
	benchState.records = recs
	adm := testkit.Admin(b, br.Addr)
	ctx := context.Background()
	for _, t := range []string{"raw", "connect"} {
		if _, err := adm.CreateTopic(ctx, 4, 1, nil, t); err != nil {
			b.Fatal(err)
		}
	}
	n := max(b.N, 20000)

	// Raw franz-go: produce the same bytes, acks=all, no compression,
	// linger 5 ms (Kafka's producer defaults, which the worker uses),
	// with a delivery callback (an application that cares whether its
	// records arrived; the worker needs it for offsets).
	var acked atomic.Int64
	promise := func(_ *kgo.Record, err error) {
		if err == nil {
			acked.Add(1)
		}
	}
	cl := testkit.Client(b, br.Addr, kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchCompression(kgo.NoCompression()))
	start := time.Now()
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "raw", Key: keys[i%benchPool], Value: values[i%benchPool]}, promise)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	rawBytes := time.Since(start)
	// Raw franz-go encoding each record with the converter.
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{"schemas.enable": strconv.FormatBool(schemas)}, false); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	for i := range n {
		r := recs[i%benchPool]
		v, err := conv.FromConnectData("raw", nil, r.ValueSchema, r.Value)
		if err != nil {
			b.Fatal(err)
		}
		cl.Produce(ctx, &kgo.Record{Topic: "raw", Key: []byte(r.Key.(string)), Value: v}, promise)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	raw := time.Since(start)

	// The worker: null source → transforms (none) → JsonConverter → producer.
	w := benchWorker(b, br.Addr, schemas)
	benchState.topic = "connect"
	benchState.polled.Store(0)
	benchState.total.Store(0)
	cfg := map[string]string{"name": "bench-src", "connector.class": "io.fjord.bench.NullSourceConnector"}
	ev := newEvents()
	if err := w.StartConnector(ctx, "bench-src", cfg, storage.TargetStarted, ev, nil); err != nil {
		b.Fatal(err)
	}
	if err := w.StartTask(ctx, storage.TaskID{Connector: "bench-src"}, cfg, map[string]string{}, storage.TargetStarted, ev); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start = time.Now()
	benchState.total.Store(int64(n))
	// The null source does not implement CommitRecord (most sources do
	// not): read the task's count of acknowledged records.
	w.mu.Lock()
	src := w.tasks[storage.TaskID{Connector: "bench-src"}].runner.(*sourceTask)
	w.mu.Unlock()
	for src.written.Load() < int64(n) {
		time.Sleep(time.Millisecond)
	}
	conn := time.Since(start)
	b.StopTimer()
	reportOverhead(b, n, rawBytes, raw, conn)
}

func reportOverhead(b *testing.B, n int, rawBytes, raw, conn time.Duration) {
	b.ReportMetric(float64(n)/rawBytes.Seconds(), "raw-bytes-rec/s")
	b.ReportMetric(float64(n)/raw.Seconds(), "raw-json-rec/s")
	b.ReportMetric(float64(n)/conn.Seconds(), "connect-rec/s")
	b.ReportMetric(100*(conn.Seconds()-raw.Seconds())/raw.Seconds(), "overhead-%")
}

func BenchmarkSink(b *testing.B) {
	for _, schemas := range []bool{false, true} {
		b.Run(fmt.Sprintf("schemas=%v", schemas), func(b *testing.B) { benchSink(b, schemas) })
	}
}

func benchSink(b *testing.B, schemas bool) {
	br := testkit.StartBroker(b, nil)
	recs := benchRecords(benchPool)
	keys, values := jsonBytes(b, recs, schemas)
	adm := testkit.Admin(b, br.Addr)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "in"); err != nil {
		b.Fatal(err)
	}
	n := max(b.N, 20000)
	cl := testkit.Client(b, br.Addr)
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "in", Key: keys[i%benchPool], Value: values[i%benchPool]}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}

	// Raw franz-go: a group consumer reading everything, then again
	// decoding each value with the converter.
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{"schemas.enable": strconv.FormatBool(schemas)}, false); err != nil {
		b.Fatal(err)
	}
	consume := func(group string, decode bool) time.Duration {
		start := time.Now()
		cons := testkit.Client(b, br.Addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics("in"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		got := 0
		for got < n {
			fs := cons.PollRecords(ctx, 500)
			got += fs.NumRecords()
			if decode {
				fs.EachRecord(func(r *kgo.Record) {
					if _, _, err := conv.ToConnectData(r.Topic, nil, r.Value); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
		d := time.Since(start)
		cons.Close()
		return d
	}
	rawBytes := consume("raw-bytes", false)
	raw := consume("raw-json", true)

	// The worker: consumer → JsonConverter → null sink.
	w := benchWorker(b, br.Addr, schemas)
	benchState.put.Store(0)
	cfg := map[string]string{"name": "bench-sink", "connector.class": "io.fjord.bench.NullSinkConnector", "topics": "in"}
	ev := newEvents()
	b.ResetTimer()
	start := time.Now()
	if err := w.StartConnector(ctx, "bench-sink", cfg, storage.TargetStarted, ev, nil); err != nil {
		b.Fatal(err)
	}
	if err := w.StartTask(ctx, storage.TaskID{Connector: "bench-sink"}, cfg, cfg, storage.TargetStarted, ev); err != nil {
		b.Fatal(err)
	}
	for benchState.put.Load() < int64(n) {
		time.Sleep(time.Millisecond)
	}
	conn := time.Since(start)
	b.StopTimer()
	reportOverhead(b, n, rawBytes, raw, conn)
}
