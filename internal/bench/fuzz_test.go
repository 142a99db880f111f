package bench

import (
	"strings"
	"testing"
)

// FuzzParseStatus: whatever /proc hands us, parsing returns an error or
// non-negative sizes, never a panic.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Add([]byte("VmHWM:\t1 kB\nVmRSS:\t2 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseStatus(b)
		if err == nil && (m.RSSKB < 0 || m.HWMKB < 0) {
			t.Fatalf("negative sizes %+v from %q", m, b)
		}
	})
}

// FuzzSkipResponseHeader: a broker's response header is untrusted input to
// the start-up probe.
func FuzzSkipResponseHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 'x'})
	f.Add([]byte{0, 0, 0, 1, 1, 5, 2, 0xaa, 0xbb})
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, err := skipResponseHeader(b, 1)
		if err == nil && len(rest) > len(b)-5 {
			t.Fatalf("skipped less than a minimal header: %d of %d bytes left", len(rest), len(b))
		}
	})
}

// FuzzReplaceGenerated: rewriting BENCHMARKS.md keeps what surrounds the
// block, holds exactly one block, and is idempotent.
func FuzzReplaceGenerated(f *testing.F) {
	f.Add("# Benchmarks\n\nintro\n", "| a | b |\n")
	f.Add("pre\n"+beginMarker+"\nold\n"+endMarker+"\npost\n", "new")
	f.Add("<!-- bench:begin -->", "x")
	f.Fuzz(func(t *testing.T, doc, gen string) {
		if strings.Contains(gen, "<!-- bench:") {
			t.Skip("generated text never contains markers")
		}
		out, err := ReplaceGenerated(doc, gen)
		if err != nil {
			return
		}
		if n := strings.Count(out, beginMarker); n != 1 {
			t.Fatalf("%d blocks in %q", n, out)
		}
		if !strings.Contains(out, strings.TrimRight(gen, "\n")) {
			t.Fatalf("generated text missing from %q", out)
		}
		if i := strings.Index(doc, "<!-- bench:begin"); i >= 0 && !strings.HasPrefix(out, doc[:i]) {
			t.Fatalf("text before the block changed: %q → %q", doc, out)
		}
		again, err := ReplaceGenerated(out, gen)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %v\n%q\n%q", err, out, again)
		}
	})
}
