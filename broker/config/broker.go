package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Broker is a broker's configuration: server.properties (plus overrides)
// with the dynamic broker configs it was given laid over it, validated and
// typed. Fields are Kafka's keys in Go spelling, in Kafka's units; values
// merged from several keys (log.retention.ms/.minutes/.hours) are already
// resolved. A Broker is immutable: WithDynamic returns a new one.
type Broker struct {
	NodeID                           int32    // node.id (or broker.id)
	ProcessRoles                     []string // process.roles; empty if unset
	ControllerQuorumVoters           []Voter
	ControllerQuorumBootstrapServers []string
	ControllerListenerNames          []string
	Listeners                        []Listener
	// AdvertisedListeners are advertised.listeners, or else Listeners
	// without the controller listeners. An empty Host means "the address
	// the listener is bound to".
	AdvertisedListeners         []Listener
	InterBrokerListenerName     string
	ListenerSecurityProtocolMap map[string]string
	BrokerRack                  string
	// ClusterID is Fjord's cluster.id (Kafka keeps it in meta.properties
	// instead); empty when unset.
	ClusterID string

	LogDirs                  []string // log.dirs, else log.dir
	NumPartitions            int32
	DefaultReplicationFactor int32
	AutoCreateTopicsEnable   bool
	DeleteTopicEnable        bool

	LogRetentionMs              int64 // from log.retention.ms, .minutes or .hours; -1: no limit
	LogRetentionBytes           int64
	LogRetentionCheckIntervalMs int64
	LogSegmentBytes             int32
	LogRollMs                   int64 // from log.roll.ms or log.roll.hours
	LogRollJitterMs             int64 // from log.roll.jitter.ms or .hours
	LogCleanupPolicy            []string
	MessageMaxBytes             int32
	LogFlushIntervalMessages    int64
	LogFlushIntervalMs          int64 // log.flush.interval.ms, else log.flush.scheduler.interval.ms
	LogFlushSchedulerIntervalMs int64
	LogIndexIntervalBytes       int32
	LogIndexSizeMaxBytes        int32
	LogPreallocate              bool
	LogSegmentDeleteDelayMs     int64
	LogMessageTimestampType     string

	LogCleanerEnable             bool
	LogCleanerThreads            int32
	LogCleanerBackoffMs          int64
	LogCleanerMinCleanableRatio  float64
	LogCleanerDeleteRetentionMs  int64
	LogCleanerMinCompactionLagMs int64
	LogCleanerMaxCompactionLagMs int64
	LogCleanerDedupeBufferSize   int64
	NumRecoveryThreadsPerDataDir int32

	OffsetsTopicNumPartitions       int32
	OffsetsTopicReplicationFactor   int16
	OffsetsTopicSegmentBytes        int32
	OffsetsRetentionMinutes         int32
	OffsetsRetentionCheckIntervalMs int64
	OffsetMetadataMaxBytes          int32
	OffsetsCommitTimeoutMs          int32
	GroupInitialRebalanceDelayMs    int32
	GroupMinSessionTimeoutMs        int32
	GroupMaxSessionTimeoutMs        int32
	GroupMaxSize                    int32

	SocketRequestMaxBytes                int32
	SocketSendBufferBytes                int32
	SocketReceiveBufferBytes             int32
	ConnectionsMaxIdleMs                 int64
	FetchMaxBytes                        int32
	MaxIncrementalFetchSessionCacheSlots int32
	NumNetworkThreads                    int32 // accepted, not used
	NumIoThreads                         int32 // accepted, not used

	MinInsyncReplicas           int32
	CompressionType             string
	UncleanLeaderElectionEnable bool
	ReplicaLagTimeMaxMs         int64
	ProducerIDExpirationMs      int32
	TransactionalIDExpirationMs int32
	TransactionMaxTimeoutMs     int32

	static  map[string]string // server.properties, node.id/broker.id filled in
	dynamic Dynamic
	current map[string]string // static with dynamic applied
	values  map[string]any    // every known broker key, parsed from current
	logger  *slog.Logger
}

// Listener is one entry of listeners / advertised.listeners.
type Listener struct {
	Name             string // upper case, as Kafka normalises it (PLAINTEXT)
	Host             string // "" means every interface
	Port             int32
	SecurityProtocol string // from listener.security.protocol.map
}

// Addr is host:port for net.Listen.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))) }

// Voter is one entry of controller.quorum.voters.
type Voter struct {
	ID   int32
	Host string
	Port int32
}

// fjordBrokerSpecs are keys Fjord adds; Kafka does not know them.
var fjordBrokerSpecs = map[string]Spec{
	"cluster.id": {Name: "cluster.id", Type: TypeString, NoDefault: true, Importance: Medium, Used: true,
		Doc: "Fjord only: the cluster id. Kafka keeps it in meta.properties (kafka-storage format); Fjord takes it from here or generates one on first start."},
	// The standard authorizer's own keys: Kafka passes them to the
	// authorizer plugin, so KafkaConfig does not list them.
	"super.users": {Name: "super.users", Type: TypeString, NoDefault: true, Importance: Medium, Used: true,
		Doc: "Principals allowed everything when authorizer.class.name is set, separated by ';' (User:admin;User:ops)."},
	"allow.everyone.if.no.acl.found": {Name: "allow.everyone.if.no.acl.found", Type: TypeBoolean, Default: "false", Importance: Medium, Used: true,
		Doc: "With authorizer.class.name set: allow an action on a resource that has no ACLs at all (default false: deny)."},
}

// NewBroker validates server.properties (as ParseProperties returns them,
// with any --override applied) and returns the typed configuration with
// Kafka's defaults for everything unset. Every invalid value is reported,
// each with Kafka's message naming the key and the value. Keys that
// Apache Kafka defines but Fjord ignores are logged at debug level; keys
// Kafka does not know either are logged as warnings naming the key.
func NewBroker(props map[string]string, logger *slog.Logger) (*Broker, error) {
	if logger == nil {
		logger = slog.Default()
	}
	static := maps.Clone(props)
	if static == nil {
		static = map[string]string{}
	}
	var errs []error
	// Kafka's AbstractKafkaConfig.populateSynonyms: node.id and broker.id
	// are one setting.
	nodeID, hasNode := static["node.id"]
	brokerID, hasBroker := static["broker.id"]
	switch {
	case hasNode && !hasBroker:
		static["broker.id"] = nodeID
	case hasBroker && !hasNode:
		static["node.id"] = brokerID
	case hasNode && hasBroker && strings.TrimSpace(nodeID) != strings.TrimSpace(brokerID):
		errs = append(errs, fmt.Errorf("node.id (%s) and broker.id (%s) differ: set node.id only", nodeID, brokerID))
	case !hasNode && !hasBroker:
		errs = append(errs, errors.New(`Missing required configuration "node.id" which has no default value.`))
	}
	for _, k := range slices.Sorted(maps.Keys(static)) {
		logKey(logger, k)
	}
	for k, s := range fjordBrokerSpecs {
		if raw, ok := static[k]; ok {
			if _, err := s.parse(raw); err != nil {
				errs = append(errs, err)
			}
		}
	}
	b, err := build(static, Dynamic{}, logger)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid broker configuration: %w", errors.Join(errs...))
	}
	return b, nil
}

// logKey reports keys that will have no effect.
func logKey(logger *slog.Logger, k string) {
	if s, ok := brokerTable.byName[k]; ok {
		if !s.Used {
			logger.Debug("Apache Kafka broker config accepted; Fjord does not use it", "key", k)
		}
		return
	}
	if _, ok := fjordBrokerSpecs[k]; ok {
		return
	}
	if base, ok := listenerBase(k); ok {
		// Listener overrides of the TLS and SASL keys Fjord reads are
		// used (broker/listeners.go); others are accepted only.
		if s, known := brokerTable.byName[base]; !known || !s.Used {
			logger.Debug("per-listener Kafka config accepted; Fjord does not use it", "key", k, "base", base)
		}
		return
	}
	if t, ok := topicTable.byName[k]; ok && len(t.Synonyms) > 0 {
		logger.Warn("topic config in broker properties has no effect; use the broker-level name",
			"key", k, "broker_key", t.Synonyms[0].Name)
		return
	}
	logger.Warn("unknown broker config ignored (Apache Kafka does not define it either; a typo?)", "key", k)
}

// WithDynamic returns the configuration with dynamic broker configs laid
// over the static ones, as Kafka applies them. Entries that do not parse
// (they were validated when set, so only a stored value from another
// version could) are skipped with a warning, as Kafka does.
func (b *Broker) WithDynamic(d Dynamic) *Broker {
	d = Dynamic{ClusterDefault: maps.Clone(d.ClusterDefault), Broker: maps.Clone(d.Broker)}
	for _, m := range []map[string]string{d.ClusterDefault, d.Broker} {
		for k, raw := range m {
			s, ok := brokerTable.byName[k]
			if !ok {
				continue
			}
			if _, err := s.parse(raw); err != nil || s.Update == ReadOnly {
				b.logger.Warn("ignoring invalid dynamic broker config", "key", k, "value", raw, "err", err, "update", s.Update)
				delete(m, k)
			}
		}
	}
	nb, err := build(b.static, d, b.logger)
	if err != nil {
		// Static values were valid and dynamic ones were filtered above;
		// only a contradiction between them (e.g. listeners) lands here.
		b.logger.Warn("dynamic broker configs rejected", "err", err)
		return b
	}
	return nb
}

func build(static map[string]string, d Dynamic, logger *slog.Logger) (*Broker, error) {
	current := effectiveProps(static, d)
	vals, err := brokerValues(current)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	g := getter(vals)
	b := &Broker{
		NodeID:                               g.i32("node.id"),
		ProcessRoles:                         g.list("process.roles"),
		ControllerQuorumBootstrapServers:     g.list("controller.quorum.bootstrap.servers"),
		ControllerListenerNames:              upper(g.list("controller.listener.names")),
		InterBrokerListenerName:              strings.ToUpper(g.s("inter.broker.listener.name")),
		BrokerRack:                           g.s("broker.rack"),
		ClusterID:                            strings.TrimSpace(current["cluster.id"]),
		LogDirs:                              g.list("log.dirs"),
		NumPartitions:                        g.i32("num.partitions"),
		DefaultReplicationFactor:             g.i32("default.replication.factor"),
		AutoCreateTopicsEnable:               g.b("auto.create.topics.enable"),
		DeleteTopicEnable:                    g.b("delete.topic.enable"),
		LogRetentionBytes:                    g.i64("log.retention.bytes"),
		LogRetentionCheckIntervalMs:          g.i64("log.retention.check.interval.ms"),
		LogSegmentBytes:                      g.i32("log.segment.bytes"),
		LogCleanupPolicy:                     g.list("log.cleanup.policy"),
		MessageMaxBytes:                      g.i32("message.max.bytes"),
		LogFlushIntervalMessages:             g.i64("log.flush.interval.messages"),
		LogFlushSchedulerIntervalMs:          g.i64("log.flush.scheduler.interval.ms"),
		LogIndexIntervalBytes:                g.i32("log.index.interval.bytes"),
		LogIndexSizeMaxBytes:                 g.i32("log.index.size.max.bytes"),
		LogPreallocate:                       g.b("log.preallocate"),
		LogSegmentDeleteDelayMs:              g.i64("log.segment.delete.delay.ms"),
		LogMessageTimestampType:              g.s("log.message.timestamp.type"),
		LogCleanerEnable:                     g.b("log.cleaner.enable"),
		LogCleanerThreads:                    g.i32("log.cleaner.threads"),
		LogCleanerBackoffMs:                  g.i64("log.cleaner.backoff.ms"),
		LogCleanerMinCleanableRatio:          g.f64("log.cleaner.min.cleanable.ratio"),
		LogCleanerDeleteRetentionMs:          g.i64("log.cleaner.delete.retention.ms"),
		LogCleanerMinCompactionLagMs:         g.i64("log.cleaner.min.compaction.lag.ms"),
		LogCleanerMaxCompactionLagMs:         g.i64("log.cleaner.max.compaction.lag.ms"),
		LogCleanerDedupeBufferSize:           g.i64("log.cleaner.dedupe.buffer.size"),
		NumRecoveryThreadsPerDataDir:         g.i32("num.recovery.threads.per.data.dir"),
		OffsetsTopicNumPartitions:            g.i32("offsets.topic.num.partitions"),
		OffsetsTopicReplicationFactor:        g.i16("offsets.topic.replication.factor"),
		OffsetsTopicSegmentBytes:             g.i32("offsets.topic.segment.bytes"),
		OffsetsRetentionMinutes:              g.i32("offsets.retention.minutes"),
		OffsetsRetentionCheckIntervalMs:      g.i64("offsets.retention.check.interval.ms"),
		OffsetMetadataMaxBytes:               g.i32("offset.metadata.max.bytes"),
		OffsetsCommitTimeoutMs:               g.i32("offsets.commit.timeout.ms"),
		GroupInitialRebalanceDelayMs:         g.i32("group.initial.rebalance.delay.ms"),
		GroupMinSessionTimeoutMs:             g.i32("group.min.session.timeout.ms"),
		GroupMaxSessionTimeoutMs:             g.i32("group.max.session.timeout.ms"),
		GroupMaxSize:                         g.i32("group.max.size"),
		SocketRequestMaxBytes:                g.i32("socket.request.max.bytes"),
		SocketSendBufferBytes:                g.i32("socket.send.buffer.bytes"),
		SocketReceiveBufferBytes:             g.i32("socket.receive.buffer.bytes"),
		ConnectionsMaxIdleMs:                 g.i64("connections.max.idle.ms"),
		FetchMaxBytes:                        g.i32("fetch.max.bytes"),
		MaxIncrementalFetchSessionCacheSlots: g.i32("max.incremental.fetch.session.cache.slots"),
		NumNetworkThreads:                    g.i32("num.network.threads"),
		NumIoThreads:                         g.i32("num.io.threads"),
		MinInsyncReplicas:                    g.i32("min.insync.replicas"),
		CompressionType:                      g.s("compression.type"),
		UncleanLeaderElectionEnable:          g.b("unclean.leader.election.enable"),
		ReplicaLagTimeMaxMs:                  g.i64("replica.lag.time.max.ms"),
		ProducerIDExpirationMs:               g.i32("producer.id.expiration.ms"),
		TransactionalIDExpirationMs:          g.i32("transactional.id.expiration.ms"),
		TransactionMaxTimeoutMs:              g.i32("transaction.max.timeout.ms"),

		static:  static,
		dynamic: d,
		current: current,
		values:  vals,
		logger:  logger,
	}
	if len(b.LogDirs) == 0 {
		b.LogDirs = g.list("log.dir")
	}
	// The broker-level defaults of topic keys resolve exactly like the
	// topic keys themselves (several units, fallbacks).
	for _, r := range []struct {
		topicKey string
		dst      *int64
	}{{"retention.ms", &b.LogRetentionMs}, {"segment.ms", &b.LogRollMs}, {"segment.jitter.ms", &b.LogRollJitterMs}, {"flush.ms", &b.LogFlushIntervalMs}} {
		*r.dst, _ = topicDefault(topicTable.byName[r.topicKey], vals).(int64)
	}
	for _, raw := range g.list("controller.quorum.voters") {
		id, host, port, err := parseVoter(raw)
		if err == nil {
			b.ControllerQuorumVoters = append(b.ControllerQuorumVoters, Voter{ID: id, Host: host, Port: port})
		}
	}
	if err := b.parseListeners(g); err != nil {
		errs = append(errs, err)
	}
	return b, errors.Join(errs...)
}

func upper(ss []string) []string {
	for i := range ss {
		ss[i] = strings.ToUpper(ss[i])
	}
	return ss
}

// endpointRE is Kafka's listener syntax: NAME://host:port, IPv6 hosts in brackets.
var endpointRE = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

func (b *Broker) parseListeners(g getter) error {
	var errs []error
	raw := g.s("listener.security.protocol.map")
	b.ListenerSecurityProtocolMap = map[string]string{}
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, proto, ok := strings.Cut(entry, ":")
		proto = strings.ToUpper(strings.TrimSpace(proto))
		if !ok || !slices.Contains([]string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}, proto) {
			errs = append(errs, &ValueError{Name: "listener.security.protocol.map", Value: raw,
				Msg: "each entry must be LISTENER_NAME:PROTOCOL with PROTOCOL one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"})
			continue
		}
		b.ListenerSecurityProtocolMap[strings.ToUpper(strings.TrimSpace(name))] = proto
	}
	parse := func(key string, entries []string) []Listener {
		var out []Listener
		seen := map[string]bool{}
		for _, e := range entries {
			m := endpointRE.FindStringSubmatch(e)
			var port int64 = -1
			if m != nil {
				port, _ = strconv.ParseInt(m[3], 10, 32)
			}
			if port < 0 || port > 65535 {
				errs = append(errs, &ValueError{Name: key, Value: e, Msg: "Unable to parse " + e + " to a broker endpoint"})
				continue
			}
			l := Listener{Name: strings.ToUpper(m[1]), Host: m[2], Port: int32(port)}
			proto, ok := b.ListenerSecurityProtocolMap[l.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: no security protocol defined for listener %s (add it to listener.security.protocol.map)", key, l.Name))
				continue
			}
			l.SecurityProtocol = proto
			if seen[l.Name] {
				errs = append(errs, fmt.Errorf("%s: each listener must have a different name, listeners: %s", key, strings.Join(entries, ",")))
				continue
			}
			seen[l.Name] = true
			out = append(out, l)
		}
		return out
	}
	b.Listeners = parse("listeners", g.list("listeners"))
	if adv := g.list("advertised.listeners"); len(adv) > 0 {
		b.AdvertisedListeners = parse("advertised.listeners", adv)
		for _, l := range b.AdvertisedListeners {
			if l.Host == "0.0.0.0" || l.Host == "::" {
				errs = append(errs, errors.New("advertised.listeners cannot use the nonroutable meta-address "+l.Host+". Use a routable IP address."))
			}
		}
	} else {
		b.AdvertisedListeners = b.ClientListeners()
	}
	return errors.Join(errs...)
}

// ClientListeners are the listeners clients use: all but the controller ones.
func (b *Broker) ClientListeners() []Listener {
	var out []Listener
	for _, l := range b.Listeners {
		if !slices.Contains(b.ControllerListenerNames, l.Name) {
			out = append(out, l)
		}
	}
	return out
}

// Topic returns a topic's effective configuration given its overrides.
// Invalid or unknown overrides (only possible for data written by another
// version) are skipped, falling back to the broker default, and reported
// in err; the returned Topic is usable either way.
func (b *Broker) Topic(overrides map[string]string) (Topic, error) {
	vals, err := topicValues(overrides, b.values)
	return newTopic(vals), err
}

// Dynamic returns the dynamic configs this configuration includes.
func (b *Broker) Dynamic() Dynamic {
	return Dynamic{ClusterDefault: maps.Clone(b.dynamic.ClusterDefault), Broker: maps.Clone(b.dynamic.Broker)}
}

// Properties returns the static properties (server.properties and
// overrides, with node.id and broker.id both filled in).
func (b *Broker) Properties() map[string]string { return maps.Clone(b.static) }
