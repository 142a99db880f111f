package mm2

import (
	"sync"

	"github.com/fjordhq/fjord/connect/runtime"
)

// clientConfigNames are the keys of MM2's MirrorClientConfig.CLIENT_CONFIG_DEF:
// the connection settings every client of a cluster shares (bootstrap
// servers, security protocol, Kafka's client SSL and SASL settings).
// MirrorMakerConfig copies exactly these from a cluster's (and the top
// level's) settings into its producer., consumer. and admin. settings.
var clientConfigNames = func() map[string]bool {
	names := []string{
		"bootstrap.servers", "security.protocol",
		// SslConfigs.addClientSslSupport
		"ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
		"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
		"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
		"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
		"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm",
		"ssl.secure.random.implementation", "ssl.engine.factory.class",
		// SaslConfigs.addClientSaslSupport
		"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
		"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
		"sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
		"sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
		"sasl.mechanism", "sasl.jaas.config", "sasl.client.callback.handler.class",
		"sasl.login.callback.handler.class", "sasl.login.class", "sasl.login.connect.timeout.ms",
		"sasl.login.read.timeout.ms", "sasl.login.retry.backoff.max.ms", "sasl.login.retry.backoff.ms",
		"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
		"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.jwks.endpoint.url",
		"sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
		"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.clock.skew.seconds",
		"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
		"sasl.oauthbearer.header.urlencode",
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}()

// mirrorConnectorKeys are the keys the three mirror connectors define
// beyond Kafka's ConnectorConfig: MirrorConnectorConfig's shared keys and
// those of MirrorSourceConfig, MirrorCheckpointConfig and
// MirrorHeartbeatConfig. Top-level mm2.properties keys reach the
// connectors only if they are one of these (MirrorMakerConfig.allConfigNames).
var mirrorConnectorKeys = []string{
	// MirrorConnectorConfig
	"enabled", "source.cluster.alias", "target.cluster.alias", "admin.timeout.ms",
	"replication.policy.class", "replication.policy.separator",
	"replication.policy.internal.topic.separator.enabled", "forwarding.admin.class",
	"metric.reporters",
	// MirrorSourceConfig
	"topics", "topics.exclude", "config.properties.exclude", "topic.filter.class",
	"config.property.filter.class", "consumer.poll.timeout.ms",
	"refresh.topics.enabled", "refresh.topics.interval.seconds",
	"sync.topic.configs.enabled", "sync.topic.configs.interval.seconds",
	"sync.topic.acls.enabled", "sync.topic.acls.interval.seconds",
	"replication.factor", "offset-syncs.topic.replication.factor", "offset.lag.max",
	"offset-syncs.topic.location", "emit.offset-syncs.enabled", "heartbeats.replication.enabled",
	// MirrorCheckpointConfig
	"groups", "groups.exclude", "group.filter.class",
	"refresh.groups.enabled", "refresh.groups.interval.seconds",
	"emit.checkpoints.enabled", "emit.checkpoints.interval.seconds",
	"sync.group.offsets.enabled", "sync.group.offsets.interval.seconds",
	"checkpoints.topic.replication.factor",
	// MirrorHeartbeatConfig
	"emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.topic.replication.factor",
}

var (
	connectorNamesOnce sync.Once
	connectorNames     map[string]bool
)

// allConfigNames is MirrorMakerConfig.allConfigNames: every key of the
// three connectors' ConfigDefs. Those include Kafka's ConnectorConfig
// keys (tasks.max, the converters, transforms, errors.*), taken from the
// runtime's definition so they match the Kafka version Fjord speaks, and
// the client security keys MirrorConnectorConfig defines at top level.
func allConfigNames() map[string]bool {
	connectorNamesOnce.Do(func() {
		connectorNames = map[string]bool{}
		for _, k := range runtime.ConnectorConfigDef("").Keys() {
			connectorNames[k.Name] = true
		}
		for _, k := range mirrorConnectorKeys {
			connectorNames[k] = true
		}
		for k := range clientConfigNames {
			if k != "bootstrap.servers" { // MirrorConnectorConfig defines the security keys only
				connectorNames[k] = true
			}
		}
	})
	return connectorNames
}
