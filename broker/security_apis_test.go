package broker_test

// The ACL and SCRAM credential APIs through real clients (kadm, raw kmsg
// for inputs kadm refuses itself), on one broker and on a three-node
// cluster, with Kafka's answers for bad inputs.

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/internal/testkit"
)

// withAuthorizer: these tests' admin connects over PLAINTEXT, as
// User:ANONYMOUS, which must be a super user now that ACLs are enforced.
var withAuthorizer = map[string]string{
	"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"super.users":           "User:ANONYMOUS",
}

func codeOf(err error) int16 {
	if ke, ok := err.(*kerr.Error); ok {
		return ke.Code
	}
	return -1
}

func TestACLsCreateDescribeDelete(t *testing.T) {
	b := testkit.StartBroker(t, withAuthorizer)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)

	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead, kadm.OpWrite))
	if err != nil {
		t.Fatal(err)
	}
	prefixed := kadm.NewACLs().Deny("User:bob").AllowHosts().DenyHosts("10.0.0.1").Topics("pay").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAll)
	created2, err := adm.CreateACLs(ctx, prefixed)
	if err != nil {
		t.Fatal(err)
	}
	groupACL := kadm.NewACLs().Allow("User:*").Groups("g1").Operations(kadm.OpRead)
	created3, err := adm.CreateACLs(ctx, groupACL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(append(created, created2...), created3...) {
		if r.Err != nil {
			t.Fatalf("create %s %s: %v %s", r.Principal, r.Name, r.Err, r.ErrMessage)
		}
	}
	// Creating the same ACL again succeeds and stores nothing new.
	if again, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead)); err != nil || again[0].Err != nil {
		t.Fatalf("re-create: %v %v", err, again)
	}
	if n := len(b.Server.Image().ACLs); n != 4 {
		t.Fatalf("image holds %d ACLs, want 4", n)
	}

	// MATCH: every ACL that applies to topic "payments" (the prefixed
	// "pay"), not the literal "orders".
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("payments").ResourcePatternType(kadm.ACLPatternMatch).
		Operations(kadm.OpAny).AllowHosts().DenyHosts().Allow().Deny())
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || described[0].Err != nil || len(described[0].Described) != 1 {
		t.Fatalf("describe MATCH payments: %+v", described)
	}
	d := described[0].Described[0]
	if d.Principal != "User:bob" || d.Host != "10.0.0.1" || d.Name != "pay" || d.Pattern != kadm.ACLPatternPrefixed ||
		d.Operation != kadm.OpAll || d.Permission != kmsg.ACLPermissionTypeDeny {
		t.Fatalf("described %+v", d)
	}

	// A raw describe of everything, grouped by resource as Kafka does.
	all := kmsg.NewPtrDescribeACLsRequest()
	all.ResourceType, all.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	all.Operation, all.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := all.RequestWith(ctx, testkit.Client(t, b.Addr))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("describe all: %v %v", err, resp)
	}
	if len(resp.Resources) != 3 {
		t.Fatalf("describe all: %d resources, want 3 (orders, pay, g1): %+v", len(resp.Resources), resp.Resources)
	}

	// Delete by principal: only alice's two ACLs go, and are returned.
	deleted, err := adm.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations(kadm.OpAny).AllowHosts())
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 2 {
		t.Fatalf("delete alice: %+v", deleted)
	}
	if n := len(b.Server.Image().ACLs); n != 2 {
		t.Fatalf("image holds %d ACLs after delete, want 2", n)
	}

	// The ACLs are in the metadata log: they survive a restart.
	b.Restart()
	img := b.Server.Image()
	if len(img.ACLs) != 2 || !img.HasACL(auth.ACL{ResourceType: auth.ResourceGroup, ResourceName: "g1", PatternType: auth.PatternLiteral,
		Principal: "User:*", Host: "*", Operation: auth.OpRead, Permission: auth.PermissionAllow}) {
		t.Fatalf("after restart: %+v", img.ACLList())
	}
}

func TestACLsBadInputsAnswerAsKafka(t *testing.T) {
	b := testkit.StartBroker(t, withAuthorizer)
	cl := testkit.Client(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)

	creation := func(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", op, perm
		return c
	}
	topic, lit, read, allow := kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	valid := creation(topic, "t", lit, read, allow)

	// A filter-only code (ANY, MATCH) in one creation fails every
	// creation of the request, as Kafka's CreateAcls does.
	for _, c := range []struct {
		c   kmsg.CreateACLsRequestCreation
		msg string
	}{
		{creation(topic, "t", kmsg.ACLResourcePatternTypeMatch, read, allow), "patternType must not be MATCH"},
		{creation(topic, "t", kmsg.ACLResourcePatternTypeAny, read, allow), "patternType must not be ANY"},
		{creation(kmsg.ACLResourceTypeAny, "t", lit, read, allow), "resourceType must not be ANY"},
		{creation(topic, "t", lit, kmsg.ACLOperationAny, allow), "operation must not be ANY"},
		{creation(topic, "t", lit, read, kmsg.ACLPermissionTypeAny), "permissionType must not be ANY"},
	} {
		req := kmsg.NewPtrCreateACLsRequest()
		req.Creations = append(req.Creations, valid, c.c)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range resp.Results {
			if r.ErrorCode != kerr.UnknownServerError.Code || deref(r.ErrorMessage) != c.msg {
				t.Errorf("%s, creation %d: got %d %s", c.msg, i, r.ErrorCode, deref(r.ErrorMessage))
			}
		}
	}
	if n := len(b.Server.Image().ACLs); n != 0 {
		t.Fatalf("image holds %d ACLs after refused requests", n)
	}

	// Otherwise each creation stands alone. (Kafka cannot parse UNKNOWN
	// codes at all; Fjord answers them per creation.)
	cases := []struct {
		c    kmsg.CreateACLsRequestCreation
		code int16
		msg  string
	}{
		{creation(kmsg.ACLResourceTypeCluster, "c", lit, kmsg.ACLOperationAlter, allow), kerr.InvalidRequest.Code, "The only valid name for the CLUSTER resource is kafka-cluster"},
		{creation(topic, "", lit, read, allow), kerr.InvalidRequest.Code, "Invalid empty resource name"},
		{creation(kmsg.ACLResourceTypeUnknown, "t", lit, read, allow), kerr.InvalidRequest.Code, "Invalid resourceType UNKNOWN"},
		{creation(topic, "t", kmsg.ACLResourcePatternTypeUnknown, read, allow), kerr.InvalidRequest.Code, "Invalid patternType UNKNOWN"},
		{creation(topic, "t", lit, kmsg.ACLOperationUnknown, allow), kerr.InvalidRequest.Code, "Invalid operation UNKNOWN"},
		{creation(topic, "t", lit, read, kmsg.ACLPermissionTypeUnknown), kerr.InvalidRequest.Code, "Invalid permissionType UNKNOWN"},
		{creation(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, kmsg.ACLOperationAlter, allow), 0, ""},
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, c := range cases {
		req.Creations = append(req.Creations, c.c)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		r := resp.Results[i]
		if r.ErrorCode != c.code || (c.msg != "" && (r.ErrorMessage == nil || *r.ErrorMessage != c.msg)) {
			t.Errorf("creation %d: got %d %v, want %d %q", i, r.ErrorCode, deref(r.ErrorMessage), c.code, c.msg)
		}
	}
	if n := len(b.Server.Image().ACLs); n != 1 {
		t.Errorf("image holds %d ACLs, want only the valid one", n)
	}

	// Unknown codes in a delete filter: INVALID_REQUEST for that filter.
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeUnknown, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	f.ResourceType, f.Operation = kmsg.ACLResourceTypeAny, kmsg.ACLOperationUnknown
	del.Filters = append(del.Filters, f)
	dresp, err := del.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if r := dresp.Results; len(r) != 2 || r[0].ErrorCode != kerr.InvalidRequest.Code || deref(r[0].ErrorMessage) != "Unknown patternFilter." ||
		r[1].ErrorCode != kerr.InvalidRequest.Code || deref(r[1].ErrorMessage) != "Unknown entryFilter." {
		t.Errorf("delete with unknown filters: %+v", r)
	}
}

func TestACLAPIsWithoutAuthorizerAreSecurityDisabled(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)
	res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead))
	if err != nil || len(res) != 1 || codeOf(res[0].Err) != kerr.SecurityDisabled.Code || res[0].ErrMessage != "No Authorizer is configured." {
		t.Fatalf("create without authorizer: %v %+v", err, res)
	}
	d, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(d) != 1 || codeOf(d[0].Err) != kerr.SecurityDisabled.Code {
		t.Fatalf("describe without authorizer: %v %+v", err, d)
	}
	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(del) != 1 || codeOf(del[0].Err) != kerr.SecurityDisabled.Code {
		t.Fatalf("delete without authorizer: %v %+v", err, del)
	}
}

// saltedPassword is RFC 5802's Hi(password, salt, i), as clients compute it.
func saltedPassword(t *testing.T, mech auth.ScramMechanism, password string, salt []byte, iterations int) []byte {
	t.Helper()
	h, n := sha256.New, 32
	if mech == auth.ScramSHA512 {
		h, n = sha512.New, 64
	}
	k, err := pbkdf2.Key(h, password, salt, iterations, n)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func hmacOf(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func TestSCRAMCredentials(t *testing.T) {
	b := testkit.StartBroker(t, nil) // SCRAM APIs need no authorizer
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)

	salt := []byte("0123456789abcdef")
	sp := saltedPassword(t, auth.ScramSHA256, "alice-secret", salt, 8192)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Salt: salt, SaltedPassword: sp},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	// The broker stores RFC 5802's keys, derived as Kafka's ScramFormatter does.
	cred, ok := b.Server.Image().ScramCredential("alice", auth.ScramSHA256)
	if !ok {
		t.Fatal("alice's credential is not in the image")
	}
	clientKey := hmacOf(sha256.New, sp, "Client Key")
	stored := sha256.Sum256(clientKey)
	if string(cred.StoredKey) != string(stored[:]) || string(cred.ServerKey) != string(hmacOf(sha256.New, sp, "Server Key")) ||
		string(cred.Salt) != string(salt) || cred.Iterations != 8192 {
		t.Fatalf("stored credential %+v is not RFC 5802's", cred)
	}

	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 2 || len(described["alice"].CredInfos) != 1 || described["alice"].CredInfos[0].Iterations != 8192 ||
		described["bob"].CredInfos[0].Mechanism != kadm.ScramSha512 {
		t.Fatalf("describe all: %+v", described)
	}

	// Kafka's errors, through raw requests (kadm checks some itself).
	cl := testkit.Client(t, b.Addr)
	alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(name string, mech int8, it int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = name, mech, it, salt, sp
		return u
	}
	dl := func(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = name, mech
		return d
	}
	alter.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		up("few", 1, 4095), up("many", 1, 16385), up("alice", 1, 4096), up("", 1, 4096), up("nomech", 3, 4096), up("ok", 2, 16384),
	}
	// alice's deletion is valid but she is upserted too: both fail, as
	// Kafka keys a request's changes by user. bob has SHA-512 only.
	alter.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{dl("alice", 1), dl("ghost", 1), dl("bob", 1)}
	resp, err := alter.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		code int16
		msg  string
	}{
		"few":    {kerr.UnacceptableCredential.Code, "Too few iterations"},
		"many":   {kerr.UnacceptableCredential.Code, "Too many iterations"},
		"alice":  {kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"},
		"":       {kerr.UnacceptableCredential.Code, "Username must not be empty"},
		"nomech": {kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"},
		"ghost":  {kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"},
		"bob":    {kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"},
		"ok":     {0, ""},
	}
	if len(resp.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(resp.Results), len(want), resp.Results)
	}
	for _, r := range resp.Results {
		w, ok := want[r.User]
		if !ok || r.ErrorCode != w.code || (w.msg != "" && deref(r.ErrorMessage) != w.msg) {
			t.Errorf("user %q: got %d %s, want %d %q", r.User, r.ErrorCode, deref(r.ErrorMessage), w.code, w.msg)
		}
	}

	// Describe: unknown user, a user named twice.
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range []string{"alice", "nobody", "bob", "bob"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		dreq.Users = append(dreq.Users, u)
	}
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]kmsg.DescribeUserSCRAMCredentialsResponseResult{}
	for _, r := range dresp.Results {
		got[r.User] = r
	}
	if len(dresp.Results) != 3 || got["alice"].ErrorCode != 0 || len(got["alice"].CredentialInfos) != 1 ||
		got["nobody"].ErrorCode != kerr.ResourceNotFound.Code || deref(got["nobody"].ErrorMessage) != "Attempt to describe a user credential that does not exist: nobody" ||
		got["bob"].ErrorCode != kerr.DuplicateResource.Code {
		t.Fatalf("describe: %+v", dresp.Results)
	}

	// Delete, then restart: the log keeps what remains.
	if res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha512}}, nil); err != nil || res.Error() != nil {
		t.Fatalf("delete bob: %v %v", err, res)
	}
	b.Restart()
	img := b.Server.Image()
	if _, ok := img.ScramCredential("bob", auth.ScramSHA512); ok {
		t.Error("bob's deleted credential is back after restart")
	}
	if c, ok := img.ScramCredential("alice", auth.ScramSHA256); !ok || string(c.StoredKey) != string(stored[:]) {
		t.Error("alice's credential did not survive the restart")
	}
	if _, ok := img.ScramCredential("ok", auth.ScramSHA512); !ok {
		t.Error("the valid upsertion of a mixed request was not stored")
	}
}

// TestSecurityRecordsReplicate: ACLs and credentials created through any
// node (forwarded to the active controller) reach every node's image, and
// a restarted node has them again.
func TestSecurityRecordsReplicate(t *testing.T) {
	testkit.SkipShort(t, "3-node cluster test")
	c := testkit.StartInProcCluster(t, 3, withAuthorizer)
	ctx := testkit.Context(t, 60*time.Second)
	// Each change goes straight to node n on a connection of its own
	// (not through a client's broker list, which can lag a fresh
	// cluster's): a node that is not the active controller forwards it.
	// Both changes are idempotent, so a retry after a transient error
	// (a node still being unfenced) changes nothing twice.
	send := func(n *testkit.InProcNode, what string, req kmsg.Request, code func(kmsg.Response) int16) {
		t.Helper()
		testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
			resp, err := testkit.RawRequest(n.Addr, req, 5*time.Second)
			if err != nil {
				return fmt.Errorf("%s via node %d: %w", what, n.ID, err)
			}
			if c := code(resp); c != 0 {
				return fmt.Errorf("%s via node %d: %w", what, n.ID, kerr.ErrorForCode(c))
			}
			return nil
		})
	}
	for _, n := range c.Nodes {
		user := fmt.Sprintf("user%d", n.ID)
		create := kmsg.NewPtrCreateACLsRequest()
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:"+user, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		create.Creations = append(create.Creations, cr)
		send(n, "create ACL", create, func(r kmsg.Response) int16 { return r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode })
		alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, 1, 4096, []byte("salt"), make([]byte, 32)
		alter.Upsertions = append(alter.Upsertions, u)
		send(n, "upsert SCRAM", alter, func(r kmsg.Response) int16 { return r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode })
	}
	converged := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok := true
			for _, n := range c.Nodes {
				img := n.Server.Image()
				if len(img.ACLs) != 3 || len(img.ScramUsers()) != 3 {
					ok = false
				}
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				for _, n := range c.Nodes {
					t.Logf("node %d: %d ACLs, users %v", n.ID, len(n.Server.Image().ACLs), n.Server.Image().ScramUsers())
				}
				t.Fatalf("%s: images did not converge", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	converged("after creation")
	c.Node(2).Stop()
	c.Node(2).Start()
	converged("after restarting node 2")
	// Describe through a node answers from its own image.
	adm := kadm.NewClient(testkit.Client(t, c.Node(2).Addr))
	d, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || d[0].Err != nil || len(d[0].Described) != 3 {
		t.Fatalf("describe via restarted node: %v %+v", err, d)
	}
}

// The broker's authorizer decides from the ACLs created through the API.
func TestBrokerAuthorizerFollowsACLs(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		"super.users":           "User:admin;User:ANONYMOUS", // the PLAINTEXT admin below
	})
	a, err := b.Server.NewAuthorizer()
	if err != nil || a == nil {
		t.Fatalf("authorizer: %v %v", a, err)
	}
	read := []auth.Action{{Operation: auth.OpRead, ResourceType: auth.ResourceTopic, ResourceName: "orders"}}
	if got := a.Authorize(auth.User("alice"), "127.0.0.1", read); got[0] {
		t.Fatal("alice may read before any ACL")
	}
	if got := a.Authorize(auth.User("admin"), "127.0.0.1", read); !got[0] {
		t.Fatal("the super user may not read")
	}
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 10*time.Second)
	if res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead)); err != nil || res[0].Err != nil {
		t.Fatalf("create: %v %+v", err, res)
	}
	if got := a.Authorize(auth.User("alice"), "127.0.0.1", read); !got[0] {
		t.Fatal("alice may not read after the ALLOW ACL")
	}
	off := testkit.StartBroker(t, nil)
	if a, err := off.Server.NewAuthorizer(); err != nil || a != nil {
		t.Fatalf("without authorizer.class.name: %v %v", a, err)
	}
}
