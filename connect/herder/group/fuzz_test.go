package group

import (
	"reflect"
	"testing"
)

// FuzzDecodeAssignment: any bytes decode or fail cleanly, and whatever
// decodes survives an encode/decode round trip unchanged (up to the order
// Kafka lists connectors in). Seeds: testdata/fuzz/FuzzDecodeAssignment
// (Kafka's encodings from protocol.json).
func FuzzDecodeAssignment(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 1, 'l', 0, 1, 'u', 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAssignment(b)
		if err != nil {
			return
		}
		for _, p := range []string{ProtocolCompatible, ProtocolSessioned} {
			enc, err := EncodeAssignment(p, a)
			if err != nil {
				t.Fatalf("encode decoded assignment: %v", err)
			}
			back, err := DecodeAssignment(enc)
			if err != nil {
				t.Fatalf("decode re-encoded assignment: %v", err)
			}
			back.Version = a.Version
			if !reflect.DeepEqual(normalize(back), normalize(a)) {
				t.Fatalf("round trip changed the assignment:\n got %+v\nwant %+v", normalize(back), normalize(a))
			}
		}
	})
}

// FuzzDecodeMetadata: the same for worker metadata under each protocol.
func FuzzDecodeMetadata(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 'u', 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range []string{ProtocolDefault, ProtocolCompatible, ProtocolSessioned} {
			s, err := DecodeMetadata(p, b)
			if err != nil {
				continue
			}
			enc, err := EncodeMetadata(p, s)
			if err != nil {
				t.Fatalf("encode decoded metadata: %v", err)
			}
			back, err := DecodeMetadata(p, enc)
			if err != nil {
				t.Fatalf("decode re-encoded metadata: %v", err)
			}
			if back.URL != s.URL || back.ConfigOffset != s.ConfigOffset {
				t.Fatalf("round trip changed the metadata: %+v vs %+v", back, s)
			}
			if s.Assignment != nil {
				back.Assignment.Version = s.Assignment.Version
			}
			if !reflect.DeepEqual(normalize(back.Assignment), normalize(s.Assignment)) {
				t.Fatalf("round trip changed the allocation:\n got %+v\nwant %+v", back.Assignment, s.Assignment)
			}
		}
	})
}
