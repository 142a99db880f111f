package connect

import (
	"slices"
	"testing"
)

func TestParameterKeysKeepInsertionOrder(t *testing.T) {
	// Debezium's decimals add their precision after the scale; Kafka's
	// LinkedHashMap keeps that order and JsonConverter writes it.
	s := DecimalSchema(2).Parameter("connect.decimal.precision", "10").Parameter("b", "x").Parameter("a", "y").Build()
	want := []string{"scale", "connect.decimal.precision", "b", "a"}
	if got := s.ParameterKeys(); !slices.Equal(got, want) {
		t.Fatalf("ParameterKeys = %v, want %v", got, want)
	}
	if got := FromSchema(s).Parameter("z", "1").Build().ParameterKeys(); !slices.Equal(got, append(want, "z")) {
		t.Fatalf("FromSchema keeps order: %v", got)
	}
	// Re-setting a parameter keeps its place.
	if got := NewSchema(String).Parameter("b", "1").Parameter("a", "1").Parameter("b", "2").Build().ParameterKeys(); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("reset parameter moved: %v", got)
	}
	lit := &Schema{Type: String, Parameters: map[string]string{"y": "1", "x": "2"}}
	if got := lit.ParameterKeys(); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("literal schema parameters sorted: %v", got)
	}
	if (&Schema{Type: String}).ParameterKeys() != nil {
		t.Fatal("no parameters: want nil")
	}
}

func TestStructUncheckedAccess(t *testing.T) {
	s := NewStruct().Field("a", NewSchema(Int32).Default(int32(7)).Build()).Build()
	st := NewStructValue(s)
	f := s.Field("a")
	if st.GetFieldWithoutDefault(f) != nil || st.GetField(f) != int32(7) {
		t.Fatal("unset field: raw value must be nil, GetField the default")
	}
	st.PutFieldUnchecked(f, int32(3))
	if st.GetFieldWithoutDefault(f) != int32(3) {
		t.Fatal("PutFieldUnchecked did not set the value")
	}
}
