package transforms_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/transforms/transformtest"
)

// debeziumRecords returns the change events of the Debezium golden file
// (create, update, delete, tombstone, truncate, non-envelope), decoded.
func debeziumRecords(t testing.TB) []*connect.Record {
	t.Helper()
	f, err := os.Open("testdata/golden/debezium.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []*connect.Record
	for sc.Scan() {
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		if g.Case != "dbz-default" {
			continue
		}
		r, err := transformtest.DecodeRecord(g.Input)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if len(out) != 6 {
		t.Fatalf("want 6 Debezium records, got %d", len(out))
	}
	return out
}

// corpusUser is the conformance corpus's schema'd user record.
func corpusUser(t testing.TB) *connect.Record {
	t.Helper()
	return transformtest.Corpus()[0]
}
