package file_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	_ "github.com/fjordhq/fjord/converters/str"
	"github.com/fjordhq/fjord/internal/testkit"
)

const (
	jsonConverter   = "org.apache.kafka.connect.json.JsonConverter"
	stringConverter = "org.apache.kafka.connect.storage.StringConverter"
)

// connectHarness is a standalone Connect process in miniature: the
// runtime Worker on a real broker, driven by the standalone herder, as
// fjord connect-standalone wires them.
type connectHarness struct {
	w *runtime.Worker
	h *herder.Standalone
}

func startConnect(t testing.TB, addr, converter string, offsets storage.OffsetStore, overrides ...string) *connectHarness {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers": addr, "key.converter": converter, "value.converter": converter,
		"offset.storage.file.filename": "/nonexistent", "offset.flush.interval.ms": "100",
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		props[overrides[i]] = overrides[i+1]
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

func createTopic(t *testing.T, addr string, partitions int32, topics ...string) {
	t.Helper()
	if _, err := testkit.Admin(t, addr).CreateTopics(testkit.Context(t, 30*time.Second), partitions, 1, nil, topics...); err != nil {
		t.Fatal(err)
	}
}

// readTopic reads n records of a one-partition topic.
func readTopic(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	ctx := testkit.Context(t, 60*time.Second)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s, want %d", len(out), topic, n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// awaitLines waits until the file has n lines and returns its content.
func awaitLines(t *testing.T, w *connectHarness, name string, n int) []byte {
	t.Helper()
	var b []byte
	testkit.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		b, _ = os.ReadFile(name)
		if got := bytes.Count(b, []byte("\n")); got < n {
			return fmt.Errorf("%s has %d lines, want %d", name, got, n)
		}
		return nil
	})
	return b
}

// TestMatchesKafkaConnect runs FileStreamSource -> topic -> FileStreamSink
// in a standalone Connect
// on the input Kafka Connect 4.4 ran on (testdata/kafka-connect, see
// capture.sh) and compares the topic's records and the sink's file.
func TestMatchesKafkaConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	for _, conv := range []struct{ name, class string }{{"string", stringConverter}, {"json", jsonConverter}} {
		t.Run(conv.name, func(t *testing.T) {
			dir := t.TempDir()
			input, err := os.ReadFile("testdata/kafka-connect/input.txt")
			if err != nil {
				t.Fatal(err)
			}
			in, out := filepath.Join(dir, "input.txt"), filepath.Join(dir, "out.txt")
			os.WriteFile(in, input, 0o644)
			topic := "lines-" + conv.name
			createTopic(t, b.Addr, 1, topic)
			w := startConnect(t, b.Addr, conv.class, storage.NewMemoryOffsetStore())
			w.create(t, map[string]string{"name": "source", "connector.class": "FileStreamSource", "tasks.max": "1", "file": in, "topic": topic})
			w.create(t, map[string]string{"name": "sink", "connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": topic})

			want, err := os.ReadFile("testdata/kafka-connect/out-" + conv.name + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			got := awaitLines(t, w, out, bytes.Count(want, []byte("\n")))
			if !bytes.Equal(got, want) {
				t.Errorf("sink file differs from Kafka Connect's:\n got %q\nwant %q", trim(got), trim(want))
			}

			wantRecs := goldenRecords(t, "testdata/kafka-connect/topic-"+conv.name+".jsonl")
			recs := readTopic(t, b.Addr, topic, len(wantRecs))
			for i, r := range recs {
				if r.Key != nil || len(r.Headers) != 0 {
					t.Errorf("record %d: key %q headers %v, want none", i, r.Key, r.Headers)
				}
				if i < len(wantRecs) && !bytes.Equal(r.Value, wantRecs[i]) {
					t.Errorf("record %d value\n got %q\nwant %q", i, trim(r.Value), trim(wantRecs[i]))
				}
			}
			if len(recs) != len(wantRecs) {
				t.Errorf("%d records, Kafka Connect wrote %d", len(recs), len(wantRecs))
			}
		})
	}
}

func trim(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func goldenRecords(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Value string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		v, err := base64.StdEncoding.DecodeString(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestSinkFormatsLikeKafkaConnect feeds the JSON cases Kafka Connect's
// FileStreamSink printed (testdata/kafka-connect/sink-*.txt) through
// Fjord's JsonConverter and FileStreamSink.
func TestSinkFormatsLikeKafkaConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	cases, err := os.ReadFile("testdata/javagen/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]string{}
	for _, line := range strings.Split(string(cases), "\n") {
		mode, payload, ok := strings.Cut(line, "\t")
		if ok && (mode == "schemaless" || mode == "schema") {
			inputs[mode] = append(inputs[mode], payload)
		}
	}
	// Inputs whose Kafka output Fjord does not reproduce, on purpose (see
	// JavaString and TestJavaStringGolden): same-bucket map keys and Java
	// 17's non-shortest doubles.
	known := map[string]bool{}
	for _, k := range []string{`"email":"ann@example.com"`, `[[4294967296,true],[1,false],[-1,true]]`, `1.0E23`, `8.41E21`} {
		known[k] = true
	}
	// Kafka's capture ran with the JVM in UTC; TestMain pins Go's zone.
	w := startConnect(t, b.Addr, jsonConverter, storage.NewMemoryOffsetStore())
	cl := testkit.Client(t, b.Addr)
	ctx := testkit.Context(t, 60*time.Second)
	dir := t.TempDir()
	for _, mode := range []string{"schemaless", "schema"} {
		topic := "values-" + mode
		createTopic(t, b.Addr, 1, topic)
		for _, in := range inputs[mode] {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(in)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, mode+".txt")
		w.create(t, map[string]string{"name": "sink-" + mode, "connector.class": "FileStreamSink", "file": out, "topics": topic,
			"value.converter": jsonConverter, "value.converter.schemas.enable": strconv.FormatBool(mode == "schema")})
		got := strings.Split(strings.TrimSuffix(string(awaitLines(t, w, out, len(inputs[mode]))), "\n"), "\n")
		wantB, err := os.ReadFile("testdata/kafka-connect/sink-" + mode + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(strings.TrimSuffix(string(wantB), "\n"), "\n")
		if len(got) != len(want) || len(want) != len(inputs[mode]) {
			t.Fatalf("%s: %d lines, Kafka printed %d for %d inputs", mode, len(got), len(want), len(inputs[mode]))
		}
	next:
		for i := range want {
			for k := range known {
				if strings.Contains(inputs[mode][i], k) {
					continue next
				}
			}
			if got[i] != want[i] {
				t.Errorf("%s %s:\n got %s\nwant %s", mode, inputs[mode][i], got[i], want[i])
			}
		}
	}
}

// TestRestartResumesFromOffset stops the standalone process, appends to
// the file and starts a new one on the same offsets file: the topic gets every line
// exactly once.
func TestRestartResumesFromOffset(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "input.txt"), filepath.Join(dir, "out.txt")
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	os.WriteFile(in, []byte(sb.String()), 0o644)
	createTopic(t, b.Addr, 1, "resume")
	source := map[string]string{"name": "source", "connector.class": "FileStreamSource", "file": in, "topic": "resume", "batch.size": "100"}
	sink := map[string]string{"name": "sink", "connector.class": "FileStreamSink", "file": out, "topics": "resume"}

	offsetsFile := filepath.Join(dir, "connect.offsets")
	store, err := storage.OpenFileOffsetStore(offsetsFile)
	if err != nil {
		t.Fatal(err)
	}
	w := startConnect(t, b.Addr, stringConverter, store)
	w.create(t, source)
	w.create(t, sink)
	awaitLines(t, w, out, 1000)
	w.stop()
	store.Close()

	f, _ := os.OpenFile(in, os.O_WRONLY|os.O_APPEND, 0)
	for i := 1000; i < 1500; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
	f.Close()

	store, err = storage.OpenFileOffsetStore(offsetsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	all, err := store.All(context.Background(), "source")
	if err != nil || len(all) != 1 || fmt.Sprint(all[0].Offset["position"]) != strconv.Itoa(sb.Len()) {
		t.Fatalf("offsets after a clean stop: %+v, %v; want position %d", all, err, sb.Len())
	}
	w = startConnect(t, b.Addr, stringConverter, store)
	w.create(t, source)
	w.create(t, sink)
	got := awaitLines(t, w, out, 1500)

	recs := readTopic(t, b.Addr, "resume", 1500)
	for i, r := range recs {
		if want := fmt.Sprintf("line %d", i); string(r.Value) != want {
			t.Fatalf("topic record %d is %q, want %q (a repeat or a gap)", i, r.Value, want)
		}
	}
	// Nothing more arrives: the restarted source did not read the file again.
	time.Sleep(300 * time.Millisecond) // the absence of records cannot be polled for
	if more := readTopic(t, b.Addr, "resume", 1500); len(more) != 1500 {
		t.Fatalf("topic has %d records, want 1500", len(more))
	}
	if lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"); len(lines) != 1500 || lines[1499] != "line 1499" {
		t.Fatalf("sink file has %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// TestValidateThroughRuntime checks the validate answers for the file
// connectors against what Kafka Connect 4.4 answered for the same
// requests (api/connect's captures: "validate valid config",
// "validate by class name with errors").
func TestValidateThroughRuntime(t *testing.T) {
	for _, c := range []struct {
		props  map[string]string
		errors int
		values map[string]string // key -> JSON of its value entry
	}{
		{map[string]string{"connector.class": "FileStreamSource", "name": "v", "file": "/d/in.txt", "topic": "capture-t1", "tasks.max": "1"}, 0,
			map[string]string{
				"file":       `{"Name":"file","Value":"/d/in.txt","Recommended":[],"Errors":[],"Visible":true}`,
				"topic":      `{"Name":"topic","Value":"capture-t1","Recommended":[],"Errors":[],"Visible":true}`,
				"batch.size": `{"Name":"batch.size","Value":"2000","Recommended":[],"Errors":[],"Visible":true}`,
			}},
		{map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "name": "v", "tasks.max": "x"}, 4,
			map[string]string{
				"topics": `{"Name":"topics","Value":"","Recommended":[],"Errors":["Must configure one of topics or topics.regex"],"Visible":true}`,
				"file":   `{"Name":"file","Value":null,"Recommended":[],"Errors":[],"Visible":true}`,
			}},
		// Fjord's one extra check.
		{map[string]string{"connector.class": "FileStreamSource", "name": "v", "topic": "a,b"}, 1,
			map[string]string{
				"topic": `{"Name":"topic","Value":"a,b","Recommended":[],"Errors":["'topic' in FileStreamSourceConnector configuration requires definition of a single topic"],"Visible":true}`,
			}},
	} {
		v, err := runtime.ValidateConnectorConfig(nil, c.props)
		if err != nil {
			t.Fatal(err)
		}
		if v.ErrorCount != c.errors {
			t.Errorf("%v: %d errors, Kafka %d", c.props, v.ErrorCount, c.errors)
		}
		seen := 0
		for _, vc := range v.Configs {
			want, ok := c.values[vc.Value.Name]
			if !ok {
				continue
			}
			seen++
			if got, _ := json.Marshal(vc.Value); string(got) != want {
				t.Errorf("%v: %s\n got %s\nwant %s", c.props, vc.Value.Name, got, want)
			}
		}
		if seen != len(c.values) {
			t.Errorf("%v: %d of %d keys answered", c.props, seen, len(c.values))
		}
	}
}

// dyingStore stops persisting offsets once the "process" died: at the
// first commit at or past dieAt, which it still stores, so the crash
// lands mid-file however fast the source reads.
type dyingStore struct {
	storage.OffsetStore
	dieAt int64
	mu    sync.Mutex
	dead  bool
}

func (d *dyingStore) Put(ctx context.Context, c string, o []connect.SourcePartitionOffset) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errors.New("process died")
	}
	if err := d.OffsetStore.Put(ctx, c, o); err != nil {
		return err
	}
	for _, po := range o {
		if pos, ok := po.Offset["position"].(int64); ok && pos >= d.dieAt {
			d.dead = true
		}
	}
	return nil
}

// TestCrashResendsOnlyAfterCommittedPosition: offsets stop being stored
// mid-file (a crash), a new process resumes at the last committed
// position. The topic holds the first run's lines, then the second run's
// from the committed line on: nothing lost, repeats only after the commit.
func TestCrashResendsOnlyAfterCommittedPosition(t *testing.T) {
	// Lines of ~300 bytes: 6 MB take the source long enough that offsets
	// are committed many times before it reaches the end.
	lineFormat := "line %d é " + strings.Repeat("x", 290)
	if testing.Short() {
		t.Skip("end to end with a broker")
	}
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	const n = 20000
	var sb strings.Builder
	var ends []int64 // byte position after each line
	for i := range n {
		fmt.Fprintf(&sb, lineFormat+"\n", i)
		ends = append(ends, int64(sb.Len()))
	}
	os.WriteFile(in, []byte(sb.String()), 0o644)
	createTopic(t, b.Addr, 1, "crash")
	source := map[string]string{"name": "source", "connector.class": "FileStreamSource", "file": in, "topic": "crash", "batch.size": "10"}

	store := storage.NewMemoryOffsetStore()
	dying := &dyingStore{OffsetStore: store, dieAt: ends[100]}
	// Offsets flushed every millisecond, so a commit lands mid-file
	// however fast the source reads the whole of it.
	w := startConnect(t, b.Addr, stringConverter, dying, "offset.flush.interval.ms", "1")
	w.create(t, source)
	ctx := testkit.Context(t, 60*time.Second)
	part := []map[string]any{{"filename": in}}
	testkit.CheckFor(t, 30*time.Second, 2*time.Millisecond, func() error {
		o, _ := store.Get(ctx, "source", part)
		if o[0] == nil || o[0]["position"].(int64) < ends[100] {
			return fmt.Errorf("committed %v", o[0])
		}
		return nil
	})
	w.stop()
	o, _ := store.Get(ctx, "source", part)
	committed := o[0]["position"].(int64)
	next := slices.Index(ends, committed) + 1 // the first line not committed
	if next == 0 || next >= n {
		t.Fatalf("committed position %d is not a line end before the last", committed)
	}

	w = startConnect(t, b.Addr, stringConverter, store)
	w.create(t, source)
	var recs []*kgo.Record
	cl := testkit.Client(t, b.Addr, kgo.ConsumeTopics("crash"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for len(recs) == 0 || string(recs[len(recs)-1].Value) != fmt.Sprintf(lineFormat, n-1) {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records", len(recs))
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	// recs = lines 0..m of the first run, then lines next..n-1.
	m := len(recs) - (n - next) - 1
	if m < next-1 {
		t.Fatalf("%d records: the first run sent fewer lines (%d) than were committed (%d)", len(recs), m+1, next)
	}
	for i, r := range recs {
		want := i
		if i > m {
			want = next + i - m - 1
		}
		if string(r.Value) != fmt.Sprintf(lineFormat, want) {
			t.Fatalf("record %d is %q, want line %d (first run sent lines 0..%d, committed up to line %d)", i, r.Value, want, m, next-1)
		}
	}
	t.Logf("first run sent %d lines, %d committed; %d sent again", m+1, next, m+1-next)
}
