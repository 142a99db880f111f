package runtime

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// ConnectorType is source or sink.
type ConnectorType string

const (
	SourceType ConnectorType = "source"
	SinkType   ConnectorType = "sink"
)

// ConnectorConfigDef returns Kafka's ConnectorConfig definition for a
// connector type ("" for the common keys only): SinkConnectorConfig adds
// topics, topics.regex and the dead letter queue; SourceConnectorConfig
// topic creation, exactly-once and offsets.storage.topic.
func ConnectorConfigDef(t ConnectorType) *connect.ConfigDef {
	switch t {
	case SinkType:
		return kafkaConfigDef("sink")
	case SourceType:
		return kafkaConfigDef("source")
	}
	return kafkaConfigDef("connector")
}

// LookupConnector finds a connector plugin and its type.
func LookupConnector(class string) (*plugins.Plugin, ConnectorType, error) {
	p, err := plugins.LookupKind(class, plugins.Source, plugins.Sink)
	if err != nil {
		return nil, "", err
	}
	if p.Kind == plugins.Sink {
		return p, SinkType, nil
	}
	return p, SourceType, nil
}

// TransformSpec is one configured transformation (an alias of
// "transforms"), with its optional predicate.
type TransformSpec struct {
	Alias  string
	Plugin *plugins.Plugin
	// Props are the "transforms.<alias>." keys without type, predicate
	// and negate.
	Props     map[string]string
	Predicate *PredicateSpec
	Negate    bool
}

// PredicateSpec is one configured predicate (an alias of "predicates").
type PredicateSpec struct {
	Alias  string
	Plugin *plugins.Plugin
	Props  map[string]string
}

// ConnectorConfig is a parsed connector config (Kafka's ConnectorConfig
// with its Sink/Source subclasses).
type ConnectorConfig struct {
	Name            string
	Class           string
	Plugin          *plugins.Plugin
	Type            ConnectorType
	TasksMax        int
	TasksMaxEnforce bool
	Props           map[string]string
	Config          *connect.Config

	Transforms []TransformSpec

	ErrorRetryTimeout        time.Duration // -1: forever
	ErrorMaxDelay            time.Duration
	ToleranceAll             bool
	ErrorsLog                bool
	ErrorsLogIncludeMessages bool

	// Sink connectors.
	Topics               []string
	TopicsRegex          *regexp.Regexp
	DLQTopic             string
	DLQReplicationFactor int16
	DLQContextHeaders    bool

	// Source connectors.
	OffsetsStorageTopic string
	TopicCreation       *TopicCreation
}

// ParseConnectorConfig parses and checks a connector config the way the
// worker does before starting it (errors list every bad key).
func ParseConnectorConfig(props map[string]string) (*ConnectorConfig, error) {
	class := strings.TrimSpace(props["connector.class"])
	if class == "" {
		return nil, fmt.Errorf("Connector config %s contains no connector type", javaMap(props))
	}
	p, typ, err := LookupConnector(class)
	if err != nil {
		return nil, err
	}
	def := ConnectorConfigDef(typ)
	c, err := def.Parse(props)
	if err != nil {
		return nil, err
	}
	cc := &ConnectorConfig{
		Name: c.String("name"), Class: class, Plugin: p, Type: typ,
		TasksMax: int(c.Int("tasks.max")), TasksMaxEnforce: c.Bool("tasks.max.enforce"),
		Props: maps.Clone(props), Config: c,
		ErrorRetryTimeout:        ms(c.Long("errors.retry.timeout")),
		ErrorMaxDelay:            ms(c.Long("errors.retry.delay.max.ms")),
		ToleranceAll:             c.String("errors.tolerance") == "all",
		ErrorsLog:                c.Bool("errors.log.enable"),
		ErrorsLogIncludeMessages: c.Bool("errors.log.include.messages"),
	}
	if c.Long("errors.retry.timeout") < 0 {
		cc.ErrorRetryTimeout = -1
	}
	var problems []connect.ConfigProblem
	if cc.Transforms, err = transformSpecs(c.List("transforms"), props); err != nil {
		problems = append(problems, connect.ConfigProblem{Key: "transforms", Message: err.Error()})
	}
	switch typ {
	case SinkType:
		cc.Topics = nonEmpty(c.List("topics"))
		if re := c.String("topics.regex"); re != "" {
			if cc.TopicsRegex, err = regexp.Compile(re); err != nil {
				problems = append(problems, connect.ConfigProblem{Key: "topics.regex", Message: err.Error()})
			}
		}
		cc.DLQTopic = c.String("errors.deadletterqueue.topic.name")
		cc.DLQReplicationFactor = c.Short("errors.deadletterqueue.topic.replication.factor")
		cc.DLQContextHeaders = c.Bool("errors.deadletterqueue.context.headers.enable")
		for _, m := range sinkTopicProblems(props) {
			problems = append(problems, connect.ConfigProblem{Key: "topics", Message: m})
		}
	case SourceType:
		cc.OffsetsStorageTopic = c.String("offsets.storage.topic")
		tc, err := parseTopicCreation(props)
		if err != nil {
			problems = append(problems, connect.ConfigProblem{Key: "topic.creation.groups", Message: err.Error()})
		}
		cc.TopicCreation = tc
	}
	if len(problems) > 0 {
		return nil, &connect.ConfigError{Problems: problems}
	}
	return cc, nil
}

func nonEmpty(items []string) []string {
	var out []string
	for _, s := range items {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sinkTopicProblems is SinkConnectorConfig.validate: exactly one of topics
// and topics.regex, and the DLQ topic not among the topics.
func sinkTopicProblems(props map[string]string) []string {
	topics := nonEmpty(splitList(props["topics"]))
	regex := strings.TrimSpace(props["topics.regex"])
	var out []string
	switch {
	case len(topics) > 0 && regex != "":
		out = append(out, "topics and topics.regex are mutually exclusive options, but both are set.")
	case len(topics) == 0 && regex == "":
		out = append(out, "Must configure one of topics or topics.regex")
	}
	if dlq := strings.TrimSpace(props["errors.deadletterqueue.topic.name"]); dlq != "" {
		if slices.Contains(topics, dlq) {
			out = append(out, fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=%s') consumed by the connector", dlq, javaList(topics)))
		} else if regex != "" {
			if re, err := regexp.Compile(regex); err == nil && matchesWhole(re, dlq) {
				out = append(out, fmt.Sprintf("The DLQ topic '%s' may not be included in the regex matching the topics ('topics.regex=%s') consumed by the connector", dlq, regex))
			}
		}
	}
	return out
}

// matchesWhole is Java's Matcher.matches: the whole string.
func matchesWhole(re *regexp.Regexp, s string) bool {
	loc := re.FindStringIndex(s)
	if loc != nil && loc[0] == 0 && loc[1] == len(s) {
		return true
	}
	anchored, err := regexp.Compile("^(?:" + re.String() + ")$")
	return err == nil && anchored.MatchString(s)
}

func splitList(s string) []string {
	v, _ := connect.ParseValue(connect.TypeList, "", s)
	l, _ := v.([]string)
	return l
}

// transformSpecs resolves the transform aliases and their predicates.
func transformSpecs(aliases []string, props map[string]string) ([]TransformSpec, error) {
	var out []TransformSpec
	for _, alias := range aliases {
		prefix := "transforms." + alias + "."
		typ := props[prefix+"type"]
		if typ == "" {
			return nil, fmt.Errorf("Missing required configuration \"%stype\" which has no default value.", prefix)
		}
		p, err := plugins.LookupKind(typ, plugins.Transformation)
		if err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration %stype: Class %s could not be found.", typ, prefix, typ)
		}
		spec := TransformSpec{Alias: alias, Plugin: p, Props: connect.WithPrefix(props, prefix)}
		delete(spec.Props, "type")
		delete(spec.Props, "plugin.version")
		pred, hasPred := spec.Props["predicate"]
		negate, hasNegate := spec.Props["negate"]
		delete(spec.Props, "predicate")
		delete(spec.Props, "negate")
		if hasNegate && !hasPred {
			return nil, fmt.Errorf("Config '%snegate' was provided but there is no config '%spredicate' defining a predicate to be negated.", prefix, prefix)
		}
		if hasPred && strings.TrimSpace(pred) != "" {
			pprefix := "predicates." + strings.TrimSpace(pred) + "."
			ptyp := props[pprefix+"type"]
			pp, err := plugins.LookupKind(ptyp, plugins.Predicate)
			if err != nil {
				return nil, fmt.Errorf("Invalid value %s for configuration %stype: Class %s could not be found.", ptyp, pprefix, ptyp)
			}
			pprops := connect.WithPrefix(props, pprefix)
			delete(pprops, "type")
			delete(pprops, "plugin.version")
			spec.Predicate = &PredicateSpec{Alias: strings.TrimSpace(pred), Plugin: pp, Props: pprops}
			spec.Negate = strings.EqualFold(strings.TrimSpace(negate), "true")
		}
		out = append(out, spec)
	}
	return out, nil
}

// javaMap prints a map as Java's Map.toString: {a=1, b=2}.
func javaMap(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// TopicCreation is a source connector's KIP-158 topic creation rules:
// groups tried in order, "default" last, each with include/exclude
// regexes, partitions, replication factor and topic configs.
type TopicCreation struct {
	Groups []TopicCreationGroup
}

// TopicCreationGroup is one topic.creation group.
type TopicCreationGroup struct {
	Name              string
	Include, Exclude  []*regexp.Regexp
	Partitions        int32 // -1: broker default
	ReplicationFactor int16 // -1: broker default
	Configs           map[string]string
}

// Matches reports whether the group applies to topic.
func (g *TopicCreationGroup) Matches(topic string) bool {
	for _, re := range g.Exclude {
		if matchesWhole(re, topic) {
			return false
		}
	}
	for _, re := range g.Include {
		if matchesWhole(re, topic) {
			return true
		}
	}
	return false
}

// For returns the group that applies to topic (default if no other).
func (t *TopicCreation) For(topic string) *TopicCreationGroup {
	for i := range t.Groups {
		if t.Groups[i].Matches(topic) {
			return &t.Groups[i]
		}
	}
	return &t.Groups[len(t.Groups)-1]
}

// parseTopicCreation reads topic.creation.* (nil when the connector does
// not configure topic.creation.default.*, as Kafka's
// SourceConnectorConfig.usesTopicCreation).
func parseTopicCreation(props map[string]string) (*TopicCreation, error) {
	def := connect.WithPrefix(props, "topic.creation.default.")
	if len(def) == 0 {
		return nil, nil
	}
	tc := &TopicCreation{}
	groups := nonEmpty(splitList(props["topic.creation.groups"]))
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g] {
			return nil, fmt.Errorf("Invalid value %s for configuration topic.creation.groups: Duplicate alias provided.", javaList(groups))
		}
		seen[g] = true
	}
	// Groups other than default take default's partitions and
	// replication factor unless they set their own (Kafka's
	// SourceConnectorConfig.enrich); default is read first for them.
	var defPartitions int32 = -1
	var defRF int16 = -1
	for _, name := range append([]string{"default"}, slices.DeleteFunc(groups, func(s string) bool { return s == "default" })...) {
		gp := connect.WithPrefix(props, "topic.creation."+name+".")
		g := TopicCreationGroup{Name: name, Partitions: defPartitions, ReplicationFactor: defRF, Configs: map[string]string{}}
		for k, v := range gp {
			v = strings.TrimSpace(v)
			switch k {
			case "include", "exclude":
				for _, s := range nonEmpty(splitList(v)) {
					re, err := regexp.Compile(s)
					if err != nil {
						return nil, fmt.Errorf("topic.creation.%s.%s: invalid regex %s: %v", name, k, s, err)
					}
					if k == "include" {
						g.Include = append(g.Include, re)
					} else {
						g.Exclude = append(g.Exclude, re)
					}
				}
			case "partitions":
				n, err := connect.ParseValue(connect.TypeInt, "topic.creation."+name+".partitions", v)
				if err != nil {
					return nil, err
				}
				if g.Partitions = n.(int32); g.Partitions < 1 && g.Partitions != -1 {
					return nil, fmt.Errorf("Invalid value %s for configuration topic.creation.%s.partitions: Number of partitions must be positive, or -1 to use the broker's default", v, name)
				}
			case "replication.factor":
				n, err := connect.ParseValue(connect.TypeShort, "topic.creation."+name+".replication.factor", v)
				if err != nil {
					return nil, err
				}
				if g.ReplicationFactor = n.(int16); g.ReplicationFactor < 1 && g.ReplicationFactor != -1 {
					return nil, fmt.Errorf("Invalid value %s for configuration topic.creation.%s.replication.factor: Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default", v, name)
				}
			default:
				g.Configs[k] = v
			}
		}
		if name == "default" {
			g.Include = []*regexp.Regexp{regexp.MustCompile(".*")}
			g.Exclude = nil
			if _, ok := gp["replication.factor"]; !ok {
				return nil, fmt.Errorf("Missing required configuration \"topic.creation.default.replication.factor\" which has no default value.")
			}
			if _, ok := gp["partitions"]; !ok {
				return nil, fmt.Errorf("Missing required configuration \"topic.creation.default.partitions\" which has no default value.")
			}
			defPartitions, defRF = g.Partitions, g.ReplicationFactor
		}
		tc.Groups = append(tc.Groups, g)
	}
	// Tried in order, default last.
	tc.Groups = append(tc.Groups[1:], tc.Groups[0])
	return tc, nil
}
