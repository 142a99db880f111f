package file

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// memOffsets is an in-memory OffsetReader keyed by the partition's JSON.
type memOffsets map[string]map[string]any

func (m memOffsets) key(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func (m memOffsets) Offset(p map[string]any) (map[string]any, error) { return m[m.key(p)], nil }

func (m memOffsets) Offsets(ps []map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, p := range ps {
		if o := m[m.key(p)]; o != nil {
			out[m.key(p)] = o
		}
	}
	return out, nil
}

type taskContext struct {
	offsets memOffsets
	config  map[string]string
}

func (c *taskContext) Offsets() connect.OffsetReader { return c.offsets }
func (c *taskContext) Config() map[string]string     { return c.config }

func startSource(t *testing.T, props map[string]string, offsets memOffsets) *SourceTask {
	t.Helper()
	task := &SourceTask{}
	task.Initialize(&taskContext{offsets: offsets, config: props})
	if err := task.Start(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

// pollUntil polls until n records arrived in total (or a deadline).
func pollUntil(t *testing.T, task *SourceTask, n int) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records, want %d", len(out), n)
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	if len(out) != n {
		t.Fatalf("got %d records, want %d", len(out), n)
	}
	return out
}

// pollNone checks that a poll returns nothing.
func pollNone(t *testing.T, task *SourceTask) {
	t.Helper()
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) != 0 {
		t.Fatalf("poll returned %d records, err %v; want none", len(recs), err)
	}
}

func appendFile(t *testing.T, name, data string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func values(recs []*connect.SourceRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Value.(string))
	}
	return out
}

func positions(recs []*connect.SourceRecord) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.SourceOffset[PositionField].(int64))
	}
	return out
}

func TestSourceLinesAndOffsets(t *testing.T) {
	name := filepath.Join(t.TempDir(), "in.txt")
	appendFile(t, name, "one\ntwo\r\nthree\rfour\r")
	task := startSource(t, map[string]string{"file": name, "topic": "t"}, memOffsets{})
	recs := pollUntil(t, task, 3)
	if got := strings.Join(values(recs), "|"); got != "one|two|three" {
		t.Fatalf("lines %q", got)
	}
	if got := positions(recs); got[0] != 4 || got[1] != 9 || got[2] != 15 {
		t.Fatalf("positions %v", got)
	}
	for _, r := range recs {
		if r.Topic != "t" || r.Partition != -1 || r.Key != nil || r.KeySchema != nil || r.ValueSchema != connect.StringSchema ||
			r.SourcePartition[FilenameField] != name || r.Timestamp <= 0 {
			t.Fatalf("record %+v", r)
		}
	}
	// "four\r" waits: the next byte tells \r from \r\n.
	pollNone(t, task)
	appendFile(t, name, "\nfive €\nsix")
	recs = pollUntil(t, task, 2)
	if got := strings.Join(values(recs), "|"); got != "four|five €" {
		t.Fatalf("lines %q", got)
	}
	if got := positions(recs); got[0] != 21 || got[1] != 30 {
		t.Fatalf("positions %v (byte positions)", got)
	}
	pollNone(t, task) // "six" has no terminator yet
	appendFile(t, name, "\n")
	if got := values(pollUntil(t, task, 1)); got[0] != "six" {
		t.Fatalf("got %q", got)
	}
}

func TestSourceResumesFromCommittedPosition(t *testing.T) {
	name := filepath.Join(t.TempDir(), "in.txt")
	appendFile(t, name, "a\nbb\nccc\n")
	offsets := memOffsets{}
	task := startSource(t, map[string]string{"file": name, "topic": "t"}, offsets)
	recs := pollUntil(t, task, 3)
	// Commit only the second record: a restart must continue with "ccc".
	offsets[offsets.key(recs[1].SourcePartition)] = recs[1].SourceOffset
	task.Stop()

	appendFile(t, name, "dddd\n")
	task = startSource(t, map[string]string{"file": name, "topic": "t"}, offsets)
	recs = pollUntil(t, task, 2)
	if got := strings.Join(values(recs), "|"); got != "ccc|dddd" {
		t.Fatalf("resumed lines %q", got)
	}
	if got := positions(recs); got[0] != 9 || got[1] != 14 {
		t.Fatalf("positions %v", got)
	}

	// A position stored by another runtime as a float or json.Number works too.
	for _, pos := range []any{float64(5), json.Number("5"), int32(5)} {
		offsets[offsets.key(recs[0].SourcePartition)] = map[string]any{PositionField: pos}
		task := startSource(t, map[string]string{"file": name, "topic": "t"}, offsets)
		if got := values(pollUntil(t, task, 2)); got[0] != "ccc" {
			t.Fatalf("position %T: got %q", pos, got)
		}
	}

	offsets[offsets.key(recs[0].SourcePartition)] = map[string]any{PositionField: "5"}
	task = startSource(t, map[string]string{"file": name, "topic": "t"}, offsets)
	if _, err := task.Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "Offset position is the incorrect type") {
		t.Fatalf("string position: %v", err)
	}
}

func TestSourceBatchSize(t *testing.T) {
	name := filepath.Join(t.TempDir(), "in.txt")
	var sb strings.Builder
	for i := range 25 {
		sb.WriteString(strings.Repeat("x", i) + "\n")
	}
	appendFile(t, name, sb.String())
	for _, c := range []struct {
		batch string
		sizes []int
	}{{"10", []int{10, 10, 5}}, {"0", []int{1, 1, 1}}, {"-3", []int{1}}} {
		task := startSource(t, map[string]string{"file": name, "topic": "t", "batch.size": c.batch}, memOffsets{})
		for _, want := range c.sizes {
			recs, err := task.Poll(context.Background())
			if err != nil || len(recs) != want {
				t.Fatalf("batch.size=%s: poll gave %d records (%v), want %d", c.batch, len(recs), err, want)
			}
		}
	}
}

func TestSourceLongLinesAndBadUTF8(t *testing.T) {
	name := filepath.Join(t.TempDir(), "in.txt")
	long := strings.Repeat("0123456789", 30000) // 300 KB, beyond the 64 KiB buffer
	appendFile(t, name, long+"\nbad\xff\xc3(\xed\xa0\x80end\n")
	task := startSource(t, map[string]string{"file": name, "topic": "t"}, memOffsets{})
	recs := pollUntil(t, task, 2)
	if recs[0].Value != long {
		t.Fatalf("long line of %d bytes came back as %d", len(long), len(recs[0].Value.(string)))
	}
	if recs[1].Value != "bad\uFFFD\uFFFD(\uFFFDend" {
		t.Fatalf("bad UTF-8 read as %q", recs[1].Value)
	}
	if got := positions(recs); got[1] != int64(len(long))+1+13 {
		t.Fatalf("positions %v", got)
	}
}

func TestSourceWaitsForMissingFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "later.txt")
	task := startSource(t, map[string]string{"file": name, "topic": "t"}, memOffsets{})
	pollNone(t, task)
	appendFile(t, name, "hello\n")
	if got := values(pollUntil(t, task, 1)); got[0] != "hello" {
		t.Fatalf("got %q", got)
	}
}

func TestSourceStopWakesPoll(t *testing.T) {
	name := filepath.Join(t.TempDir(), "later.txt")
	task := startSource(t, map[string]string{"file": name, "topic": "t"}, memOffsets{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if _, err := task.Poll(context.Background()); err != nil {
				t.Error(err)
				return
			}
			if task.isStopped() {
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond) // let Poll reach its wait; the test is that Stop ends it early
	start := time.Now()
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Poll did not return after Stop")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Poll took %v to notice Stop", d)
	}
}

func TestSourceStdin(t *testing.T) {
	r, w := io.Pipe()
	task := &SourceTask{stdinReader: r}
	task.Initialize(&taskContext{offsets: memOffsets{}})
	if err := task.Start(context.Background(), map[string]string{"topic": "t"}); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	go func() {
		io.WriteString(w, "from\nstdin\n")
		w.Close()
	}()
	recs := pollUntil(t, task, 2)
	if got := strings.Join(values(recs), "|"); got != "from|stdin" {
		t.Fatalf("got %q", got)
	}
	for _, r := range recs {
		if v, ok := r.SourceOffset[PositionField]; !ok || v != nil {
			t.Fatalf("stdin offset %v, want position null as Kafka", r.SourceOffset)
		}
		if v, ok := r.SourcePartition[FilenameField]; !ok || v != nil {
			t.Fatalf("stdin partition %v", r.SourcePartition)
		}
	}
	pollNone(t, task)
}

func TestSourceConnector(t *testing.T) {
	c := &SourceConnector{}
	props := map[string]string{"file": "/somefilename", "topic": "test", "transforms": "insert"}
	if err := c.Start(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{1, 2, 10} {
		tc, err := c.TaskConfigs(max)
		if err != nil || len(tc) != 1 || tc[0]["file"] != "/somefilename" || tc[0]["topic"] != "test" || tc[0]["transforms"] != "insert" {
			t.Fatalf("TaskConfigs(%d) = %v, %v", max, tc, err)
		}
	}

	errorsOf := func(props map[string]string) map[string][]string {
		out := map[string][]string{}
		vals := c.Validate(props)
		if len(vals) != len(c.Config().Keys()) {
			t.Fatalf("Validate returned %d values for %d keys", len(vals), len(c.Config().Keys()))
		}
		for _, cv := range vals {
			out[cv.Name] = append(out[cv.Name], cv.Errors...)
		}
		return out
	}
	for _, tc := range []struct {
		props map[string]string
		key   string
		want  string
	}{
		{map[string]string{"file": "f"}, "topic", `Missing required configuration "topic" which has no default value.`},
		{map[string]string{"topic": "   "}, "topic", "Invalid value  for configuration topic: String must be non-empty"},
		{map[string]string{"topic": "t", "batch.size": "abcd"}, "batch.size", "Invalid value abcd for configuration batch.size: Not a number of type INT"},
		{map[string]string{"topic": "a,b"}, "topic", singleTopicMessage},
	} {
		errs := errorsOf(tc.props)
		if len(errs[tc.key]) != 1 || errs[tc.key][0] != tc.want {
			t.Errorf("%v: errors %q, want %q", tc.props, errs, tc.want)
		}
	}
	if errs := errorsOf(map[string]string{"topic": "t"}); len(errs["topic"])+len(errs["file"])+len(errs["batch.size"]) != 0 {
		t.Errorf("valid config has errors %v", errs)
	}
	if _, err := c.Config().Parse(map[string]string{"file": "f"}); err == nil {
		t.Error("config without topic parsed")
	}

	for _, tc := range []struct {
		file string
		want connect.ExactlyOnceSupport
	}{{"/f", connect.ExactlyOnceSupported}, {" ", connect.ExactlyOnceUnsupported}, {"", connect.ExactlyOnceUnsupported}} {
		props := map[string]string{"topic": "t"}
		if tc.file != "" {
			props["file"] = tc.file
		}
		if got := c.ExactlyOnceSupport(props); got != tc.want {
			t.Errorf("ExactlyOnceSupport(file=%q) = %v", tc.file, got)
		}
	}
}

// TestSourceAlterOffsets follows Kafka's FileStreamSourceConnectorTest.
func TestSourceAlterOffsets(t *testing.T) {
	c := &SourceConnector{}
	cfg := map[string]string{"file": "/somefilename", "topic": "test"}
	part := map[string]any{FilenameField: "/somefilename"}
	alter := func(cfg map[string]string, p, o map[string]any) error {
		_, err := c.AlterOffsets(cfg, []connect.SourcePartitionOffset{{Partition: p, Offset: o}})
		return err
	}
	if err := alter(map[string]string{"topic": "t"}, part, map[string]any{PositionField: int64(0)}); err == nil ||
		!strings.Contains(err.Error(), "Offsets cannot be modified if the 'file' configuration is unspecified.") {
		t.Errorf("stdin: %v", err)
	}
	if err := alter(cfg, map[string]any{"other_partition_key": "x"}, map[string]any{PositionField: int64(0)}); err == nil ||
		err.Error() != "Partition objects should contain the key 'filename'" {
		t.Errorf("bad partition key: %v", err)
	}
	if err := alter(cfg, nil, map[string]any{PositionField: int64(0)}); err == nil || err.Error() != "Partition objects cannot be null" {
		t.Errorf("null partition: %v", err)
	}
	if err := alter(cfg, part, map[string]any{"other_offset_key": int64(0)}); err == nil ||
		err.Error() != "Offset objects should either be null or contain the key 'position'" {
		t.Errorf("bad offset key: %v", err)
	}
	for _, bad := range []any{"nan", nil, struct{}{}, 3.14, "-420", "10"} {
		if err := alter(cfg, part, map[string]any{PositionField: bad}); err == nil ||
			err.Error() != "The value for the 'position' key in the offset is expected to be a Long value" {
			t.Errorf("position %v: %v", bad, err)
		}
	}
	for _, neg := range []any{int64(-10), int64(-420)} {
		if err := alter(cfg, part, map[string]any{PositionField: neg}); err == nil ||
			err.Error() != "The value for the 'position' key in the offset should be a non-negative value" {
			t.Errorf("position %v: %v", neg, err)
		}
	}
	if err := alter(cfg, part, map[string]any{PositionField: int64(10)}); err != nil {
		t.Errorf("valid offset: %v", err)
	}
	for _, p := range []map[string]any{nil, {}, part, {"garbage": "x"}} {
		if err := alter(cfg, p, nil); err != nil {
			t.Errorf("tombstone for %v: %v", p, err)
		}
	}
	if ok, err := c.AlterOffsets(cfg, nil); !ok || err != nil {
		t.Errorf("empty: %v %v", ok, err)
	}
}

func TestSink(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out.txt")
	os.WriteFile(name, []byte("existing\n"), 0o644)
	c := &SinkConnector{}
	if err := c.Start(context.Background(), map[string]string{"file": name, "topics": "a"}); err != nil {
		t.Fatal(err)
	}
	tcs, err := c.TaskConfigs(3)
	if err != nil || len(tcs) != 3 || tcs[2]["file"] != name {
		t.Fatalf("TaskConfigs(3) = %v, %v", tcs, err)
	}
	task := c.NewTask()
	if err := task.Start(context.Background(), tcs[0]); err != nil {
		t.Fatal(err)
	}
	st := connect.NewStructValue(connect.NewStruct().Field("a", connect.Int32Schema).Field("b", connect.OptionalStringSchema).Build())
	st.MustPut("a", int32(1))
	recs := []*connect.SinkRecord{
		{Topic: "a", ValueSchema: connect.StringSchema, Value: "line1"},
		{Topic: "a", Value: nil},
		{Topic: "a", Value: st},
		{Topic: "a", Value: map[string]any{"x": []any{int64(1), 2.0}}},
	}
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	offsets := map[connect.TopicPartition]int64{{Topic: "a"}: 4}
	got, err := task.PreCommit(context.Background(), offsets)
	if err != nil || got[connect.TopicPartition{Topic: "a"}] != 4 {
		t.Fatalf("PreCommit = %v, %v", got, err)
	}
	want := "existing\nline1\nnull\nStruct{a=1}\n{x=[1, 2.0]}\n"
	if b, _ := os.ReadFile(name); string(b) != want {
		t.Fatalf("file %q, want %q", b, want)
	}
	// Buffers bigger than the flush size are written without PreCommit,
	// in whole lines.
	big := bytes.Repeat([]byte("y"), 1000)
	var many []*connect.SinkRecord
	for range 100 {
		many = append(many, &connect.SinkRecord{Value: string(big)})
	}
	if err := task.Put(context.Background(), many); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); len(b) <= len(want) || b[len(b)-1] != '\n' {
		t.Fatalf("no whole-line write after %d bytes: file has %d bytes", 100*1001, len(b))
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); len(b) != len(want)+100*1001 {
		t.Fatalf("after Stop the file has %d bytes, want %d", len(b), len(want)+100*1001)
	}

	bad := (&SinkConnector{}).NewTask()
	if err := bad.Start(context.Background(), map[string]string{"file": filepath.Join(name, "sub", "x")}); err == nil ||
		!strings.Contains(err.Error(), "Couldn't find or create file") {
		t.Fatalf("unwritable file: %v", err)
	}
}
