package config

import (
	"reflect"
	"testing"
)

// FuzzTopicConfigs throws arbitrary topic configs at validation,
// resolution and DescribeConfigs. None may panic; configs that validate
// must resolve without complaint and be described as topic overrides; and
// a value's canonical form (what DescribeConfigs shows) must parse back to
// the same value.
func FuzzTopicConfigs(f *testing.F) {
	f.Add("retention.ms", "1000", "cleanup.policy", "compact,delete")
	f.Add("min.cleanable.dirty.ratio", "1e-4", "segment.bytes", "1048576")
	f.Add("compression.gzip.level", "-1", "nope", "x")
	f.Add("max.compaction.lag.ms", "5", "min.compaction.lag.ms", "10")
	b, err := NewBroker(map[string]string{"node.id": "1"}, quiet())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		configs := map[string]string{k1: v1, k2: v2}
		verr := b.ValidateTopicConfigs(configs)
		_, terr := b.Topic(configs)
		entries := b.DescribeTopic(configs, DescribeOptions{Synonyms: true, Documentation: true, Version: 4})
		if verr != nil {
			return
		}
		if terr != nil {
			t.Fatalf("%v validated but resolving says %v", configs, terr)
		}
		for _, e := range entries {
			if _, set := configs[e.Name]; set && e.Source != 1 {
				t.Fatalf("%s=%q is an override but described with source %d", e.Name, configs[e.Name], e.Source)
			}
		}
		for k, raw := range configs {
			s := topicTable.byName[k]
			v, err := s.parse(raw)
			if err != nil {
				t.Fatalf("%s=%q validated but does not parse: %v", k, raw, err)
			}
			again, err := s.parse(canonical(s.Type, v))
			if err != nil || !sameValue(v, again) {
				t.Fatalf("%s=%q: canonical %q parses to %v (%v)", k, raw, canonical(s.Type, v), again, err)
			}
		}
	})
}

// sameValue compares parsed values, NaN equal to NaN.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, _ := b.(float64)
		return fa == fb || (fa != fa && fb != fb)
	}
	return reflect.DeepEqual(a, b)
}
