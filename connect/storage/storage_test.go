package storage

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// goldenTopics is what Kafka Connect 4.4 wrote to its internal topics
// (testdata/internal_topics.json, captured by
// connect/runtime/testdata/kafkaref/gen.sh).
type goldenRecord struct {
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       *string `json:"key"`
	Value     *string `json:"value"`
}

type goldenTopic struct {
	Partitions int            `json:"partitions"`
	Records    []goldenRecord `json:"records"`
}

func loadGolden(t *testing.T) map[string]goldenTopic {
	t.Helper()
	data, err := os.ReadFile("testdata/internal_topics.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]goldenTopic
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func valueBytes(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func TestEncodeJSON(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{"b": int64(1), "a": "x"}, `{"a":"x","b":1}`},
		{[]any{"c", map[string]any{"file": "golden"}}, `["c",{"file":"golden"}]`},
		{map[string]any{"f": 2.0, "g": 1.5, "h": float32(3)}, `{"f":2.0,"g":1.5,"h":3.0}`},
		{map[string]any{"n": nil, "t": true, "s": "<&>"}, `{"n":null,"s":"<&>","t":true}`},
		{[]byte{1, 2, 3}, `"AQID"`},
		{[]string{"a", "b"}, `["a","b"]`},
		{map[string]int{"x": 1}, `{"x":1}`},
	} {
		got, err := EncodeJSON(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("EncodeJSON(%v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := EncodeJSON(struct{}{}); err == nil {
		t.Error("EncodeJSON(struct) did not fail")
	}
}

func TestDecodeJSONNumbers(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"i":42,"f":1.5,"e":1e3,"big":123456789012345678901234,"a":[1,2.0]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	want := map[string]any{"i": int64(42), "f": 1.5, "e": 1000.0, "big": 1.2345678901234568e+23, "a": []any{int64(1), 2.0}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %#v\nwant %#v", m, want)
	}
	if _, err := DecodeJSON([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}

// TestOffsetKeysMatchKafka checks that the offset keys and values Kafka
// Connect wrote decode, and that re-encoding gives Kafka's bytes.
func TestOffsetKeysMatchKafka(t *testing.T) {
	g := loadGolden(t)["connect-offsets"]
	if g.Partitions != 25 {
		t.Errorf("offsets topic has %d partitions, want Kafka's default 25", g.Partitions)
	}
	tbl := newOffsetTable()
	for _, r := range g.Records {
		conn, part, err := ParseOffsetKey([]byte(*r.Key))
		if err != nil {
			t.Fatal(err)
		}
		k, _ := OffsetKey(conn, part)
		if string(k) != *r.Key {
			t.Errorf("key %s re-encodes as %s", *r.Key, k)
		}
		if r.Value != nil {
			off, err := DecodeOffset(valueBytes(r.Value))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := EncodeOffset(off)
			if string(v) != *r.Value {
				t.Errorf("value %s re-encodes as %s", *r.Value, v)
			}
		}
		if err := tbl.apply([]byte(*r.Key), valueBytes(r.Value)); err != nil {
			t.Fatal(err)
		}
	}
	// The last record of golden-source's partition is a tombstone (the
	// offsets were reset over REST).
	all, err := tbl.all("golden-source")
	if err != nil || len(all) != 0 {
		t.Errorf("offsets after replay = %v, %v; want none", all, err)
	}
}

// TestConfigRecordsMatchKafka replays Kafka Connect's config topic and
// checks the resulting state, and that our encodings of the same records
// equal Kafka's (as JSON; Kafka's property maps have no defined order).
func TestConfigRecordsMatchKafka(t *testing.T) {
	g := loadGolden(t)["connect-configs"]
	if g.Partitions != 1 {
		t.Errorf("config topic has %d partitions", g.Partitions)
	}
	st := newConfigState(nil)
	var events []configEvent
	for _, r := range g.Records {
		events = append(events, st.apply(r.Offset, *r.Key, valueBytes(r.Value))...)
		if r.Value == nil {
			continue
		}
		key, val := *r.Key, *r.Value
		var ours []byte
		switch {
		case strings.HasPrefix(key, "commit-"):
			var v commitValue
			json.Unmarshal([]byte(val), &v)
			ours = EncodeCommit(v.Tasks)
		case strings.HasPrefix(key, "target-state-"):
			var v targetStateValue
			json.Unmarshal([]byte(val), &v)
			ours = EncodeTargetState(TargetState(v.StateV2))
		case strings.HasPrefix(key, "restart-connector-"):
			var v restartValue
			json.Unmarshal([]byte(val), &v)
			ours = EncodeRestart(RestartRequest{IncludeTasks: v.IncludeTasks, OnlyFailed: v.OnlyFailed})
		case strings.HasPrefix(key, "connector-"), strings.HasPrefix(key, "task-"):
			var v propertiesValue
			json.Unmarshal([]byte(val), &v)
			ours = EncodeConnectorConfig(v.Properties)
			if !jsonEqual(t, ours, []byte(val)) {
				t.Errorf("%s: ours %s, Kafka's %s", key, ours, val)
			}
			continue
		case key == "session-key":
			var v SessionKey
			json.Unmarshal([]byte(val), &v)
			ours = EncodeSessionKey(v)
		}
		if string(ours) != val {
			t.Errorf("%s: ours %s, Kafka's %s", key, ours, val)
		}
	}
	snap := st.snapshot()
	if snap.Offset != int64(len(g.Records)) {
		t.Errorf("offset %d, want %d", snap.Offset, len(g.Records))
	}
	if got := snap.ConnectorNames(); !reflect.DeepEqual(got, []string{"golden-source"}) {
		t.Fatalf("connectors %v, want [golden-source] (sink and dlq were deleted)", got)
	}
	if ts := snap.TargetState("golden-source"); ts != TargetStopped {
		t.Errorf("golden-source target %s, want STOPPED", ts)
	}
	if n := snap.TaskCount("golden-source"); n != 0 {
		t.Errorf("golden-source has %d tasks after stop, want 0", n)
	}
	if snap.SessionKey == nil || snap.SessionKey.Algorithm != "HmacSHA256" {
		t.Errorf("session key %+v", snap.SessionKey)
	}
	if snap.Connectors["golden-source"]["topic"] != "golden-topic" {
		t.Errorf("golden-source config %v", snap.Connectors["golden-source"])
	}
	// The restart request was seen.
	found := false
	for _, e := range events {
		if e.kind == evRestart && e.restart == (RestartRequest{Connector: "golden-sink", IncludeTasks: true}) {
			found = true
		}
	}
	if !found {
		t.Error("restart request not reported")
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestStatusRecordsMatchKafka(t *testing.T) {
	g := loadGolden(t)["connect-status"]
	if g.Partitions != 5 {
		t.Errorf("status topic has %d partitions, want Kafka's default 5", g.Partitions)
	}
	tbl := newStatusTable(nil)
	for _, r := range g.Records {
		key := *r.Key
		tbl.apply(key, valueBytes(r.Value))
		if r.Value == nil {
			continue
		}
		if strings.HasPrefix(key, "status-topic-") {
			conn, topic, ts, err := decodeTopicStatus(key, valueBytes(r.Value))
			if err != nil {
				t.Fatal(err)
			}
			if TopicStatusKey(conn, topic) != key {
				t.Errorf("topic status key %s re-encodes as %s", key, TopicStatusKey(conn, topic))
			}
			if got := string(EncodeTopicStatus(*ts)); got != *r.Value {
				t.Errorf("%s: ours %s, Kafka's %s", key, got, *r.Value)
			}
			continue
		}
		st, err := decodeStatus(key, valueBytes(r.Value))
		if err != nil {
			t.Fatal(err)
		}
		if StatusKey(st) != key {
			t.Errorf("status key %s re-encodes as %s", key, StatusKey(st))
		}
		if got := string(EncodeStatus(st)); got != *r.Value {
			t.Errorf("%s: ours %s, Kafka's %s", key, got, *r.Value)
		}
	}
	if st, ok := tbl.connector("golden-source"); !ok || st.State != StateStopped || st.Version != "1.0" {
		t.Errorf("golden-source status %+v %v", st, ok)
	}
	if _, ok := tbl.connector("golden-sink"); ok {
		t.Error("deleted connector still has a status")
	}
	if ts := tbl.topicList("golden-source"); len(ts) != 1 || ts[0].Topic != "golden-topic" || ts[0].Task != 0 {
		t.Errorf("golden-source topics %+v", ts)
	}
	if got := tbl.connectorNames(); !reflect.DeepEqual(got, []string{"golden-source"}) {
		t.Errorf("connectors with status %v", got)
	}
}

func TestConfigStateTaskCommits(t *testing.T) {
	st := newConfigState(nil)
	apply := func(key string, v []byte) []configEvent { return st.apply(-1, key, v) }
	apply("connector-c", EncodeConnectorConfig(map[string]string{"a": "1"}))
	// Tasks without a commit are not visible.
	apply("task-c-0", EncodeConnectorConfig(map[string]string{"t": "0"}))
	apply("task-c-1", EncodeConnectorConfig(map[string]string{"t": "1"}))
	if n := st.snapshot().TaskCount("c"); n != 0 {
		t.Fatalf("uncommitted tasks visible: %d", n)
	}
	ev := apply("commit-c", EncodeCommit(2))
	if len(ev) != 1 || len(ev[0].tasks) != 2 {
		t.Fatalf("commit events %+v", ev)
	}
	snap := st.snapshot()
	if snap.TaskCount("c") != 2 || snap.TaskConfig(TaskID{"c", 1})["t"] != "1" {
		t.Fatalf("tasks %v", snap.Tasks)
	}
	// An incomplete set (task 1 missing, as after compaction) marks the
	// connector inconsistent and hides its tasks.
	apply("task-c-0", EncodeConnectorConfig(map[string]string{"t": "0b"}))
	apply("commit-c", EncodeCommit(2))
	snap = st.snapshot()
	if !snap.Inconsistent["c"] || snap.TaskCount("c") != 0 {
		t.Fatalf("incomplete commit: inconsistent=%v tasks=%v", snap.Inconsistent, snap.Tasks)
	}
	// A complete set heals it; shrinking drops task 1.
	apply("task-c-0", EncodeConnectorConfig(map[string]string{"t": "0c"}))
	apply("commit-c", EncodeCommit(1))
	snap = st.snapshot()
	if snap.Inconsistent["c"] || snap.TaskCount("c") != 1 || snap.TaskConfig(TaskID{"c", 0})["t"] != "0c" {
		t.Fatalf("after heal: %+v", snap)
	}
	// Target state before the config (initial_state) applies without an
	// event; a later change reports.
	if ev := apply("target-state-d", EncodeTargetState(TargetPaused)); len(ev) != 0 {
		t.Errorf("target state of an unknown connector reported: %+v", ev)
	}
	apply("connector-d", EncodeConnectorConfig(nil))
	if ts := st.snapshot().TargetState("d"); ts != TargetPaused {
		t.Errorf("initial state %s", ts)
	}
	if ev := apply("target-state-d", EncodeTargetState(TargetStopped)); len(ev) != 1 || ev[0].kind != evTargetChanged {
		t.Errorf("target change events %+v", ev)
	}
	// Old workers' records carry only "state".
	apply("target-state-d", []byte(`{"state":"STARTED"}`))
	if ts := st.snapshot().TargetState("d"); ts != TargetStarted {
		t.Errorf("old-format target state read as %s", ts)
	}
	// Deleting removes tasks; a late commit for a deleted connector is
	// ignored.
	apply("connector-c", nil)
	apply("commit-c", EncodeCommit(1))
	if snap := st.snapshot(); snap.Contains("c") || snap.TaskCount("c") != 0 {
		t.Errorf("deleted connector still there: %+v", snap)
	}
	// Garbage is skipped.
	apply("connector-e", []byte("not json"))
	apply("task-nonumber", EncodeConnectorConfig(nil))
	apply("whatever", []byte("{}"))
	if st.snapshot().Contains("e") {
		t.Error("garbage became a connector")
	}
}

type recordingListener struct{ got []string }

func (r *recordingListener) ConnectorConfigUpdated(n string) { r.got = append(r.got, "update "+n) }
func (r *recordingListener) ConnectorConfigRemoved(n string) { r.got = append(r.got, "remove "+n) }
func (r *recordingListener) TaskConfigsUpdated(ts []TaskID) {
	for _, t := range ts {
		r.got = append(r.got, "task "+t.String())
	}
}
func (r *recordingListener) TargetStateChanged(n string) { r.got = append(r.got, "target "+n) }
func (r *recordingListener) RestartRequested(q RestartRequest) {
	r.got = append(r.got, "restart "+q.Connector)
}

func TestMemoryConfigStore(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryConfigStore()
	l := &recordingListener{}
	s.SetListener(l)
	paused := TargetPaused
	s.PutConnectorConfig(ctx, "a", map[string]string{"k": "v"}, &paused)
	s.PutTaskConfigs(ctx, "a", []map[string]string{{"t": "0"}})
	s.PutTargetState(ctx, "a", TargetStarted)
	s.PutRestartRequest(ctx, RestartRequest{Connector: "a"})
	s.RemoveConnectorConfig(ctx, "a")
	want := []string{"update a", "task a-0", "target a", "restart a", "remove a"}
	if !reflect.DeepEqual(l.got, want) {
		t.Errorf("events %v, want %v", l.got, want)
	}
	if s.Snapshot().Contains("a") {
		t.Error("removed connector still there")
	}
}

func TestMemoryStatusStore(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStatusStore()
	s.Put(ctx, Status{Connector: "c", Task: -1, State: StateRunning, WorkerID: "w1", Generation: 2})
	s.Put(ctx, Status{Connector: "c", Task: 1, State: StateRunning, WorkerID: "w1", Generation: 2})
	s.Put(ctx, Status{Connector: "c", Task: 0, State: StateFailed, Trace: "boom", WorkerID: "w1", Generation: 2})
	// An older generation from another worker does not overwrite.
	s.PutSafe(ctx, Status{Connector: "c", Task: -1, State: StateUnassigned, WorkerID: "w2", Generation: 1})
	if st, _ := s.Connector("c"); st.State != StateRunning {
		t.Errorf("putSafe overwrote a newer status: %+v", st)
	}
	s.PutSafe(ctx, Status{Connector: "c", Task: -1, State: StatePaused, WorkerID: "w2", Generation: 3})
	if st, _ := s.Connector("c"); st.State != StatePaused {
		t.Errorf("putSafe did not write a newer generation: %+v", st)
	}
	ts := s.Tasks("c")
	if len(ts) != 2 || ts[0].Task != 0 || ts[0].Trace != "boom" {
		t.Errorf("tasks %+v", ts)
	}
	s.Put(ctx, Status{Connector: "c", Task: 0, State: StateDestroyed})
	if _, ok := s.Task(TaskID{"c", 0}); ok {
		t.Error("destroyed task still has a status")
	}
	s.PutTopic(ctx, TopicStatus{Topic: "b", Connector: "c"})
	s.PutTopic(ctx, TopicStatus{Topic: "a", Connector: "c"})
	if got := s.Topics("c"); len(got) != 2 || got[0].Topic != "a" {
		t.Errorf("topics %+v", got)
	}
	s.DeleteTopic(ctx, "c", "a")
	if got := s.Topics("c"); len(got) != 1 {
		t.Errorf("topics after delete %+v", got)
	}
}

func TestOffsetStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "offsets.json")
	fs, err := OpenFileOffsetStore(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]OffsetStore{"memory": NewMemoryOffsetStore(), "file": fs} {
		t.Run(name, func(t *testing.T) { testOffsetStore(t, ctx, s) })
	}
	// The file store reloads what it wrote.
	fs2, err := OpenFileOffsetStore(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fs2.Get(ctx, "c1", []map[string]any{{"file": "a"}, {"file": "b"}})
	if got[0]["pos"] != int64(7) || got[1] != nil {
		t.Errorf("reloaded offsets %v", got)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"key": [`) || !strings.Contains(string(data), fileFormat) {
		t.Errorf("file content:\n%s", data)
	}
	// A Java-serialized file is refused with a hint.
	bad := filepath.Join(t.TempDir(), "kafka.offsets")
	os.WriteFile(bad, []byte{0xac, 0xed, 0, 5, 's', 'r'}, 0o644)
	if _, err := OpenFileOffsetStore(bad); err == nil || !strings.Contains(err.Error(), "Java-serialized") {
		t.Errorf("foreign file: %v", err)
	}
	// Missing and empty files are empty stores.
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o644)
	if _, err := OpenFileOffsetStore(empty); err != nil {
		t.Error(err)
	}
}

func testOffsetStore(t *testing.T, ctx context.Context, s OffsetStore) {
	err := s.Put(ctx, "c1", []connect.SourcePartitionOffset{
		{Partition: map[string]any{"file": "a"}, Offset: map[string]any{"pos": 7}},
		{Partition: map[string]any{"file": "b"}, Offset: map[string]any{"pos": 1.5, "name": "x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Put(ctx, "c2", []connect.SourcePartitionOffset{{Partition: map[string]any{"file": "a"}, Offset: map[string]any{"pos": 99}}})
	got, err := s.Get(ctx, "c1", []map[string]any{{"file": "a"}, {"file": "zz"}, {"file": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0]["pos"] != int64(7) || got[1] != nil || got[2]["pos"] != 1.5 {
		t.Errorf("get %v", got)
	}
	// Values are copies.
	got[0]["pos"] = "changed"
	again, _ := s.Get(ctx, "c1", []map[string]any{{"file": "a"}})
	if again[0]["pos"] != int64(7) {
		t.Error("Get returned shared maps")
	}
	// A nil offset deletes.
	s.Put(ctx, "c1", []connect.SourcePartitionOffset{{Partition: map[string]any{"file": "b"}}})
	all, _ := s.All(ctx, "c1")
	if len(all) != 1 || all[0].Partition["file"] != "a" {
		t.Errorf("all %v", all)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
