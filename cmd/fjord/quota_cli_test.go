package main

// `fjord quota` end to end: the real commands against an in-process
// broker, checked through the broker's image and the commands' JSON.

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/internal/testkit"
)

type quotaOut struct {
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

func TestQuotaCommands(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	mustFjord(t, b.Addr, "", "quota", "set", "--user", "alice", "--producer-byte-rate", "1048576", "--consumer-byte-rate", "2097152")
	mustFjord(t, b.Addr, "", "quota", "set", "--client-default", "--producer-byte-rate", "524288")
	mustFjord(t, b.Addr, "", "quota", "set", "--user-default", "--client-id", "reporting", "--request-percentage", "12.5")
	out := mustFjord(t, b.Addr, "", "quota", "set", "--user", "bob", "--producer-byte-rate", "10", "--dry-run")
	if !strings.Contains(out, "not stored") {
		t.Errorf("dry run output: %q", out)
	}

	img := b.Server.Image()
	alice := metadata.QuotaEntity{User: metadata.QuotaNamed, UserName: "alice"}
	if q := img.ClientQuotas.Quotas(alice); q["producer_byte_rate"] != 1048576 || q["consumer_byte_rate"] != 2097152 {
		t.Fatalf("alice in the image: %v", q)
	}
	if q := img.ClientQuotas.Quotas(metadata.QuotaEntity{User: metadata.QuotaNamed, UserName: "bob"}); q != nil {
		t.Fatalf("--dry-run stored bob's quota: %v", q)
	}

	all := decodeJSON[[]quotaOut](t, mustFjord(t, b.Addr, "", "quota", "describe", "-o", "json"))
	if len(all) != 3 {
		t.Fatalf("describe all: %+v", all)
	}
	text := mustFjord(t, b.Addr, "", "quota", "describe")
	for _, want := range []string{"client-id=<default>", "producer_byte_rate", "524288", "user=<default>, client-id=reporting", "12.5", "user=alice"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe text lacks %q:\n%s", want, text)
		}
	}
	only := decodeJSON[[]quotaOut](t, mustFjord(t, b.Addr, "", "quota", "describe", "--user", "alice", "-o", "json"))
	if len(only) != 1 || *only[0].Entity["user"] != "alice" || only[0].Quotas["consumer_byte_rate"] != 2097152 {
		t.Fatalf("describe --user alice: %+v", only)
	}
	anyUser := decodeJSON[[]quotaOut](t, mustFjord(t, b.Addr, "", "quota", "describe", "--any-user", "--strict=false", "-o", "json"))
	if len(anyUser) != 2 {
		t.Fatalf("describe --any-user --strict=false: %+v", anyUser)
	}
	if e := anyUser[0].Entity; e["user"] != nil || *e["client-id"] != "reporting" {
		t.Fatalf("default user entity in JSON: %+v", anyUser[0])
	}

	// Kafka's refusals, with advice.
	wantErr(t, b.Addr, "", []string{"quota", "set", "--user", "carol", "--producer-byte-rate", "0"}, "must be greater than 0")
	wantErr(t, b.Addr, "", []string{"quota", "set", "--producer-byte-rate", "5"}, "name the entity")
	wantErr(t, b.Addr, "", []string{"quota", "set", "--user", "a", "--user-default", "--producer-byte-rate", "5"}, "give one")
	wantErr(t, b.Addr, "", []string{"quota", "set", "--user", "a"}, "nothing to set")
	wantErr(t, b.Addr, "", []string{"quota", "delete", "--user", "nobody"}, "no quotas")
	wantErr(t, b.Addr, "", []string{"quota", "delete", "--user", "alice", "--key", "bogus"}, "not a quota key")

	mustFjord(t, b.Addr, "", "quota", "delete", "--user", "alice", "--key", "producer_byte_rate")
	if q := b.Server.Image().ClientQuotas.Quotas(alice); len(q) != 1 || q["consumer_byte_rate"] != 2097152 {
		t.Fatalf("after deleting one key: %v", q)
	}
	del := decodeJSON[map[string]any](t, mustFjord(t, b.Addr, "", "quota", "delete", "--user", "alice", "-o", "json"))
	if d, _ := del["deleted"].([]any); len(d) != 1 || d[0] != "consumer_byte_rate" {
		t.Fatalf("delete JSON: %v", del)
	}
	if q := b.Server.Image().ClientQuotas.Quotas(alice); q != nil {
		t.Fatalf("alice still has %v", q)
	}
}
