package convtest

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// Fuzz runs a converter's ToConnectData on fuzzed bytes: it must never
// panic, must fail only with a *connect.DataError, and whatever it
// decodes must convert back (FromConnectData) without panicking, failing
// only with a *connect.DataError. Seeds come from testdata/fuzz/<Fuzz
// target>/ and f.Add.
func Fuzz(f *testing.F, newConv func() connect.Converter) {
	c := newConv()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, v, err := to(c, nil, data)
		if err != nil {
			if !isDataError(err) {
				t.Fatalf("ToConnectData(%q): %v; want a *connect.DataError", data, err)
			}
			return
		}
		if _, err := from(c, nil, s, v); err != nil && !isDataError(err) {
			t.Fatalf("FromConnectData of decoded %q: %v; want nil or a *connect.DataError", data, err)
		}
	})
}

// FuzzHeader is Fuzz for a header converter.
func FuzzHeader(f *testing.F, newConv func() connect.HeaderConverter) {
	c := newConv()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, v, err := toHeader(c, data)
		if err != nil {
			if !isDataError(err) {
				t.Fatalf("ToConnectHeader(%q): %v; want a *connect.DataError", data, err)
			}
			return
		}
		if _, err := fromHeader(c, s, v); err != nil && !isDataError(err) {
			t.Fatalf("FromConnectHeader of decoded %q: %v; want nil or a *connect.DataError", data, err)
		}
	})
}
