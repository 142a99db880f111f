package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
)

// requestHeader is the Kafka request header (v1 fields; v2 adds tagged
// fields, which decode skips once it knows the API version is flexible).
// kmsg generates bodies, not headers, so the four header fields are read
// here.
type requestHeader struct {
	key           int16
	version       int16
	correlationID int32
	clientID      string
}

var errShortHeader = errors.New("request header truncated")

// parseHeader reads the fixed part of a request header and returns the
// rest of the frame.
func parseHeader(b []byte) (requestHeader, []byte, error) {
	var h requestHeader
	if len(b) < 10 {
		return h, nil, errShortHeader
	}
	h.key = int16(binary.BigEndian.Uint16(b[0:]))
	h.version = int16(binary.BigEndian.Uint16(b[2:]))
	h.correlationID = int32(binary.BigEndian.Uint32(b[4:]))
	n := int16(binary.BigEndian.Uint16(b[8:]))
	b = b[10:]
	if n >= 0 {
		if int(n) > len(b) {
			return h, nil, fmt.Errorf("client id length %d exceeds request", n)
		}
		h.clientID = string(b[:n])
		b = b[n:]
	} else if n != -1 {
		return h, nil, fmt.Errorf("invalid client id length %d", n)
	}
	return h, b, nil
}

// skipTags skips a tagged-field section (uvarint count, then per field a
// uvarint tag, a uvarint size and that many bytes).
func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad tagged field count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		if _, k = binary.Uvarint(b); k <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, errors.New("bad tagged field size")
		}
		b = b[k+int(size):]
	}
	return b, nil
}

func appendInt32(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

// Frame buffers come from size-classed pools so a steady produce load
// does not allocate a new multi-megabyte buffer per request.
var bufPools [11]sync.Pool // 16 KiB << i: 16 KiB .. 16 MiB

func poolIndex(n int) int {
	for i := range bufPools {
		if n <= 16<<10<<i {
			return i
		}
	}
	return -1
}

func getBuf(n int) *[]byte {
	if i := poolIndex(n); i >= 0 {
		if p, ok := bufPools[i].Get().(*[]byte); ok {
			*p = (*p)[:n]
			return p
		}
		b := make([]byte, n, 16<<10<<i)
		return &b
	}
	b := make([]byte, n)
	return &b
}

func putBuf(p *[]byte) {
	if p == nil {
		return
	}
	c := cap(*p)
	if i := poolIndex(c); i >= 0 && c == 16<<10<<i {
		bufPools[i].Put(p)
	}
}

func sortedKeys[V any](m map[int16]V) []int16 {
	keys := make([]int16, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func stack() string { return string(debug.Stack()) }
