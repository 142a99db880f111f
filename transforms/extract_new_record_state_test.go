package transforms_test

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/transforms"
)

func unwrap(t *testing.T, props map[string]string) connect.Transformation {
	t.Helper()
	p, ok := plugins.Lookup("io.debezium.transforms.ExtractNewRecordState")
	if !ok {
		t.Fatal("not registered")
	}
	tr := p.New().(connect.Transformation)
	if err := tr.Configure(props); err != nil {
		t.Fatal(err)
	}
	return tr
}

// outcome summarises what happened to each Debezium record: "row",
// "null" (a value-less record), "deleted" (a row with __deleted=true),
// or "dropped".
func outcomes(t *testing.T, tr connect.Transformation, records []*connect.Record) []string {
	t.Helper()
	var out []string
	for _, r := range records {
		res, err := tr.Apply(r)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", r.Topic, err)
		case res == nil:
			out = append(out, "dropped")
		case res.Value == nil:
			out = append(out, "null")
		default:
			st := res.Value.(*connect.Struct)
			if f := st.Schema().Field("__deleted"); f != nil && st.GetField(f) == "true" {
				out = append(out, "deleted")
			} else {
				out = append(out, "row")
			}
		}
	}
	return out
}

// TestExtractNewRecordStateLegacyKeys checks the Debezium 2.x keys
// (removed in 3.x, so not in the golden file): records are create,
// update, delete, tombstone, truncate, non-envelope.
func TestExtractNewRecordStateLegacyKeys(t *testing.T) {
	records := debeziumRecords(t)
	for _, c := range []struct {
		props map[string]string
		want  []string
	}{
		{map[string]string{"drop.tombstones": "true"}, []string{"row", "row", "dropped", "dropped", "dropped", "row"}},
		{map[string]string{"drop.tombstones": "false"}, []string{"row", "row", "dropped", "null", "dropped", "row"}},
		{map[string]string{"delete.handling.mode": "none"}, []string{"row", "row", "null", "dropped", "dropped", "row"}},
		{map[string]string{"delete.handling.mode": "none", "drop.tombstones": "false"}, []string{"row", "row", "null", "null", "dropped", "row"}},
		{map[string]string{"delete.handling.mode": "rewrite"}, []string{"row", "row", "deleted", "dropped", "dropped", "row"}},
		{map[string]string{"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, []string{"row", "row", "deleted", "null", "dropped", "row"}},
		// The new key wins over the legacy ones.
		{map[string]string{"delete.handling.mode": "rewrite", "delete.tombstone.handling.mode": "drop"}, []string{"row", "row", "dropped", "dropped", "dropped", "row"}},
		// Neither: Debezium 3's default, tombstone.
		{map[string]string{}, []string{"row", "row", "null", "dropped", "dropped", "row"}},
	} {
		got := outcomes(t, unwrap(t, c.props), records)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: got %v, want %v", c.props, got, c.want)
				break
			}
		}
	}
}

func TestExtractNewRecordStateDropFieldsHeader(t *testing.T) {
	records := debeziumRecords(t)
	tr := unwrap(t, map[string]string{"drop.fields.header.name": "drop"})
	r := records[1].Clone()
	r.Headers.Add("drop", connect.NewArray(connect.StringSchema).Build(), []any{"email", "first_name"})
	out, err := tr.Apply(r)
	if err != nil {
		t.Fatal(err)
	}
	// Schema-compatible mode drops only optional fields.
	s := out.ValueSchema
	if s.Field("email") != nil || s.Field("first_name") == nil || s.Field("id") == nil {
		t.Fatalf("fields: %v", s.Fields)
	}
	tr = unwrap(t, map[string]string{"drop.fields.header.name": "drop", "drop.fields.keep.schema.compatible": "false"})
	if out, err = tr.Apply(r); err != nil || out.ValueSchema.Field("first_name") != nil {
		t.Fatalf("incompatible mode: %v %v", out, err)
	}
}

func TestExtractNewRecordStateSchemaCache(t *testing.T) {
	records := debeziumRecords(t)
	tr := unwrap(t, map[string]string{"add.fields": "op,lsn"})
	a, _ := tr.Apply(records[0])
	b, _ := tr.Apply(records[0].Clone())
	if a.ValueSchema != b.ValueSchema {
		t.Fatal("same envelope schema gave two row schemas")
	}
	if a.ValueSchema.Field("__op") == nil || a.ValueSchema.Field("__lsn") == nil {
		t.Fatalf("added fields: %v", a.ValueSchema.Fields)
	}
	_ = transforms.ExtractNewRecordStateClass
}

func TestReplaceFieldDeprecatedKeys(t *testing.T) {
	p, _ := plugins.Lookup("ReplaceField$Value")
	for _, c := range []struct {
		props   map[string]string
		present []string
		absent  []string
	}{
		{map[string]string{"blacklist": "age,name"}, []string{"id", "email"}, []string{"age", "name"}},
		{map[string]string{"whitelist": "id"}, []string{"id"}, []string{"name"}},
		{map[string]string{"blacklist": "age", "exclude": "name"}, []string{"age"}, []string{"name"}},
	} {
		tr := p.New().(connect.Transformation)
		if err := tr.Configure(c.props); err != nil {
			t.Fatal(err)
		}
		out, err := tr.Apply(corpusUser(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.present {
			if out.ValueSchema.Field(f) == nil {
				t.Errorf("%v: %s dropped", c.props, f)
			}
		}
		for _, f := range c.absent {
			if out.ValueSchema.Field(f) != nil {
				t.Errorf("%v: %s kept", c.props, f)
			}
		}
	}
}
