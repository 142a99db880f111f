package authorizer

import (
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
)

// imageWith returns an image holding acls, built through the metadata
// log's records as a broker's is.
func imageWith(t *testing.T, acls ...auth.ACL) *metadata.Image {
	t.Helper()
	var recs []metadata.Record
	for _, a := range acls {
		recs = append(recs, metadata.Record{ACL: metadata.ACLRecord(metadata.NewUUID(), a)})
	}
	img, err := metadata.Empty().Apply(0, recs)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func acl(rt auth.ResourceType, name string, pt auth.PatternType, principal, host string, op auth.Operation, perm auth.Permission) auth.ACL {
	return auth.ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: host, Operation: op, Permission: perm}
}

func topicACL(name string, pt auth.PatternType, principal string, op auth.Operation, perm auth.Permission) auth.ACL {
	return acl(auth.ResourceTopic, name, pt, principal, "*", op, perm)
}

const (
	lit    = auth.PatternLiteral
	prefix = auth.PatternPrefixed
	allow  = auth.PermissionAllow
	deny   = auth.PermissionDeny
)

var (
	alice = auth.User("alice")
	bob   = auth.User("bob")
)

// The cases of Kafka's StandardAuthorizer (StandardAuthorizerTest,
// AclAuthorizerTest and the documentation's examples).
func TestAuthorizeTable(t *testing.T) {
	type check struct {
		p    auth.Principal
		host string
		op   auth.Operation
		rt   auth.ResourceType
		name string
		want bool
	}
	cases := []struct {
		name         string
		acls         []auth.ACL
		supers       []string
		allowIfNoACL bool
		checks       []check
	}{
		{
			name: "no ACLs: denied by default",
			checks: []check{
				{alice, "1.2.3.4", auth.OpRead, auth.ResourceTopic, "t", false},
			},
		},
		{
			name:         "no ACLs: allow.everyone.if.no.acl.found",
			allowIfNoACL: true,
			checks: []check{
				{alice, "1.2.3.4", auth.OpRead, auth.ResourceTopic, "t", true},
				{alice, "1.2.3.4", auth.OpAlter, auth.ResourceCluster, "kafka-cluster", true},
			},
		},
		{
			name:         "allow.everyone.if.no.acl.found does not apply once the resource has ACLs, even for others",
			allowIfNoACL: true,
			acls:         []auth.ACL{topicACL("t", lit, "User:alice", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "t", true},
				{bob, "h", auth.OpRead, auth.ResourceTopic, "t", false},
				{bob, "h", auth.OpRead, auth.ResourceTopic, "other", true}, // no ACLs on "other"
			},
		},
		{
			name:   "super users are allowed everything, even against DENY",
			supers: []string{"User:admin"},
			acls:   []auth.ACL{topicACL("t", lit, "User:*", auth.OpAll, deny)},
			checks: []check{
				{auth.User("admin"), "h", auth.OpWrite, auth.ResourceTopic, "t", true},
				{auth.User("admin"), "h", auth.OpAlter, auth.ResourceCluster, "kafka-cluster", true},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "t", false},
			},
		},
		{
			name: "literal ACL matches only its name",
			acls: []auth.ACL{topicACL("orders", lit, "User:alice", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "orders", true},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "orders2", false},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "order", false},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "orders", false},
				{alice, "h", auth.OpRead, auth.ResourceGroup, "orders", false},
				{bob, "h", auth.OpRead, auth.ResourceTopic, "orders", false},
			},
		},
		{
			name: "wildcard resource matches every name",
			acls: []auth.ACL{topicACL("*", lit, "User:alice", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "anything", true},
				{alice, "h", auth.OpRead, auth.ResourceGroup, "anything", false},
			},
		},
		{
			name: "prefixed ACL matches names starting with the prefix",
			acls: []auth.ACL{topicACL("pay", prefix, "User:alice", auth.OpWrite, allow)},
			checks: []check{
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "pay", true},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "payments", true},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "pa", false},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "xpay", false},
			},
		},
		{
			name: "a prefixed \"*\" is a plain prefix, not a wildcard",
			acls: []auth.ACL{topicACL("*", prefix, "User:alice", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "orders", false},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "*x", true},
			},
		},
		{
			name: "wildcard principal User:* matches every user",
			acls: []auth.ACL{topicACL("t", lit, "User:*", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "t", true},
				{auth.Anonymous, "h", auth.OpRead, auth.ResourceTopic, "t", true},
			},
		},
		{
			name: "principal type must match: User:alice is not Group:alice",
			acls: []auth.ACL{topicACL("t", lit, "Group:alice", auth.OpRead, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "t", false},
			},
		},
		{
			name: "host must match, or be *",
			acls: []auth.ACL{acl(auth.ResourceTopic, "t", lit, "User:alice", "10.0.0.1", auth.OpRead, allow)},
			checks: []check{
				{alice, "10.0.0.1", auth.OpRead, auth.ResourceTopic, "t", true},
				{alice, "10.0.0.2", auth.OpRead, auth.ResourceTopic, "t", false},
			},
		},
		{
			name: "DENY beats ALLOW on the same resource",
			acls: []auth.ACL{
				topicACL("t", lit, "User:alice", auth.OpRead, allow),
				topicACL("t", lit, "User:alice", auth.OpRead, deny),
			},
			checks: []check{{alice, "h", auth.OpRead, auth.ResourceTopic, "t", false}},
		},
		{
			name: "DENY on a prefix beats a literal ALLOW",
			acls: []auth.ACL{
				topicACL("payments", lit, "User:alice", auth.OpWrite, allow),
				topicACL("pay", prefix, "User:alice", auth.OpWrite, deny),
			},
			checks: []check{
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "payments", false},
			},
		},
		{
			name: "DENY for User:* from one host beats ALLOW for alice",
			acls: []auth.ACL{
				topicACL("t", lit, "User:alice", auth.OpRead, allow),
				acl(auth.ResourceTopic, "t", lit, "User:*", "10.0.0.9", auth.OpRead, deny),
			},
			checks: []check{
				{alice, "10.0.0.9", auth.OpRead, auth.ResourceTopic, "t", false},
				{alice, "10.0.0.1", auth.OpRead, auth.ResourceTopic, "t", true},
			},
		},
		{
			name: "DENY ALL denies every operation; DENY of one operation only that one",
			acls: []auth.ACL{
				topicACL("*", lit, "User:alice", auth.OpAll, allow),
				topicACL("secret", lit, "User:alice", auth.OpAll, deny),
				topicACL("ro", lit, "User:alice", auth.OpWrite, deny),
			},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "secret", false},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "secret", false},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "ro", false},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "ro", true},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "ro", true},
			},
		},
		{
			name: "DENY of DESCRIBE is not implied by DENY of READ",
			acls: []auth.ACL{
				topicACL("t", lit, "User:alice", auth.OpAll, allow),
				topicACL("t", lit, "User:alice", auth.OpRead, deny),
			},
			checks: []check{
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "t", true},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "t", false},
			},
		},
		{
			name: "ALLOW ALL allows every operation",
			acls: []auth.ACL{topicACL("t", lit, "User:alice", auth.OpAll, allow)},
			checks: []check{
				{alice, "h", auth.OpRead, auth.ResourceTopic, "t", true},
				{alice, "h", auth.OpDelete, auth.ResourceTopic, "t", true},
				{alice, "h", auth.OpAlterConfigs, auth.ResourceTopic, "t", true},
			},
		},
		{
			name: "DESCRIBE implied by READ, WRITE, DELETE, ALTER; not by CREATE",
			acls: []auth.ACL{
				topicACL("r", lit, "User:alice", auth.OpRead, allow),
				topicACL("w", lit, "User:alice", auth.OpWrite, allow),
				topicACL("d", lit, "User:alice", auth.OpDelete, allow),
				topicACL("a", lit, "User:alice", auth.OpAlter, allow),
				topicACL("c", lit, "User:alice", auth.OpCreate, allow),
				topicACL("ac", lit, "User:alice", auth.OpAlterConfigs, allow),
			},
			checks: []check{
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "r", true},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "w", true},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "d", true},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "a", true},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "c", false},
				{alice, "h", auth.OpDescribe, auth.ResourceTopic, "ac", false},
				{alice, "h", auth.OpDescribeConfigs, auth.ResourceTopic, "ac", true},
				{alice, "h", auth.OpDescribeConfigs, auth.ResourceTopic, "a", false},
				{alice, "h", auth.OpRead, auth.ResourceTopic, "w", false},
			},
		},
		{
			name: "CLUSTER, GROUP and TRANSACTIONAL_ID resources",
			acls: []auth.ACL{
				acl(auth.ResourceCluster, "kafka-cluster", lit, "User:ops", "*", auth.OpAlter, allow),
				acl(auth.ResourceGroup, "g-", prefix, "User:alice", "*", auth.OpRead, allow),
				acl(auth.ResourceTransactionalID, "tx", lit, "User:alice", "*", auth.OpWrite, allow),
			},
			checks: []check{
				{auth.User("ops"), "h", auth.OpAlter, auth.ResourceCluster, "kafka-cluster", true},
				{auth.User("ops"), "h", auth.OpDescribe, auth.ResourceCluster, "kafka-cluster", true},
				{auth.User("ops"), "h", auth.OpClusterAction, auth.ResourceCluster, "kafka-cluster", false},
				{alice, "h", auth.OpRead, auth.ResourceGroup, "g-1", true},
				{alice, "h", auth.OpRead, auth.ResourceGroup, "h-1", false},
				{alice, "h", auth.OpWrite, auth.ResourceTransactionalID, "tx", true},
				{alice, "h", auth.OpWrite, auth.ResourceTopic, "tx", false},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := imageWith(t, c.acls...)
			a := NewFromImage(func() *metadata.Image { return img }, c.supers, c.allowIfNoACL)
			for _, ch := range c.checks {
				got := a.Authorize(ch.p, ch.host, []auth.Action{{Operation: ch.op, ResourceType: ch.rt, ResourceName: ch.name}})
				if got[0] != ch.want {
					t.Errorf("%s from %s: %s on %s %q = %v, want %v", ch.p, ch.host, ch.op, ch.rt, ch.name, got[0], ch.want)
				}
			}
		})
	}
}

// The authorizer follows the image: an ACL added or removed through the
// metadata log is in force at once.
func TestAuthorizerFollowsImage(t *testing.T) {
	img := metadata.Empty()
	a := NewFromImage(func() *metadata.Image { return img }, nil, false)
	read := []auth.Action{{Operation: auth.OpRead, ResourceType: auth.ResourceTopic, ResourceName: "t"}, {Operation: auth.OpWrite, ResourceType: auth.ResourceTopic, ResourceName: "t"}}
	if got := a.Authorize(alice, "h", read); got[0] || got[1] {
		t.Fatalf("no ACLs: %v", got)
	}
	id := metadata.NewUUID()
	var err error
	img, err = img.Apply(1, []metadata.Record{{ACL: metadata.ACLRecord(id, topicACL("t", lit, "User:alice", auth.OpRead, allow))}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Authorize(alice, "h", read); !got[0] || got[1] {
		t.Fatalf("after ALLOW READ: %v, want [true false]", got)
	}
	img, err = img.Apply(2, []metadata.Record{{RemoveACL: &metadata.RemoveAccessControlEntryRecord{ID: id}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Authorize(alice, "h", read); got[0] {
		t.Fatalf("after removal: %v", got)
	}
}

func TestFromProperties(t *testing.T) {
	img := func() *metadata.Image { return metadata.Empty() }
	for _, c := range []struct {
		props   map[string]string
		on      bool
		wantErr bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{KeyClassName: "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}, true, false},
		{map[string]string{KeyClassName: "kafka.security.authorizer.AclAuthorizer"}, true, false},
		{map[string]string{KeyClassName: "com.example.Custom"}, false, true},
		{map[string]string{KeyClassName: "kafka.security.authorizer.AclAuthorizer", KeySuperUsers: "alice"}, false, true},
		{map[string]string{KeyClassName: "kafka.security.authorizer.AclAuthorizer", KeyAllowIfNoACL: "maybe"}, false, true},
	} {
		a, err := FromProperties(c.props, img)
		if (err != nil) != c.wantErr || (a != nil) != c.on {
			t.Errorf("%v: authorizer %v, err %v", c.props, a, err)
		}
	}
	a, err := FromProperties(map[string]string{KeyClassName: "kafka.security.authorizer.AclAuthorizer",
		KeySuperUsers: " User:admin ; User:ops", KeyAllowIfNoACL: "true"}, img)
	if err != nil {
		t.Fatal(err)
	}
	act := []auth.Action{{Operation: auth.OpAlter, ResourceType: auth.ResourceCluster, ResourceName: "kafka-cluster"}}
	for _, p := range []auth.Principal{auth.User("admin"), auth.User("ops"), alice} {
		if got := a.Authorize(p, "h", act); !got[0] {
			t.Errorf("%s: denied (super user, or no ACLs with allow.everyone.if.no.acl.found)", p)
		}
	}
}
