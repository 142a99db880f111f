package transforms

import (
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

const kafkaTransforms = "org.apache.kafka.connect.transforms."

// Interface checks: every transformation and predicate here is a plugin.
var (
	_ connect.Transformation = (*Cast)(nil)
	_ connect.Transformation = (*DropHeaders)(nil)
	_ connect.Transformation = (*ExtractField)(nil)
	_ connect.Transformation = Filter{}
	_ connect.Transformation = (*Flatten)(nil)
	_ connect.Transformation = (*HeaderFrom)(nil)
	_ connect.Transformation = (*HoistField)(nil)
	_ connect.Transformation = (*InsertField)(nil)
	_ connect.Transformation = (*InsertHeader)(nil)
	_ connect.Transformation = (*MaskField)(nil)
	_ connect.Transformation = (*RegexRouter)(nil)
	_ connect.Transformation = (*ReplaceField)(nil)
	_ connect.Transformation = (*SetSchemaMetadata)(nil)
	_ connect.Transformation = (*TimestampConverter)(nil)
	_ connect.Transformation = (*TimestampRouter)(nil)
	_ connect.Transformation = (*ValueToKey)(nil)
	_ connect.Transformation = (*ExtractNewRecordState)(nil)
	_ connect.Predicate      = (*TopicNameMatches)(nil)
	_ connect.Predicate      = (*HasHeaderKey)(nil)
	_ connect.Predicate      = RecordIsTombstone{}
)

// keyValue lists the transformations Kafka ships as $Key and $Value
// variants, with a constructor for a side.
var keyValue = map[string]func(side) connect.Transformation{
	"Cast":               func(s side) connect.Transformation { return &Cast{side: s} },
	"ExtractField":       func(s side) connect.Transformation { return &ExtractField{side: s} },
	"Flatten":            func(s side) connect.Transformation { return &Flatten{side: s} },
	"HeaderFrom":         func(s side) connect.Transformation { return &HeaderFrom{side: s} },
	"HoistField":         func(s side) connect.Transformation { return &HoistField{side: s} },
	"InsertField":        func(s side) connect.Transformation { return &InsertField{side: s} },
	"MaskField":          func(s side) connect.Transformation { return &MaskField{side: s} },
	"ReplaceField":       func(s side) connect.Transformation { return &ReplaceField{side: s} },
	"SetSchemaMetadata":  func(s side) connect.Transformation { return &SetSchemaMetadata{side: s} },
	"TimestampConverter": func(s side) connect.Transformation { return &TimestampConverter{side: s} },
}

var plain = map[string]func() connect.Transformation{
	"DropHeaders":     func() connect.Transformation { return &DropHeaders{} },
	"Filter":          func() connect.Transformation { return Filter{} },
	"InsertHeader":    func() connect.Transformation { return &InsertHeader{} },
	"RegexRouter":     func() connect.Transformation { return &RegexRouter{} },
	"TimestampRouter": func() connect.Transformation { return &TimestampRouter{} },
	"ValueToKey":      func() connect.Transformation { return &ValueToKey{} },
}

var predicates = map[string]func() connect.Predicate{
	"TopicNameMatches":  func() connect.Predicate { return &TopicNameMatches{} },
	"HasHeaderKey":      func() connect.Predicate { return &HasHeaderKey{} },
	"RecordIsTombstone": func() connect.Predicate { return RecordIsTombstone{} },
}

// ExtractNewRecordStateClass is Debezium's class name for the unwrap SMT.
const ExtractNewRecordStateClass = "io.debezium.transforms.ExtractNewRecordState"

func init() {
	for name, mk := range keyValue {
		for _, v := range []struct {
			suffix string
			s      side
		}{{"$Key", keySide}, {"$Value", valueSide}} {
			mk, s := mk, v.s
			plugins.Register(plugins.Plugin{
				Class: kafkaTransforms + name + v.suffix, Aliases: []string{name + v.suffix},
				Kind: plugins.Transformation, New: func() any { return mk(s) },
			})
		}
	}
	for name, mk := range plain {
		mk := mk
		plugins.Register(plugins.Plugin{
			Class: kafkaTransforms + name, Aliases: []string{name},
			Kind: plugins.Transformation, New: func() any { return mk() },
		})
	}
	for name, mk := range predicates {
		mk := mk
		plugins.Register(plugins.Plugin{
			Class: kafkaTransforms + "predicates." + name, Aliases: []string{name},
			Kind: plugins.Predicate, New: func() any { return mk() },
		})
	}
	plugins.Register(plugins.Plugin{
		Class: ExtractNewRecordStateClass, Aliases: []string{"ExtractNewRecordState"},
		Kind: plugins.Transformation, Version: debeziumVersion,
		New: func() any { return &ExtractNewRecordState{} },
	})
}
