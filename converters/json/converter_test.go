package json

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"decimal.format": "HEX"}, "Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC"},
		{map[string]string{"schemas.enable": "yes"}, "Invalid value yes for configuration schemas.enable: Expected value to be either true or false"},
		{map[string]string{"schemas.cache.size": "many"}, "Invalid value many for configuration schemas.cache.size: Not a number of type INT"},
	} {
		err := New().Configure(tc.props, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
	if err := New().Configure(map[string]string{"decimal.format": "numeric", "replace.null.with.default": "false"}, true); err != nil {
		t.Fatal(err)
	}
}

func TestLRU(t *testing.T) {
	c := newLRU[int, int](3)
	for i := 0; i < 3; i++ {
		c.put(i, i)
	}
	c.get(0) // 1 is now the least recently used
	c.put(3, 3)
	if c.len() != 3 {
		t.Fatalf("len %d", c.len())
	}
	if _, ok := c.get(1); ok {
		t.Fatal("least recently used entry kept")
	}
	for _, k := range []int{0, 2, 3} {
		if v, ok := c.get(k); !ok || v != k {
			t.Fatalf("entry %d lost", k)
		}
	}
	none := newLRU[int, int](0)
	none.put(1, 1)
	if _, ok := none.get(1); ok {
		t.Fatal("schemas.cache.size=0 cached")
	}
}

// Many schemas through one converter with a small cache: every record
// must still carry its own schema, both ways.
func TestSchemaCacheChurn(t *testing.T) {
	c := New()
	if err := c.Configure(map[string]string{"schemas.cache.size": "2"}, false); err != nil {
		t.Fatal(err)
	}
	var schemas []*connect.Schema
	for i := 0; i < 5; i++ {
		b := connect.NewStruct().Name("s" + strings.Repeat("x", i))
		for j := 0; j <= i; j++ {
			b.Field("f"+strings.Repeat("y", j), connect.Int32Schema)
		}
		schemas = append(schemas, b.Build())
	}
	for round := 0; round < 3; round++ {
		for i, s := range schemas {
			v := connect.NewStructValue(s)
			for j := range s.Fields {
				v.MustPut(s.Fields[j].Name, int32(i*10+j))
			}
			out, err := c.FromConnectData("t", nil, s, v)
			if err != nil {
				t.Fatal(err)
			}
			gs, gv, err := c.ToConnectData("t", nil, out)
			if err != nil {
				t.Fatal(err)
			}
			if !gs.Equal(s) || !connect.ValuesEqual(gv, v) {
				t.Fatalf("round %d schema %d: %s read back as %v %v", round, i, out, gs, gv)
			}
		}
	}
	if n := c.encCache().len(); n > 2 {
		t.Fatalf("encode cache holds %d schemas, bound is 2", n)
	}
	if n := c.decCache().len(); n > 2 {
		t.Fatalf("decode cache holds %d schemas, bound is 2", n)
	}
}

// The zero value is usable and behaves as Kafka's defaults.
func TestZeroValue(t *testing.T) {
	var c Converter
	out, err := c.FromConnectData("t", nil, connect.Int32Schema, int32(1))
	if err != nil || string(out) != `{"schema":{"type":"int32","optional":false},"payload":1}` {
		t.Fatalf("%s %v", out, err)
	}
}
