package source

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/records"
)

// ordersRecords makes n records per partition of "orders" numbered from
// first: keys, values, headers (repeated keys, a null value) and
// timestamps of their own, with a null key, an empty value and a
// tombstone among them.
func ordersRecords(partitions int32, first, n int) []*kgo.Record {
	base := time.UnixMilli(1_600_000_000_000)
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := first; i < first+n; i++ {
			r := &kgo.Record{Topic: "orders", Partition: p,
				Key:       []byte(fmt.Sprintf("k-%d-%d", p, i)),
				Value:     []byte(fmt.Sprintf("v-%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(int(p)*1000+i) * time.Millisecond),
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(strconv.Itoa(i))},
					{Key: "h", Value: []byte("again")}, {Key: "null", Value: nil}},
			}
			switch i % 10 {
			case 3:
				r.Key = nil
			case 5:
				r.Value = []byte{}
			case 7:
				r.Value = nil
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// checkMirrored waits until remote holds exactly the records of topic on
// source, partition by partition and in order.
func checkMirrored(t *testing.T, source, target *cluster, topic, remote string, wait time.Duration) {
	t.Helper()
	testkit.CheckFor(t, wait, 200*time.Millisecond, func() error {
		want, err := source.readAll(t, topic)
		if err != nil {
			return err
		}
		got, err := target.readAll(t, remote)
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return fmt.Errorf("%s has %d partitions, %s %d", remote, len(got), topic, len(want))
		}
		for p, ws := range want {
			gs := got[p]
			if len(gs) != len(ws) {
				return fmt.Errorf("%s partition %d has %d records, want %d", remote, p, len(gs), len(ws))
			}
			for i := range ws {
				if err := sameRecord(ws[i], gs[i]); err != nil {
					return fmt.Errorf("%s partition %d record %d: %w", remote, p, i, err)
				}
			}
		}
		return nil
	})
}

func TestMirrorRecords(t *testing.T) {
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "orders", 3, nil)
	a.createTopic(t, "other", 1, nil)
	a.createTopic(t, "heartbeats", 1, nil)
	a.produce(t, ordersRecords(3, 0, 20)...)
	a.produce(t, &kgo.Record{Topic: "heartbeats", Partition: 0, Key: []byte("hb"), Value: []byte("beat")})

	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, b, "")
	w.Create(t, mirrorConfig("mirror", a, b, "topics", "orders"))

	// DefaultReplicationPolicy names the remote topic a.orders; keys,
	// values, headers and timestamps arrive in their partitions, in order.
	checkMirrored(t, a, b, "orders", "a.orders", 20*time.Second)
	// Records written while the connector runs follow.
	a.produce(t, ordersRecords(3, 20, 15)...)
	checkMirrored(t, a, b, "orders", "a.orders", 15*time.Second)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(b.topics(t), "a.other") {
		t.Error("a topic outside topics was mirrored")
	}
	// MM2 replicates the heartbeats topic whatever topics says
	// (heartbeats.replication.enabled).
	checkMirrored(t, a, b, "heartbeats", "a.heartbeats", 5*time.Second)

	// Offset syncs on the source, as MM2 writes them: every partition's
	// first record, then (the partitions being quiet) the last one at a
	// commit; remote offsets equal the source's here.
	testkit.CheckFor(t, 10*time.Second, 200*time.Millisecond, func() error {
		syncs, err := a.readAll(t, "mm2-offset-syncs.b.internal")
		if err != nil {
			return err
		}
		last := map[int32]records.OffsetSync{}
		first := map[int32]bool{}
		for _, r := range syncs[0] {
			s, err := records.DecodeOffsetSync(r.Key, r.Value)
			if err != nil {
				return fmt.Errorf("offset sync %d: %w", r.Offset, err)
			}
			if s.Topic == "heartbeats" {
				continue
			}
			if s.Topic != "orders" || s.UpstreamOffset != s.DownstreamOffset {
				return fmt.Errorf("offset sync %+v", s)
			}
			if s.UpstreamOffset == 0 {
				first[s.Partition] = true
			}
			last[s.Partition] = s
		}
		for p := int32(0); p < 3; p++ {
			if !first[p] {
				return fmt.Errorf("no sync of partition %d's first record", p)
			}
			if last[p].UpstreamOffset != 34 {
				return fmt.Errorf("partition %d last synced at %d, want 34", p, last[p].UpstreamOffset)
			}
		}
		return nil
	})

	// MM2's metrics, per remote partition.
	testkit.CheckFor(t, 5*time.Second, 100*time.Millisecond, func() error {
		for p := range 3 {
			labels := map[string]string{"source": "a", "target": "b", "topic": "a.orders", "partition": strconv.Itoa(p)}
			m := gather(t, reg, "fjord_mirror_source_record_count", labels)
			if m == nil || m.GetCounter().GetValue() != 35 {
				return fmt.Errorf("record_count of partition %d: %v", p, m)
			}
			if m := gather(t, reg, "fjord_mirror_source_replication_latency_ms_max", labels); m == nil || m.GetGauge().GetValue() <= 0 {
				return fmt.Errorf("replication_latency_ms_max of partition %d: %v", p, m)
			}
		}
		return nil
	})
}
