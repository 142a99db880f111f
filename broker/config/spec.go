package config

//go:generate go run ./internal/gen -o zz_kafka_specs.go

import (
	"fmt"
	"slices"
	"strings"
)

// Spec describes one config key. Kafka's facts (type, default, validator,
// importance, update mode, synonyms) come from zz_kafka_specs.go, which is
// generated from Kafka 4.4 itself; Doc and Used are Fjord's (docs.go).
type Spec struct {
	Name string
	Type Type
	// Default is Kafka's default as DescribeConfigs shows it; NoDefault
	// means Kafka's default is null (the key is unset unless configured).
	Default   string
	NoDefault bool
	// Validator is nil when any value of Type is allowed.
	Validator  Validator
	Importance Importance
	Doc        string
	// Update says whether a broker key may be altered dynamically, and
	// for which resources. Always ReadOnly for topic keys.
	Update Update
	// Internal keys are valid but hidden from DescribeConfigs, as in Kafka.
	Internal bool
	// Used is false for keys Fjord accepts for compatibility but ignores.
	Used bool
	// Synonyms are, for a topic key, the broker keys that supply its
	// default, in Kafka's order of preference.
	Synonyms []Synonym
}

// Synonym is a broker key that supplies a topic key's default. Scale
// converts the broker key's unit to the topic key's (log.retention.hours
// to retention.ms: 3600000).
type Synonym struct {
	Name  string
	Scale int64
}

// Sensitive reports whether values are hidden (Kafka's maybeSensitive).
func (s Spec) Sensitive() bool { return s.Type == TypePassword || s.Type == TypeUnknown }

// parse parses and validates a raw value for this key.
func (s Spec) parse(raw string) (any, error) {
	v, err := parseValue(s.Name, s.Type, raw)
	if err != nil {
		return nil, err
	}
	if s.Validator != nil {
		if err := s.Validator.Validate(s.Name, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// defaultValue is the parsed default, or nil for a null default.
func (s Spec) defaultValue() any {
	if s.NoDefault {
		return nil
	}
	v, err := parseValue(s.Name, s.Type, s.Default)
	if err != nil {
		panic(fmt.Sprintf("config: default of %s does not parse: %v", s.Name, err))
	}
	return v
}

// table is one resource's specs with lookups.
type table struct {
	specs  []Spec // definition order: validation reports in this order
	byName map[string]*Spec
	rank   map[string]int // DescribeConfigs order
}

func newTable(kafka []Spec, notes map[string]note, describeOrder []string, extra ...Spec) *table {
	t := &table{byName: map[string]*Spec{}, rank: map[string]int{}}
	t.specs = append(slices.Clone(kafka), extra...)
	for i := range t.specs {
		s := &t.specs[i]
		if n, ok := notes[s.Name]; ok {
			s.Doc, s.Used = n.doc, n.used
		} else {
			s.Doc = "Apache Kafka setting, accepted for compatibility; Fjord does not use it."
		}
		t.byName[s.Name] = s
	}
	for i, n := range describeOrder {
		t.rank[n] = i
	}
	return t
}

// describeRank is a key's position in Kafka's full DescribeConfigs
// listing, which breaks ties within a hash bucket (see sortByRank).
func (t *table) describeRank(name string) int {
	if r, ok := t.rank[name]; ok {
		return r
	}
	return len(t.rank)
}

var (
	topicTable  = newTable(kafkaTopicSpecs, topicNotes, kafkaTopicDescribeOrder)
	brokerTable = newTable(kafkaBrokerSpecs, brokerNotes, kafkaBrokerDescribeOrder, dynamicOnlyBrokerSpecs...)
)

// dynamicOnlyBrokerSpecs are the replication quota keys Kafka accepts only
// as dynamic broker configs (DynamicConfig.Broker), not in server.properties.
var dynamicOnlyBrokerSpecs = []Spec{
	{Name: "leader.replication.throttled.rate", Type: TypeLong, Default: "9223372036854775807", Validator: AtLeast(0), Importance: Medium, Update: ClusterWide, Internal: true},
	{Name: "follower.replication.throttled.rate", Type: TypeLong, Default: "9223372036854775807", Validator: AtLeast(0), Importance: Medium, Update: ClusterWide, Internal: true},
	{Name: "replica.alter.log.dirs.io.max.bytes.per.second", Type: TypeLong, Default: "9223372036854775807", Validator: AtLeast(0), Importance: Medium, Update: ClusterWide, Internal: true},
}

// TopicSpecs returns every topic config, in Kafka's definition order.
func TopicSpecs() []Spec { return slices.Clone(topicTable.specs) }

// BrokerSpecs returns every broker config Kafka defines, in Kafka's
// definition order (Used marks the ones Fjord acts on).
func BrokerSpecs() []Spec { return slices.Clone(brokerTable.specs) }

// TopicSpec looks up a topic config.
func TopicSpec(name string) (Spec, bool) {
	if s, ok := topicTable.byName[name]; ok {
		return *s, true
	}
	return Spec{}, false
}

// BrokerSpec looks up a broker config.
func BrokerSpec(name string) (Spec, bool) {
	if s, ok := brokerTable.byName[name]; ok {
		return *s, true
	}
	return Spec{}, false
}

// brokerSynonyms is Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the
// keys that set the same thing, highest precedence first.
func brokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	if base, ok := listenerBase(name); ok {
		return []string{name, base}
	}
	return []string{name}
}

// listenerBase strips a "listener.name.<listener>." prefix (and a SASL
// mechanism for the JAAS/callback keys), as Kafka's ListenerConfigRegex.
func listenerBase(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return "", false
	}
	_, base, ok := strings.Cut(rest, ".")
	if !ok || base == "" {
		return "", false
	}
	for _, m := range []string{"sasl.jaas.config", "sasl.login.class", "sasl.login.callback.handler.class", "sasl.server.callback.handler.class"} {
		if strings.HasSuffix(base, m) {
			return m, true
		}
	}
	return base, true
}
