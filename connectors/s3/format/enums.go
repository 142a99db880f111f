package format

import (
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// With enhanced.avro.schema.support (Confluent's S3 default), AvroData
// writes a STRING schema that came from an Avro enum (it carries the
// io.confluent.connect.avro.Enum parameters) back as that enum. Fjord's
// converter does not, so restoreEnums turns those strings of the
// converted schema into enums, as AvroData.fromConnectSchema does.

const (
	enumParam         = "io.confluent.connect.avro.Enum"
	enumDocPrefix     = "io.confluent.connect.avro.enum.doc."
	enumDefaultPrefix = "io.confluent.connect.avro.enum.default."
	unionName         = "io.confluent.connect.avro.Union"
)

func restoreEnums(cs *connect.Schema, a *avsc.Schema) {
	walkEnums(cs, a, map[*avsc.Schema]bool{})
}

func walkEnums(cs *connect.Schema, a *avsc.Schema, seen map[*avsc.Schema]bool) {
	if cs == nil || a == nil || seen[a] {
		return
	}
	seen[a] = true
	if a.Type == avsc.Union {
		if cs.Type == connect.StructType && cs.Name == unionName {
			i := 0
			for _, br := range a.Branches {
				if br.Type == avsc.Null || i >= len(cs.Fields) {
					continue
				}
				walkEnums(cs.Fields[i].Schema, br, seen)
				i++
			}
			return
		}
		for _, br := range a.Branches {
			if br.Type != avsc.Null {
				walkEnums(cs, br, seen)
			}
		}
		return
	}
	switch cs.Type {
	case connect.String:
		if full, ok := cs.Parameters[enumParam]; ok && a.Type == avsc.String {
			toEnum(cs, a, full)
		}
	case connect.Array:
		if a.Type == avsc.Array {
			walkEnums(cs.ValueSchema, a.Items, seen)
		}
	case connect.Map:
		switch {
		case a.Type == avsc.Map:
			walkEnums(cs.ValueSchema, a.Values, seen)
		case a.Type == avsc.Array && a.Items != nil && len(a.Items.Fields) == 2:
			walkEnums(cs.KeySchema, a.Items.Fields[0].Type, seen)
			walkEnums(cs.ValueSchema, a.Items.Fields[1].Type, seen)
		}
	case connect.StructType:
		if a.Type == avsc.Record && len(a.Fields) == len(cs.Fields) {
			for i := range cs.Fields {
				walkEnums(cs.Fields[i].Schema, a.Fields[i].Type, seen)
			}
		}
	}
}

func toEnum(cs *connect.Schema, a *avsc.Schema, full string) {
	var symbols []string
	for _, k := range cs.ParameterKeys() {
		if sym, ok := strings.CutPrefix(k, enumParam+"."); ok {
			symbols = append(symbols, sym)
		}
	}
	// The doc and default are keyed by the Connect schema's simple name.
	simple := cs.Name[strings.LastIndexByte(cs.Name, '.')+1:]
	if cs.Name == "" {
		simple = "ConnectDefault"
	}
	a.Type = avsc.Enum
	a.Namespace, a.Name = "", full
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		a.Namespace, a.Name = full[:i], full[i+1:]
	}
	a.Symbols = symbols
	if d, ok := cs.Parameters[enumDocPrefix+simple]; ok {
		a.Doc = &d
	}
	if d, ok := cs.Parameters[enumDefaultPrefix+simple]; ok {
		a.EnumDefault = &d
	}
}
