package sink

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func versioned(v int32, b *connect.SchemaBuilder) *connect.Schema {
	s := b.Build()
	s.Version = &v
	return s
}

// Confluent's StorageSchemaCompatibility answers, case by case.
func TestShouldChangeSchema(t *testing.T) {
	v1 := versioned(1, connect.NewStruct().Name("r").Field("a", connect.Int32Schema))
	v2 := versioned(2, connect.NewStruct().Name("r").Field("a", connect.Int32Schema).
		Field("b", connect.OptionalStringSchema))
	v2required := versioned(2, connect.NewStruct().Name("r").Field("a", connect.Int32Schema).Field("b", connect.StringSchema))
	v3long := versioned(3, connect.NewStruct().Name("r").Field("a", connect.Int64Schema))
	other := versioned(2, connect.NewStruct().Name("other").Field("a", connect.Int32Schema))
	unversioned := connect.NewStruct().Name("r").Field("a", connect.Int32Schema).Build()

	for _, c := range []struct {
		compat       string
		record, cur  *connect.Schema
		change       bool
		errSubstring string
	}{
		{"NONE", v1, v1, false, ""},
		{"NONE", v2, v1, true, ""},
		{"NONE", unversioned, v1, true, ""}, // versions differ
		{"BACKWARD", v2, v1, true, ""},      // newer: new file
		{"BACKWARD", v1, v2, false, ""},     // older: projected onto v2
		{"FULL", v2, v1, true, ""},
		{"FORWARD", v1, v2, true, ""}, // older: new file
		{"FORWARD", v2, v1, false, ""},
		{"BACKWARD", v1, v2required, true, ""}, // v2's required b has no default: cannot project
		{"BACKWARD", v1, v3long, false, ""},    // int32 promotes to int64
		{"BACKWARD", other, v1, true, ""},      // a different name
		{"BACKWARD", unversioned, v1, false, "Schema version required for BACKWARD compatibility"},
		{"NONE", nil, v1, false, "Switch between schema-based and schema-less data is not supported"},
	} {
		change, err := shouldChangeSchema(c.compat, c.record, c.cur)
		if c.errSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSubstring) {
				t.Errorf("%s %v → %v: err %v, want %q", c.compat, c.record, c.cur, err, c.errSubstring)
			}
			continue
		}
		if err != nil || change != c.change {
			t.Errorf("%s %v → %v: change %v err %v, want %v", c.compat, c.record, c.cur, change, err, c.change)
		}
	}
}

// An old record projected onto the file's newer schema: the new optional
// field is null, ints widen.
func TestProject(t *testing.T) {
	v1 := versioned(1, connect.NewStruct().Name("r").Field("a", connect.Int32Schema))
	v2 := versioned(2, connect.NewStruct().Name("r").Field("a", connect.Int64Schema).
		Field("b", connect.OptionalStringSchema).
		Field("c", connect.NewSchema(connect.String).Default("dflt").Build()))
	in := connect.NewStructValue(v1).MustPut("a", int32(7))
	out, err := project(v1, v2, in)
	if err != nil {
		t.Fatal(err)
	}
	st := out.(*connect.Struct)
	if a, _ := st.Get("a"); a != int64(7) {
		t.Errorf("a = %#v, want int64(7)", a)
	}
	if b, _ := st.Get("b"); b != nil {
		t.Errorf("b = %#v, want nil", b)
	}
	if c, _ := st.Get("c"); c != "dflt" {
		t.Errorf("c = %#v, want the default", c)
	}
	if err := st.Validate(); err != nil {
		t.Errorf("projected struct invalid: %v", err)
	}
}
