package runtime

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/configprovider"
)

// Mode is how the worker runs: alone with a file for offsets, or in a
// group with state in Kafka topics.
type Mode int

const (
	Standalone Mode = iota
	Distributed
)

func (m Mode) String() string {
	if m == Distributed {
		return "distributed"
	}
	return "standalone"
}

// WorkerConfigDef returns the worker config definition of a mode: Kafka's
// StandaloneConfig or DistributedConfig, with its names, types, defaults
// and docs.
func WorkerConfigDef(mode Mode) *connect.ConfigDef {
	if mode == Distributed {
		return kafkaConfigDef("distributed")
	}
	return kafkaConfigDef("standalone")
}

// WorkerConfig is a parsed worker.properties (Kafka's WorkerConfig with
// StandaloneConfig/DistributedConfig). Both herders use it: the
// distributed keys are zero in standalone mode.
type WorkerConfig struct {
	Mode   Mode
	Config *connect.Config

	BootstrapServers []string
	// Providers are the config providers of config.providers (Kafka's
	// KIP-297): they resolved the variables of these properties and
	// resolve connector configs when connectors and tasks start.
	Providers configprovider.Providers
	// KeyConverter, ValueConverter and HeaderConverter are class names
	// (or aliases); their settings are the "key.converter." (...)
	// prefixed properties (ConverterProps).
	KeyConverter, ValueConverter, HeaderConverter string

	OffsetFlushInterval         time.Duration
	OffsetFlushTimeout          time.Duration
	TaskShutdownGracefulTimeout time.Duration

	Listeners              []string
	RestAdvertisedHostName string
	RestAdvertisedPort     int
	RestAdvertisedListener string

	// ClientConfigOverridePolicy is connector.client.config.override.policy:
	// None, Principal or All (Kafka's default).
	ClientConfigOverridePolicy string
	TopicCreationEnable        bool
	TopicTrackingEnable        bool
	TopicTrackingAllowReset    bool
	ExactlyOnceSourceSupport   string
	ClientID                   string

	// Standalone.
	OffsetStorageFileName string

	// Distributed.
	GroupID                        string
	ConfigStorageTopic             string
	OffsetStorageTopic             string
	StatusStorageTopic             string
	OffsetStoragePartitions        int32
	StatusStoragePartitions        int32
	ConfigStorageReplicationFactor int16
	OffsetStorageReplicationFactor int16
	StatusStorageReplicationFactor int16
	InternalTopicsAutoCreate       bool
	ScheduledRebalanceMaxDelay     time.Duration
	HeartbeatInterval              time.Duration
	SessionTimeout                 time.Duration
	RebalanceTimeout               time.Duration
	WorkerSyncTimeout              time.Duration
	WorkerUnsyncBackoff            time.Duration
	ConnectProtocol                string
	// KIP-507 signing of worker-to-worker requests (inter.worker.*).
	InterWorkerKeyTTL                 time.Duration
	InterWorkerKeyGenerationAlgorithm string
	InterWorkerKeySize                int // bits; 0: the algorithm's default
	InterWorkerSignatureAlgorithm     string
	InterWorkerVerificationAlgorithms []string
}

// ParseWorkerConfig parses worker properties for a mode with Kafka's
// names, defaults and checks; the error lists every bad key.
func ParseWorkerConfig(props map[string]string, mode Mode) (*WorkerConfig, error) {
	props, providers, err := resolveWorkerProps(props)
	if err != nil {
		return nil, err
	}
	c, err := WorkerConfigDef(mode).Parse(props)
	if err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	w := &WorkerConfig{
		Mode: mode, Config: c, Providers: providers,
		BootstrapServers:            c.List("bootstrap.servers"),
		KeyConverter:                c.String("key.converter"),
		ValueConverter:              c.String("value.converter"),
		HeaderConverter:             c.String("header.converter"),
		OffsetFlushInterval:         ms(c.Long("offset.flush.interval.ms")),
		OffsetFlushTimeout:          ms(c.Long("offset.flush.timeout.ms")),
		TaskShutdownGracefulTimeout: ms(c.Long("task.shutdown.graceful.timeout.ms")),
		Listeners:                   c.List("listeners"),
		RestAdvertisedHostName:      c.String("rest.advertised.host.name"),
		RestAdvertisedPort:          int(c.Int("rest.advertised.port")),
		RestAdvertisedListener:      c.String("rest.advertised.listener"),
		ClientConfigOverridePolicy:  c.String("connector.client.config.override.policy"),
		TopicCreationEnable:         c.Bool("topic.creation.enable"),
		TopicTrackingEnable:         c.Bool("topic.tracking.enable"),
		TopicTrackingAllowReset:     c.Bool("topic.tracking.allow.reset"),
		ClientID:                    c.String("client.id"),
	}
	var problems []connect.ConfigProblem
	switch w.ClientConfigOverridePolicy {
	case "None", "Principal", "All":
	default:
		if p, ok := policyAliases[w.ClientConfigOverridePolicy]; ok {
			w.ClientConfigOverridePolicy = p
		} else {
			problems = append(problems, connect.ConfigProblem{Key: "connector.client.config.override.policy",
				Message: fmt.Sprintf("Invalid value %s for configuration connector.client.config.override.policy: connector client config override policy must be one of None, Principal or All", w.ClientConfigOverridePolicy)})
		}
	}
	for _, l := range w.Listeners {
		if _, _, err := ParseListener(l); err != nil {
			problems = append(problems, connect.ConfigProblem{Key: "listeners", Message: err.Error()})
		}
	}
	if mode == Standalone {
		w.OffsetStorageFileName = c.String("offset.storage.file.filename")
	} else {
		w.ExactlyOnceSourceSupport = c.String("exactly.once.source.support")
		w.GroupID = c.String("group.id")
		w.ConfigStorageTopic = c.String("config.storage.topic")
		w.OffsetStorageTopic = c.String("offset.storage.topic")
		w.StatusStorageTopic = c.String("status.storage.topic")
		w.OffsetStoragePartitions = c.Int("offset.storage.partitions")
		w.StatusStoragePartitions = c.Int("status.storage.partitions")
		w.ConfigStorageReplicationFactor = c.Short("config.storage.replication.factor")
		w.OffsetStorageReplicationFactor = c.Short("offset.storage.replication.factor")
		w.StatusStorageReplicationFactor = c.Short("status.storage.replication.factor")
		w.InternalTopicsAutoCreate = c.Bool("internal.topics.automatic.creation.enable")
		w.ScheduledRebalanceMaxDelay = ms(int64(c.Int("scheduled.rebalance.max.delay.ms")))
		w.HeartbeatInterval = ms(int64(c.Int("heartbeat.interval.ms")))
		w.SessionTimeout = ms(int64(c.Int("session.timeout.ms")))
		w.RebalanceTimeout = ms(int64(c.Int("rebalance.timeout.ms")))
		w.WorkerSyncTimeout = ms(int64(c.Int("worker.sync.timeout.ms")))
		w.WorkerUnsyncBackoff = ms(int64(c.Int("worker.unsync.backoff.ms")))
		w.ConnectProtocol = c.String("connect.protocol")
		problems = append(problems, w.parseInterWorker(c)...)
		// Kafka: the three topics must differ.
		topics := map[string]string{}
		for _, k := range []string{"config.storage.topic", "offset.storage.topic", "status.storage.topic"} {
			t := c.String(k)
			if other, ok := topics[t]; ok {
				problems = append(problems, connect.ConfigProblem{Key: k,
					Message: fmt.Sprintf("Topic '%s' specified via the '%s' property is also specified via the '%s' property; each of these properties must specify a unique topic", t, k, other)})
			}
			topics[t] = k
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("worker config: %w", &connect.ConfigError{Problems: problems})
	}
	return w, nil
}

// Kafka also accepts the policies' class names.
var policyAliases = map[string]string{
	"org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy":      "None",
	"org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy": "Principal",
	"org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy":       "All",
	"NoneConnectorClientConfigOverridePolicy":                                                "None",
	"PrincipalConnectorClientConfigOverridePolicy":                                           "Principal",
	"AllConnectorClientConfigOverridePolicy":                                                 "All",
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Originals returns the properties as given.
func (w *WorkerConfig) Originals() map[string]string { return w.Config.Originals() }

// ConverterProps returns the settings of the worker's key, value or
// header converter: the "<key>." prefixed properties, prefix removed
// (key is "key.converter", "value.converter" or "header.converter").
func (w *WorkerConfig) ConverterProps(key string) map[string]string {
	return w.Config.OriginalsWithPrefix(key + ".")
}

// TopicSettings returns the topic configs for an internal topic from the
// worker's "<prefix>" properties (e.g. offset.storage.segment.bytes),
// without the keys the worker itself uses (KIP-605).
func (w *WorkerConfig) TopicSettings(prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range w.Config.OriginalsWithPrefix(prefix) {
		switch k {
		case "topic", "partitions", "replication.factor", "file.filename":
			continue
		}
		out[k] = v
	}
	return out
}

// ParseListener splits a listener URL (http://host:port, host may be
// empty for all interfaces) into scheme and address.
func ParseListener(l string) (scheme, addr string, err error) {
	u, err := url.Parse(strings.TrimSpace(l))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("Invalid value %s for configuration listeners: listeners must be URLs such as http://:8083 or https://host:8443", l)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", "", fmt.Errorf("Invalid value %s for configuration listeners: %v", l, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", "", fmt.Errorf("Invalid value %s for configuration listeners: bad port %q", l, port)
	}
	return u.Scheme, net.JoinHostPort(host, port), nil
}

// AdvertisedURL is the REST URL other workers and clients should use
// (Kafka's RestServer.advertisedUrl): rest.advertised.* when set, else the
// first listener (of rest.advertised.listener's scheme) with the
// machine's host name when it binds all interfaces. listenAddr is the
// bound address when the listener used port 0.
func (w *WorkerConfig) AdvertisedURL(listenAddr string) string {
	scheme, addr := "http", listenAddr
	for _, l := range w.Listeners {
		s, a, err := ParseListener(l)
		if err != nil {
			continue
		}
		if w.RestAdvertisedListener == "" || s == w.RestAdvertisedListener {
			scheme = s
			if addr == "" {
				addr = a
			}
			break
		}
	}
	if w.RestAdvertisedListener != "" {
		scheme = w.RestAdvertisedListener
	}
	host, port, _ := net.SplitHostPort(addr)
	if w.RestAdvertisedHostName != "" {
		host = w.RestAdvertisedHostName
	}
	if w.RestAdvertisedPort > 0 {
		port = strconv.Itoa(w.RestAdvertisedPort)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		if h, err := osHostname(); err == nil {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// osHostname is os.Hostname (a variable so tests can fix it).
var osHostname = os.Hostname
