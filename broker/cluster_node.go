package broker

// A node of a cluster (controller.quorum.voters set): the parts a single
// node does not have, started by openCluster and stopped by closeCluster.
//
//   - controller role: the raft quorum (controller.Quorum) on the
//     controller listener, split by controller.MuxListener into raft and a
//     Kafka-protocol server (controllerListener) that answers the
//     controller APIs and runs forwarded admin requests;
//   - broker role: a ControllerClient to the active controller, the
//     metadata image (from the local quorum on a combined node, else from
//     a MetadataFollower), registration and heartbeats (BrokerLifecycle),
//     and the replica fetchers. Partition roles follow the image in
//     reconcileReplicas.
//
// A broker serves clients only once the controller has unfenced it, which
// requires its metadata to have caught up with its registration: an image
// that is still catching up must never make it delete logs it hosts.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/broker/replica"
)

// clusterNode holds the cluster parts of a Server.
type clusterNode struct {
	quorum    *controller.Quorum
	ctrlLn    net.Listener // the controller listener (raw)
	ctrlKafka net.Listener // its Kafka half
	ctrlProto *protocol.Server
	client    *controller.ControllerClient
	follower  *controller.MetadataFollower
	lifecycle *controller.BrokerLifecycle
	fetchers  *replica.FetcherManager
	throttles *replicationThrottles
}

// unfenceTimeout bounds how long a starting broker waits for the
// controller to unfence it before giving up.
const unfenceTimeout = 2 * time.Minute

// openCluster starts the quorum (controller role) and the controller
// client and metadata source (broker role). It runs in New before the
// logs are opened; the broker joins in joinCluster once they are.
func (s *Server) openCluster() error {
	cfg := s.cfg
	cl := &clusterNode{}
	s.cluster = cl
	if cfg.Cluster.Controller {
		ln, err := net.Listen("tcp", cfg.Cluster.ControllerListenAddr)
		if err != nil {
			return fmt.Errorf("controller listener on %s: %w (is another node using it? check listeners and controller.listener.names)", cfg.Cluster.ControllerListenAddr, err)
		}
		cl.ctrlLn = ln
		if sec := cfg.Cluster.ControllerSecurity; sec != nil && sec.SASL != nil && sec.SASL.Scram == nil {
			// Brokers may authenticate with SCRAM once credentials are
			// in the metadata log (controllers use PLAIN: configs.go).
			sec.SASL.Scram = s.cfg.ScramStore
			if sec.SASL.Scram == nil {
				sec.SASL.Scram = s.ScramStore()
			}
		}
		kafkaL, raftL := controller.MuxListenerWith(ln, s.controllerMuxOptions())
		cl.ctrlKafka = kafkaL
		opts := controller.QuorumOptions{
			Options:                 s.controllerOptions(),
			Voters:                  cfg.Cluster.Voters,
			RaftListener:            raftL,
			PeerDialer:              cfg.Cluster.ControllerDialer,
			BrokerSessionTimeout:    cfg.Cluster.BrokerSessionTimeout,
			BrokerHeartbeatInterval: cfg.Cluster.BrokerHeartbeatInterval,
			BrokerConfigs:           cfg.Cluster.StaticConfigs,
		}
		if cfg.Cluster.Broker {
			// A combined node serves from its own copy of the log.
			opts.OnChange = s.onMetadataChange
		} else {
			opts.OnChange = func(_, img *metadata.Image) { s.img.Store(img) }
		}
		q, err := controller.OpenQuorum(filepath.Join(cfg.MetadataDir, "raft"), opts)
		if err != nil {
			return fmt.Errorf("open controller quorum in %s: %w", cfg.MetadataDir, err)
		}
		cl.quorum = q
		s.quorum = q
		s.ctrl = q
		s.img.Store(q.Image())
		cl.ctrlProto = protocol.NewServer(protocol.Config{
			Versions:       controllerListenerVersions(),
			MaxRequestSize: cfg.MaxRequestSize,
			Logger:         s.log.With("component", "controller-listener"),
		}, controllerListener{s})
		// Served at once, not from Serve: brokers (this one included) can
		// only register, and New only return, once a quorum answers.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := cl.ctrlProto.ServeSecure(cl.ctrlKafka, cfg.Cluster.ControllerSecurity); err != nil {
				s.log.Error("controller listener stopped", "err", err)
			}
		}()
	}
	if !cfg.Cluster.Broker {
		return nil
	}
	cl.client = controller.NewControllerClient(controller.ClientOptions{
		NodeID: cfg.NodeID,
		Voters: cfg.Cluster.Voters,
		Dialer: cfg.Cluster.ControllerDialer,
		Logger: s.log.With("component", "controller-client"),
	})
	s.link = cl.client
	if cl.quorum == nil {
		s.img.Store(metadata.Empty())
		cl.follower = controller.StartMetadataFollower(controller.FollowerOptions{
			Client:   cl.client,
			Logger:   s.log.With("component", "metadata"),
			OnChange: s.onMetadataChange,
		})
	}
	return nil
}

// joinCluster registers the broker, waits until the controller unfences
// it (its metadata has caught up), then applies the image to the local
// partitions and starts replicating.
func (s *Server) joinCluster(host string, port int32) error {
	cl := s.cluster
	cfg := s.cfg
	cl.throttles = &replicationThrottles{leader: replica.NewThrottle(0), follower: replica.NewThrottle(0)}
	cl.fetchers = replica.NewFetcherManager(replica.FetcherOptions{
		LocalID:           cfg.NodeID,
		Dialer:            cfg.Cluster.InterBrokerDialer,
		BrokerEpoch:       s.brokerEpoch,
		Resolve:           s.replicationAddr,
		MaxBytes:          cfg.Cluster.ReplicaFetchResponseMaxBytes,
		PartitionMaxBytes: cfg.Cluster.ReplicaFetchMaxBytes,
		MaxWait:           cfg.Cluster.ReplicaFetchWait,
		MinBytes:          cfg.Cluster.ReplicaFetchMinBytes,
		BackoffOnError:    cfg.Cluster.ReplicaFetchBackoff,
		Throttle:          cl.throttles.follower,
		Throttled: func(topic string, partition int32) bool {
			return s.replicationThrottle().follower.has(topic, partition)
		},
		Logger: s.log.With("component", "replica-fetcher"),
		OnHighWatermark: func(topic string, partition int32, hw int64) {
			if p := s.partition(topic, partition); p != nil && !p.isLeader() {
				p.setFollowerHighWatermark(hw)
			}
		},
	})
	reg := controller.BrokerRegistration{
		ID:            cfg.NodeID,
		IncarnationID: metadata.NewUUID(),
		Host:          host,
		Port:          port,
		Rack:          cfg.Rack,
		Listeners:     s.registeredListeners(host, port),
	}
	cl.lifecycle = controller.StartBrokerLifecycle(controller.LifecycleOptions{
		Client:            cl.client,
		Registration:      reg,
		HeartbeatInterval: cfg.Cluster.BrokerHeartbeatInterval,
		MetadataOffset:    func() int64 { return s.image().Offset },
		Logger:            s.log.With("component", "lifecycle"),
		OnStateChange: func(fenced bool) {
			s.log.Info("broker state", "fenced", fenced)
		},
	})
	s.epoch = cl.lifecycle.Epoch
	ctx, cancel := context.WithTimeout(s.ctx, unfenceTimeout)
	defer cancel()
	s.log.Info("waiting for the controller to unfence this broker", "voters", cfg.Cluster.Voters)
	if err := cl.lifecycle.WaitUnfenced(ctx); err != nil {
		if s.ctx.Err() != nil {
			return fmt.Errorf("start-up interrupted before the controller unfenced broker %d", cfg.NodeID)
		}
		return fmt.Errorf("broker %d was not unfenced by the controller within %v: %w (are the controllers in controller.quorum.voters running and reachable?)", cfg.NodeID, unfenceTimeout, err)
	}
	s.joined.Store(true)
	s.log.Info("broker unfenced; serving", "metadata_offset", s.image().Offset)
	return s.reconcile(s.image())
}

// registeredListeners are the listeners this broker advertises to the
// controller, with unset hosts and ports filled from the bound listener.
func (s *Server) registeredListeners(host string, port int32) []controller.Listener {
	var out []controller.Listener
	for _, l := range s.cfg.Cluster.Listeners {
		if l.Host == "" {
			l.Host = host
		}
		if l.Port == 0 {
			l.Port = port
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		out = append(out, controller.Listener{Name: "PLAINTEXT", Host: host, Port: port})
	}
	return out
}

// replicationAddr is where this broker reaches another broker's replicas:
// that broker's listener named by our inter.broker.listener.name, as
// Kafka resolves it, else its client endpoint.
func (s *Server) replicationAddr(id int32) (string, bool) {
	b := s.image().Brokers[id]
	if b == nil {
		return "", false
	}
	for _, l := range b.Listeners {
		if l.Name == s.cfg.Cluster.InterBrokerListener {
			return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))), true
		}
	}
	return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), true
}

// reconcileReplica sets a hosted partition's replication role from the
// image: leaders track their followers (replica.Leader), followers fetch
// from the leader. It runs under reconcileMu.
func (s *Server) reconcileReplica(p *partition, mp *metadata.Partition) {
	cl := s.cluster
	if cl == nil || cl.fetchers == nil {
		return // single node, or not joined yet
	}
	if mp.Leader == s.cfg.NodeID {
		cl.fetchers.Remove(p.topic, p.index)
		if l := p.repl.Load(); l != nil {
			l.Update(*mp)
			return
		}
		hw, _ := p.log.HighWatermark()
		l := replica.NewLeader(replica.LeaderOptions{
			LocalID:        s.cfg.NodeID,
			Log:            p.log,
			State:          *mp,
			TopicID:        p.topicID,
			Topic:          p.topic,
			HighWatermark:  max(hw, p.highWatermark()),
			ReplicaLagTime: s.cfg.Cluster.ReplicaLagTime,
			AlterPartition: s.alterPartitionFunc(p),
			BrokerEpoch:    s.isrEligible,
			Logger:         s.log.With("topic", p.topic, "partition", p.index),
			OnHighWatermark: func(hw int64) {
				p.log.SetHighWatermark(hw)
				p.advance(hw)
			},
			OnISRChange: s.metrics.isrChanged,
		})
		p.repl.Store(l)
		return
	}
	if l := p.repl.Swap(nil); l != nil {
		l.Stop()
	}
	if mp.Leader < 0 {
		cl.fetchers.Remove(p.topic, p.index)
		return
	}
	hw, _ := p.log.HighWatermark()
	cl.fetchers.Set(replica.Follow{
		Topic:         p.topic,
		TopicID:       p.topicID,
		Partition:     p.index,
		Log:           p.log,
		LeaderID:      mp.Leader,
		LeaderEpoch:   mp.LeaderEpoch,
		HighWatermark: hw,
	})
}

// dropReplica stops replicating a partition this broker no longer hosts.
func (s *Server) dropReplica(p *partition) {
	if l := p.repl.Swap(nil); l != nil {
		l.Stop()
	}
	if cl := s.cluster; cl != nil && cl.fetchers != nil {
		cl.fetchers.Remove(p.topic, p.index)
	}
}

// alterPartitionFunc sends a leader's ISR change to the controller.
func (s *Server) alterPartitionFunc(p *partition) func(ctx context.Context, isr []int32, leaderEpoch, partitionEpoch int32) (metadata.Partition, error) {
	return func(ctx context.Context, isr []int32, leaderEpoch, partitionEpoch int32) (metadata.Partition, error) {
		mp, err := s.cluster.client.AlterPartition(ctx, controller.AlterPartitionRequest{
			BrokerID:       s.cfg.NodeID,
			BrokerEpoch:    s.brokerEpoch(),
			TopicID:        p.topicID,
			Partition:      p.index,
			LeaderEpoch:    leaderEpoch,
			PartitionEpoch: partitionEpoch,
			NewISR:         isr,
		})
		if err != nil {
			return metadata.Partition{}, &replica.Error{Code: err.Code, Message: err.Message}
		}
		return mp, nil
	}
}

// isrEligible is Kafka's isReplicaIsrEligible: a registered broker that
// is neither fenced nor shutting down, with its epoch.
func (s *Server) isrEligible(id int32) (int64, bool) {
	b := s.image().Brokers[id]
	if b == nil {
		return -1, false
	}
	return b.Epoch, !b.Fenced && !b.InControlledShutdown
}

// setFollowerHighWatermark publishes the high watermark a follower got
// from its leader. Unlike a leader's it may go down (after truncation).
func (p *partition) setFollowerHighWatermark(hw int64) {
	p.log.SetHighWatermark(hw)
	p.hw.Store(hw)
	p.notify()
}

// closeCluster leaves the cluster: a broker first asks the controller to
// move its leaderships away (controlled shutdown), so a rolling restart
// loses no acknowledged write and clients move on at once.
func (s *Server) closeCluster() error {
	cl := s.cluster
	if cl == nil {
		return nil
	}
	if cl.lifecycle != nil && s.joined.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := cl.lifecycle.ControlledShutdown(ctx); err != nil {
			s.log.Warn("controlled shutdown did not finish; stopping anyway", "err", err)
		}
		cancel()
	}
	return nil
}

// closeClusterParts stops every cluster part (after the logs' users).
func (s *Server) closeClusterParts() error {
	cl := s.cluster
	if cl == nil {
		return nil
	}
	var errs []error
	if cl.fetchers != nil {
		cl.fetchers.Close()
	}
	if t := s.parts.Load(); t != nil {
		for _, p := range t.byKey {
			if l := p.repl.Swap(nil); l != nil {
				l.Stop()
			}
		}
	}
	if cl.lifecycle != nil {
		cl.lifecycle.Close()
	}
	if cl.follower != nil {
		cl.follower.Close()
	}
	if cl.client != nil {
		errs = append(errs, cl.client.Close())
	}
	if cl.ctrlProto != nil {
		cl.ctrlProto.Close()
	}
	if cl.quorum != nil {
		errs = append(errs, cl.quorum.Close())
	}
	if cl.ctrlLn != nil {
		cl.ctrlLn.Close()
	}
	return errors.Join(errs...)
}

// controllerListener serves the Kafka protocol on the controller
// listener: the controller APIs (registration, heartbeats, AlterPartition,
// the metadata log) and admin requests forwarded by brokers, which run
// here against the quorum (answering NOT_CONTROLLER if this node is not
// the active controller: they are never forwarded again).
type controllerListener struct{ s *Server }

func (h controllerListener) Handle(ctx context.Context, c *protocol.Conn, req *protocol.Request) protocol.Response {
	s := h.s
	if s.authz != nil {
		if deny := s.authorizeControllerAPI(c, req); deny != nil {
			return *deny
		}
	}
	// ctx is the connection's: its closing tells the controller that a
	// broker heartbeating on it may be gone.
	if resp, ok := controller.ServeControllerRequest(controller.ConnectionContext(ctx), s.cluster.quorum, req.Body); ok {
		return protocol.Response{Msg: resp}
	}
	switch r := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
		versions := controllerListenerVersions()
		for _, k := range sortedKeys(versions) {
			vr := versions[k]
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: vr.Min, MaxVersion: vr.Max})
		}
		return protocol.Response{Msg: resp}
	case *kmsg.DescribeClusterRequest:
		return protocol.Response{Msg: s.describeControllers(r, c.ListenerName())}
	}
	if forwardedAPIs[req.Key] {
		if s.cluster.quorum.IsActive() {
			return s.dispatchAuthorized(ctx, c, req)
		}
		return protocol.Response{Msg: adminErrorResponse(req.Body, kerr.NotController.Code, "this controller is not the active controller")}
	}
	return protocol.Response{None: true, Close: true}
}

// describeControllers answers DescribeCluster on the controller listener
// as a Kafka controller does for endpoint type 2: the voters, and the
// active controller.
func (s *Server) describeControllers(r *kmsg.DescribeClusterRequest, listener string) *kmsg.DescribeClusterResponse {
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	img := s.image()
	resp.ClusterID = img.ClusterID
	resp.ControllerID = s.cluster.quorum.ActiveID()
	resp.EndpointType = 2
	resp.ClusterAuthorizedOperations = opsOmitted
	if r.Version >= 1 && r.EndpointType == 1 {
		// Brokers, as a broker would answer.
		return s.handleDescribeCluster(r, listener)
	}
	for _, id := range sortedKeys32(s.cfg.Cluster.Voters) {
		host, portStr, err := net.SplitHostPort(s.cfg.Cluster.Voters[id])
		if err != nil {
			continue
		}
		port, _ := strconv.Atoi(portStr)
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = id, host, int32(port)
		resp.Brokers = append(resp.Brokers, b)
	}
	return resp
}

// controllerListenerVersions are the APIs a controller listener serves.
func controllerListenerVersions() map[int16]protocol.VersionRange {
	m := map[int16]protocol.VersionRange{
		int16(kmsg.ApiVersions):     apiVersions[int16(kmsg.ApiVersions)],
		int16(kmsg.DescribeCluster): apiVersions[int16(kmsg.DescribeCluster)],
		// Answered by broker/protocol on a SASL controller listener.
		int16(kmsg.SASLHandshake):    apiVersions[int16(kmsg.SASLHandshake)],
		int16(kmsg.SASLAuthenticate): apiVersions[int16(kmsg.SASLAuthenticate)],
	}
	for k, vr := range controller.ControllerVersions {
		m[int16(k)] = protocol.VersionRange{Min: vr.Min, Max: vr.Max}
	}
	for k := range forwardedAPIs {
		m[k] = apiVersions[k]
	}
	return m
}

// Replication throttles (Kafka's ReplicationQuotaManager, KIP-73): the
// dynamic broker configs leader.replication.throttled.rate and
// follower.replication.throttled.rate (bytes/s) limit the replication
// traffic of the partitions that the topic configs
// leader.replication.throttled.replicas and
// follower.replication.throttled.replicas list for this broker
// ("partition:broker,..." or "*"), and only while the fetching replica is
// out of sync: a reassignment's copy, never the ISR's. The follower side
// leaves throttled partitions out of its fetches (replica.FetcherManager);
// the leader side answers a throttled, out-of-sync replica's fetch with no
// records (readPartition). `fjord cluster reassign --throttle` sets all
// four, as kafka-reassign-partitions.sh does.
//
// The rates are this broker's dynamic config, else the cluster-wide
// dynamic default (Kafka accepts them only as dynamic configs). The
// settings are read from the metadata image on first use after it
// changes, so config changes apply without a restart.

// replicationThrottles is a broker's two token buckets and the throttled
// partitions of the image they were last read from.
type replicationThrottles struct {
	leader, follower *replica.Throttle
	mu               sync.Mutex // serialises re-reading
	state            atomic.Pointer[throttleState]
}

// throttleState is what an image says about replication throttles here.
type throttleState struct {
	img              *metadata.Image
	leader, follower throttledReplicas
}

// throttledReplicas are the partitions a *.replication.throttled.replicas
// config lists for this broker, by topic.
type throttledReplicas map[string]throttledPartitions

type throttledPartitions struct {
	all   bool // "*"
	parts map[int32]bool
}

func (t throttledReplicas) has(topic string, partition int32) bool {
	tp, ok := t[topic]
	return ok && (tp.all || tp.parts[partition])
}

// replicationThrottle returns the throttle settings of the current image
// (an empty state on a single node or before the broker joined).
func (s *Server) replicationThrottle() *throttleState {
	cl := s.cluster
	if cl == nil || cl.throttles == nil {
		return &throttleState{}
	}
	th := cl.throttles
	img := s.image()
	if st := th.state.Load(); st != nil && st.img == img {
		return st
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	// Re-load under the lock: a caller holding an older image must not
	// overwrite a newer state.
	img = s.image()
	if st := th.state.Load(); st != nil && st.img == img {
		return st
	}
	id := strconv.Itoa(int(s.cfg.NodeID))
	st := &throttleState{img: img, leader: throttledReplicas{}, follower: throttledReplicas{}}
	for res, cfgs := range img.Configs {
		if res.Type != metadata.ResourceTopic {
			continue
		}
		if v := cfgs["leader.replication.throttled.replicas"]; v != "" {
			st.leader[res.Name] = parseThrottledReplicas(v, s.cfg.NodeID)
		}
		if v := cfgs["follower.replication.throttled.replicas"]; v != "" {
			st.follower[res.Name] = parseThrottledReplicas(v, s.cfg.NodeID)
		}
	}
	rate := func(key string) int64 {
		v, ok := img.BrokerConfigs(id)[key]
		if !ok {
			v, ok = img.BrokerConfigs("")[key]
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil || n == math.MaxInt64:
			return 0 // Kafka's default, Long.MAX_VALUE: no limit
		case n <= 0:
			// Kafka lets nothing through at rate 0; a token bucket of one
			// byte a second is as close as it gets (Throttle treats 0 as
			// no limit).
			return 1
		}
		return n
	}
	th.leader.SetRate(rate("leader.replication.throttled.rate"))
	th.follower.SetRate(rate("follower.replication.throttled.rate"))
	th.state.Store(st)
	return st
}

// parseThrottledReplicas reads a *.replication.throttled.replicas value
// as Kafka's parseThrottledPartitions does: "*" throttles every
// partition, else the partitions of the "partition:broker" entries that
// name this broker. Malformed entries (the controller validated the
// value) are skipped.
func parseThrottledReplicas(v string, self int32) throttledPartitions {
	v = strings.TrimSpace(v)
	if v == "*" {
		return throttledPartitions{all: true}
	}
	tp := throttledPartitions{parts: map[int32]bool{}}
	for _, item := range strings.Split(v, ",") {
		ps, bs, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			continue
		}
		p, perr := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		b, berr := strconv.ParseInt(strings.TrimSpace(bs), 10, 32)
		if perr == nil && berr == nil && int32(b) == self {
			tp.parts[int32(p)] = true
		}
	}
	return tp
}

// leaderThrottle is the leader side for one replica fetch of p: whether
// the partition is throttled here, and whether this fetch must get no
// records now (Kafka's shouldLeaderThrottle: an out-of-sync replica while
// the leader's quota is exceeded).
func (s *Server) leaderThrottle(p *partition, repl *replica.Leader, replicaID int32) (throttled, hold bool) {
	if !s.replicationThrottle().leader.has(p.topic, p.index) {
		return false, false
	}
	th := s.cluster.throttles
	return true, th.leader.Exceeded() && !repl.InSync(replicaID)
}
