package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// runMirrorCmd runs `fjord mirror args...` in-process until it returns or
// ctx ends.
func runMirrorCmd(ctx context.Context, args ...string) (string, error) {
	root := &cobra.Command{Use: "fjord", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newMirrorCmd())
	var out syncBuffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"mirror"}, args...))
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

func writeMM2(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMirrorCommandRefuses: configuration mistakes stop `fjord mirror`
// before anything starts, with a message naming the problem.
func TestMirrorCommandRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"", nil, "no such file"},
		{"a.bootstrap.servers = x:9092\n", nil, `Missing required configuration "clusters"`},
		{"clusters = a, b\nemit.heartbeats.enabled = false\n", nil, "No source->target replication flows."},
		{"clusters = a, b\na->b.enabled = true\n", []string{"--clusters", "c"}, `cluster "c" is not in clusters (a, b)`},
		// A worker setting of the target that the worker refuses.
		{"clusters = a, b\na->b.enabled = true\nemit.heartbeats.enabled = false\nb.offset.flush.interval.ms = soon\n", nil,
			"flow a->b"},
	} {
		path := filepath.Join(t.TempDir(), "missing.properties")
		if tc.file != "" {
			path = writeMM2(t, "mm2.properties", tc.file)
		}
		out, err := runMirrorCmd(ctx, append(tc.args, path)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q; output:\n%s", tc.file, err, tc.want, out)
		}
		if strings.Contains(out, "is running") {
			t.Errorf("%q: started anyway:\n%s", tc.file, out)
		}
	}
	// status: the same checks, and a flow it cannot measure fails it.
	path := writeMM2(t, "mm2.properties", "clusters = a, b\na->b.enabled = true\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:1\n")
	out, err := runMirrorCmd(ctx, "status", "--timeout", "2s", path)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 flows could not be measured") || !strings.Contains(out, "a->b") {
		t.Errorf("status of unreachable clusters: %v\n%s", err, out)
	}
}
