package policy

import "strings"

// Identity is MM2's IdentityReplicationPolicy: remote topics keep their
// names, except heartbeats, which are still prefixed (so a target's
// heartbeats topic tells sources apart and heartbeat cycles are caught).
// Names then say nothing about where a topic came from: TopicSource is
// the configured source.cluster.alias, and loops are prevented per record
// by the provenance header (ProvenanceHeader), which MM2 lacks.
type Identity struct {
	Default
	sourceClusterAlias string
}

// NewIdentity returns the identity policy; sourceClusterAlias may be "".
func NewIdentity(separator string, internalTopicSeparatorEnabled bool, sourceClusterAlias string) *Identity {
	return &Identity{Default: *NewDefault(separator, internalTopicSeparatorEnabled), sourceClusterAlias: sourceClusterAlias}
}

func (p *Identity) looksLikeHeartbeat(topic string) bool {
	return strings.HasSuffix(topic, p.HeartbeatsTopic())
}

func (p *Identity) FormatRemoteTopic(sourceClusterAlias, topic string) string {
	if p.looksLikeHeartbeat(topic) {
		return p.Default.FormatRemoteTopic(sourceClusterAlias, topic)
	}
	return topic
}

func (p *Identity) TopicSource(topic string) string {
	if p.looksLikeHeartbeat(topic) {
		return p.Default.TopicSource(topic)
	}
	return p.sourceClusterAlias
}

// UpstreamTopic is the topic itself: any topic may be a remote one.
func (p *Identity) UpstreamTopic(topic string) string {
	if p.looksLikeHeartbeat(topic) {
		return p.Default.UpstreamTopic(topic)
	}
	return topic
}

func (p *Identity) OriginalTopic(topic string) string   { return originalTopic(p, topic) }
func (p *Identity) IsHeartbeatsTopic(topic string) bool { return isHeartbeatsTopic(p, topic) }
func (p *Identity) IsInternalTopic(topic string) bool   { return isInternalTopic(p, topic) }
