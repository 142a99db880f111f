package transforms_test

import (
	"testing"

	"github.com/fjordhq/fjord/transforms"
	"github.com/fjordhq/fjord/transforms/transformtest"
)

// BenchmarkChain measures a typical sink chain on a schema'd record:
// insert topic/offset fields, drop a field, cast one, route by timestamp.
func BenchmarkChain(b *testing.B) {
	chain, err := transforms.BuildChain(map[string]string{
		"transforms":                        "insert,replace,cast,route",
		"transforms.insert.type":            "InsertField$Value",
		"transforms.insert.topic.field":     "topic",
		"transforms.insert.offset.field":    "offset",
		"transforms.replace.type":           "ReplaceField$Value",
		"transforms.replace.exclude":        "tags",
		"transforms.cast.type":              "Cast$Value",
		"transforms.cast.spec":              "age:int64",
		"transforms.route.type":             "TimestampRouter",
		"transforms.route.timestamp.format": "yyyy-MM-dd",
	})
	if err != nil {
		b.Fatal(err)
	}
	r := transformtest.Corpus()[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chain.Apply(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtractNewRecordState measures unwrapping a Debezium update
// with two added fields.
func BenchmarkExtractNewRecordState(b *testing.B) {
	chain, err := transforms.BuildChain(map[string]string{
		"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.add.fields": "op,source.ts_ms",
	})
	if err != nil {
		b.Fatal(err)
	}
	r := debeziumRecords(b)[1]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chain.Apply(r); err != nil {
			b.Fatal(err)
		}
	}
}
