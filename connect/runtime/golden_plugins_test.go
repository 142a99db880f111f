package runtime

import (
	"context"
	"fmt"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Go twins of testdata/kafkaref/golden/*.java, the plugins Kafka Connect
// ran when the validate answers were captured: same class names,
// versions and config definitions, so the answers must match ours.

type goldenSinkConnector struct{ props map[string]string }

func (c *goldenSinkConnector) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "file", Type: connect.TypeString, Default: nil,
		Importance: connect.High, Doc: "Destination filename. If not specified, the standard output will be used"})
}
func (c *goldenSinkConnector) Start(_ context.Context, props map[string]string) error {
	c.props = props
	return nil
}
func (c *goldenSinkConnector) TaskConfigs(n int) ([]map[string]string, error) {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = c.props
	}
	return out, nil
}
func (c *goldenSinkConnector) Stop() error               { return nil }
func (c *goldenSinkConnector) NewTask() connect.SinkTask { return nil }

type goldenSourceConnector struct{ goldenSinkConnector }

func (c *goldenSourceConnector) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic", Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString,
			Importance: connect.High, Doc: "The topic to publish data to"}).
		Define(connect.ConfigKey{Name: "file", Type: connect.TypeString, Default: "golden", Importance: connect.High, Doc: "Source partition name"}).
		Define(connect.ConfigKey{Name: "count", Type: connect.TypeInt, Default: int32(3), Validator: nonNull(connect.AtLeast(0)),
			Importance: connect.Low, Doc: "Number of records to emit"})
}
func (c *goldenSourceConnector) NewTask() connect.SourceTask { return nil }

type goldenTransform struct{}

func (goldenTransform) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "Field name to act on"}).
		Define(connect.ConfigKey{Name: "times", Type: connect.TypeInt, Default: int32(1), Validator: nonNull(connect.Between(1, 10)),
			Importance: connect.Low, Doc: "How many times"})
}
func (goldenTransform) Configure(map[string]string) error                { return nil }
func (goldenTransform) Apply(r *connect.Record) (*connect.Record, error) { return r, nil }
func (goldenTransform) Close() error                                     { return nil }

type goldenPredicate struct{}

func (goldenPredicate) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "pattern", Type: connect.TypeString, Default: connect.NoDefault,
		Importance: connect.Medium, Doc: "A pattern"})
}
func (goldenPredicate) Configure(map[string]string) error { return nil }
func (goldenPredicate) Test(*connect.Record) bool         { return true }
func (goldenPredicate) Close() error                      { return nil }

// simpleHeaderConverter stands in for Kafka's default header converter
// when the real one (converters/header) is not linked into the test.
type simpleHeaderConverter struct{}

func (simpleHeaderConverter) Configure(map[string]string) error { return nil }
func (simpleHeaderConverter) FromConnectHeader(_, _ string, _ *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return []byte(fmt.Sprint(v)), nil
}
func (simpleHeaderConverter) ToConnectHeader(_, _ string, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	return connect.StringSchema, string(b), nil
}

func init() {
	if _, err := plugins.LookupKind("org.apache.kafka.connect.storage.SimpleHeaderConverter", plugins.HeaderConverter); err != nil {
		plugins.Register(plugins.Plugin{Class: "org.apache.kafka.connect.storage.SimpleHeaderConverter", Kind: plugins.HeaderConverter,
			New: func() any { return simpleHeaderConverter{} }})
	}
	plugins.Register(plugins.Plugin{Class: "dev.fjord.golden.GoldenSinkConnector", Aliases: []string{"GoldenSink", "GoldenSinkConnector"},
		Kind: plugins.Sink, Version: "1.0", New: func() any { return &goldenSinkConnector{} }})
	plugins.Register(plugins.Plugin{Class: "dev.fjord.golden.GoldenSourceConnector", Aliases: []string{"GoldenSource", "GoldenSourceConnector"},
		Kind: plugins.Source, Version: "1.0", New: func() any { return &goldenSourceConnector{} }})
	// Kafka reports plugins that do not implement Versioned as "undefined".
	plugins.Register(plugins.Plugin{Class: "dev.fjord.golden.GoldenTransform", Kind: plugins.Transformation, Version: "undefined",
		New: func() any { return goldenTransform{} }})
	plugins.Register(plugins.Plugin{Class: "dev.fjord.golden.GoldenPredicate", Kind: plugins.Predicate, Version: "undefined",
		New: func() any { return goldenPredicate{} }})
}
