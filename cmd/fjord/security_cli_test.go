package main

// `fjord user` and `fjord acl` end to end: the real commands against an
// in-process broker with the standard authorizer on, checked through the
// broker's image and through the commands' own JSON output.

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/internal/testkit"
)

func startSecuredBroker(t *testing.T) *testkit.Broker {
	t.Helper()
	// The CLI connects over PLAINTEXT, as User:ANONYMOUS: managing users
	// and ACLs needs ALTER on the cluster, so that principal is the super
	// user here (as an operator's admin principal would be).
	return testkit.StartBroker(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS",
	})
}

type userOut struct {
	User        string `json:"user"`
	Credentials []struct {
		Mechanism  string `json:"mechanism"`
		Iterations int32  `json:"iterations"`
	} `json:"credentials"`
}

func TestUserCommands(t *testing.T) {
	b := startSecuredBroker(t)
	mustFjord(t, b.Addr, "", "user", "set", "alice", "--mechanism", "SCRAM-SHA-256", "--password", "alice-secret", "--iterations", "8192")
	mustFjord(t, b.Addr, "bob-secret\n", "user", "set", "alice", "--mechanism", "scram-sha-512", "--password-stdin")
	mustFjord(t, b.Addr, "", "user", "set", "bob", "--password", "b")

	users := decodeJSON[[]userOut](t, mustFjord(t, b.Addr, "", "user", "describe", "-o", "json"))
	if len(users) != 2 || users[0].User != "alice" || len(users[0].Credentials) != 2 ||
		users[0].Credentials[0].Mechanism != "SCRAM-SHA-256" || users[0].Credentials[0].Iterations != 8192 ||
		users[0].Credentials[1].Mechanism != "SCRAM-SHA-512" || users[0].Credentials[1].Iterations != 4096 {
		t.Fatalf("describe: %+v", users)
	}
	if _, ok := b.Server.Image().ScramCredential("alice", auth.ScramSHA512); !ok {
		t.Fatal("alice's SHA-512 credential is not in the broker's image")
	}
	text := mustFjord(t, b.Addr, "", "user", "describe", "bob")
	if !strings.Contains(text, "bob") || !strings.Contains(text, "SCRAM-SHA-256") || !strings.Contains(text, "4096") {
		t.Fatalf("describe bob:\n%s", text)
	}
	if strings.Contains(text, "alice") {
		t.Fatalf("describe bob shows alice:\n%s", text)
	}

	// Kafka's refusals, with advice.
	wantErr(t, b.Addr, "", []string{"user", "set", "carol", "--password", "x", "--iterations", "100"}, "carol", "iterations")
	wantErr(t, b.Addr, "", []string{"user", "describe", "nobody"}, "nobody", "no such credential")
	wantErr(t, b.Addr, "", []string{"user", "delete", "bob", "--mechanism", "SCRAM-SHA-512"}, "bob", "no such credential")
	wantErr(t, b.Addr, "", []string{"user", "set", "carol", "--mechanism", "MD5", "--password", "x"}, "SCRAM-SHA-256 or SCRAM-SHA-512")

	mustFjord(t, b.Addr, "", "user", "delete", "alice", "--mechanism", "SCRAM-SHA-512")
	mustFjord(t, b.Addr, "", "user", "delete", "bob") // every mechanism bob has
	users = decodeJSON[[]userOut](t, mustFjord(t, b.Addr, "", "user", "describe", "-o", "json"))
	if len(users) != 1 || users[0].User != "alice" || len(users[0].Credentials) != 1 {
		t.Fatalf("after deletes: %+v", users)
	}
}

type aclOut struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
}

func TestACLCommands(t *testing.T) {
	b := startSecuredBroker(t)
	mustFjord(t, b.Addr, "", "acl", "add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe", "--topic", "orders")
	mustFjord(t, b.Addr, "", "acl", "add", "--allow-principal", "User:etl", "--operation", "Write", "--topic", "pay", "--resource-pattern-type", "prefixed")
	mustFjord(t, b.Addr, "", "acl", "add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9", "--topic", "*")
	mustFjord(t, b.Addr, "", "acl", "add", "--allow-principal", "User:alice", "--operation", "Read", "--group", "billing")
	mustFjord(t, b.Addr, "", "acl", "add", "--allow-principal", "User:ops", "--operation", "Alter", "--cluster")
	if n := len(b.Server.Image().ACLs); n != 6 {
		t.Fatalf("image holds %d ACLs, want 6", n)
	}

	all := decodeJSON[[]aclOut](t, mustFjord(t, b.Addr, "", "acl", "list", "-o", "json"))
	if len(all) != 6 {
		t.Fatalf("list: %d ACLs, want 6: %+v", len(all), all)
	}
	// MATCH: what applies to topic payments: the prefixed pay and the
	// wildcard deny.
	match := decodeJSON[[]aclOut](t, mustFjord(t, b.Addr, "", "acl", "list", "--topic", "payments", "--resource-pattern-type", "match", "-o", "json"))
	if len(match) != 2 {
		t.Fatalf("list match payments: %+v", match)
	}
	for _, a := range match {
		switch {
		case a.Principal == "User:etl" && a.ResourceName == "pay" && a.PatternType == "PREFIXED" && a.Operation == "WRITE" && a.Permission == "ALLOW" && a.Host == "*":
		case a.Principal == "User:mallory" && a.ResourceName == "*" && a.Operation == "ALL" && a.Permission == "DENY" && a.Host == "10.0.0.9":
		default:
			t.Errorf("unexpected ACL for payments: %+v", a)
		}
	}
	alice := decodeJSON[[]aclOut](t, mustFjord(t, b.Addr, "", "acl", "list", "--principal", "User:alice", "-o", "json"))
	if len(alice) != 3 {
		t.Fatalf("list alice: %+v", alice)
	}
	text := mustFjord(t, b.Addr, "", "acl", "list", "--cluster")
	if !strings.Contains(text, "kafka-cluster") || !strings.Contains(text, "User:ops") || strings.Contains(text, "alice") {
		t.Fatalf("list --cluster:\n%s", text)
	}

	// remove without --force only shows.
	out := mustFjord(t, b.Addr, "", "acl", "remove", "--topic", "orders", "--principal", "User:alice")
	if !strings.Contains(out, "--force") || len(b.Server.Image().ACLs) != 6 {
		t.Fatalf("dry-run remove:\n%s", out)
	}
	out = mustFjord(t, b.Addr, "", "acl", "remove", "--topic", "orders", "--principal", "User:alice", "--force")
	if !strings.Contains(out, "Removed 2 ACL(s)") {
		t.Fatalf("remove:\n%s", out)
	}
	if n := len(b.Server.Image().ACLs); n != 4 {
		t.Fatalf("image holds %d ACLs after remove, want 4", n)
	}

	// Mistakes are refused before anything is sent, or with Kafka's answer.
	wantErr(t, b.Addr, "", []string{"acl", "add", "--allow-principal", "alice", "--topic", "t"}, "Type:Name")
	wantErr(t, b.Addr, "", []string{"acl", "add", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"}, "--operation")
	wantErr(t, b.Addr, "", []string{"acl", "add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"}, "literal or prefixed")
	wantErr(t, b.Addr, "", []string{"acl", "add", "--allow-principal", "User:a"}, "name a resource")
	wantErr(t, b.Addr, "", []string{"acl", "remove"}, "name what to remove")
	wantErr(t, b.Addr, "", []string{"acl", "add", "--deny-principal", "User:a", "--allow-host", "1.2.3.4", "--topic", "t"}, "--allow-host needs --allow-principal")
}

func TestACLCommandsWithoutAuthorizer(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	wantErr(t, b.Addr, "", []string{"acl", "list"}, "authorizer.class.name")
	wantErr(t, b.Addr, "", []string{"acl", "add", "--allow-principal", "User:a", "--topic", "t"}, "authorizer.class.name")
}
