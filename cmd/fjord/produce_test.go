package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// roundTripInput has keys, an empty key, an empty value, a value with
// spaces and a tombstone (TOMB is the null marker).
const roundTripInput = "k1:v1\nk2:hello world\nk3:TOMB\n:empty-key\nk5:\n"

// Produce with keys, headers, a tombstone and every codec, then read the
// records back with every output format.
func TestProduceConsumeRoundTrip(t *testing.T) {
	addr := startCLIBroker(t)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "rt-" + codec
			mustFjord(t, addr, "", "topic", "create", topic, "-p", "1")
			_, stderr, err := fjord(t, addr, roundTripInput, "produce", topic, "--key-separator", ":",
				"--null-value-marker", "TOMB", "--headers", `app=fjord,trace=a\,b`, "--compression", codec)
			if err != nil {
				t.Fatalf("produce: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "5 records acknowledged to topic "+topic) {
				t.Errorf("produce did not report the acknowledged count: %q", stderr)
			}

			consume := func(args ...string) string {
				return mustFjord(t, addr, "", append([]string{"consume", topic, "--from-beginning", "--max-messages", "5"}, args...)...)
			}
			if got, want := consume(), "v1\nhello world\nnull\nempty-key\n\n"; got != want {
				t.Errorf("default format:\n got %q\nwant %q", got, want)
			}
			if got, want := consume("--print-key"), "k1\tv1\nk2\thello world\nk3\tnull\n\tempty-key\nk5\t\n"; got != want {
				t.Errorf("--print-key:\n got %q\nwant %q", got, want)
			}
			got := consume("--format", `%t|%p|%o|%k|%v|%h|%K|%S\n`)
			want := fmt.Sprintf("%[1]s|0|0|k1|v1|app=fjord,trace=a,b|2|2\n"+
				"%[1]s|0|1|k2|hello world|app=fjord,trace=a,b|2|11\n"+
				"%[1]s|0|2|k3|null|app=fjord,trace=a,b|2|-1\n"+
				"%[1]s|0|3||empty-key|app=fjord,trace=a,b|0|9\n"+
				"%[1]s|0|4|k5||app=fjord,trace=a,b|2|0\n", topic)
			if got != want {
				t.Errorf("template format:\n got %q\nwant %q", got, want)
			}
			if ts := consume("--format", `%T\n`); !regexp.MustCompile(`^(1\d{12}\n){5}$`).MatchString(ts) {
				t.Errorf("%%T should print millisecond timestamps: %q", ts)
			}
			recs := jsonLines(t, consume("--format", "json"))
			if len(recs) != 5 {
				t.Fatalf("json: %d records, want 5", len(recs))
			}
			tomb := recs[2]
			if tomb["topic"] != topic || tomb["partition"] != 0.0 || tomb["offset"] != 2.0 || tomb["key"] != "k3" ||
				tomb["value"] != nil || tomb["timestamp"].(float64) <= 0 {
				t.Errorf("json tombstone = %v", tomb)
			}
			hs, _ := recs[0]["headers"].([]any)
			if len(hs) != 2 || hs[1].(map[string]any)["key"] != "trace" || hs[1].(map[string]any)["value"] != "a,b" {
				t.Errorf("json headers = %v", recs[0]["headers"])
			}
			if recs[3]["key"] != "" || recs[4]["value"] != "" {
				t.Errorf("empty key/value must stay empty strings, not null: %v / %v", recs[3], recs[4])
			}
		})
	}
}

func TestProduceAcksLingerBatchSize(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "acks", "-p", "2")
	var in strings.Builder
	for i := range 300 {
		fmt.Fprintf(&in, "line-%d\n", i)
	}
	for _, acks := range []string{"all", "1", "0"} {
		_, stderr, err := fjord(t, addr, in.String(), "produce", "acks", "--acks", acks, "--linger", "5ms", "--batch-size", "2048")
		if err != nil {
			t.Fatalf("--acks %s: %v\n%s", acks, err, stderr)
		}
		if !strings.Contains(stderr, "300 records") {
			t.Errorf("--acks %s: %q", acks, stderr)
		}
	}
	out := mustFjord(t, addr, "", "consume", "acks", "--from-beginning", "--timeout-ms", idleMS())
	if n := strings.Count(out, "\n"); n != 900 {
		t.Errorf("read back %d records, want 900", n)
	}
}

func TestProducePartitionAndKeyPlacement(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "placed", "-p", "3")
	mustFjord(t, addr, "a\nb\nc\n", "produce", "placed", "--partition", "2")
	out := mustFjord(t, addr, "", "consume", "placed", "--partition", "2", "--from-beginning", "-n", "3", "--format", `%p:%v\n`)
	if out != "2:a\n2:b\n2:c\n" {
		t.Errorf("--partition 2 records: %q", out)
	}
	// Keyed records: every record of a key lands in one partition.
	var in strings.Builder
	for i := range 60 {
		fmt.Fprintf(&in, "key%d=%d\n", i%6, i)
	}
	mustFjord(t, addr, in.String(), "produce", "placed", "-K", "=")
	out = mustFjord(t, addr, "", "consume", "placed", "--from-beginning", "--timeout-ms", idleMS(), "--format", `%k %p\n`)
	partOf := map[string]string{}
	for line := range strings.Lines(out) {
		k, p, _ := strings.Cut(strings.TrimSpace(line), " ")
		if k == "null" {
			continue
		}
		if prev, ok := partOf[k]; ok && prev != p {
			t.Errorf("key %s is in partitions %s and %s", k, prev, p)
		}
		partOf[k] = p
	}
	if len(partOf) != 6 {
		t.Errorf("saw %d keys, want 6:\n%s", len(partOf), out)
	}
}

func TestProduceFailures(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "small", "-p", "1", "--config", "max.message.bytes=200")

	// A record over max.message.bytes: Kafka's error name, the line, what to do.
	_, stderr, err := fjord(t, addr, strings.Repeat("x", 1000)+"\n", "produce", "small")
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "MESSAGE_TOO_LARGE") ||
		!strings.Contains(err.Error(), "max.message.bytes") {
		t.Errorf("oversized record: err = %v", err)
	}
	if !strings.Contains(stderr, "0 records acknowledged") || !strings.Contains(stderr, "1 failed") {
		t.Errorf("oversized record: stderr %q", stderr)
	}

	// A line without the key separator stops the run at that line; the
	// lines before it are delivered.
	_, stderr, err = fjord(t, addr, "a:1\nb:2\nno separator\nd:4\n", "produce", "small", "-K", ":")
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "no key separator") {
		t.Errorf("missing separator: err = %v", err)
	}
	if !strings.Contains(stderr, "2 records acknowledged") {
		t.Errorf("missing separator: stderr %q", stderr)
	}
	if out := mustFjord(t, addr, "", "consume", "small", "--from-beginning", "--timeout-ms", idleMS()); out != "1\n2\n" {
		t.Errorf("records delivered before the bad line: %q", out)
	}

	wantErr(t, addr, "x\n", []string{"produce", "nope"}, "topic nope does not exist: create it with `fjord topic create nope`")
	wantErr(t, addr, "x\n", []string{"produce", "small", "--partition", "4"}, "has no partition 4", "1 partition")
	wantErr(t, addr, "x\n", []string{"produce", "small", "--acks", "2"}, "--acks")
	wantErr(t, addr, "x\n", []string{"produce", "small", "--compression", "brotli"}, "--compression")
	wantErr(t, addr, "x\n", []string{"produce", "small", "--headers", "=v"}, "no key")
}

// Long inputs show progress on stderr while they run.
func TestProduceProgress(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "slow", "-p", "1")
	pr, pw := io.Pipe()
	run := startFjord(t.Context(), pr, "produce", "slow", "--progress-interval", "20ms", "-b", addr)
	if _, err := io.WriteString(pw, "a\nb\nc\n"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(run.stderr.String(), "produce: 3 records sent, 3 acknowledged") {
			return fmt.Errorf("no progress line yet: %q", run.stderr.String())
		}
		return nil
	})
	pw.Close()
	if err := run.wait(t, time.Minute); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.stderr.String(), "3 records acknowledged to topic slow.") {
		t.Errorf("final count missing: %q", run.stderr.String())
	}
}

func TestConsumeOffsetsAndErrors(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "two", "-p", "2")
	mustFjord(t, addr, "a0\na1\na2\na3\na4\n", "produce", "two", "-p", "0")
	mustFjord(t, addr, "b0\nb1\nb2\nb3\nb4\n", "produce", "two", "-p", "1")
	lines := func(s string) []string {
		l := strings.Fields(s)
		slices.Sort(l)
		return l
	}

	if out := mustFjord(t, addr, "", "consume", "two", "-p", "0", "--offset", "2", "--timeout-ms", idleMS()); out != "a2\na3\na4\n" {
		t.Errorf("--partition 0 --offset 2: %q", out)
	}
	if out := mustFjord(t, addr, "", "consume", "two", "--offset", "-2", "--timeout-ms", idleMS()); !slices.Equal(lines(out), []string{"a3", "a4", "b3", "b4"}) {
		t.Errorf("--offset -2 (last 2 of each partition): %q", out)
	}
	if out := mustFjord(t, addr, "", "consume", "two", "-p", "1", "--offset", "-100", "-n", "1"); out != "b0\n" {
		t.Errorf("--offset -100 clamps to the start: %q", out)
	}
	if out := mustFjord(t, addr, "", "consume", "two", "-p", "1", "--offset", "earliest", "-n", "1"); out != "b0\n" {
		t.Errorf("--offset earliest: %q", out)
	}
	out, stderr, err := fjord(t, addr, "", "consume", "two", "--offset", "latest", "--timeout-ms", idleMS())
	if err != nil || out != "" || !strings.Contains(stderr, "Processed a total of 0 messages") {
		t.Errorf("--offset latest: out %q, stderr %q, err %v", out, stderr, err)
	}
	out, stderr, err = fjord(t, addr, "", "consume", "two", "--from-beginning", "--isolation-level", "read_committed", "--timeout-ms", idleMS())
	if err != nil || len(lines(out)) != 10 || !strings.Contains(stderr, "Processed a total of 10 messages") {
		t.Errorf("read_committed from the beginning: %q %q %v", out, stderr, err)
	}

	wantErr(t, addr, "", []string{"consume", "nope"}, "topic nope does not exist: create it with `fjord topic create nope`")
	wantErr(t, addr, "", []string{"consume", "two", "-p", "5"}, "has no partition 5")
	wantErr(t, addr, "", []string{"consume", "two", "--from-beginning", "--offset", "1"}, "give one")
	wantErr(t, addr, "", []string{"consume", "two", "--group", "g", "--partition", "0"}, "--group", "reset-offsets g")
	wantErr(t, addr, "", []string{"consume", "two", "--format", "%x"}, "unknown code %x")
	wantErr(t, addr, "", []string{"consume", "two", "--offset", "soon"}, "--offset")
	wantErr(t, addr, "", []string{"consume", "two", "--isolation-level", "serializable"}, "--isolation-level")
}

// Interrupting a group consumer (what SIGINT does) exits cleanly and
// commits what was printed.
func TestConsumeInterruptCommits(t *testing.T) {
	addr := startCLIBroker(t)
	mustFjord(t, addr, "", "topic", "create", "live", "-p", "1")
	ctx, cancel := context.WithCancel(t.Context())
	run := startFjord(ctx, nil, "consume", "live", "--group", "watchers", "-b", addr)
	// The group starts at the latest offset: wait until it owns the
	// partition before producing.
	testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		out, _, err := fjord(t, addr, "", "group", "describe", "watchers")
		if err != nil || !strings.Contains(out, "State: Stable") || !strings.Contains(out, "live:0") {
			return fmt.Errorf("group not stable yet: %v\n%s", err, out)
		}
		return nil
	})
	mustFjord(t, addr, "m1\nm2\nm3\n", "produce", "live")
	testkit.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if got := run.stdout.String(); got != "m1\nm2\nm3\n" {
			return fmt.Errorf("consumer printed %q so far", got)
		}
		return nil
	})
	cancel()
	if err := run.wait(t, time.Minute); err != nil {
		t.Fatalf("interrupted consumer: %v", err)
	}
	if !strings.Contains(run.stderr.String(), "Processed a total of 3 messages") {
		t.Errorf("stderr: %q", run.stderr.String())
	}
	out := mustFjord(t, addr, "", "group", "describe", "watchers")
	if !regexp.MustCompile(`(?m)^live +0 +3 +3 +0 `).MatchString(out) || !strings.Contains(out, "Total lag: 0") {
		t.Errorf("after interrupt the group should be at offset 3 with lag 0:\n%s", out)
	}
}
