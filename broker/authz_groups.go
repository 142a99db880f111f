package broker

// Authorization rules of the group, config and cluster APIs (see
// authz.go).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/protocol"
)

// OffsetCommit: READ on the group (GROUP_AUTHORIZATION_FAILED on every
// partition), READ on each topic.
func authzOffsetCommit(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetCommitRequest)
	fail := func(t kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		rt.Partitions = failEach(t.Partitions, func(p kmsg.OffsetCommitRequestTopicPartition) kmsg.OffsetCommitResponseTopicPartition {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			return rp
		})
		return rt
	}
	if !a.allowed(auth.OpRead, auth.ResourceGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, fail(t, errGroupAuth.Code))
		}
		return answer(resp), nil
	}
	names, known := topicNamesOf(a, r.Topics, func(t kmsg.OffsetCommitRequestTopic) (string, [16]byte) { return t.Topic, t.TopicID }, r.Version >= 10)
	ok := a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	kept, denied := splitAllowed(r.Topics, func(i int, _ kmsg.OffsetCommitRequestTopic) bool { return !known[i] || ok[names[i]] },
		func(t kmsg.OffsetCommitRequestTopic) kmsg.OffsetCommitResponseTopic {
			return fail(t, errTopicAuth.Code)
		})
	return passDenied(denied, func() { r.Topics = kept }, func(m *kmsg.OffsetCommitResponse) *[]kmsg.OffsetCommitResponseTopic { return &m.Topics })
}

// OffsetFetch: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), and
// offsets only of topics with DESCRIBE: left out of an all-topics answer,
// TOPIC_AUTHORIZATION_FAILED when named (KafkaApis).
func authzOffsetFetch(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetFetchRequest)
	if r.Version < 8 {
		if !a.allowed(auth.OpDescribe, auth.ResourceGroup, r.Group) {
			resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = errGroupAuth.Code
			for _, t := range r.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				rt.Partitions = failEach(t.Partitions, func(p int32) kmsg.OffsetFetchResponseTopicPartition {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, errGroupAuth.Code
					return rp
				})
				resp.Topics = append(resp.Topics, rt)
			}
			return answer(resp), nil
		}
		all := r.Topics == nil
		return nil, func(m kmsg.Response) {
			resp := m.(*kmsg.OffsetFetchResponse)
			ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, namesOf(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) string { return t.Topic }))
			if all {
				resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return !ok[t.Topic] })
				return
			}
			for i := range resp.Topics {
				if t := &resp.Topics[i]; !ok[t.Topic] {
					for j := range t.Partitions {
						p := &t.Partitions[j]
						p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), errTopicAuth.Code
					}
				}
			}
		}
	}
	allTopics := map[string]bool{}
	kept, denied := splitAllowed(r.Groups, func(_ int, g kmsg.OffsetFetchRequestGroup) bool {
		allTopics[g.Group] = g.Topics == nil
		return a.allowed(auth.OpDescribe, auth.ResourceGroup, g.Group)
	}, func(g kmsg.OffsetFetchRequestGroup) kmsg.OffsetFetchResponseGroup {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, errGroupAuth.Code
		return rg
	})
	field := func(m *kmsg.OffsetFetchResponse) *[]kmsg.OffsetFetchResponseGroup { return &m.Groups }
	if len(kept) == 0 {
		return answerDenied(r, denied, field), nil
	}
	r.Groups = kept
	addDenied := appendDenied(denied, field)
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.OffsetFetchResponse)
		for gi := range resp.Groups {
			g := &resp.Groups[gi]
			names, _ := topicNamesOf(a, g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) (string, [16]byte) { return t.Topic, t.TopicID }, r.Version >= 10)
			ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
			if allTopics[g.Group] {
				i := 0
				g.Topics = slices.DeleteFunc(g.Topics, func(kmsg.OffsetFetchResponseGroupTopic) bool { i++; return !ok[names[i-1]] })
				continue
			}
			for i := range g.Topics {
				if !ok[names[i]] {
					t := &g.Topics[i]
					for j := range t.Partitions {
						p := &t.Partitions[j]
						p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), errTopicAuth.Code
					}
				}
			}
		}
		addDenied(m)
	}
}

// FindCoordinator: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or
// on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
func authzFindCoordinator(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.FindCoordinatorRequest)
	rt, e := auth.ResourceGroup, errGroupAuth
	switch r.CoordinatorType {
	case 0:
	case 1:
		rt, e = auth.ResourceTransactionalID, errTxnAuth
	default:
		return nil, nil // the handler refuses unknown key types
	}
	if r.Version < 4 {
		if a.allowed(auth.OpDescribe, rt, r.CoordinatorKey) {
			return nil, nil
		}
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Port = e.Code, errMsg(e), -1, -1
		return answer(resp), nil
	}
	kept, denied := splitByName(a, auth.OpDescribe, rt, r.CoordinatorKeys, nameIs, func(k string) kmsg.FindCoordinatorResponseCoordinator {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port, c.ErrorCode, c.ErrorMessage = k, -1, -1, e.Code, errMsg(e)
		return c
	})
	field := func(m *kmsg.FindCoordinatorResponse) *[]kmsg.FindCoordinatorResponseCoordinator {
		return &m.Coordinators
	}
	if denied != nil && len(kept) == 0 {
		return answerDenied(r, denied, field), nil
	}
	return passDenied(denied, func() { r.CoordinatorKeys = kept }, field)
}

// DescribeGroups: DESCRIBE on each group; authorized operations computed.
func authzDescribeGroups(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeGroupsRequest)
	var denied []kmsg.DescribeGroupsResponseGroup
	r.Groups, denied = splitByName(a, auth.OpDescribe, auth.ResourceGroup, r.Groups, nameIs, func(g string) kmsg.DescribeGroupsResponseGroup {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.ErrorCode, dg.AuthorizedOperations = g, errGroupAuth.Code, opsOmitted
		if r.Version >= 6 {
			dg.ErrorMessage = errMsg(errGroupAuth)
		}
		return dg
	})
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DescribeGroupsResponse)
		if r.IncludeAuthorizedOperations {
			for i := range resp.Groups {
				resp.Groups[i].AuthorizedOperations = a.authorizedOps(auth.ResourceGroup, resp.Groups[i].Group)
			}
		}
		resp.Groups = append(resp.Groups, denied...)
	}
}

// ListGroups: every group with DESCRIBE on the CLUSTER, else only the
// groups with DESCRIBE on them.
func authzListGroups(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	if a.cluster(auth.OpDescribe) {
		return nil, nil
	}
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.ListGroupsResponse)
		ok := a.allowedNames(auth.OpDescribe, auth.ResourceGroup, namesOf(resp.Groups, func(g kmsg.ListGroupsResponseGroup) string { return g.Group }))
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !ok[g.Group] })
	}
}

// DeleteGroups: DELETE on each group.
func authzDeleteGroups(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteGroupsRequest)
	kept, denied := splitByName(a, auth.OpDelete, auth.ResourceGroup, r.Groups, nameIs, func(g string) kmsg.DeleteGroupsResponseGroup {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group, dg.ErrorCode = g, errGroupAuth.Code
		return dg
	})
	return passDenied(denied, func() { r.Groups = kept }, func(m *kmsg.DeleteGroupsResponse) *[]kmsg.DeleteGroupsResponseGroup { return &m.Groups })
}

// OffsetDelete: DELETE on the group (GROUP_AUTHORIZATION_FAILED), READ on
// each topic.
func authzOffsetDelete(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetDeleteRequest)
	if !a.allowed(auth.OpDelete, auth.ResourceGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = errGroupAuth.Code
		return answer(resp), nil
	}
	kept, denied := splitByName(a, auth.OpRead, auth.ResourceTopic, r.Topics, func(t kmsg.OffsetDeleteRequestTopic) string { return t.Topic },
		func(t kmsg.OffsetDeleteRequestTopic) kmsg.OffsetDeleteResponseTopic {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			rt.Partitions = failEach(t.Partitions, func(p kmsg.OffsetDeleteRequestTopicPartition) kmsg.OffsetDeleteResponseTopicPartition {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
				return rp
			})
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept }, func(m *kmsg.OffsetDeleteResponse) *[]kmsg.OffsetDeleteResponseTopic { return &m.Topics })
}

// DescribeCluster: no check; the cluster's authorized operations only
// with DESCRIBE on the CLUSTER, else 0 (AuthHelper).
func authzDescribeCluster(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeClusterRequest)
	if !r.IncludeClusterAuthorizedOperations {
		return nil, nil
	}
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DescribeClusterResponse)
		if resp.ErrorCode != 0 {
			return
		}
		resp.ClusterAuthorizedOperations = 0
		if a.cluster(auth.OpDescribe) {
			resp.ClusterAuthorizedOperations = a.authorizedOps(auth.ResourceCluster, clusterResource)
		}
	}
}

// configResource maps a config resource to the ACL resource Kafka checks
// and the error it answers (ConfigHelper / KafkaApis): topics are checked
// on the topic, brokers, broker loggers and client metrics on the
// CLUSTER, groups on the group. ok is false for types the handler
// refuses anyway.
func configResource(t kmsg.ConfigResourceType, name string) (rt auth.ResourceType, rname string, code int16, ok bool) {
	switch t {
	case 2: // TOPIC
		return auth.ResourceTopic, name, errTopicAuth.Code, true
	case 4, 8, 16: // BROKER, BROKER_LOGGER, CLIENT_METRICS
		return auth.ResourceCluster, clusterResource, errClusterAuth.Code, true
	case 32: // GROUP
		return auth.ResourceGroup, name, errGroupAuth.Code, true
	}
	return 0, "", 0, false
}

// splitConfigs splits config resources on op (checked on the resource
// configResource names); a denied one gets deny's entry with the error
// code Kafka answers for its type.
func splitConfigs[T, D any](a *authzReq, items []T, op auth.Operation, id func(T) (kmsg.ConfigResourceType, string),
	deny func(kmsg.ConfigResourceType, string, int16) D) (kept []T, denied []D) {
	return splitAllowed(items, func(_ int, t T) bool {
		rt, name, _, known := configResource(id(t))
		return !known || a.allowed(op, rt, name)
	}, func(t T) D {
		typ, name := id(t)
		_, _, code, _ := configResource(typ, name)
		return deny(typ, name, code)
	})
}

// DescribeConfigs: DESCRIBE_CONFIGS on each resource.
func authzDescribeConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeConfigsRequest)
	kept, denied := splitConfigs(a, r.Resources, auth.OpDescribeConfigs,
		func(res kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		},
		func(t kmsg.ConfigResourceType, name string, code int16) kmsg.DescribeConfigsResponseResource {
			d := kmsg.NewDescribeConfigsResponseResource()
			d.ResourceType, d.ResourceName, d.ErrorCode = t, name, code
			return d
		})
	return passDenied(denied, func() { r.Resources = kept }, func(m *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource { return &m.Resources })
}

// AlterConfigs: ALTER_CONFIGS on each resource.
func authzAlterConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.AlterConfigsRequest)
	kept, denied := splitConfigs(a, r.Resources, auth.OpAlterConfigs,
		func(res kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		},
		func(t kmsg.ConfigResourceType, name string, code int16) kmsg.AlterConfigsResponseResource {
			d := kmsg.NewAlterConfigsResponseResource()
			d.ResourceType, d.ResourceName, d.ErrorCode = t, name, code
			return d
		})
	return passDenied(denied, func() { r.Resources = kept }, func(m *kmsg.AlterConfigsResponse) *[]kmsg.AlterConfigsResponseResource { return &m.Resources })
}

// IncrementalAlterConfigs: ALTER_CONFIGS on each resource.
func authzIncrementalAlterConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.IncrementalAlterConfigsRequest)
	kept, denied := splitConfigs(a, r.Resources, auth.OpAlterConfigs,
		func(res kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		},
		func(t kmsg.ConfigResourceType, name string, code int16) kmsg.IncrementalAlterConfigsResponseResource {
			d := kmsg.NewIncrementalAlterConfigsResponseResource()
			d.ResourceType, d.ResourceName, d.ErrorCode = t, name, code
			return d
		})
	return passDenied(denied, func() { r.Resources = kept },
		func(m *kmsg.IncrementalAlterConfigsResponse) *[]kmsg.IncrementalAlterConfigsResponseResource {
			return &m.Resources
		})
}
