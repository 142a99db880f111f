package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
)

// Index file layouts, as Kafka writes them (big-endian):
//
//	.index      relativeOffset int32, position int32              8 bytes/entry
//	.timeindex  timestamp int64, relativeOffset int32            12 bytes/entry
//
// Kafka mmaps and preallocates index files to segment.index.bytes and trims
// them when the segment is closed; here the files only ever hold valid
// entries (each appended with one pwrite) and the entries live in memory for
// lookups. A file with a torn or zeroed tail, as Kafka's preallocated files
// are after a crash, fails validation and is rebuilt from the log.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

// errCorruptIndex marks an index that must be rebuilt from its segment.
var errCorruptIndex = errors.New("corrupt index")

type offsetEntry struct {
	rel uint32 // offset - base
	pos uint32 // byte position of a batch start in the .log
}

// offsetIndex is a sparse offset → position map: an entry (o, p) says the
// batch starting at p holds offsets up to o, so every offset > o lies at or
// after p.
type offsetIndex struct {
	base    int64
	f       *os.File
	entries []offsetEntry
	scratch [offsetEntrySize]byte
}

// lookup returns the position of the last entry whose offset is <= offset,
// or 0: the place to start scanning for offset.
func (x *offsetIndex) lookup(offset int64) int64 {
	i := x.floor(offset)
	if i < 0 {
		return 0
	}
	return int64(x.entries[i].pos)
}

// floor returns the index of the last entry with offset <= offset, or -1.
func (x *offsetIndex) floor(offset int64) int {
	rel := offset - x.base
	if rel < 0 {
		return -1
	}
	return sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].rel) > rel }) - 1
}

// floorPos returns the index of the last entry with position <= pos, or -1.
func (x *offsetIndex) floorPos(pos int64) int {
	return sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) > pos }) - 1
}

func (x *offsetIndex) lastOffset() int64 {
	if len(x.entries) == 0 {
		return x.base
	}
	return x.base + int64(x.entries[len(x.entries)-1].rel)
}

func (x *offsetIndex) append(offset, pos int64) error {
	e := offsetEntry{rel: uint32(offset - x.base), pos: uint32(pos)}
	if err := x.writeSlot(len(x.entries), e); err != nil {
		return err
	}
	x.entries = append(x.entries, e)
	return nil
}

// writeSlot writes entry number slot to the file.
func (x *offsetIndex) writeSlot(slot int, e offsetEntry) error {
	binary.BigEndian.PutUint32(x.scratch[0:], e.rel)
	binary.BigEndian.PutUint32(x.scratch[4:], e.pos)
	if _, err := x.f.WriteAt(x.scratch[:], int64(slot)*offsetEntrySize); err != nil {
		return fmt.Errorf("append offset index entry to %s: %w", x.f.Name(), err)
	}
	return nil
}

// truncateTo drops the entries for offsets >= offset.
func (x *offsetIndex) truncateTo(offset int64) error {
	n := len(x.entries)
	if rel := offset - x.base; rel <= 0 {
		n = 0
	} else {
		n = sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].rel) >= rel })
	}
	return x.truncateEntries(n)
}

func (x *offsetIndex) truncateEntries(n int) error {
	if err := x.f.Truncate(int64(n) * offsetEntrySize); err != nil {
		return fmt.Errorf("truncate offset index %s: %w", x.f.Name(), err)
	}
	x.entries = x.entries[:n]
	return nil
}

// decodeOffsetIndex parses and checks an .index file: whole entries,
// offsets and positions strictly increasing, positions inside the log.
func decodeOffsetIndex(b []byte, logSize int64) ([]offsetEntry, error) {
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: offset index size %d is not a multiple of %d", errCorruptIndex, len(b), offsetEntrySize)
	}
	entries := make([]offsetEntry, len(b)/offsetEntrySize)
	for i := range entries {
		e := offsetEntry{
			rel: binary.BigEndian.Uint32(b[i*offsetEntrySize:]),
			pos: binary.BigEndian.Uint32(b[i*offsetEntrySize+4:]),
		}
		if int32(e.rel) < 0 || int64(e.pos) >= logSize {
			return nil, fmt.Errorf("%w: offset index entry %d (%d, %d) outside the segment of %d bytes", errCorruptIndex, i, e.rel, e.pos, logSize)
		}
		if i > 0 && (e.rel <= entries[i-1].rel || e.pos <= entries[i-1].pos) {
			return nil, fmt.Errorf("%w: offset index entry %d (%d, %d) does not follow (%d, %d)", errCorruptIndex, i, e.rel, e.pos, entries[i-1].rel, entries[i-1].pos)
		}
		entries[i] = e
	}
	return entries, nil
}

func encodeOffsetIndex(entries []offsetEntry) []byte {
	b := make([]byte, len(entries)*offsetEntrySize)
	for i, e := range entries {
		binary.BigEndian.PutUint32(b[i*offsetEntrySize:], e.rel)
		binary.BigEndian.PutUint32(b[i*offsetEntrySize+4:], e.pos)
	}
	return b
}

type timeEntry struct {
	ts  int64
	rel uint32
}

// timeIndex maps the segment's running maximum timestamp to the offset
// where it was reached: entries have strictly increasing timestamps, so a
// lookup finds where to start scanning for the first record >= ts.
type timeIndex struct {
	base    int64
	f       *os.File
	entries []timeEntry
	scratch [timeEntrySize]byte
}

// lookup returns the last entry with timestamp <= ts, or (-1, base).
func (x *timeIndex) lookup(ts int64) (int64, int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].ts > ts }) - 1
	if i < 0 {
		return -1, x.base
	}
	return x.entries[i].ts, x.base + int64(x.entries[i].rel)
}

func (x *timeIndex) last() (ts, offset int64) {
	if len(x.entries) == 0 {
		return -1, x.base
	}
	e := x.entries[len(x.entries)-1]
	return e.ts, x.base + int64(e.rel)
}

// maybeAppend adds (ts, offset) if ts is larger than the last entry's, as
// Kafka's TimeIndex.maybeAppend does.
func (x *timeIndex) maybeAppend(ts, offset int64) error {
	// An empty index's last timestamp is -1 (no timestamp), so segments
	// without timestamps keep an empty time index, as in Kafka.
	if last, _ := x.last(); ts <= last {
		return nil
	}
	e := timeEntry{ts: ts, rel: uint32(offset - x.base)}
	if err := x.writeSlot(len(x.entries), e); err != nil {
		return err
	}
	x.entries = append(x.entries, e)
	return nil
}

// writeSlot writes entry number slot to the file.
func (x *timeIndex) writeSlot(slot int, e timeEntry) error {
	binary.BigEndian.PutUint64(x.scratch[0:], uint64(e.ts))
	binary.BigEndian.PutUint32(x.scratch[8:], e.rel)
	if _, err := x.f.WriteAt(x.scratch[:], int64(slot)*timeEntrySize); err != nil {
		return fmt.Errorf("append time index entry to %s: %w", x.f.Name(), err)
	}
	return nil
}

// truncateTo drops the entries for offsets >= offset.
func (x *timeIndex) truncateTo(offset int64) error {
	n := len(x.entries)
	for n > 0 && x.base+int64(x.entries[n-1].rel) >= offset {
		n--
	}
	if err := x.f.Truncate(int64(n) * timeEntrySize); err != nil {
		return fmt.Errorf("truncate time index %s: %w", x.f.Name(), err)
	}
	x.entries = x.entries[:n]
	return nil
}

// decodeTimeIndex parses and checks a .timeindex file: whole entries,
// timestamps strictly increasing, offsets non-decreasing and not before the
// segment base.
func decodeTimeIndex(b []byte) ([]timeEntry, error) {
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: time index size %d is not a multiple of %d", errCorruptIndex, len(b), timeEntrySize)
	}
	entries := make([]timeEntry, len(b)/timeEntrySize)
	for i := range entries {
		e := timeEntry{
			ts:  int64(binary.BigEndian.Uint64(b[i*timeEntrySize:])),
			rel: binary.BigEndian.Uint32(b[i*timeEntrySize+8:]),
		}
		if int32(e.rel) < 0 {
			return nil, fmt.Errorf("%w: time index entry %d has offset %d before the segment base", errCorruptIndex, i, int32(e.rel))
		}
		if i > 0 && (e.ts <= entries[i-1].ts || e.rel < entries[i-1].rel) {
			return nil, fmt.Errorf("%w: time index entry %d (%d, %d) does not follow (%d, %d)", errCorruptIndex, i, e.ts, e.rel, entries[i-1].ts, entries[i-1].rel)
		}
		entries[i] = e
	}
	return entries, nil
}

func encodeTimeIndex(entries []timeEntry) []byte {
	b := make([]byte, len(entries)*timeEntrySize)
	for i, e := range entries {
		binary.BigEndian.PutUint64(b[i*timeEntrySize:], uint64(e.ts))
		binary.BigEndian.PutUint32(b[i*timeEntrySize+8:], e.rel)
	}
	return b
}
