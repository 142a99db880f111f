package format

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// The line formats take their buffers from a pool and give them back on
// Close. Files written one after another, and two open at once, must
// each hold exactly their own records: nothing of an earlier file
// (large files flush many times; a reused buffer starts empty) and
// nothing of the other open file.
func TestLineBuffersReusedAcrossFiles(t *testing.T) {
	s := connect.NewStruct().Name("r").Field("id", connect.Int64Schema).Field("text", connect.StringSchema).Build()
	text := func(file, i int) string {
		return fmt.Sprintf("file %d record %d %s", file, i, strings.Repeat("x", i%300))
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
	}{{"json", nil}, {"json-gzip", map[string]string{CompressionTypeConfig: "gzip"}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustNew(t, "JsonFormat", tc.props)
			// Sizes below, at and well above flushSize (256 KiB).
			sizes := []int{3, 2000, 1, 9000, 0, 5000}
			var outs [2]bytes.Buffer
			for n, size := range sizes {
				// Two files open at once: even records to one, odd to
				// the other.
				var ws [2]RecordWriter
				for k := range ws {
					outs[k].Reset()
					w, err := f.NewWriter(&outs[k])
					if err != nil {
						t.Fatal(err)
					}
					ws[k] = w
				}
				var want [2][]any
				for i := range size {
					v := connect.NewStructValue(s).MustPut("id", int64(i)).MustPut("text", text(n, i))
					if err := ws[i%2].Write(s, v); err != nil {
						t.Fatal(err)
					}
					want[i%2] = append(want[i%2], v)
				}
				for k := range ws {
					if err := ws[k].Close(); err != nil {
						t.Fatal(err)
					}
					fresh := writeAll(t, f, s, want[k]...)
					if !bytes.Equal(outs[k].Bytes(), fresh) {
						t.Fatalf("file %d/%d (%d records): %d bytes, a fresh writer writes %d", n, k, len(want[k]), outs[k].Len(), len(fresh))
					}
					got := readAll(t, f, outs[k].Bytes())
					if len(got) != len(want[k]) {
						t.Fatalf("file %d/%d: %d records read back, want %d", n, k, len(got), len(want[k]))
					}
					for i, r := range got {
						m := r.v.(map[string]any)
						if id, _ := m["id"].(int64); id != int64(2*i+k) || m["text"] != text(n, 2*i+k) {
							t.Fatalf("file %d/%d record %d: %v", n, k, i, m)
						}
					}
				}
			}
		})
	}
}
