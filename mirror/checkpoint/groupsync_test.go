package checkpoint

import (
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/records"
)

// commitCounter counts OffsetCommit requests a client sends.
type commitCounter struct{ n atomic.Int32 }

func (c *commitCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 8 && err == nil { // OffsetCommit
		c.n.Add(1)
	}
}

// TestGroupSyncOnlyIdleGroups: offsets are written to a group that is
// empty or absent on the target, never to one with members (no commit is
// even attempted), and never backwards.
func TestGroupSyncOnlyIdleGroups(t *testing.T) {
	testkit.SkipShort(t, "a broker and a consumer group")
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	commitAt := func(group string, at int64) {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "t", Partition: 0, At: at, LeaderEpoch: -1})
		if resp, err := adm.CommitOffsets(ctx, group, offs); err != nil || resp.Error() != nil {
			t.Fatalf("commit %s: %v %v", group, err, resp.Error())
		}
	}
	commitAt("idle", 5)
	commitAt("ahead", 9)
	// "busy" has a member consuming on the target.
	busy := testkit.Client(t, b.Addr, kgo.ConsumerGroup("busy"), kgo.ConsumeTopics("t"), kgo.DisableAutoCommit())
	go busy.PollFetches(ctx)
	testkit.CheckFor(t, 15*time.Second, 100*time.Millisecond, func() error {
		d, err := adm.DescribeGroups(ctx, "busy")
		if err != nil {
			return err
		}
		if s := d["busy"].State; s != "Stable" {
			return fmt.Errorf("busy is %s", s)
		}
		return nil
	})

	store := newCheckpointStore()
	cp := func(g string, down int64) map[connect.TopicPartition]records.Checkpoint {
		return map[connect.TopicPartition]records.Checkpoint{tp("t", 0): {ConsumerGroupID: g, Topic: "t", UpstreamOffset: down * 2, DownstreamOffset: down}}
	}
	store.update("idle", cp("idle", 8))   // Empty, behind: moved to 8
	store.update("ahead", cp("ahead", 6)) // Empty, ahead at 9: untouched
	store.update("busy", cp("busy", 3))   // Stable: untouched
	store.update("new", cp("new", 4))     // absent: created at 4

	counter := &commitCounter{}
	cl := testkit.Client(t, b.Addr, kgo.WithHooks(counter))
	s := &groupSyncer{target: kadm.NewClient(cl), store: store, log: slog.Default()}
	got := s.syncOnce(ctx)
	want := map[string]map[connect.TopicPartition]int64{"idle": {tp("t", 0): 8}, "new": {tp("t", 0): 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("synced %v, want %v", got, want)
	}
	if n := counter.n.Load(); n != 2 {
		t.Fatalf("%d OffsetCommit requests, want 2 (idle and new only)", n)
	}
	fetched := adm.FetchManyOffsets(ctx, "idle", "ahead", "busy", "new")
	for g, at := range map[string]int64{"idle": 8, "ahead": 9, "new": 4} {
		if o, ok := fetched[g].Fetched.Lookup("t", 0); !ok || o.At != at {
			t.Errorf("group %s at %+v, want %d", g, o, at)
		}
	}
	if o, ok := fetched["busy"].Fetched.Lookup("t", 0); ok && o.At >= 0 {
		t.Errorf("busy group was given offset %d", o.At)
	}
}
