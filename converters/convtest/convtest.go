// Package convtest is the conformance suite every Connect converter runs:
// a corpus of Connect values that must survive FromConnectData then
// ToConnectData, tombstones (nil bytes ↔ nil value), refusal of values
// that do not fit their schema and of malformed bytes with a
// *connect.DataError (never a panic), headers left untouched, outputs
// that do not alias the converter's buffers, and safe concurrent use.
//
// A converter's test builds a Suite from the corpora here (Primitives,
// Logical, Structured, Schemaless), adjusted to what the converter gives
// back (WithWant), and calls Run:
//
//	convtest.Run(t, convtest.Suite{
//		New:   func() connect.Converter { return json.New() },
//		Cases: convtest.All(),
//		TombstoneSchema: nil,
//		BadInputs: [][]byte{[]byte("{")},
//	})
//
// Header converters run RunHeader with a HeaderSuite, and decoders get a
// fuzz target from Fuzz.
package convtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// Case is a Connect value a converter must carry.
type Case struct {
	Name   string
	Schema *connect.Schema
	Value  any
	// Want marks WantSchema and WantValue as the expected result of
	// ToConnectData, when it is not Schema and Value themselves (a
	// converter that drops schemas, or widens integers).
	Want       bool
	WantSchema *connect.Schema
	WantValue  any
}

// WithWant returns a copy of c expecting schema s and value v back.
func (c Case) WithWant(s *connect.Schema, v any) Case {
	c.Want, c.WantSchema, c.WantValue = true, s, v
	return c
}

func (c Case) want() (*connect.Schema, any) {
	if c.Want {
		return c.WantSchema, c.WantValue
	}
	return c.Schema, c.Value
}

// Suite configures Run for one converter.
type Suite struct {
	// New returns a new, unconfigured converter.
	New func() connect.Converter
	// Props are passed to Configure (as key and as value converter).
	Props map[string]string
	// Cases must round-trip.
	Cases []Case
	// TombstoneSchema is the schema ToConnectData returns for nil bytes
	// (the value must be nil): nil for JsonConverter, the optional
	// primitive schema for the string, bytes and number converters.
	TombstoneSchema *connect.Schema
	// WrongTypes are values FromConnectData must refuse with a
	// *connect.DataError.
	WrongTypes []Case
	// BadInputs are bytes ToConnectData must refuse with a
	// *connect.DataError.
	BadInputs [][]byte
	// AliasesInput allows ToConnectData to return values that share the
	// input's bytes (ByteArrayConverter hands the record's bytes on).
	AliasesInput bool
}

// Run runs the conformance suite.
func Run(t *testing.T, s Suite) {
	t.Helper()
	if s.New == nil {
		t.Fatal("convtest: Suite.New is nil")
	}
	if len(s.Cases) == 0 {
		t.Fatal("convtest: no cases")
	}
	for _, isKey := range []bool{false, true} {
		role := "value"
		if isKey {
			role = "key"
		}
		t.Run(role, func(t *testing.T) {
			newConv := func(t *testing.T) connect.Converter {
				t.Helper()
				c := s.New()
				if err := c.Configure(s.Props, isKey); err != nil {
					t.Fatalf("Configure(%v, %v): %v", s.Props, isKey, err)
				}
				return c
			}
			t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newConv(t), s) })
			t.Run("Deterministic", func(t *testing.T) { deterministic(t, newConv(t), s) })
			t.Run("OutputNotReused", func(t *testing.T) { outputNotReused(t, newConv(t), s) })
			if !s.AliasesInput {
				t.Run("InputNotRetained", func(t *testing.T) { inputNotRetained(t, newConv(t), s) })
			}
			t.Run("Tombstone", func(t *testing.T) { tombstone(t, newConv(t), s) })
			t.Run("WrongTypes", func(t *testing.T) { wrongTypes(t, newConv(t), s) })
			t.Run("BadInputs", func(t *testing.T) { badInputs(t, newConv(t), s) })
			t.Run("HeadersUntouched", func(t *testing.T) { headersUntouched(t, newConv(t), s) })
			t.Run("Concurrent", func(t *testing.T) { concurrent(t, newConv(t), s) })
		})
	}
}

// reporter is the part of *testing.T the checks use (the suite's own
// tests record failures with a fake).
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// from and to call the converter, turning a panic into an error so one
// bad case fails its test instead of the whole binary.
func from(c connect.Converter, h *connect.Headers, s *connect.Schema, v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("FromConnectData panicked: %v", r)
		}
	}()
	return c.FromConnectData("convtest-topic", h, s, v)
}

func to(c connect.Converter, h *connect.Headers, b []byte) (s *connect.Schema, v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ToConnectData panicked: %v", r)
		}
	}()
	return c.ToConnectData("convtest-topic", h, b)
}

// Equal reports whether a converter's answer matches the expected
// schema and value (schemas by Schema.Equal, values by
// connect.ValuesEqual).
func Equal(wantS *connect.Schema, wantV any, gotS *connect.Schema, gotV any) error {
	if !wantS.Equal(gotS) {
		return fmt.Errorf("schema %v, want %v", describeSchema(gotS), describeSchema(wantS))
	}
	if !connect.ValuesEqual(wantV, gotV) {
		return fmt.Errorf("value %#v, want %#v", gotV, wantV)
	}
	return nil
}

func describeSchema(s *connect.Schema) string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s(optional=%v)", s, s.Optional)
}

func roundTrip(t reporter, c connect.Converter, s Suite) {
	for _, tc := range s.Cases {
		b, err := from(c, nil, tc.Schema, tc.Value)
		if err != nil {
			t.Errorf("%s: FromConnectData: %v", tc.Name, err)
			continue
		}
		gs, gv, err := to(c, nil, b)
		if err != nil {
			t.Errorf("%s: ToConnectData(%q): %v", tc.Name, b, err)
			continue
		}
		ws, wv := tc.want()
		if err := Equal(ws, wv, gs, gv); err != nil {
			t.Errorf("%s: round trip through %q: %v", tc.Name, b, err)
		}
	}
}

func deterministic(t reporter, c connect.Converter, s Suite) {
	for _, tc := range s.Cases {
		b1, err1 := from(c, nil, tc.Schema, tc.Value)
		b2, err2 := from(c, nil, tc.Schema, tc.Value)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v / %v", tc.Name, err1, err2)
			continue
		}
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s: two conversions of one value differ:\n%q\n%q", tc.Name, b1, b2)
		}
	}
}

// outputNotReused catches converters that hand out a pooled buffer.
func outputNotReused(t reporter, c connect.Converter, s Suite) {
	var outs [][]byte
	var copies [][]byte
	for _, tc := range s.Cases {
		b, err := from(c, nil, tc.Schema, tc.Value)
		if err != nil {
			t.Errorf("%s: %v", tc.Name, err)
			return
		}
		outs = append(outs, b)
		copies = append(copies, bytes.Clone(b))
	}
	for i := range outs {
		if !bytes.Equal(outs[i], copies[i]) {
			t.Errorf("%s: output changed by later conversions: %q, was %q", s.Cases[i].Name, outs[i], copies[i])
		}
	}
}

// inputNotRetained catches decoded values that share the input bytes,
// which the runtime reuses.
func inputNotRetained(t reporter, c connect.Converter, s Suite) {
	for _, tc := range s.Cases {
		b, err := from(c, nil, tc.Schema, tc.Value)
		if err != nil || b == nil {
			continue
		}
		in := bytes.Clone(b)
		gs, gv, err := to(c, nil, in)
		if err != nil {
			t.Errorf("%s: %v", tc.Name, err)
			continue
		}
		for i := range in {
			in[i] = 0xA5
		}
		ws, wv := tc.want()
		if err := Equal(ws, wv, gs, gv); err != nil {
			t.Errorf("%s: decoded value changed when the input buffer was overwritten: %v", tc.Name, err)
		}
	}
}

func tombstone(t reporter, c connect.Converter, s Suite) {
	b, err := from(c, nil, nil, nil)
	if err != nil || b != nil {
		t.Errorf("FromConnectData(nil schema, nil value) = %q, %v; want nil bytes (a tombstone)", b, err)
	}
	gs, gv, err := to(c, nil, nil)
	if err != nil {
		t.Fatalf("ToConnectData(nil): %v", err)
	}
	if gv != nil || !s.TombstoneSchema.Equal(gs) {
		t.Errorf("ToConnectData(nil) = %v, %#v; want %v, nil", describeSchema(gs), gv, describeSchema(s.TombstoneSchema))
	}
}

func isDataError(err error) bool {
	var de *connect.DataError
	return errors.As(err, &de)
}

func wrongTypes(t reporter, c connect.Converter, s Suite) {
	for _, tc := range s.WrongTypes {
		b, err := from(c, nil, tc.Schema, tc.Value)
		if !isDataError(err) {
			t.Errorf("%s: FromConnectData(%v, %#v) = %q, %v; want a *connect.DataError", tc.Name, describeSchema(tc.Schema), tc.Value, b, err)
		}
	}
}

func badInputs(t reporter, c connect.Converter, s Suite) {
	for _, in := range s.BadInputs {
		gs, gv, err := to(c, nil, in)
		if !isDataError(err) {
			t.Errorf("ToConnectData(%q) = %v, %#v, %v; want a *connect.DataError", in, describeSchema(gs), gv, err)
		}
	}
}

func headersUntouched(t reporter, c connect.Converter, s Suite) {
	h := connect.Headers{
		{Key: "a", Schema: connect.StringSchema, Value: "x"},
		{Key: "b", Schema: connect.Int32Schema, Value: int32(1)},
		{Key: "a", Schema: nil, Value: nil},
	}
	orig := h.Clone()
	for _, tc := range s.Cases {
		b, err := from(c, &h, tc.Schema, tc.Value)
		if err != nil {
			t.Errorf("%s: %v", tc.Name, err)
			continue
		}
		if _, _, err := to(c, &h, b); err != nil {
			t.Errorf("%s: %v", tc.Name, err)
		}
	}
	if len(h) != len(orig) {
		t.Fatalf("headers changed: %v, were %v", h, orig)
	}
	for i := range h {
		if h[i].Key != orig[i].Key || h[i].Schema != orig[i].Schema || !connect.ValuesEqual(h[i].Value, orig[i].Value) {
			t.Fatalf("header %d changed: %+v, was %+v", i, h[i], orig[i])
		}
	}
}

// concurrent uses one converter from several goroutines (the race
// detector watches its caches).
func concurrent(t reporter, c connect.Converter, s Suite) {
	want := make([][]byte, len(s.Cases))
	for i, tc := range s.Cases {
		b, err := from(c, nil, tc.Schema, tc.Value)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		want[i] = b
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 20; round++ {
				for i, tc := range s.Cases {
					b, err := from(c, nil, tc.Schema, tc.Value)
					if err != nil || !bytes.Equal(b, want[i]) {
						errs <- fmt.Errorf("%s: concurrent FromConnectData = %q, %v; want %q", tc.Name, b, err, want[i])
						return
					}
					gs, gv, err := to(c, nil, b)
					ws, wv := tc.want()
					if err == nil {
						err = Equal(ws, wv, gs, gv)
					}
					if err != nil {
						errs <- fmt.Errorf("%s: concurrent ToConnectData: %v", tc.Name, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%v", err)
	}
}
