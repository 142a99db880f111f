package broker_test

// The ACL APIs through kafka-python's KafkaAdminClient (a client nobody
// here wrote, which speaks CreateAcls/DescribeAcls/DeleteAcls v1).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/internal/testkit"
)

const pyACLs = `
import json, sys
from kafka.admin import (KafkaAdminClient, ACL, ACLFilter, ResourcePattern, ResourcePatternFilter,
    ACLOperation, ACLPermissionType, ResourceType, ACLResourcePatternType)

admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="py-acls")
out = {}
res = admin.create_acls([
    ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
        ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL)),
    ACL("User:etl", "10.1.2.3", ACLOperation.WRITE, ACLPermissionType.ALLOW,
        ResourcePattern(ResourceType.TOPIC, "pay", ACLResourcePatternType.PREFIXED)),
    ACL("User:bob", "*", ACLOperation.ALL, ACLPermissionType.DENY,
        ResourcePattern(ResourceType.GROUP, "g", ACLResourcePatternType.LITERAL)),
])
out["created"] = len(res["succeeded"])
out["create_failed"] = [str(f[1]) for f in res["failed"]]

acls, err = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
    ResourcePatternFilter(ResourceType.TOPIC, "payments", ACLResourcePatternType.MATCH)))
out["match_payments"] = [[a.principal, a.host, a.operation.name, a.permission_type.name,
    a.resource_pattern.resource_name, a.resource_pattern.pattern_type.name] for a in acls]
out["describe_error"] = str(err)

deleted = admin.delete_acls([ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY,
    ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))])
out["deleted"] = [[a.principal, a.resource_pattern.resource_name] for f, dels, e in deleted for a, _ in dels]
print(json.dumps(out))
admin.close()
`

func TestACLsWithKafkaPython(t *testing.T) {
	b := testkit.StartBroker(t, withAuthorizer)
	path := filepath.Join(t.TempDir(), "acls.py")
	if err := os.WriteFile(path, []byte(pyACLs), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", path, b.Addr)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafka-python: %v (is python3-kafka installed? run `make deps`)", err)
	}
	var out struct {
		Created       int        `json:"created"`
		CreateFailed  []string   `json:"create_failed"`
		MatchPayments [][]string `json:"match_payments"`
		DescribeError string     `json:"describe_error"`
		Deleted       [][]string `json:"deleted"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if out.Created != 3 || len(out.CreateFailed) != 0 {
		t.Fatalf("create: %+v", out)
	}
	if len(out.MatchPayments) != 1 || out.MatchPayments[0][0] != "User:etl" || out.MatchPayments[0][1] != "10.1.2.3" ||
		out.MatchPayments[0][2] != "WRITE" || out.MatchPayments[0][4] != "pay" || out.MatchPayments[0][5] != "PREFIXED" {
		t.Fatalf("describe MATCH payments: %+v", out)
	}
	if len(out.Deleted) != 1 || out.Deleted[0][0] != "User:bob" || out.Deleted[0][1] != "g" {
		t.Fatalf("delete bob: %+v", out)
	}
	img := b.Server.Image()
	if len(img.ACLs) != 2 || !img.HasACL(auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: "pay", PatternType: auth.PatternPrefixed,
		Principal: "User:etl", Host: "10.1.2.3", Operation: auth.OpWrite, Permission: auth.PermissionAllow}) {
		t.Fatalf("image: %+v", img.ACLList())
	}
}
