package broker_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/fjordhq/fjord/internal/testkit"
)

// authzJAAS: admin is the super user; alice, bob, carol get ACLs per test.
const authzJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_carol="carol-secret";`

// authzBroker is a SASL_PLAINTEXT (PLAIN) broker with the standard
// authorizer, admin as super user and extra props laid over.
func authzBroker(t testing.TB, extra map[string]string) string {
	t.Helper()
	return startSecureBroker(t, authzProps(extra), nil).Addr().String()
}

// authzProps are authzBroker's properties with extra laid over.
func authzProps(extra map[string]string) map[string]string {
	props := map[string]string{
		"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name": "SASL_PLAINTEXT",
		"sasl.enabled.mechanisms":                             "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": authzJAAS,
		"authorizer.class.name":                               "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                         "User:admin",
		"allow.everyone.if.no.acl.found":                      "false",
	}
	for k, v := range extra {
		props[k] = v
	}
	return props
}

func userClient(t testing.TB, addr, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(addr, ",")...),
		kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism()),
		kgo.RetryTimeout(5 * time.Second), kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func mustACL(t testing.TB, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(testkit.Context(t, 10*time.Second), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create ACL %s %s: %v", r.Principal, r.Name, r.Err)
		}
	}
}

// raw sends req to broker id directly (no kgo sharding or coordinator
// lookup, so the broker's own answer to this request is what we see).
func raw(t testing.TB, ctx context.Context, cl *kgo.Client, id int, req kmsg.Request) kmsg.Response {
	t.Helper()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Broker(id).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// refusal is one API's request, as sent by a principal with no ACLs, and
// the error codes its answer carries.
type refusal struct {
	req   kmsg.Request
	codes func(kmsg.Response) []int16
	want  *kerr.Error
}

func refusals(t1 [16]byte) []refusal {
	topicT := kmsg.StringPtr("t1")
	var out []refusal
	add := func(req kmsg.Request, want *kerr.Error, codes func(kmsg.Response) []int16) {
		out = append(out, refusal{req, codes, want})
	}
	{
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = 1, 5000
		r.Topics = []kmsg.ProduceRequestTopic{{Topic: "t1", TopicID: t1, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.ProduceResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		r := kmsg.NewPtrFetchRequest()
		r.ReplicaID, r.MaxBytes = -1, 1<<20
		r.Topics = []kmsg.FetchRequestTopic{{Topic: "t1", TopicID: t1, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20}}}}
		add(r, kerr.TopicAuthorizationFailed, fetchCodes)
	}
	{
		// A follower fetch needs CLUSTER_ACTION: refused per partition.
		r := kmsg.NewPtrFetchRequest()
		r.ReplicaID, r.MaxBytes = 1, 1<<20
		r.ReplicaState.ID = 1
		r.Topics = []kmsg.FetchRequestTopic{{Topic: "t1", TopicID: t1, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20}}}}
		add(r, kerr.TopicAuthorizationFailed, fetchCodes)
	}
	{
		r := kmsg.NewPtrListOffsetsRequest()
		r.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t1", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1}}}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.ListOffsetsResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		// An existing topic and a missing one: both hidden the same way.
		r := kmsg.NewPtrMetadataRequest()
		r.Topics = []kmsg.MetadataRequestTopic{{Topic: topicT}, {Topic: kmsg.StringPtr("no-such-topic")}}
		r.AllowAutoTopicCreation = true
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.MetadataResponse).Topics {
				c = append(c, t.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.Generation = "g1", -1
		r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.OffsetCommitResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Group = "g1"
		r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g1"}}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, g := range m.(*kmsg.OffsetFetchResponse).Groups {
				c = append(c, g.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrFindCoordinatorRequest()
		r.CoordinatorKey, r.CoordinatorKeys = "g1", []string{"g1"}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, k := range m.(*kmsg.FindCoordinatorResponse).Coordinators {
				c = append(c, k.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrJoinGroupRequest()
		r.Group, r.ProtocolType, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = "g1", "consumer", 10000, 10000
		r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.JoinGroupResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrHeartbeatRequest()
		r.Group, r.MemberID = "g1", "m"
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.HeartbeatResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrLeaveGroupRequest()
		r.Group, r.MemberID = "g1", "m"
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.LeaveGroupResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrSyncGroupRequest()
		r.Group, r.MemberID = "g1", "m"
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.SyncGroupResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Groups = []string{"g1"}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, g := range m.(*kmsg.DescribeGroupsResponse).Groups {
				c = append(c, g.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDeleteGroupsRequest()
		r.Groups = []string{"g1"}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, g := range m.(*kmsg.DeleteGroupsResponse).Groups {
				c = append(c, g.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Group = "g1"
		r.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		add(r, kerr.GroupAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.OffsetDeleteResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrCreateTopicsRequest()
		r.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "new-topic", NumPartitions: 1, ReplicationFactor: 1}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.CreateTopicsResponse).Topics {
				c = append(c, t.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDeleteTopicsRequest()
		r.TopicNames = []string{"t1"}
		r.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("t1")}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.DeleteTopicsResponse).Topics {
				c = append(c, t.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDeleteRecordsRequest()
		r.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t1", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.DeleteRecordsResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		// Idempotent producer: IDEMPOTENT_WRITE on the cluster or WRITE
		// on some topic.
		r := kmsg.NewPtrInitProducerIDRequest()
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.InitProducerIDResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis = kmsg.StringPtr("tx1"), 10000
		add(r, kerr.TransactionalIDAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.InitProducerIDResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrOffsetForLeaderEpochRequest()
		r.ReplicaID = -1
		r.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, LeaderEpoch: 0, CurrentLeaderEpoch: -1}}}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.OffsetForLeaderEpochResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDescribeConfigsRequest()
		r.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t1"}}
		add(r, kerr.TopicAuthorizationFailed, describeConfigsCodes)
	}
	{
		r := kmsg.NewPtrDescribeConfigsRequest()
		r.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "0"}}
		add(r, kerr.ClusterAuthorizationFailed, describeConfigsCodes)
	}
	{
		r := kmsg.NewPtrAlterConfigsRequest()
		r.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t1"}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, x := range m.(*kmsg.AlterConfigsResponse).Resources {
				c = append(c, x.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: ""}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, x := range m.(*kmsg.IncrementalAlterConfigsResponse).Resources {
				c = append(c, x.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDescribeLogDirsRequest()
		r.Version = 3
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.DescribeLogDirsResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrCreatePartitionsRequest()
		r.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t1", Count: 3}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.CreatePartitionsResponse).Topics {
				c = append(c, t.ErrorCode)
			}
			return
		})
	}
	{
		r := kmsg.NewPtrDescribeProducersRequest()
		r.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t1", Partitions: []int32{0}}}
		add(r, kerr.TopicAuthorizationFailed, func(m kmsg.Response) (c []int16) {
			for _, t := range m.(*kmsg.DescribeProducersResponse).Topics {
				for _, p := range t.Partitions {
					c = append(c, p.ErrorCode)
				}
			}
			return
		})
	}
	{
		r := kmsg.NewPtrElectLeadersRequest()
		r.ElectionType = 0
		r.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t1", Partitions: []int32{0}}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
			resp := m.(*kmsg.ElectLeadersResponse)
			return []int16{resp.ErrorCode, resp.Topics[0].Partitions[0].ErrorCode}
		})
	}
	{
		r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		r.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t1", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{0}}}}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode} })
	}
	add(kmsg.NewPtrListPartitionReassignmentsRequest(), kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
		return []int16{m.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode}
	})
	{
		r := kmsg.NewPtrUnregisterBrokerRequest()
		r.BrokerID = 7
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.UnregisterBrokerResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrDescribeACLsRequest()
		r.ResourceType, r.ResourcePatternType, r.Operation, r.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.DescribeACLsResponse).ErrorCode} })
	}
	{
		r := kmsg.NewPtrCreateACLsRequest()
		r.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "t1", ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral,
			Principal: "User:alice", Host: "*", Operation: kmsg.ACLOperationRead, PermissionType: kmsg.ACLPermissionTypeAllow}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.CreateACLsResponse).Results[0].ErrorCode} })
	}
	{
		r := kmsg.NewPtrDeleteACLsRequest()
		r.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: kmsg.ACLResourceTypeAny, ResourcePatternType: kmsg.ACLResourcePatternTypeAny,
			Operation: kmsg.ACLOperationAny, PermissionType: kmsg.ACLPermissionTypeAny}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 { return []int16{m.(*kmsg.DeleteACLsResponse).Results[0].ErrorCode} })
	}
	add(kmsg.NewPtrDescribeUserSCRAMCredentialsRequest(), kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
		return []int16{m.(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode}
	})
	{
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "bob", Mechanism: 1}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
			return []int16{m.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode}
		})
	}
	{
		r := kmsg.NewPtrDescribeQuorumRequest()
		t := kmsg.NewDescribeQuorumRequestTopic()
		t.Topic, t.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
		r.Topics = append(r.Topics, t)
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
			return []int16{m.(*kmsg.DescribeQuorumResponse).ErrorCode}
		})
	}
	add(kmsg.NewPtrDescribeClientQuotasRequest(), kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
		return []int16{m.(*kmsg.DescribeClientQuotasResponse).ErrorCode}
	})
	{
		r := kmsg.NewPtrAlterClientQuotasRequest()
		r.Entries = []kmsg.AlterClientQuotasRequestEntry{{
			Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("bob")}},
			Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}},
		}}
		add(r, kerr.ClusterAuthorizationFailed, func(m kmsg.Response) []int16 {
			return []int16{m.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode}
		})
	}
	return out
}

func fetchCodes(m kmsg.Response) (c []int16) {
	for _, t := range m.(*kmsg.FetchResponse).Topics {
		for _, p := range t.Partitions {
			c = append(c, p.ErrorCode)
		}
	}
	return
}

func describeConfigsCodes(m kmsg.Response) (c []int16) {
	for _, x := range m.(*kmsg.DescribeConfigsResponse).Resources {
		c = append(c, x.ErrorCode)
	}
	return
}

// A principal with no ACLs (allow.everyone.if.no.acl.found=false) is
// refused every API the broker serves, with Kafka's error codes, and sees
// no topics, groups or cluster operations; the super user passes.
func TestAuthzNoACLsRefusesEverything(t *testing.T) {
	addr := authzBroker(t, nil)
	ctx := testkit.Context(t, 60*time.Second)
	admin := userClient(t, addr, "admin")
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "t1", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("super user produce: %v", err)
	}
	alice := userClient(t, addr, "alice")

	// Every API the broker advertises, except the ones Kafka never
	// authorizes, has a refusal case.
	av := raw(t, ctx, alice, 0, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	td, err := adm.ListTopics(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	cases := refusals(td["t1"].ID)
	// ListGroups and DescribeCluster filter rather than refuse: checked
	// below.
	covered := map[int16]bool{int16(kmsg.ApiVersions): true, int16(kmsg.SASLHandshake): true, int16(kmsg.SASLAuthenticate): true,
		int16(kmsg.ListGroups): true, int16(kmsg.DescribeCluster): true}
	for _, c := range cases {
		covered[c.req.Key()] = true
	}
	for _, k := range av.ApiKeys {
		if !covered[k.ApiKey] {
			t.Errorf("no refusal test for advertised API %s (%d)", kmsg.NameForKey(k.ApiKey), k.ApiKey)
		}
	}

	for _, c := range cases {
		resp := raw(t, ctx, alice, 0, c.req)
		codes := c.codes(resp)
		if len(codes) == 0 {
			t.Errorf("%s: answer carries no error code: %+v", kmsg.NameForKey(c.req.Key()), resp)
		}
		for _, code := range codes {
			if code != c.want.Code {
				t.Errorf("%s v%d: error %v, want %s", kmsg.NameForKey(c.req.Key()), c.req.GetVersion(), kerr.ErrorForCode(code), c.want.Message)
			}
		}
	}

	// All-topics Metadata hides t1; ListGroups hides groups; no topic was
	// auto-created by the refused Metadata.
	md := raw(t, ctx, alice, 0, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if len(md.Topics) != 0 {
		t.Errorf("alice sees topics %v", md.Topics)
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("no-such-topic") {
		t.Error("a Metadata request refused CREATE auto-created its topic")
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	if ops := raw(t, ctx, alice, 0, dc).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations; ops != 0 {
		t.Errorf("alice's cluster authorized operations %b, want 0", ops)
	}
	// The super user passes everything.
	if ops := raw(t, ctx, admin, 0, dc).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations; ops <= 0 {
		t.Errorf("admin's cluster authorized operations %b", ops)
	}
	md = raw(t, ctx, admin, 0, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if len(md.Topics) == 0 {
		t.Error("the super user sees no topics")
	}
	// Through kadm, as an operator would see it.
	if _, err := kadm.NewClient(alice).CreateTopic(ctx, 1, 1, nil, "alice-topic"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice create topic: %v", err)
	}
	if res, err := kadm.NewClient(alice).DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts()); err != nil || len(res) == 0 || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Errorf("alice describe ACLs: %v %+v", err, res)
	}
	// ListGroups: admin's group exists, alice sees none.
	ac := userClient(t, addr, "admin", kgo.ConsumerGroup("g-admin"), kgo.ConsumeTopics("t1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if fs := ac.PollFetches(ctx); fs.Err() != nil {
		t.Fatal(fs.Err())
	}
	if err := ac.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	if lg := raw(t, ctx, admin, 0, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse); len(lg.Groups) == 0 {
		t.Error("the super user lists no groups")
	}
	if lg := raw(t, ctx, alice, 0, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse); len(lg.Groups) != 0 || lg.ErrorCode != 0 {
		t.Errorf("alice lists groups %+v (error %d)", lg.Groups, lg.ErrorCode)
	}
}

// WRITE lets a producer write but not read; READ on the topic and the
// group lets a consumer group consume; prefixed patterns match by
// prefix; DENY beats ALLOW.
func TestAuthzProduceConsumeACLs(t *testing.T) {
	addr := authzBroker(t, nil)
	ctx := testkit.Context(t, 90*time.Second)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	for _, tp := range []string{"orders", "pay-in", "pay-out", "secret", "other"} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, tp); err != nil {
			t.Fatal(err)
		}
	}
	mustACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite))
	mustACL(t, adm, kadm.NewACLs().Allow("User:bob").Topics("orders").Operations(kadm.OpRead))
	mustACL(t, adm, kadm.NewACLs().Allow("User:bob").Groups("g1").Operations(kadm.OpRead))
	mustACL(t, adm, kadm.NewACLs().Allow("User:carol").Topics("pay-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite, kadm.OpRead))
	mustACL(t, adm, kadm.NewACLs().Allow("User:carol").Topics("*").Operations(kadm.OpAll))
	mustACL(t, adm, kadm.NewACLs().Deny("User:carol").Topics("secret").Operations(kadm.OpWrite))

	alice := userClient(t, addr, "alice")
	for i := range 10 {
		if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("alice (WRITE) produce: %v", err)
		}
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "other", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produce to other: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// One request, two topics: each answered on its own.
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis = 1, 5000
	pr.Version = 9 // by name
	for _, tp := range []string{"orders", "other"} {
		pr.Topics = append(pr.Topics, kmsg.ProduceRequestTopic{Topic: tp, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: oneBatch()}}})
	}
	plain := userClient(t, addr, "alice", kgo.MaxVersions(kversion.V3_0_0()))
	presp := raw(t, ctx, plain, 0, pr).(*kmsg.ProduceResponse)
	codes := map[string]int16{}
	for _, tr := range presp.Topics {
		codes[tr.Topic] = tr.Partitions[0].ErrorCode
	}
	if codes["orders"] != 0 || codes["other"] != kerr.TopicAuthorizationFailed.Code || len(presp.Topics) != 2 {
		t.Fatalf("mixed produce: %+v", codes)
	}
	// WRITE does not give READ.
	f := kmsg.NewPtrFetchRequest()
	f.ReplicaID, f.MaxBytes = -1, 1<<20
	otd, err := adm.ListTopics(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	f.Topics = []kmsg.FetchRequestTopic{{Topic: "orders", TopicID: otd["orders"].ID, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20}, {Partition: 1, PartitionMaxBytes: 1 << 20}}}}
	for _, c := range fetchCodes(raw(t, ctx, alice, 0, f)) {
		if c != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("alice fetch: %v", kerr.ErrorForCode(c))
		}
	}
	// bob: consumer group over orders.
	bob := userClient(t, addr, "bob", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 10 {
		fs := bob.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("bob consume: %v", err)
		}
		got += fs.NumRecords()
	}
	if err := bob.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("bob commit: %v", err)
	}
	// An idempotent producer needs IDEMPOTENT_WRITE on the cluster or
	// WRITE on some topic (InitProducerId): bob has neither.
	if err := bob.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob (READ) idempotent produce: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	bobPlain := userClient(t, addr, "bob", kgo.DisableIdempotentWrite())
	if err := bobPlain.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob (READ) produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// bob in another group is refused.
	bob2 := userClient(t, addr, "bob", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g2"))
	fs := bob2.PollFetches(ctx)
	if err := fs.Err(); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("bob in g2: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	// bob's Metadata shows only orders.
	md := raw(t, ctx, bob, 0, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || *md.Topics[0].Topic != "orders" {
		t.Fatalf("bob sees %d topics, want orders only", len(md.Topics))
	}

	// carol: prefixed WRITE on pay-, ALL on *, DENY WRITE on secret.
	carol := userClient(t, addr, "carol")
	for _, tp := range []string{"pay-in", "pay-out", "other"} {
		if err := carol.ProduceSync(ctx, &kgo.Record{Topic: tp, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("carol produce to %s: %v", tp, err)
		}
	}
	if err := carol.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("carol produce to secret (DENY beats ALLOW *): %v", err)
	}
	// Authorized operations reflect it: on secret carol may do all but WRITE.
	mr := kmsg.NewPtrMetadataRequest()
	mr.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("secret")}}
	mr.IncludeTopicAuthorizedOperations = true
	md = raw(t, ctx, carol, 0, mr).(*kmsg.MetadataResponse)
	if ops := md.Topics[0].AuthorizedOperations; ops&(1<<4) != 0 || ops&(1<<3) == 0 {
		t.Fatalf("carol's operations on secret %b: want READ, not WRITE", ops)
	}

	// kcat (librdkafka) as alice produces; as bob it cannot.
	kc := func(user string, args ...string) (string, string, error) {
		return testkit.Kcat(t, 30*time.Second, "k1:v1\n", append([]string{"-b", addr, "-X", "security.protocol=SASL_PLAINTEXT",
			"-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=" + user, "-X", "sasl.password=" + user + "-secret"}, args...)...)
	}
	if _, stderr, err := kc("alice", "-P", "-t", "orders", "-K:"); err != nil {
		t.Fatalf("kcat produce as alice: %v %s", err, stderr)
	}
	if _, stderr, err := kc("bob", "-P", "-t", "orders", "-K:"); err == nil || !strings.Contains(strings.ToLower(stderr), "authoriz") {
		t.Fatalf("kcat produce as bob: %v %s, want an authorization failure", err, stderr)
	}
	out, stderr, err := kc("bob", "-C", "-t", "orders", "-o", "beginning", "-e", "-q", "-f", "%s\n")
	if err != nil {
		t.Fatalf("kcat consume as bob: %v %s", err, stderr)
	}
	if !slices.Contains(strings.Split(out, "\n"), "v1") {
		t.Fatalf("kcat consume as bob: no record written by kcat in %q", out)
	}
}

// allow.everyone.if.no.acl.found=true: a resource no ACL matches is open
// to all; one with any ACL follows the ACLs.
func TestAuthzAllowEveryoneIfNoACL(t *testing.T) {
	addr := authzBroker(t, map[string]string{"allow.everyone.if.no.acl.found": "true"})
	ctx := testkit.Context(t, 60*time.Second)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	for _, tp := range []string{"open", "locked"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, tp); err != nil {
			t.Fatal(err)
		}
	}
	mustACL(t, adm, kadm.NewACLs().Allow("User:bob").Topics("locked").Operations(kadm.OpWrite))
	alice := userClient(t, addr, "alice")
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to a topic without ACLs: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "locked", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce to a topic with someone else's ACL: %v", err)
	}
	// No CLUSTER ACL: creating topics is open.
	if _, err := kadm.NewClient(alice).CreateTopic(ctx, 1, 1, nil, "alice-new"); err != nil {
		t.Fatalf("create topic with no cluster ACLs: %v", err)
	}
}

// Admin APIs follow their CLUSTER and topic operations.
func TestAuthzAdminACLs(t *testing.T) {
	addr := authzBroker(t, nil)
	ctx := testkit.Context(t, 60*time.Second)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "cfg"); err != nil {
		t.Fatal(err)
	}
	mustACL(t, adm, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpCreate, kadm.OpAlter, kadm.OpDescribe))
	mustACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("cfg").Operations(kadm.OpAlterConfigs, kadm.OpDelete))
	alice := kadm.NewClient(userClient(t, addr, "alice"))
	if _, err := alice.CreateTopic(ctx, 1, 1, nil, "by-alice"); err != nil {
		t.Fatalf("CREATE on CLUSTER: create topic: %v", err)
	}
	if d, err := alice.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts()); err != nil || len(d) != 1 || d[0].Err != nil || len(d[0].Described) != 5 {
		t.Fatalf("DESCRIBE on CLUSTER: describe ACLs: %v %+v", err, d)
	}
	res, err := alice.CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").Topics("cfg").Operations(kadm.OpRead))
	if err != nil || res[0].Err != nil {
		t.Fatalf("ALTER on CLUSTER: create ACLs: %v %+v", err, res)
	}
	ar, err := alice.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kmsg.StringPtr("60000")}}, "cfg")
	if err != nil || ar[0].Err != nil {
		t.Fatalf("ALTER_CONFIGS on topic: %v %+v", err, ar)
	}
	// ALTER_CONFIGS implies DESCRIBE_CONFIGS.
	dr, err := alice.DescribeTopicConfigs(ctx, "cfg")
	if err != nil || dr[0].Err != nil {
		t.Fatalf("describe configs with ALTER_CONFIGS: %v %+v", err, dr)
	}
	// by-alice has no ACL: its configs are refused.
	dr, err = alice.DescribeTopicConfigs(ctx, "by-alice")
	if err == nil && (len(dr) == 0 || !errors.Is(dr[0].Err, kerr.TopicAuthorizationFailed)) {
		t.Fatalf("describe configs without DESCRIBE_CONFIGS: %+v", dr)
	}
	// No ALTER on the topic: no new partitions.
	if cp, err := alice.CreatePartitions(ctx, 2, "cfg"); err != nil || !errors.Is(cp["cfg"].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("create partitions without ALTER: %v %+v", err, cp)
	}
	dt, err := alice.DeleteTopics(ctx, "cfg")
	if err != nil || dt["cfg"].Err != nil {
		t.Fatalf("DELETE on topic: delete: %v %+v", err, dt)
	}
}

// A 3-node cluster whose nodes authenticate to each other (and to the
// controllers) with SASL as User:admin, a super user, still replicates (acks=all with
// min.insync.replicas=3) and elects leaders; a client's ACLs are
// enforced on every broker.
func TestAuthzClusterSASLSuperUserBrokers(t *testing.T) {
	c := testkit.StartInProcCluster(t, 3, map[string]string{
		"listener.security.protocol.map":                  "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"sasl.enabled.mechanisms":                         "PLAIN",
		"sasl.mechanism.inter.broker.protocol":            "PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config":  authzJAAS,
		"sasl.mechanism.controller.protocol":              "PLAIN",
		"listener.name.controller.plain.sasl.jaas.config": authzJAAS,
		"authorizer.class.name":                           "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                     "User:admin",
		"min.insync.replicas":                             "3",
	})
	ctx := testkit.Context(t, 120*time.Second)
	admin := userClient(t, c.Bootstrap(), "admin", kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "replicated"); err != nil {
		t.Fatal(err)
	}
	mustACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("replicated").Operations(kadm.OpWrite))
	// The ACL reaches every broker with the metadata log.
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		for _, n := range c.Nodes {
			if len(n.Server.Image().ACLs) != 1 {
				return fmt.Errorf("node %d has %d ACLs", n.ID, len(n.Server.Image().ACLs))
			}
		}
		return nil
	})
	alice := userClient(t, c.Bootstrap(), "alice", kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 30 {
		if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "replicated", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d with min.insync.replicas=3: %v", i, err)
		}
	}
	bob := userClient(t, c.Bootstrap(), "bob")
	// No DESCRIBE: the topic's metadata is refused first.
	if err := bob.ProduceSync(ctx, &kgo.Record{Topic: "replicated", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob produce: %v", err)
	}
	// Admin requests forwarded to the active controller are authorized
	// on the broker the client reached: alice may not create topics
	// through any node, admin may.
	for _, n := range c.Nodes {
		for _, who := range []*kgo.Client{alice, admin} {
			ct := kmsg.NewPtrCreateTopicsRequest()
			ct.TimeoutMillis = 10000
			ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: fmt.Sprintf("via-%d-%p", n.ID, who), NumPartitions: 1, ReplicationFactor: 3}}
			got := raw(t, ctx, who, int(n.ID), ct).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
			want := int16(0)
			if who == alice {
				want = kerr.TopicAuthorizationFailed.Code
			}
			if got != want {
				t.Fatalf("create topic via node %d: %v, want %v", n.ID, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
			}
		}
	}
	// Preferred leader election (ALTER on CLUSTER: admin is super user).
	if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"replicated": {0: {}, 1: {}, 2: {}}}); err != nil {
		t.Fatalf("elect leaders: %v", err)
	}
	if _, err := kadm.NewClient(alice).ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"replicated": {0: {}}}); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice elect leaders: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	td, err := adm.ListTopics(ctx, "replicated")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["replicated"].Partitions {
		if len(p.ISR) != 3 || p.Leader < 0 {
			t.Fatalf("partition %d leader %d ISR %v, want a leader and all three replicas in sync", p.Partition, p.Leader, p.ISR)
		}
	}
}

// BenchmarkAuthzProduce: produce throughput over SASL_PLAINTEXT with the
// authorizer off, and on (the producer holds a literal WRITE ACL among
// 200 others), to show the per-request check is cheap.
func BenchmarkAuthzProduce(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "authorizer-off"
		props := map[string]string{"authorizer.class.name": ""}
		if on {
			name, props = "authorizer-on", nil
		}
		b.Run(name, func(b *testing.B) {
			addr := authzBroker(b, props)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			adm := kadm.NewClient(userClient(b, addr, "admin"))
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, "bench"); err != nil {
				b.Fatal(err)
			}
			if on {
				acls := kadm.NewACLs().Allow("User:alice").Topics("bench").Operations(kadm.OpWrite)
				mustACL(b, adm, acls)
				for i := range 200 {
					mustACL(b, adm, kadm.NewACLs().Allow("User:bob").Topics("t-"+string(rune('a'+i%26))+time.Now().Format("050000000")).Operations(kadm.OpRead))
				}
			}
			cl := userClient(b, addr, "alice", kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1), kgo.DisableIdempotentWrite())
			value := make([]byte, 100)
			b.ResetTimer()
			for range b.N {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bench", Value: value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// oneBatch is a v2 record batch holding one record, for raw Produce
// requests.
func oneBatch() []byte {
	rec := kmsg.Record{Value: []byte("v")}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // less its 1-byte length varint
	rb := rec.AppendTo(nil)
	b := kmsg.RecordBatch{FirstOffset: 0, Magic: 2, LastOffsetDelta: 0, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: rb}
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b.AppendTo(nil)
}
