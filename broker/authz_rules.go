package broker

// authzRules: which operation on which resource each API needs, following
// Kafka's KafkaApis/ControllerApis and the "Operations and Resources on
// Protocols" table. Every key in apiVersions must have a rule
// (TestAuthzRuleForEveryAPI).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
)

var authzRules = map[int16]authzRule{
	int16(kmsg.Produce):         authzProduce,
	int16(kmsg.Fetch):           authzFetch,
	int16(kmsg.ListOffsets):     authzListOffsets,
	int16(kmsg.Metadata):        authzMetadata,
	int16(kmsg.OffsetCommit):    authzOffsetCommit,
	int16(kmsg.OffsetFetch):     authzOffsetFetch,
	int16(kmsg.FindCoordinator): authzFindCoordinator,
	int16(kmsg.JoinGroup): groupOp(auth.OpRead, func(r kmsg.Request) string { return r.(*kmsg.JoinGroupRequest).Group }, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = errGroupAuth.Code, -1
		return resp
	}),
	int16(kmsg.Heartbeat): groupOp(auth.OpRead, func(r kmsg.Request) string { return r.(*kmsg.HeartbeatRequest).Group }, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = errGroupAuth.Code
		return resp
	}),
	int16(kmsg.LeaveGroup): groupOp(auth.OpRead, func(r kmsg.Request) string { return r.(*kmsg.LeaveGroupRequest).Group }, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = errGroupAuth.Code
		return resp
	}),
	int16(kmsg.SyncGroup): groupOp(auth.OpRead, func(r kmsg.Request) string { return r.(*kmsg.SyncGroupRequest).Group }, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = errGroupAuth.Code
		return resp
	}),
	int16(kmsg.DescribeGroups):          authzDescribeGroups,
	int16(kmsg.ListGroups):              authzListGroups,
	int16(kmsg.SASLHandshake):           none,
	int16(kmsg.ApiVersions):             none,
	int16(kmsg.SASLAuthenticate):        none,
	int16(kmsg.CreateTopics):            authzCreateTopics,
	int16(kmsg.DeleteTopics):            authzDeleteTopics,
	int16(kmsg.DeleteRecords):           authzDeleteRecords,
	int16(kmsg.InitProducerID):          authzInitProducerID,
	int16(kmsg.OffsetForLeaderEpoch):    authzOffsetForLeaderEpoch,
	int16(kmsg.DescribeConfigs):         authzDescribeConfigs,
	int16(kmsg.AlterConfigs):            authzAlterConfigs,
	int16(kmsg.IncrementalAlterConfigs): authzIncrementalAlterConfigs,
	int16(kmsg.DescribeLogDirs): clusterOp(auth.OpDescribe, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.ErrorCode = errClusterAuth.Code
		return resp
	}),
	int16(kmsg.CreatePartitions):  authzCreatePartitions,
	int16(kmsg.DeleteGroups):      authzDeleteGroups,
	int16(kmsg.OffsetDelete):      authzOffsetDelete,
	int16(kmsg.DescribeCluster):   authzDescribeCluster,
	int16(kmsg.DescribeProducers): authzDescribeProducers,
	int16(kmsg.ElectLeaders): clusterOp(auth.OpAlter, func(r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.ElectLeadersRequest)
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = errClusterAuth.Code
		for _, t := range req.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, errClusterAuth.Code, errMsg(errClusterAuth)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}),
	int16(kmsg.AlterPartitionAssignments): clusterOp(auth.OpAlter, func(r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.AlterPartitionAssignmentsRequest)
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		for _, t := range req.Topics {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, errClusterAuth.Code, errMsg(errClusterAuth)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}),
	int16(kmsg.ListPartitionReassignments): clusterOp(auth.OpDescribe, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		return resp
	}),
	// KafkaApis.handleDescribeQuorum: DESCRIBE on CLUSTER.
	int16(kmsg.DescribeQuorum): clusterOp(auth.OpDescribe, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.ErrorCode = errClusterAuth.Code
		if r.GetVersion() >= 2 {
			resp.ErrorMessage = errMsg(errClusterAuth)
		}
		return resp
	}),
	// ControllerApis.handleUnregisterBroker: ALTER on CLUSTER.
	int16(kmsg.UnregisterBroker): clusterOp(auth.OpAlter, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.UnregisterBrokerResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		return resp
	}),
	int16(kmsg.DescribeACLs): clusterOp(auth.OpDescribe, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		return resp
	}),
	int16(kmsg.CreateACLs):                clusterOp(auth.OpAlter, refuseSecurity),
	int16(kmsg.DeleteACLs):                clusterOp(auth.OpAlter, refuseSecurity),
	int16(kmsg.AlterUserSCRAMCredentials): clusterOp(auth.OpAlter, refuseSecurity),
	int16(kmsg.DescribeUserSCRAMCredentials): clusterOp(auth.OpDescribe, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		return resp
	}),
	// KafkaApis.handleDescribeClientQuotasRequest: DESCRIBE_CONFIGS on
	// CLUSTER; ControllerApis.handleAlterClientQuotas: ALTER_CONFIGS on
	// CLUSTER.
	int16(kmsg.DescribeClientQuotas): clusterOp(auth.OpDescribeConfigs, func(r kmsg.Request) kmsg.Response {
		resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth.Code, errMsg(errClusterAuth)
		return resp
	}),
	int16(kmsg.AlterClientQuotas): clusterOp(auth.OpAlterConfigs, func(r kmsg.Request) kmsg.Response {
		return quotaErrorResponse(r.(*kmsg.AlterClientQuotasRequest), errClusterAuth.Code, errClusterAuth.Description)
	}),
}

// refuseSecurity answers every entity of an ACL or credential change with
// CLUSTER_AUTHORIZATION_FAILED.
func refuseSecurity(r kmsg.Request) kmsg.Response {
	resp, _ := securityErrorResponse(r, errClusterAuth.Code, errClusterAuth.Description)
	return resp
}
