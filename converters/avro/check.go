package avro

import (
	"errors"
	"fmt"

	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// goavro allocates arrays and maps for the item count a block header
// claims before reading the items, so a corrupt or hostile message with
// a huge count makes it allocate gigabytes. checkBlocks walks the
// message first (no allocation) and refuses counts the remaining bytes
// cannot hold. It runs only for schemas with arrays or maps.

// maxZeroSizeItems bounds blocks of items that take no bytes (arrays of
// null or of empty records), which the byte count cannot bound.
const maxZeroSizeItems = 1 << 20

var errTruncated = errors.New("truncated Avro data")

func hasBlocks(s *avsc.Schema) bool {
	return walkSchema(s, map[*avsc.Schema]bool{}, func(n *avsc.Schema) bool { return n.Type == avsc.Array || n.Type == avsc.Map })
}

func walkSchema(s *avsc.Schema, seen map[*avsc.Schema]bool, pred func(*avsc.Schema) bool) bool {
	if seen[s] {
		return false
	}
	seen[s] = true
	if pred(s) {
		return true
	}
	for _, c := range children(s) {
		if walkSchema(c, seen, pred) {
			return true
		}
	}
	return false
}

func children(s *avsc.Schema) []*avsc.Schema {
	var out []*avsc.Schema
	if s.Items != nil {
		out = append(out, s.Items)
	}
	if s.Values != nil {
		out = append(out, s.Values)
	}
	out = append(out, s.Branches...)
	for _, f := range s.Fields {
		out = append(out, f.Type)
	}
	return out
}

// minSize is the fewest bytes a value of s takes.
func minSize(s *avsc.Schema, seen map[*avsc.Schema]bool) int {
	switch s.Type {
	case avsc.Null:
		return 0
	case avsc.Float:
		return 4
	case avsc.Double:
		return 8
	case avsc.Fixed:
		return s.Size
	case avsc.Record:
		if seen[s] {
			return 0
		}
		seen[s] = true
		n := 0
		for _, f := range s.Fields {
			n += minSize(f.Type, seen)
		}
		delete(seen, s)
		return n
	}
	return 1
}

func readLong(b []byte) (int64, []byte, error) {
	var u uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, nil, errTruncated
		}
		c := b[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return int64(u>>1) ^ -int64(u&1), b[i+1:], nil
		}
	}
	return 0, nil, errors.New("Avro varint longer than 10 bytes")
}

func checkBlocks(s *avsc.Schema, b []byte) error {
	_, err := skip(s, b, 0)
	return err
}

func skip(s *avsc.Schema, b []byte, depth int) ([]byte, error) {
	if depth > 1000 {
		return nil, errors.New("Avro data nested too deeply")
	}
	var err error
	switch s.Type {
	case avsc.Null:
		return b, nil
	case avsc.Boolean:
		if len(b) < 1 {
			return nil, errTruncated
		}
		return b[1:], nil
	case avsc.Int, avsc.Long, avsc.Enum:
		_, b, err = readLong(b)
		return b, err
	case avsc.Float, avsc.Double, avsc.Fixed:
		n := minSize(s, nil)
		if len(b) < n {
			return nil, errTruncated
		}
		return b[n:], nil
	case avsc.Bytes, avsc.String:
		var n int64
		if n, b, err = readLong(b); err != nil {
			return nil, err
		}
		if n < 0 || n > int64(len(b)) {
			return nil, fmt.Errorf("Avro length %d exceeds the %d bytes left", n, len(b))
		}
		return b[n:], nil
	case avsc.Union:
		var i int64
		if i, b, err = readLong(b); err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(s.Branches)) {
			return nil, fmt.Errorf("Avro union index %d out of range", i)
		}
		return skip(s.Branches[i], b, depth+1)
	case avsc.Record:
		for _, f := range s.Fields {
			if b, err = skip(f.Type, b, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case avsc.Array, avsc.Map:
		item := s.Items
		per := 0
		if s.Type == avsc.Map {
			item, per = s.Values, 1 // the key's length byte
		}
		per += minSize(item, map[*avsc.Schema]bool{})
		for {
			var count int64
			if count, b, err = readLong(b); err != nil {
				return nil, err
			}
			if count == 0 {
				return b, nil
			}
			if count < 0 {
				count = -count
				if _, b, err = readLong(b); err != nil { // block size in bytes
					return nil, err
				}
			}
			if count < 0 || (per > 0 && count > int64(len(b)/per)) || (per == 0 && count > maxZeroSizeItems) {
				return nil, fmt.Errorf("Avro block of %d items exceeds the %d bytes left", count, len(b))
			}
			for range count {
				if s.Type == avsc.Map {
					if b, err = skip(&avsc.Schema{Type: avsc.String}, b, depth+1); err != nil {
						return nil, err
					}
				}
				if b, err = skip(item, b, depth+1); err != nil {
					return nil, err
				}
			}
		}
	}
	return nil, fmt.Errorf("unknown Avro type %s", s.Type)
}
