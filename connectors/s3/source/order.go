package source

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// objectRef is one value object of a Kafka partition, with its side
// files when the listing found them.
type objectRef struct {
	Key   string
	Size  int64
	Start int64 // the Kafka offset of its first record, from its name
	// Modified is when the store last wrote it (its clock).
	Modified time.Time
	// KeysKey and HeadersKey are the side files' keys, "" when absent.
	KeysKey     string
	KeysSize    int64
	HeadersKey  string
	HeadersSize int64
}

// compareObjects orders a partition's objects as they are read: by start
// offset, then by key (the sink can write two objects with one start
// offset into two encoded partitions only after a rewind; the key keeps
// the order total and stable across listings).
func compareObjects(aStart int64, aKey string, bStart int64, bKey string) int {
	if c := cmp.Compare(aStart, bStart); c != 0 {
		return c
	}
	return cmp.Compare(aKey, bKey)
}

// cursor is how far a partition has been read: the last object records
// were emitted from and the index of the last record emitted there.
type cursor struct {
	Set    bool // false: nothing read yet
	Key    string
	Start  int64
	Record int64 // index of the last record emitted from Key; -1 for none
	// Done: Key was read to its end in this run (a committed offset only
	// says which record was last, so after a restart the object is opened
	// once more to find out).
	Done bool
}

// pending reports whether o is still to be read after c: it sorts after
// the cursor's object, or it is that object and was not read to its end.
func (c cursor) pending(o objectRef) bool {
	if !c.Set {
		return true
	}
	switch compareObjects(o.Start, o.Key, c.Start, c.Key) {
	case 1:
		return true
	case 0:
		return !c.Done
	}
	return false
}

// skip is how many leading records of o were emitted already.
func (c cursor) skip(o objectRef) int64 {
	if c.Set && o.Key == c.Key {
		return c.Record + 1
	}
	return 0
}

// queue returns the objects still to read after c, in read order.
func queue(objs []objectRef, c cursor) []objectRef {
	out := make([]objectRef, 0, len(objs))
	for _, o := range objs {
		if c.pending(o) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b objectRef) int { return compareObjects(a.Start, a.Key, b.Start, b.Key) })
	return slices.CompactFunc(out, func(a, b objectRef) bool { return a.Key == b.Key })
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
