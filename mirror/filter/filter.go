// Package filter decides which topics, consumer groups and topic config
// properties are mirrored (MM2's TopicFilter, GroupFilter and
// ConfigPropertyFilter with their Default* implementations).
package filter

// TopicFilter is MM2's TopicFilter.
type TopicFilter interface {
	ShouldReplicateTopic(topic string) bool
}

// GroupFilter is MM2's GroupFilter.
type GroupFilter interface {
	ShouldReplicateGroup(group string) bool
}

// ConfigPropertyFilter is MM2's ConfigPropertyFilter.
type ConfigPropertyFilter interface {
	ShouldReplicateConfigProperty(prop string) bool
	ShouldReplicateSourceDefault(prop string) bool
}
