package source

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestAlterOffsetsChecks(t *testing.T) {
	good := map[string]any{"cluster": "a", "topic": "t", "partition": json.Number("3")}
	cases := []struct {
		partition, offset map[string]any
		want              string // "" accepted, else part of the message
	}{
		{good, map[string]any{"offset": float64(7)}, ""},
		{good, nil, ""}, // tombstone
		{nil, nil, ""},  // tombstones are allowed for anything
		{nil, map[string]any{"offset": 1}, "may not be null"},
		{map[string]any{"topic": "t", "partition": 0}, map[string]any{"offset": 1}, "missing the 'cluster' key"},
		{map[string]any{"cluster": 1, "topic": "t", "partition": 0}, map[string]any{"offset": 1}, "'cluster' key, which must be a string"},
		{map[string]any{"cluster": "a", "topic": "t"}, map[string]any{"offset": 1}, "missing the 'partition' key"},
		{map[string]any{"cluster": "a", "topic": "t", "partition": 1.5}, map[string]any{"offset": 1}, "must be an integer"},
		{map[string]any{"cluster": "a", "topic": "t", "partition": int64(1) << 40}, map[string]any{"offset": 1}, "must be an integer"},
		{map[string]any{"cluster": "a", "topic": "t", "partition": -1}, map[string]any{"offset": 1}, "cannot be negative"},
		{good, map[string]any{}, "missing the 'offset' key"},
		{good, map[string]any{"offset": "7"}, "must be an integer"},
		{good, map[string]any{"offset": -2}, "cannot be negative"},
	}
	c := &Connector{}
	for _, tc := range cases {
		_, err := c.AlterOffsets(nil, []connect.SourcePartitionOffset{{Partition: tc.partition, Offset: tc.offset}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v → %v refused: %v", tc.partition, tc.offset, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v → %v: error %v, want one containing %q", tc.partition, tc.offset, err, tc.want)
		}
	}
}

func TestOffsetWrapping(t *testing.T) {
	tp := connect.TopicPartition{Topic: "t", Partition: 4}
	got, ok := unwrapPartition(wrapPartition(tp, "a"))
	if !ok || got != tp {
		t.Errorf("unwrapPartition = %v, %v", got, ok)
	}
	// As read back from a JSON offset store.
	if got, ok := unwrapPartition(map[string]any{"cluster": "a", "topic": "t", "partition": float64(4)}); !ok || got != tp {
		t.Errorf("unwrapPartition(JSON) = %v, %v", got, ok)
	}
	if n := unwrapOffset(map[string]any{"offset": json.Number("12")}); n != 12 {
		t.Errorf("unwrapOffset = %d", n)
	}
	if n := unwrapOffset(nil); n != -1 {
		t.Errorf("no offset unwrapped to %d, want -1", n)
	}
}
