package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// The tool reads the connector JSON the script POSTs, and a bare config
// map as well.
func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"rest.json": `{"name":"s","config":{"s3.bucket.name":"b","store.url":"http://127.0.0.1:9000"}}`,
		"flat.json": `{"s3.bucket.name":"b","store.url":"http://127.0.0.1:9000"}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readConfig(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got["s3.bucket.name"] != "b" || got["store.url"] != "http://127.0.0.1:9000" || len(got) != 2 {
			t.Fatalf("%s: %v", name, got)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[1]`), 0o600)
	if _, err := readConfig(bad); err == nil {
		t.Fatal("a JSON array was read as a config")
	}
}

// -fields keeps the named fields in the order asked, with their schemas,
// and skips names the record does not have.
func TestProject(t *testing.T) {
	row := connect.NewStruct().Optional().Field("id", connect.Int32Schema).Build()
	env := connect.NewStruct().Field("before", row).Field("after", row).
		Field("op", connect.StringSchema).Build()
	v := connect.NewStructValue(env).MustPut("op", "c").MustPut("after", connect.NewStructValue(row).MustPut("id", int32(7)))
	s, out := project(v, []string{"op", "nope", " after"})
	if len(s.Fields) != 2 || s.Fields[0].Name != "op" || s.Fields[1].Name != "after" || s.Fields[1].Schema != row {
		t.Fatalf("schema %v", s)
	}
	st := out.(*connect.Struct)
	if op, _ := st.Get("op"); op != "c" {
		t.Fatalf("op %v", op)
	}
	after, _ := st.Get("after")
	if id, _ := after.(*connect.Struct).Get("id"); id != int32(7) {
		t.Fatalf("after %v", after)
	}
}
