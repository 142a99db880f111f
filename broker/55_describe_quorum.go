package broker

import (
	"context"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
)

// handleDescribeQuorum answers DescribeQuorum on a client listener, as a
// Kafka broker does for kafka-metadata-quorum.sh --bootstrap-server: in
// a cluster the active controller answers (a broker that is not it
// forwards the request, cluster.go); a single node is its own
// one-voter quorum, the leader of __cluster_metadata.
func (s *Server) handleDescribeQuorum(_ context.Context, r *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	if cl := s.cluster; cl != nil && cl.quorum != nil {
		return controller.DescribeQuorum(cl.quorum, r)
	}
	return controller.DescribeQuorum(singleNodeQuorum{s}, r)
}

// singleNodeQuorum is a single node seen as a quorum of one voter.
type singleNodeQuorum struct{ s *Server }

func (q singleNodeQuorum) Image() *metadata.Image { return q.s.image() }
func (q singleNodeQuorum) IsActive() bool         { return true }
func (q singleNodeQuorum) ActiveID() int32        { return q.s.cfg.NodeID }

// Voters names the node at its advertised client address: a single node
// has no controller listener of its own.
func (q singleNodeQuorum) Voters() map[int32]string {
	host, port := q.s.cfg.AdvertisedHost, q.s.cfg.AdvertisedPort
	if a := q.s.Addr(); a != nil {
		h, p, _ := net.SplitHostPort(a.String())
		if host == "" {
			host = h
		}
		if port == 0 {
			n, _ := strconv.Atoi(p)
			port = int32(n)
		}
	}
	return map[int32]string{q.s.cfg.NodeID: net.JoinHostPort(host, strconv.Itoa(int(port)))}
}
