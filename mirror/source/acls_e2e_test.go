package source

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/filter"
)

// startAuthzCluster is a cluster whose broker enforces ACLs. Its clients
// (the test's, the workers' and the connectors') connect over PLAINTEXT
// as User:ANONYMOUS, the super user, so ACLs are stored and enforced but
// never stand in the way of the test.
func startAuthzCluster(t *testing.T, alias string) *cluster {
	t.Helper()
	b := testkit.StartBroker(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS",
	})
	return &cluster{alias: alias, addr: b.Addr, adm: testkit.Admin(t, b.Addr)}
}

// acl is a binding as the test writes and compares it.
func acl(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) aclBinding {
	return aclBinding{resourceType: rt, name: name, patternType: pt, principal: principal, host: host, operation: op, permission: perm}
}

func topicACL(name, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) aclBinding {
	return acl(kmsg.ACLResourceTypeTopic, name, kmsg.ACLResourcePatternTypeLiteral, principal, host, op, perm)
}

// createACLs creates ACLs on c with a client of its own (CreateAcls
// through kmsg, as kafka-acls.sh sends it).
func (c *cluster) createACLs(t *testing.T, bs ...aclBinding) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range bs {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = b.resourceType, b.name, b.patternType
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = b.principal, b.host, b.operation, b.permission
		req.Creations = append(req.Creations, cr)
	}
	resp, err := req.RequestWith(testkit.Context(t, 10*time.Second), testkit.Client(t, c.addr))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("create ACL %v on %s: %v", bs[i], c.alias, err)
		}
	}
}

// allACLs lists every ACL of the cluster, of any resource, sorted.
func (c *cluster) allACLs(t *testing.T) ([]string, error) {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(testkit.Context(t, 10*time.Second), testkit.Client(t, c.addr))
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range resp.Resources {
		for _, e := range r.ACLs {
			out = append(out, acl(r.ResourceType, r.ResourceName, r.ResourcePatternType, e.Principal, e.Host, e.Operation, e.PermissionType).String())
		}
	}
	slices.Sort(out)
	return out, nil
}

func sortedStrings(bs ...aclBinding) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.String()
	}
	slices.Sort(out)
	return out
}

// TestSyncTopicACLs: MirrorSourceConnector copies the source's literal
// topic ACLs of mirrored topics to their remote topics with Kafka's
// rules — ALLOW WRITE is left out, ALLOW ALL becomes ALLOW READ, DENY
// ACLs are copied as they are — and ignores prefixed ACLs, other
// resources and topics it does not mirror; it picks up new ACLs at the
// next interval. With sync.topic.acls.enabled=false nothing is copied.
func TestSyncTopicACLs(t *testing.T) {
	a, b, c := startAuthzCluster(t, "a"), startAuthzCluster(t, "b"), startAuthzCluster(t, "c")
	a.createTopic(t, "orders", 2, nil)
	a.createTopic(t, "other", 1, nil)
	const allow, deny = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	a.createACLs(t,
		topicACL("orders", "User:reader", "*", kmsg.ACLOperationRead, allow),
		topicACL("orders", "User:owner", "10.0.0.1", kmsg.ACLOperationAll, allow),
		topicACL("orders", "User:writer", "*", kmsg.ACLOperationWrite, allow),
		topicACL("orders", "User:banned", "*", kmsg.ACLOperationRead, deny),
		topicACL("orders", "User:banned", "*", kmsg.ACLOperationAll, deny),
		topicACL("orders", "User:intruder", "*", kmsg.ACLOperationWrite, deny),
		topicACL("other", "User:reader", "*", kmsg.ACLOperationRead, allow),
		acl(kmsg.ACLResourceTypeTopic, "ord", kmsg.ACLResourcePatternTypePrefixed, "User:reader", "*", kmsg.ACLOperationRead, allow),
		acl(kmsg.ACLResourceTypeGroup, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:reader", "*", kmsg.ACLOperationRead, allow),
	)
	a.produce(t, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("v")})

	wb := startWorker(t, b, "")
	wb.Create(t, mirrorConfig("acls", a, b, "topics", "orders", "sync.topic.acls.interval.seconds", "1"))
	wc := startWorker(t, c, "")
	wc.Create(t, mirrorConfig("no-acls", a, c, "topics", "orders",
		"sync.topic.acls.enabled", "false", "sync.topic.acls.interval.seconds", "1"))

	want := sortedStrings(
		topicACL("a.orders", "User:reader", "*", kmsg.ACLOperationRead, allow),
		topicACL("a.orders", "User:owner", "10.0.0.1", kmsg.ACLOperationRead, allow),
		topicACL("a.orders", "User:banned", "*", kmsg.ACLOperationRead, deny),
		topicACL("a.orders", "User:banned", "*", kmsg.ACLOperationAll, deny),
		topicACL("a.orders", "User:intruder", "*", kmsg.ACLOperationWrite, deny),
	)
	exactly := func(cl *cluster, want []string) func() error {
		return func() error {
			got, err := cl.allACLs(t)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("ACLs on %s:\n  %s\nwant:\n  %s", cl.alias, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			return nil
		}
	}
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, exactly(b, want))

	// A new source ACL arrives at a later sync.
	a.createACLs(t, topicACL("orders", "User:auditor", "*", kmsg.ACLOperationDescribe, allow))
	want = append(want, topicACL("a.orders", "User:auditor", "*", kmsg.ACLOperationDescribe, allow).String())
	slices.Sort(want)
	testkit.CheckFor(t, 10*time.Second, 200*time.Millisecond, exactly(b, want))

	// The flow with the sync off mirrored the records, and in all this
	// time (several intervals) copied no ACL.
	checkMirrored(t, a, c, "orders", "a.orders", 20*time.Second)
	if err := exactly(c, nil)(); err != nil {
		t.Error(err)
	}
	for _, w := range []interface{ Failed() error }{wb, wc} {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncTopicACLsWithoutAuthorizer: a source without an authorizer
// answers DescribeAcls with SECURITY_DISABLED. The sync then logs that
// once, as MM2 does, and is a no-op rather than a failure at every
// interval; replication goes on.
func TestSyncTopicACLsWithoutAuthorizer(t *testing.T) {
	a, b := startCluster(t, "a"), startAuthzCluster(t, "b")
	a.createTopic(t, "orders", 1, nil)
	props := mirrorConfig("acls", a, b, "topics", "orders", "sync.topic.acls.interval.seconds", "1")

	var logs bytes.Buffer
	s, err := parseSettings(props)
	if err != nil {
		t.Fatal(err)
	}
	topics, err := filter.NewTopicFilter(props)
	if err != nil {
		t.Fatal(err)
	}
	conn := &Connector{s: s, topics: topics, log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		src: &admin{alias: "a", cl: testkit.Client(t, a.addr)}, dst: &admin{alias: "b", cl: testkit.Client(t, b.addr)}}
	for i := range 3 {
		if err := conn.syncTopicACLs(context.Background()); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	if n := strings.Count(logs.String(), "No ACL authorizer is configured on the source Kafka cluster"); n != 1 {
		t.Errorf("the missing authorizer was logged %d times, want once:\n%s", n, logs.String())
	}
	if got, err := b.allACLs(t); err != nil || len(got) != 0 {
		t.Errorf("ACLs on b: %v, %v", got, err)
	}

	// The connector on a worker keeps replicating with the sync on.
	w := startWorker(t, b, "")
	w.Create(t, props)
	a.produce(t, &kgo.Record{Topic: "orders", Value: []byte("v")})
	checkMirrored(t, a, b, "orders", "a.orders", 20*time.Second)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
}
