package connectapi

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeConfig: any body either decodes to a config whose values
// round-trip (a string stays itself; a JSON number or boolean becomes its
// text) or is refused with an error; it never panics.
func FuzzDecodeConfig(f *testing.F) {
	f.Add([]byte(`{"connector.class":"FileStreamSource","tasks.max":1,"x":null,"b":true,"d":1.50e3}`))
	f.Add([]byte(`{"a":{"b":1}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"a":"\u00e9\ud83d\ude00<&>"}`))
	f.Add([]byte(`{"name":`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, nulls, err := decodeConfig(b)
		if err != nil {
			return
		}
		var raw map[string]json.RawMessage
		if json.Unmarshal(b, &raw) != nil {
			t.Fatalf("decodeConfig accepted %q, which is not a JSON object", b)
		}
		if len(cfg)+len(nulls) > len(raw) {
			t.Fatalf("%d values from %d keys", len(cfg)+len(nulls), len(raw))
		}
		for k, v := range cfg {
			var s string
			if json.Unmarshal(raw[k], &s) == nil && s != v {
				t.Fatalf("key %q: %q became %q", k, s, v)
			}
		}
		if _, err := decodePatch(b); err != nil && cfg != nil {
			t.Fatalf("decodePatch refused what decodeConfig accepted: %v", err)
		}
	})
}
