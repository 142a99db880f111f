package policy

import "strings"

// Config keys and defaults (MirrorClientConfig).
const (
	ClassConfig                          = "replication.policy.class"
	SeparatorConfig                      = "replication.policy.separator"
	InternalTopicSeparatorEnabledConfig  = "replication.policy.internal.topic.separator.enabled"
	SeparatorDefault                     = "."
	InternalTopicSeparatorEnabledDefault = true
	// SourceClusterAliasConfig is read by the identity policy only, for
	// TopicSource (IdentityReplicationPolicy.SOURCE_CLUSTER_ALIAS_CONFIG).
	SourceClusterAliasConfig = "source.cluster.alias"
)

// Default is MM2's DefaultReplicationPolicy: a remote topic is named
// <source alias><separator><topic>, so a topic's path through clusters is
// spelled in its name ("b.a.orders" came from a through b).
type Default struct {
	separator string
	// internalSeparatorEnabled: the separator also names the offset-syncs
	// and checkpoints topics; false keeps "." there, the names MM2 used
	// before KIP-690 made them follow the separator.
	internalSeparatorEnabled bool
}

// NewDefault returns the default policy with the given separator.
func NewDefault(separator string, internalTopicSeparatorEnabled bool) *Default {
	return &Default{separator: separator, internalSeparatorEnabled: internalTopicSeparatorEnabled}
}

// Separator is the separator between alias and topic.
func (p *Default) Separator() string { return p.separator }

func (p *Default) FormatRemoteTopic(sourceClusterAlias, topic string) string {
	return sourceClusterAlias + p.separator + topic
}

// TopicSource is the part before the first separator, when something
// other than separators follows it. It mirrors Java's Pattern.split,
// which drops trailing empty strings: "a." and "a.." are local topics,
// while ".a" has source "" (indistinguishable from local here, but such
// names are internal topics, and UpstreamTopic still reports "a").
func (p *Default) TopicSource(topic string) string {
	source, _, ok := p.split(topic)
	if !ok {
		return ""
	}
	return source
}

func (p *Default) UpstreamTopic(topic string) string {
	_, upstream, ok := p.split(topic)
	if !ok {
		return ""
	}
	return upstream
}

// split is Java's separatorPattern.split(topic) reduced to what MM2 reads
// from it: parts[0] and whether there are at least two parts once
// trailing empty parts are dropped.
func (p *Default) split(topic string) (source, upstream string, ok bool) {
	parts := strings.Split(topic, p.separator)
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	if n < 2 {
		return "", "", false
	}
	return parts[0], topic[len(parts[0])+len(p.separator):], true
}

func (p *Default) OriginalTopic(topic string) string { return originalTopic(p, topic) }
func (p *Default) HeartbeatsTopic() string           { return heartbeatsTopic }
func (p *Default) IsHeartbeatsTopic(topic string) bool {
	return isHeartbeatsTopic(p, topic)
}

func (p *Default) internalSeparator() string {
	if p.internalSeparatorEnabled {
		return p.separator
	}
	return "."
}

func (p *Default) internalSuffix() string { return p.internalSeparator() + "internal" }

func (p *Default) checkpointsSuffix() string {
	return p.internalSeparator() + "checkpoints" + p.internalSuffix()
}

func (p *Default) OffsetSyncsTopic(clusterAlias string) string {
	return "mm2-offset-syncs" + p.internalSeparator() + clusterAlias + p.internalSuffix()
}

func (p *Default) CheckpointsTopic(clusterAlias string) string {
	return clusterAlias + p.checkpointsSuffix()
}

func (p *Default) IsCheckpointsTopic(topic string) bool {
	return strings.HasSuffix(topic, p.checkpointsSuffix())
}

func (p *Default) IsMM2InternalTopic(topic string) bool {
	return strings.HasSuffix(topic, p.internalSuffix())
}

func (p *Default) IsInternalTopic(topic string) bool { return isInternalTopic(p, topic) }
