package all

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Every class name Kafka users write for these converters resolves, as
// a converter and (except SimpleHeaderConverter, which is only one) as a
// header converter.
func TestKafkaClassNames(t *testing.T) {
	both := []string{
		"org.apache.kafka.connect.json.JsonConverter",
		"org.apache.kafka.connect.storage.StringConverter",
		"org.apache.kafka.connect.converters.ByteArrayConverter",
		"org.apache.kafka.connect.converters.LongConverter",
		"org.apache.kafka.connect.converters.IntegerConverter",
		"org.apache.kafka.connect.converters.ShortConverter",
		"org.apache.kafka.connect.converters.DoubleConverter",
		"org.apache.kafka.connect.converters.FloatConverter",
		"org.apache.kafka.connect.converters.BooleanConverter",
		"JsonConverter", "StringConverter", "ByteArrayConverter", "LongConverter",
	}
	for _, name := range both {
		p, err := plugins.LookupKind(name, plugins.Converter)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.New().(connect.Converter); !ok {
			t.Fatalf("%s: %T is not a connect.Converter", name, p.New())
		}
		p, err = plugins.LookupKind(name, plugins.HeaderConverter)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.New().(connect.HeaderConverter); !ok {
			t.Fatalf("%s: %T is not a connect.HeaderConverter", name, p.New())
		}
	}
	for _, name := range []string{"org.apache.kafka.connect.storage.SimpleHeaderConverter", "SimpleHeaderConverter"} {
		p, err := plugins.LookupKind(name, plugins.HeaderConverter)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.New().(connect.HeaderConverter); !ok {
			t.Fatalf("%s: %T", name, p.New())
		}
		if _, err := plugins.LookupKind(name, plugins.Converter); err == nil {
			t.Fatalf("%s is not a Converter in Kafka", name)
		}
	}
	// The REST API lists each plugin once per kind, with its config.
	for _, p := range plugins.List(plugins.Converter, plugins.HeaderConverter) {
		if p.ConfigDef() == nil {
			t.Fatalf("%s has no ConfigDef", p.Class)
		}
	}
}
