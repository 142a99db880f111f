package authorizer

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
)

// linearDecide is the authorizer's rule written as a scan over every ACL:
// the reference the indexed lookup must agree with.
func linearDecide(acls []auth.ACL, allowIfNoACL bool, p auth.Principal, host string, a auth.Action) bool {
	found, allowed := false, false
	for _, acl := range acls {
		if acl.ResourceType != a.ResourceType {
			continue
		}
		match := false
		switch acl.PatternType {
		case auth.PatternLiteral:
			match = acl.ResourceName == a.ResourceName || acl.ResourceName == auth.WildcardResource
		case auth.PatternPrefixed:
			match = strings.HasPrefix(a.ResourceName, acl.ResourceName)
		}
		if !match {
			continue
		}
		found = true
		if acl.Principal != p.String() && acl.Principal != wildcardPrincipal || acl.Host != "*" && acl.Host != host {
			continue
		}
		if acl.Permission == auth.PermissionDeny && (acl.Operation == auth.OpAll || acl.Operation == a.Operation) {
			return false
		}
		if acl.Permission == auth.PermissionAllow && allows(acl.Operation, a.Operation) {
			allowed = true
		}
	}
	if !found {
		return allowIfNoACL
	}
	return allowed
}

// The index by name and prefix decides exactly as a scan of every ACL,
// over random ACL sets mixing literal names, the wildcard, prefixes of
// many lengths, DENY and other resource types.
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"", "o", "or", "orders", "orders-eu", "orders-eu-1", "payments", "pay", "*", "x"}
	ops := []auth.Operation{auth.OpRead, auth.OpWrite, auth.OpDescribe, auth.OpAll, auth.OpAlter}
	principals := []string{"User:alice", "User:bob", wildcardPrincipal}
	for round := range 200 {
		var acls []auth.ACL
		for range rng.IntN(30) {
			pt := auth.PatternLiteral
			if rng.IntN(2) == 0 {
				pt = auth.PatternPrefixed
			}
			rt := auth.ResourceTopic
			if rng.IntN(5) == 0 {
				rt = auth.ResourceGroup
			}
			perm := auth.PermissionAllow
			if rng.IntN(4) == 0 {
				perm = auth.PermissionDeny
			}
			host := "*"
			if rng.IntN(4) == 0 {
				host = "10.0.0.1"
			}
			name := names[rng.IntN(len(names))]
			if name == "" && pt == auth.PatternLiteral {
				name = "orders"
			}
			acls = append(acls, acl(rt, name, pt, principals[rng.IntN(len(principals))], host, ops[rng.IntN(len(ops))], perm))
		}
		allowIfNoACL := rng.IntN(2) == 0
		img := imageWith(t, dedup(acls)...)
		az := NewFromImage(func() *metadata.Image { return img }, nil, allowIfNoACL)
		for _, p := range []auth.Principal{alice, bob} {
			for _, host := range []string{"10.0.0.1", "10.0.0.2"} {
				for _, name := range names {
					for _, op := range ops {
						act := auth.Action{Operation: op, ResourceType: auth.ResourceTopic, ResourceName: name}
						got := az.Authorize(p, host, []auth.Action{act})[0]
						if want := linearDecide(dedup(acls), allowIfNoACL, p, host, act); got != want {
							t.Fatalf("round %d: %v %s %v on %q = %v, scan says %v; ACLs %+v", round, p, host, op, name, got, want, acls)
						}
					}
				}
			}
		}
	}
}

// dedup drops repeated ACLs (the metadata log stores each once).
func dedup(acls []auth.ACL) []auth.ACL {
	seen := map[auth.ACL]bool{}
	var out []auth.ACL
	for _, a := range acls {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
