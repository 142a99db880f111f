package broker

// Authorization rules of the topic APIs (see authz.go).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/protocol"
)

// Most rules share one shape: split a request's entities (topics, groups,
// resources) into those allowed and those denied, let the handler answer
// the allowed ones and add an error entry for each denied one to its
// answer. These helpers are that shape; each rule says what is checked
// and what a denied entry looks like.

// splitAllowed splits a request's entities: those allow lets through are
// kept (in a new slice), the others are answered with deny's entry.
// denied is nil when everything passed.
func splitAllowed[T, D any](items []T, allow func(i int, t T) bool, deny func(T) D) (kept []T, denied []D) {
	kept = items[:0:0]
	for i, t := range items {
		if allow(i, t) {
			kept = append(kept, t)
			continue
		}
		denied = append(denied, deny(t))
	}
	return kept, denied
}

// splitByName is splitAllowed for entities checked by name: op on the
// resource of type rt each is named after, in one authorizer call.
func splitByName[T, D any](a *authzReq, op auth.Operation, rt auth.ResourceType, items []T, name func(T) string, deny func(T) D) (kept []T, denied []D) {
	ok := a.allowedNames(op, rt, namesOf(items, name))
	return splitAllowed(items, func(_ int, t T) bool { return ok[name(t)] }, deny)
}

// nameIs names an entity that is its name (a group id, a coordinator key).
func nameIs(s string) string { return s }

// passDenied ends a rule: nothing to do when every entity was allowed;
// else keep hands the allowed ones to the handler (trimming the request)
// and the denied entries are added to its answer's list (field).
func passDenied[R kmsg.Response, D any](denied []D, keep func(), field func(R) *[]D) (*protocol.Response, func(kmsg.Response)) {
	if denied == nil {
		return nil, nil
	}
	keep()
	return nil, appendDenied(denied, field)
}

// appendDenied adds the denied entries to the handler's answer.
func appendDenied[R kmsg.Response, D any](denied []D, field func(R) *[]D) func(kmsg.Response) {
	return func(m kmsg.Response) {
		f := field(m.(R))
		*f = append(*f, denied...)
	}
}

// answerDenied answers req with the denied entries alone, for the rules
// that do not run the handler when nothing is left of the request.
func answerDenied[R kmsg.Response, D any](req kmsg.Request, denied []D, field func(R) *[]D) *protocol.Response {
	resp := req.ResponseKind().(R)
	*field(resp) = denied
	return answer(resp)
}

// namesOf lists the entities' names, for allowedNames.
func namesOf[T any](items []T, name func(T) string) []string {
	names := make([]string, len(items))
	for i, t := range items {
		names[i] = name(t)
	}
	return names
}

// failEach is a denied entity's per-partition entries.
func failEach[P, R any](ps []P, fail func(P) R) []R {
	var out []R
	for _, p := range ps {
		out = append(out, fail(p))
	}
	return out
}

// topicNamesOf resolves the topics of a request that names them or
// (from version byID on) gives their ids; known is false for an id this
// broker does not know (the handler answers UNKNOWN_TOPIC_ID).
func topicNamesOf[T any](a *authzReq, items []T, nameID func(T) (string, [16]byte), byID bool) (names []string, known []bool) {
	img := a.s.image()
	names, known = make([]string, len(items)), make([]bool, len(items))
	for i, t := range items {
		name, id := nameID(t)
		names[i], known[i] = topicName(img, name, id, byID)
	}
	return names, known
}

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
	names, known := topicNamesOf(a, r.Topics, func(t kmsg.ProduceRequestTopic) (string, [16]byte) { return t.Topic, t.TopicID }, r.Version >= 13)
	ok := a.allowedNames(auth.OpWrite, auth.ResourceTopic, names)
	kept, denied := splitAllowed(r.Topics, func(i int, _ kmsg.ProduceRequestTopic) bool { return !known[i] || ok[names[i]] },
		func(t kmsg.ProduceRequestTopic) kmsg.ProduceResponseTopic {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			rt.Partitions = failEach(t.Partitions, func(p kmsg.ProduceRequestTopicPartition) kmsg.ProduceResponseTopicPartition {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
				return rp
			})
			return rt
		})
	field := func(m *kmsg.ProduceResponse) *[]kmsg.ProduceResponseTopic { return &m.Topics }
	switch {
	case denied == nil:
		return nil, nil
	case r.Acks == 0:
		// Kafka closes an acks=0 connection on any error.
		return &protocol.Response{None: true, Close: true}, nil
	case len(kept) == 0:
		return answerDenied(r, denied, field), nil
	}
	return passDenied(denied, func() { r.Topics = kept }, field)
}

// Fetch: a follower (replica id set) needs CLUSTER_ACTION on the CLUSTER,
// else every partition is TOPIC_AUTHORIZATION_FAILED; a consumer needs
// READ on each topic. Refused topics are added by handleFetch.
func authzFetch(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.FetchRequest)
	names, known := topicNamesOf(a, r.Topics, func(t kmsg.FetchRequestTopic) (string, [16]byte) { return t.Topic, t.TopicID }, r.Version >= 13)
	replica := isReplicaFetch(r)
	if replica && a.cluster(auth.OpClusterAction) {
		return nil, nil
	}
	var ok map[string]bool
	if !replica {
		ok = a.allowedNames(auth.OpRead, auth.ResourceTopic, names)
	}
	kept, denied := splitAllowed(r.Topics, func(i int, _ kmsg.FetchRequestTopic) bool { return !replica && (!known[i] || ok[names[i]]) },
		func(t kmsg.FetchRequestTopic) kmsg.FetchResponseTopic {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			rt.Partitions = failEach(t.Partitions, func(p kmsg.FetchRequestTopicPartition) kmsg.FetchResponseTopicPartition {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth.Code
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
				return rp
			})
			return rt
		})
	field := func(m *kmsg.FetchResponse) *[]kmsg.FetchResponseTopic { return &m.Topics }
	if denied != nil && len(kept) == 0 {
		return answerDenied(r, denied, field), nil
	}
	// The post function is run by handleFetch before encoding
	// (fetchPostKey): the response carries file ranges spliced into its
	// encoding, so it cannot grow after.
	return passDenied(denied, func() { r.Topics = kept }, field)
}

// ListOffsets: DESCRIBE on each topic.
func authzListOffsets(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ListOffsetsRequest)
	kept, denied := splitByName(a, auth.OpDescribe, auth.ResourceTopic, r.Topics, func(t kmsg.ListOffsetsRequestTopic) string { return t.Topic },
		func(t kmsg.ListOffsetsRequestTopic) kmsg.ListOffsetsResponseTopic {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			rt.Partitions = failEach(t.Partitions, func(p kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsResponseTopicPartition {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.Timestamp, rp.Offset = p.Partition, errTopicAuth.Code, -1, -1
				return rp
			})
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept }, func(m *kmsg.ListOffsetsResponse) *[]kmsg.ListOffsetsResponseTopic { return &m.Topics })
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
		r.Topics, denied = splitByName(a, auth.OpCreate, auth.ResourceTopic, r.Topics, func(t kmsg.CreateTopicsRequestTopic) string { return t.Topic },
			func(t kmsg.CreateTopicsRequestTopic) kmsg.CreateTopicsResponseTopic {
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor = t.Topic, errTopicAuth.Code, -1, -1
				rt.ErrorMessage = errMsg(errTopicAuth)
				return rt
			})
	}
	return nil, func(m kmsg.Response) {
		resp := m.(*kmsg.CreateTopicsResponse)
		ok := a.allowedNames(auth.OpDescribeConfigs, auth.ResourceTopic, namesOf(resp.Topics, func(t kmsg.CreateTopicsResponseTopic) string { return t.Topic }))
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
	deny := func(name *string, id [16]byte) kmsg.DeleteTopicsResponseTopic {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode = name, id, errTopicAuth.Code
		return rt
	}
	// v6+ names topics or gives ids; known is false for an unknown id
	// (the handler answers UNKNOWN_TOPIC_ID).
	names, known := make([]string, len(r.Topics)), make([]bool, len(r.Topics))
	for i, t := range r.Topics {
		if t.Topic != nil {
			names[i], known[i] = *t.Topic, true
		} else if tp := img.TopicsByID[t.TopicID]; tp != nil {
			names[i], known[i] = tp.Name, true
		}
	}
	check := slices.Clone(r.TopicNames)
	for i, n := range names {
		if known[i] {
			check = append(check, n)
		}
	}
	ok := a.allowedNames(auth.OpDelete, auth.ResourceTopic, check)
	keptNames, denied := splitAllowed(r.TopicNames, func(_ int, n string) bool { return ok[n] },
		func(n string) kmsg.DeleteTopicsResponseTopic { return deny(kmsg.StringPtr(n), [16]byte{}) })
	kept, deniedByID := splitAllowed(r.Topics, func(i int, _ kmsg.DeleteTopicsRequestTopic) bool { return !known[i] || ok[names[i]] },
		func(t kmsg.DeleteTopicsRequestTopic) kmsg.DeleteTopicsResponseTopic { return deny(t.Topic, t.TopicID) })
	return passDenied(append(denied, deniedByID...), func() { r.TopicNames, r.Topics = keptNames, kept },
		func(m *kmsg.DeleteTopicsResponse) *[]kmsg.DeleteTopicsResponseTopic { return &m.Topics })
}

// DeleteRecords: DELETE on each topic.
func authzDeleteRecords(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteRecordsRequest)
	kept, denied := splitByName(a, auth.OpDelete, auth.ResourceTopic, r.Topics, func(t kmsg.DeleteRecordsRequestTopic) string { return t.Topic },
		func(t kmsg.DeleteRecordsRequestTopic) kmsg.DeleteRecordsResponseTopic {
			rt := kmsg.NewDeleteRecordsResponseTopic()
			rt.Topic = t.Topic
			rt.Partitions = failEach(t.Partitions, func(p kmsg.DeleteRecordsRequestTopicPartition) kmsg.DeleteRecordsResponseTopicPartition {
				rp := kmsg.NewDeleteRecordsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, errTopicAuth.Code, -1
				return rp
			})
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept }, func(m *kmsg.DeleteRecordsResponse) *[]kmsg.DeleteRecordsResponseTopic { return &m.Topics })
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
	kept, denied := splitByName(a, auth.OpDescribe, auth.ResourceTopic, r.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic },
		func(t kmsg.OffsetForLeaderEpochRequestTopic) kmsg.OffsetForLeaderEpochResponseTopic {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			rt.Partitions = failEach(t.Partitions, func(p kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, errTopicAuth.Code, -1, -1
				return rp
			})
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept },
		func(m *kmsg.OffsetForLeaderEpochResponse) *[]kmsg.OffsetForLeaderEpochResponseTopic { return &m.Topics })
}

// CreatePartitions: ALTER on each topic.
func authzCreatePartitions(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.CreatePartitionsRequest)
	kept, denied := splitByName(a, auth.OpAlter, auth.ResourceTopic, r.Topics, func(t kmsg.CreatePartitionsRequestTopic) string { return t.Topic },
		func(t kmsg.CreatePartitionsRequestTopic) kmsg.CreatePartitionsResponseTopic {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, errTopicAuth.Code
			rt.ErrorMessage = kmsg.StringPtr("The topic authorization is failed.") // Kafka's wording
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept }, func(m *kmsg.CreatePartitionsResponse) *[]kmsg.CreatePartitionsResponseTopic { return &m.Topics })
}

// DescribeProducers: READ on each topic.
func authzDescribeProducers(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeProducersRequest)
	kept, denied := splitByName(a, auth.OpRead, auth.ResourceTopic, r.Topics, func(t kmsg.DescribeProducersRequestTopic) string { return t.Topic },
		func(t kmsg.DescribeProducersRequestTopic) kmsg.DescribeProducersResponseTopic {
			rt := kmsg.NewDescribeProducersResponseTopic()
			rt.Topic = t.Topic
			rt.Partitions = failEach(t.Partitions, func(p int32) kmsg.DescribeProducersResponseTopicPartition {
				rp := kmsg.NewDescribeProducersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, errTopicAuth.Code, errMsg(errTopicAuth)
				return rp
			})
			return rt
		})
	return passDenied(denied, func() { r.Topics = kept },
		func(m *kmsg.DescribeProducersResponse) *[]kmsg.DescribeProducersResponseTopic { return &m.Topics })
}
