package admin

import (
	"strings"

	"github.com/fjordhq/fjord/connect/plugins"
)

// Connector classes the pipeline and mirror views treat specially. A
// config names its class by full class name or by any alias the plugin
// registry knows; canonicalClass resolves them through the registry of
// this binary and, for a plugin this binary lacks (the admin API of a
// broker reading a remote worker's configs), through knownClassNames.
const (
	postgresCDCClass      = "io.debezium.connector.postgresql.PostgresConnector"
	mirrorSourceClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	mirrorCheckpointClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	mirrorHeartbeatClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
)

// knownClassNames maps every name of those plugins (as
// connectors/postgres/cdc and mirror/{source,checkpoint,heartbeat}
// register them) to the class; a test checks it against the registry.
var knownClassNames = map[string]string{
	postgresCDCClass: postgresCDCClass, "postgres-cdc": postgresCDCClass,
	"PostgresConnector": postgresCDCClass, "Postgres": postgresCDCClass,

	mirrorSourceClass: mirrorSourceClass, "MirrorSourceConnector": mirrorSourceClass,
	"mirror-source": mirrorSourceClass,

	mirrorCheckpointClass: mirrorCheckpointClass, "MirrorCheckpointConnector": mirrorCheckpointClass,
	"MirrorCheckpoint": mirrorCheckpointClass, "mirror-checkpoint": mirrorCheckpointClass,

	mirrorHeartbeatClass: mirrorHeartbeatClass, "MirrorHeartbeatConnector": mirrorHeartbeatClass,
	"MirrorHeartbeat": mirrorHeartbeatClass, "mirror-heartbeat": mirrorHeartbeatClass,
}

// canonicalClass is the full class name of a config's connector.class.
func canonicalClass(class string) string {
	class = strings.TrimSpace(class)
	if p, ok := plugins.Lookup(class); ok {
		return p.Class
	}
	if c, ok := knownClassNames[class]; ok {
		return c
	}
	return class
}

func isMirrorClass(class string) bool {
	switch class {
	case mirrorSourceClass, mirrorCheckpointClass, mirrorHeartbeatClass:
		return true
	}
	return false
}
