package filter

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
)

// DefaultTopicFilter's keys and Kafka's defaults.
const (
	TopicsConfig         = "topics"
	TopicsDefault        = ".*"
	TopicsExcludeConfig  = "topics.exclude"
	TopicsExcludeDefault = `.*[\-\.]internal, .*\.replica, __.*`
	// TopicsBlacklistConfig is topics.exclude's deprecated alias (Kafka
	// 2.x–3.x); topics.exclude wins when both are set.
	TopicsBlacklistConfig = "topics.blacklist"

	TopicFilterClassConfig  = "topic.filter.class"
	DefaultTopicFilterClass = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
)

// DefaultTopicFilter replicates topics matching topics and not matching
// topics.exclude (MM2's DefaultTopicFilter).
type DefaultTopicFilter struct{ include, exclude pattern }

// NewTopicFilter builds the topic filter from a connector's properties:
// topic.filter.class (only the default is available), topics,
// topics.exclude and the legacy topics.blacklist.
func NewTopicFilter(props map[string]string) (TopicFilter, error) {
	if err := checkClass(props, TopicFilterClassConfig, DefaultTopicFilterClass, "DefaultTopicFilter"); err != nil {
		return nil, err
	}
	include, err := compileKey(props, TopicsConfig, TopicsDefault)
	if err != nil {
		return nil, err
	}
	exclude, err := compileKey(translateDeprecated(props, TopicsExcludeConfig, TopicsBlacklistConfig), TopicsExcludeConfig, TopicsExcludeDefault)
	if err != nil {
		return nil, err
	}
	return &DefaultTopicFilter{include, exclude}, nil
}

func (f *DefaultTopicFilter) ShouldReplicateTopic(topic string) bool {
	return f.include.matches(topic) && !f.exclude.matches(topic)
}

// DefineTopicKeys adds topic.filter.class, topics, topics.exclude and
// topics.blacklist to d with Kafka's defaults and docs (MirrorSourceConfig
// and MirrorCheckpointConfig both define them).
func DefineTopicKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: TopicFilterClassConfig, Type: connect.TypeClass, Default: DefaultTopicFilterClass,
			Validator: classValidator(DefaultTopicFilterClass, "DefaultTopicFilter"), Importance: connect.Low,
			Doc: "TopicFilter to use. Selects topics to replicate."}).
		Define(connect.ConfigKey{Name: TopicsConfig, Type: connect.TypeList, Default: []string{TopicsDefault},
			Validator: regexList, Importance: connect.High,
			Doc: "Topics to replicate. Supports comma-separated topic names and regexes."}).
		Define(connect.ConfigKey{Name: TopicsExcludeConfig, Type: connect.TypeList, Default: splitDefault(TopicsExcludeDefault),
			Validator: regexList, Importance: connect.High,
			Doc: "Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes."}).
		Define(connect.ConfigKey{Name: TopicsBlacklistConfig, Type: connect.TypeList, Default: nil,
			Validator: regexList, Importance: connect.High,
			Doc: "Deprecated. Use " + TopicsExcludeConfig + " instead."})
}

func splitDefault(s string) []string {
	v, _ := connect.ParseValue(connect.TypeList, "", s)
	return v.([]string)
}

func classValidator(accepted ...string) connect.Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		for _, a := range accepted {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("Class %s could not be found.", s)
	}
}
