package json

import (
	"math"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/convtest"
)

// The fuzz targets check the convtest properties (no panic, only
// DataErrors) and, beyond them, that what JSON decodes encodes again and
// decodes to the same data (except infinities, which Kafka writes as the
// strings "Infinity" and reads back as 0 or text).

func FuzzToConnectData(f *testing.F) {
	seedFuzz(f)
	convtest.Fuzz(f, func() connect.Converter { return New() })
}

func FuzzToConnectDataSchemaless(f *testing.F) {
	seedFuzz(f)
	convtest.Fuzz(f, func() connect.Converter {
		c := New()
		_ = c.Configure(map[string]string{"schemas.enable": "false"}, false)
		return c
	})
}

func FuzzRoundTrip(f *testing.F) {
	seedFuzz(f)
	env, nos := New(), New()
	_ = nos.Configure(map[string]string{"schemas.enable": "false"}, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Converter{env, nos} {
			s, v, err := c.ToConnectData("t", nil, data)
			if err != nil || hasInf(v) {
				continue
			}
			b, err := c.FromConnectData("t", nil, s, v)
			if err != nil {
				continue // e.g. a decimal whose text scale differs from its schema's
			}
			s2, v2, err := c.ToConnectData("t", nil, b)
			if err != nil {
				t.Fatalf("%q decoded, encoded to %q, which does not decode: %v", data, b, err)
			}
			if err := convtest.Equal(s, v, s2, v2); err != nil {
				t.Fatalf("%q → %q: %v", data, b, err)
			}
		}
	})
}

func hasInf(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0) || x != x
	case float32:
		return math.IsInf(float64(x), 0) || x != x
	case []any:
		for _, e := range x {
			if hasInf(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasInf(e) {
				return true
			}
		}
	case map[any]any:
		for k, e := range x {
			if hasInf(k) || hasInf(e) {
				return true
			}
		}
	case *connect.Struct:
		s := x.Schema()
		for i := range s.Fields {
			if hasInf(x.GetFieldWithoutDefault(&s.Fields[i])) {
				return true
			}
		}
	}
	return false
}

func seedFuzz(f *testing.F) {
	for _, s := range []string{
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"a"},{"type":"array","items":{"type":"string"},"optional":true,"field":"b"}]},"payload":{"a":1,"b":["x"]}}`,
		`{"schema":{"type":"map","keys":{"type":"int8"},"values":{"type":"bytes"}},"payload":[[1,"AQ=="]]}`,
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"AQ=="}`,
		`{"schema":null,"payload":{"a":[1,2.5,"x",true,null]}}`,
		`[1,{"a":"\u00e9\ud83d\ude00"},-0.0,1e400]`, `007`, `{`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s))
	}
}
