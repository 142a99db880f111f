package broker

// Authorization rules of the topic APIs (see authz.go).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/protocol"
)

// Produce: WRITE on each topic (TOPIC_AUTHORIZATION_FAILED on each of its
// partitions); a transactional producer also needs WRITE on its
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the whole
// request). Idempotence needs nothing more here: Kafka checks it at
// InitProducerId.
func authzProduce(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ProduceRequest)
	if r.TransactionID != nil && !a.allowed(auth.OpWrite, auth.ResourceTransactionalID, *r.TransactionID) {
		if r.Acks == 0 {
			return &protocol.Response{None: true, Close: true}, nil
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTxnAuth.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return answer(resp), nil
	}
	img := a.s.image()
	names := make([]string, len(r.Topics))
	known := make([]bool, len(r.Topics))
	for i, t := range r.Topics {
		names[i], known[i] = topicName(img, t.Topic, t.TopicID, r.Version >= 13)
	}
	ok := a.allowedNames(auth.OpWrite, auth.ResourceTopic, names)
	var denied []kmsg.ProduceResponseTopic
	kept := r.Topics[:0:0]
	for i, t := range r.Topics {
		if !known[i] || ok[names[i]] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	if r.Acks == 0 {
		// Kafka closes an acks=0 connection on any error.
		return &protocol.Response{None: true, Close: true}, nil
	}
	if len(kept) == 0 {
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		resp.Topics = denied
		return answer(resp), nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.ProduceResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// Fetch: a follower (replica id set) needs CLUSTER_ACTION on the CLUSTER,
// else every partition is TOPIC_AUTHORIZATION_FAILED; a consumer needs
// READ on each topic. Refused topics are added by handleFetch.
func authzFetch(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.FetchRequest)
	img := a.s.image()
	var ok map[string]bool
	names := make([]string, len(r.Topics))
	known := make([]bool, len(r.Topics))
	for i, t := range r.Topics {
		names[i], known[i] = topicName(img, t.Topic, t.TopicID, r.Version >= 13)
	}
	replica := isReplicaFetch(r)
	replicaOK := replica && a.cluster(auth.OpClusterAction)
	if replicaOK {
		return nil, nil
	}
	if !replica {
		ok = a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	}
	var denied []kmsg.FetchResponseTopic
	kept := r.Topics[:0:0]
	for i, t := range r.Topics {
		if !replica && (!known[i] || ok[names[i]]) {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	if len(kept) == 0 {
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		resp.Topics = denied
		return answer(resp), nil
	}
	r.Topics = kept
	// Run by handleFetch before encoding (fetchPostKey): the response
	// carries file ranges spliced into its encoding, so it cannot grow
	// after.
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.FetchResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// ListOffsets: DESCRIBE on each topic.
func authzListOffsets(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ListOffsetsRequest)
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
	var denied []kmsg.ListOffsetsResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
			rp.Timestamp, rp.Offset = -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.ListOffsetsResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// Metadata: topics without DESCRIBE are left out of an all-topics answer
// and answered TOPIC_AUTHORIZATION_FAILED when named (whether or not they
// exist); a named topic that would be auto-created needs CREATE on the
// CLUSTER or on the topic. Authorized-operation bitfields are computed.
func authzMetadata(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.MetadataRequest)
	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	var denied []kmsg.MetadataResponseTopic
	clearAll := false
	if !all {
		img := a.s.image()
		names := make([]string, 0, len(r.Topics))
		for _, t := range r.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			} else if tp := img.TopicsByID[t.TopicID]; tp != nil {
				names = append(names, tp.Name)
			}
		}
		ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
		autoCreate := a.s.cfg.AutoCreateTopics && (r.Version < 4 || r.AllowAutoTopicCreation)
		var createOK map[string]bool
		clusterCreate := false
		var unCreate, unDescribe []kmsg.MetadataResponseTopic
		kept := r.Topics[:0:0]
		for _, t := range r.Topics {
			var name string
			if t.Topic != nil {
				name = *t.Topic
			} else if tp := img.TopicsByID[t.TopicID]; tp != nil {
				name = tp.Name
			} else {
				kept = append(kept, t) // unknown id: UNKNOWN_TOPIC_ID
				continue
			}
			mt := kmsg.NewMetadataResponseTopic()
			mt.ErrorCode, mt.AuthorizedOperations = errTopicAuth.Code, opsOmitted
			if !ok[name] {
				if t.Topic != nil {
					mt.Topic = t.Topic
				} else {
					mt.TopicID = t.TopicID // ids are not secret (KafkaApis)
				}
				unDescribe = append(unDescribe, mt)
				continue
			}
			if autoCreate && t.Topic != nil && img.Topics[name] == nil {
				if createOK == nil {
					clusterCreate = a.cluster(auth.OpCreate)
					createOK = map[string]bool{}
				}
				if !clusterCreate {
					c, seen := createOK[name]
					if !seen {
						c = a.allowed(auth.OpCreate, auth.ResourceTopic, name)
						createOK[name] = c
					}
					if !c {
						mt.Topic = t.Topic
						unCreate = append(unCreate, mt)
						continue
					}
				}
			}
			kept = append(kept, t)
		}
		denied = append(unCreate, unDescribe...)
		if len(kept) == 0 && r.Version == 0 {
			clearAll = true // an empty v0 list means all topics
		}
		r.Topics = kept
	}
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.MetadataResponse)
		if clearAll {
			resp.Topics = nil
		}
		if all && len(resp.Topics) > 0 {
			names := make([]string, len(resp.Topics))
			for i, t := range resp.Topics {
				names[i] = *t.Topic
			}
			ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
			resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.MetadataResponseTopic) bool { return !ok[*t.Topic] })
		}
		if r.IncludeTopicAuthorizedOperations {
			for i := range resp.Topics {
				if t := &resp.Topics[i]; t.Topic != nil {
					t.AuthorizedOperations = a.authorizedOps(auth.ResourceTopic, *t.Topic)
				}
			}
		}
		if r.IncludeClusterAuthorizedOperations {
			resp.AuthorizedOperations = opsOmitted
			if a.cluster(auth.OpDescribe) {
				resp.AuthorizedOperations = a.authorizedOps(auth.ResourceCluster, clusterResource)
			}
		}
		resp.Topics = append(resp.Topics, denied...)
	}
}

// CreateTopics: CREATE on the CLUSTER, or on each topic; the configs of
// a created topic are returned only with DESCRIBE_CONFIGS on it.
func authzCreateTopics(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.CreateTopicsRequest)
	var denied []kmsg.CreateTopicsResponseTopic
	if !a.cluster(auth.OpCreate) {
		names := make([]string, len(r.Topics))
		for i, t := range r.Topics {
			names[i] = t.Topic
		}
		ok := a.allowedNames(auth.OpCreate, auth.ResourceTopic, names)
		kept := r.Topics[:0:0]
		for _, t := range r.Topics {
			if ok[t.Topic] {
				kept = append(kept, t)
				continue
			}
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor = t.Topic, errTopicAuth.Code, -1, -1
			rt.ErrorMessage = errMsg(errTopicAuth)
			denied = append(denied, rt)
		}
		r.Topics = kept
	}
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.CreateTopicsResponse)
		names := make([]string, len(resp.Topics))
		for i, t := range resp.Topics {
			names[i] = t.Topic
		}
		ok := a.allowedNames(auth.OpDescribeConfigs, auth.ResourceTopic, names)
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.ErrorCode == 0 && !ok[t.Topic] {
				t.ConfigErrorCode, t.Configs = errTopicAuth.Code, nil
			}
		}
		resp.Topics = append(resp.Topics, denied...)
	}
}

// DeleteTopics: DELETE on each topic (named, or by id).
func authzDeleteTopics(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteTopicsRequest)
	img := a.s.image()
	var denied []kmsg.DeleteTopicsResponseTopic
	deny := func(name *string, id [16]byte) {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode = name, id, errTopicAuth.Code
		denied = append(denied, rt)
	}
	var names []string
	names = append(names, r.TopicNames...)
	for _, t := range r.Topics {
		if t.Topic != nil {
			names = append(names, *t.Topic)
		} else if tp := img.TopicsByID[t.TopicID]; tp != nil {
			names = append(names, tp.Name)
		}
	}
	ok := a.allowedNames(auth.OpDelete, auth.ResourceTopic, names)
	keptNames := r.TopicNames[:0:0]
	for _, n := range r.TopicNames {
		if ok[n] {
			keptNames = append(keptNames, n)
		} else {
			deny(kmsg.StringPtr(n), [16]byte{})
		}
	}
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		} else if tp := img.TopicsByID[t.TopicID]; tp != nil {
			name = tp.Name
		} else {
			kept = append(kept, t)
			continue
		}
		if ok[name] {
			kept = append(kept, t)
		} else {
			deny(t.Topic, t.TopicID)
		}
	}
	if denied == nil {
		return nil, nil
	}
	r.TopicNames, r.Topics = keptNames, kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DeleteTopicsResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// DeleteRecords: DELETE on each topic.
func authzDeleteRecords(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteRecordsRequest)
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpDelete, auth.ResourceTopic, names)
	var denied []kmsg.DeleteRecordsResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, errTopicAuth.Code, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DeleteRecordsResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// InitProducerId: WRITE on the transactional id; without one (an
// idempotent producer), IDEMPOTENT_WRITE on the CLUSTER or WRITE on some
// topic (Kafka 3+), else CLUSTER_AUTHORIZATION_FAILED.
func authzInitProducerID(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.InitProducerIDRequest)
	refuse := func(code int16) (*protocol.Response, func(kmsg.Response)) {
		resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return answer(resp), nil
	}
	if r.TransactionalID != nil {
		if !a.allowed(auth.OpWrite, auth.ResourceTransactionalID, *r.TransactionalID) {
			return refuse(errTxnAuth.Code)
		}
		return nil, nil
	}
	if !a.cluster(auth.OpIdempotentWrite) && !a.anyTopicAllowed(auth.OpWrite) {
		return refuse(errClusterAuth.Code)
	}
	return nil, nil
}

// OffsetForLeaderEpoch: CLUSTER_ACTION on the CLUSTER (followers), else
// DESCRIBE on each topic (consumers, KIP-320).
func authzOffsetForLeaderEpoch(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetForLeaderEpochRequest)
	if a.cluster(auth.OpClusterAction) {
		return nil, nil
	}
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpDescribe, auth.ResourceTopic, names)
	var denied []kmsg.OffsetForLeaderEpochResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, errTopicAuth.Code, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.OffsetForLeaderEpochResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// CreatePartitions: ALTER on each topic.
func authzCreatePartitions(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.CreatePartitionsRequest)
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpAlter, auth.ResourceTopic, names)
	var denied []kmsg.CreatePartitionsResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, errTopicAuth.Code
		rt.ErrorMessage = kmsg.StringPtr("The topic authorization is failed.") // Kafka's wording
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.CreatePartitionsResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}

// DescribeProducers: READ on each topic.
func authzDescribeProducers(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeProducersRequest)
	names := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		names[i] = t.Topic
	}
	ok := a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	var denied []kmsg.DescribeProducersResponseTopic
	kept := r.Topics[:0:0]
	for _, t := range r.Topics {
		if ok[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, errTopicAuth.Code, errMsg(errTopicAuth)
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if denied == nil {
		return nil, nil
	}
	r.Topics = kept
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.DescribeProducersResponse)
		resp.Topics = append(resp.Topics, denied...)
	}
}
