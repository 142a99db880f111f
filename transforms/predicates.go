package transforms

import "github.com/fjordhq/fjord/connect"

// TopicNameMatches is Kafka's
// org.apache.kafka.connect.transforms.predicates.TopicNameMatches: true
// when the whole topic name matches "pattern".
type TopicNameMatches struct {
	pattern *javaRegex
}

func topicNameMatchesConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: "pattern", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.Medium,
		Validator: func(name string, v any) error {
			if err := nonEmptyString(name, v); err != nil {
				return err
			}
			return regexValidator(name, v)
		},
		Doc: "A Java regular expression for matching against the name of a record's topic.",
	})
}

func (p *TopicNameMatches) Config() *connect.ConfigDef { return topicNameMatchesConfigDef() }
func (p *TopicNameMatches) Close() error               { return nil }

func (p *TopicNameMatches) Configure(props map[string]string) error {
	cfg, err := parseConfig(topicNameMatchesConfigDef(), props)
	if err != nil {
		return err
	}
	if p.pattern, err = compileJavaRegex(cfg.String("pattern")); err != nil {
		return invalidValueErr("pattern", cfg.String("pattern"), "entry must be a Java-compatible regular expression: "+err.Error())
	}
	return nil
}

func (p *TopicNameMatches) Test(r *connect.Record) bool {
	return r != nil && p.pattern.matches(r.Topic)
}

func (p *TopicNameMatches) String() string {
	return "TopicNameMatches{pattern=" + p.pattern.re.String() + "}"
}

// HasHeaderKey is Kafka's
// org.apache.kafka.connect.transforms.predicates.HasHeaderKey: true when
// the record has at least one header named "name".
type HasHeaderKey struct {
	name string
}

func hasHeaderKeyConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: "name", Type: connect.TypeString, Default: connect.NoDefault, Validator: nonEmptyString,
		Importance: connect.Medium, Doc: "The header name.",
	})
}

func (p *HasHeaderKey) Config() *connect.ConfigDef { return hasHeaderKeyConfigDef() }
func (p *HasHeaderKey) Close() error               { return nil }

func (p *HasHeaderKey) Configure(props map[string]string) error {
	cfg, err := parseConfig(hasHeaderKeyConfigDef(), props)
	if err != nil {
		return err
	}
	p.name = cfg.String("name")
	return nil
}

func (p *HasHeaderKey) Test(r *connect.Record) bool {
	if r == nil {
		return false
	}
	_, ok := r.Headers.Last(p.name)
	return ok
}

func (p *HasHeaderKey) String() string { return "HasHeaderKey{name='" + p.name + "'}" }

// RecordIsTombstone is Kafka's
// org.apache.kafka.connect.transforms.predicates.RecordIsTombstone: true
// for records with a null value.
type RecordIsTombstone struct{}

func (RecordIsTombstone) Config() *connect.ConfigDef        { return connect.NewConfigDef() }
func (RecordIsTombstone) Configure(map[string]string) error { return nil }
func (RecordIsTombstone) Close() error                      { return nil }
func (RecordIsTombstone) Test(r *connect.Record) bool       { return r != nil && r.Value == nil }
func (RecordIsTombstone) String() string                    { return "RecordIsTombstone{}" }
