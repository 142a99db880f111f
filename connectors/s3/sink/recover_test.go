package sink

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// fakeContext is the runtime side of a task for unit tests: it records
// the offset resets and commit requests the task makes.
type fakeContext struct {
	mu     sync.Mutex
	resets map[connect.TopicPartition]int64
	props  map[string]string
}

func (c *fakeContext) ResetOffsets(o map[connect.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resets == nil {
		c.resets = map[connect.TopicPartition]int64{}
	}
	maps.Copy(c.resets, o)
}
func (c *fakeContext) Timeout(time.Duration)                              {}
func (c *fakeContext) Assignment() []connect.TopicPartition               { return nil }
func (c *fakeContext) Pause(...connect.TopicPartition)                    {}
func (c *fakeContext) Resume(...connect.TopicPartition)                   {}
func (c *fakeContext) RequestCommit()                                     {}
func (c *fakeContext) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
func (c *fakeContext) Config() map[string]string                          { return c.props }

var recSchema = connect.NewStruct().Field("id", connect.Int64Schema).Build()

func records(topic string, from, to int64) []*connect.SinkRecord {
	var out []*connect.SinkRecord
	for i := from; i < to; i++ {
		v := connect.NewStructValue(recSchema).MustPut("id", i)
		out = append(out, &connect.SinkRecord{Topic: topic, Partition: 0, Offset: i, Timestamp: 1_700_000_000_000 + i,
			Key: fmt.Sprint("k", i), KeySchema: connect.StringSchema, Value: v, ValueSchema: recSchema})
	}
	return out
}

// startTask runs a task on tp "t"-0 without a broker.
func startTask(t *testing.T, props map[string]string) (*Task, *fakeContext) {
	t.Helper()
	ctx := &fakeContext{props: props}
	task := &Task{}
	task.Initialize(ctx)
	if err := task.Start(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	if err := task.Open([]connect.TopicPartition{{Topic: "t", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	return task, ctx
}

// waitDurable waits until PreCommit vouches for off.
func waitDurable(t *testing.T, task *Task, off int64) {
	t.Helper()
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		got, err := task.PreCommit(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[connect.TopicPartition{Topic: "t", Partition: 0}] != off {
			return fmt.Errorf("durable %v, want %d", got, off)
		}
		return nil
	})
}

// A task that takes over after a crash keeps the commits it finds whole
// after the committed offset (and resumes after them), deletes the objects
// of a partial commit, writes those records again under the same keys,
// and leaves the bucket as a run without the crash leaves it.
func TestRecoveryKeepsWholeCommitsAndRedoesPartialOnes(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	srv := testkit.StartS3(t)
	srv.CreateBucket(t, "rec")
	props := map[string]string{"name": "rec", "topics": "t", "flush.size": "100",
		"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "store.kafka.keys": "true",
		"keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
	maps.Copy(props, srv.Props("rec"))

	// The reference: a run without a crash.
	task, _ := startTask(t, props)
	if err := task.Put(context.Background(), records("t", 0, 400)); err != nil {
		t.Fatal(err)
	}
	waitDurable(t, task, 400)
	task.Stop()
	reference := map[string]string{}
	for _, k := range listKeys(t, task) {
		reference[k] = string(readObject(t, task, k))
	}
	if len(reference) != 8 {
		t.Fatalf("reference run wrote %d objects, want 8 (4 commits of a value and a keys file)", len(reference))
	}

	// The crash: offsets were committed up to 100 only; the commits
	// [100,200) and [200,300) reached the bucket whole, [300,400) lost
	// its keys file, and a stray object of an earlier attempt sits at 350.
	lost := "topics/t/partition=0/t+0+0000000300.keys.json"
	if err := task.store.Delete(context.Background(), lost); err != nil {
		t.Fatal(err)
	}
	stray := "topics/t/partition=0/t+0+0000000350.json"
	if err := task.store.Put(context.Background(), stray, bytesReader("junk"), 4,
		map[string]string{metaCommit: commitTag(350, 400, 2)}); err != nil {
		t.Fatal(err)
	}

	task2, ctx2 := startTask(t, props)
	defer task2.Stop()
	if err := task2.Put(context.Background(), records("t", 100, 400)); err != nil {
		t.Fatal(err)
	}
	tp := connect.TopicPartition{Topic: "t", Partition: 0}
	if ctx2.resets[tp] != 300 {
		t.Fatalf("the task asked to resume at %v, want 300 (after the two whole commits)", ctx2.resets)
	}
	waitDurable(t, task2, 400)
	got := listKeys(t, task2)
	want := slices.Sorted(maps.Keys(reference))
	if !slices.Equal(got, want) {
		t.Fatalf("bucket after recovery:\n%v\nwant:\n%v", got, want)
	}
	for _, k := range got {
		if string(readObject(t, task2, k)) != reference[k] {
			t.Errorf("%s differs from the crash-free run's", k)
		}
	}
}

func listKeys(t *testing.T, task *Task) []string {
	t.Helper()
	var out []string
	err := task.store.List(context.Background(), "topics/", "", func(o storage.Object) error {
		out = append(out, o.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func readObject(t *testing.T, task *Task, key string) []byte {
	t.Helper()
	b, err := task.store.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bytesReader(s string) *strings.Reader { return strings.NewReader(s) }
