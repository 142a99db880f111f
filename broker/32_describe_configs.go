package broker

// DescribeConfigs, v1-v4: TOPIC and BROKER resources (a broker by its id,
// or "" for the cluster-wide dynamic defaults), with sources, synonyms
// (include_synonyms) and documentation (v3+), from broker/config's tables
// of Kafka's keys and defaults. BROKER_LOGGER and other resource types
// are refused with INVALID_REQUEST.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

func (s *Server) handleDescribeConfigs(r *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	img := s.image()
	for i := range r.Resources {
		rr := &r.Resources[i]
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		switch int8(rr.ResourceType) {
		case metadata.ResourceTopic:
			if img.Topics[rr.ResourceName] == nil {
				res.ErrorCode = kerr.UnknownTopicOrPartition.Code
				res.ErrorMessage = ptrf("The topic '%s' does not exist.", rr.ResourceName)
				break
			}
			res.Configs = s.cfg.Topics.DescribeTopic(img, rr.ResourceName, rr, r.IncludeSynonyms, r.IncludeDocumentation, r.Version)
		case metadata.ResourceBroker:
			id, ok := s.brokerResource(rr.ResourceName)
			if !ok {
				res.ErrorCode = kerr.InvalidRequest.Code
				res.ErrorMessage = ptrf("Unexpected broker id, expected %d or empty string, but received %s", s.cfg.NodeID, rr.ResourceName)
				break
			}
			res.Configs = s.cfg.Topics.DescribeBroker(img, id, rr, r.IncludeSynonyms, r.IncludeDocumentation, r.Version)
		default:
			res.ErrorCode = kerr.InvalidRequest.Code
			res.ErrorMessage = ptrf("Unsupported resource type %v", rr.ResourceType)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}

// brokerResource parses a BROKER resource name: this broker's id, or ""
// for the cluster default (returned as -1).
func (s *Server) brokerResource(name string) (int32, bool) {
	if name == "" {
		return -1, true
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil || int32(id) != s.cfg.NodeID {
		return 0, false
	}
	return int32(id), true
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
