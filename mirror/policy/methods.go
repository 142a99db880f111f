package policy

import "strings"

// The default methods of MM2's ReplicationPolicy interface. Java
// dispatches them virtually, so an override in a subclass (Identity's
// UpstreamTopic) changes what they compute; Go embedding does not, so
// each policy calls these with itself.

const heartbeatsTopic = "heartbeats"

// maxHops bounds the walk up a topic's upstream chain. MM2 recurses
// without a bound; a policy whose UpstreamTopic never reaches a fixed
// point would overflow its stack, here it stops.
const maxHops = 1000

func originalTopic(p ReplicationPolicy, topic string) string {
	for range maxHops {
		upstream := p.UpstreamTopic(topic)
		if upstream == "" || upstream == topic {
			return topic
		}
		topic = upstream
	}
	return topic
}

func isHeartbeatsTopic(p ReplicationPolicy, topic string) bool {
	return p.HeartbeatsTopic() == p.OriginalTopic(topic)
}

// isInternalTopic: Kafka's own topics (__consumer_offsets,
// __transaction_state, and by convention anything starting with "__" or
// "."), Connect's default internal topics (connect-offsets-internal style
// "-internal" and ".internal" suffixes) and MM2's.
func isInternalTopic(p ReplicationPolicy, topic string) bool {
	kafkaInternal := strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".")
	connectInternal := strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".internal")
	return p.IsMM2InternalTopic(topic) || kafkaInternal || connectInternal
}

// IsCycle reports whether topic, seen on a source cluster, came (through
// its chain of upstream names) from targetAlias, so replicating it there
// would send records home (MirrorSourceConnector.isCycle). With the
// identity policy names carry no history and IsCycle is only true when
// the configured source alias is the target; records then need the
// provenance header (LoopsBack).
func IsCycle(p ReplicationPolicy, topic, targetAlias string) bool {
	for range maxHops {
		source := p.TopicSource(topic)
		if source != "" && source == targetAlias {
			return true
		}
		// A "" source with an upstream name is a topic starting with the
		// separator (Java's source ""): keep walking, as Java does.
		upstream := p.UpstreamTopic(topic)
		if upstream == "" || upstream == topic {
			return false
		}
		topic = upstream
	}
	return false
}
