package jvm

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// SortedKeys returns m's keys in order. Go maps have no order; Kafka's
// come in whatever order the Java map kept, so converters that must be
// deterministic write keys sorted.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SortedAnyKeys returns m's keys ordered by CompareKeys.
func SortedAnyKeys(m map[any]any) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareKeys)
	return keys
}

// CompareKeys orders map keys of any Connect type: numbers by value,
// strings, booleans and times naturally, values of different types by
// type name, and anything else by its printed form.
func CompareKeys(a, b any) int {
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case int8:
		return cmp.Compare(x, b.(int8))
	case int16:
		return cmp.Compare(x, b.(int16))
	case int32:
		return cmp.Compare(x, b.(int32))
	case int64:
		return cmp.Compare(x, b.(int64))
	case float32:
		return cmp.Compare(x, b.(float32))
	case float64:
		return cmp.Compare(x, b.(float64))
	case string:
		return cmp.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case time.Time:
		return x.Compare(b.(time.Time))
	case connect.Decimal:
		y := b.(connect.Decimal)
		if c := cmp.Compare(x.Scale, y.Scale); c != 0 {
			return c
		}
		return x.Unscaled.Cmp(y.Unscaled)
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func keyRank(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%T", v)
}
