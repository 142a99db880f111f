package convtest

import (
	"fmt"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// HeaderSuite configures RunHeader for one header converter.
type HeaderSuite struct {
	// New returns a new, unconfigured header converter.
	New   func() connect.HeaderConverter
	Props map[string]string
	// Cases must round-trip through FromConnectHeader and
	// ToConnectHeader.
	Cases []Case
	// NullSchema is the schema ToConnectHeader returns for nil bytes
	// (the value must be nil).
	NullSchema *connect.Schema
	// WrongTypes must be refused with a *connect.DataError.
	WrongTypes []Case
	// BadInputs must be refused with a *connect.DataError (a header
	// converter that reads any bytes, as SimpleHeaderConverter does,
	// has none).
	BadInputs [][]byte
}

// RunHeader runs the header converter conformance suite.
func RunHeader(t *testing.T, s HeaderSuite) {
	t.Helper()
	newConv := func(t *testing.T) connect.HeaderConverter {
		t.Helper()
		c := s.New()
		if err := c.Configure(s.Props); err != nil {
			t.Fatalf("Configure(%v): %v", s.Props, err)
		}
		return c
	}
	t.Run("RoundTrip", func(t *testing.T) {
		c := newConv(t)
		for _, tc := range s.Cases {
			b, err := fromHeader(c, tc.Schema, tc.Value)
			if err != nil {
				t.Errorf("%s: FromConnectHeader: %v", tc.Name, err)
				continue
			}
			gs, gv, err := toHeader(c, b)
			if err != nil {
				t.Errorf("%s: ToConnectHeader(%q): %v", tc.Name, b, err)
				continue
			}
			ws, wv := tc.want()
			if err := Equal(ws, wv, gs, gv); err != nil {
				t.Errorf("%s: round trip through %q: %v", tc.Name, b, err)
			}
		}
	})
	t.Run("Null", func(t *testing.T) {
		c := newConv(t)
		if b, err := fromHeader(c, nil, nil); err != nil || b != nil {
			t.Errorf("FromConnectHeader(nil schema, nil) = %q, %v; want nil bytes", b, err)
		}
		gs, gv, err := toHeader(c, nil)
		if err != nil || gv != nil || !s.NullSchema.Equal(gs) {
			t.Errorf("ToConnectHeader(nil) = %v, %#v, %v; want %v, nil", describeSchema(gs), gv, err, describeSchema(s.NullSchema))
		}
	})
	t.Run("WrongTypes", func(t *testing.T) {
		c := newConv(t)
		for _, tc := range s.WrongTypes {
			if b, err := fromHeader(c, tc.Schema, tc.Value); !isDataError(err) {
				t.Errorf("%s: FromConnectHeader = %q, %v; want a *connect.DataError", tc.Name, b, err)
			}
		}
	})
	t.Run("BadInputs", func(t *testing.T) {
		c := newConv(t)
		for _, in := range s.BadInputs {
			if gs, gv, err := toHeader(c, in); !isDataError(err) {
				t.Errorf("ToConnectHeader(%q) = %v, %#v, %v; want a *connect.DataError", in, describeSchema(gs), gv, err)
			}
		}
	})
}

func fromHeader(c connect.HeaderConverter, s *connect.Schema, v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("FromConnectHeader panicked: %v", r)
		}
	}()
	return c.FromConnectHeader("convtest-topic", "convtest-header", s, v)
}

func toHeader(c connect.HeaderConverter, b []byte) (s *connect.Schema, v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ToConnectHeader panicked: %v", r)
		}
	}()
	return c.ToConnectHeader("convtest-topic", "convtest-header", b)
}
