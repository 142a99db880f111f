package jvm

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Expected strings are what Java 17+ prints (checked with jshell);
// the converters' golden files cover many more.
func TestJavaNumbers(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {100, "100.0"}, {1e7, "1.0E7"}, {9999999, "9999999.0"},
		{1e-3, "0.001"}, {9.99e-4, "9.99E-4"}, {123456789, "1.23456789E8"}, {5e-324, "4.9E-324"}, {-2.5e-10, "-2.5E-10"},
		{math.NaN(), "NaN"}, {math.Inf(-1), "-Infinity"}, {0.1, "0.1"}, {1.0 / 3, "0.3333333333333333"},
	} {
		if got := Double(tc.f); got != tc.want {
			t.Errorf("Double(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
	for _, tc := range []struct {
		f    float32
		want string
	}{{0.1, "0.1"}, {1e-5, "1.0E-5"}, {1.4e-45, "1.4E-45"}, {16777216, "1.6777216E7"}, {3.4028235e38, "3.4028235E38"}} {
		if got := Float(tc.f); got != tc.want {
			t.Errorf("Float(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
	for _, tc := range []struct {
		unscaled int64
		scale    int32
		want     string
	}{{15, -2, "1.5E+3"}, {1, 9, "1E-9"}, {-150, 2, "-1.50"}, {1, 6, "0.000001"}, {1, 7, "1E-7"}, {0, -3, "0E+3"}, {123, 0, "123"}, {-1, 2, "-0.01"}} {
		if got := Decimal(connect.Decimal{Unscaled: big.NewInt(tc.unscaled), Scale: tc.scale}); got != tc.want {
			t.Errorf("Decimal(%d, %d) = %s, want %s", tc.unscaled, tc.scale, got, tc.want)
		}
	}
}

func TestDecodeUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"héllo", "héllo"}, {"\xff", "\uFFFD"}, {"a\xffb", "a\uFFFDb"}, {"\xe2\x82A", "\uFFFDA"},
		{"\xc0\x80", "\uFFFD\uFFFD"}, {"\xed\xa0\x80", "\uFFFD"}, {"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"\xf0\x9f\x98", "\uFFFD"}, {"\xff\xfe", "\uFFFD\uFFFD"},
	} {
		if got := DecodeUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("DecodeUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	st := connect.NewStruct().Field("a", connect.Int32Schema).Field("b", connect.OptionalStringSchema).Build()
	for _, tc := range []struct {
		v    any
		want string
	}{
		{[]any{int32(1), "a", nil, []any{2.5}}, "[1, a, null, [2.5]]"},
		{map[string]any{"k": int64(1), "j": "x"}, "{j=x, k=1}"},
		{map[any]any{int32(2): true, int32(-1): false}, "{-1=false, 2=true}"},
		{connect.NewStructValue(st).MustPut("a", int32(1)), "Struct{a=1}"},
		{time.UnixMilli(1705322096789).UTC(), "Mon Jan 15 12:34:56 UTC 2024"},
	} {
		if got := string(AppendString(nil, tc.v)); got != tc.want {
			t.Errorf("AppendString(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
