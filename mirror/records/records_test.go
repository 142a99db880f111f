package records

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// unhex reads hex with spaces and "|" as visual separators between fields.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden bytes are written out by hand from MM2's schemas (see each
// type's doc comment): Kafka's STRING is an INT16 byte count then UTF-8,
// integers are big-endian, fields follow one another with nothing between,
// and checkpoint/heartbeat values start with the INT16 version 0 header
// (Checkpoint.serializeValue writes HEADER_SCHEMA, then VALUE_SCHEMA_V0).

func TestOffsetSyncGolden(t *testing.T) {
	cases := []struct {
		s          OffsetSync
		key, value string
	}{
		{
			OffsetSync{Topic: "orders", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 42},
			// len 6 | "orders" | partition 3
			"0006 | 6f7264657273 | 00000003",
			// upstreamOffset 1000 = 0x3e8 | offset 42 = 0x2a
			"00000000000003e8 | 000000000000002a",
		},
		{
			// Length counts UTF-8 bytes ("ø" is c3 b8), not characters;
			// negatives are two's complement.
			OffsetSync{Topic: "ø", Partition: -1, UpstreamOffset: -1, DownstreamOffset: 1 << 40},
			"0002 | c3b8 | ffffffff",
			"ffffffffffffffff | 0000010000000000",
		},
		{
			OffsetSync{},
			"0000 | 00000000",
			"0000000000000000 | 0000000000000000",
		},
	}
	for _, c := range cases {
		if got, want := c.s.Key(), unhex(t, c.key); !bytes.Equal(got, want) {
			t.Errorf("%v key = %x, want %x", c.s, got, want)
		}
		if got, want := c.s.Value(), unhex(t, c.value); !bytes.Equal(got, want) {
			t.Errorf("%v value = %x, want %x", c.s, got, want)
		}
		got, err := DecodeOffsetSync(unhex(t, c.key), unhex(t, c.value))
		if err != nil || got != c.s {
			t.Errorf("decode = %v, %v; want %v", got, err, c.s)
		}
	}
}

func TestCheckpointGolden(t *testing.T) {
	c := Checkpoint{ConsumerGroupID: "g1", Topic: "a.orders", Partition: 2, UpstreamOffset: 100, DownstreamOffset: 90, Metadata: "m"}
	// len 2 | "g1" | len 8 | "a.orders" | partition 2
	key := unhex(t, "0002 | 6731 | 0008 | 612e6f7264657273 | 00000002")
	// version 0 | upstreamOffset 100 = 0x64 | offset 90 = 0x5a | len 1 | "m"
	value := unhex(t, "0000 | 0000000000000064 | 000000000000005a | 0001 | 6d")
	if got := c.Key(); !bytes.Equal(got, key) {
		t.Errorf("key = %x, want %x", got, key)
	}
	if got := c.Value(); !bytes.Equal(got, value) {
		t.Errorf("value = %x, want %x", got, value)
	}
	got, err := DecodeCheckpoint(key, value)
	if err != nil || got != c {
		t.Errorf("decode = %v, %v; want %v", got, err, c)
	}

	// Empty metadata (what most consumers commit) is a zero-length STRING,
	// not absent.
	empty := Checkpoint{ConsumerGroupID: "g", Topic: "t"}
	if got, want := empty.Value(), unhex(t, "0000 | 0000000000000000 | 0000000000000000 | 0000"); !bytes.Equal(got, want) {
		t.Errorf("empty metadata value = %x, want %x", got, want)
	}
}

func TestHeartbeatGolden(t *testing.T) {
	h := Heartbeat{SourceClusterAlias: "us-west", TargetClusterAlias: "b", Timestamp: 1700000000000}
	// len 7 | "us-west" | len 1 | "b"
	key := unhex(t, "0007 | 75732d77657374 | 0001 | 62")
	// version 0 | 1700000000000 = 0x18bcfe56800
	value := unhex(t, "0000 | 0000018bcfe56800")
	if got := h.Key(); !bytes.Equal(got, key) {
		t.Errorf("key = %x, want %x", got, key)
	}
	if got := h.Value(); !bytes.Equal(got, value) {
		t.Errorf("value = %x, want %x", got, value)
	}
	got, err := DecodeHeartbeat(key, value)
	if err != nil || got != h {
		t.Errorf("decode = %v, %v; want %v", got, err, h)
	}
}

// MM2 reads any version with the version-0 schema and ignores trailing
// bytes (Schema.read stops after its last field); a future version that
// appends fields must still decode.
func TestDecodeToleratesVersionAndTrailingBytes(t *testing.T) {
	h := Heartbeat{SourceClusterAlias: "a", TargetClusterAlias: "b", Timestamp: 7}
	v := append(h.Value(), 0xde, 0xad)
	v[1] = 1 // version 1
	got, err := DecodeHeartbeat(append(h.Key(), 0xff), v)
	if err != nil || got != h {
		t.Errorf("decode = %v, %v; want %v", got, err, h)
	}
	s := OffsetSync{Topic: "t", Partition: 1, UpstreamOffset: 2, DownstreamOffset: 3}
	if got, err := DecodeOffsetSync(append(s.Key(), 0), append(s.Value(), 0)); err != nil || got != s {
		t.Errorf("decode = %v, %v; want %v", got, err, s)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"sync key short", err2(DecodeOffsetSync(unhex(t, "0001 | 61 | 0000"), make([]byte, 16))),
			"Error reading field 'partition': need 4 bytes, only 2 available"},
		{"sync value short", err2(DecodeOffsetSync(unhex(t, "0001 | 61 | 00000000"), make([]byte, 15))),
			"Error reading field 'offset': need 8 bytes, only 7 available"},
		{"negative string length", err2(DecodeOffsetSync(unhex(t, "ffff"), make([]byte, 16))),
			"Error reading field 'topic': String length -1 cannot be negative"},
		{"string past end", err2(DecodeOffsetSync(unhex(t, "0005 | 6162"), make([]byte, 16))),
			"Error reading field 'topic': Error reading string of length 5, only 2 bytes available"},
		{"empty key", err2(DecodeOffsetSync(nil, make([]byte, 16))),
			"Error reading field 'topic': need 2 bytes, only 0 available"},
		{"checkpoint no header", err2(DecodeCheckpoint(Checkpoint{}.Key(), []byte{0})),
			"Error reading field 'version': need 2 bytes, only 1 available"},
		{"checkpoint no metadata", err2(DecodeCheckpoint(Checkpoint{}.Key(), make([]byte, 18))),
			"Error reading field 'metadata': need 2 bytes, only 0 available"},
		{"checkpoint key", err2(DecodeCheckpoint(unhex(t, "0000"), Checkpoint{}.Value())),
			"Error reading field 'topic': need 2 bytes, only 0 available"},
		{"heartbeat value", err2(DecodeHeartbeat(Heartbeat{}.Key(), make([]byte, 9))),
			"Error reading field 'timestamp': need 8 bytes, only 7 available"},
		{"heartbeat key", err2(DecodeHeartbeat(unhex(t, "0000"), Heartbeat{}.Value())),
			"Error reading field 'targetClusterAlias': need 2 bytes, only 0 available"},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(c.err, ErrMalformed) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %q, want ErrMalformed containing %q", c.name, c.err, c.want)
		}
	}
}

func err2[T any](_ T, err error) error { return err }

func TestTooLongStrings(t *testing.T) {
	long := strings.Repeat("x", MaxStringLen+1)
	fits := strings.Repeat("x", MaxStringLen)
	if err := (Checkpoint{Metadata: long}).Validate(); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("Validate = %v, want ErrStringTooLong", err)
	}
	if k, v := (Checkpoint{Metadata: long}).Key(), (Checkpoint{Metadata: long}).Value(); k != nil || v != nil {
		t.Error("a checkpoint that cannot be encoded must give nil key and value")
	}
	if (OffsetSync{Topic: long}).Key() != nil || (Heartbeat{TargetClusterAlias: long}).Key() != nil {
		t.Error("too-long strings must give a nil key")
	}
	c := Checkpoint{ConsumerGroupID: fits, Metadata: fits}
	got, err := DecodeCheckpoint(c.Key(), c.Value())
	if err != nil || got != c {
		t.Errorf("32767-byte strings must round-trip: %v", err)
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OffsetSync{Topic: "t", Partition: 1, UpstreamOffset: 2, DownstreamOffset: 3}.String(),
			"OffsetSync{topicPartition=t-1, upstreamOffset=2, downstreamOffset=3}"},
		{Checkpoint{ConsumerGroupID: "g", Topic: "t", Partition: 1, UpstreamOffset: 2, DownstreamOffset: 3, Metadata: "m"}.String(),
			"Checkpoint{consumerGroupId=g, topicPartition=t-1, upstreamOffset=2, downstreamOffset=3, metadata=m}"},
		{Heartbeat{SourceClusterAlias: "a", TargetClusterAlias: "b", Timestamp: 5}.String(),
			"Heartbeat{sourceClusterAlias=a, targetClusterAlias=b, timestamp=5}"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
