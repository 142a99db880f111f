package mirror_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/checkpoint"
)

// consumeOnSource is an application's consumer group on the source
// cluster: a real group member that processes the records of topic below
// upto[p] in each partition p, commits what it processed and leaves the
// group (the application stops; its group stays, Empty, with its
// offsets).
func consumeOnSource(t *testing.T, c *cluster, group, topic string, upto map[int32]int64) {
	t.Helper()
	cl := testkit.Client(t, c.addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	ctx := testkit.Context(t, 20*time.Second)
	last := map[int32]*kgo.Record{}
	done := func() bool {
		for p, n := range upto {
			if r := last[p]; n > 0 && (r == nil || r.Offset+1 < n) {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			processed := map[int32]int64{}
			for p, r := range last {
				processed[p] = r.Offset + 1
			}
			t.Fatalf("group %s on %s: processed %v of %v", group, c.alias, processed, upto)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < upto[r.Partition] {
				last[r.Partition] = r
			}
		})
	}
	var processed []*kgo.Record
	for _, r := range last {
		processed = append(processed, r)
	}
	if err := cl.CommitRecords(ctx, processed...); err != nil {
		t.Fatalf("group %s commits on %s: %v", group, c.alias, err)
	}
}

// groupOffsets returns group's committed offsets of topic's partitions on
// c (partitions without one are absent).
func groupOffsets(c *cluster, group, topic string) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	if err := resp.Error(); err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}

// consumeAfterFailover runs group on the target cluster, reading topic
// from the group's committed offsets until every partition p reaches
// end[p], and returns the sequence numbers it read per partition, in
// order (values are "<origin>-<partition>-<seq>").
func consumeAfterFailover(t *testing.T, c *cluster, group, topic string, end map[int32]int64) map[int32][]int64 {
	t.Helper()
	// Resetting to the start makes a partition without a synced offset
	// show as a re-read of everything rather than as nothing read.
	cl := testkit.Client(t, c.addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	ctx := testkit.Context(t, 20*time.Second)
	// A partition resumed at its end has nothing to read.
	next, err := groupOffsets(c, group, topic)
	if err != nil {
		t.Fatalf("group %s on %s: %v", group, c.alias, err)
	}
	seqs := map[int32][]int64{}
	caughtUp := func() bool {
		for p, e := range end {
			if next[p] < e {
				return false
			}
		}
		return true
	}
	for !caughtUp() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group %s on %s reached %v of %v", group, c.alias, next, end)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seq, err := seqOf(r)
			if err != nil {
				t.Fatalf("%s-%d on %s: %v", r.Topic, r.Partition, c.alias, err)
			}
			seqs[r.Partition] = append(seqs[r.Partition], seq)
			next[r.Partition] = r.Offset + 1
		})
	}
	return seqs
}

// seqOf is the sequence number in the value of a record ordersRecords
// made, checked against the partition it is in.
func seqOf(r *kgo.Record) (int64, error) {
	parts := strings.Split(string(r.Value), "-")
	if len(parts) != 3 || parts[1] != strconv.Itoa(int(r.Partition)) {
		return 0, fmt.Errorf("record %q in partition %d", r.Value, r.Partition)
	}
	return strconv.ParseInt(parts[2], 10, 64)
}

// waitSequences waits until topic on c holds, in each of its partitions
// partitions, the records of sequence 0 to n-1 in order (by value only:
// an identity-named mirror adds a provenance header).
func waitSequences(t *testing.T, c *cluster, topic string, partitions int32, n int64) {
	t.Helper()
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		got, err := c.readAll(t, topic)
		if err != nil {
			return err
		}
		if len(got) != int(partitions) {
			return fmt.Errorf("%s on %s has %d partitions, want %d", topic, c.alias, len(got), partitions)
		}
		for p, rs := range got {
			if int64(len(rs)) != n {
				return fmt.Errorf("%s-%d on %s holds %d records, want %d", topic, p, c.alias, len(rs), n)
			}
			for i, r := range rs {
				if seq, err := seqOf(r); err != nil || seq != int64(i) {
					return fmt.Errorf("%s-%d on %s: record %d is %q", topic, p, c.alias, i, r.Value)
				}
			}
		}
		return nil
	})
}

// logFreshTranslation logs what offset at of orders' partition p would
// translate to through the offset syncs now on c (a store loaded from
// scratch, as a new checkpoint task would build it): when it is further
// back than offset.lag.max, only the checkpoints' monotonicity keeps the
// failed-over group's re-reads within it.
func logFreshTranslation(t *testing.T, c *cluster, p int32, at int64) {
	t.Helper()
	cl := testkit.Client(t, c.addr)
	defer cl.Close()
	store, err := checkpoint.LoadOffsetSyncs(testkit.Context(t, 10*time.Second), cl, "mm2-offset-syncs.b.internal")
	if err != nil {
		t.Fatalf("offset syncs on %s: %v", c.alias, err)
	}
	d, ok := checkpoint.TranslateOffset(store, "orders", p, at)
	t.Logf("orders-%d at %d would now translate to %d (%v)", p, at, d, ok)
}

// checkResumed checks what a partition's consumer read after failing
// over against where the group had stopped on the source (consumed, the
// first record it had not processed) and the source partition's end:
// every record from consumed on, in order and once, and before them at
// most lagMax records the group had processed already. It returns how
// many were read again.
func checkResumed(seqs []int64, consumed, end, lagMax int64) (reread int64, err error) {
	if len(seqs) == 0 {
		if consumed == end {
			return 0, nil
		}
		return 0, fmt.Errorf("read nothing, want records %d to %d", consumed, end-1)
	}
	first := seqs[0]
	for i, s := range seqs {
		if s != first+int64(i) {
			return 0, fmt.Errorf("read %d after %d: records out of order, missing or repeated: %v", s, seqs[i-1], seqs)
		}
	}
	if last := seqs[len(seqs)-1]; last != end-1 {
		return 0, fmt.Errorf("read up to record %d, want %d", last, end-1)
	}
	if first > consumed {
		return 0, fmt.Errorf("resumed at record %d: records %d to %d the group had not processed are missed", first, consumed, first-1)
	}
	if reread = consumed - first; reread > lagMax {
		return reread, fmt.Errorf("resumed at record %d: %d records the group had processed (up to %d) read again, more than offset.lag.max %d",
			first, reread, consumed-1, lagMax)
	}
	return reread, nil
}
