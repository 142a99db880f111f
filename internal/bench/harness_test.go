package bench

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// childEnv marks a re-execution of this test binary as a bench child
// process (driver or kfake), so the harness test runs real processes
// without building cmd/fjord.
const childEnv = "FJORD_BENCH_TEST_CHILD=1"

// childGORACE drops the race detector's default 1 s sleep at exit, which
// would otherwise add a second to every driver process of a -race run;
// a race in a child still fails it (exit status 66), and so the test.
var childGORACE = "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")

func TestMain(m *testing.M) {
	if os.Getenv("FJORD_BENCH_TEST_CHILD") == "1" {
		// The child is a complete `fjord bench`, so `go test -c` gives a
		// bench tool even while cmd/fjord does not build.
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		cmd := NewCommand([]string{exe}, []string{childEnv})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(os.Args[1:])
		if err := cmd.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testSelf(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestQuickRunAgainstKfake is the end-to-end smoke test of `fjord bench
// run --quick`: kfake and every driver run as separate processes, the
// table and BENCHMARKS.md block come out, and a Fjord that cannot start
// (here /bin/false stands in for a binary without `dev`) is reported
// rather than failing the run. No Java needed.
func TestQuickRunAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes for ~15 s; run without -short")
	}
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "BENCHMARKS.md")
	if err := os.WriteFile(benchFile, []byte("# Benchmarks\n\nhand-written preamble\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "report.json")
	cmd := NewCommand(testSelf(t), []string{childEnv, childGORACE})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"run", "--quick",
		"--brokers", "fjord,kfake",
		"--fjord-bin", "/bin/false",
		"--fjord-port", freePort(t), "--fjord-http-port", freePort(t),
		"--kfake-port", freePort(t),
		"--dir", filepath.Join(dir, "data"),
		"--write", "--benchmarks-file", benchFile,
		"--json", jsonFile,
	})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench run: %v\n%s", err, out.String())
	}
	md := out.String()
	t.Log("\n" + md)

	for _, want := range []string{
		"| Figure | Workload | Unit | Fjord | kfake | Fjord/kfake |",
		"**Fjord: not measured** — run 1: Fjord exited before serving Metadata",
		"Goals: not evaluated",
		"Machine limits: loopback TCP",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Every kfake figure was measured: 4 + 6 per workload × acks rows.
	var rows, measured int
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 8 || strings.HasPrefix(line, "| Figure") || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		if v := strings.TrimSpace(cells[5]); v != "—" && v != "0" && v != "0.00" && v != "0.0" {
			measured++
		}
	}
	if want := 4 + 6*len(QuickWorkloads)*2; rows != want || measured != want {
		t.Errorf("table has %d rows, %d with a kfake figure; want %d of each", rows, measured, want)
	}

	doc, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(doc), "# Benchmarks\n\nhand-written preamble\n") ||
		!strings.Contains(string(doc), beginMarker) || !strings.Contains(string(doc), "| produce | 100 k × 100 B, acks=1 | rec/s |") {
		t.Errorf("BENCHMARKS.md not updated as expected:\n%s", doc)
	}
	if b, err := os.ReadFile(jsonFile); err != nil || !bytes.Contains(b, []byte(`"samples"`)) {
		t.Errorf("json report: %v %s", err, b)
	}
}
