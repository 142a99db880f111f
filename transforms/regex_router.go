package transforms

import "github.com/fjordhq/fjord/connect"

// RegexRouter is Kafka's org.apache.kafka.connect.transforms.RegexRouter:
// when the whole topic matches "regex", the topic becomes the first match
// replaced by "replacement" (Java syntax: $1, ${name}).
type RegexRouter struct {
	regex       *javaRegex
	replacement string
}

func regexRouterConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "regex", Type: connect.TypeString, Default: connect.NoDefault, Validator: regexValidator, Importance: connect.High, Doc: "Regular expression to use for matching."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "Replacement string."})
}

func (t *RegexRouter) Config() *connect.ConfigDef { return regexRouterConfigDef() }
func (t *RegexRouter) Close() error               { return nil }

func (t *RegexRouter) Configure(props map[string]string) error {
	cfg, err := parseConfig(regexRouterConfigDef(), props)
	if err != nil {
		return err
	}
	if t.regex, err = compileJavaRegex(cfg.String("regex")); err != nil {
		return configErr("regex", err.Error())
	}
	t.replacement = cfg.String("replacement")
	return nil
}

func (t *RegexRouter) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	if !t.regex.matches(r.Topic) {
		return r, nil
	}
	topic, err := t.regex.replaceFirst(r.Topic, t.replacement)
	if err != nil {
		return nil, dataErr("RegexRouter replacement %q: %s", t.replacement, err)
	}
	c := r.Clone()
	c.Topic = topic
	return c, nil
}
