package source

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func keysOf(objs []objectRef) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key
	}
	return out
}

// A time-based layout spreads one Kafka partition over directories whose
// names sort unlike the offsets: the read order is the start offset's.
func TestQueueOrdersByStartOffsetAcrossDirectories(t *testing.T) {
	objs := []objectRef{
		{Key: "topics/t/hour=10/t+0+0000000020.json", Start: 20},
		{Key: "topics/t/hour=09/t+0+0000000030.json", Start: 30},
		{Key: "topics/t/hour=11/t+0+0000000000.json", Start: 0},
		{Key: "topics/t/hour=08/t+0+0000000010.json", Start: 10},
		// Same start offset in two directories: the key breaks the tie.
		{Key: "topics/t/hour=12/t+0+0000000010.json", Start: 10},
	}
	got := keysOf(queue(objs, cursor{}))
	want := []string{
		"topics/t/hour=11/t+0+0000000000.json",
		"topics/t/hour=08/t+0+0000000010.json",
		"topics/t/hour=12/t+0+0000000010.json",
		"topics/t/hour=10/t+0+0000000020.json",
		"topics/t/hour=09/t+0+0000000030.json",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order\n got %v\nwant %v", got, want)
	}
	// Offsets beyond 10 digits order numerically, not as text.
	big := queue([]objectRef{{Key: "b", Start: 10000000000}, {Key: "a", Start: 9999999999}}, cursor{})
	if big[0].Start != 9999999999 {
		t.Fatalf("big offsets out of order: %v", big)
	}
}

func TestCursorResume(t *testing.T) {
	objs := []objectRef{
		{Key: "p/t+0+0000000000.json", Start: 0},
		{Key: "p/t+0+0000000005.json", Start: 5},
		{Key: "p/t+0+0000000010.json", Start: 10},
	}
	for _, tc := range []struct {
		name string
		c    cursor
		want []string
		skip int64 // records to skip in the first queued object
	}{
		{"nothing read", cursor{}, keysOf(objs), 0},
		{"mid second object", cursor{Set: true, Key: objs[1].Key, Start: 5, Record: 2}, keysOf(objs[1:]), 3},
		// A committed offset does not say the object ended: it is opened
		// again (and skips everything) after a restart.
		{"last record of second, restarted", cursor{Set: true, Key: objs[1].Key, Start: 5, Record: 4}, keysOf(objs[1:]), 5},
		{"second read to its end in this run", cursor{Set: true, Key: objs[1].Key, Start: 5, Record: 4, Done: true}, keysOf(objs[2:]), 0},
		// The committed object was deleted since: everything sorting
		// after it is still read, nothing before.
		{"committed object gone", cursor{Set: true, Key: "p/t+0+0000000007.json", Start: 7, Record: 0}, keysOf(objs[2:]), 0},
		{"all read", cursor{Set: true, Key: objs[2].Key, Start: 10, Record: 0, Done: true}, []string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := queue(objs, tc.c)
			if got := keysOf(q); !slices.Equal(got, tc.want) {
				t.Fatalf("queue %v, want %v", got, tc.want)
			}
			if len(q) > 0 {
				if got := tc.c.skip(q[0]); got != tc.skip {
					t.Fatalf("skip %d, want %d", got, tc.skip)
				}
			}
		})
	}
}

func TestCursorFromCommittedOffset(t *testing.T) {
	parse := func(key string) (int64, bool) { return 42, key == "k+0+0000000042.json" }
	// The offset stores give numbers back as float64 (JSON) or
	// json.Number; both are read.
	for _, off := range []map[string]any{
		{ObjectField: "k+0+0000000042.json", StartField: float64(42), RecordField: float64(7)},
		{ObjectField: "k+0+0000000042.json", StartField: json.Number("42"), RecordField: json.Number("7")},
		{ObjectField: "k+0+0000000042.json", RecordField: int64(7)}, // start from the name
	} {
		c, err := cursorFrom(off, parse)
		if err != nil {
			t.Fatalf("%v: %v", off, err)
		}
		if want := (cursor{Set: true, Key: "k+0+0000000042.json", Start: 42, Record: 7}); c != want {
			t.Fatalf("%v: cursor %+v, want %+v", off, c, want)
		}
	}
	if c, err := cursorFrom(nil, parse); err != nil || c.Set {
		t.Fatalf("no offset: %+v %v", c, err)
	}
	for _, bad := range []map[string]any{
		{RecordField: int64(1)},
		{ObjectField: "k+0+0000000042.json", RecordField: "x"},
		{ObjectField: "other", RecordField: int64(1)}, // no start, unparsable name
	} {
		if _, err := cursorFrom(bad, parse); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestSplitDealsPartitionsRoundRobin(t *testing.T) {
	tp := func(t string, p int32) connect.TopicPartition { return connect.TopicPartition{Topic: t, Partition: p} }
	tps := []connect.TopicPartition{tp("b", 0), tp("a", 2), tp("a", 0), tp("a", 1), tp("b", 1)}
	got := split(tps, 2)
	want := [][]connect.TopicPartition{{tp("a", 0), tp("a", 2), tp("b", 1)}, {tp("a", 1), tp("b", 0)}}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("group %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := split(tps, 10); len(got) != len(tps) {
		t.Fatalf("more tasks than partitions: %d groups, want one per partition", len(got))
	}
	if got := split(nil, 3); len(got) != 0 {
		t.Fatalf("no partitions: %d groups, want none", len(got))
	}
}

func TestAlterOffsetsChecksShape(t *testing.T) {
	c := &Connector{}
	part := map[string]any{TopicField: "t", PartitionField: float64(3)}
	ok := []connect.SourcePartitionOffset{
		{Partition: part, Offset: map[string]any{ObjectField: "topics/t/partition=3/t+3+0000000000.json", StartField: 0, RecordField: 4}},
		{Partition: part}, // tombstone
	}
	if handled, err := c.AlterOffsets(nil, ok); err != nil || !handled {
		t.Fatalf("valid offsets refused: %v", err)
	}
	for _, bad := range []connect.SourcePartitionOffset{
		{Partition: map[string]any{PartitionField: 1}, Offset: nil},
		{Partition: map[string]any{TopicField: "t", PartitionField: -1}},
		{Partition: part, Offset: map[string]any{RecordField: 1}},
	} {
		if _, err := c.AlterOffsets(nil, []connect.SourcePartitionOffset{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
