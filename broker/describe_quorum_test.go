package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

func describeQuorum(addr string) (*kmsg.DescribeQuorumResponse, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic, t.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
	req.Topics = append(req.Topics, t)
	resp, err := testkit.RawRequest(addr, req, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.DescribeQuorumResponse), nil
}

// A single node answers DescribeQuorum on its client listener as its own
// one-voter quorum, as kafka-metadata-quorum.sh --bootstrap-server asks.
func TestDescribeQuorumSingleNode(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	resp, err := describeQuorum(b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("answer %+v", resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderID != 0 || len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 0 || p.HighWatermark <= 0 {
		t.Fatalf("partition %+v: want node 0 leading, the only voter, a high watermark", p)
	}
	if len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 0 || len(resp.Nodes[0].Listeners) != 1 {
		t.Fatalf("nodes %+v", resp.Nodes)
	}
}

// In a cluster every broker answers DescribeQuorum with the active
// controller's view: non-active nodes forward it.
func TestDescribeQuorumCluster(t *testing.T) {
	testkit.SkipShort(t, "3-node cluster test")
	c := testkit.StartInProcCluster(t, 3, nil)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		leaders := map[int32]bool{}
		for _, n := range c.Nodes {
			resp, err := describeQuorum(n.Addr)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				return fmt.Errorf("node %d: answer %+v", n.ID, resp)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || len(p.CurrentVoters) != 3 || len(resp.Nodes) != 3 {
				return fmt.Errorf("node %d: partition %+v nodes %+v, want no error and 3 voters", n.ID, p, resp.Nodes)
			}
			leaders[p.LeaderID] = true
			// Every voter is a combined node here: the active controller
			// knows how far each has applied the log from its heartbeats.
			for _, v := range p.CurrentVoters {
				if v.LogEndOffset <= 0 || v.LogEndOffset > p.HighWatermark || v.ReplicaID != p.LeaderID && v.LastFetchTimestamp <= 0 {
					return fmt.Errorf("node %d: voter %+v, want a log end offset in (0, %d] and a fetch time", n.ID, v, p.HighWatermark)
				}
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("nodes disagree on the leader: %v", leaders)
		}
		for id := range leaders {
			if id < 1 || id > 3 {
				return fmt.Errorf("leader %d is not a voter", id)
			}
		}
		return nil
	})
}
