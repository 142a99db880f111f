package connect

import (
	"encoding/json"
	"math"
)

// OffsetLong reads an integer of a source offset in any of the Go forms a
// JSON integer takes on its way through the runtime and the offset stores
// (Kafka's Long): int64 and its smaller friends, json.Number, and a
// float64 that holds an integer exactly.
func OffsetLong(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}
