package storage

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

func kafkaOpts(addr string) KafkaOptions {
	return KafkaOptions{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, ReadTimeout: 30 * time.Second}
}

func TestKafkaOffsetStore(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	topic := KafkaTopic{Name: "connect-offsets", Property: "offset.storage.topic", Partitions: 25, ReplicationFactor: 1, Create: true}
	s, err := StartKafkaOffsetStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	testOffsetStore(t, ctx, s)
	golden := []connect.SourcePartitionOffset{{Partition: map[string]any{"file": "golden"}, Offset: map[string]any{"position": int64(2)}}}
	if err := s.Put(ctx, "golden-source", golden); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// The key lands where Kafka Connect put it (partition 12 of 25 in
	// testdata/internal_topics.json): same bytes, same murmur2 hash.
	cl := testkit.Client(t, b.Addr, kgo.ConsumeTopics("connect-offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	found := false
	for !found {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("golden-source offset record not found")
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == `["golden-source",{"file":"golden"}]` {
				found = true
				if r.Partition != 12 || string(r.Value) != `{"position":2}` {
					t.Errorf("record in partition %d with value %s; Kafka wrote partition 12, {\"position\":2}", r.Partition, r.Value)
				}
			}
		})
	}

	// A new store (another worker, or a restart) reads everything back.
	s2, err := StartKafkaOffsetStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	all, err := s2.All(ctx, "c1")
	if err != nil || len(all) != 1 || all[0].Offset["pos"] != int64(7) {
		t.Errorf("reread offsets %v %v", all, err)
	}
	got, _ := s2.Get(ctx, "golden-source", []map[string]any{{"file": "golden"}})
	if got[0]["position"] != int64(2) {
		t.Errorf("golden offset %v", got)
	}
}

type syncListener struct {
	mu sync.Mutex
	recordingListener
}

func (s *syncListener) events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func (s *syncListener) ConnectorConfigUpdated(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordingListener.ConnectorConfigUpdated(n)
}
func (s *syncListener) ConnectorConfigRemoved(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordingListener.ConnectorConfigRemoved(n)
}
func (s *syncListener) TaskConfigsUpdated(ts []TaskID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordingListener.TaskConfigsUpdated(ts)
}
func (s *syncListener) TargetStateChanged(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordingListener.TargetStateChanged(n)
}
func (s *syncListener) RestartRequested(q RestartRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordingListener.RestartRequested(q)
}

func TestKafkaConfigStore(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	topic := KafkaTopic{Name: "connect-configs", ReplicationFactor: 1, Create: true}
	a, err := StartKafkaConfigStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bs, err := StartKafkaConfigStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	l := &syncListener{}
	bs.SetListener(l)

	stopped := TargetStopped
	if err := a.PutConnectorConfig(ctx, "x", map[string]string{"connector.class": "C", "<k>": "v&"}, &stopped); err != nil {
		t.Fatal(err)
	}
	// The writer's snapshot has the write at once.
	snap := a.Snapshot()
	if !snap.Contains("x") || snap.TargetState("x") != TargetStopped || snap.Offset != 2 {
		t.Fatalf("writer snapshot %+v", snap)
	}
	a.PutTaskConfigs(ctx, "x", []map[string]string{{"t": "0"}, {"t": "1"}})
	a.PutTargetState(ctx, "x", TargetStarted)
	a.PutRestartRequest(ctx, RestartRequest{Connector: "x", IncludeTasks: true})
	a.PutSessionKey(ctx, SessionKey{Key: "a2V5", Algorithm: "HmacSHA256", CreationTimestamp: 5})
	a.RemoveConnectorConfig(ctx, "x")

	want := []string{"update x", "task x-0", "task x-1", "target x", "restart x", "remove x"}
	testkit.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if got := l.events(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("events %v, want %v", got, want)
		}
		return nil
	})
	if err := bs.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	snap = bs.Snapshot()
	if snap.Contains("x") || snap.SessionKey == nil || snap.SessionKey.CreationTimestamp != 5 || snap.Offset != a.Snapshot().Offset {
		t.Errorf("reader snapshot %+v (writer at %d)", snap, a.Snapshot().Offset)
	}

	// A third store started now rebuilds the same state without events.
	c, err := StartKafkaConfigStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Snapshot(); got.Offset != snap.Offset || got.Contains("x") {
		t.Errorf("rebuilt snapshot %+v", got)
	}
}

func TestKafkaStatusStore(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	topic := KafkaTopic{Name: "connect-status", Partitions: 5, ReplicationFactor: 1, Create: true}
	s, err := StartKafkaStatusStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	s.Put(ctx, Status{Connector: "c", Task: -1, State: StateRunning, WorkerID: "w:8083", Generation: 1, Version: "1.0"})
	s.Put(ctx, Status{Connector: "c", Task: 0, State: StateFailed, Trace: "java.lang.Boom\n\tat x", WorkerID: "w:8083", Generation: 1})
	s.Put(ctx, Status{Connector: "c", Task: 1, State: StateRunning, WorkerID: "w:8083", Generation: 1})
	s.Put(ctx, Status{Connector: "c", Task: 1, State: StateDestroyed})
	s.PutTopic(ctx, TopicStatus{Topic: "t", Connector: "c", DiscoverTimestamp: 9})
	s.Close()

	s2, err := StartKafkaStatusStore(ctx, kafkaOpts(b.Addr), topic)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if st, ok := s2.Connector("c"); !ok || st.State != StateRunning || st.Version != "1.0" {
		t.Errorf("connector status %+v", st)
	}
	ts := s2.Tasks("c")
	if len(ts) != 1 || ts[0].State != StateFailed || !strings.Contains(ts[0].Trace, "Boom") {
		t.Errorf("task statuses %+v", ts)
	}
	if tp := s2.Topics("c"); len(tp) != 1 || tp[0].DiscoverTimestamp != 9 {
		t.Errorf("topics %+v", tp)
	}
	// Another worker's older generation does not overwrite.
	s2.PutSafe(ctx, Status{Connector: "c", Task: -1, State: StateUnassigned, WorkerID: "other", Generation: 0})
	if st, _ := s2.Connector("c"); st.State != StateRunning {
		t.Errorf("putSafe overwrote: %+v", st)
	}
}

func TestKafkaTopicChecks(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	adm := testkit.Admin(t, b.Addr)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "not-compacted"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": ptr("compact")}, "two-parts"); err != nil {
		t.Fatal(err)
	}
	_, err := StartKafkaOffsetStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "not-compacted", Property: "offset.storage.topic"})
	if err == nil || !strings.Contains(err.Error(), "required to have 'cleanup.policy=compact'") {
		t.Errorf("delete-policy topic: %v", err)
	}
	_, err = StartKafkaConfigStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "two-parts"})
	if err == nil || !strings.Contains(err.Error(), "required to have a single partition") {
		t.Errorf("two-partition config topic: %v", err)
	}
	// A topic that never appears fails after TopicTimeout with Kafka's
	// message and the reason.
	opts := kafkaOpts(b.Addr)
	opts.TopicTimeout = 700 * time.Millisecond
	start := time.Now()
	_, err = StartKafkaStatusStore(ctx, opts, KafkaTopic{Name: "missing", Property: "status.storage.topic", Create: false})
	if err == nil || !strings.Contains(err.Error(), "Could not look up partition metadata for connector and task statuses topic missing in allotted period") ||
		!strings.Contains(err.Error(), "does not exist and internal.topics.automatic.creation.enable is false") {
		t.Errorf("missing topic without creation: %v", err)
	}
	if el := time.Since(start); el < 700*time.Millisecond || el > 10*time.Second {
		t.Errorf("gave up after %v; want about the 700ms TopicTimeout", el)
	}
	// Creation makes the topic compacted with the asked partitions.
	s, err := StartKafkaStatusStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "made", Partitions: 3, ReplicationFactor: 1, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	td, err := adm.ListTopics(ctx, "made")
	if err != nil || len(td["made"].Partitions) != 3 {
		t.Errorf("created topic %+v %v", td, err)
	}
	rc, _ := adm.DescribeTopicConfigs(ctx, "made")
	c, _ := rc.On("made", nil)
	for _, kv := range c.Configs {
		if kv.Key == "cleanup.policy" && (kv.Value == nil || *kv.Value != "compact") {
			t.Errorf("cleanup.policy %v", kv.Value)
		}
	}
}

func ptr(s string) *string { return &s }

// A store whose topic does not exist yet, with creation disabled, waits
// for it (an operator or another worker creating it) instead of failing
// at once, as Kafka's KafkaBasedLog waits for partition metadata.
func TestKafkaStoreWaitsForTopicCreatedElsewhere(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	ctx := testkit.Context(t, time.Minute)
	adm := testkit.Admin(t, b.Addr)
	created := make(chan error, 1)
	go func() {
		time.Sleep(800 * time.Millisecond)
		_, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": ptr("compact")}, "late-configs")
		created <- err
	}()
	opts := kafkaOpts(b.Addr)
	opts.TopicTimeout = 20 * time.Second
	start := time.Now()
	s, err := StartKafkaConfigStore(ctx, opts, KafkaTopic{Name: "late-configs", Create: false})
	if err != nil {
		t.Fatalf("store did not wait for its topic: %v", err)
	}
	defer s.Close()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 700*time.Millisecond {
		t.Errorf("started after %v, before the topic existed", el)
	}
	if err := s.PutConnectorConfig(ctx, "c1", map[string]string{"connector.class": "X"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Snapshot().Connectors["c1"]; !ok {
		t.Errorf("written config not in the snapshot")
	}
}

// Several workers starting at once all create-or-find the same three
// internal topics (one gets TOPIC_ALREADY_EXISTS, others see the topic
// while it is being created) and every one of them ends up reading what
// the others wrote.
func TestKafkaStoresConcurrentStart(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 2*time.Minute)
	const workers = 4
	type stores struct {
		off *KafkaOffsetStore
		cfg *KafkaConfigStore
		st  *KafkaStatusStore
	}
	got := make([]stores, workers)
	errs := make(chan error, 3*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			s, err := StartKafkaOffsetStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "race-offsets", Property: "offset.storage.topic", Partitions: 25, ReplicationFactor: 1, Create: true})
			got[w].off = s
			errs <- err
		}()
		go func() {
			defer wg.Done()
			s, err := StartKafkaConfigStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "race-configs", ReplicationFactor: 1, Create: true})
			got[w].cfg = s
			errs <- err
		}()
		go func() {
			defer wg.Done()
			s, err := StartKafkaStatusStore(ctx, kafkaOpts(b.Addr), KafkaTopic{Name: "race-status", Partitions: 5, ReplicationFactor: 1, Create: true})
			got[w].st = s
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent start: %v", err)
		}
	}
	for _, s := range got {
		defer s.off.Close()
		defer s.cfg.Close()
		defer s.st.Close()
	}
	for w := range got {
		name := fmt.Sprintf("c%d", w)
		if err := got[w].off.Put(ctx, name, []connect.SourcePartitionOffset{{Partition: map[string]any{"p": "x"}, Offset: map[string]any{"n": int64(w)}}}); err != nil {
			t.Fatal(err)
		}
		if err := got[w].cfg.PutConnectorConfig(ctx, name, map[string]string{"connector.class": "X"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for w := range got {
		if err := got[w].cfg.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(got[w].cfg.Snapshot().Connectors); n != workers {
			t.Errorf("worker %d sees %d connector configs, want %d", w, n, workers)
		}
		for o := range got {
			v, err := got[w].off.Get(ctx, fmt.Sprintf("c%d", o), []map[string]any{{"p": "x"}})
			if err != nil || v[0] == nil || v[0]["n"] != int64(o) {
				t.Errorf("worker %d reads offset of c%d as %v, %v", w, o, v, err)
			}
		}
	}
	td, err := testkit.Admin(t, b.Addr).ListTopics(ctx, "race-offsets", "race-configs", "race-status")
	if err != nil || len(td["race-offsets"].Partitions) != 25 || len(td["race-configs"].Partitions) != 1 || len(td["race-status"].Partitions) != 5 {
		t.Errorf("topics %+v %v", td, err)
	}
}
