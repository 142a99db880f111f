package connect

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestStructValidation(t *testing.T) {
	s := NewStruct().Name("user").
		Field("id", Int64Schema).
		Field("email", OptionalStringSchema).
		Field("tags", NewArray(StringSchema).Optional().Build()).
		Field("born", DateSchema().Optional().Build()).Build()
	st := NewStructValue(s)
	if err := st.Validate(); err == nil {
		t.Fatal("missing required id accepted")
	}
	if err := st.Put("id", int32(1)); err == nil {
		t.Fatal("int32 accepted for INT64")
	}
	st.MustPut("id", int64(1)).MustPut("tags", []any{"a", "b"}).MustPut("born", DaysToDate(10))
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := st.Put("nope", 1); err == nil || !strings.Contains(err.Error(), "not a valid field name") {
		t.Fatalf("unknown field: %v", err)
	}
	if err := st.Put("tags", []any{"a", 1}); err == nil {
		t.Fatal("int in string array accepted")
	}
	if err := Validate(s, st); err != nil {
		t.Fatal(err)
	}
	other := NewStruct().Field("id", Int64Schema).Build()
	if err := Validate(s, NewStructValue(other)); err == nil {
		t.Fatal("struct of another schema accepted")
	}
	var de *DataError
	if err := Validate(Int32Schema, nil); !errors.As(err, &de) {
		t.Fatalf("null for required: %v", err)
	}
}

func TestSchemaBuilderErrors(t *testing.T) {
	if _, err := NewStruct().Field("a", Int8Schema).Field("a", Int8Schema).BuildE(); err == nil {
		t.Fatal("duplicate field accepted")
	}
	if _, err := NewSchema(Int32).Default("x").BuildE(); err == nil {
		t.Fatal("bad default accepted")
	}
	if _, err := NewSchema(Int32).Field("a", Int8Schema).BuildE(); err == nil {
		t.Fatal("field on primitive accepted")
	}
	a := NewStruct().Name("n").Version(2).Field("x", Int32Schema).Build()
	b := NewStruct().Name("n").Version(2).Field("x", Int32Schema).Build()
	if !a.Equal(b) || a.Equal(NewStruct().Name("n").Version(3).Field("x", Int32Schema).Build()) {
		t.Fatal("schema equality")
	}
}

func TestDecimalBytes(t *testing.T) {
	s := DecimalSchema(2).Build()
	for _, v := range []string{"0", "1.00", "-1.00", "127.99", "-128.00", "12345678901234567890.12", "-0.01", "1.28", "-1.29"} {
		d, err := ParseDecimal(v)
		if err != nil {
			t.Fatal(err)
		}
		if d.Scale != 2 && v != "0" {
			t.Fatalf("%s: scale %d", v, d.Scale)
		}
		if v == "0" {
			d = Decimal{Unscaled: big.NewInt(0), Scale: 2}
		}
		b, err := DecimalToBytes(s, d)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := DecimalFromBytes(s, b)
		if back.Unscaled.Cmp(d.Unscaled) != 0 {
			t.Fatalf("%s round trip: %v", v, back)
		}
		// Java's BigInteger.toByteArray is minimal two's complement.
		want := d.Unscaled.Bytes()
		_ = want
	}
	// Known encodings (BigInteger.toByteArray): 128 -> 00 80, -128 -> 80, -129 -> ff 7f.
	for n, want := range map[int64][]byte{128: {0x00, 0x80}, -128: {0x80}, -129: {0xff, 0x7f}, 0: {0x00}, 127: {0x7f}, -1: {0xff}} {
		if got := TwosComplement(big.NewInt(n)); string(got) != string(want) {
			t.Errorf("%d: % x, want % x", n, got, want)
		}
	}
	if d, _ := ParseDecimal("1.5E+3"); d.Scale != -2 || d.Unscaled.Int64() != 15 || d.String() != "1500" {
		t.Fatalf("exponent: %+v %s", d, d)
	}
	if NewDecimal(-5, 3).String() != "-0.005" {
		t.Fatal(NewDecimal(-5, 3).String())
	}
}

func TestDatesAndTimes(t *testing.T) {
	d := DaysToDate(19000)
	if n, err := DateToDays(d); err != nil || n != 19000 {
		t.Fatal(n, err)
	}
	if _, err := DateToDays(time.UnixMilli(1234)); err == nil {
		t.Fatal("date with time accepted")
	}
	if ms, err := TimeToMillis(MillisToTime(3600000)); err != nil || ms != 3600000 {
		t.Fatal(ms, err)
	}
}

func TestConfigDefParseAndValidate(t *testing.T) {
	d := NewConfigDef().
		Define(ConfigKey{Name: "file", Type: TypeString, Default: NoDefault, Importance: High, Group: "Common"}).
		Define(ConfigKey{Name: "batch.size", Type: TypeInt, Default: int32(2000), Validator: AtLeast(1)}).
		Define(ConfigKey{Name: "mode", Type: TypeString, Default: "a", Validator: OneOf("a", "b")}).
		Define(ConfigKey{Name: "topics", Type: TypeList, Default: []string{}}).
		Define(ConfigKey{Name: "secret", Type: TypePassword, Default: nil})
	c, err := d.Parse(map[string]string{"file": " /tmp/x ", "topics": "a, b", "extra": "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if c.String("file") != "/tmp/x" || c.Int("batch.size") != 2000 || len(c.List("topics")) != 2 || c.Originals()["extra"] != "kept" {
		t.Fatalf("parsed %v", c.values)
	}
	_, err = d.Parse(map[string]string{"batch.size": "0", "mode": "c"})
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	want := []string{
		`Missing required configuration "file" which has no default value.`,
		"Invalid value 0 for configuration batch.size: Value must be at least 1",
		"Invalid value c for configuration mode: String must be one of: a, b",
	}
	for i, w := range want {
		if ce.Problems[i].Message != w {
			t.Errorf("problem %d: %q, want %q", i, ce.Problems[i].Message, w)
		}
	}
	vals := d.Validate(map[string]string{"batch.size": "x"})
	if len(vals[0].Errors) != 1 || len(vals[1].Errors) != 1 || vals[1].Errors[0] != "Invalid value x for configuration batch.size: Not a number of type INT" {
		t.Fatalf("validate: %+v", vals)
	}
	if Password("s").String() != "[hidden]" {
		t.Fatal("password printed")
	}
}

// NonEmptyString answers as Kafka 4.4's ConfigDef.NonEmptyString
// (kafka-clients 4.4.0: "String must be non-empty"); null passes.
func TestNonEmptyStringMessage(t *testing.T) {
	d := NewConfigDef().
		Define(ConfigKey{Name: "topic", Type: TypeString, Default: NoDefault, Validator: NonEmptyString, Importance: High})
	vals := d.Validate(map[string]string{"topic": "  "})
	want := "Invalid value  for configuration topic: String must be non-empty"
	if len(vals) != 1 || len(vals[0].Errors) != 1 || vals[0].Errors[0] != want {
		t.Fatalf("validate: %+v, want %q", vals, want)
	}
	if err := NonEmptyString("topic", nil); err != nil {
		t.Fatalf("null: %v", err)
	}
	if err := NonEmptyString("topic", "t"); err != nil {
		t.Fatalf("t: %v", err)
	}
}
