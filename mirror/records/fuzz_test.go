package records

import (
	"bytes"
	"testing"
)

// The fuzzers feed arbitrary bytes to the decoders: they must never panic,
// and whatever decodes must encode back to the bytes it was read from
// (less trailing bytes, and with the version header normalised to 0).

func FuzzDecodeOffsetSync(f *testing.F) {
	s := OffsetSync{Topic: "orders", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 42}
	f.Add(s.Key(), s.Value())
	f.Add([]byte{0xff, 0xff}, []byte{})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeOffsetSync(key, value)
		if err != nil {
			return
		}
		if k := got.Key(); !bytes.HasPrefix(key, k) {
			t.Fatalf("key %x re-encodes as %x", key, k)
		}
		if v := got.Value(); !bytes.HasPrefix(value, v) {
			t.Fatalf("value %x re-encodes as %x", value, v)
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	c := Checkpoint{ConsumerGroupID: "g1", Topic: "a.orders", Partition: 2, UpstreamOffset: 100, DownstreamOffset: 90, Metadata: "m"}
	f.Add(c.Key(), c.Value())
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte{0, 1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeCheckpoint(key, value)
		if err != nil {
			return
		}
		if k := got.Key(); !bytes.HasPrefix(key, k) {
			t.Fatalf("key %x re-encodes as %x", key, k)
		}
		if v := got.Value(); !bytes.HasPrefix(value[2:], v[2:]) {
			t.Fatalf("value %x re-encodes as %x", value, v)
		}
		again, err := DecodeCheckpoint(got.Key(), got.Value())
		if err != nil || again != got {
			t.Fatalf("round trip: %v, %v; want %v", again, err, got)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	h := Heartbeat{SourceClusterAlias: "a", TargetClusterAlias: "b", Timestamp: 1700000000000}
	f.Add(h.Key(), h.Value())
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeHeartbeat(key, value)
		if err != nil {
			return
		}
		if k := got.Key(); !bytes.HasPrefix(key, k) {
			t.Fatalf("key %x re-encodes as %x", key, k)
		}
		if v := got.Value(); !bytes.HasPrefix(value[2:], v[2:]) {
			t.Fatalf("value %x re-encodes as %x", value, v)
		}
	})
}

// Round trips from structured input: encode, decode, compare.
func FuzzRoundTrip(f *testing.F) {
	f.Add("g", "t", int32(0), int64(1), int64(2), "meta", "a", "b")
	f.Fuzz(func(t *testing.T, group, topic string, part int32, up, down int64, meta, src, dst string) {
		c := Checkpoint{group, topic, part, up, down, meta}
		if c.Validate() != nil || (Heartbeat{src, dst, 0}).Validate() != nil {
			return // strings over 32767 bytes have no encoding (TestTooLongStrings)
		}
		if got, err := DecodeCheckpoint(c.Key(), c.Value()); err != nil || got != c {
			t.Fatalf("checkpoint %v: %v, %v", c, got, err)
		}
		s := OffsetSync{topic, part, up, down}
		if got, err := DecodeOffsetSync(s.Key(), s.Value()); err != nil || got != s {
			t.Fatalf("offset sync %v: %v, %v", s, got, err)
		}
		h := Heartbeat{src, dst, up}
		if got, err := DecodeHeartbeat(h.Key(), h.Value()); err != nil || got != h {
			t.Fatalf("heartbeat %v: %v, %v", h, got, err)
		}
	})
}
