package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// benchDir makes *dir the benchmark's data dir: a new temp dir named
// prefix* when empty (removed by cleanup unless keep), else the given one,
// created if missing.
func benchDir(dir *string, prefix string, keep bool) (cleanup func(), err error) {
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return nil, fmt.Errorf("bench dir: %w", err)
		}
		return func() {}, nil
	}
	if *dir, err = os.MkdirTemp("", prefix); err != nil {
		return nil, fmt.Errorf("bench dir: %w", err)
	}
	if keep {
		return func() {}, nil
	}
	d := *dir
	return func() { os.RemoveAll(d) }, nil
}

// publishReport prints a benchmark's markdown, writes the full report as
// JSON to jsonOut when set, and with write refreshes the benchmark's block
// of benchFile through writeBlock.
func publishReport(out io.Writer, md string, rep any, jsonOut string, write bool, benchFile string, writeBlock func(path, md string) error) error {
	fmt.Fprint(out, md)
	if jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", jsonOut, err)
		}
	}
	if write {
		if err := writeBlock(benchFile, md); err != nil {
			return err
		}
		slog.Info("updated", "file", benchFile)
	}
	return nil
}
