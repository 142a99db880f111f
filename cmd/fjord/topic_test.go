package main

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

func TestTopicLifecycle(t *testing.T) {
	addr := startCLIBroker(t)

	out := mustFjord(t, addr, "", "topic", "create", "orders", "--partitions", "3", "--config", "cleanup.policy=compact")
	if !strings.Contains(out, "Created topic orders (3 partitions") {
		t.Errorf("create said %q", out)
	}
	wantErr(t, addr, "", []string{"topic", "create", "orders"}, "TOPIC_ALREADY_EXISTS", "--if-not-exists", "fjord topic alter orders")
	if out := mustFjord(t, addr, "", "topic", "create", "orders", "--if-not-exists"); !strings.Contains(out, "already exists") {
		t.Errorf("create --if-not-exists said %q", out)
	}
	mustFjord(t, addr, "", "topic", "create", "dry", "-p", "2", "--validate-only")
	mustFjord(t, addr, "", "topic", "create", "logs", "-p", "1", "-r", "1")

	// list: an aligned table, and JSON for scripts; --validate-only created
	// nothing. (Real Kafka shows a new topic in its metadata a moment after
	// CreateTopics returns, hence the polling.)
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		out = mustFjord(t, addr, "", "topic", "list")
		if !regexp.MustCompile(`(?m)^TOPIC +PARTITIONS +REPLICATION-FACTOR\n`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^orders +3 +1$`).MatchString(out) || !regexp.MustCompile(`(?m)^logs +1 +1$`).MatchString(out) {
			return fmt.Errorf("topic list:\n%s", out)
		}
		return nil
	})
	if regexp.MustCompile(`(?m)^dry `).MatchString(out) {
		t.Errorf("--validate-only created the topic:\n%s", out)
	}
	type listed struct {
		Topic      string `json:"topic"`
		Partitions int    `json:"partitions"`
	}
	partitions := map[string]int{}
	for _, l := range decodeJSON[[]listed](t, mustFjord(t, addr, "", "topic", "list", "-o", "json")) {
		partitions[l.Topic] = l.Partitions
	}
	if partitions["orders"] != 3 || partitions["logs"] != 1 {
		t.Errorf("topic list -o json: partitions %v", partitions)
	}

	// describe: partitions with leader/replicas/isr and non-default configs.
	out = mustFjord(t, addr, "", "topic", "describe", "orders")
	if !strings.Contains(out, "Topic: orders") || !strings.Contains(out, "Partitions: 3") || !strings.Contains(out, "cleanup.policy=compact") {
		t.Errorf("describe header:\n%s", out)
	}
	if rows := regexp.MustCompile(`(?m)^[0-2] +\d+ +\d+ +\d+$`).FindAllString(out, -1); len(rows) != 3 {
		t.Errorf("describe should list 3 partition rows, got %d:\n%s", len(rows), out)
	}
	type described struct {
		Topic      string             `json:"topic"`
		ID         string             `json:"id"`
		Configs    map[string]*string `json:"configs"`
		Partitions []struct {
			Partition int32   `json:"partition"`
			Leader    int32   `json:"leader"`
			Replicas  []int32 `json:"replicas"`
			ISR       []int32 `json:"isr"`
		} `json:"partitions"`
	}
	d := decodeJSON[[]described](t, mustFjord(t, addr, "", "topic", "describe", "orders", "-o", "json"))
	if len(d) != 1 || len(d[0].Partitions) != 3 || d[0].ID == "" || d[0].Configs["cleanup.policy"] == nil ||
		len(d[0].Partitions[2].Replicas) != 1 || len(d[0].Partitions[2].ISR) != 1 || d[0].Partitions[2].Leader < 0 {
		t.Errorf("describe -o json = %+v", d)
	}
	if _, ok := d[0].Configs["retention.ms"]; ok {
		t.Errorf("a default config is shown as non-default: %v", d[0].Configs)
	}
	// Describing all topics shows both; a missing one fails after the rest is shown.
	if out := mustFjord(t, addr, "", "topic", "describe"); !strings.Contains(out, "Topic: orders") || !strings.Contains(out, "Topic: logs") {
		t.Errorf("describe all:\n%s", out)
	}
	stdout, _, err := fjord(t, addr, "", "topic", "describe", "logs", "missing")
	if err == nil || !strings.Contains(err.Error(), "topic missing does not exist: create it with `fjord topic create missing`") || !strings.Contains(stdout, "Topic: logs") {
		t.Errorf("describe with a missing topic: err=%v\n%s", err, stdout)
	}

	// alter: set and delete configs, grow partitions; never shrink.
	out = mustFjord(t, addr, "", "topic", "alter", "orders", "--config", "retention.ms=60000", "--delete-config", "cleanup.policy", "--partitions", "5")
	for _, want := range []string{"Set retention.ms=60000", "Reset cleanup.policy", "from 3 to 5 partitions"} {
		if !strings.Contains(out, want) {
			t.Errorf("alter output lacks %q:\n%s", want, out)
		}
	}
	d = decodeJSON[[]described](t, mustFjord(t, addr, "", "topic", "describe", "orders", "-o", "json"))
	if len(d[0].Partitions) != 5 || d[0].Configs["retention.ms"] == nil || *d[0].Configs["retention.ms"] != "60000" || d[0].Configs["cleanup.policy"] != nil {
		t.Errorf("after alter: %d partitions, configs %v", len(d[0].Partitions), d[0].Configs)
	}
	mustFjord(t, addr, "", "topic", "alter", "orders", "--partitions", "9", "--validate-only")
	if d = decodeJSON[[]described](t, mustFjord(t, addr, "", "topic", "describe", "orders", "-o", "json")); len(d[0].Partitions) != 5 {
		t.Errorf("alter --validate-only changed the partition count to %d", len(d[0].Partitions))
	}
	wantErr(t, addr, "", []string{"topic", "alter", "orders", "--partitions", "2"}, "has 5 partitions", "never remove")
	wantErr(t, addr, "", []string{"topic", "alter", "orders"}, "nothing to alter")
	wantErr(t, addr, "", []string{"topic", "alter", "nope", "--config", "retention.ms=1"}, "topic nope does not exist", "fjord topic create nope")
	wantErr(t, addr, "", []string{"topic", "alter", "orders", "--config", "retention.ms"}, "want key=value")

	// delete: several at once; --if-exists skips missing ones.
	out = mustFjord(t, addr, "", "topic", "delete", "orders", "logs")
	if !strings.Contains(out, "Deleted topic orders.") || !strings.Contains(out, "Deleted topic logs.") {
		t.Errorf("delete said %q", out)
	}
	if out := mustFjord(t, addr, "", "topic", "list"); regexp.MustCompile(`(?m)^(orders|logs) `).MatchString(out) {
		t.Errorf("topics left after delete:\n%s", out)
	}
	wantErr(t, addr, "", []string{"topic", "delete", "orders"}, "topic orders does not exist")
	if out := mustFjord(t, addr, "", "topic", "delete", "orders", "--if-exists"); !strings.Contains(out, "skipped") {
		t.Errorf("delete --if-exists said %q", out)
	}
}

func TestTopicCreateValidation(t *testing.T) {
	addr := startCLIBroker(t)
	wantErr(t, addr, "", []string{"topic", "create", "bad name"}, "ASCII letters")
	wantErr(t, addr, "", []string{"topic", "create", "t", "-p", "0"}, "--partitions 0")
	wantErr(t, addr, "", []string{"topic", "create", "t", "--config", "novalue"}, "want key=value")
	wantErr(t, addr, "", []string{"topic", "create", "t", "-r", "3"}, "INVALID_REPLICATION_FACTOR", "replication factor cannot exceed")
	wantErr(t, addr, "", []string{"topic", "list", "-o", "yaml"}, "--output")
	wantErr(t, addr, "", []string{"topic", "list", "--command-config", filepath.Join(t.TempDir(), "missing.properties")}, "--command-config")
}

// An unreachable broker is reported at once, with the address and advice.
func TestUnreachableBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"topic", "list"},
		{"group", "list"},
		{"produce", "t"},
		{"consume", "t"},
	} {
		wantErr(t, dead, "x\n", append(args, "--timeout", "5s"), "cannot reach "+dead, "`fjord dev` running")
	}
}

func TestBootstrapFromEnvironment(t *testing.T) {
	addr := startCLIBroker(t)
	t.Setenv("FJORD_BOOTSTRAP", addr)
	r := startFjord(t.Context(), nil, "topic", "create", "fromenv")
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("with FJORD_BOOTSTRAP=%s: %v", addr, err)
	}
	// Real Kafka propagates a new topic to its metadata cache a moment
	// after CreateTopics returns.
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if out := mustFjord(t, addr, "", "topic", "list"); !strings.Contains(out, "fromenv") {
			return fmt.Errorf("topic created through FJORD_BOOTSTRAP is missing:\n%s", out)
		}
		return nil
	})
}
