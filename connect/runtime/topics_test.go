package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// A source whose topic does not exist (no auto-creation, no
// topic.creation.*) waits for it up to the producer's max.block.ms, then
// fails as Kafka Connect's task does, with nothing committed; once the
// topic exists a restarted task delivers every record.
func TestSourceMissingTopicFailsAfterMaxBlock(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	ctx := testkit.Context(t, 2*time.Minute)
	offsets := storage.NewMemoryOffsetStore()
	w := newTestWorker(t, workerProps(b.Addr, "producer.max.block.ms", "1500"), offsets)
	ev := newEvents()
	id := runtimetest.TestID(t)
	cfg := runtimetest.SourceConfig("src", id, "absent", 20)
	start := time.Now()
	run(t, w, ev, cfg)
	err := ev.await(t, "src", 0, storage.StateFailed)
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("failed after %v, before max.block.ms", el)
	}
	trace := ErrorTrace(err)
	for _, want := range []string{
		"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
		"Caused by: org.apache.kafka.common.errors.TimeoutException: Topic absent not present in metadata after 1500 ms.",
	} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace %q lacks %q", trace, want)
		}
	}
	if all, err := offsets.All(ctx, "src"); err != nil || len(all) != 0 {
		t.Fatalf("offsets committed for records never written: %v %v", all, err)
	}

	// Restarted once the topic exists, the task sends everything.
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(ctx, 1, 1, nil, "absent"); err != nil {
		t.Fatal(err)
	}
	w.StopConnector(ctx, "src")
	w2 := newTestWorker(t, workerProps(b.Addr, "producer.max.block.ms", "1500"), offsets)
	ev2 := newEvents()
	run(t, w2, ev2, cfg)
	recs := readAll(t, b.Addr, "absent", 20)
	seen := map[string]bool{}
	for _, r := range recs {
		seen[string(r.Value)] = true
	}
	if len(seen) != 20 {
		t.Errorf("%d distinct records of 20", len(seen))
	}
}

// Without a bound (Kafka Connect's max.block.ms default) the task waits
// for its topic as long as it takes, RUNNING, and loses nothing.
func TestSourceWaitsForMissingTopic(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	ctx := testkit.Context(t, time.Minute)
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	run(t, w, ev, runtimetest.SourceConfig("src", runtimetest.TestID(t), "later", 10))
	time.Sleep(1500 * time.Millisecond)
	if st, err := ev.state("src", 0); st != storage.StateRunning {
		t.Fatalf("task %s (%v) while its topic is missing, want RUNNING", st, err)
	}
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(ctx, 1, 1, nil, "later"); err != nil {
		t.Fatal(err)
	}
	readAll(t, b.Addr, "later", 10)
}

// KIP-158: a group without partitions or replication factor takes the
// default group's; an existing topic is used as it is; a topic the
// brokers refuse to create fails the task with Kafka's message.
func TestTopicCreationGroups(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	ctx := testkit.Context(t, time.Minute)
	adm := kadm.NewClient(testkit.Client(t, b.Addr, kgo.MetadataMinAge(20*time.Millisecond)))
	if _, err := adm.CreateTopic(ctx, 5, 1, nil, "state-existing"); err != nil {
		t.Fatal(err)
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	creation := []string{
		"topic.creation.groups", "compacted",
		"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "2",
		"topic.creation.compacted.include", "state-.*", "topic.creation.compacted.cleanup.policy", "compact",
	}
	run(t, w, ev, runtimetest.SourceConfig("new", id, "state-new", 5, creation...))
	run(t, w, ev, runtimetest.SourceConfig("existing", id, "state-existing", 5, creation...))
	readAll(t, b.Addr, "state-new", 5)
	readAll(t, b.Addr, "state-existing", 5)
	td, err := adm.ListTopics(ctx, "state-new", "state-existing")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["state-new"].Partitions); n != 2 {
		t.Errorf("state-new has %d partitions, want the default group's 2", n)
	}
	if n := len(td["state-existing"].Partitions); n != 5 {
		t.Errorf("state-existing has %d partitions, want its own 5", n)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "state-new")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rc.On("state-new", nil)
	for _, kv := range c.Configs {
		if kv.Key == "cleanup.policy" && (kv.Value == nil || *kv.Value != "compact") {
			t.Errorf("cleanup.policy %v", kv.Value)
		}
	}
	for _, st := range []string{"new", "existing"} {
		if s, err := ev.state(st, 0); s != storage.StateRunning {
			t.Errorf("%s task %s (%v)", st, s, err)
		}
	}

	run(t, w, ev, runtimetest.SourceConfig("bad", id, "bad-config", 5,
		"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "1",
		"topic.creation.default.cleanup.policy", "bogus"))
	err = ev.await(t, "bad", 0, storage.StateFailed)
	if want := "Unable to create topic(s) '[bad-config]': "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad topic config: %v, want %q", err, want)
	}
	if td, _ := adm.ListTopics(ctx, "bad-config"); td.Has("bad-config") && td["bad-config"].Err == nil {
		t.Errorf("bad-config was created: %+v", td["bad-config"])
	}
}
