package runtime

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	jsonconv "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
)

// produceValues writes values to a one-partition topic, in one batch so
// that the sink's first poll likely gets them all.
func produceValues(t *testing.T, addr, topic string, values ...string) {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := testkit.Admin(t, addr).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl := testkit.Client(t, addr)
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	produce(t, cl, rs...)
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

func awaitValues(t *testing.T, c *runtimetest.Collected, n int) []string {
	t.Helper()
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if got := len(c.Values()); got < n {
			return fmt.Errorf("%d of %d values: %v", got, n, c.Values())
		}
		return nil
	})
	return c.Values()
}

// TestSinkPutBatches: a poll's records reach Put in order, in batches of
// at most max.poll.records.
func TestSinkPutBatches(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	want := seq("r", 50)
	produceValues(t, b.Addr, "batches", want...)
	w := newTestWorker(t, workerProps(b.Addr, "consumer.max.poll.records", "7"), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("batches", id, "batches"))
	c := runtimetest.Collector(id)
	if got := awaitValues(t, c, len(want)); !slices.Equal(got, want) {
		t.Errorf("values %v", got)
	}
	for _, n := range c.PutSizes() {
		if n > 7 {
			t.Errorf("a Put of %d records (max.poll.records=7): %v", n, c.PutSizes())
			break
		}
	}
}

// TestSinkResetOffsetsMidPoll: a reset in the first batch of a poll
// drops the partition's records of the later batches; delivery resumes
// at the reset offset.
func TestSinkResetOffsetsMidPoll(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	produceValues(t, b.Addr, "midreset", seq("r", 6)...)
	w := newTestWorker(t, workerProps(b.Addr, "consumer.max.poll.records", "2"), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("midreset", id, "midreset", "rewind.on", "r1"))
	c := runtimetest.Collector(id)
	want := []string{"r0", "r1", "r0", "r1", "r2", "r3", "r4", "r5"}
	got := awaitValues(t, c, len(want))
	time.Sleep(200 * time.Millisecond) // nothing more arrives
	if got = c.Values(); !slices.Equal(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
}

// TestSinkPauseMidPoll: a partition the task pauses during a poll's first
// batch gets no more records until resumed, and then every one once.
func TestSinkPauseMidPoll(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	want := seq("r", 20)
	produceValues(t, b.Addr, "midpause", want...)
	w := newTestWorker(t, workerProps(b.Addr, "consumer.max.poll.records", "3"), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("midpause", id, "midpause", "pause.on", "r1"))
	c := runtimetest.Collector(id)
	got := awaitValues(t, c, len(want))
	time.Sleep(200 * time.Millisecond)
	if got = c.Values(); !slices.Equal(got, want) {
		t.Errorf("values %v", got)
	}
	if p := c.PutWhilePaused(); len(p) > 0 {
		t.Errorf("put while paused: %v", p)
	}
}

// TestSinkParallelConversion: with concurrent converters (JsonConverter)
// a batch is converted on several goroutines; records that fail to
// convert and records with headers still go through the serial path, and
// Put sees everything in order.
func TestSinkParallelConversion(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(ctx, 1, 1, nil, "parallel"); err != nil {
		t.Fatal(err)
	}
	var rs []*kgo.Record
	var want, hdrs []string
	for i := range 400 {
		r := &kgo.Record{Topic: "parallel", Value: fmt.Appendf(nil, `{"n":%d}`, i)}
		switch {
		case i%37 == 5:
			r.Value = []byte(`{"n":` + fmt.Sprint(i)) // not JSON: skipped (errors.tolerance=all)
		case i%11 == 3:
			r.Headers = []kgo.RecordHeader{{Key: "h", Value: fmt.Append(nil, "h", i)}}
			hdrs = append(hdrs, fmt.Sprint("h", i))
			want = append(want, fmt.Sprintf("map[n:%d]", i))
		default:
			want = append(want, fmt.Sprintf("map[n:%d]", i))
		}
		rs = append(rs, r)
	}
	produce(t, testkit.Client(t, b.Addr), rs...)
	w := newTestWorker(t, workerProps(b.Addr), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("parallel", id, "parallel",
		"value.converter", jsonconv.Class, "value.converter.schemas.enable", "false",
		"key.converter", jsonconv.Class, "key.converter.schemas.enable", "false",
		"errors.tolerance", "all"))
	c := runtimetest.Collector(id)
	if got := awaitValues(t, c, len(want)); !slices.Equal(got, want) {
		t.Errorf("values %v", got)
	}
	if got := c.Header("h"); !slices.Equal(got, hdrs) {
		t.Errorf("headers %v, want %v", got, hdrs)
	}
}

// TestSourceParallelConversion: with concurrent converters and no
// transformations a poll is converted on several goroutines; records
// with headers go through the serial path, and the topic gets every
// record in the task's order with the converter's bytes.
func TestSourceParallelConversion(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(ctx, 1, 1, nil, "parsrc"); err != nil {
		t.Fatal(err)
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	id := runtimetest.TestID(t)
	const n = 450
	run(t, w, newEvents(), runtimetest.SourceConfig("parsrc", id, "parsrc", n, "batch.size", "150", "header.every", "7",
		"key.converter", jsonconv.Class, "value.converter", jsonconv.Class))
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, b.Addr, "parsrc", n)
	for i, r := range got[:n] {
		wantKey, _ := conv.FromConnectData("parsrc", nil, connect.StringSchema, fmt.Sprint("k-", i))
		wantValue, _ := conv.FromConnectData("parsrc", nil, connect.StringSchema, fmt.Sprint("v-", i))
		if string(r.Key) != string(wantKey) || string(r.Value) != string(wantValue) {
			t.Fatalf("record %d: key %s value %s, want %s %s", i, r.Key, r.Value, wantKey, wantValue)
		}
		if hasHeader := len(r.Headers) > 0; hasHeader != (i%7 == 0) {
			t.Errorf("record %d headers %v", i, r.Headers)
		}
	}
}

// TestSinkSlowPutGivesBackPoll: a task slower than maxPollHold per poll
// gets the rest of the poll later, every record once and in order.
func TestSinkSlowPutGivesBackPoll(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	want := seq("r", 16)
	produceValues(t, b.Addr, "slowput", want...)
	w := newTestWorker(t, workerProps(b.Addr, "consumer.max.poll.records", "2"), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("slowput", id, "slowput", "put.delay.ms", "150"))
	c := runtimetest.Collector(id)
	got := awaitValues(t, c, len(want))
	time.Sleep(300 * time.Millisecond)
	if got = c.Values(); !slices.Equal(got, want) {
		t.Errorf("values %v", got)
	}
}
