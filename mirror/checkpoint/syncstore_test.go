package checkpoint

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

const (
	tpTopic = "topic1"
	tpPart  = int32(2)
)

// translation is what Translate answered, printable in failures.
type translation struct {
	off int64
	ok  bool
}

func (t translation) String() string {
	if !t.ok {
		return "none"
	}
	return fmt.Sprint(t.off)
}

func translate(s *OffsetSyncStore, upstream int64) translation {
	off, ok := s.Translate(tpTopic, tpPart, upstream)
	return translation{off, ok}
}

func some(off int64) translation { return translation{off, true} }

var none = translation{}

func expectTranslate(t *testing.T, s *OffsetSyncStore, upstream int64, want translation) {
	t.Helper()
	if got := translate(s, upstream); got != want {
		t.Fatalf("Translate(%d) = %v, want %v", upstream, got, want)
	}
}

// startedStore is a store whose initial read found nothing.
func startedStore(mustReadToEnd bool) *OffsetSyncStore {
	s := NewOffsetSyncStore(mustReadToEnd)
	s.MarkReadToEnd()
	return s
}

func TestTranslateAtBetweenAndBeforeSyncs(t *testing.T) {
	s := startedStore(true)
	// Between syncs: one past the sync's downstream offset, no dead
	// reckoning (150 is 50 past the sync, yet only 201).
	s.Sync(tpTopic, tpPart, 100, 200)
	expectTranslate(t, s, 150, some(201))
	// Exactly at a sync: its downstream offset.
	s.Sync(tpTopic, tpPart, 150, 251)
	expectTranslate(t, s, 150, some(251))
	// Before the first sync: too old to translate.
	expectTranslate(t, s, 5, some(-1))
	// Downstream offsets reset (target topic recreated).
	s.Sync(tpTopic, tpPart, 200, 10)
	expectTranslate(t, s, 200, some(10))
	// Upstream offsets reset: older syncs are dropped.
	s.Sync(tpTopic, tpPart, 20, 20)
	expectTranslate(t, s, 20, some(20))
	expectTranslate(t, s, 150, some(21))
}

func TestNoTranslationBeforeReadToEnd(t *testing.T) {
	s := NewOffsetSyncStore(true)
	for _, u := range []int64{0, 100, 200} {
		expectTranslate(t, s, u, none)
	}
	// A sync read during start-up is not used until the read reaches the end.
	s.Sync(tpTopic, tpPart, 100, 200)
	for _, u := range []int64{0, 100, 200} {
		expectTranslate(t, s, u, none)
	}
	if s.Ready() {
		t.Fatal("Ready before MarkReadToEnd")
	}
	s.MarkReadToEnd()
	expectTranslate(t, s, 0, some(-1))
	expectTranslate(t, s, 100, some(200))
	expectTranslate(t, s, 200, some(201))
}

func TestNoTranslationWithoutSyncs(t *testing.T) {
	s := startedStore(true)
	expectTranslate(t, s, 0, none)
	s.Sync(tpTopic, 0, 3, 4)
	// Another partition of the same topic has no syncs.
	if _, ok := s.Translate(tpTopic, 1, 10); ok {
		t.Fatal("translated a partition without syncs")
	}
	if off, ok := s.Translate(tpTopic, 0, 10); !ok || off != 5 {
		t.Fatalf("Translate = %d, %v; want 5", off, ok)
	}
}

// expectSparseSync checks that syncOffset is a kept sync and the kept
// sync before it is previousOffset (-1: none).
func expectSparseSync(t *testing.T, s *OffsetSyncStore, syncOffset, previousOffset int64) {
	t.Helper()
	before := some(-1)
	if previousOffset != -1 {
		before = some(previousOffset + 1)
	}
	expectTranslate(t, s, syncOffset-1, before)
	expectTranslate(t, s, syncOffset, some(syncOffset))
	expectTranslate(t, s, syncOffset+1, some(syncOffset+1))
	expectTranslate(t, s, syncOffset+2, some(syncOffset+1))
}

// checkInvariants checks invariants B and C over every pair of indexes.
func checkInvariants(t *testing.T, s *OffsetSyncStore) {
	t.Helper()
	a := s.snapshot(tpTopic, tpPart)
	for j := 0; j < syncsPerPartition; j++ {
		sj := a[j]
		for i := 0; i < j; i++ {
			si := a[i]
			if si.upstream == sj.upstream {
				continue
			}
			lower := sj.upstream + int64(1)<<max(i-2, 0)
			if lower < 0 {
				continue
			}
			if si.upstream < lower {
				t.Fatalf("invariant C(%d,%d): upstream %d at %d should be at least %d", i, j, si.upstream, i, lower)
			}
			upper := sj.upstream + int64(1)<<j - int64(1)<<i
			if upper < 0 {
				continue
			}
			if si.upstream > upper {
				t.Fatalf("invariant B(%d,%d): upstream %d at %d should be at most %d", i, j, si.upstream, i, upper)
			}
		}
	}
}

// TestSparseSyncsAfterRestart: a task restarts with 101 syncs in the
// topic (every 10 offsets up to 1000) and then sees 900 more. Earlier
// checkpoints unknown (must read to end): only the last start-up sync is
// kept from the initial read, and it stays usable.
func TestSparseSyncsAfterRestart(t *testing.T) {
	const lag = 10
	s := NewOffsetSyncStore(true)
	for off := int64(0); off <= 1000; off += lag {
		s.Sync(tpTopic, tpPart, off, off)
		checkInvariants(t, s)
	}
	s.MarkReadToEnd()
	expectSparseSync(t, s, 1000, -1)
	for off := int64(1000 + lag); off <= 10000; off += lag {
		s.Sync(tpTopic, tpPart, off, off)
		checkInvariants(t, s)
	}
	// Invariant D: the last start-up sync is still there.
	expectSparseSync(t, s, 1000, -1)
	// Older offsets translate with less precision.
	for _, c := range [][2]int64{{4840, 1000}, {6760, 4840}, {8680, 6760}, {9160, 8680}, {9640, 9160},
		{9880, 9640}, {9940, 9880}, {9970, 9940}, {9990, 9970}, {10000, 9990}} {
		expectSparseSync(t, s, c[0], c[1])
	}
	// An upstream rewind clears the history.
	s.Sync(tpTopic, tpPart, 1500, 11000)
	checkInvariants(t, s)
	expectTranslate(t, s, 1499, some(-1))
	expectTranslate(t, s, 1500, some(11000))
	expectTranslate(t, s, 2000, some(11001))
}

// TestSparseSyncsAfterRestartKeepingHistory: the same with earlier
// checkpoints known (the checkpoint store guards monotonicity), so the
// initial read keeps history too.
func TestSparseSyncsAfterRestartKeepingHistory(t *testing.T) {
	const lag = 10
	s := NewOffsetSyncStore(false)
	for off := int64(0); off <= 1000; off += lag {
		s.Sync(tpTopic, tpPart, off, off)
		checkInvariants(t, s)
	}
	s.MarkReadToEnd()
	expectSparseSync(t, s, 480, 0)
	expectSparseSync(t, s, 720, 480)
	expectSparseSync(t, s, 1000, 990)
	for off := int64(1000); off <= 10000; off += lag {
		s.Sync(tpTopic, tpPart, off, off)
		checkInvariants(t, s)
	}
	// 1000 was pushed out; before 3840 only sync 0 is left.
	for _, c := range [][2]int64{{3840, 0}, {7680, 3840}, {8640, 7680}, {9120, 8640}, {9600, 9120},
		{9840, 9600}, {9900, 9840}, {9960, 9900}, {9990, 9960}, {10000, 9990}} {
		expectSparseSync(t, s, c[0], c[1])
	}
	s.Sync(tpTopic, tpPart, 1500, 11000)
	checkInvariants(t, s)
	expectTranslate(t, s, 1499, some(-1))
	expectTranslate(t, s, 1500, some(11000))
	expectTranslate(t, s, 2000, some(11001))
}

// TestNeverSkips replicates a topic where a random subset of records is
// written downstream (a filter, transaction markers, compaction), with
// syncs as MM2's source emits them at most offset.lag.max apart, and
// checks every upstream offset: a consumer resuming at the translation
// must see every replicated record at or after its upstream position, and
// re-read no more than the records since the sync used.
func TestNeverSkips(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n, lag = 20000, 100
	s := startedStore(true)
	// down[u] is where upstream record u landed, -1 if dropped.
	down := make([]int64, n)
	next := int64(0)
	lastSync := int64(-lag - 1)
	for u := int64(0); u < n; u++ {
		down[u] = -1
		if rng.Intn(4) == 0 {
			continue
		}
		down[u] = next
		next++
		// MirrorSourceTask syncs when the last sync is offset.lag.max
		// behind, and sometimes sooner.
		if u-lastSync > lag || rng.Intn(50) == 0 {
			s.Sync(tpTopic, tpPart, u, down[u])
			lastSync = u
		}
	}
	checkInvariants(t, s)
	// firstAtOrAfter[u] is the downstream offset of the first replicated
	// record at or after u (next if none).
	firstAtOrAfter := make([]int64, n+1)
	firstAtOrAfter[n] = next
	for u := n - 1; u >= 0; u-- {
		firstAtOrAfter[u] = firstAtOrAfter[u+1]
		if down[u] >= 0 {
			firstAtOrAfter[u] = down[u]
		}
	}
	translated := 0
	for u := int64(0); u <= n; u++ {
		got, ok := s.Translate(tpTopic, tpPart, u)
		if !ok {
			t.Fatalf("no translation for %d", u)
		}
		if got == -1 {
			continue
		}
		translated++
		if got > firstAtOrAfter[u] {
			t.Fatalf("upstream %d translated to %d: skips downstream record %d", u, got, firstAtOrAfter[u])
		}
	}
	// Offsets from the latest syncs on translate: with 20000 offsets the
	// store keeps far more than the last sync.
	if translated < n/2 {
		t.Fatalf("only %d of %d offsets translated", translated, n)
	}
	// Near the live end the re-read is bounded by the sync spacing.
	u := int64(n - 1)
	got, _ := s.Translate(tpTopic, tpPart, u)
	if reread := firstAtOrAfter[u] - got; reread < 0 || reread > lag {
		t.Fatalf("re-reads %d records at the live end (offset.lag.max %d)", reread, lag)
	}
}

// TestTranslationMonotonicForFixedState: for one state of the store, a
// later upstream offset never translates to an earlier downstream one.
func TestTranslationMonotonicForFixedState(t *testing.T) {
	s := startedStore(false)
	for off := int64(0); off <= 5000; off += 7 {
		s.Sync(tpTopic, tpPart, off, off*2)
	}
	prev := int64(math.MinInt64)
	for u := int64(0); u <= 5100; u++ {
		got, _ := s.Translate(tpTopic, tpPart, u)
		if got < prev {
			t.Fatalf("Translate(%d) = %d < Translate(%d) = %d", u, got, u-1, prev)
		}
		prev = got
	}
}

// expectBoundedExpirations feeds syncs spaced by steps and checks that
// each new sync pushes at most maxExpired distinct syncs out, and that
// invariants A and D hold after each.
func expectBoundedExpirations(t *testing.T, first int64, steps []int64, maxExpired int) {
	t.Helper()
	s := startedStore(true)
	s.Sync(tpTopic, tpPart, first, first)
	off := first
	lastCount := 1
	for _, step := range steps {
		off += step
		if off < 0 {
			t.Fatal("test is invalid, offset overflowed")
		}
		s.Sync(tpTopic, tpPart, off, off)
		a := s.snapshot(tpTopic, tpPart)
		if a[0].upstream != off {
			t.Fatalf("invariant A: syncs[0] = %d, want %d", a[0].upstream, off)
		}
		if a[63].upstream != first {
			t.Fatalf("invariant D: syncs[63] = %d, want %d", a[63].upstream, first)
		}
		count := 1
		for i := 1; i < syncsPerPartition; i++ {
			if a[i-1].id != a[i].id {
				count++
			}
		}
		if expired := lastCount - count + 1; expired > maxExpired {
			t.Fatalf("store expired %d syncs > %d after offset %d", expired, maxExpired, off)
		}
		lastCount = count
	}
}

func TestConsistentlySpacedSyncs(t *testing.T) {
	const iterations = 100
	maxStep := int64(math.MaxInt64 / iterations)
	for step := int64(1); step < maxStep; step = step*2 + 1 {
		steps := make([]int64, iterations)
		for i := range steps {
			steps[i] = step
		}
		for first := int64(0); first < 30; first++ {
			expectBoundedExpirations(t, first, steps, 1)
		}
	}
}

func TestRandomlySpacedSyncs(t *testing.T) {
	rng := rand.New(rand.NewSource(0))
	const iterationBits = 10
	const iterations = 1 << iterationBits
	for n := 1; n < 64-iterationBits; n++ {
		// Steps differing by at most n bits expire at most n+2 syncs at
		// once: the store is laid out exponentially.
		maxDiff := int64(1) << n
		steps := make([]int64, iterations)
		for i := range steps {
			steps[i] = rng.Int63n(maxDiff)
		}
		expectBoundedExpirations(t, 0, steps, n+2)
		// Also with a larger minimum step, such as offset.lag.max makes.
		const lagMax = int64(1) << 16
		for i := range steps {
			steps[i] = lagMax + rng.Int63n(maxDiff)
		}
		expectBoundedExpirations(t, 0, steps, n+2)
	}
}

func TestDroppedSyncsSpacing(t *testing.T) {
	rng := rand.New(rand.NewSource(0))
	const lagMax = 100
	steps := make([]int64, 10000)
	for i := range steps {
		// Half the gaps are doubled, as if a sync in between was lost;
		// then up to two syncs are discarded at once.
		steps[i] = lagMax
		if rng.Float64() < 0.5 {
			steps[i] = 2 * lagMax
		}
	}
	expectBoundedExpirations(t, 0, steps, 2)
}
