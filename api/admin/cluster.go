package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// requestTimeout bounds the calls to the cluster a request makes.
	requestTimeout = 15 * time.Second
	// metadataTimeout bounds a metadata request, which any broker
	// answers at once: a cluster that does not answer within it is
	// unreachable, and the request answers 503 in seconds instead of
	// after franz-go's retries have used the whole requestTimeout.
	metadataTimeout = 5 * time.Second
)

// brokerInfo is the Broker entity.
type brokerInfo struct {
	NodeID       int32   `json:"node_id"`
	Host         string  `json:"host"`
	Port         int32   `json:"port"`
	Rack         *string `json:"rack"`
	IsController bool    `json:"is_controller"`
	LogDirBytes  int64   `json:"log_dir_bytes"`
}

// clusterInfo answers GET /cluster.
type clusterInfo struct {
	ClusterID       string         `json:"cluster_id"`
	ControllerID    int32          `json:"controller_id"`
	Brokers         []brokerInfo   `json:"brokers"`
	Topics          int            `json:"topics"`
	InternalTopics  int            `json:"internal_topics"`
	Partitions      int            `json:"partitions"`
	UnderReplicated int            `json:"under_replicated_partitions"`
	Offline         int            `json:"offline_partitions"`
	Connect         connectSummary `json:"connect"`
	Throughput      throughput     `json:"throughput"`
}

// connectSummary counts this node's connectors and tasks by state.
type connectSummary struct {
	Available  bool           `json:"available"`
	Connectors map[string]int `json:"connectors"`
	Tasks      map[string]int `json:"tasks"`
}

// throughput is the latest history sample's rates.
type throughput struct {
	BytesIn    float64 `json:"bytes_in_per_sec"`
	BytesOut   float64 `json:"bytes_out_per_sec"`
	MessagesIn float64 `json:"messages_in_per_sec"`
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	mctx, mcancel := metadataCtx(ctx)
	defer mcancel()
	md, err := s.adm.Metadata(mctx)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	out := clusterInfo{
		ClusterID:    md.Cluster,
		ControllerID: md.Controller,
		Brokers:      s.brokers(ctx, md),
		Connect:      s.connectSummary(ctx),
	}
	for _, t := range md.Topics {
		if t.Err != nil {
			continue
		}
		if t.IsInternal {
			out.InternalTopics++
		} else {
			out.Topics++
		}
		// Partitions count every topic's, the internal ones' too, as
		// Kafka's GlobalPartitionCount does: they are on the brokers'
		// disks and in their replication.
		for _, p := range t.Partitions {
			out.Partitions++
			if p.Leader < 0 {
				out.Offline++
			}
			if len(p.ISR) < len(p.Replicas) {
				out.UnderReplicated++
			}
		}
	}
	if p, ok := s.hist.latest(); ok {
		out.Throughput = throughput{BytesIn: p.BytesIn, BytesOut: p.BytesOut, MessagesIn: p.MessagesIn}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listBrokers(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	mctx, mcancel := metadataCtx(ctx)
	defer mcancel()
	md, err := s.adm.BrokerMetadata(mctx)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	writeJSON(w, http.StatusOK, s.brokers(ctx, md))
}

// brokers lists md's brokers by node id with the bytes of the replicas
// in their log dirs (-1 for a broker that did not answer
// DescribeLogDirs).
func (s *Server) brokers(ctx context.Context, md kadm.Metadata) []brokerInfo {
	dirs, err := s.adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		s.log.Debug("describe log dirs", "error", err) // partial answers are used below
	}
	out := make([]brokerInfo, 0, len(md.Brokers))
	for _, b := range md.Brokers {
		bi := brokerInfo{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack, IsController: b.NodeID == md.Controller, LogDirBytes: -1}
		if d, ok := dirs[b.NodeID]; ok {
			bi.LogDirBytes = d.Size()
		}
		out = append(out, bi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// connectSummary counts the connectors and tasks of this node's Connect
// cluster by state (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED,
// RESTARTING). A connector deleted while it is being counted is skipped.
func (s *Server) connectSummary(ctx context.Context) connectSummary {
	out := connectSummary{Connectors: map[string]int{}, Tasks: map[string]int{}}
	if s.opts.Herder == nil {
		return out
	}
	names, err := s.opts.Herder.Connectors(ctx)
	if err != nil {
		s.log.Warn("listing connectors for /cluster", "error", err)
		return out
	}
	out.Available = true
	for _, n := range names {
		st, err := s.opts.Herder.ConnectorStatus(ctx, n)
		if err != nil || st == nil {
			continue
		}
		out.Connectors[string(st.Connector.State)]++
		for _, t := range st.Tasks {
			out.Tasks[string(t.State)]++
		}
	}
	return out
}

// metadataCtx is the context for a metadata request: bounded by
// metadataTimeout, and making kadm ask the cluster instead of answering
// from the client's cache, which may be up to MetadataMinAge (5 s) old
// (a topic created or deleted a moment ago through this API must show).
// kadm has no option for that but asking for the authorized operations
// too, which it does with a direct request that also refreshes the
// cache the other kadm calls use.
func metadataCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	return kadm.WithAuthorizedOps(ctx), cancel
}

// reachable checks that a broker answers before calls (admin requests,
// group lookups) whose retries would take the whole requestTimeout to
// give up on an unreachable cluster.
func (s *Server) reachable(ctx context.Context) error {
	mctx, cancel := metadataCtx(ctx)
	defer cancel()
	_, err := s.adm.BrokerMetadata(mctx)
	return kafkaError(err, "")
}

// topicID prints a topic id as Kafka does (Uuid.toString: URL-safe
// base64 without padding); "" for none.
func topicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// kafkaError turns an error from the cluster into the API's answer: a
// Kafka error keeps its name in the message ("TOPIC_ALREADY_EXISTS:
// Topic 'x' already exists.") with the status the contract gives it;
// detail is the broker's error message if it sent one. A network error
// or a timeout means the cluster could not be reached: 503.
func kafkaError(err error, detail string) error {
	if err == nil {
		return nil
	}
	var he *httpError
	if errors.As(err, &he) {
		return err
	}
	var se *kadm.ShardErrors
	if errors.As(err, &se) && len(se.Errs) > 0 {
		err = se.Errs[0].Err
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		msg := detail
		if msg == "" {
			msg = ke.Description
		}
		return errorf(kafkaStatus(ke), "%s: %s", ke.Message, msg)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) ||
		strings.Contains(err.Error(), "unable to dial") {
		return errorf(http.StatusServiceUnavailable, "the Kafka cluster could not be reached (check that its brokers are up and reachable from this node): %v", err)
	}
	return err
}

// kafkaStatus is the HTTP status for a Kafka error code.
func kafkaStatus(ke *kerr.Error) int {
	switch ke {
	case kerr.TopicAlreadyExists, kerr.NonEmptyGroup, kerr.GroupSubscribedToTopic,
		kerr.ConcurrentTransactions, kerr.RebalanceInProgress, kerr.UnknownMemberID, kerr.IllegalGeneration:
		return http.StatusConflict
	case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID, kerr.GroupIDNotFound:
		return http.StatusNotFound
	case kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed, kerr.SaslAuthenticationFailed:
		return http.StatusForbidden
	case kerr.PolicyViolation, kerr.UnsupportedVersion, kerr.UnsupportedCompressionType:
		return http.StatusBadRequest
	case kerr.ThrottlingQuotaExceeded:
		return http.StatusTooManyRequests
	case kerr.UnknownServerError:
		return http.StatusInternalServerError
	}
	if strings.HasPrefix(ke.Message, "INVALID_") {
		return http.StatusBadRequest
	}
	if ke.Retriable {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
