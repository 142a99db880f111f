package cdc

import (
	"github.com/fjordhq/fjord/connect"
)

// Arrays: a Connect ARRAY of optional elements, read as Debezium reads
// them through pgjdbc's PgArray and its element converters.

// unmappedArrays are the array element types Debezium's
// PostgresValueConverter has no schema for (the column is left out).
// bit[] is here too: Debezium gives it a Bits (not an ARRAY) schema and
// then fails to put its list value, so no sensible event carries it.
var unmappedArrays = map[string]bool{
	"money": true, "name": true, "interval": true, "varbit": true, "bit": true,
	"xml": true, "point": true, "refcursor": true,
}

func mapArray(c *Column, t typeInfo, o *typeOpts) (*mapping, error) {
	elem := typeInfo{name: t.elem, kind: t.elemKind, enum: t.enum, mod: t.mod}
	var em *mapping
	required := false
	switch {
	case unmappedArrays[elem.name]:
		return nil, nil
	case elem.kind == 'd' || elem.kind == 'c' || elem.kind == 'p':
		// Arrays of domains (Debezium cannot map them) and of composites.
		return nil, nil
	case elem.kind == 'e':
		// Debezium's enum array element schema is not optional: an
		// array holding a NULL fails its conversion.
		em, required = enumMapping(elem.enum, o.placeholderStr), true
	default:
		em = mapScalar(elem, o, true)
	}
	if em == nil {
		return nil, nil
	}
	eb := em.schema()
	if !required {
		eb.Optional()
	}
	es, err := eb.BuildE()
	if err != nil {
		return nil, err
	}
	if em.bind != nil {
		em.bind(es)
	}
	m := &mapping{
		schema:   func() *connect.SchemaBuilder { return connect.NewArray(es) },
		fallback: []any{},
		arena:    em.arena,
	}
	m.toast, m.toastErr = arrayToast(t.name, o)
	elemDec := em.dec
	m.dec = func(b []byte, a *arena) (any, error) {
		var out []any
		var scratch []byte
		err := walkArray(b, &scratch, func(v []byte, null, nested bool) error {
			switch {
			case nested:
				// Elements of a multi-dimensional array are arrays, which
				// Debezium's element converters cannot convert (null).
				out = append(out, nil)
			case null:
				if required {
					return convFailure("Invalid value: null used for required array element")
				}
				out = append(out, nil)
			default:
				x, err := elemDec(v, a)
				if err != nil {
					return err
				}
				out = append(out, x)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return m, nil
}

// arrayToast is Debezium's unchanged-TOAST value of an array column, by
// its type name (UnchangedToastedReplicationMessageColumn): a one-element
// list for text-like and uuid arrays, the placeholder's bytes as numbers
// for int4, int8 and date arrays. Any other array gets the placeholder
// string, which its ARRAY schema refuses: null.
func arrayToast(typeName string, o *typeOpts) (any, error) {
	switch typeName {
	case "_text", "_varchar", "_bpchar", "_json", "_jsonb":
		return []any{o.placeholderStr}, nil
	case "_bytea":
		if o.binary == BinaryBytes {
			return []any{o.placeholder}, nil
		}
	case "_int4":
		return placeholderNumbers(o.placeholder, func(b int8) any { return int32(b) }), nil
	case "_date":
		switch o.time {
		case TimeConnect, TimeIsoString:
		default:
			return placeholderNumbers(o.placeholder, func(b int8) any { return int32(b) }), nil
		}
	case "_int8":
		return placeholderNumbers(o.placeholder, func(b int8) any { return int64(b) }), nil
	case "_uuid":
		return []any{javaNameUUID(o.placeholder)}, nil
	}
	return nil, errToastType
}

func placeholderNumbers(p []byte, conv func(int8) any) []any {
	out := make([]any, len(p))
	for i, b := range p {
		out[i] = conv(int8(b)) // Java bytes are signed
	}
	return out
}

// walkArray calls fn for each top-level element of an array literal in
// PostgreSQL's output: "{1,NULL,\"a b\"}", with an optional
// "[lo:hi]=" dimension prefix. Quoted elements are unescaped into
// scratch (so v is valid only during the call); nested sub-arrays are
// reported as nested.
func walkArray(b []byte, scratch *[]byte, fn func(v []byte, null, nested bool) error) error {
	i := 0
	if len(b) > 0 && b[0] == '[' {
		eq := indexByte(b, '=')
		if eq < 0 {
			return errSyntax
		}
		i = eq + 1
	}
	if i >= len(b) || b[i] != '{' {
		return errSyntax
	}
	i++
	if i < len(b) && b[i] == '}' {
		if i+1 != len(b) {
			return errSyntax
		}
		return nil
	}
	for {
		if i >= len(b) {
			return errSyntax
		}
		switch b[i] {
		case '{':
			end, err := skipSubArray(b, i)
			if err != nil {
				return err
			}
			if err := fn(nil, false, true); err != nil {
				return err
			}
			i = end
		case '"':
			buf := (*scratch)[:0]
			i++
			for {
				if i >= len(b) {
					return errSyntax
				}
				c := b[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' {
					i++
					if i >= len(b) {
						return errSyntax
					}
					c = b[i]
				}
				buf = append(buf, c)
				i++
			}
			*scratch = buf
			if err := fn(buf, false, false); err != nil {
				return err
			}
		default:
			start := i
			for i < len(b) && b[i] != ',' && b[i] != '}' {
				if b[i] == '"' || b[i] == '{' || b[i] == '\\' {
					return errSyntax
				}
				i++
			}
			v := b[start:i]
			if len(v) == 0 {
				return errSyntax
			}
			null := len(v) == 4 && (v[0]|0x20) == 'n' && (v[1]|0x20) == 'u' && (v[2]|0x20) == 'l' && (v[3]|0x20) == 'l'
			if err := fn(v, null, false); err != nil {
				return err
			}
		}
		if i >= len(b) {
			return errSyntax
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			if i+1 != len(b) {
				return errSyntax
			}
			return nil
		default:
			return errSyntax
		}
	}
}

// skipSubArray returns the index just past the sub-array starting at
// b[i] == '{'.
func skipSubArray(b []byte, i int) (int, error) {
	depth := 0
	inQuote := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, errSyntax
}
