package mm2

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/records"
)

// TestStatus lays out by hand what a half-done a->hub flow leaves on two
// brokers — an offset sync, part of a topic copied, a topic not created
// yet, a heartbeat — and checks the lag Status reads from it.
func TestStatus(t *testing.T) {
	a := testkit.StartBroker(t, nil)
	hub := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	base := time.UnixMilli(1_700_000_000_000)
	now := base.Add(time.Minute)

	for _, b := range []struct {
		addr   string
		topics []string
	}{{a.Addr, []string{"orders", "payments", "other", "mm2-offset-syncs.hub.internal", "heartbeats"}},
		{hub.Addr, []string{"a.orders", "a.heartbeats"}}} {
		adm := testkit.Admin(t, b.addr)
		if _, err := adm.CreateTopics(ctx, 1, 1, nil, b.topics...); err != nil {
			t.Fatal(err)
		}
	}
	// orders has a second partition, empty on both sides: it is caught up
	// without any offset sync.
	for _, b := range []struct{ addr, topic string }{{a.Addr, "orders"}, {hub.Addr, "a.orders"}} {
		if _, err := testkit.Admin(t, b.addr).CreatePartitions(ctx, 1, b.topic); err != nil {
			t.Fatal(err)
		}
	}
	produce := func(addr string, rs ...*kgo.Record) {
		t.Helper()
		// Every record goes to partition 0 (its zero Partition).
		cl := testkit.Client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var orders, copied, payments []*kgo.Record
	for i := range 10 {
		orders = append(orders, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
		payments = append(payments, &kgo.Record{Topic: "payments", Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	for i := range 6 {
		copied = append(copied, &kgo.Record{Topic: "a.orders", Value: []byte{byte(i)}})
	}
	produce(a.Addr, orders...)
	produce(a.Addr, payments[:4]...)
	produce(hub.Addr, copied...)
	// Upstream 3 was written at downstream 2 (the mirror had already
	// copied two records it replicated before an older sync): the hub has
	// orders up to 3 + (6 - 2) = 7, three to go, the first written at
	// base+7s.
	sync := records.OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: 3, DownstreamOffset: 2}
	older := records.OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: 0, DownstreamOffset: 0}
	produce(a.Addr,
		&kgo.Record{Topic: "mm2-offset-syncs.hub.internal", Key: older.Key(), Value: older.Value()},
		&kgo.Record{Topic: "mm2-offset-syncs.hub.internal", Key: sync.Key(), Value: sync.Value()})
	hb := records.Heartbeat{SourceClusterAlias: "hub", TargetClusterAlias: "a", Timestamp: now.Add(-2 * time.Second).UnixMilli()}
	oldHB := records.Heartbeat{SourceClusterAlias: "hub", TargetClusterAlias: "a", Timestamp: now.Add(-3 * time.Second).UnixMilli()}
	produce(hub.Addr, &kgo.Record{Topic: "a.heartbeats", Key: oldHB.Key(), Value: oldHB.Value()},
		&kgo.Record{Topic: "a.heartbeats", Key: hb.Key(), Value: hb.Value()})

	c := mustParse(t, "clusters", "a, hub", "a.bootstrap.servers", a.Addr, "hub.bootstrap.servers", hub.Addr,
		"a->hub.enabled", "true", "a->hub.topics", "orders, payments, heartbeats")
	st := Status(ctx, c, nil, func() time.Time { return now })
	// hub->a emits heartbeats only: it has nothing to measure.
	if len(st) != 1 || st[0].Flow != (Flow{"a", "hub"}) || st[0].Err != nil {
		t.Fatalf("status %+v", st)
	}
	got := st[0]
	want := []TopicLag{
		{Topic: "orders", RemoteTopic: "a.orders", RemoteExists: true, Partitions: 2, Records: 3, Seconds: 53, FromOffsetSyncs: true},
		{Topic: "payments", RemoteTopic: "a.payments", Partitions: 1, Records: 4, Seconds: 60},
	}
	if len(got.Topics) != len(want) {
		t.Fatalf("topics %+v, want %+v", got.Topics, want)
	}
	for i := range want {
		if got.Topics[i] != want[i] {
			t.Errorf("topic %d: %+v, want %+v", i, got.Topics[i], want[i])
		}
	}
	if got.HeartbeatAge != 2*time.Second {
		t.Errorf("heartbeat age %v, want 2s (the newest of the heartbeats)", got.HeartbeatAge)
	}

	var b strings.Builder
	if err := PrintStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"a->hub  orders   a.orders                    2           3              53.0           offset syncs",
		"a->hub  payments a.payments (not created yet) 1           4              60.0           -",
		"a->hub: newest heartbeat 2.0 s old",
	} {
		if !strings.Contains(normalize(b.String()), normalize(line)) {
			t.Errorf("output lacks %q:\n%s", line, b.String())
		}
	}

	// Caught up without syncs: the copy has every record.
	produce(hub.Addr, &kgo.Record{Topic: "a.orders"}, &kgo.Record{Topic: "a.orders"}, &kgo.Record{Topic: "a.orders"},
		&kgo.Record{Topic: "a.orders"})
	st = Status(ctx, c, nil, func() time.Time { return now })
	if o := st[0].Topics[0]; o.Records != 0 || o.Seconds != 0 {
		t.Errorf("caught up orders: %+v", o)
	}
}

// TestStatusUnreachable: a flow whose cluster cannot be reached reports
// the error within the deadline, not a hang.
func TestStatusUnreachable(t *testing.T) {
	c := mustParse(t, "clusters", "a, b", "a.bootstrap.servers", "127.0.0.1:1", "b.bootstrap.servers", "127.0.0.1:1",
		"a->b.enabled", "true", "emit.heartbeats.enabled", "false")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	st := Status(ctx, c, nil, nil)
	if len(st) != 1 || st[0].Err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("status %+v after %v", st, time.Since(start))
	}
	var b strings.Builder
	PrintStatus(&b, st)
	if !strings.Contains(b.String(), "a->b") || !strings.Contains(b.String(), "error:") {
		t.Errorf("output:\n%s", b.String())
	}
}

// normalize collapses runs of spaces, so column widths do not matter.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
