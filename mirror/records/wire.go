package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// MM2 serializes its records with Kafka's protocol types
// (org.apache.kafka.common.protocol.types): a Schema is its fields written
// one after another, big-endian, with no field tags and no length prefix;
// INT16/INT32/INT64 are fixed-width two's complement, and STRING is an
// INT16 byte length followed by that many bytes of UTF-8. Nothing else is
// used by these three records, so this file is the whole wire format.

// MaxStringLen is the longest string (in UTF-8 bytes) a Kafka STRING field
// holds: its length prefix is a signed 16-bit integer.
const MaxStringLen = math.MaxInt16

// ErrMalformed wraps every decoding error, so callers can tell a record
// that is not MM2's format from other failures with errors.Is.
var ErrMalformed = errors.New("malformed mirror record")

// ErrStringTooLong is returned by Validate when a string field does not
// fit a Kafka STRING (Java's SchemaException "String length N is larger
// than the maximum string length.").
var ErrStringTooLong = errors.New("string is larger than the maximum string length")

type writer struct{ b []byte }

func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

// string assumes checkStrings passed: the caller validates first, so a
// too-long string never reaches the wire with a wrapped length.
func (w *writer) string(s string) {
	w.int16(int16(len(s)))
	w.b = append(w.b, s...)
}

func checkStrings(fields ...string) error {
	for i := 0; i < len(fields); i += 2 {
		if n := len(fields[i+1]); n > MaxStringLen {
			return fmt.Errorf("field '%s': %w (%d bytes, at most %d)", fields[i], ErrStringTooLong, n, MaxStringLen)
		}
	}
	return nil
}

// reader reads fields in order and remembers the first error, worded as
// Kafka's Schema.read words it ("Error reading field 'x': ...").
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: Error reading field '%s': %s", ErrMalformed, field, fmt.Sprintf(format, args...))
	}
}

func (r *reader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail(field, "need %d bytes, only %d available", n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int16(field string) int16 {
	if b := r.take(field, 2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32(field string) int32 {
	if b := r.take(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(field string) int64 {
	if b := r.take(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// string keeps the bytes as they are: Java would replace invalid UTF-8
// with U+FFFD, but keeping them lets a record decode and encode back to
// the same bytes, and valid UTF-8 (all MM2 ever writes) reads the same.
func (r *reader) string(field string) string {
	n := r.int16(field)
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.fail(field, "String length %d cannot be negative", n)
		return ""
	}
	if int(n) > len(r.b) {
		r.fail(field, "Error reading string of length %d, only %d bytes available", n, len(r.b))
		return ""
	}
	return string(r.take(field, int(n)))
}
