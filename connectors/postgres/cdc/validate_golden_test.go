package cdc

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// Every key Debezium 3.6.1's validate lists for its PostgresConnector is
// one Fjord knows — implemented, or accepted and ignored — so a pasted
// Debezium config never meets "Unknown configuration".
func TestDebeziumKeysAreKnown(t *testing.T) {
	raw, err := os.ReadFile("testdata/debezium/validate_ok.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Response struct {
			Configs []struct {
				Definition struct {
					Name  string `json:"name"`
					Group string `json:"group"`
				} `json:"definition"`
			} `json:"configs"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, c := range v.Response.Configs {
		props[c.Definition.Name] = "x"
	}
	if len(props) < 100 {
		t.Fatalf("only %d keys in Debezium's validate answer", len(props))
	}
	var unknown []string
	for _, cv := range unknownKeys(props) {
		unknown = append(unknown, cv.Name)
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("%d Debezium keys would be reported unknown: %s", len(unknown), strings.Join(unknown, ", "))
	}
	// And a typo still is.
	if got := unknownKeys(map[string]string{"tombstones.on.delet": "false"}); len(got) != 1 {
		t.Errorf("a misspelt key is not reported: %v", got)
	}
}
