package checkpoint_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/records"
)

const (
	offsetLag  = 10 // offset.lag.max of the simulated source connector
	partitions = 2
	syncsTopic = "mm2-offset-syncs.b.internal"
)

// replica is a hand-made replication of topic "orders" of cluster a into
// "a.orders" of cluster b: every fifth upstream record is dropped (as a
// filtering transform would), so downstream offsets drift from upstream
// ones, and offset syncs are written to a's offset-syncs topic as
// MirrorSourceTask writes them (first record, then whenever
// offset.lag.max upstream offsets have passed since the last sync).
type replica struct {
	src, dst *kgo.Client
	// down[p][u] is where upstream record u of partition p landed, -1
	// when dropped.
	down [partitions][]int64
	// lastSync[p] is the last sync written for partition p.
	lastSync [partitions]records.OffsetSync
	synced   [partitions]bool
	next     [partitions]int64
}

func newReplica(t *testing.T, srcAddr, dstAddr string) *replica {
	manual := kgo.RecordPartitioner(kgo.ManualPartitioner())
	return &replica{src: testkit.Client(t, srcAddr, manual), dst: testkit.Client(t, dstAddr, manual)}
}

// produce writes n more records to partition p upstream, their replicas
// downstream, and the offset syncs.
func (rp *replica) produce(t *testing.T, p int32, n int) {
	t.Helper()
	var up, down, syncs []*kgo.Record
	for i := 0; i < n; i++ {
		u := int64(len(rp.down[p]))
		val := []byte(fmt.Sprintf("p%d-u%d", p, u))
		up = append(up, &kgo.Record{Topic: "orders", Partition: p, Value: val})
		if u%5 == 4 {
			rp.down[p] = append(rp.down[p], -1)
			continue
		}
		d := rp.next[p]
		rp.next[p]++
		rp.down[p] = append(rp.down[p], d)
		down = append(down, &kgo.Record{Topic: "a.orders", Partition: p, Value: val})
		if !rp.synced[p] || u-rp.lastSync[p].UpstreamOffset >= offsetLag {
			s := records.OffsetSync{Topic: "orders", Partition: p, UpstreamOffset: u, DownstreamOffset: d}
			syncs = append(syncs, &kgo.Record{Topic: syncsTopic, Partition: 0, Key: s.Key(), Value: s.Value()})
			rp.lastSync[p], rp.synced[p] = s, true
		}
	}
	ctx := testkit.Context(t, 20*time.Second)
	// Records land downstream before their syncs are written, as
	// MirrorSourceTask syncs only acknowledged records.
	if err := rp.src.ProduceSync(ctx, up...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := rp.dst.ProduceSync(ctx, down...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := rp.src.ProduceSync(ctx, syncs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// end is the upstream end offset of partition p.
func (rp *replica) end(p int32) int64 { return int64(len(rp.down[p])) }

// firstAtOrAfter is the downstream offset of the first replicated record
// at or after upstream offset u (the downstream end if none).
func (rp *replica) firstAtOrAfter(p int32, u int64) int64 {
	for ; u < rp.end(p); u++ {
		if d := rp.down[p][u]; d >= 0 {
			return d
		}
	}
	return rp.next[p]
}

// replicatedFrom counts the replicated records at or after upstream u.
func (rp *replica) replicatedFrom(p int32, u int64) int {
	n := 0
	for ; u < rp.end(p); u++ {
		if rp.down[p][u] >= 0 {
			n++
		}
	}
	return n
}
