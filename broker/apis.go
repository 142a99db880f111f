package broker

import (
	"context"
	"maps"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/group"
	"github.com/fjordhq/fjord/broker/protocol"
)

// apiVersions is what ApiVersions advertises and what the protocol layer
// accepts. Ranges follow Apache Kafka 4.4 (internal/kafkaref golden),
// except where noted:
//   - Produce is accepted from v3: v0-v2 carry message formats v0/v1,
//     which Fjord does not store. Like Kafka 4 (KAFKA-18659), ApiVersions
//     still advertises v0: librdkafka before 2.8 sends gzip, snappy and lz4
//     uncompressed to brokers whose Produce range does not start at 0.
//     Clients pick the highest common version, so v0-v2 are never sent by
//     a client that could use v3.
var apiVersions = map[int16]protocol.VersionRange{
	int16(kmsg.Produce):                    {Min: 3, Max: 13},
	int16(kmsg.Fetch):                      {Min: 4, Max: 18},
	int16(kmsg.ListOffsets):                {Min: 1, Max: 11},
	int16(kmsg.Metadata):                   {Min: 0, Max: 13},
	int16(kmsg.OffsetCommit):               {Min: 2, Max: 10},
	int16(kmsg.OffsetFetch):                {Min: 1, Max: 10},
	int16(kmsg.FindCoordinator):            {Min: 0, Max: 6},
	int16(kmsg.JoinGroup):                  {Min: 0, Max: 9},
	int16(kmsg.Heartbeat):                  {Min: 0, Max: 4},
	int16(kmsg.LeaveGroup):                 {Min: 0, Max: 5},
	int16(kmsg.SyncGroup):                  {Min: 0, Max: 5},
	int16(kmsg.DescribeGroups):             {Min: 0, Max: 6},
	int16(kmsg.ListGroups):                 {Min: 0, Max: 5},
	int16(kmsg.ApiVersions):                {Min: 0, Max: 5},
	int16(kmsg.CreateTopics):               {Min: 2, Max: 7},
	int16(kmsg.DeleteTopics):               {Min: 1, Max: 6},
	int16(kmsg.DeleteRecords):              {Min: 0, Max: 2},
	int16(kmsg.InitProducerID):             {Min: 0, Max: 5},
	int16(kmsg.OffsetForLeaderEpoch):       {Min: 2, Max: 4},
	int16(kmsg.DescribeConfigs):            {Min: 1, Max: 4},
	int16(kmsg.AlterConfigs):               {Min: 0, Max: 2},
	int16(kmsg.DescribeLogDirs):            {Min: 1, Max: 5},
	int16(kmsg.CreatePartitions):           {Min: 0, Max: 3},
	int16(kmsg.DeleteGroups):               {Min: 0, Max: 3},
	int16(kmsg.IncrementalAlterConfigs):    {Min: 0, Max: 1},
	int16(kmsg.OffsetDelete):               {Min: 0, Max: 0},
	int16(kmsg.DescribeCluster):            {Min: 0, Max: 2},
	int16(kmsg.DescribeProducers):          {Min: 0, Max: 0},
	int16(kmsg.ElectLeaders):               {Min: 0, Max: 2},
	int16(kmsg.AlterPartitionAssignments):  {Min: 0, Max: 1},
	int16(kmsg.ListPartitionReassignments): {Min: 0, Max: 0},
	int16(kmsg.UnregisterBroker):           {Min: 0, Max: 0},
	int16(kmsg.DescribeQuorum):             {Min: 0, Max: 2},
	// ACLs and SCRAM credentials, stored in the metadata log.
	int16(kmsg.DescribeACLs):                 {Min: 1, Max: 3},
	int16(kmsg.CreateACLs):                   {Min: 1, Max: 3},
	int16(kmsg.DeleteACLs):                   {Min: 1, Max: 3},
	int16(kmsg.DescribeUserSCRAMCredentials): {Min: 0, Max: 0},
	int16(kmsg.AlterUserSCRAMCredentials):    {Min: 0, Max: 0},
	// Client quotas (KIP-546), stored in the metadata log.
	int16(kmsg.DescribeClientQuotas): {Min: 0, Max: 1},
	int16(kmsg.AlterClientQuotas):    {Min: 0, Max: 1},
	// SASL: answered by broker/protocol, which owns a connection's
	// authentication state (KIP-43, KIP-152).
	int16(kmsg.SASLHandshake):    {Min: 0, Max: 1},
	int16(kmsg.SASLAuthenticate): {Min: 0, Max: 2},
}

// advertisedVersions is what ApiVersions answers: apiVersions, with
// Produce from v0 (see above).
var advertisedVersions = func() map[int16]protocol.VersionRange {
	m := maps.Clone(apiVersions)
	m[int16(kmsg.Produce)] = protocol.VersionRange{Min: 0, Max: apiVersions[int16(kmsg.Produce)].Max}
	return m
}()

// Handle dispatches one request to its API's handler.
// With an authorizer, the request is authorized first (authz.go), here
// before any forwarding; the controller listener authorizes what it is
// sent again, as the forwarding broker's principal
// (controller_security.go).
func (s *Server) Handle(ctx context.Context, c *protocol.Conn, req *protocol.Request) protocol.Response {
	return s.dispatchAuthorized(ctx, c, req)
}

// dispatchAuthorized authorizes a request as its connection's principal
// (when there is an authorizer), then forwards it or runs it here. The
// controller listener runs forwarded admin requests through it too.
func (s *Server) dispatchAuthorized(ctx context.Context, c *protocol.Conn, req *protocol.Request) protocol.Response {
	if s.authz == nil {
		if s.mustForward(req.Key) {
			return protocol.Response{Msg: s.forward(ctx, req.Body)}
		}
		return s.dispatch(ctx, c, req)
	}
	deny, post := s.authorize(c, req)
	if deny != nil {
		return *deny
	}
	if post != nil && req.Key == int16(kmsg.Fetch) {
		// Fetch responses cannot grow once encoded: handleFetch runs post.
		ctx = context.WithValue(ctx, fetchPostKey{}, post)
		post = nil
	}
	var resp protocol.Response
	if s.mustForward(req.Key) {
		resp = protocol.Response{Msg: s.forward(ctx, req.Body)}
	} else {
		resp = s.dispatch(ctx, c, req)
	}
	if post != nil && resp.Msg != nil {
		post(resp.Msg)
	}
	return resp
}

// dispatch runs a request's handler here (no forwarding).
func (s *Server) dispatch(ctx context.Context, c *protocol.Conn, req *protocol.Request) protocol.Response {
	var resp kmsg.Response
	switch req.Key {
	case int16(kmsg.JoinGroup), int16(kmsg.SyncGroup), int16(kmsg.DescribeGroups):
		host := ""
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			host = a.IP.String()
		}
		ctx = group.WithClient(ctx, req.ClientID, "/"+host)
	}
	switch r := req.Body.(type) {
	case *kmsg.ProduceRequest:
		return s.throttleProduce(c, req, s.handleProduce(r))
	case *kmsg.FetchRequest:
		return s.handleFetch(s.withFetchQuota(ctx, c, req, r), r)
	case *kmsg.ListOffsetsRequest:
		resp = s.handleListOffsets(r)
	case *kmsg.MetadataRequest:
		resp = s.handleMetadata(ctx, r, c.ListenerName())
	case *kmsg.OffsetCommitRequest:
		resp = s.groups.OffsetCommit(ctx, r)
	case *kmsg.OffsetFetchRequest:
		resp = s.groups.OffsetFetch(ctx, r)
	case *kmsg.FindCoordinatorRequest:
		resp = s.handleFindCoordinator(ctx, r, c.ListenerName())
	case *kmsg.JoinGroupRequest:
		resp = s.groups.JoinGroup(ctx, r)
	case *kmsg.HeartbeatRequest:
		resp = s.groups.Heartbeat(ctx, r)
	case *kmsg.LeaveGroupRequest:
		resp = s.groups.LeaveGroup(ctx, r)
	case *kmsg.SyncGroupRequest:
		resp = s.groups.SyncGroup(ctx, r)
	case *kmsg.DescribeGroupsRequest:
		resp = s.groups.DescribeGroups(ctx, r)
	case *kmsg.ListGroupsRequest:
		resp = s.groups.ListGroups(ctx, r)
	case *kmsg.ApiVersionsRequest:
		resp = s.handleApiVersions(r)
	case *kmsg.CreateTopicsRequest:
		resp = s.handleCreateTopics(ctx, r)
	case *kmsg.DeleteTopicsRequest:
		resp = s.handleDeleteTopics(ctx, r)
	case *kmsg.DeleteRecordsRequest:
		resp = s.handleDeleteRecords(r)
	case *kmsg.InitProducerIDRequest:
		resp = s.handleInitProducerID(ctx, r)
	case *kmsg.OffsetForLeaderEpochRequest:
		resp = s.handleOffsetForLeaderEpoch(r)
	case *kmsg.DescribeConfigsRequest:
		resp = s.handleDescribeConfigs(r)
	case *kmsg.AlterConfigsRequest:
		resp = s.handleAlterConfigs(ctx, r)
	case *kmsg.IncrementalAlterConfigsRequest:
		resp = s.handleIncrementalAlterConfigs(ctx, r)
	case *kmsg.DescribeLogDirsRequest:
		resp = s.handleDescribeLogDirs(r)
	case *kmsg.CreatePartitionsRequest:
		resp = s.handleCreatePartitions(ctx, r)
	case *kmsg.DeleteGroupsRequest:
		resp = s.groups.DeleteGroups(ctx, r)
	case *kmsg.OffsetDeleteRequest:
		resp = s.groups.OffsetDelete(ctx, r)
	case *kmsg.DescribeClusterRequest:
		resp = s.handleDescribeCluster(r, c.ListenerName())
	case *kmsg.DescribeProducersRequest:
		resp = s.handleDescribeProducers(r)
	case *kmsg.ElectLeadersRequest:
		resp = s.handleElectLeaders(ctx, r)
	case *kmsg.AlterPartitionAssignmentsRequest:
		resp = s.handleAlterPartitionAssignments(ctx, r)
	case *kmsg.ListPartitionReassignmentsRequest:
		resp = s.handleListPartitionReassignments(ctx, r)
	case *kmsg.UnregisterBrokerRequest:
		resp = s.handleUnregisterBroker(ctx, r)
	case *kmsg.DescribeQuorumRequest:
		resp = s.handleDescribeQuorum(ctx, r)
	case *kmsg.DescribeACLsRequest:
		resp = s.handleDescribeACLs(r)
	case *kmsg.CreateACLsRequest:
		resp = s.handleCreateACLs(ctx, r)
	case *kmsg.DeleteACLsRequest:
		resp = s.handleDeleteACLs(ctx, r)
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		resp = s.handleDescribeUserSCRAMCredentials(r)
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		resp = s.handleAlterUserSCRAMCredentials(ctx, r)
	case *kmsg.DescribeClientQuotasRequest:
		resp = s.handleDescribeClientQuotas(r)
	case *kmsg.AlterClientQuotasRequest:
		resp = s.handleAlterClientQuotas(ctx, r)
	default:
		// The protocol layer only passes advertised APIs; reaching here
		// is a bug in the table above.
		s.log.Error("no handler for advertised API", "key", req.Key)
		return protocol.Response{None: true, Close: true}
	}
	return protocol.Response{Msg: resp}
}
