package broker_test

// DescribeClientQuotas and AlterClientQuotas through kadm (and raw kmsg
// for inputs kadm cannot send): defaults, match types, strict,
// validate_only, removal, and Kafka's errors for bad keys, values and
// entities; on one broker and forwarded through a three-node cluster.

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

func qUser(name string) kadm.ClientQuotaEntityComponent {
	return kadm.ClientQuotaEntityComponent{Type: "user", Name: &name}
}
func qClient(name string) kadm.ClientQuotaEntityComponent {
	return kadm.ClientQuotaEntityComponent{Type: "client-id", Name: &name}
}

var (
	qUserDefault   = kadm.ClientQuotaEntityComponent{Type: "user"}
	qClientDefault = kadm.ClientQuotaEntityComponent{Type: "client-id"}
)

func setQuota(key string, v float64) kadm.AlterClientQuotaOp {
	return kadm.AlterClientQuotaOp{Key: key, Value: v}
}

// describedSet renders described quotas as sorted "entity: k=v" lines.
func describedSet(qs kadm.DescribedClientQuotas) []string {
	var out []string
	for _, q := range qs {
		var vals []string
		for _, v := range q.Values {
			vals = append(vals, fmt.Sprintf("%s=%g", v.Key, v.Value))
		}
		sort.Strings(vals)
		out = append(out, q.Entity.String()+" "+strings.Join(vals, ","))
	}
	sort.Strings(out)
	return out
}

func mustAlterQuotas(t *testing.T, adm *kadm.Client, entries ...kadm.AlterClientQuotaEntry) {
	t.Helper()
	res, err := adm.AlterClientQuotas(testkit.Context(t, 10*time.Second), entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("alter %s: %v: %s", r.Entity, r.Err, r.ErrMessage)
		}
	}
}

func TestClientQuotasAlterDescribe(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 30*time.Second)

	mustAlterQuotas(t, adm,
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUser("alice")}, Ops: []kadm.AlterClientQuotaOp{
			setQuota("producer_byte_rate", 1024), setQuota("consumer_byte_rate", 2048)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUserDefault}, Ops: []kadm.AlterClientQuotaOp{
			setQuota("producer_byte_rate", 100)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUser("alice"), qClient("app")}, Ops: []kadm.AlterClientQuotaOp{
			setQuota("request_percentage", 12.5)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUserDefault, qClientDefault}, Ops: []kadm.AlterClientQuotaOp{
			setQuota("controller_mutation_rate", 0.5)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qClientDefault}, Ops: []kadm.AlterClientQuotaOp{
			setQuota("consumer_byte_rate", 4096)}},
	)
	// validate_only stores nothing.
	vres, err := adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{qUser("bob")},
		Ops: []kadm.AlterClientQuotaOp{setQuota("producer_byte_rate", 5)}}})
	if err != nil || len(vres) != 1 || vres[0].Err != nil {
		t.Fatalf("validate only: %v %+v", err, vres)
	}

	describe := func(strict bool, comps ...kadm.DescribeClientQuotaComponent) []string {
		t.Helper()
		qs, err := adm.DescribeClientQuotas(ctx, strict, comps)
		if err != nil {
			t.Fatalf("describe %+v: %v", comps, err)
		}
		return describedSet(qs)
	}
	exact := func(typ, name string) kadm.DescribeClientQuotaComponent {
		return kadm.DescribeClientQuotaComponent{Type: typ, MatchName: &name, MatchType: kmsg.QuotasMatchTypeExact}
	}
	def := func(typ string) kadm.DescribeClientQuotaComponent {
		return kadm.DescribeClientQuotaComponent{Type: typ, MatchType: kmsg.QuotasMatchTypeDefault}
	}
	anyOf := func(typ string) kadm.DescribeClientQuotaComponent {
		return kadm.DescribeClientQuotaComponent{Type: typ, MatchType: kmsg.QuotasMatchTypeAny}
	}
	all := []string{
		"{client-id=<default>} consumer_byte_rate=4096",
		"{user=<default>, client-id=<default>} controller_mutation_rate=0.5",
		"{user=<default>} producer_byte_rate=100",
		"{user=alice, client-id=app} request_percentage=12.5",
		"{user=alice} consumer_byte_rate=2048,producer_byte_rate=1024",
	}
	for _, c := range []struct {
		name   string
		strict bool
		comps  []kadm.DescribeClientQuotaComponent
		want   []string
	}{
		{"no filter", false, nil, all},
		{"exact user", false, []kadm.DescribeClientQuotaComponent{exact("user", "alice")}, []string{all[3], all[4]}},
		{"exact user strict", true, []kadm.DescribeClientQuotaComponent{exact("user", "alice")}, []string{all[4]}},
		{"default user", false, []kadm.DescribeClientQuotaComponent{def("user")}, []string{all[1], all[2]}},
		{"default user strict", true, []kadm.DescribeClientQuotaComponent{def("user")}, []string{all[2]}},
		{"any user", false, []kadm.DescribeClientQuotaComponent{anyOf("user")}, []string{all[1], all[2], all[3], all[4]}},
		{"any user strict", true, []kadm.DescribeClientQuotaComponent{anyOf("user")}, []string{all[2], all[4]}},
		{"any user and client", false, []kadm.DescribeClientQuotaComponent{anyOf("user"), anyOf("client-id")}, []string{all[1], all[3]}},
		{"default client strict", true, []kadm.DescribeClientQuotaComponent{def("client-id")}, []string{all[0]}},
		{"exact user, exact client", true, []kadm.DescribeClientQuotaComponent{exact("user", "alice"), exact("client-id", "app")}, []string{all[3]}},
		{"no match", false, []kadm.DescribeClientQuotaComponent{exact("user", "bob")}, nil},
		{"ip filter", false, []kadm.DescribeClientQuotaComponent{anyOf("ip")}, nil},
	} {
		if got := describe(c.strict, c.comps...); !slices.Equal(got, c.want) {
			t.Errorf("%s: got\n  %q\nwant\n  %q", c.name, got, c.want)
		}
	}

	// Changing one key keeps the other; removing every key removes the
	// entity; removing a key that is not set succeeds and changes nothing.
	mustAlterQuotas(t, adm, kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUser("alice")}, Ops: []kadm.AlterClientQuotaOp{
		setQuota("producer_byte_rate", 8192), {Key: "request_percentage", Remove: true}}})
	if got := describe(true, exact("user", "alice")); !slices.Equal(got, []string{"{user=alice} consumer_byte_rate=2048,producer_byte_rate=8192"}) {
		t.Errorf("after update: %q", got)
	}
	mustAlterQuotas(t, adm, kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUser("alice")}, Ops: []kadm.AlterClientQuotaOp{
		{Key: "producer_byte_rate", Remove: true}, {Key: "consumer_byte_rate", Remove: true}}})
	if got := describe(true, exact("user", "alice")); len(got) != 0 {
		t.Errorf("after removing every key: %q", got)
	}

	// The quotas survive a restart (metadata log).
	b.Restart()
	adm = testkit.Admin(t, b.Addr)
	if got := describe(false, def("user")); !slices.Equal(got, []string{all[1], all[2]}) {
		t.Errorf("after restart: %q", got)
	}
}

func TestClientQuotasErrors(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 30*time.Second)
	s := func(v string) *string { return &v }
	cases := []struct {
		entity []kmsg.AlterClientQuotasRequestEntryEntity
		ops    []kmsg.AlterClientQuotasRequestEntryOp
		msg    string
	}{
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u1")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "bogus_rate", Value: 10}}, "Invalid configuration key bogus_rate"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u2")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 0}}, "Quota producer_byte_rate must be greater than 0"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u3")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "consumer_byte_rate", Value: -5}}, "Quota consumer_byte_rate must be greater than 0"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u4")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1.5}}, "producer_byte_rate cannot be a fractional value."},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u5")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1e19}}, "Proposed value for producer_byte_rate is too large for a LONG."},
		{nil, []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}, "Invalid empty client quota entity"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "group", Name: s("g")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}, "Unhandled client quota entity type: group"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}, "Empty user not supported"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("a")}, {Type: "user", Name: s("b")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}, "Invalid client quota entity, duplicate entity entry user"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: s("u6")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}, {Key: "producer_byte_rate", Value: 2}},
			"Ignoring duplicate entity ClientQuotaEntity(entries={user=u6})"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "ip", Name: s("10.0.0.1")}, {Type: "user", Name: s("u7")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}},
			"Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{[]kmsg.AlterClientQuotasRequestEntryEntity{{Type: "ip", Name: s("10.0.0.1")}},
			[]kmsg.AlterClientQuotasRequestEntryOp{{Key: "connection_creation_rate", Value: 1}},
			"IP quotas (connection_creation_rate) are not supported by Fjord; set quotas on users or client ids"},
	}
	req := kmsg.NewPtrAlterClientQuotasRequest()
	for _, c := range cases {
		req.Entries = append(req.Entries, kmsg.AlterClientQuotasRequestEntry{Entity: c.entity, Ops: c.ops})
	}
	// One valid entry among the bad ones is stored.
	req.Entries = append(req.Entries, kmsg.AlterClientQuotasRequestEntry{
		Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: s("good")}},
		Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 77}},
	})
	resp, err := req.RequestWith(ctx, testkit.Client(t, b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Entries) != len(cases)+1 {
		t.Fatalf("%d entries answered, want %d", len(resp.Entries), len(cases)+1)
	}
	for i, c := range cases {
		e := resp.Entries[i]
		if e.ErrorCode != kerr.InvalidRequest.Code || e.ErrorMessage == nil || *e.ErrorMessage != c.msg {
			t.Errorf("case %d: code %d message %v, want INVALID_REQUEST %q", i, e.ErrorCode, kmsg.StringPtr(derefOr(e.ErrorMessage)), c.msg)
		}
	}
	if last := resp.Entries[len(cases)]; last.ErrorCode != 0 {
		t.Errorf("valid entry: code %d", last.ErrorCode)
	}
	qs, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := describedSet(qs); !slices.Equal(got, []string{"{client-id=good} producer_byte_rate=77"}) {
		t.Errorf("stored after the mixed request: %q", got)
	}

	// Describe filters Kafka refuses.
	for _, c := range []struct {
		comps []kmsg.DescribeClientQuotasRequestComponent
		code  *kerr.Error
		msg   string
	}{
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0}}, kerr.InvalidRequest,
			"Request specified MATCH_TYPE_EXACT, but set match string to null."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 1, Match: s("x")}}, kerr.InvalidRequest,
			"Request specified MATCH_TYPE_DEFAULT, but also specified a match string."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2, Match: s("x")}}, kerr.InvalidRequest,
			"Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 7}}, kerr.InvalidRequest, "Unknown match type 7"},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "group", MatchType: 2}}, kerr.UnsupportedVersion, "Unsupported entity type group"},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "", MatchType: 2}}, kerr.InvalidRequest, "Invalid empty entity type."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2}, {EntityType: "user", MatchType: 1}}, kerr.InvalidRequest,
			"Entity type user cannot appear more than once in the filter."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "ip", MatchType: 2}, {EntityType: "user", MatchType: 1}}, kerr.InvalidRequest,
			"Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."},
	} {
		dreq := kmsg.NewPtrDescribeClientQuotasRequest()
		dreq.Components = c.comps
		dresp, err := dreq.RequestWith(ctx, testkit.Client(t, b.Addr))
		if err != nil {
			t.Fatal(err)
		}
		if dresp.ErrorCode != c.code.Code || derefOr(dresp.ErrorMessage) != c.msg || len(dresp.Entries) != 0 {
			t.Errorf("describe %+v: code %d %q, want %s %q", c.comps, dresp.ErrorCode, derefOr(dresp.ErrorMessage), c.code.Message, c.msg)
		}
	}
}

func derefOr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestClientQuotasAuthz: describing needs DESCRIBE_CONFIGS on the
// cluster, altering ALTER_CONFIGS (Kafka's KafkaApis/ControllerApis).
func TestClientQuotasAuthz(t *testing.T) {
	addr := authzBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	admin := kadm.NewClient(userClient(t, addr, "admin"))
	alice := kadm.NewClient(userClient(t, addr, "alice"))
	entry := []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{qUser("bob")}, Ops: []kadm.AlterClientQuotaOp{setQuota("producer_byte_rate", 1000)}}}

	res, err := alice.AlterClientQuotas(ctx, entry)
	if err != nil || len(res) != 1 || res[0].Err != kerr.ClusterAuthorizationFailed {
		t.Fatalf("alice alter without ACLs: %v %+v, want CLUSTER_AUTHORIZATION_FAILED", err, res)
	}
	if _, err := alice.DescribeClientQuotas(ctx, false, nil); err == nil || !strings.Contains(err.Error(), "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("alice describe without ACLs: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	// DESCRIBE_CONFIGS lets alice describe, not alter.
	mustACL(t, admin, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribeConfigs))
	if _, err := alice.DescribeClientQuotas(ctx, false, nil); err != nil {
		t.Fatalf("alice describe with DESCRIBE_CONFIGS: %v", err)
	}
	if res, _ := alice.AlterClientQuotas(ctx, entry); len(res) != 1 || res[0].Err != kerr.ClusterAuthorizationFailed {
		t.Fatalf("alice alter with DESCRIBE_CONFIGS only: %+v", res)
	}
	mustACL(t, admin, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpAlterConfigs))
	if res, err := alice.AlterClientQuotas(ctx, entry); err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("alice alter with ALTER_CONFIGS: %v %+v", err, res)
	}
	qs, err := admin.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kmsg.StringPtr("bob")}})
	if err != nil || len(qs) != 1 {
		t.Fatalf("bob's quota after alice's alter: %v %+v", err, qs)
	}
}

// On success DescribeClientQuotas answers an empty entry list, never a
// null one: Kafka's admin client (kafka-configs.sh --describe, and
// --alter, which describes first) fails with a NullPointerException on
// null. Read off the wire, since a decoder may turn both into nil.
func TestClientQuotasDescribeEmptyIsNotNull(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	nc, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.SetVersion(1)
	req.Strict = true
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType, c.Match = "user", 0, kmsg.StringPtr("nobody")
	req.Components = append(req.Components, c)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("t")).AppendRequest(nil, req, 7)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	// v1 is flexible: correlation id, header tags, throttle ms, error
	// code, error message (compact nullable string), then the entries'
	// compact nullable array length (0: null, 1: empty).
	if len(body) < 13 {
		t.Fatalf("response of %d bytes", len(body))
	}
	if code := binary.BigEndian.Uint16(body[9:11]); code != 0 {
		t.Fatalf("error code %d", code)
	}
	if body[11] != 0 {
		t.Fatalf("error message set on success: %x", body)
	}
	if body[12] != 1 {
		t.Fatalf("entries encoded as %d, want 1 (an empty list; 0 is null)", body[12])
	}
}
