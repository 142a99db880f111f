package avro

import (
	"encoding/binary"
	"fmt"
)

// MagicByte opens every message in Confluent's wire format, followed by
// the 4-byte big-endian schema id and the Avro binary encoding.
const MagicByte = 0

// headerLen is the magic byte plus the schema id.
const headerLen = 5

// AppendHeader appends the wire-format header for schema id.
func AppendHeader(b []byte, id int32) []byte {
	return binary.BigEndian.AppendUint32(append(b, MagicByte), uint32(id))
}

// ParseHeader splits a wire-format message into schema id and Avro
// payload, with Confluent's errors for what is not one.
func ParseHeader(b []byte) (id int32, payload []byte, err error) {
	if len(b) < headerLen {
		return 0, nil, fmt.Errorf("Unknown magic byte! (message of %d bytes is shorter than the 5-byte header: not written by an Avro serializer)", len(b))
	}
	if b[0] != MagicByte {
		return 0, nil, fmt.Errorf("Unknown magic byte! (first byte is %d, want %d: not written by an Avro serializer)", b[0], MagicByte)
	}
	return int32(binary.BigEndian.Uint32(b[1:5])), b[5:], nil
}
