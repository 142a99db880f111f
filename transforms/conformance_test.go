package transforms_test

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/transforms"
	"github.com/fjordhq/fjord/transforms/transformtest"
)

// conformanceConfigs is a valid configuration for every plugin this
// package registers; TestConformance fails for a registered plugin that
// has none, so no transformation skips the suite.
var conformanceConfigs = map[string]map[string]string{
	"Cast$Key":                     {"spec": "id:string"},
	"Cast$Value":                   {"spec": "age:int64,id:string,name:string", "replace.null.with.default": "false"},
	"ExtractField$Key":             {"field": "id"},
	"ExtractField$Value":           {"field": "address.city", "field.syntax.version": "V2"},
	"Flatten$Key":                  {},
	"Flatten$Value":                {"delimiter": "_"},
	"HeaderFrom$Key":               {"fields": "id", "headers": "kid", "operation": "copy"},
	"HeaderFrom$Value":             {"fields": "name,age", "headers": "n,a", "operation": "move"},
	"HoistField$Key":               {"field": "k"},
	"HoistField$Value":             {"field": "v"},
	"InsertField$Key":              {"topic.field": "t"},
	"InsertField$Value":            {"topic.field": "t!", "partition.field": "p", "offset.field": "o", "timestamp.field": "ts", "static.field": "s", "static.value": "v"},
	"MaskField$Key":                {"fields": "id"},
	"MaskField$Value":              {"fields": "name,age,tags", "replacement": "0"},
	"ReplaceField$Key":             {"renames": "id:key_id"},
	"ReplaceField$Value":           {"exclude": "age", "renames": "name:full_name"},
	"SetSchemaMetadata$Key":        {"schema.name": "k", "schema.version": "3"},
	"SetSchemaMetadata$Value":      {"schema.name": "v"},
	"TimestampConverter$Key":       {"target.type": "unix"},
	"TimestampConverter$Value":     {"field": "created", "target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"},
	"DropHeaders":                  {"headers": "h1"},
	"Filter":                       {},
	"InsertHeader":                 {"header": "x", "value.literal": "[1,2]"},
	"RegexRouter":                  {"regex": "(.*)s", "replacement": "$1"},
	"TimestampRouter":              {"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyy.MM.dd"},
	"ValueToKey":                   {"fields": "id,name"},
	"ExtractNewRecordState":        {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,table,source.ts_ms", "add.headers": "op"},
	"predicates.TopicNameMatches":  {"pattern": "user.*"},
	"predicates.HasHeaderKey":      {"name": "h1"},
	"predicates.RecordIsTombstone": {},
}

func shortName(class string) string {
	if class == transforms.ExtractNewRecordStateClass {
		return "ExtractNewRecordState"
	}
	return strings.TrimPrefix(class, "org.apache.kafka.connect.transforms.")
}

func ours(class string) bool {
	return strings.HasPrefix(class, "org.apache.kafka.connect.transforms.") || class == transforms.ExtractNewRecordStateClass
}

func TestConformance(t *testing.T) {
	extra := append(debeziumRecords(t), transformtest.Corpus()...)
	n := 0
	for _, p := range plugins.List(plugins.Transformation, plugins.Predicate) {
		if !ours(p.Class) {
			continue
		}
		n++
		name := shortName(p.Class)
		cfg, ok := conformanceConfigs[name]
		if !ok {
			t.Errorf("%s has no conformance config", p.Class)
			continue
		}
		p := p
		t.Run(name, func(t *testing.T) {
			switch p.Kind {
			case plugins.Transformation:
				transformtest.Run(t, transformtest.Case{
					New:     func() connect.Transformation { return p.New().(connect.Transformation) },
					Config:  cfg,
					Records: extra,
				})
			case plugins.Predicate:
				transformtest.RunPredicate(t, transformtest.PredicateCase{
					New:    func() connect.Predicate { return p.New().(connect.Predicate) },
					Config: cfg,
				})
			}
		})
	}
	if n != len(conformanceConfigs) {
		t.Errorf("%d plugins registered, %d conformance configs", n, len(conformanceConfigs))
	}
}
