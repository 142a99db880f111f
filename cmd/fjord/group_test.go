package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

type groupJSON struct {
	Group   string `json:"group"`
	State   string `json:"state"`
	Members []struct {
		MemberID   string `json:"member_id"`
		ClientID   string `json:"client_id"`
		Assignment []struct {
			Topic      string  `json:"topic"`
			Partitions []int32 `json:"partitions"`
		} `json:"assignment"`
	} `json:"members"`
	Offsets []struct {
		Topic         string `json:"topic"`
		Partition     int32  `json:"partition"`
		CurrentOffset *int64 `json:"current_offset"`
		LogEndOffset  *int64 `json:"log_end_offset"`
		Lag           *int64 `json:"lag"`
	} `json:"offsets"`
	TotalLag int64 `json:"total_lag"`
}

func describeGroup(t *testing.T, addr, group string) groupJSON {
	t.Helper()
	g, err := tryDescribeGroup(t, addr, group)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// tryDescribeGroup is describeGroup for polling: a group that does not
// exist yet is an error, not a failure.
func tryDescribeGroup(t *testing.T, addr, group string) (groupJSON, error) {
	t.Helper()
	out, _, err := fjord(t, addr, "", "group", "describe", group, "-o", "json")
	if err != nil {
		return groupJSON{}, err
	}
	gs := decodeJSON[[]groupJSON](t, out)
	if len(gs) != 1 {
		return groupJSON{}, fmt.Errorf("describe %s returned %d groups", group, len(gs))
	}
	return gs[0], nil
}

func fmtOpt(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// committed renders a group's committed offsets as "p0=N p1=M" ("-" when
// none).
func committed(g groupJSON) string {
	var parts []string
	for _, o := range g.Offsets {
		v := "-"
		if o.CurrentOffset != nil {
			v = fmt.Sprint(*o.CurrentOffset)
		}
		parts = append(parts, fmt.Sprintf("p%d=%s", o.Partition, v))
	}
	return strings.Join(parts, " ")
}

// setupEvents makes a topic with 5 records in each of 2 partitions. Each
// test names its own, so the suite can share one external cluster.
func setupEvents(t *testing.T, addr, topic string) {
	t.Helper()
	mustFjord(t, addr, "", "topic", "create", topic, "-p", "2")
	mustFjord(t, addr, "a0\na1\na2\na3\na4\n", "produce", topic, "-p", "0")
	mustFjord(t, addr, "b0\nb1\nb2\nb3\nb4\n", "produce", topic, "-p", "1")
}

func TestGroupLagGoesToZero(t *testing.T) {
	addr := startCLIBroker(t)
	setupEvents(t, addr, "lag-events")

	out := mustFjord(t, addr, "", "consume", "lag-events", "--group", "billing", "--from-beginning", "--max-messages", "4")
	if n := strings.Count(out, "\n"); n != 4 {
		t.Fatalf("--max-messages 4 printed %d records", n)
	}
	// Only what was printed is committed: lag is exactly 10-4, whichever
	// partitions the 4 records came from.
	g := describeGroup(t, addr, "billing")
	if g.State != "Empty" || g.TotalLag != 6 || len(g.Offsets) != 2 {
		t.Fatalf("after 4 of 10: state %s, total lag %d, offsets %s", g.State, g.TotalLag, committed(g))
	}
	text := mustFjord(t, addr, "", "group", "describe", "billing")
	for _, want := range []string{"Group: billing", "State: Empty", "TOPIC", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "Total lag: 6"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe text lacks %q:\n%s", want, text)
		}
	}

	out = mustFjord(t, addr, "", "consume", "lag-events", "--group", "billing", "--timeout-ms", idleMS())
	if n := strings.Count(out, "\n"); n != 6 {
		t.Errorf("second run printed %d records, want the remaining 6:\n%s", n, out)
	}
	g = describeGroup(t, addr, "billing")
	if g.TotalLag != 0 || committed(g) != "p0=5 p1=5" {
		t.Errorf("after consuming all: total lag %d, offsets %s", g.TotalLag, committed(g))
	}
	for _, o := range g.Offsets {
		if o.Lag == nil || *o.Lag != 0 || o.LogEndOffset == nil || *o.LogEndOffset != 5 {
			t.Errorf("partition %d: lag %s, end %s", o.Partition, fmtOpt(o.Lag), fmtOpt(o.LogEndOffset))
		}
	}
	if !regexp.MustCompile(`(?m)^lag-events +1 +5 +5 +0 `).MatchString(mustFjord(t, addr, "", "group", "describe", "billing")) {
		t.Error("describe text does not show partition 1 at 5/5 with lag 0")
	}

	if all := mustFjord(t, addr, "", "group", "describe"); !strings.Contains(all, "Group: billing") {
		t.Errorf("describe without names should describe every group:\n%s", all)
	}
	out = mustFjord(t, addr, "", "group", "list")
	if !regexp.MustCompile(`(?m)^billing +Empty +consumer `).MatchString(out) {
		t.Errorf("group list:\n%s", out)
	}
	wantErr(t, addr, "", []string{"group", "describe", "nobody"}, "group nobody does not exist", "fjord group list")
}

// A group started at "latest" that printed nothing still saves its
// position, so records produced before its next run are not skipped.
func TestGroupLatestKeepsPosition(t *testing.T) {
	addr := startCLIBroker(t)
	setupEvents(t, addr, "latest-events")
	if out := mustFjord(t, addr, "", "consume", "latest-events", "--group", "tail", "--timeout-ms", idleMS()); out != "" {
		t.Fatalf("a new group at latest printed %q", out)
	}
	if g := describeGroup(t, addr, "tail"); committed(g) != "p0=5 p1=5" {
		t.Fatalf("untouched partitions should be committed at their end: %s", committed(g))
	}
	mustFjord(t, addr, "late\n", "produce", "latest-events", "-p", "1")
	if out := mustFjord(t, addr, "", "consume", "latest-events", "--group", "tail", "--timeout-ms", idleMS()); out != "late\n" {
		t.Errorf("the record produced between runs: got %q", out)
	}
}

func TestGroupResetOffsets(t *testing.T) {
	addr := startCLIBroker(t)
	setupEvents(t, addr, "reset-events")
	mustFjord(t, addr, "", "consume", "reset-events", "--group", "resetters", "--from-beginning", "--timeout-ms", idleMS())

	// Dry run by default: the plan, and nothing changes.
	out := mustFjord(t, addr, "", "group", "reset-offsets", "resetters", "--topic", "reset-events", "--to-earliest")
	if !regexp.MustCompile(`(?m)^GROUP +TOPIC +PARTITION +OLD-OFFSET +NEW-OFFSET$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^resetters +reset-events +0 +5 +0$`).MatchString(out) || !strings.Contains(out, "Dry run") {
		t.Errorf("dry run output:\n%s", out)
	}
	if g := describeGroup(t, addr, "resetters"); committed(g) != "p0=5 p1=5" {
		t.Fatalf("dry run changed offsets: %s", committed(g))
	}

	mustFjord(t, addr, "", "group", "reset-offsets", "resetters", "--topic", "reset-events", "--to-earliest", "--execute")
	if g := describeGroup(t, addr, "resetters"); committed(g) != "p0=0 p1=0" || g.TotalLag != 10 {
		t.Fatalf("after --to-earliest --execute: %s, lag %d", committed(g), g.TotalLag)
	}
	if out := mustFjord(t, addr, "", "consume", "reset-events", "--group", "resetters", "--timeout-ms", idleMS()); strings.Count(out, "\n") != 10 {
		t.Errorf("re-consume after reset printed:\n%s", out)
	}

	steps := []struct {
		args []string
		want string
	}{
		{[]string{"--all-topics", "--shift-by", "-2"}, "p0=3 p1=3"},
		{[]string{"--topic", "reset-events:0", "--to-offset", "1"}, "p0=1 p1=3"},
		{[]string{"--topic", "reset-events:1", "--to-offset", "99"}, "p0=1 p1=5"}, // clamped to the end
		{[]string{"--topic", "reset-events", "--shift-by", "-50"}, "p0=0 p1=0"},   // clamped to the start
		{[]string{"--topic", "reset-events", "--to-datetime", "2999-01-01T00:00:00Z"}, "p0=5 p1=5"},
		{[]string{"--topic", "reset-events", "--to-datetime", "2000-01-01T00:00:00Z"}, "p0=0 p1=0"},
		{[]string{"--topic", "reset-events", "--to-latest"}, "p0=5 p1=5"},
		{[]string{"--topic", "reset-events", "--by-duration", "P1D"}, "p0=0 p1=0"},
		{[]string{"--topic", "reset-events", "--by-duration", "0s"}, "p0=5 p1=5"},
	}
	for _, s := range steps {
		mustFjord(t, addr, "", append([]string{"group", "reset-offsets", "resetters", "--execute"}, s.args...)...)
		if got := committed(describeGroup(t, addr, "resetters")); got != s.want {
			t.Errorf("reset %v: offsets %s, want %s", s.args, got, s.want)
		}
	}
	mustFjord(t, addr, "", "group", "reset-offsets", "resetters", "--topic", "reset-events", "--shift-by", "-2", "--execute")
	if out := mustFjord(t, addr, "", "consume", "reset-events", "--group", "resetters", "--timeout-ms", idleMS()); strings.Count(out, "\n") != 4 {
		t.Errorf("after --shift-by -2 the group should re-read 4 records:\n%s", out)
	}

	reset := []string{"group", "reset-offsets", "resetters"}
	wantErr(t, addr, "", append(reset, "--to-earliest"), "--topic", "--all-topics")
	wantErr(t, addr, "", append(reset, "--topic", "reset-events"), "--to-earliest")
	wantErr(t, addr, "", append(reset, "--topic", "reset-events", "--to-earliest", "--to-latest"), "only one")
	wantErr(t, addr, "", append(reset, "--topic", "nope", "--to-earliest"), "topic nope does not exist")
	wantErr(t, addr, "", append(reset, "--topic", "reset-events:7", "--to-earliest"), "no partition 7")
	wantErr(t, addr, "", append(reset, "--topic", "reset-events", "--to-datetime", "yesterday"), "--to-datetime")
	wantErr(t, addr, "", append(reset, "--topic", "reset-events", "--to-earliest", "--dry-run", "--execute"), "dry-run", "execute")
	wantErr(t, addr, "", []string{"group", "reset-offsets", "fresh", "--topic", "reset-events", "--shift-by", "1"}, "no committed offset")
	wantErr(t, addr, "", []string{"group", "reset-offsets", "fresh", "--all-topics", "--to-earliest"}, "no committed offsets")
	// A group that does not exist yet can be given offsets, as in Kafka.
	mustFjord(t, addr, "", "group", "reset-offsets", "fresh", "--topic", "reset-events:1", "--to-offset", "4", "--execute")
	if out := mustFjord(t, addr, "", "consume", "reset-events", "--group", "fresh", "--timeout-ms", idleMS()); !strings.Contains(out, "b4\n") {
		t.Errorf("new group reset to 4 on partition 1 should read b4:\n%s", out)
	}
}

// Resetting or deleting an active group is refused with advice; once the
// consumer stops, both work.
func TestGroupActiveIsProtected(t *testing.T) {
	addr := startCLIBroker(t)
	setupEvents(t, addr, "busy-events")
	ctx, cancel := context.WithCancel(t.Context())
	props := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(props, []byte("# as Kafka's tools take it\nclient.id = busy-app\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := startFjord(ctx, nil, "consume", "busy-events", "--group", "busy", "--from-beginning", "--command-config", props, "-b", addr)
	testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		g, err := tryDescribeGroup(t, addr, "busy")
		if err != nil {
			return err
		}
		if g.State != "Stable" || len(g.Members) != 1 || g.Members[0].ClientID != "busy-app" ||
			len(g.Members[0].Assignment) != 1 || len(g.Members[0].Assignment[0].Partitions) != 2 {
			return fmt.Errorf("group not stable with the partitions assigned yet: %+v", g)
		}
		return nil
	})
	wantErr(t, addr, "", []string{"group", "reset-offsets", "busy", "--topic", "busy-events", "--to-earliest"}, "is Stable with 1 member", "stop its consumers")
	wantErr(t, addr, "", []string{"group", "delete", "busy"}, "NON_EMPTY_GROUP", "stop its consumers")
	if out := mustFjord(t, addr, "", "group", "describe", "busy"); !strings.Contains(out, "MEMBER-ID") || !strings.Contains(out, "busy-events:0,1") {
		t.Errorf("describe of an active group shows no members:\n%s", out)
	}
	cancel()
	if err := run.wait(t, time.Minute); err != nil {
		t.Fatal(err)
	}
	mustFjord(t, addr, "", "group", "reset-offsets", "busy", "--topic", "busy-events", "--to-earliest", "--execute")
	if out := mustFjord(t, addr, "", "group", "delete", "busy"); !strings.Contains(out, "Deleted group busy.") {
		t.Errorf("delete said %q", out)
	}
	if out := mustFjord(t, addr, "", "group", "list"); strings.Contains(out, "busy") {
		t.Errorf("deleted group still listed:\n%s", out)
	}
	wantErr(t, addr, "", []string{"group", "delete", "busy"}, "group busy")
}

// The real binary, interrupted with SIGINT while consuming in a group,
// exits 0 and leaves the printed records committed.
func TestConsumeBinarySIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fjord binary; run without -short")
	}
	addr := startCLIBroker(t)
	setupEvents(t, addr, "sig-events")
	bin := testkit.FjordBinary(t)
	cmd := exec.Command(bin, "consume", "sig-events", "--group", "sig", "--from-beginning", "-b", addr)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := strings.Count(stdout.String(), "\n"); n != 10 {
			return fmt.Errorf("printed %d of 10 records", n)
		}
		return nil
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fjord consume after SIGINT: %v (want exit 0)\n%s", err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("killed by %v instead of exiting", ws.Signal())
	}
	if g := describeGroup(t, addr, "sig"); committed(g) != "p0=5 p1=5" || g.TotalLag != 0 {
		t.Errorf("after SIGINT: offsets %s, lag %d", committed(g), g.TotalLag)
	}
}
