package policy

import (
	"fmt"
	"strings"
)

// Class names replication.policy.class accepts (Kafka's, and the simple
// names).
const (
	DefaultClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// New builds the policy replication.policy.class names, configured from
// props as MM2 configures it (Configurable.configure with the connector's
// original properties):
//   - replication.policy.separator, default ".", used verbatim (not
//     trimmed: Java reads it from the originals);
//   - replication.policy.internal.topic.separator.enabled, read only when a
//     separator is set, as in DefaultReplicationPolicy.configure, and false
//     unless the value is "true" in any case (Boolean.parseBoolean);
//   - source.cluster.alias, for the identity policy.
func New(props map[string]string) (ReplicationPolicy, error) {
	separator := SeparatorDefault
	internalEnabled := InternalTopicSeparatorEnabledDefault
	if s, ok := props[SeparatorConfig]; ok {
		separator = s
		if v, ok := props[InternalTopicSeparatorEnabledConfig]; ok {
			internalEnabled = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	class := strings.TrimSpace(props[ClassConfig])
	switch class {
	case "", DefaultClass, "DefaultReplicationPolicy":
		return NewDefault(separator, internalEnabled), nil
	case IdentityClass, "IdentityReplicationPolicy":
		return NewIdentity(separator, internalEnabled, props[SourceClusterAliasConfig]), nil
	}
	return nil, fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found.", class, ClassConfig, class)
}

var (
	_ ReplicationPolicy = (*Default)(nil)
	_ ReplicationPolicy = (*Identity)(nil)
)
