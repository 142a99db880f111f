package checkpoint

import (
	"reflect"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
	"github.com/fjordhq/fjord/mirror/records"
)

type allTopics struct{}

func (allTopics) ShouldReplicateTopic(string) bool { return true }

func newCheckpointer(syncs *OffsetSyncStore, store *checkpointStore) *checkpointer {
	return &checkpointer{
		sourceAlias: "source1", targetAlias: "target2", policy: policy.NewDefault(".", true),
		topics: allTopics{}, syncs: syncs, store: store,
	}
}

func tp(topic string, p int32) connect.TopicPartition {
	return connect.TopicPartition{Topic: topic, Partition: p}
}

func TestRemoteTopicNaming(t *testing.T) {
	c := newCheckpointer(nil, newCheckpointStore())
	for up, want := range map[string]string{
		"topic3":         "source1.topic3",         // local to the source: prefixed
		"target2.topic3": "topic3",                 // came from the target: back to its name
		"source6.topic7": "source1.source6.topic7", // came from a third cluster: prefixed again
	} {
		if got := c.remoteTopic(up); got != want {
			t.Errorf("remoteTopic(%q) = %q, want %q", up, got, want)
		}
	}
}

func TestCheckpointTranslation(t *testing.T) {
	syncs := startedStore(true)
	c := newCheckpointer(syncs, newCheckpointStore())
	syncs.Sync("topic1", 2, 3, 4)
	syncs.Sync("target2.topic5", 6, 7, 8)

	cp, ok := c.checkpoint("group9", tp("topic1", 2), committed{offset: 10})
	want := records.Checkpoint{ConsumerGroupID: "group9", Topic: "source1.topic1", Partition: 2, UpstreamOffset: 10, DownstreamOffset: 5}
	if !ok || cp != want {
		t.Fatalf("checkpoint = %+v, %v; want %+v", cp, ok, want)
	}
	rec := checkpointRecord(cp, "source1.checkpoints.internal", 123)
	if rec.Topic != "source1.checkpoints.internal" || rec.Partition != 0 || rec.Timestamp != 123 {
		t.Fatalf("record topic/partition/timestamp = %s/%d/%d", rec.Topic, rec.Partition, rec.Timestamp)
	}
	if rec.KeySchema.Type != connect.Bytes || rec.ValueSchema.Type != connect.Bytes {
		t.Fatalf("schemas %v/%v, want BYTES", rec.KeySchema.Type, rec.ValueSchema.Type)
	}
	if !reflect.DeepEqual(rec.SourcePartition, map[string]any{"group": "group9", "topic": "source1.topic1", "partition": int32(2)}) {
		t.Fatalf("source partition %v", rec.SourcePartition)
	}
	if !reflect.DeepEqual(rec.SourceOffset, map[string]any{"offset": int64(0)}) {
		t.Fatalf("source offset %v", rec.SourceOffset)
	}
	decoded, err := records.DecodeCheckpoint(rec.Key.([]byte), rec.Value.([]byte))
	if err != nil || decoded != cp {
		t.Fatalf("record decodes to %+v, %v; want %+v", decoded, err, cp)
	}

	// A topic that came from the target loses its prefix.
	cp, ok = c.checkpoint("group11", tp("target2.topic5", 6), committed{offset: 12, metadata: "m"})
	want = records.Checkpoint{ConsumerGroupID: "group11", Topic: "topic5", Partition: 6, UpstreamOffset: 12, DownstreamOffset: 9, Metadata: "m"}
	if !ok || cp != want {
		t.Fatalf("checkpoint = %+v, %v; want %+v", cp, ok, want)
	}
	// Exactly at the sync.
	cp, _ = c.checkpoint("group13", tp("target2.topic5", 6), committed{offset: 7})
	if cp.UpstreamOffset != 7 || cp.DownstreamOffset != 8 {
		t.Fatalf("checkpoint at the sync = %+v, want 7 -> 8", cp)
	}
}

func TestNoCheckpointWithoutSyncs(t *testing.T) {
	syncs := startedStore(true)
	c := newCheckpointer(syncs, newCheckpointStore())
	syncs.Sync("topic1", 0, 3, 4)
	got := c.checkpointsForGroup("group9", map[connect.TopicPartition]committed{
		tp("topic1", 1): {offset: 10}, // no syncs for this partition
		tp("topic1", 0): {offset: 10},
		tp("topic1", 2): {offset: 1}, // would need a sync before 3
	})
	if len(got) != 1 || got[tp("source1.topic1", 0)].DownstreamOffset != 5 {
		t.Fatalf("checkpoints = %+v; want only source1.topic1-0 -> 5", got)
	}
}

func TestCheckpointTopicFilter(t *testing.T) {
	syncs := startedStore(true)
	c := newCheckpointer(syncs, newCheckpointStore())
	c.topics = onlyTopic("b")
	syncs.Sync("a", 0, 0, 0)
	syncs.Sync("b", 0, 0, 0)
	got := c.checkpointsForGroup("g", map[connect.TopicPartition]committed{tp("a", 0): {offset: 5}, tp("b", 0): {offset: 5}})
	if len(got) != 1 || got[tp("source1.b", 0)].UpstreamOffset != 5 {
		t.Fatalf("checkpoints = %+v; want only source1.b-0", got)
	}
}

type onlyTopic string

func (o onlyTopic) ShouldReplicateTopic(t string) bool { return t == string(o) }

// TestCheckpointsMonotonicWhenStoreForgets: syncs pushed out of the store
// make the same upstream offset translate lower; the checkpoint is then
// not emitted, unless the group itself rewound upstream.
func TestCheckpointsMonotonicWhenStoreForgets(t *testing.T) {
	syncs := startedStore(true)
	store := newCheckpointStore()
	c := newCheckpointer(syncs, store)
	up, down := int64(11), int64(4)
	syncs.Sync("topic1", 0, up, down)
	up, down = up+1, down+1
	syncs.Sync("topic1", 0, up, down)
	up, down = up+1, down+1
	groupOffset, expected := up, down
	if got, _ := syncs.Translate("topic1", 0, groupOffset); got != expected {
		t.Fatalf("Translate = %d, want %d", got, expected)
	}
	remote := tp("source1.topic1", 0)
	emit := func(off int64) bool {
		cps := c.checkpointsForGroup("g1", map[connect.TopicPartition]committed{tp("topic1", 0): {offset: off}})
		store.update("g1", cps)
		_, ok := cps[remote]
		return ok
	}
	if !emit(groupOffset) {
		t.Fatal("first checkpoint not emitted")
	}
	for i := 0; i < 4; i++ {
		syncs.Sync("topic1", 0, up, down)
		up, down = up+1, down+1
	}
	syncs.Sync("topic1", 0, up, down)
	if got, _ := syncs.Translate("topic1", 0, groupOffset); got == expected {
		t.Fatal("store still translates as before; the test does not exercise a lost sync")
	}
	if emit(groupOffset) {
		t.Fatal("emitted a checkpoint that moves the downstream offset back")
	}
	// The group rewound upstream: emitted although downstream goes back.
	if !emit(groupOffset - 1) {
		t.Fatal("no checkpoint after an upstream rewind")
	}
}

// TestRestartKeepsCheckpointsMonotonic: after a restart the store has
// other syncs; checkpoints loaded from the topic stop translations that
// would go behind them.
func TestRestartKeepsCheckpointsMonotonic(t *testing.T) {
	syncs := NewOffsetSyncStore(false)
	for i := int64(100); i <= 300; i += 100 {
		syncs.Sync("t1", 0, i, i)
	}
	syncs.MarkReadToEnd()
	c := newCheckpointer(syncs, newCheckpointStore())
	cps := c.checkpointsForGroup("group1", map[connect.TopicPartition]committed{tp("t1", 0): {offset: 250}})
	remote := tp("source1.t1", 0)
	if want := (records.Checkpoint{ConsumerGroupID: "group1", Topic: "source1.t1", UpstreamOffset: 250, DownstreamOffset: 201}); cps[remote] != want {
		t.Fatalf("checkpoint = %+v, want %+v", cps[remote], want)
	}

	// Restart: the syncs topic now holds 175, 275, 375, 475 and the
	// checkpoint 250 -> 201 was loaded from the checkpoints topic.
	syncs2 := NewOffsetSyncStore(false)
	for i := int64(175); i <= 475; i += 100 {
		syncs2.Sync("t1", 0, i, i)
	}
	syncs2.MarkReadToEnd()
	store2 := newCheckpointStore()
	store2.update("group1", cps)
	c2 := newCheckpointer(syncs2, store2)
	for _, off := range []int64{250, 370} {
		if got, _ := syncs2.Translate("t1", 0, off); got != 176 {
			t.Fatalf("Translate(%d) = %d, want 176", off, got)
		}
		if got := c2.checkpointsForGroup("group1", map[connect.TopicPartition]committed{tp("t1", 0): {offset: off}}); len(got) != 0 {
			t.Fatalf("upstream %d: emitted %+v behind the loaded checkpoint", off, got)
		}
	}
	got := c2.checkpointsForGroup("group1", map[connect.TopicPartition]committed{tp("t1", 0): {offset: 400}})
	if want := (records.Checkpoint{ConsumerGroupID: "group1", Topic: "source1.t1", UpstreamOffset: 400, DownstreamOffset: 376}); got[remote] != want {
		t.Fatalf("checkpoint = %+v, want %+v", got[remote], want)
	}
}

func TestOffsetsToSync(t *testing.T) {
	cp := func(down int64) records.Checkpoint { return records.Checkpoint{DownstreamOffset: down, Metadata: "m"} }
	cps := map[connect.TopicPartition]records.Checkpoint{
		tp("t", 0): cp(101), // target behind: moves forward
		tp("t", 1): cp(51),  // target ahead: never moved back
		tp("t", 2): cp(10),  // target equal: nothing to do
		tp("t", 3): cp(7),   // target reset to -1 (some clients do): synced
		tp("t", 4): cp(9),   // target has no offset: synced
	}
	target := map[connect.TopicPartition]int64{tp("t", 0): 100, tp("t", 1): 60, tp("t", 2): 10, tp("t", 3): -1}
	got := offsetsToSync(cps, target)
	want := map[connect.TopicPartition]records.Checkpoint{tp("t", 0): cp(101), tp("t", 3): cp(7), tp("t", 4): cp(9)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("offsetsToSync = %v, want %v", got, want)
	}
	// A group that does not exist on the target gets everything.
	if got := offsetsToSync(cps, nil); !reflect.DeepEqual(got, cps) {
		t.Fatalf("offsetsToSync(nil target) = %v, want all", got)
	}
}

func TestSplitGroups(t *testing.T) {
	got := splitGroups([]string{"a", "b", "c", "d", "e"}, 3)
	want := [][]string{{"a", "b"}, {"c", "d"}, {"e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("splitGroups = %v, want %v", got, want)
	}
}

func TestValidateCrossKeys(t *testing.T) {
	c := &Connector{}
	props := map[string]string{"source.cluster.alias": "a", "emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"}
	errs := map[string][]string{}
	for _, v := range c.Validate(props) {
		if len(v.Errors) > 0 {
			errs[v.Name] = v.Errors
		}
	}
	want := map[string][]string{
		"emit.checkpoints.enabled":  {"MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false"},
		"emit.offset-syncs.enabled": {"MirrorCheckpointConnector can't run without offset syncs"},
	}
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("validate errors = %v, want %v", errs, want)
	}
	// A disabled connector is not checked.
	props["enabled"] = "false"
	for _, v := range c.Validate(props) {
		if len(v.Errors) > 0 {
			t.Fatalf("disabled connector: %s: %v", v.Name, v.Errors)
		}
	}
}

func TestAlterOffsets(t *testing.T) {
	c := &Connector{}
	ok := []connect.SourcePartitionOffset{
		{Partition: map[string]any{"group": "g", "topic": "t", "partition": float64(3)}, Offset: map[string]any{"offset": float64(0)}},
		{Partition: map[string]any{"anything": 1}, Offset: nil}, // tombstones are always fine
	}
	if handled, err := c.AlterOffsets(nil, ok); err != nil || !handled {
		t.Fatalf("AlterOffsets = %v, %v", handled, err)
	}
	for _, bad := range []connect.SourcePartitionOffset{
		{Partition: map[string]any{"topic": "t", "partition": 3}, Offset: map[string]any{"offset": 0}},
		{Partition: map[string]any{"group": "g", "topic": 5, "partition": 3}, Offset: map[string]any{"offset": 0}},
		{Partition: map[string]any{"group": "g", "topic": "t", "partition": -1}, Offset: map[string]any{"offset": 0}},
		{Partition: map[string]any{"group": "g", "topic": "t", "partition": 3}, Offset: map[string]any{"offset": 7}},
		{Partition: map[string]any{"group": "g", "topic": "t", "partition": 3}, Offset: map[string]any{}},
	} {
		if _, err := c.AlterOffsets(nil, []connect.SourcePartitionOffset{bad}); err == nil {
			t.Errorf("AlterOffsets accepted %+v", bad)
		}
	}
}
