package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/fjordhq/fjord/broker/batch"
)

// written records where each batch of a test log landed.
type written struct {
	data []byte
	seg  int64 // segment base
	pos  int64
}

// buildCrashLog appends batches of random sizes to a new log and returns
// them without closing it: what a crashed process leaves behind (no clean
// shutdown marker, no final snapshot, indexes as last written).
func buildCrashLog(t testing.TB, dir string, rng *rand.Rand, n int) (*Log, []written) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.IndexIntervalBytes = 512
	// The clock matches the batch timestamps so producer 7 does not expire.
	l := mustOpen(t, dir, cfg, testOpts(newClock()), false)
	var out []written
	for i := 0; i < n; i++ {
		o := noPID
		if i%3 == 0 {
			o = bopts{pid: 7, epoch: 0, seq: int32(len(out) * 0), ts: 1_700_000_000_000 + int64(i)}
		}
		b := valueBatch(o, 1+rng.Intn(4), 10+rng.Intn(400))
		if o.pid >= 0 {
			// keep sequences valid: count records of producer 7 so far
			seq := int32(0)
			for _, w := range out {
				if batch.Batch(w.data).ProducerID() == 7 {
					seq += batch.Batch(w.data).LastOffsetDelta() + 1
				}
			}
			binary.BigEndian.PutUint32(b[53:], uint32(seq))
			batch.Batch(b).UpdateCRC()
		}
		seg := l.active()
		pos := seg.size.Load()
		if seg.size.Load() > cfg.SegmentBytes-int64(len(b)) {
			pos = 0
		}
		mustAppend(t, l, b)
		a := l.active()
		out = append(out, written{data: append([]byte(nil), b...), seg: a.base, pos: pos})
	}
	return l, out
}

// crash abandons the log like a killed process: files stay as they are.
func crash(l *Log) { l.abandon()() }

func segFile(dir string, base int64, suffix string) string {
	return filepath.Join(dir, segmentName(base)+suffix)
}

// expectPrefix checks the recovered log holds exactly want, in order, and
// that every offset reads back from the right batch.
func expectPrefix(t *testing.T, l *Log, want []written) {
	t.Helper()
	got := readAllBatches(t, l, l.LogStartOffset())
	if len(got) != len(want) {
		t.Fatalf("recovered %d batches, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i].data) {
			t.Fatalf("batch %d differs after recovery", i)
		}
	}
	next := int64(0)
	if len(want) > 0 {
		next = batch.Batch(want[len(want)-1].data).NextOffset()
	}
	if l.LogEndOffset() != next {
		t.Fatalf("log end %d, want %d", l.LogEndOffset(), next)
	}
	for _, w := range want {
		b := batch.Batch(w.data)
		res, err := l.Read(b.LastOffset(), 1, next, true)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := res.AppendTo(nil)
		if !bytes.Equal(rb, w.data) {
			t.Fatalf("read at %d: wrong batch", b.LastOffset())
		}
	}
}

func TestCrashRecoveryKeepsValidPrefix(t *testing.T) {
	modes := []string{"torn write", "zeroed tail", "garbage", "garbage appended", "index garbage", "middle segment"}
	rounds := 36
	if testing.Short() {
		rounds = 12
	}
	for round := 0; round < rounds; round++ {
		mode := modes[round%len(modes)]
		t.Run(fmt.Sprintf("%d-%s", round, mode), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(round)))
			dir := filepath.Join(t.TempDir(), "crash-0")
			l, all := buildCrashLog(t, dir, rng, 30+rng.Intn(40))
			crash(l)
			segs := map[int64][]written{}
			var bases []int64
			for _, w := range all {
				if len(segs[w.seg]) == 0 {
					bases = append(bases, w.seg)
				}
				segs[w.seg] = append(segs[w.seg], w)
			}
			sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
			target := bases[len(bases)-1]
			if mode == "middle segment" && len(bases) > 2 {
				target = bases[len(bases)/2]
			}
			logPath := segFile(dir, target, logSuffix)
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			cut := int64(rng.Intn(len(data) + 1)) // first damaged byte
			switch mode {
			case "torn write":
				data = data[:cut]
			case "zeroed tail":
				for i := cut; i < int64(len(data)); i++ {
					data[i] = 0
				}
				data = append(data, make([]byte, rng.Intn(4096))...)
			case "garbage", "middle segment":
				if cut > int64(len(data))-22 {
					cut = max(0, int64(len(data))-22)
				}
				n := 22 + rng.Intn(200)
				for i := cut; i < int64(len(data)) && i < cut+int64(n); i++ {
					data[i] = byte(rng.Intn(256))
				}
			case "garbage appended":
				cut = int64(len(data))
				g := make([]byte, 1+rng.Intn(300))
				rng.Read(g)
				data = append(data, g...)
			case "index garbage":
				cut = int64(len(data))
				for _, b := range bases {
					g := make([]byte, rng.Intn(64))
					rng.Read(g)
					os.WriteFile(segFile(dir, b, indexSuffix), g, 0o644)
					os.WriteFile(segFile(dir, b, timeIndexSuffix), g, 0o644)
				}
			}
			if err := os.WriteFile(logPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var want []written
			for _, w := range all {
				if w.seg < target || (w.seg == target && w.pos+int64(len(w.data)) <= cut) {
					want = append(want, w)
				}
			}
			cfg := testConfig()
			cfg.SegmentBytes = 8 << 10
			cfg.IndexIntervalBytes = 512
			l2 := mustOpen(t, dir, cfg, testOpts(newClock()), true)
			defer l2.Close()
			expectPrefix(t, l2, want)
			// Producer 7's state is rebuilt from what survived.
			var seq int32 = -1
			for _, w := range want {
				if b := batch.Batch(w.data); b.ProducerID() == 7 {
					seq = b.LastSequence()
				}
			}
			ps := l2.Producers()
			if seq >= 0 && (len(ps) != 1 || ps[0].LastSequence != seq) {
				t.Fatalf("producer state %+v, want last sequence %d", ps, seq)
			}
			// The log takes appends at the recovered end.
			res := mustAppend(t, l2, valueBatch(noPID, 1, 10))
			if res.FirstOffset != l2.LogEndOffset()-1 {
				t.Fatalf("append after recovery at %d", res.FirstOffset)
			}
		})
	}
}

// After a clean shutdown only index files are trusted lazily: a corrupt
// index of a closed segment is rebuilt on first use, not a read error.
func TestCorruptIndexAfterCleanShutdown(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	dir := filepath.Join(t.TempDir(), "idx-0")
	l, all := buildCrashLog(t, dir, rng, 80)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	first := all[0].seg
	os.WriteFile(segFile(dir, first, indexSuffix), []byte{0, 0, 0, 9, 0, 0, 0xff, 0xff}, 0o644)
	os.WriteFile(segFile(dir, first, timeIndexSuffix), []byte{1, 2, 3}, 0o644)
	os.Remove(segFile(dir, all[len(all)/2].seg, indexSuffix))
	cfg := testConfig()
	cfg.IndexIntervalBytes = 512
	l2 := mustOpen(t, dir, cfg, testOpts(nil), false)
	defer l2.Close()
	expectPrefix(t, l2, all)
}

// A recovery point in the middle: only segments from the one holding it
// are validated, so corruption before it is not looked for (it was
// fsynced), while corruption after it is truncated.
func TestRecoveryStartsAtRecoveryPoint(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	dir := filepath.Join(t.TempDir(), "rp-0")
	l, all := buildCrashLog(t, dir, rng, 80)
	segs := l.segments()
	if len(segs) < 4 {
		t.Fatalf("want >= 4 segments, got %d", len(segs))
	}
	rp := segs[2].base
	crash(l)
	// Damage the last segment: recovered. Damage the first: not looked at.
	last := segs[len(segs)-1].base
	data, _ := os.ReadFile(segFile(dir, last, logSuffix))
	os.WriteFile(segFile(dir, last, logSuffix), data[:len(data)-5], 0o644)
	first, _ := os.ReadFile(segFile(dir, segs[0].base, logSuffix))
	first[100] ^= 0xff
	os.WriteFile(segFile(dir, segs[0].base, logSuffix), first, 0o644)

	cfg := testConfig()
	cfg.IndexIntervalBytes = 512
	l2, err := openLog(dir, cfg, testOpts(nil), loadParams{clean: false, recoveryPoint: rp})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	var want []written
	for _, w := range all {
		if w.seg != last || w.pos+int64(len(w.data)) <= int64(len(data)-5) {
			want = append(want, w)
		}
	}
	if got := l2.LogEndOffset(); got != batch.Batch(want[len(want)-1].data).NextOffset() {
		t.Fatalf("log end %d", got)
	}
	if l2.RecoveryPoint() != rp {
		t.Fatalf("recovery point %d, want %d", l2.RecoveryPoint(), rp)
	}
}

// validSegment returns a segment file of a few batches and their sizes.
func validSegment() ([]byte, []int) {
	var data []byte
	var sizes []int
	o := noPID
	for i := 0; i < 6; i++ {
		b := valueBatch(o, 1+i%3, 20+i*7)
		batch.Batch(b).SetBaseOffset(int64(len(sizes) * 3))
		data = append(data, b...)
		sizes = append(sizes, len(b))
		o.ts += 10
	}
	return data, sizes
}

// FuzzRecovery: whatever bytes are appended to or written over a valid
// segment, Open(recover) does not fail or panic, keeps a batch-aligned
// prefix of the file in which every batch is valid, and keeps every
// original batch that lies wholly before the first changed byte.
func FuzzRecovery(f *testing.F) {
	f.Add([]byte{}, uint16(0), false)
	f.Add([]byte{0, 0, 0, 0}, uint16(5), true)
	f.Add(bytes.Repeat([]byte{0xff}, 64), uint16(200), true)
	seg, _ := validSegment()
	f.Add(seg[:80], uint16(0), false)
	f.Add(seg[:61], uint16(100), true)
	f.Fuzz(func(t *testing.T, junk []byte, at uint16, overwrite bool) {
		orig, sizes := validSegment()
		data := append([]byte(nil), orig...)
		changed := len(data)
		if overwrite {
			p := int(at) % (len(data) + 1)
			for i, b := range junk {
				if p+i < len(data) {
					if data[p+i] != b && changed == len(orig) {
						changed = p + i
					}
					data[p+i] = b
				} else {
					data = append(data, junk[i:]...)
					changed = min(changed, p+i)
					break
				}
			}
		} else {
			data = append(data, junk...)
		}
		dir := filepath.Join(t.TempDir(), "fuzz-0")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(segFile(dir, 0, logSuffix), data, 0o644)
		l, err := Open(dir, testConfig(), testOpts(nil), true)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer l.Close()
		got, err := os.ReadFile(segFile(dir, 0, logSuffix))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, got) {
			t.Fatalf("recovered file is not a prefix of the damaged one")
		}
		keep := 0
		for _, n := range sizes {
			if keep+n > changed {
				break
			}
			keep += n
		}
		if len(got) < keep {
			t.Fatalf("recovered %d bytes, but the first %d were untouched", len(got), keep)
		}
		next := int64(0)
		for p := got; len(p) > 0; {
			b, rest, err := batch.Next(p)
			if err != nil {
				t.Fatalf("recovered log has a bad batch: %v", err)
			}
			if err := b.Validate(); err != nil {
				t.Fatalf("recovered log has an invalid batch: %v", err)
			}
			if b.BaseOffset() < next {
				t.Fatalf("offsets go backwards")
			}
			next = b.NextOffset()
			p = rest
		}
		if l.LogEndOffset() != next {
			t.Fatalf("log end %d, want %d", l.LogEndOffset(), next)
		}
		readAllBatches(t, l, 0)
	})
}

// FuzzIndex: decoding any bytes as an index never panics; what decodes
// obeys the invariants lookups rely on and re-encodes to the same bytes.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{}, int64(100))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 10, 0, 0, 0, 5, 0, 0, 0, 50}, int64(100))
	f.Add([]byte{0, 0, 1, 0x8b, 0xcf, 0xe5, 0xa2, 0x6b, 0, 0, 0, 0x0f}, int64(10))
	f.Fuzz(func(t *testing.T, b []byte, logSize int64) {
		if es, err := decodeOffsetIndex(b, logSize); err == nil {
			for i, e := range es {
				if int64(e.pos) >= logSize || (i > 0 && (e.rel <= es[i-1].rel || e.pos <= es[i-1].pos)) {
					t.Fatalf("accepted a bad offset index entry %d: %+v", i, e)
				}
			}
			if !bytes.Equal(encodeOffsetIndex(es), b) {
				t.Fatal("offset index does not round-trip")
			}
			x := offsetIndex{base: 1000, entries: es}
			for _, probe := range []int64{-1, 0, 999, 1000, 1001, 1 << 40} {
				if p := x.lookup(probe); p < 0 || (len(es) > 0 && p > int64(es[len(es)-1].pos)) {
					t.Fatalf("lookup(%d) = %d", probe, p)
				}
			}
		}
		if es, err := decodeTimeIndex(b); err == nil {
			for i := 1; i < len(es); i++ {
				if es[i].ts <= es[i-1].ts || es[i].rel < es[i-1].rel {
					t.Fatalf("accepted a bad time index entry %d", i)
				}
			}
			if !bytes.Equal(encodeTimeIndex(es), b) {
				t.Fatal("time index does not round-trip")
			}
		}
	})
}

// FuzzCheckpoints: the small metadata files (offset and leader epoch
// checkpoints, partition.metadata, producer snapshots) never panic on any
// input, and whatever decodes re-encodes to something that decodes the
// same.
func FuzzCheckpoints(f *testing.F) {
	f.Add([]byte("0\n2\norders 0 12\norders 1 7\n"))
	f.Add([]byte("0\n1\n0 5\n"))
	f.Add([]byte("version: 0\ntopic_id: vJT9kfu0R1urqeqtzONBAg"))
	f.Add(encodeSnapshot(map[int64]*producerEntry{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeOffsetCheckpoint(b); err == nil {
			m2, err := decodeOffsetCheckpoint(encodeOffsetCheckpoint(m))
			if err != nil || len(m2) != len(m) {
				t.Fatalf("offset checkpoint round trip: %v", err)
			}
			for k, v := range m {
				if m2[k] != v {
					t.Fatalf("offset checkpoint round trip changed %v", k)
				}
			}
		}
		if es, err := decodeEpochCheckpoint(b); err == nil {
			es2, err := decodeEpochCheckpoint(encodeEpochCheckpoint(es))
			if err != nil || len(es2) != len(es) {
				t.Fatalf("epoch checkpoint round trip: %v", err)
			}
		}
		if id, err := decodePartitionMetadata(b); err == nil {
			if id2, err := decodePartitionMetadata(encodePartitionMetadata(id)); err != nil || id2 != id {
				t.Fatalf("partition.metadata round trip: %v", err)
			}
		}
		if es, err := decodeSnapshot(b); err == nil {
			m := map[int64]*producerEntry{}
			for i := range es {
				m[es[i].id] = &es[i]
			}
			if es2, err := decodeSnapshot(encodeSnapshot(m)); err != nil || len(es2) != len(m) {
				t.Fatalf("snapshot round trip: %v", err)
			}
		}
	})
}
