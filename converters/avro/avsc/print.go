package avsc

import (
	"crypto/md5"
	"strconv"
)

// String returns the schema as Java's Schema.toString() writes it: the
// text Confluent's registry stores, serves and dedupes by. Primitives
// without properties are bare names ("string"); a named type is written
// whole the first time and by name afterwards; a namespace is written
// only where it differs from the enclosing one.
func (s *Schema) String() string {
	return string(s.AppendJSON(nil))
}

// AppendJSON appends the String form to b.
func (s *Schema) AppendJSON(b []byte) []byte {
	return s.appendJSON(b, map[string]bool{}, "")
}

func (s *Schema) appendJSON(b []byte, known map[string]bool, space string) []byte {
	switch s.Type {
	case Record, Enum, Fixed:
		full := s.FullName()
		if known[full] {
			return appendString(b, qualified(s.Name, s.Namespace, space))
		}
		known[full] = true
		b = append(b, `{"type":`...)
		switch {
		case s.Type == Record && s.IsError:
			b = appendString(b, "error")
		default:
			b = appendString(b, string(s.Type))
		}
		b = append(b, `,"name":`...)
		b = appendString(b, s.Name)
		if s.Namespace != "" {
			if s.Namespace != space {
				b = append(b, `,"namespace":`...)
				b = appendString(b, s.Namespace)
			}
		} else if space != "" {
			b = append(b, `,"namespace":""`...)
		}
		if s.Doc != nil {
			b = append(b, `,"doc":`...)
			b = appendString(b, *s.Doc)
		}
		switch s.Type {
		case Record:
			b = append(b, `,"fields":[`...)
			for i, f := range s.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = f.appendJSON(b, known, s.Namespace)
			}
			b = append(b, ']')
			b = appendProps(b, s.Props)
			b = s.appendAliases(b)
		case Enum:
			b = append(b, `,"symbols":[`...)
			for i, sym := range s.Symbols {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, sym)
			}
			b = append(b, ']')
			if s.EnumDefault != nil {
				b = append(b, `,"default":`...)
				b = appendString(b, *s.EnumDefault)
			}
			b = appendProps(b, s.Props)
			b = s.appendAliases(b)
		case Fixed:
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, int64(s.Size), 10)
			b = appendProps(b, s.Props)
			b = s.appendAliases(b)
		}
		return append(b, '}')
	case Array:
		b = append(b, `{"type":"array","items":`...)
		b = s.Items.appendJSON(b, known, space)
		b = appendProps(b, s.Props)
		return append(b, '}')
	case Map:
		b = append(b, `{"type":"map","values":`...)
		b = s.Values.appendJSON(b, known, space)
		b = appendProps(b, s.Props)
		return append(b, '}')
	case Union:
		b = append(b, '[')
		for i, br := range s.Branches {
			if i > 0 {
				b = append(b, ',')
			}
			b = br.appendJSON(b, known, space)
		}
		return append(b, ']')
	}
	if len(s.Props) == 0 {
		return appendString(b, string(s.Type))
	}
	b = append(b, `{"type":`...)
	b = appendString(b, string(s.Type))
	b = appendProps(b, s.Props)
	return append(b, '}')
}

func (f *Field) appendJSON(b []byte, known map[string]bool, space string) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, f.Name)
	b = append(b, `,"type":`...)
	b = f.Type.appendJSON(b, known, space)
	if f.Doc != nil {
		b = append(b, `,"doc":`...)
		b = appendString(b, *f.Doc)
	}
	if f.HasDefault {
		b = append(b, `,"default":`...)
		b = AppendJSON(b, f.Default)
	}
	if f.Order != "" && f.Order != "ascending" {
		b = append(b, `,"order":`...)
		b = appendString(b, f.Order)
	}
	if len(f.Aliases) > 0 {
		b = append(b, `,"aliases":[`...)
		for i, a := range f.Aliases {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, ']')
	}
	b = appendProps(b, f.Props)
	return append(b, '}')
}

func (s *Schema) appendAliases(b []byte) []byte {
	if len(s.Aliases) == 0 {
		return b
	}
	b = append(b, `,"aliases":[`...)
	for i, a := range s.Aliases {
		if i > 0 {
			b = append(b, ',')
		}
		name, ns := a, ""
		for j := len(a) - 1; j >= 0; j-- {
			if a[j] == '.' {
				ns, name = a[:j], a[j+1:]
				break
			}
		}
		b = appendString(b, qualified(name, ns, s.Namespace))
	}
	return append(b, ']')
}

// qualified is Java's Name.getQualified: the short name inside its own
// namespace (unless it would read as a primitive), the full name
// elsewhere.
func qualified(name, ns, space string) string {
	if ns != "" && ns == space {
		if _, prim := primitives[name]; !prim {
			return name
		}
	}
	if ns == "" {
		return name
	}
	return ns + "." + name
}

func appendProps(b []byte, p Object) []byte {
	for _, m := range p {
		b = append(b, ',')
		b = appendString(b, m.Key)
		b = append(b, ':')
		b = AppendJSON(b, m.Value)
	}
	return b
}

// Canonical returns the Avro specification's Parsing Canonical Form
// (full names, no doc/aliases/defaults/properties, fixed key order): two
// schemas with the same canonical form read and write the same bytes.
func (s *Schema) Canonical() string {
	return string(s.appendCanonical(nil, map[string]bool{}))
}

func (s *Schema) appendCanonical(b []byte, known map[string]bool) []byte {
	switch s.Type {
	case Record, Enum, Fixed:
		full := s.FullName()
		if known[full] {
			return appendString(b, full)
		}
		known[full] = true
		b = append(b, `{"name":`...)
		b = appendString(b, full)
		b = append(b, `,"type":`...)
		b = appendString(b, string(s.Type))
		switch s.Type {
		case Record:
			b = append(b, `,"fields":[`...)
			for i, f := range s.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"name":`...)
				b = appendString(b, f.Name)
				b = append(b, `,"type":`...)
				b = f.Type.appendCanonical(b, known)
				b = append(b, '}')
			}
			b = append(b, ']')
		case Enum:
			b = append(b, `,"symbols":[`...)
			for i, sym := range s.Symbols {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, sym)
			}
			b = append(b, ']')
		case Fixed:
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, int64(s.Size), 10)
		}
		return append(b, '}')
	case Array:
		b = append(b, `{"type":"array","items":`...)
		b = s.Items.appendCanonical(b, known)
		return append(b, '}')
	case Map:
		b = append(b, `{"type":"map","values":`...)
		b = s.Values.appendCanonical(b, known)
		return append(b, '}')
	case Union:
		b = append(b, '[')
		for i, br := range s.Branches {
			if i > 0 {
				b = append(b, ',')
			}
			b = br.appendCanonical(b, known)
		}
		return append(b, ']')
	}
	return appendString(b, string(s.Type))
}

// MD5 is the MD5 of the String form, the key Confluent's registry
// dedupes schemas by.
func (s *Schema) MD5() [16]byte { return md5.Sum([]byte(s.String())) }
