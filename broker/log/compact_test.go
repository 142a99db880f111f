package log

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

func compactConfig() Config {
	cfg := testConfig()
	cfg.Compact, cfg.Delete = true, false
	cfg.SegmentBytes = 1000
	cfg.IndexIntervalBytes = 64
	cfg.MinCleanableDirtyRatio = 0.01
	return cfg
}

// kv builds one batch of keyed records (a nil value is a tombstone, a ""
// key means no key).
func kv(t testing.TB, codec batch.Codec, ts int64, pairs ...string) []byte {
	t.Helper()
	var recs []batch.Record
	for i := 0; i+1 < len(pairs); i += 2 {
		r := batch.Record{Offset: int64(i / 2), Timestamp: ts}
		if pairs[i] != "" {
			r.Key = []byte(pairs[i])
		}
		if pairs[i+1] != "<nil>" {
			r.Value = []byte(pairs[i+1])
		}
		recs = append(recs, r)
	}
	b, err := batch.Build(nil, batch.BuildHeader{}, recs, codec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type logRecord struct {
	off        int64
	key, value string
}

// records decodes every record in the log, in offset order.
func records(t testing.TB, l *Log) []logRecord {
	t.Helper()
	var out []logRecord
	for _, b := range readAllBatches(t, l, l.LogStartOffset()) {
		err := b.Records(func(r *batch.Record) error {
			v := "<nil>"
			if r.Value != nil {
				v = string(r.Value)
			}
			k := ""
			if r.Key != nil {
				k = string(r.Key)
			}
			out = append(out, logRecord{r.Offset, k, v})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// latest is what compaction must leave of recs below upTo: the last
// record per key (keyless records dropped), in offset order.
func latest(recs []logRecord, upTo int64) []logRecord {
	last := map[string]int64{}
	for _, r := range recs {
		if r.off < upTo && r.key != "" {
			last[r.key] = r.off
		}
	}
	var out []logRecord
	for _, r := range recs {
		if r.off >= upTo || (r.key != "" && last[r.key] == r.off) {
			out = append(out, r)
		}
	}
	return out
}

func sameRecords(t *testing.T, got, want []logRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestCompactKeepsLatestPerKey(t *testing.T) {
	for _, codec := range []batch.Codec{batch.CodecNone, batch.CodecGzip, batch.CodecSnappy, batch.CodecLZ4, batch.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			c := newClock()
			l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), compactConfig(), testOpts(c), false)
			defer l.Close()
			for i := 0; i < 60; i++ {
				mustAppend(t, l, kv(t, codec, c.Now().UnixMilli(),
					fmt.Sprintf("k%d", i%7), fmt.Sprintf("v%d", i),
					fmt.Sprintf("k%d", (i+3)%7), fmt.Sprintf("w%d", i),
					"", "keyless"))
			}
			before := records(t, l)
			leo, segsBefore := l.LogEndOffset(), l.NumSegments()
			active := l.active().base
			st, ok, err := l.Compact(1<<20, false)
			if err != nil || !ok {
				t.Fatalf("compact: %v %v", ok, err)
			}
			if st.EndOffset != active {
				t.Fatalf("cleaned to %d, want the active segment's base %d", st.EndOffset, active)
			}
			sameRecords(t, records(t, l), latest(before, active))
			if l.LogEndOffset() != leo || l.NumSegments() > segsBefore {
				t.Fatalf("log end %d (was %d), %d segments (was %d)", l.LogEndOffset(), leo, l.NumSegments(), segsBefore)
			}
			for _, b := range readAllBatches(t, l, 0) {
				if b.Codec() != codec {
					t.Fatalf("batch %v recompressed as %s", b, b.Codec())
				}
				if (b.LastOffsetDelta()+1)%3 != 0 || b.BaseOffset()%3 != 0 {
					t.Fatalf("batch %v lost its original offset range", b)
				}
			}
			// Idempotent: nothing new is dirty.
			if _, ok, _ := l.Compact(1<<20, false); ok {
				t.Fatalf("compacted again with nothing dirty")
			}
		})
	}
}

func TestCompactTombstonesAndDeleteHorizon(t *testing.T) {
	c := newClock()
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 60_000
	l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), cfg, testOpts(c), false)
	defer l.Close()
	fill := func(n int, prefix string) {
		for i := 0; i < n; i++ {
			mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("%s%d", prefix, i), "value"))
		}
	}
	mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), "gone", "v1"))
	mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), "gone", "<nil>"))
	fill(20, "a")
	if _, ok, err := l.Compact(1<<20, false); err != nil || !ok {
		t.Fatalf("compact: %v %v", ok, err)
	}
	var tomb batch.Batch
	for _, b := range readAllBatches(t, l, 0) {
		if b.BaseOffset() == 1 {
			tomb = b
		}
	}
	if tomb == nil {
		t.Fatal("tombstone removed by the first clean")
	}
	if h, ok := tomb.DeleteHorizon(); !ok || h != c.Now().UnixMilli()+60_000 {
		t.Fatalf("delete horizon %d %v", h, ok)
	}
	if recs := records(t, l); recs[0].key != "gone" || recs[0].value != "<nil>" || recs[0].off != 1 {
		t.Fatalf("first record %v, want the tombstone at 1", recs[0])
	}
	// Before the horizon a new clean keeps it; after, it goes.
	fill(20, "b")
	c.Advance(59 * time.Second)
	if _, ok, _ := l.Compact(1<<20, false); !ok {
		t.Fatal("no clean")
	}
	if recs := records(t, l); recs[0].key != "gone" {
		t.Fatalf("tombstone removed before its horizon")
	}
	fill(20, "c")
	c.Advance(2 * time.Second)
	if _, ok, _ := l.Compact(1<<20, false); !ok {
		t.Fatal("no clean")
	}
	for _, r := range records(t, l) {
		if r.key == "gone" {
			t.Fatalf("tombstone survived its delete horizon: %v", r)
		}
	}
}

// An idempotent producer's last batch stays, empty, when compaction
// removes all its records: the producer's sequence survives a restart.
func TestCompactKeepsProducerLastBatch(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "c-0")
	l := mustOpen(t, dir, compactConfig(), testOpts(c), false)
	p := &batch.Producer{ID: 42, Epoch: 3, BaseSequence: 0}
	recs := []batch.Record{{Offset: 0, Timestamp: c.Now().UnixMilli(), Key: []byte("x"), Value: []byte("1")}, {Offset: 1, Timestamp: c.Now().UnixMilli(), Key: []byte("y"), Value: []byte("1")}}
	b, err := batch.Build(nil, batch.BuildHeader{Producer: p}, recs, batch.CodecLZ4)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, b)
	// Later plain records overwrite both keys.
	for i := 0; i < 30; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), "x", "2", "y", "2"))
	}
	if _, ok, err := l.Compact(1<<20, false); err != nil || !ok {
		t.Fatal(ok, err)
	}
	first := readAllBatches(t, l, 0)[0]
	if first.ProducerID() != 42 || first.NumRecords() != 0 || first.LastOffset() != 1 || first.LastSequence() != 1 {
		t.Fatalf("producer batch after compaction: %v pid %d", first, first.ProducerID())
	}
	crash(l)
	for _, f := range []string{"00000000000000000000.snapshot"} {
		os.Remove(filepath.Join(dir, f))
	}
	l = mustOpen(t, dir, compactConfig(), testOpts(c), true)
	defer l.Close()
	if ps := l.Producers(); len(ps) != 1 || ps[0].LastSequence != 1 || ps[0].Epoch != 3 {
		t.Fatalf("producer state rebuilt from the compacted log: %+v", ps)
	}
	b2, _ := batch.Build(nil, batch.BuildHeader{Producer: &batch.Producer{ID: 42, Epoch: 3, BaseSequence: 2}}, recs[:1], batch.CodecNone)
	if _, err := l.Append(b2, AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatalf("producer continues after compaction: %v", err)
	}
}

func TestCompactionLagsAndRatio(t *testing.T) {
	c := newClock()
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 0.5
	l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), cfg, testOpts(c), false)
	defer l.Close()
	// Distinct keys: the clean section stays large after compaction.
	for i := 0; i < 300; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i), "v"))
	}
	if _, ok, _ := l.Compact(1<<20, false); !ok {
		t.Fatal("all-dirty log not cleaned at ratio 0.5")
	}
	// A little new data: below the ratio, not cleaned...
	for i := 0; i < 40; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%3), "v"))
	}
	if info := l.cleanableInfo(c.Now().UnixMilli(), l.config()); info.cleanableBytes == 0 || info.ratio >= 0.5 {
		t.Fatalf("test setup: dirty ratio %.2f with %d cleanable bytes", info.ratio, info.cleanableBytes)
	}
	if _, ok, _ := l.Compact(1<<20, false); ok {
		t.Fatal("cleaned below min.cleanable.dirty.ratio")
	}
	// ...unless max.compaction.lag.ms has passed for a dirty segment.
	cfg.MaxCompactionLagMs = 60_000
	l.SetConfig(cfg)
	if _, ok, _ := l.Compact(1<<20, false); ok {
		t.Fatal("cleaned before max.compaction.lag.ms")
	}
	c.Advance(61 * time.Second)
	if _, ok, _ := l.Compact(1<<20, false); !ok {
		t.Fatal("not cleaned after max.compaction.lag.ms")
	}
	// min.compaction.lag.ms: segments with recent records are not cleaned.
	cfg.MaxCompactionLagMs = 1 << 62
	cfg.MinCompactionLagMs = 30_000
	cfg.MinCleanableDirtyRatio = 0.01
	l.SetConfig(cfg)
	for i := 0; i < 30; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%3), "v"))
	}
	if _, ok, _ := l.Compact(1<<20, false); ok {
		t.Fatal("cleaned records younger than min.compaction.lag.ms")
	}
	c.Advance(31 * time.Second)
	if _, ok, _ := l.Compact(1<<20, false); !ok {
		t.Fatal("not cleaned after min.compaction.lag.ms")
	}
}

// With an offset map too small for the dirty section, each round cleans
// what it mapped and the next continues; the result is the same.
func TestCompactWithSmallOffsetMap(t *testing.T) {
	c := newClock()
	l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), compactConfig(), testOpts(c), false)
	defer l.Close()
	for i := 0; i < 200; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%50), fmt.Sprint(i)))
	}
	before := records(t, l)
	active := l.active().base
	rounds := 0
	for ; rounds < 50; rounds++ {
		st, ok, err := l.compact(newOffsetMap(24*40), false, 4096) // 40 slots
		if err != nil {
			t.Fatal(err)
		}
		if !ok || st.EndOffset >= active {
			break
		}
	}
	if rounds == 0 {
		t.Fatal("a 40-slot map cleaned 50 keys in one round")
	}
	sameRecords(t, records(t, l), latest(before, active))
}

// Kafka merges small cleaned segments up to segment.bytes.
func TestCompactMergesSegments(t *testing.T) {
	c := newClock()
	cfg := compactConfig()
	l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), cfg, testOpts(c), false)
	defer l.Close()
	for i := 0; i < 100; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%5), "value"))
	}
	n := l.NumSegments()
	// Groups are formed from the sizes before cleaning (as Kafka does):
	// full segments shrink in the first clean and merge in the next.
	st, ok, err := l.Compact(1<<20, false)
	if err != nil || !ok || st.Groups != st.Segments {
		t.Fatalf("first clean: %+v %v %v", st, ok, err)
	}
	for i := 0; i < 20; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%5), "value"))
	}
	st, ok, err = l.Compact(1<<20, false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if st.Groups >= st.Segments || l.NumSegments() >= n {
		t.Fatalf("no merging: %d segments in %d groups, %d segments now (was %d)", st.Segments, st.Groups, l.NumSegments(), n)
	}
	for _, s := range l.segments() {
		if s.size.Load() > cfg.SegmentBytes {
			t.Fatalf("segment of %d bytes", s.size.Load())
		}
	}
}

func listDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		out[e.Name()] = mustRead(t, filepath.Join(dir, e.Name()))
	}
	return out
}

func writeDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A crash at any step of the swap leaves the old or the new segments,
// never a mix that loses or duplicates records.
func TestCompactSwapCrashSafety(t *testing.T) {
	c := newClock()
	cfg := compactConfig()
	dir := filepath.Join(t.TempDir(), "c-0")
	l := mustOpen(t, dir, cfg, testOpts(c), false)
	for i := 0; i < 60; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("k%d", i%4), fmt.Sprint(i)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	orig := listDir(t, dir)
	// Large segments for the clean: all closed segments merge into one.
	big := cfg
	big.SegmentBytes = 1 << 20
	l = mustOpen(t, dir, big, testOpts(c), false)
	before := records(t, l)
	active := l.active().base
	if _, ok, err := l.Compact(1<<20, false); err != nil || !ok {
		t.Fatal(ok, err)
	}
	after := records(t, l)
	if l.NumSegments() != 2 {
		t.Fatalf("test setup: %d segments after compaction, want one merged + active", l.NumSegments())
	}
	l.Close()
	final := listDir(t, dir)
	sameRecords(t, after, latest(before, active))

	cleanedFiles := map[string][]byte{} // the merged segment's files
	for _, suffix := range []string{".log", ".index", ".timeindex"} {
		cleanedFiles["00000000000000000000"+suffix] = final["00000000000000000000"+suffix]
	}
	state := func(name string, files map[string][]byte) []logRecord {
		d := filepath.Join(t.TempDir(), name, "c-0")
		writeDir(t, d, files)
		l := mustOpen(t, d, cfg, testOpts(c), true)
		defer l.Close()
		for n := range listDir(t, d) {
			if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) || strings.HasSuffix(n, deletedSuffix) {
				t.Fatalf("%s: %s left after load", name, n)
			}
		}
		return records(t, l)
	}
	with := func(base map[string][]byte, extra map[string][]byte, suffix string, renameOld bool) map[string][]byte {
		out := map[string][]byte{}
		for n, b := range base {
			if renameOld && (strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".index") || strings.HasSuffix(n, ".timeindex")) {
				if o, _ := offsetFromFileName(n); o < active {
					out[n+deletedSuffix] = b
					continue
				}
			}
			out[n] = b
		}
		for n, b := range extra {
			out[n+suffix] = b
		}
		return out
	}
	// Crash while writing .cleaned: the old segments win.
	sameRecords(t, state("cleaned", with(orig, cleanedFiles, cleanedSuffix, false)), before)
	// Crash after the rename to .swap: the swap completes.
	sameRecords(t, state("swap", with(orig, cleanedFiles, swapSuffix, false)), after)
	// Crash after the old segments became .deleted.
	sameRecords(t, state("deleted", with(orig, cleanedFiles, swapSuffix, true)), after)
	// Torn .cleaned data is discarded too.
	torn := map[string][]byte{"00000000000000000000.log": cleanedFiles["00000000000000000000.log"][:50]}
	sameRecords(t, state("torn", with(orig, torn, cleanedSuffix, false)), before)
}

// The Manager's background cleaner compacts and checkpoints its progress.
func TestManagerCleaner(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "d")
	mc := ManagerConfig{Dirs: []string{dir}, CleanerEnable: true, CleanerBackoff: 20 * time.Millisecond, CleanerDedupeBufferSize: 1 << 20}
	m, err := OpenManager(mc, func(string) Config { return compactConfig() }, testOpts(c))
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Create("__consumer_offsets", 7, [16]byte{1}, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		mustAppend(t, l, kv(t, batch.CodecNone, c.Now().UnixMilli(), fmt.Sprintf("g%d", i%3), fmt.Sprint(i)))
	}
	before := records(t, l)
	active := l.active().base
	m.Start(context.Background())
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if got := l.cleanerOffset(); got != active {
			return fmt.Errorf("cleaned to %d, want %d", got, active)
		}
		return nil
	})
	sameRecords(t, records(t, l), latest(before, active))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cp, err := readOffsetCheckpoint(filepath.Join(dir, cleanerOffsetFile))
	if err != nil || cp[TopicPartition{"__consumer_offsets", 7}] != active {
		t.Fatalf("cleaner checkpoint %v %v", cp, err)
	}
	m, err = OpenManager(mc, func(string) Config { return compactConfig() }, testOpts(c))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Get("__consumer_offsets", 7).cleanerOffset(); got != active {
		t.Fatalf("cleaner offset after restart %d", got)
	}
}
