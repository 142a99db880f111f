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
	img := a.s.image()
	fail := func(t kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	}
	if !a.allowed(auth.OpRead, auth.ResourceGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, fail(t, errGroupAuth.Code))
		}
		return answer(resp), nil
	}
	names := make([]string, len(r.Topics))
	known := make([]bool, len(r.Topics))
	for i, t := range r.Topics {
		names[i], known[i] = topicName(img, t.Topic, t.TopicID, r.Version >= 10)
	}
	ok := a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	var denied []kmsg.OffsetCommitResponseTopic
	kept := r.Topics[:0:0]
	for i, t := range r.Topics {
		if !known[i] || ok[names[i]] {
			kept = append(kept, t)
			continue
		}
		denied = append(denied, fail(t, errTopicAuth.Code))
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.OffsetCommitResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// OffsetFetch: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), and
// offsets only of topics with DESCRIBE: left out of an all-topics answer,
// TOPIC_AUTHORIZATION_FAILED when named (KafkaApis).
func authzOffsetFetch(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetFetchRequest)
	img := a.s.image()
	if r.Version < 8 {
		if !a.allowed(auth.OpDescribe, auth.ResourceGroup, r.Group) {
			resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = errGroupAuth.Code
			for _, t := range r.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, errGroupAuth.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return answer(resp), nil
		}
		all := r.Topics == nil
		return nil, func(m kmsg.Response) {
			resp := m.(*kmsg.OffsetFetchResponse)
			names := make([]string, len(resp.Topics))
			for i, t := range resp.Topics {
				names[i] = t.Topic
			}
			ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
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
	var denied []kmsg.OffsetFetchResponseGroup
	kept := r.Groups[:0:0]
	allTopics := map[string]bool{}
	for _, g := range r.Groups {
		if a.allowed(auth.OpDescribe, auth.ResourceGroup, g.Group) {
			kept = append(kept, g)
			allTopics[g.Group] = g.Topics == nil
			continue
		}
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, errGroupAuth.Code
		denied = append(denied, rg)
	}
	if len(kept) == 0 {
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.Groups = denied
		return answer(resp), nil
	}
	r.Groups = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.OffsetFetchResponse)
		for gi := range resp.Groups {
			g := &resp.Groups[gi]
			names := make([]string, len(g.Topics))
			for i, t := range g.Topics {
				names[i], _ = topicName(img, t.Topic, t.TopicID, r.Version >= 10)
			}
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
		resp.Groups = append(resp.Groups, denied...)
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
	ok := a.allowedNames(auth.OpDescribe, rt, r.CoordinatorKeys)
	var denied []kmsg.FindCoordinatorResponseCoordinator
	kept := r.CoordinatorKeys[:0:0]
	for _, k := range r.CoordinatorKeys {
		if ok[k] {
			kept = append(kept, k)
			continue
		}
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port, c.ErrorCode, c.ErrorMessage = k, -1, -1, e.Code, errMsg(e)
		denied = append(denied, c)
	}
	if denied == nil {
		return nil, nil
	}
	if len(kept) == 0 {
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.Coordinators = denied
		return answer(resp), nil
	}
	r.CoordinatorKeys = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.FindCoordinatorResponse)
		resp.Coordinators = append(resp.Coordinators, denied...)
	}
}

// DescribeGroups: DESCRIBE on each group; authorized operations computed.
func authzDescribeGroups(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeGroupsRequest)
	ok := a.allowedNames(auth.OpDescribe, auth.ResourceGroup, r.Groups)
	var denied []kmsg.DescribeGroupsResponseGroup
	kept := r.Groups[:0:0]
	for _, g := range r.Groups {
		if ok[g] {
			kept = append(kept, g)
			continue
		}
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.ErrorCode, dg.AuthorizedOperations = g, errGroupAuth.Code, opsOmitted
		if r.Version >= 6 {
			dg.ErrorMessage = errMsg(errGroupAuth)
		}
		denied = append(denied, dg)
	}
	r.Groups = kept
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
		names := make([]string, len(resp.Groups))
		for i, g := range resp.Groups {
			names[i] = g.Group
		}
		ok := a.allowedNames(auth.OpDescribe, auth.ResourceGroup, names)
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !ok[g.Group] })
	}
}

// DeleteGroups: DELETE on each group.
func authzDeleteGroups(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteGroupsRequest)
	ok := a.allowedNames(auth.OpDelete, auth.ResourceGroup, r.Groups)
	var denied []kmsg.DeleteGroupsResponseGroup
	kept := r.Groups[:0:0]
	for _, g := range r.Groups {
		if ok[g] {
			kept = append(kept, g)
			continue
		}
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group, dg.ErrorCode = g, errGroupAuth.Code
		denied = append(denied, dg)
	}
	if denied == nil {
		return nil, nil
	}
	r.Groups = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DeleteGroupsResponse)
		resp.Groups = append(resp.Groups, denied...)
	}
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
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	var denied []kmsg.OffsetDeleteResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.OffsetDeleteResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
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

// DescribeConfigs: DESCRIBE_CONFIGS on each resource.
func authzDescribeConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeConfigsRequest)
	var denied []kmsg.DescribeConfigsResponseResource
	kept := r.Resources[:0:0]
	for _, res := range r.Resources {
		rt, name, code, known := configResource(res.ResourceType, res.ResourceName)
		if !known || a.allowed(auth.OpDescribeConfigs, rt, name) {
			kept = append(kept, res)
			continue
		}
		d := kmsg.NewDescribeConfigsResponseResource()
		d.ResourceType, d.ResourceName, d.ErrorCode = res.ResourceType, res.ResourceName, code
		denied = append(denied, d)
	}
	if denied == nil {
		return nil, nil
	}
	r.Resources = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DescribeConfigsResponse)
		resp.Resources = append(resp.Resources, denied...)
	}
}

// AlterConfigs: ALTER_CONFIGS on each resource.
func authzAlterConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.AlterConfigsRequest)
	var denied []kmsg.AlterConfigsResponseResource
	kept := r.Resources[:0:0]
	for _, res := range r.Resources {
		rt, name, code, known := configResource(res.ResourceType, res.ResourceName)
		if !known || a.allowed(auth.OpAlterConfigs, rt, name) {
			kept = append(kept, res)
			continue
		}
		d := kmsg.NewAlterConfigsResponseResource()
		d.ResourceType, d.ResourceName, d.ErrorCode = res.ResourceType, res.ResourceName, code
		denied = append(denied, d)
	}
	if denied == nil {
		return nil, nil
	}
	r.Resources = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.AlterConfigsResponse)
		resp.Resources = append(resp.Resources, denied...)
	}
}

// IncrementalAlterConfigs: ALTER_CONFIGS on each resource.
func authzIncrementalAlterConfigs(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.IncrementalAlterConfigsRequest)
	var denied []kmsg.IncrementalAlterConfigsResponseResource
	kept := r.Resources[:0:0]
	for _, res := range r.Resources {
		rt, name, code, known := configResource(res.ResourceType, res.ResourceName)
		if !known || a.allowed(auth.OpAlterConfigs, rt, name) {
			kept = append(kept, res)
			continue
		}
		d := kmsg.NewIncrementalAlterConfigsResponseResource()
		d.ResourceType, d.ResourceName, d.ErrorCode = res.ResourceType, res.ResourceName, code
		denied = append(denied, d)
	}
	if denied == nil {
		return nil, nil
	}
	r.Resources = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.IncrementalAlterConfigsResponse)
		resp.Resources = append(resp.Resources, denied...)
	}
}
