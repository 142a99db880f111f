package mm2

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/broker/config"
)

// Connector is one of the three connectors MM2 runs for every flow.
type Connector struct {
	// Name is the connector's name in the flow's worker group: MM2 names
	// each by its class's simple name.
	Name  string
	Class string
}

// The connectors of a flow, in MirrorMaker.CONNECTOR_CLASSES order.
var (
	SourceConnector     = Connector{"MirrorSourceConnector", "org.apache.kafka.connect.mirror.MirrorSourceConnector"}
	HeartbeatConnector  = Connector{"MirrorHeartbeatConnector", "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"}
	CheckpointConnector = Connector{"MirrorCheckpointConnector", "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"}
	Connectors          = []Connector{SourceConnector, HeartbeatConnector, CheckpointConnector}
)

// ByteArrayConverter is what MM2's workers convert keys, values and
// headers with: mirror tasks hand over Kafka's bytes untouched.
const ByteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"

// Top-level keys of mm2.properties (MirrorMakerConfig's own).
const (
	ClustersConfig            = "clusters"
	EnableInternalRestConfig  = "dedicated.mode.enable.internal.rest"
	ConfigProvidersConfig     = "config.providers"
	emitHeartbeatsEnabled     = "emit.heartbeats.enabled"
	securityProtocolConfig    = "security.protocol"
	bootstrapServersConfig    = "bootstrap.servers"
	sourceClusterPrefix       = "source.cluster."
	targetClusterPrefix       = "target.cluster."
	sourcePrefix              = "source."
	targetPrefix              = "target."
	defaultHeartbeatsEnabled  = true
	flowSeparator             = "->"
	connectorEnabledConfig    = "enabled"
	connectorSourceAliasKey   = "source.cluster.alias"
	connectorTargetAliasKey   = "target.cluster.alias"
	connectorNameConfig       = "name"
	connectorClassConfig      = "connector.class"
	workerGroupIDConfig       = "group.id"
	workerClientIDConfig      = "client.id"
	workerOffsetTopicConfig   = "offset.storage.topic"
	workerStatusTopicConfig   = "status.storage.topic"
	workerConfigTopicConfig   = "config.storage.topic"
	workerKeyConverterConfig  = "key.converter"
	workerValueConvConfig     = "value.converter"
	workerHeaderConverterConf = "header.converter"
)

// Flow is a directed pair of clusters (MM2's SourceAndTarget).
type Flow struct {
	Source, Target string
}

// String is "source->target", the prefix of the flow's keys.
func (f Flow) String() string { return f.Source + flowSeparator + f.Target }

// Config is a parsed mm2.properties (Kafka's MirrorMakerConfig).
type Config struct {
	raw      map[string]string
	clusters []string
}

// ReadFile parses an mm2.properties file.
func ReadFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := config.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c, err := Parse(props)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse checks the top-level keys MirrorMakerConfig defines and keeps the
// properties for the derivations.
func Parse(props map[string]string) (*Config, error) {
	raw, ok := props[ClustersConfig]
	if !ok {
		return nil, fmt.Errorf("Missing required configuration \"%s\" which has no default value.", ClustersConfig)
	}
	c := &Config{raw: maps.Clone(props)}
	for _, a := range strings.Split(raw, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if strings.Contains(a, flowSeparator) || strings.ContainsAny(a, " \t/") {
			return nil, fmt.Errorf("Invalid value %s for configuration clusters: cluster alias %q may not contain %q, '/' or spaces", raw, a, flowSeparator)
		}
		if !slices.Contains(c.clusters, a) {
			c.clusters = append(c.clusters, a)
		}
	}
	if v, ok := props[securityProtocolConfig]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return nil, fmt.Errorf("Invalid value %s for configuration %s: String must be one of (case insensitive): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", v, securityProtocolConfig)
		}
	}
	if v, ok := props[EnableInternalRestConfig]; ok {
		if b := strings.ToLower(strings.TrimSpace(v)); b != "true" && b != "false" {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Expected value to be either true or false", v, EnableInternalRestConfig)
		}
	}
	// MM2 resolves ${provider:path:key} in worker configs and leaves
	// connector configs to the worker; Fjord's runtime has no config
	// providers yet, so a file that names them would run with the
	// placeholders as values. Refuse it instead.
	if v := strings.TrimSpace(props[ConfigProvidersConfig]); v != "" {
		return nil, fmt.Errorf("%s = %s: config providers are not supported by fjord mirror yet", ConfigProvidersConfig, v)
	}
	return c, nil
}

// Clusters are the aliases of the clusters key, in the file's order.
func (c *Config) Clusters() []string { return slices.Clone(c.clusters) }

// Raw is the value of a key as the file has it.
func (c *Config) Raw(key string) (string, bool) {
	v, ok := c.raw[key]
	return v, ok
}

// EnableInternalRest is dedicated.mode.enable.internal.rest: serve the
// flows' internal REST endpoints so that several mirror processes can
// share a flow's worker group.
func (c *Config) EnableInternalRest() bool {
	return parseBool(c.raw[EnableInternalRestConfig])
}

// Enabled reports whether flow replicates (source->target.enabled = true);
// flows that are not enabled still emit heartbeats.
func (c *Config) Enabled(f Flow) bool {
	return parseBool(c.raw[f.String()+"."+connectorEnabledConfig])
}

// Flows are MirrorMakerConfig.clusterPairs: every ordered pair of
// clusters that is enabled or emits heartbeats. Heartbeats are on by
// default, so without emit.heartbeats.enabled = false every pair is a
// flow: for A->B replication MM2 needs the B->A pair too, whose
// heartbeat connector writes the heartbeats into A that A->B carries to
// B. Pairs come in the clusters key's order.
func (c *Config) Flows() []Flow {
	global := defaultHeartbeatsEnabled
	if v, ok := c.raw[emitHeartbeatsEnabled]; ok {
		global = parseBool(v)
	}
	var out []Flow
	for _, s := range c.clusters {
		for _, t := range c.clusters {
			if s == t {
				continue
			}
			f := Flow{s, t}
			beats := global
			if v, ok := c.raw[f.String()+"."+emitHeartbeatsEnabled]; ok {
				beats = parseBool(v)
			}
			if c.Enabled(f) || beats {
				out = append(out, f)
			}
		}
	}
	return out
}

// FlowsTo are the flows into the given target clusters (MirrorMaker's
// --clusters); no targets means all of them.
func (c *Config) FlowsTo(targets []string) ([]Flow, error) {
	for _, t := range targets {
		if !slices.Contains(c.clusters, t) {
			return nil, fmt.Errorf("cluster %q is not in clusters (%s)", t, strings.Join(c.clusters, ", "))
		}
	}
	var out []Flow
	for _, f := range c.Flows() {
		if len(targets) == 0 || slices.Contains(targets, f.Target) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("No source->target replication flows.")
	}
	return out, nil
}

// ClusterProps are MirrorMakerConfig.clusterProps: the cluster's
// "<alias>."-prefixed keys with the prefix removed; its connection
// settings (bootstrap servers, security) copied into producer.,
// consumer. and admin. settings unless those set them; then the same
// from the top level, where a cluster's own keys win.
func (c *Config) ClusterProps(cluster string) map[string]string {
	props := withPrefixStripped(c.raw, cluster+".")
	for _, k := range sortedClientNames() {
		if v, ok := props[k]; ok {
			putIfAbsent(props, "producer."+k, v)
			putIfAbsent(props, "consumer."+k, v)
			putIfAbsent(props, "admin."+k, v)
		}
	}
	for _, k := range sortedClientNames() {
		if v, ok := c.raw[k]; ok {
			putIfAbsent(props, "producer."+k, v)
			putIfAbsent(props, "consumer."+k, v)
			putIfAbsent(props, "admin."+k, v)
			putIfAbsent(props, k, v)
		}
	}
	return props
}

// ClientProps are the Kafka client properties for a cluster and a client
// kind ("producer", "consumer" or "admin"): MirrorClientConfig's
// producerConfig/consumerConfig/adminConfig — the connection keys, the
// kind's prefixed ones winning.
func (c *Config) ClientProps(cluster, kind string) map[string]string {
	all := maps.Clone(c.raw)
	maps.Copy(all, c.ClusterProps(cluster))
	out := map[string]string{}
	for k := range clientConfigNames {
		if v, ok := all[kind+"."+k]; ok {
			out[k] = v
		} else if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}

// WorkerConfig is MirrorMakerConfig.workerConfig: the properties of the
// flow's Connect worker, which runs on the target cluster. They are the
// target's cluster properties, the top-level worker keys MM2 accepts
// (offset.storage*, config.storage*, status.storage*, the converters,
// task*, worker*, replication.policy*), and defaults that make each
// flow its own worker group: client.id "source->target", group.id
// "<source>-mm2", internal topics mm2-{offsets,status,configs}.<source>.internal
// and ByteArrayConverter for keys, values and headers.
func (c *Config) WorkerConfig(f Flow) map[string]string {
	props := c.ClusterProps(f.Target)
	for _, p := range []string{"offset.storage", "config.storage", "status.storage",
		"key.converter", "value.converter", "header.converter", "task", "worker", "replication.policy"} {
		maps.Copy(props, withPrefix(c.raw, p))
	}
	maps.Copy(props, withPrefix(c.raw, ConfigProvidersConfig))
	putIfAbsent(props, workerClientIDConfig, f.String())
	putIfAbsent(props, workerGroupIDConfig, f.Source+"-mm2")
	putIfAbsent(props, workerOffsetTopicConfig, "mm2-offsets."+f.Source+".internal")
	putIfAbsent(props, workerStatusTopicConfig, "mm2-status."+f.Source+".internal")
	putIfAbsent(props, workerConfigTopicConfig, "mm2-configs."+f.Source+".internal")
	putIfAbsent(props, workerKeyConverterConfig, ByteArrayConverter)
	putIfAbsent(props, workerValueConvConfig, ByteArrayConverter)
	putIfAbsent(props, workerHeaderConverterConf, ByteArrayConverter)
	return props
}

// ConnectorConfig is MirrorMakerConfig.connectorBaseConfig: the config of
// one of the flow's connectors. In order, later ones winning:
//   - top-level keys the mirror connectors define (topics, groups,
//     tasks.max, replication.factor, sync.*, emit.*, the converters, ...);
//     other top-level keys do not reach connectors;
//   - config.providers* and replication.policy* keys;
//   - the source cluster's properties (ClusterProps) as
//     source.cluster.<key>, except its producer./consumer./admin. keys,
//     which become source.<key> (source.consumer.*, source.admin.*, ...);
//     the same for the target as target.cluster.* and target.*;
//   - name (the class's simple name), connector.class and the two cluster
//     aliases, unless set;
//   - the flow's "source->target."-prefixed keys, prefix removed;
//   - enabled = false unless the flow set it: a heartbeat-only pair runs
//     source and checkpoint connectors that do nothing.
//
// Values are left as written (MM2 leaves ${...} to the worker).
func (c *Config) ConnectorConfig(f Flow, conn Connector) map[string]string {
	names := allConfigNames()
	props := map[string]string{}
	for k, v := range c.raw {
		if names[k] {
			props[k] = v
		}
	}
	maps.Copy(props, withPrefix(c.raw, ConfigProvidersConfig))
	maps.Copy(props, withPrefix(c.raw, "replication.policy"))
	addCluster(props, sourceClusterPrefix, sourcePrefix, c.ClusterProps(f.Source))
	addCluster(props, targetClusterPrefix, targetPrefix, c.ClusterProps(f.Target))
	putIfAbsent(props, connectorNameConfig, conn.Name)
	putIfAbsent(props, connectorClassConfig, conn.Class)
	putIfAbsent(props, connectorSourceAliasKey, f.Source)
	putIfAbsent(props, connectorTargetAliasKey, f.Target)
	maps.Copy(props, withPrefixStripped(c.raw, f.String()+"."))
	putIfAbsent(props, connectorEnabledConfig, "false")
	return props
}

// addCluster is clusterConfigsWithPrefix and clientConfigsWithPrefix:
// client keys (consumer*, producer*, admin*) under clientPrefix, the rest
// under clusterPrefix.
func addCluster(dst map[string]string, clusterPrefix, clientPrefix string, props map[string]string) {
	for k, v := range props {
		if strings.HasPrefix(k, "consumer") || strings.HasPrefix(k, "producer") || strings.HasPrefix(k, "admin") {
			dst[clientPrefix+k] = v
		} else {
			dst[clusterPrefix+k] = v
		}
	}
}

// withPrefixStripped is Utils.entriesWithPrefix(map, prefix): the keys
// longer than prefix that start with it, prefix removed.
func withPrefixStripped(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if len(k) > len(prefix) && strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// withPrefix is MirrorMakerConfig.stringsWithPrefix: the keys starting
// with prefix (the prefix itself included), unchanged. It is a plain
// string prefix: "task" takes tasks.max too, as in MM2.
func withPrefix(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

func putIfAbsent(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// parseBool is Java's Boolean.parseBoolean, forgiving surrounding blanks
// (a properties value keeps trailing blanks, which Java would read as
// false).
func parseBool(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

func sortedClientNames() []string {
	return slices.Sorted(maps.Keys(clientConfigNames))
}
