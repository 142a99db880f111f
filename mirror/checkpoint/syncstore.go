package checkpoint

import (
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// syncsPerPartition is how many offset syncs a partition keeps: one per
// bit of a 64-bit offset, so that kept syncs can be spaced exponentially
// from the newest back to the oldest usable one (MM2's
// SYNCS_PER_PARTITION).
const syncsPerPartition = 64

// storedSync is one offset sync kept for a partition. MM2 compares syncs
// by reference; id gives every received sync its own identity so two
// syncs with equal offsets stay distinct, exactly as there.
type storedSync struct {
	id         uint64
	upstream   int64
	downstream int64
}

type syncArray [syncsPerPartition]storedSync

// OffsetSyncStore keeps a bounded set of offset syncs per upstream
// partition and translates upstream consumer offsets into downstream
// ones, as Kafka 3.5+'s OffsetSyncStore does. For each partition it keeps
// 64 syncs under MM2's invariants:
//
//	A: syncs[0] is the latest sync received;
//	B: for i < j with syncs[i] != syncs[j],
//	   syncs[i].upstream <= syncs[j].upstream + 2^j - 2^i;
//	C: for i < j with syncs[i] != syncs[j],
//	   syncs[i].upstream >= syncs[j].upstream + 2^(i-2);
//	D: syncs[63] is the earliest sync usable for translation.
//
// So syncs near the live end are dense and older ones exponentially
// sparser, and each update takes linear time.
//
// Translation never skips a record: an upstream offset at a sync
// translates to that sync's downstream offset; an offset past a sync
// translates to one past the sync's downstream offset and no further,
// because how many of the upstream records in between were replicated is
// unknown. The consumer may re-read records, never miss one.
//
// Nothing is translated before the first read of the offset-syncs topic
// to its end (MarkReadToEnd): an early, partial view would translate to
// stale offsets. It is safe for concurrent use.
type OffsetSyncStore struct {
	mu    sync.RWMutex
	parts map[connect.TopicPartition]*syncArray
	// original is the array as it was before the update in progress; the
	// update reads old syncs from it while rewriting the live array.
	original syncArray
	lastID   uint64
	// mustReadToEnd: while reading the topic up to its end at start-up,
	// keep only the last sync of each partition. Set when earlier
	// checkpoints could not be read: syncs older than the end could then
	// translate a group behind a checkpoint already emitted, and nothing
	// would catch the rewind.
	mustReadToEnd bool
	readToEnd     bool
}

// NewOffsetSyncStore returns an empty store. initializationMustReadToEnd
// is MM2's flag of the same name: true keeps only each partition's
// latest sync from the initial read of the topic (use it when the
// previously emitted checkpoints are unknown).
func NewOffsetSyncStore(initializationMustReadToEnd bool) *OffsetSyncStore {
	return &OffsetSyncStore{parts: map[connect.TopicPartition]*syncArray{}, mustReadToEnd: initializationMustReadToEnd}
}

// MarkReadToEnd records that the initial read of the offset-syncs topic
// has reached the end; translation starts from here.
func (s *OffsetSyncStore) MarkReadToEnd() {
	s.mu.Lock()
	s.readToEnd = true
	s.mu.Unlock()
}

// Ready reports whether the initial read has completed.
func (s *OffsetSyncStore) Ready() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.readToEnd
}

// Sync adds one offset sync: upstream offset u of topic/partition was
// written downstream at offset d.
func (s *OffsetSyncStore) Sync(topic string, partition int32, upstream, downstream int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	ns := storedSync{id: s.lastID, upstream: upstream, downstream: downstream}
	tp := connect.TopicPartition{Topic: topic, Partition: partition}
	syncs := s.parts[tp]
	if syncs == nil {
		syncs = new(syncArray)
		clearSyncs(syncs, ns)
		s.parts[tp] = syncs
		return
	}
	s.original = *syncs
	s.update(syncs, &s.original, ns)
}

// Translate returns the downstream offset a consumer group at upstream
// offset upstream of topic/partition should resume from. ok is false
// when there is no translation: the initial read has not finished or the
// partition has no syncs. A result of -1 (with ok) means the offset is
// older than every sync kept, so it cannot be translated accurately.
func (s *OffsetSyncStore) Translate(topic string, partition int32, upstream int64) (downstream int64, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.readToEnd {
		return 0, false
	}
	syncs := s.parts[connect.TopicPartition{Topic: topic, Partition: partition}]
	if syncs == nil {
		return 0, false
	}
	sync := latestSyncAtOrBefore(syncs, upstream)
	if sync.upstream > upstream {
		return -1, true
	}
	if sync.upstream == upstream {
		return sync.downstream, true
	}
	// Past the sync: records after it land after its downstream offset,
	// but how many were replicated is unknown, so go one past and no
	// further.
	return sync.downstream + 1, true
}

// latestSyncAtOrBefore scans from the newest sync back; the array is
// exponentially spaced, so this is a binary search over the offsets.
func latestSyncAtOrBefore(syncs *syncArray, upstream int64) storedSync {
	for i := range syncs {
		if syncs[i].upstream <= upstream {
			return syncs[i]
		}
	}
	return syncs[syncsPerPartition-1]
}

func clearSyncs(syncs *syncArray, s storedSync) {
	for i := range syncs {
		syncs[i] = s
	}
}

// update applies ns to syncs (original is syncs before the update),
// restoring invariants A to D, as MM2's updateSyncArray.
func (s *OffsetSyncStore) update(syncs, original *syncArray, ns storedSync) {
	onlyLoadLast := !s.readToEnd && s.mustReadToEnd
	// An upstream rewind (topic recreated, records truncated) makes every
	// older sync wrong.
	if onlyLoadLast || ns.upstream < syncs[0].upstream {
		clearSyncs(syncs, ns)
		return
	}
	replacement := ns
	// Index into original of the next old sync considered for promotion.
	ri := 0
	syncs[0] = replacement
	for cur := 1; cur < syncsPerPartition; cur++ {
		prev := cur - 1
		for {
			old := original[ri]
			// Recent enough to stand at cur (it may still fit later).
			isRecent := invariantB(syncs[prev], old, prev, cur)
			// Far enough from the previous entry; if not, it never will be.
			farFromPrev := invariantC(syncs[prev], old, prev)
			// Far enough from the next entry: keep the sparser tail.
			next := cur + 1
			farFromNext := next >= syncsPerPartition || invariantC(old, syncs[next], cur)
			duplicate := ri+1 < syncsPerPartition && old.id == original[ri+1].id
			promote := isRecent && farFromPrev && farFromNext
			if promote {
				replacement = old
			}
			skip := duplicate || !farFromPrev
			if promote || skip {
				ri++
			}
			if !(ri < cur && skip) {
				break
			}
		}
		if invariantB(syncs[prev], syncs[cur], prev, cur) {
			// B holds here, so it holds for every later index too.
			break
		}
		syncs[cur] = replacement
	}
}

// invariantB: iSync is no newer than jSync allows at distance 2^j - 2^i.
func invariantB(iSync, jSync storedSync, i, j int) bool {
	bound := jSync.upstream + (int64(1) << j) - (int64(1) << i)
	return iSync.id == jSync.id || bound < 0 || iSync.upstream <= bound
}

// invariantC: iSync is at least 2^(i-2) newer than jSync.
func invariantC(iSync, jSync storedSync, i int) bool {
	bound := jSync.upstream + (int64(1) << max(i-2, 0))
	return iSync.id == jSync.id || (bound >= 0 && iSync.upstream >= bound)
}

// snapshot returns a copy of a partition's kept syncs (tests check the
// invariants with it).
func (s *OffsetSyncStore) snapshot(topic string, partition int32) *syncArray {
	s.mu.RLock()
	defer s.mu.RUnlock()
	syncs := s.parts[connect.TopicPartition{Topic: topic, Partition: partition}]
	if syncs == nil {
		return nil
	}
	c := *syncs
	return &c
}
