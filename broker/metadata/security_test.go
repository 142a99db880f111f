package metadata

import (
	"reflect"
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
)

func str(s string) *string { return &s }

func TestSecurityRecordsApplyAndSnapshot(t *testing.T) {
	a1 := auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: "orders", PatternType: auth.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: auth.OpRead, Permission: auth.PermissionAllow}
	a2 := a1
	a2.ResourceName, a2.PatternType = "pay", auth.PatternPrefixed
	id1, id2 := NewUUID(), NewUUID()
	img, err := Empty().Apply(0, []Record{
		{ACL: ACLRecord(id1, a1)},
		{ACL: ACLRecord(id2, a2)},
		{ScramCredential: &UserScramCredentialRecord{Name: "alice", Mechanism: 1, Salt: []byte("s"), StoredKey: []byte("k1"), ServerKey: []byte("k2"), Iterations: 4096}},
		{ScramCredential: &UserScramCredentialRecord{Name: "bob", Mechanism: 2, Salt: []byte("t"), StoredKey: []byte("k3"), ServerKey: []byte("k4"), Iterations: 8192}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := img.ScramCredential("alice", auth.ScramSHA256); !ok || string(c.StoredKey) != "k1" || c.Iterations != 4096 {
		t.Fatalf("alice: %+v %v", c, ok)
	}
	if _, ok := img.ScramCredential("alice", auth.ScramSHA512); ok {
		t.Fatal("alice has no SHA-512 credential")
	}
	// Replaying the snapshot records rebuilds the same credentials and
	// ACLs (ids included): what compaction and raft snapshots rely on.
	re, err := Empty().Apply(0, img.SecurityRecords())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(re.Scram, img.Scram) || !reflect.DeepEqual(re.ACLs, img.ACLs) {
		t.Fatalf("snapshot does not rebuild the image:\n%+v\n%+v", re.ACLs, img.ACLs)
	}

	// Removals, and records that do not apply.
	after, err := img.Apply(4, []Record{
		{RemoveACL: &RemoveAccessControlEntryRecord{ID: id1}},
		{RemoveScramCredential: &RemoveUserScramCredentialRecord{Name: "bob", Mechanism: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.ACLs) != 1 || after.HasACL(a1) || !after.HasACL(a2) || len(after.ScramUsers()) != 1 {
		t.Fatalf("after removals: %+v %v", after.ACLList(), after.ScramUsers())
	}
	if len(img.ACLs) != 2 || len(img.ScramUsers()) != 2 {
		t.Fatal("Apply modified the old image")
	}
	for _, bad := range []Record{
		{RemoveACL: &RemoveAccessControlEntryRecord{ID: id1}},
		{ACL: ACLRecord(id2, a1)},
		{RemoveScramCredential: &RemoveUserScramCredentialRecord{Name: "bob", Mechanism: 2}},
	} {
		if _, err := after.Apply(6, []Record{bad}); err == nil {
			t.Errorf("%+v applied", bad)
		}
	}
}

// Kafka's AclBindingFilter.matches, MATCH and ANY included.
func TestACLFilterMatches(t *testing.T) {
	lit := auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: "orders", PatternType: auth.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: auth.OpRead, Permission: auth.PermissionAllow}
	wild := lit
	wild.ResourceName = "*"
	pre := lit
	pre.ResourceName, pre.PatternType = "ord", auth.PatternPrefixed
	any := ACLFilter{ResourceType: auth.ResourceAny, PatternType: auth.PatternAny, Operation: auth.OpAny, Permission: auth.PermissionAny}
	with := func(f func(*ACLFilter)) ACLFilter { c := any; f(&c); return c }
	cases := []struct {
		name string
		f    ACLFilter
		acl  auth.ACL
		want bool
	}{
		{"any matches all", any, pre, true},
		{"type", with(func(f *ACLFilter) { f.ResourceType = auth.ResourceGroup }), lit, false},
		{"literal filter, exact name", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternLiteral, str("orders") }), lit, true},
		{"literal filter does not match the wildcard ACL", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternLiteral, str("orders") }), wild, false},
		{"literal filter does not match prefixed", with(func(f *ACLFilter) { f.PatternType = auth.PatternLiteral }), pre, false},
		{"any pattern needs the exact name", with(func(f *ACLFilter) { f.ResourceName = str("orders") }), pre, false},
		{"match: literal same name", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternMatch, str("orders") }), lit, true},
		{"match: wildcard", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternMatch, str("orders") }), wild, true},
		{"match: prefix of the name", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternMatch, str("orders") }), pre, true},
		{"match: prefix longer than the name", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternMatch, str("or") }), pre, false},
		{"match: other literal", with(func(f *ACLFilter) { f.PatternType, f.ResourceName = auth.PatternMatch, str("order") }), lit, false},
		{"principal", with(func(f *ACLFilter) { f.Principal = str("User:bob") }), lit, false},
		{"host", with(func(f *ACLFilter) { f.Host = str("*") }), lit, true},
		{"operation", with(func(f *ACLFilter) { f.Operation = auth.OpWrite }), lit, false},
		{"permission", with(func(f *ACLFilter) { f.Permission = auth.PermissionDeny }), lit, false},
	}
	for _, c := range cases {
		if got := c.f.Matches(c.acl); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !with(func(f *ACLFilter) { f.PatternType = auth.PatternUnknown }).PatternUnknown() ||
		!with(func(f *ACLFilter) { f.Operation = auth.OpUnknown }).EntryUnknown() || any.PatternUnknown() || any.EntryUnknown() {
		t.Error("unknown detection")
	}
}
