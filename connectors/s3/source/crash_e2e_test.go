package source_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	offsetstore "github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// A worker killed mid-restore and started again with the same offsets
// file loses nothing and keeps each partition's order, and it resumes
// right after the last committed record: what it sends twice is only
// what was sent after the last offset flush (Connect's at-least-once:
// the runtime has no exactly-once source support). A clean stop commits
// everything: the next run adds exactly the objects written since.
func TestRestoreResumesAfterCrash(t *testing.T) {
	testkit.SkipShort(t, "S3 source crash test (MinIO and a broker)")
	s3 := testkit.StartS3(t)
	s3.CreateBucket(t, "backup-crash")
	brk := testkit.StartBroker(t, nil)
	props := s3.Props("backup-crash")
	props["format.class"] = jsonFormat
	bk := newBackup(t, props, false)
	const topic, objects, perObject = "ledger", 50, 100
	const perPart = objects * perObject
	for p := int32(0); p < 2; p++ {
		for i := 0; i < objects; i++ {
			bk.write(topic, fmt.Sprintf("partition=%d", p), p, int64(i*perObject), perObject)
		}
	}
	createTopic(t, brk.Addr, topic, 2)
	offsets := filepath.Join(t.TempDir(), "connect.offsets")
	const name = "restore-crash"
	// The connector reaches S3 through a proxy adding latency, so that
	// offsets are committed well before the restore ends.
	proxy := faultproxy.Start(t, strings.TrimPrefix(s3.Endpoint, "http://"))
	proxy.Delay(5 * time.Millisecond)
	cfg := sourceConfig(name, props, "record.batch.max.size", "10", "store.url", "http://"+proxy.Addr())

	w1 := connectkit.Start(t, brk.Addr, connectkit.Options{OffsetsFile: offsets})
	w1.Create(t, cfg)
	// Crash once both partitions have a committed offset.
	testkit.CheckFor(t, 60*time.Second, 5*time.Millisecond, func() error {
		if c := committed(t, offsets, name); c[0] == 0 || c[1] == 0 {
			return fmt.Errorf("committed so far: %v", c)
		}
		return nil
	})
	w1.Crash()
	crashedAt := total(t, brk.Addr, topic)
	if crashedAt >= 2*perPart {
		t.Fatalf("the restore finished (%d records) before the crash: nothing tested", crashedAt)
	}
	resumeAt := committed(t, offsets, name)

	w2 := connectkit.Start(t, brk.Addr, connectkit.Options{OffsetsFile: offsets})
	w2.Create(t, cfg)
	var byPart map[int32][]restored
	testkit.CheckFor(t, 90*time.Second, 200*time.Millisecond, func() error {
		if err := w2.Failed(); err != nil {
			t.Fatal(err)
		}
		n := total(t, brk.Addr, topic)
		if n < 2*perPart {
			return fmt.Errorf("%d records, want at least %d", n, 2*perPart)
		}
		byPart = consume(t, brk.Addr, topic, int(n))
		// The count includes what the restart sent twice: it can reach
		// 2*perPart before a partition's last records are restored.
		for p := int32(0); p < 2; p++ {
			if recs := byPart[p]; len(recs) == 0 || recs[len(recs)-1].id != perPart-1 {
				return fmt.Errorf("partition %d not restored to its last record yet", p)
			}
		}
		return nil
	})
	for p := int32(0); p < 2; p++ {
		checkReplay(t, p, byPart[p], perPart, resumeAt[p])
	}
	t.Logf("crashed after %d records with %v committed; %d sent again after the restart",
		crashedAt, resumeAt, total(t, brk.Addr, topic)-2*perPart)

	// A clean stop, more objects, a new worker: exactly the new records.
	w2.Close()
	before := total(t, brk.Addr, topic)
	for p := int32(0); p < 2; p++ {
		bk.write(topic, fmt.Sprintf("partition=%d", p), p, perPart, 7)
	}
	w3 := connectkit.Start(t, brk.Addr, connectkit.Options{OffsetsFile: offsets})
	w3.Create(t, cfg)
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := total(t, brk.Addr, topic); n < before+14 {
			return fmt.Errorf("%d records, want %d", n, before+14)
		}
		return nil
	})
	time.Sleep(time.Second)
	if n := total(t, brk.Addr, topic); n != before+14 {
		t.Fatalf("after a clean restart the topic grew by %d records, want exactly the 14 new ones", n-before)
	}
	final := consume(t, brk.Addr, topic, int(before+14))
	for p := int32(0); p < 2; p++ {
		tail := final[p][len(final[p])-7:]
		for i, r := range tail {
			if r.id != int64(perPart+i) {
				t.Fatalf("partition %d: new record %d has id %d", p, i, r.id)
			}
		}
	}
}

// committed reads the offsets file: per partition, how many records
// (ids 0..n-1) the committed offset covers.
func committed(t *testing.T, path, connector string) map[int32]int64 {
	t.Helper()
	st, err := offsetstore.OpenFileOffsetStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.All(context.Background(), connector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, po := range all {
		p, start, rec := toInt(t, po.Partition["partition"]), toInt(t, po.Offset["start"]), toInt(t, po.Offset["record"])
		out[int32(p)] = start + rec + 1
	}
	return out
}

func toInt(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case json.Number:
		n, err := x.Int64()
		if err == nil {
			return n
		}
	}
	t.Fatalf("offset field %v (%T) is not an integer", v, v)
	return 0
}

// checkReplay checks a partition holds ids 0..n-1 in order, except for
// at most one rewind — the restart sending again what was sent after the
// committed offset, so the rewind lands exactly on resumeAt: no gap.
func checkReplay(t *testing.T, p int32, recs []restored, n int, resumeAt int64) {
	t.Helper()
	rewinds := 0
	next := int64(0)
	for i, r := range recs {
		switch {
		case r.id == next:
		case r.id < next && rewinds == 0 && r.id == resumeAt:
			rewinds++
		default:
			t.Fatalf("partition %d record %d: id %d after %d (gap, or a rewind not to the committed %d)", p, i, r.id, next-1, resumeAt)
		}
		next = r.id + 1
	}
	if next != int64(n) {
		t.Fatalf("partition %d ends at id %d, want %d", p, next-1, n-1)
	}
}
