// Package broker is Fjord's Kafka-compatible broker. Server wires the
// parts below it: the protocol listener (broker/protocol), the partition
// logs (broker/log), the group coordinator (broker/group), the controller
// and its metadata image (broker/controller, broker/metadata).
//
// Each Kafka API the broker serves has its own file, named by API key
// (00_produce.go, 01_fetch.go, ...), opening with the versions served and
// what is not supported. apis.go holds the version table and dispatch.
//
// State ownership: the metadata image and the partition table are
// immutable values behind atomic pointers, replaced by the controller's
// change callback (serialised by the controller); handlers read them
// without locks. Each partition serialises its own appends (appendMu).
// The group coordinator owns group state.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/group"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

// Server is one broker.
type Server struct {
	cfg Config
	log *slog.Logger
	// ctrl is the metadata controller this node runs: controller.Local on
	// a single node, the raft quorum on a controller node of a cluster,
	// nil on a broker-only node. Admin changes go to it when it is the
	// active controller and are forwarded to the active controller
	// otherwise (cluster.go).
	ctrl  controller.Controller
	local *controller.Local
	// img is the metadata image handlers serve from, replaced on every
	// change the controller (or the metadata follower) publishes.
	img atomic.Pointer[metadata.Image]
	// Cluster mode (cluster.go): quorum is the raft controller this node
	// hosts (nil if it has no controller role), link reaches the active
	// controller, epoch reports this broker's registration epoch.
	quorum quorumNode
	link   controllerLink
	epoch  func() int64
	logs   *log.Manager
	groups *group.Coordinator
	proto  *protocol.Server
	ln     net.Listener
	// extraLns are the other client listeners (Config.ExtraListenAddrs).
	extraLns []net.Listener

	parts atomic.Pointer[partitionTable]
	// reconcileMu serialises partition-table rebuilds (controller callback
	// and start-up).
	reconcileMu sync.Mutex

	// offsetsMu serialises the lazy creation of __consumer_offsets.
	offsetsMu sync.Mutex

	// authz decides ACLs (authorizer.class.name); nil: no authorization.
	authz auth.Authorizer

	producerIDs producerIDAllocator
	metrics     *Metrics
	quotas      *brokerQuotas // client quotas (quotas.go)

	// cluster holds the cluster parts (cluster_node.go); nil on a single
	// node. joined is set once the controller unfenced this broker.
	cluster *clusterNode
	joined  atomic.Bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
	start  time.Time
}

// New opens the broker's storage (recovering logs after an unclean
// shutdown) and binds its listener. Call Serve to start answering.
func New(cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, start: time.Now()}
	parent := cfg.Context
	if parent == nil {
		parent = context.Background()
	}
	s.ctx, s.cancel = context.WithCancel(parent)
	s.metrics = newMetrics(cfg.Registerer)
	s.quotas = newBrokerQuotas(cfg)

	ok := false
	defer func() {
		if !ok {
			s.closeParts()
		}
	}()

	var err error
	// The authorizer reads the live image at each check, so it exists
	// before the controller listener (which authorizes too) serves.
	if s.authz, err = s.NewAuthorizer(); err != nil {
		return nil, err
	}
	if cfg.Cluster.Enabled() {
		if err := s.openCluster(); err != nil {
			return nil, err
		}
		if !cfg.Cluster.Broker {
			cfg.Registerer.Register(stateCollector{s})
			ok = true
			return s, nil // a controller-only node has no logs or clients
		}
	} else {
		opts := s.controllerOptions()
		opts.OnChange = s.onMetadataChange
		s.local, err = controller.OpenLocal(cfg.MetadataDir, opts)
		if err != nil {
			return nil, fmt.Errorf("open controller metadata in %s: %w", cfg.MetadataDir, err)
		}
		s.ctrl = s.local
		s.img.Store(s.local.Image())
	}

	t0 := time.Now()
	s.logs, err = log.OpenManager(cfg.LogManager, s.logConfigFor, log.Options{
		Logger:                 s.log.With("component", "log"),
		ProducerIDExpirationMs: cfg.ProducerIDExpirationMs,
	})
	if err != nil {
		return nil, fmt.Errorf("open logs: %w", err)
	}
	s.log.Info("logs loaded", "dirs", cfg.LogManager.Dirs, "partitions", len(s.logs.All()), "took", time.Since(t0).Round(time.Millisecond))

	if cfg.ListenAddr != "" {
		s.ln, err = net.Listen("tcp", cfg.ListenAddr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w (is another broker running? change listeners= or --kafka-addr)", cfg.ListenAddr, err)
		}
		// Every listener in listeners= is served, as Kafka does: other
		// brokers reach this one on the listener their
		// inter.broker.listener.name names, which need not be the first.
		for _, addr := range cfg.ExtraListenAddrs {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return nil, fmt.Errorf("listen on %s: %w (check listeners=)", addr, err)
			}
			s.extraLns = append(s.extraLns, ln)
		}
	}
	host, port := cfg.AdvertisedHost, cfg.AdvertisedPort
	if s.ln != nil {
		h, p, _ := net.SplitHostPort(s.ln.Addr().String())
		if host == "" {
			host = h
		}
		if port == 0 {
			pn, _ := strconv.Atoi(p)
			port = int32(pn)
		}
	}
	if s.local != nil {
		if err := s.local.RegisterBroker(metadata.Broker{ID: cfg.NodeID, Host: host, Port: port, Rack: cfg.Rack, Listeners: s.boundListeners(host, port)}); err != nil {
			return nil, fmt.Errorf("register broker: %w", err)
		}
		if err := s.reconcile(s.image()); err != nil {
			return nil, err
		}
	} else if err := s.joinCluster(host, port); err != nil {
		return nil, err
	}

	groups := group.New(cfg.Group, &offsetsStore{s: s}, group.Options{
		Logger:      s.log.With("component", "group"),
		Topics:      groupTopics{s},
		OnRebalance: s.metrics.groupRebalance,
	})
	// A cluster broker has joined: the quorum's FSM goroutine may be in
	// reconcile, whose moveCoordinator reads s.groups under reconcileMu.
	s.reconcileMu.Lock()
	s.groups = groups
	s.reconcileMu.Unlock()
	if err := s.loadOffsetsPartitions(); err != nil {
		return nil, err
	}

	s.proto = protocol.NewServer(protocol.Config{
		Versions:       apiVersions,
		MaxRequestSize: cfg.MaxRequestSize,
		IdleTimeout:    cfg.IdleTimeout,
		SendBuffer:     cfg.SocketSendBuffer,
		ReceiveBuffer:  cfg.SocketReceiveBuffer,
		Logger:         s.log.With("component", "protocol"),
		Observer:       s.metrics.observeRequest,
		OnConnection:   s.metrics.connection,

		MaxConnections:               cfg.MaxConnections,
		MaxConnectionsPerIP:          cfg.MaxConnectionsPerIP,
		MaxConnectionsPerIPOverrides: cfg.MaxConnectionsPerIPOverrides,
	}, s)
	if err := s.wireScramStore(); err != nil {
		return nil, err
	}
	s.logs.Start(s.ctx)
	// Registered last: the collector reads parts set up above.
	cfg.Registerer.Register(stateCollector{s})
	ok = true
	return s, nil
}

// controllerOptions are the controller settings a single node and a
// quorum voter share: defaults and validation from the broker's config.
func (s *Server) controllerOptions() controller.Options {
	cfg := s.cfg
	return controller.Options{
		NodeID:                   cfg.NodeID,
		ClusterID:                cfg.ClusterID,
		Logger:                   s.log.With("component", "controller"),
		DefaultPartitions:        cfg.NumPartitions,
		DefaultReplicationFactor: cfg.DefaultReplicationFactor,
		ValidateTopicConfigs:     cfg.Topics.Validate,
		ValidateBrokerConfigs:    cfg.Topics.ValidateBroker,
		BootstrapConfigs:         cfg.BootstrapConfigs,
	}
}

// Addr is the address the Kafka listener is bound to.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Addrs are the addresses every client listener is bound to, in the
// order of listeners (the first is Addr).
func (s *Server) Addrs() []net.Addr {
	var out []net.Addr
	if s.ln != nil {
		out = append(out, s.ln.Addr())
	}
	for _, ln := range s.extraLns {
		out = append(out, ln.Addr())
	}
	return out
}

// Serve answers Kafka requests until Close (on the client listener and,
// on a controller, the controller listener). It returns nil after Close.
func (s *Server) Serve() error {
	if s.ln == nil && s.cluster != nil && s.cluster.ctrlProto != nil {
		// A controller-only node: its listener is served since New.
		<-s.ctx.Done()
		return nil
	}
	if s.ln == nil {
		return errors.New("broker has no listener")
	}
	for i, ln := range s.extraLns {
		go s.proto.ServeSecure(ln, s.cfg.listenerSecurity(i+1))
	}
	return s.proto.ServeSecure(s.ln, s.cfg.listenerSecurity(0))
}

// ServeInProcess serves l, an in-process listener (internal/inproc), as
// the first client listener: same security protocol, same listener name,
// so its connections differ from that listener's only in transport. It
// returns nil after Close.
func (s *Server) ServeInProcess(l net.Listener) error {
	if s.ln == nil {
		return errors.New("broker has no client listener")
	}
	return s.proto.ServeSecure(l, s.cfg.listenerSecurity(0))
}

// ControllerAddr is the controller listener's address (nil without the
// controller role).
func (s *Server) ControllerAddr() net.Addr {
	if cl := s.cluster; cl != nil && cl.ctrlLn != nil {
		return cl.ctrlLn.Addr()
	}
	return nil
}

// ClusterID returns the cluster id.
func (s *Server) ClusterID() string { return s.image().ClusterID }

// Metrics returns the broker's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Gatherer returns the registry the broker's metrics are registered with
// (Config.Registerer, or the broker's own registry when none was given),
// or nil if that registerer cannot be gathered.
func (s *Server) Gatherer() prometheus.Gatherer {
	g, _ := s.cfg.Registerer.(prometheus.Gatherer)
	return g
}

// Ready reports whether the broker is serving: in a cluster, once the
// controller has unfenced it.
func (s *Server) Ready() bool {
	if s.closed.Load() {
		return false
	}
	return s.cluster == nil || !s.cfg.Cluster.Broker || s.joined.Load()
}

// Close stops serving and closes storage cleanly, writing the
// clean-shutdown markers that let the next start skip log recovery.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	clusterErr := s.closeCluster() // controlled shutdown, while still serving
	s.cancel()
	if s.proto != nil {
		s.proto.Close()
	}
	if s.groups != nil {
		s.groups.Close()
	}
	if s.cluster != nil && s.cluster.ctrlProto != nil {
		s.cluster.ctrlProto.Close()
	}
	s.wg.Wait()
	return errors.Join(clusterErr, s.closeParts())
}

func (s *Server) closeParts() error {
	var errs []error
	errs = append(errs, s.closeClusterParts())
	if s.logs != nil {
		errs = append(errs, s.logs.Close())
	}
	if s.local != nil {
		errs = append(errs, s.local.Close())
	}
	if s.ln != nil {
		s.ln.Close()
	}
	for _, ln := range s.extraLns {
		ln.Close()
	}
	return errors.Join(errs...)
}

// logConfigFor resolves a topic's log settings from the current image.
func (s *Server) logConfigFor(topic string) log.Config {
	return s.cfg.Topics.Resolve(s.image(), topic).Log
}

func (s *Server) onMetadataChange(old, img *metadata.Image) {
	s.img.Store(img)
	// Not yet: a cluster broker whose metadata has not caught up (the
	// quorum's FSM calls this on its own goroutine, so only the atomic
	// joined is read; joinCluster reconciles once it is set), or a single
	// node still opening its logs (Local calls this synchronously in New).
	if s.cluster != nil {
		if !s.joined.Load() {
			return
		}
	} else if s.logs == nil {
		return
	}
	if err := s.reconcile(img); err != nil {
		s.log.Error("apply metadata change", "err", err)
	}
}

// reconcile makes the local partitions match img: create logs for new
// partitions hosted here, delete logs of removed topics, apply changed
// configs. It publishes a new partition table.
func (s *Server) reconcile(img *metadata.Image) error {
	s.reconcileMu.Lock()
	defer s.reconcileMu.Unlock()
	old := s.parts.Load()
	next := &partitionTable{byKey: map[partitionKey]*partition{}, byID: map[metadata.UUID][]*partition{}}
	var errs []error
	var moved []coordinatorMove
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		settings := s.cfg.Topics.Resolve(img, name)
		for _, mp := range t.Partitions {
			if !contains(mp.Replicas, s.cfg.NodeID) {
				continue
			}
			key := partitionKey{name, mp.Index}
			p := old.get(name, mp.Index)
			if p != nil && p.topicID != t.ID {
				p = nil // same name, recreated topic: the old log goes below
			}
			if p == nil {
				l := s.logs.Get(name, mp.Index)
				if id, ok := logTopicID(l); l != nil && (!ok || id != t.ID) {
					if err := s.logs.Delete(name, mp.Index); err != nil {
						errs = append(errs, err)
						continue
					}
					l = nil
				}
				if l == nil {
					var err error
					l, err = s.logs.Create(name, mp.Index, t.ID, settings.Log)
					if err != nil {
						errs = append(errs, fmt.Errorf("create log %s-%d: %w", name, mp.Index, err))
						continue
					}
				}
				p = &partition{topic: name, index: mp.Index, topicID: t.ID, log: l, tm: s.metrics.topic(name)}
				if s.cluster == nil {
					p.hw.Store(l.LogEndOffset()) // one replica: everything is committed
				} else {
					hw, _ := l.HighWatermark() // what was known committed; the leader raises it
					p.hw.Store(hw)
				}
			}
			wasLeader := p.isLeader()
			p.leaderEpoch.Store(mp.LeaderEpoch)
			p.leaderID.Store(mp.Leader)
			if mp.Leader == s.cfg.NodeID {
				p.role.Store(roleLeader)
			} else {
				p.role.Store(roleFollower)
			}
			s.reconcileReplica(p, mp)
			if name == offsetsTopic && wasLeader != p.isLeader() {
				moved = append(moved, coordinatorMove{mp.Index, p.isLeader()})
			}
			if cur := p.settings.Load(); cur == nil || !cur.equal(settings) {
				st := settings
				p.settings.Store(&st)
				p.log.SetConfig(settings.Log)
			}
			next.byKey[key] = p
			next.byID[t.ID] = append(next.byID[t.ID], p)
		}
	}
	// Partitions no longer hosted here stop replicating before their logs
	// go.
	if old != nil {
		for k, p := range old.byKey {
			if next.byKey[k] != p {
				s.dropReplica(p)
				if p.topic == offsetsTopic && p.isLeader() {
					moved = append(moved, coordinatorMove{p.index, false})
				}
			}
		}
	}
	// Logs on disk that the image no longer has: deleted topics (also
	// ones deleted while we were down, or whose deletion crashed midway).
	for _, lp := range s.logs.All() {
		if p := next.get(lp.Topic, lp.Partition); p == nil {
			s.log.Info("deleting log of removed topic partition", "topic", lp.Topic, "partition", lp.Partition)
			if err := s.logs.Delete(lp.Topic, lp.Partition); err != nil {
				errs = append(errs, err)
			}
		}
	}
	s.parts.Store(next)
	s.dropTopicMetrics(old, next)
	s.moveCoordinator(moved)
	// Wake fetches parked on partitions that disappeared so they return.
	if old != nil {
		for k, p := range old.byKey {
			if next.byKey[k] != p {
				p.advance(p.hw.Load())
			}
		}
	}
	return errors.Join(errs...)
}

// logTopicID is the topic id a log's partition.metadata records.
func logTopicID(l *log.Log) (metadata.UUID, bool) {
	if l == nil {
		return metadata.UUID{}, false
	}
	id, ok := l.TopicID()
	return metadata.UUID(id), ok
}

func (s *Server) partition(topic string, p int32) *partition {
	return s.parts.Load().get(topic, p)
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// dataDirFor returns a default metadata dir for log dirs.
func defaultMetadataDir(logDirs []string) string {
	return filepath.Join(logDirs[0], "__fjord_metadata")
}

// groupTopics gives the group coordinator the broker's topic view.
type groupTopics struct{ s *Server }

func (g groupTopics) Topic(name string) ([16]byte, int32, bool) {
	t := g.s.image().Topic(name)
	if t == nil {
		return [16]byte{}, 0, false
	}
	return t.ID, int32(len(t.Partitions)), true
}

func (g groupTopics) TopicName(id [16]byte) (string, bool) {
	t := g.s.image().TopicsByID[metadata.UUID(id)]
	if t == nil {
		return "", false
	}
	return t.Name, true
}
