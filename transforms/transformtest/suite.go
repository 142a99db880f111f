package transformtest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Case configures one transformation for Run.
type Case struct {
	// New returns a fresh, unconfigured instance.
	New func() connect.Transformation
	// Config is a valid configuration.
	Config map[string]string
	// Records are extra records to run beside the suite's corpus (records
	// in the shape the transformation is meant for, e.g. Debezium
	// envelopes).
	Records []*connect.Record
}

// PredicateCase configures one predicate for RunPredicate.
type PredicateCase struct {
	New     func() connect.Predicate
	Config  map[string]string
	Records []*connect.Record
}

// Corpus returns the records every plugin is run on: schema'd and
// schemaless sink records with headers, a source record, a primitive
// value, and schema'd and schemaless tombstones.
func Corpus() []*connect.Record {
	addr := connect.NewStruct().Name("Address").Optional().
		Field("street", connect.StringSchema).Field("city", connect.OptionalStringSchema).Build()
	user := connect.NewStruct().Name("User").Version(1).
		Field("id", connect.Int64Schema).
		Field("name", connect.StringSchema).
		Field("age", connect.OptionalInt32Schema).
		Field("email", connect.NewSchema(connect.String).Optional().Default("none").Build()).
		Field("tags", connect.NewArray(connect.StringSchema).Optional().Build()).
		Field("address", addr).
		Field("created", connect.TimestampSchema().Build()).
		Field("price", connect.DecimalSchema(2).Optional().Build()).
		Build()
	keySchema := connect.NewStruct().Name("Key").Field("id", connect.Int64Schema).Build()
	u := connect.NewStructValue(user).MustPut("id", int64(1)).MustPut("name", "alice").MustPut("age", int32(30)).
		MustPut("tags", []any{"a", "b"}).MustPut("address", connect.NewStructValue(addr).MustPut("street", "Main")).
		MustPut("created", time.UnixMilli(1700000000123).UTC()).MustPut("price", connect.NewDecimal(1999, 2))
	key := connect.NewStructValue(keySchema).MustPut("id", int64(1))
	sink := func(topic string, ks *connect.Schema, k any, vs *connect.Schema, v any) *connect.Record {
		r := &connect.Record{Topic: topic, Partition: 2, KeySchema: ks, Key: k, ValueSchema: vs, Value: v,
			Timestamp: 1700000000123, Offset: 17, TimestampType: connect.CreateTime,
			OriginalTopic: topic, OriginalPartition: 2, OriginalOffset: 17}
		r.Headers.Add("h1", connect.StringSchema, "x")
		r.Headers.Add("h2", nil, int64(2))
		return r
	}
	schemaless := map[string]any{"id": int64(7), "name": "bob", "age": int64(41), "email": nil,
		"tags": []any{"x"}, "address": map[string]any{"street": "High", "city": "Oslo"}, "created": int64(1700000000123)}
	src := connect.NewSourceRecord(map[string]any{"file": "a"}, map[string]any{"pos": int64(1)}, "src",
		connect.StringSchema, "k", user, u)
	src.Timestamp = 1700000000999
	return []*connect.Record{
		sink("users", keySchema, key, user, u),
		sink("orders", nil, "k1", nil, schemaless),
		src,
		sink("nums", connect.StringSchema, "k", connect.Int64Schema, int64(1700000000999)),
		sink("users", keySchema, key, addr, nil),
		sink("users", nil, "k", nil, nil),
	}
}

// snapshot captures a record deeply (schemas, values, headers) as JSON.
func snapshot(t *testing.T, r *connect.Record) string {
	t.Helper()
	rj, err := EncodeRecord(r)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	b, _ := json.Marshal(rj)
	return fmt.Sprintf("%s|headers=%p/%d", b, r.Headers, len(r.Headers))
}

// checkOutput verifies the output is a consistent record.
func checkOutput(t *testing.T, what string, out *connect.Record) {
	t.Helper()
	if out == nil {
		return
	}
	for _, part := range []struct {
		name string
		s    *connect.Schema
		v    any
	}{{"key", out.KeySchema, out.Key}, {"value", out.ValueSchema, out.Value}} {
		if part.s != nil {
			if err := connect.Validate(part.s, part.v); err != nil {
				t.Errorf("%s: output %s does not match its schema %v: %v", what, part.name, part.s, err)
			}
		}
	}
	for _, h := range out.Headers {
		if h.Schema != nil {
			if err := connect.Validate(h.Schema, h.Value); err != nil {
				t.Errorf("%s: header %s does not match its schema: %v", what, h.Key, err)
			}
		}
	}
}

func safeApply(tr connect.Transformation, r *connect.Record) (out *connect.Record, err error, panicked any) {
	defer func() { panicked = recover() }()
	out, err = tr.Apply(r)
	return
}

// Run is the transformation conformance suite.
func Run(t *testing.T, c Case) {
	t.Helper()
	t.Run("config", func(t *testing.T) { checkConfig(t, c.New, c.Config) })
	tr := c.New()
	if err := tr.Configure(c.Config); err != nil {
		t.Fatalf("Configure(%v): %v", c.Config, err)
	}
	defer tr.Close()

	t.Run("nil record", func(t *testing.T) {
		out, err, p := safeApply(tr, nil)
		if p != nil || err != nil || out != nil {
			t.Fatalf("Apply(nil) = %v, %v (panic %v); want nil, nil", out, err, p)
		}
	})
	records := append(Corpus(), c.Records...)
	t.Run("corpus", func(t *testing.T) {
		for i, r := range records {
			what := fmt.Sprintf("record %d (topic %s, schema %v)", i, r.Topic, r.ValueSchema)
			before := snapshot(t, r)
			out, err, p := safeApply(tr, r)
			if p != nil {
				t.Errorf("%s: panic: %v", what, p)
				continue
			}
			if after := snapshot(t, r); after != before {
				t.Errorf("%s: input modified\nbefore %s\nafter  %s", what, before, after)
			}
			if err != nil {
				continue // refusing a record is allowed; crashing is not
			}
			checkOutput(t, what, out)
			if out == nil {
				continue
			}
			// The same input schema must give the same output schema
			// instance (Kafka's schema caches; converters cache by it).
			again, err := tr.Apply(r)
			if err != nil || again == nil {
				t.Errorf("%s: second Apply = %v, %v after a first success", what, again, err)
				continue
			}
			if again.ValueSchema != out.ValueSchema || again.KeySchema != out.KeySchema {
				t.Errorf("%s: second Apply built new schemas (value %p vs %p, key %p vs %p)", what,
					again.ValueSchema, out.ValueSchema, again.KeySchema, out.KeySchema)
			}
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, r := range records {
					_, _, p := safeApply(tr, r)
					if p != nil {
						t.Errorf("panic: %v", p)
					}
				}
			}()
		}
		wg.Wait()
	})
}

// RunPredicate is the predicate conformance suite.
func RunPredicate(t *testing.T, c PredicateCase) {
	t.Helper()
	t.Run("config", func(t *testing.T) {
		checkConfig(t, func() configurable { return c.New() }, c.Config)
	})
	p := c.New()
	if err := p.Configure(c.Config); err != nil {
		t.Fatalf("Configure(%v): %v", c.Config, err)
	}
	defer p.Close()
	func() {
		defer func() {
			if x := recover(); x != nil {
				t.Fatalf("Test(nil) panicked: %v", x)
			}
		}()
		if p.Test(nil) {
			t.Error("Test(nil) = true")
		}
	}()
	for i, r := range append(Corpus(), c.Records...) {
		before := snapshot(t, r)
		func() {
			defer func() {
				if x := recover(); x != nil {
					t.Errorf("record %d: panic %v", i, x)
				}
			}()
			p.Test(r)
		}()
		if after := snapshot(t, r); after != before {
			t.Errorf("record %d: input modified", i)
		}
	}
}

type configurable interface {
	Config() *connect.ConfigDef
	Configure(map[string]string) error
}

// checkConfig verifies the ConfigDef against the plugin's Configure: the
// valid config uses only declared keys; every required key is needed;
// every optional key accepts its declared default spelled out.
func checkConfig[T configurable](t *testing.T, mk func() T, valid map[string]string) {
	t.Helper()
	def := mk().Config()
	if def == nil {
		t.Fatal("Config() is nil")
	}
	for k := range valid {
		if def.Key(k) == nil {
			t.Errorf("config key %q is used but not declared by Config()", k)
		}
	}
	for _, k := range def.Keys() {
		props := map[string]string{}
		for kk, v := range valid {
			props[kk] = v
		}
		if k.Required() {
			delete(props, k.Name)
			if err := mk().Configure(props); err == nil {
				t.Errorf("required key %q: Configure succeeded without it", k.Name)
			}
			continue
		}
		if _, set := valid[k.Name]; set || k.Default == nil {
			continue
		}
		props[k.Name] = defaultString(k.Default)
		if err := mk().Configure(props); err != nil {
			t.Errorf("key %q set to its default %q: %v", k.Name, props[k.Name], err)
		}
	}
}

func defaultString(v any) string {
	switch x := v.(type) {
	case []string:
		s := ""
		for i, e := range x {
			if i > 0 {
				s += ","
			}
			s += e
		}
		return s
	}
	return fmt.Sprint(v)
}
