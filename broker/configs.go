package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/authorizer"
	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/group"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

// ConfigFromProperties builds a broker Config from Kafka-named properties
// (a parsed server.properties plus overrides). Invalid values are errors
// naming the key; unknown keys are logged by broker/config.
func ConfigFromProperties(props map[string]string, logger *slog.Logger) (Config, error) {
	if logger == nil {
		logger = slog.Default()
	}
	b, err := config.NewBroker(props, logger)
	if err != nil {
		return Config{}, err
	}
	if len(b.LogDirs) == 0 {
		return Config{}, errors.New("log.dirs is not set: name the directories to keep data in")
	}
	// Kafka's log.cleaner.backoff.ms=0 means "look for work again at once";
	// the log manager reads 0 as unset (15 s), so pass the smallest interval.
	cleanerBackoff := max(time.Duration(b.LogCleanerBackoffMs)*time.Millisecond, time.Millisecond)
	cfg := Config{
		NodeID:                   b.NodeID,
		Rack:                     b.BrokerRack,
		ClusterID:                b.ClusterID,
		NumPartitions:            b.NumPartitions,
		DefaultReplicationFactor: int16(b.DefaultReplicationFactor),
		AutoCreateTopics:         b.AutoCreateTopicsEnable,
		DeleteTopicEnable:        b.DeleteTopicEnable,
		MaxRequestSize:           b.SocketRequestMaxBytes,
		IdleTimeout:              time.Duration(b.ConnectionsMaxIdleMs) * time.Millisecond,
		SocketSendBuffer:         int(b.SocketSendBufferBytes),
		SocketReceiveBuffer:      int(b.SocketReceiveBufferBytes),
		ProducerIDExpirationMs:   int64(b.ProducerIDExpirationMs),
		OffsetsTopicPartitions:   b.OffsetsTopicNumPartitions,
		OffsetsTopicSegmentBytes: int64(b.OffsetsTopicSegmentBytes),
		LogManager: log.ManagerConfig{
			Dirs:                    b.LogDirs,
			RecoveryThreadsPerDir:   int(b.NumRecoveryThreadsPerDataDir),
			RetentionCheckInterval:  time.Duration(b.LogRetentionCheckIntervalMs) * time.Millisecond,
			CleanerEnable:           b.LogCleanerEnable,
			CleanerBackoff:          cleanerBackoff,
			CleanerDedupeBufferSize: b.LogCleanerDedupeBufferSize,
			FlushCheckInterval:      sensibleInterval(b.LogFlushSchedulerIntervalMs),
			CheckpointInterval:      sensibleInterval(propInt(b.Properties(), "log.flush.offset.checkpoint.interval.ms", 60000)),
			NodeID:                  b.NodeID,
			ClusterID:               b.ClusterID,
		},
		Group: group.Config{
			OffsetsTopicPartitions:        b.OffsetsTopicNumPartitions,
			InitialRebalanceDelay:         time.Duration(b.GroupInitialRebalanceDelayMs) * time.Millisecond,
			MinSessionTimeout:             time.Duration(b.GroupMinSessionTimeoutMs) * time.Millisecond,
			MaxSessionTimeout:             time.Duration(b.GroupMaxSessionTimeoutMs) * time.Millisecond,
			MaxGroupSize:                  int(b.GroupMaxSize),
			OffsetsRetention:              time.Duration(b.OffsetsRetentionMinutes) * time.Minute,
			OffsetsRetentionCheckInterval: time.Duration(b.OffsetsRetentionCheckIntervalMs) * time.Millisecond,
			OffsetMetadataMaxBytes:        int(b.OffsetMetadataMaxBytes),
		},
		Topics: &configPolicy{static: b, nodeID: b.NodeID},
		BootstrapConfigs: map[string]string{
			"min.insync.replicas": strconv.Itoa(int(b.MinInsyncReplicas)),
		},
		Logger: logger,
	}
	props = b.Properties()
	ms := func(key string, def int64) time.Duration {
		return time.Duration(propInt(props, key, def)) * time.Millisecond
	}
	cfg.Cluster = ClusterConfig{
		Voters:                        map[int32]string{},
		BrokerSessionTimeout:          ms("broker.session.timeout.ms", 2000),
		BrokerHeartbeatInterval:       ms("broker.heartbeat.interval.ms", 500),
		ReplicaLagTime:                time.Duration(b.ReplicaLagTimeMaxMs) * time.Millisecond,
		ReplicaFetchMaxBytes:          int32(propInt(props, "replica.fetch.max.bytes", 1<<20)),
		ReplicaFetchResponseMaxBytes:  int32(propInt(props, "replica.fetch.response.max.bytes", 10<<20)),
		ReplicaFetchMinBytes:          int32(propInt(props, "replica.fetch.min.bytes", 1)),
		ReplicaFetchWait:              ms("replica.fetch.wait.max.ms", 500),
		ReplicaFetchBackoff:           ms("replica.fetch.backoff.ms", 1000),
		OffsetsTopicReplicationFactor: b.OffsetsTopicReplicationFactor,
		InterBrokerListener:           b.InterBrokerListenerName,
		StaticConfigs:                 props,
	}
	for _, v := range b.ControllerQuorumVoters {
		cfg.Cluster.Voters[v.ID] = net.JoinHostPort(v.Host, strconv.Itoa(int(v.Port)))
	}
	for _, r := range b.ProcessRoles {
		switch r {
		case "broker":
			cfg.Cluster.Broker = true
		case "controller":
			cfg.Cluster.Controller = true
		}
	}
	if len(b.ProcessRoles) == 0 {
		cfg.Cluster.Broker = true
	}
	reauth := time.Duration(propInt(props, "connections.max.reauth.ms", 0)) * time.Millisecond
	for _, l := range b.Listeners {
		if len(b.ControllerListenerNames) > 0 && l.Name == b.ControllerListenerNames[0] {
			cfg.Cluster.ControllerListenAddr = l.Addr()
			if cfg.Cluster.ControllerSecurity, err = listenerSecurity(props, l, reauth); err != nil {
				return Config{}, err
			}
		}
	}
	if cfg.Cluster.Enabled() {
		var ctrlUser string
		if cfg.Cluster.ControllerDialer, ctrlUser, err = controllerDialer(props, b); err != nil {
			return Config{}, err
		}
		if err := checkControllerPrincipal(props, b, ctrlUser); err != nil {
			return Config{}, err
		}
		if d := cfg.Cluster.ControllerDialer; d != nil && d.SASL != nil && d.SASL.Name() != "PLAIN" && cfg.Cluster.Controller {
			// Raft peers authenticate before any metadata (where SCRAM
			// credentials live) can be replicated: a quorum of SCRAM-only
			// controllers could never elect a leader.
			return Config{}, fmt.Errorf("sasl.mechanism.controller.protocol=%s: controllers authenticate to each other before the metadata log (which holds SCRAM credentials) is readable; use PLAIN with listener.name.%s.plain.sasl.jaas.config (brokers may still use SCRAM once their credentials exist)",
				d.SASL.Name(), strings.ToLower(b.ControllerListenerNames[0]))
		}
	}
	for _, l := range b.AdvertisedListeners {
		cfg.Cluster.Listeners = append(cfg.Cluster.Listeners, controller.Listener{Name: l.Name, Host: l.Host, Port: l.Port})
	}
	controllerOnly := cfg.Cluster.Enabled() && !cfg.Cluster.Broker

	// The first client listener is the Kafka listener (Addr); every one
	// is served with its security protocol (broker/listeners.go).
	// An authorizer.class.name Fjord does not have, or a bad super.users,
	// refuses to start, as Kafka does, rather than run unprotected.
	if _, err := authorizer.FromProperties(props, func() *metadata.Image { return nil }); err != nil {
		return Config{}, err
	}
	clientListeners := b.ClientListeners()
	for _, l := range clientListeners {
		sec, err := listenerSecurity(props, l, reauth)
		if err != nil {
			return Config{}, err
		}
		if sec == nil && len(clientListeners) > 1 {
			// A PLAINTEXT listener beside others still names itself, so
			// Metadata answers its clients with this listener's endpoints.
			sec = &protocol.Security{Listener: l.Name, Protocol: "PLAINTEXT"}
		}
		if sec != nil {
			if cfg.ListenerSecurity == nil {
				cfg.ListenerSecurity = map[string]*protocol.Security{}
			}
			cfg.ListenerSecurity[l.Name] = sec
		}
		cfg.ListenerNames = append(cfg.ListenerNames, l.Name)
		if cfg.ListenAddr == "" {
			cfg.ListenAddr = l.Addr()
		} else {
			cfg.ExtraListenAddrs = append(cfg.ExtraListenAddrs, l.Addr())
		}
	}
	// Only a cluster's brokers dial each other; a single node needs no
	// inter-broker credentials.
	if cfg.Cluster.Enabled() && cfg.Cluster.Broker {
		if cfg.Cluster.InterBrokerDialer, err = interBrokerDialer(props, b); err != nil {
			return Config{}, err
		}
	}
	cfg.MaxConnections = limitOrZero(propInt(props, "max.connections", 0))
	cfg.MaxConnectionsPerIP = limitOrZero(propInt(props, "max.connections.per.ip", 0))
	cfg.MaxConnectionsPerIPOverrides, err = parsePerIPOverrides(props["max.connections.per.ip.overrides"])
	if err != nil {
		return Config{}, err
	}
	if cfg.ListenAddr == "" && !controllerOnly {
		return Config{}, errors.New("no client listener: set listeners=PLAINTEXT://host:port")
	}
	for _, l := range b.AdvertisedListeners {
		if l.Name == "PLAINTEXT" || len(b.AdvertisedListeners) == 1 {
			cfg.AdvertisedHost, cfg.AdvertisedPort = l.Host, l.Port
			break
		}
	}
	return cfg, nil
}

// configPolicy implements TopicPolicy with broker/config, laying the
// metadata image's dynamic broker configs over server.properties.
type configPolicy struct {
	static *config.Broker
	nodeID int32
}

func (c *configPolicy) broker(img *metadata.Image) *config.Broker {
	cd, own := img.BrokerConfigs(""), img.BrokerConfigs(strconv.Itoa(int(c.nodeID)))
	if len(cd) == 0 && len(own) == 0 {
		return c.static
	}
	return c.static.WithDynamic(config.Dynamic{ClusterDefault: cd, Broker: own})
}

func (c *configPolicy) Resolve(img *metadata.Image, topic string) TopicSettings {
	t, err := c.broker(img).Topic(img.TopicConfigs(topic))
	if err != nil {
		// Stored overrides this version cannot read: the rest still
		// applies, the bad keys fall back to defaults.
		slog.Warn("ignoring invalid stored topic configs", "topic", topic, "err", err)
	}
	return TopicSettings{
		Log: log.Config{
			SegmentBytes:           int64(t.SegmentBytes),
			SegmentMs:              t.SegmentMs,
			SegmentIndexBytes:      t.SegmentIndexBytes,
			IndexIntervalBytes:     t.IndexIntervalBytes,
			RetentionMs:            t.RetentionMs,
			RetentionBytes:         t.RetentionBytes,
			Compact:                t.Compact,
			Delete:                 t.Delete,
			DeleteRetentionMs:      t.DeleteRetentionMs,
			MinCompactionLagMs:     t.MinCompactionLagMs,
			MaxCompactionLagMs:     t.MaxCompactionLagMs,
			MinCleanableDirtyRatio: t.MinCleanableDirtyRatio,
			FlushMessages:          t.FlushMessages,
			FlushMs:                t.FlushMs,
			FileDeleteDelayMs:      t.FileDeleteDelayMs,
		},
		MaxMessageBytes:   t.MaxMessageBytes,
		CompressionType:   t.CompressionType,
		LogAppendTime:     t.LogAppendTime,
		TimestampBeforeMs: t.MessageTimestampBeforeMaxMs,
		TimestampAfterMs:  t.MessageTimestampAfterMaxMs,
		MinInsyncReplicas: t.MinInsyncReplicas,
	}
}

func (c *configPolicy) Validate(configs map[string]string) error {
	return asControllerError(c.static.ValidateTopicConfigs(configs))
}

func (c *configPolicy) ValidateBroker(broker string, configs map[string]string) error {
	return asControllerError(config.ValidateBrokerConfigs(broker, configs))
}

func (c *configPolicy) DescribeTopic(img *metadata.Image, topic string, req *kmsg.DescribeConfigsRequestResource, synonyms, docs bool, version int16) []kmsg.DescribeConfigsResponseResourceConfig {
	return c.broker(img).DescribeTopic(img.TopicConfigs(topic), describeOptions(req, synonyms, docs, version))
}

func (c *configPolicy) DescribeBroker(img *metadata.Image, broker int32, req *kmsg.DescribeConfigsRequestResource, synonyms, docs bool, version int16) []kmsg.DescribeConfigsResponseResourceConfig {
	name := ""
	if broker >= 0 {
		name = strconv.Itoa(int(broker))
	}
	out, err := c.broker(img).DescribeBroker(name, describeOptions(req, synonyms, docs, version))
	if err != nil {
		return nil
	}
	return out
}

// CreateTopicConfigs lists a new topic's configs for CreateTopics v5+.
func (c *configPolicy) CreateTopicConfigs(img *metadata.Image, overrides map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	return c.broker(img).CreateTopicConfigs(overrides)
}

func (c *configPolicy) ApplyIncrementalAlter(typ int8, current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	next, err := config.ApplyIncrementalAlter(kmsg.ConfigResourceType(typ), current, ops)
	return next, asControllerError(err)
}

func describeOptions(req *kmsg.DescribeConfigsRequestResource, synonyms, docs bool, version int16) config.DescribeOptions {
	o := config.DescribeOptions{Synonyms: synonyms, Documentation: docs, Version: version}
	if req != nil {
		o.Names = req.ConfigNames
	}
	return o
}

// asControllerError carries a config error's Kafka code into the
// controller's error type.
func asControllerError(err error) error {
	if err == nil {
		return nil
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		code, ok := kerr.ErrorForCode(ce.Code).(*kerr.Error)
		if !ok {
			code = kerr.InvalidConfig
		}
		return &controller.Error{Code: code, Message: ce.Message}
	}
	return &controller.Error{Code: kerr.InvalidConfig, Message: err.Error()}
}

// sensibleInterval converts a Kafka millisecond interval for a ticker:
// Kafka spells "never" as Long.MAX_VALUE, which overflows a Duration; 0
// leaves the log package's default.
func sensibleInterval(ms int64) time.Duration {
	if ms <= 0 || ms > int64(365*24*time.Hour/time.Millisecond) {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// propInt reads an integer property that broker/config accepts as a Kafka
// key but does not type; def if unset or not a number.
func propInt(props map[string]string, key string, def int64) int64 {
	if v, err := strconv.ParseInt(props[key], 10, 64); err == nil {
		return v
	}
	return def
}
