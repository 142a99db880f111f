package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOffsetRecord feeds offset topic records to the offset table: bad
// keys and values are errors, never panics, and what is accepted
// re-encodes to a key the table finds again.
func FuzzOffsetRecord(f *testing.F) {
	f.Add([]byte(`["golden-source",{"file":"golden"}]`), []byte(`{"position":2}`))
	f.Add([]byte(`["c",null]`), []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		tbl := newOffsetTable()
		if err := tbl.apply(key, value); err != nil {
			return
		}
		conn, part, err := ParseOffsetKey(key)
		if err != nil {
			t.Fatalf("applied key does not parse: %v", err)
		}
		got, err := tbl.get(conn, []map[string]any{part})
		if err != nil {
			t.Fatal(err)
		}
		if (value == nil) != (got[0] == nil) && string(value) != "null" {
			t.Fatalf("value %q read back as %v", value, got[0])
		}
	})
}

// FuzzConfigRecord feeds config topic records to the config state.
func FuzzConfigRecord(f *testing.F) {
	f.Add("connector-a", []byte(`{"properties":{"k":"v"}}`))
	f.Add("task-a-0", []byte(`{"properties":{"k":"v"}}`))
	f.Add("commit-a", []byte(`{"tasks":1}`))
	f.Add("target-state-a", []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`))
	f.Add("restart-connector-a", []byte(`{"include-tasks":true,"only-failed":false}`))
	f.Add("session-key", []byte(`{"key":"a2V5","algorithm":"HmacSHA256","creation-timestamp":1}`))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		st := newConfigState(discardLogger())
		st.apply(0, "connector-a", EncodeConnectorConfig(map[string]string{"x": "y"}))
		st.apply(1, key, value)
		st.apply(2, key, nil)
		snap := st.snapshot()
		for name, tasks := range snap.Tasks {
			if !snap.Contains(name) {
				t.Fatalf("tasks of unknown connector %s", name)
			}
			for i, c := range tasks {
				if c == nil {
					t.Fatalf("task %s-%d has no config", name, i)
				}
			}
		}
	})
}

// FuzzStatusRecord feeds status topic records to the status table.
func FuzzStatusRecord(f *testing.F) {
	f.Add("status-connector-a", []byte(`{"state":"RUNNING","trace":null,"worker_id":"w","generation":2,"version":"1.0"}`))
	f.Add("status-task-a-0", []byte(`{"state":"FAILED","trace":"x","worker_id":"w","generation":2}`))
	f.Add("status-topic-t:connector-a", []byte(`{"topic":{"name":"t","connector":"a","task":0,"discoverTimestamp":1}}`))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		tbl := newStatusTable(discardLogger())
		tbl.apply(key, value)
		for _, c := range tbl.connectorNames() {
			tbl.taskList(c)
			tbl.topicList(c)
		}
	})
}

// FuzzOffsetFile opens arbitrary offsets files.
func FuzzOffsetFile(f *testing.F) {
	f.Add([]byte(`{"format":"fjord-connect-offsets-v1","offsets":[{"key":["c",{"f":"a"}],"value":{"p":1}}]}`))
	f.Add([]byte{0xac, 0xed, 0, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "offsets")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenFileOffsetStore(path)
		if err != nil {
			return
		}
		// What loaded must save and load again.
		if err := s.save(); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFileOffsetStore(path); err != nil {
			t.Fatalf("reopen after save: %v", err)
		}
	})
}
