package bench

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// markedBlock is one generated block of BENCHMARKS.md, between a begin
// and an end marker of its own, so each benchmark refreshes its block and
// leaves the rest of the file (the other blocks, the prose) as written.
type markedBlock struct {
	name        string // in error messages: bench-connect, bench-cluster
	begin, end  string // the markers written
	beginPrefix string // what identifies a begin marker, whatever its comment
}

var (
	connectBlock = markedBlock{"bench-connect", connectBeginMarker, connectEndMarker, connectBeginPrefix}
	clusterBlock = markedBlock{"bench-cluster", clusterBeginMarker, clusterEndMarker, clusterBeginPrefix}
)

// replace returns doc with the block replaced by generated, appending the
// block when doc has none yet.
func (b markedBlock) replace(doc, generated string) (string, error) {
	block := b.begin + "\n" + strings.TrimRight(generated, "\n") + "\n" + b.end
	i := strings.Index(doc, b.beginPrefix)
	j := strings.Index(doc, b.end)
	switch {
	case i < 0 && j < 0:
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		if doc != "" {
			doc += "\n"
		}
		return doc + block + "\n", nil
	case i < 0 || j < i:
		return "", fmt.Errorf("BENCHMARKS.md has a mismatched %s:begin/%s:end marker pair; fix it by hand", b.name, b.name)
	}
	rest := doc[j+len(b.end):]
	if strings.Contains(rest, b.beginPrefix) || strings.Contains(rest, b.end) {
		return "", fmt.Errorf("BENCHMARKS.md has more than one %s block; keep one", b.name)
	}
	return doc[:i] + block + rest, nil
}

// writeGenerated refreshes one generated part of the file at path with
// replace, creating the file if it does not exist, atomically.
func writeGenerated(path, generated string, replace func(doc, generated string) (string, error)) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	doc := string(old)
	if doc == "" {
		doc = "# Benchmarks\n\nRun `make bench` (scripts/bench.sh) to measure; see internal/bench for how.\n"
	}
	out, err := replace(doc, generated)
	if err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(out), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
