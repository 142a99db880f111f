package avsc

import (
	"fmt"
	"slices"
	"strings"
)

// IncompatibilityType names a reader/writer incompatibility, as Java's
// SchemaCompatibility.SchemaIncompatibilityType.
type IncompatibilityType string

const (
	NameMismatch                   IncompatibilityType = "NAME_MISMATCH"
	FixedSizeMismatch              IncompatibilityType = "FIXED_SIZE_MISMATCH"
	MissingEnumSymbols             IncompatibilityType = "MISSING_ENUM_SYMBOLS"
	ReaderFieldMissingDefaultValue IncompatibilityType = "READER_FIELD_MISSING_DEFAULT_VALUE"
	TypeMismatch                   IncompatibilityType = "TYPE_MISMATCH"
	MissingUnionBranch             IncompatibilityType = "MISSING_UNION_BRANCH"
)

// Incompatibility is one reason a reader cannot read a writer's data.
type Incompatibility struct {
	Type IncompatibilityType
	// Location is a JSON-pointer-like path in the reader schema, e.g.
	// "/fields/1/type".
	Location string
	// Message is Java's detail, e.g. "reader type: INT not compatible
	// with writer type: STRING", or a field name.
	Message string
}

// Compatible checks whether data written with writer can be read with
// reader under Avro's schema resolution rules (Java's
// SchemaCompatibility.checkReaderWriterCompatibility): fields the reader
// adds need defaults, fields the writer has and the reader lacks are
// skipped, int→long→float→double and string↔bytes promote, enum
// symbols must be known to the reader (or it has a default), every
// writer union branch must be readable, names match by short name or a
// reader alias. It returns every incompatibility found (nil when
// compatible).
func Compatible(reader, writer *Schema) []Incompatibility {
	c := &checker{memo: map[[2]*Schema]*result{}}
	r := c.check(reader, writer, []string{""})
	return r.incompat
}

type result struct {
	incompat []Incompatibility
	inProg   bool
}

type checker struct {
	memo map[[2]*Schema]*result
}

func (c *checker) check(reader, writer *Schema, loc []string) *result {
	key := [2]*Schema{reader, writer}
	if r, ok := c.memo[key]; ok {
		if r.inProg {
			// Recursion in progress: assume compatible, as Java does.
			return &result{}
		}
		return r
	}
	r := &result{inProg: true}
	c.memo[key] = r
	out := c.calculate(reader, writer, loc)
	r.incompat, r.inProg = out, false
	return r
}

func (c *checker) sub(token string, reader, writer *Schema, loc []string) []Incompatibility {
	return c.check(reader, writer, append(slices.Clip(loc), token)).incompat
}

func incompatible(t IncompatibilityType, msg string, loc []string) []Incompatibility {
	return []Incompatibility{{Type: t, Message: msg, Location: location(loc)}}
}

func location(loc []string) string {
	if len(loc) <= 1 {
		return "/"
	}
	return "/" + strings.Join(loc[1:], "/")
}

func upper(t Type) string { return strings.ToUpper(string(t)) }

func typeMismatch(reader, writer *Schema, loc []string) []Incompatibility {
	return incompatible(TypeMismatch, fmt.Sprintf("reader type: %s not compatible with writer type: %s", upper(reader.Type), upper(writer.Type)), loc)
}

func (c *checker) calculate(reader, writer *Schema, loc []string) []Incompatibility {
	if reader.Type == writer.Type {
		switch reader.Type {
		case Null, Boolean, Int, Long, Float, Double, Bytes, String:
			return nil
		case Array:
			return c.sub("items", reader.Items, writer.Items, loc)
		case Map:
			return c.sub("values", reader.Values, writer.Values, loc)
		case Fixed:
			out := checkNames(reader, writer, loc)
			if reader.Size != writer.Size {
				out = append(out, incompatible(FixedSizeMismatch, fmt.Sprintf("expected: %d, found: %d", writer.Size, reader.Size), append(slices.Clip(loc), "size"))...)
			}
			return out
		case Enum:
			out := checkNames(reader, writer, loc)
			var missing []string
			for _, s := range writer.Symbols {
				if !slices.Contains(reader.Symbols, s) {
					missing = append(missing, s)
				}
			}
			if len(missing) > 0 && (reader.EnumDefault == nil || !slices.Contains(reader.Symbols, *reader.EnumDefault)) {
				slices.Sort(missing)
				out = append(out, incompatible(MissingEnumSymbols, "["+strings.Join(missing, ", ")+"]", append(slices.Clip(loc), "symbols"))...)
			}
			return out
		case Record:
			out := checkNames(reader, writer, loc)
			return append(out, c.checkFields(reader, writer, loc)...)
		case Union:
			var out []Incompatibility
			for i, wb := range writer.Branches {
				bl := append(slices.Clip(loc), fmt.Sprint(i))
				if len(c.check(reader, wb, bl).incompat) > 0 {
					out = append(out, incompatible(MissingUnionBranch, "reader union lacking writer type: "+upper(wb.Type), bl)...)
				}
			}
			return out
		}
		return nil
	}
	if writer.Type == Union {
		var out []Incompatibility
		for i, wb := range writer.Branches {
			out = append(out, c.sub(fmt.Sprint(i), reader, wb, loc)...)
		}
		return out
	}
	switch reader.Type {
	case Long:
		if writer.Type == Int {
			return nil
		}
	case Float:
		if writer.Type == Int || writer.Type == Long {
			return nil
		}
	case Double:
		if writer.Type == Int || writer.Type == Long || writer.Type == Float {
			return nil
		}
	case Bytes:
		if writer.Type == String {
			return nil
		}
	case String:
		if writer.Type == Bytes {
			return nil
		}
	case Union:
		for _, rb := range reader.Branches {
			if len(c.check(rb, writer, loc).incompat) == 0 {
				return nil
			}
		}
		return incompatible(MissingUnionBranch, "reader union lacking writer type: "+upper(writer.Type), loc)
	}
	return typeMismatch(reader, writer, loc)
}

// checkNames is Java's schemaNameEquals: short names equal, or the
// writer's full name is a reader alias.
func checkNames(reader, writer *Schema, loc []string) []Incompatibility {
	if reader.Name == writer.Name || slices.Contains(reader.Aliases, writer.FullName()) {
		return nil
	}
	return incompatible(NameMismatch, "expected: "+writer.FullName(), append(slices.Clip(loc), "name"))
}

func (c *checker) checkFields(reader, writer *Schema, loc []string) []Incompatibility {
	var out []Incompatibility
	fl := append(slices.Clip(loc), "fields")
	for _, rf := range reader.Fields {
		pl := append(slices.Clip(fl), fmt.Sprint(rf.Pos))
		wf := lookupWriterField(writer, rf)
		if wf == nil {
			if !rf.HasDefault {
				if rf.Type.Type == Enum && rf.Type.EnumDefault != nil {
					out = append(out, c.sub("type", rf.Type, writer, pl)...)
				} else {
					out = append(out, incompatible(ReaderFieldMissingDefaultValue, rf.Name, pl)...)
				}
			}
			continue
		}
		out = append(out, c.sub("type", rf.Type, wf.Type, pl)...)
	}
	return out
}

func lookupWriterField(writer *Schema, rf *Field) *Field {
	if f := writer.Field(rf.Name); f != nil {
		return f
	}
	for _, a := range rf.Aliases {
		if f := writer.Field(a); f != nil {
			return f
		}
	}
	return nil
}
