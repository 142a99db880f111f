package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	offsetstore "github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// fakeBucket is an in-memory bucket that can fail on demand.
type fakeBucket struct {
	mu        sync.Mutex
	objs      map[string][]byte
	modified  map[string]time.Time
	failLists int   // the next failLists List calls fail
	failOpens int   // the next failOpens Open calls fail
	breakAt   int64 // >0: the next stream opened breaks after this many bytes
	lists     int
	opens     int
}

var errUnreachable = errors.New("dial tcp 127.0.0.1:9: connection refused")

func newFakeBucket() *fakeBucket {
	return &fakeBucket{objs: map[string][]byte{}, modified: map[string]time.Time{}}
}

// put stores an object written an hour ago (settled).
func (b *fakeBucket) put(key string, data []byte) { b.putAt(key, data, time.Now().Add(-time.Hour)) }

// putAt stores an object last modified at (the store's clock).
func (b *fakeBucket) putAt(key string, data []byte, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = data
	b.modified[key] = at
}

func (b *fakeBucket) List(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	b.mu.Lock()
	b.lists++
	if b.failLists > 0 {
		b.failLists--
		b.mu.Unlock()
		return errUnreachable
	}
	var objs []storage.Object
	for _, k := range slices.Sorted(maps.Keys(b.objs)) {
		if strings.HasPrefix(k, prefix) {
			objs = append(objs, storage.Object{Key: k, Size: int64(len(b.objs[k])), LastModified: b.modified[k]})
		}
	}
	b.mu.Unlock()
	for _, o := range objs {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

func (b *fakeBucket) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opens++
	if b.failOpens > 0 {
		b.failOpens--
		return nil, errUnreachable
	}
	data, ok := b.objs[key]
	if !ok {
		return nil, fmt.Errorf("get %s: not found", key)
	}
	var r io.Reader = bytes.NewReader(data)
	if b.breakAt > 0 {
		r = io.MultiReader(io.LimitReader(r, b.breakAt), errReader{})
		b.breakAt = 0
	}
	return io.NopCloser(r), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read: connection reset by peer") }

// lineFormat is a stand-in format for the task's logic: one record per
// line, a STRING value. A line "!bad" does not decode; a line "H:k=v,..."
// reads as a headers view.
type lineFormat struct{ ext string }

func (f lineFormat) Extension() string { return f.ext }

func (f lineFormat) NewWriter(w io.Writer) (format.RecordWriter, error) {
	return nil, errors.New("lineFormat writes nothing")
}

func (f lineFormat) NewReader(r io.ReaderAt, size int64) (format.RecordReader, error) {
	return &lineReader{sc: bufio.NewScanner(io.NewSectionReader(r, 0, size))}, nil
}

type lineReader struct{ sc *bufio.Scanner }

func (r *lineReader) Next() (*connect.Schema, any, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, io.EOF
	}
	line := r.sc.Text()
	switch {
	case line == "!bad":
		return nil, nil, errors.New("malformed record")
	case strings.HasPrefix(line, "H:"):
		var view []any
		for _, kv := range strings.Split(line[2:], ",") {
			k, v, _ := strings.Cut(kv, "=")
			view = append(view, map[string]any{"key": k, "value": v})
		}
		return nil, view, nil
	}
	return connect.StringSchema, line, nil
}

// testSettings are a task's settings on lineFormat and the default
// partitioner's layout (topics/<t>/partition=<p>/<t>+<p>+<offset>.txt).
func testSettings(batch int) *settings {
	return &settings{
		pollInterval:      50 * time.Millisecond,
		batchSize:         batch,
		restorePartitions: true,
		topics:            map[string]bool{},
		value:             lineFormat{".txt"},
		keys:              lineFormat{".txt"},
		headers:           lineFormat{".txt"},
		layout:            partitioner.LayoutFrom(map[string]string{}),
	}
}

// objKey names an object as the default partitioner does.
func objKey(s *settings, topic string, partition int32, start int64) string {
	return s.layout.Key(topic, fmt.Sprintf("partition=%d", partition), partition, start, s.value.Extension())
}

// lines returns n records "<prefix>-<i>" from i = from, one per line.
func lines(prefix string, from, n int) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%s-%d\n", prefix, i)
	}
	return b.Bytes()
}

// memOffsets is a committed-offsets store for a task context.
type memOffsets map[string]map[string]any

func (m memOffsets) Offset(p map[string]any) (map[string]any, error) {
	return m[offsetstore.PartitionKey(p)], nil
}

func (m memOffsets) Offsets(ps []map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, p := range ps {
		if o, ok := m[offsetstore.PartitionKey(p)]; ok {
			out[offsetstore.PartitionKey(p)] = o
		}
	}
	return out, nil
}

// commit records each record's offset as the runtime would once Kafka
// acknowledged it.
func (m memOffsets) commit(recs []*connect.SourceRecord) {
	for _, r := range recs {
		m[offsetstore.PartitionKey(r.SourcePartition)] = r.SourceOffset
	}
}

type taskContext struct{ offsets memOffsets }

func (c taskContext) Offsets() connect.OffsetReader { return c.offsets }
func (c taskContext) Config() map[string]string     { return nil }

// startTask starts a task on b for tps with offsets committed so far.
func startTask(t *testing.T, b bucket, s *settings, offsets memOffsets, tps ...connect.TopicPartition) *Task {
	t.Helper()
	task := &Task{newBucket: func(context.Context, *settings) (bucket, error) { return b, nil }}
	task.Initialize(taskContext{offsets})
	if err := task.start(context.Background(), s, tps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

// pollN polls until n records came (failing the test on an error or
// after a while) and returns them.
func pollN(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records, want %d", len(out), n)
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("poll after %d records: %v", len(out), err)
		}
		if len(recs) > task.s.batchSize {
			t.Fatalf("poll returned %d records, more than the batch size %d", len(recs), task.s.batchSize)
		}
		out = append(out, recs...)
	}
	return out
}

// values returns the records' values per Kafka partition, in order.
func values(recs []*connect.SourceRecord) map[int32][]string {
	out := map[int32][]string{}
	for _, r := range recs {
		p, _ := connect.OffsetLong(r.SourcePartition[PartitionField])
		out[int32(p)] = append(out[int32(p)], r.Value.(string))
	}
	return out
}

func seq(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, from+i)
	}
	return out
}
