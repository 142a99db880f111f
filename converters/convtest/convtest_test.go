package convtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// recorder collects failures instead of failing, to test that the suite
// catches broken converters.
type recorder struct{ msgs []string }

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

func check(f func(reporter, connect.Converter, Suite), c connect.Converter, s Suite) (msgs []string) {
	r := &recorder{}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(fatal); !ok {
				panic(p)
			}
		}
		msgs = r.msgs
	}()
	f(r, c, s)
	return r.msgs
}

// stringConv is a minimal correct converter for strings.
type stringConv struct {
	buf     []byte // reuse, when set, returns a shared buffer (a bug)
	reuse   bool
	alias   bool // return the input's bytes as []byte values (a bug here)
	panicky bool
	lax     bool // accept any value (no DataError)
}

func (c *stringConv) Configure(map[string]string, bool) error { return nil }

func (c *stringConv) FromConnectData(_ string, h *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if c.panicky {
		panic("boom")
	}
	if v == nil {
		return nil, nil
	}
	str, ok := v.(string)
	if !ok {
		if !c.lax {
			return nil, &connect.DataError{Msg: "not a string"}
		}
		str = fmt.Sprint(v)
	}
	if h != nil && c.lax {
		h.Add("added", nil, nil)
	}
	if c.reuse {
		c.buf = append(c.buf[:0], str...)
		return c.buf, nil
	}
	return []byte(str), nil
}

func (c *stringConv) ToConnectData(_ string, _ *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return connect.OptionalStringSchema, nil, nil
	}
	if strings.HasPrefix(string(b), "\xff") {
		return nil, nil, fmt.Errorf("plain error")
	}
	if c.alias {
		return connect.OptionalStringSchema, b, nil
	}
	return connect.OptionalStringSchema, string(b), nil
}

func stringSuite() Suite {
	return Suite{
		Cases: []Case{
			Case{Name: "a", Schema: connect.StringSchema, Value: "alpha"}.WithWant(connect.OptionalStringSchema, "alpha"),
			Case{Name: "b", Schema: connect.StringSchema, Value: "beta"}.WithWant(connect.OptionalStringSchema, "beta"),
		},
		TombstoneSchema: connect.OptionalStringSchema,
		WrongTypes:      []Case{{Name: "int", Schema: connect.StringSchema, Value: int32(1)}},
		BadInputs:       [][]byte{{0xff}},
	}
}

func TestSuitePassesCorrectConverter(t *testing.T) {
	s := stringSuite()
	s.BadInputs = nil
	s.New = func() connect.Converter { return &stringConv{} }
	Run(t, s)
}

func TestSuiteCatchesBrokenConverters(t *testing.T) {
	s := stringSuite()
	for _, tc := range []struct {
		name  string
		check func(reporter, connect.Converter, Suite)
		conv  *stringConv
		want  string
	}{
		{"shared output buffer", outputNotReused, &stringConv{reuse: true}, "output changed"},
		{"aliased input", inputNotRetained, &stringConv{alias: true}, "overwritten"},
		{"panic", roundTrip, &stringConv{panicky: true}, "panicked"},
		{"no DataError for a wrong type", wrongTypes, &stringConv{lax: true}, "want a *connect.DataError"},
		{"plain error for bad bytes", badInputs, &stringConv{}, "want a *connect.DataError"},
		{"headers changed", headersUntouched, &stringConv{lax: true}, "headers changed"},
		{"wrong round trip", roundTrip, &stringConv{alias: true}, "round trip"},
	} {
		msgs := check(tc.check, tc.conv, s)
		if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
			t.Errorf("%s: suite reported %q, want a failure mentioning %q", tc.name, msgs, tc.want)
		}
	}
}
