package broker

// DescribeCluster, v0-v2: brokers, cluster id, controller id. v1+
// endpoint_type 1 (brokers) is the only one served; asking for
// controllers (2) gets UNSUPPORTED_ENDPOINT_TYPE, as from a Kafka broker.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleDescribeCluster(r *kmsg.DescribeClusterRequest, listener string) *kmsg.DescribeClusterResponse {
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	if r.Version >= 1 && r.EndpointType != 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		return resp
	}
	img := s.image()
	resp.EndpointType = 1
	resp.ClusterID = img.ClusterID
	resp.ControllerID = clientControllerID(img)
	resp.ClusterAuthorizedOperations = opsOmitted
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOpsAll
	}
	for _, id := range img.BrokerIDs() {
		b := img.Brokers[id]
		if b.Fenced && !r.IncludeFencedBrokers {
			continue
		}
		host, port, ok := endpoint(b, listener)
		if !ok {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.IsFenced = b.ID, host, port, b.Fenced
		if b.Rack != "" {
			rb.Rack = ptr(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp
}
