package json

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
)

// schemaless reads a value without a schema: objects become
// map[string]any, integers int64 (Jackson's longValue(), so too large
// ones keep their low 64 bits), other numbers float64.
func (d *decoder) schemaless() (any, error) {
	switch c := d.peek(); c {
	case '{':
		if err := d.enter(); err != nil {
			return nil, err
		}
		d.pos++
		m := make(map[string]any)
		if d.peek() == '}' {
			d.pos++
			d.depth--
			return m, nil
		}
		for {
			if d.peek() != '"' {
				return nil, d.unexpected()
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if d.peek() != ':' {
				return nil, d.unexpected()
			}
			d.pos++
			v, err := d.schemaless()
			if err != nil {
				return nil, err
			}
			m[k] = v
			switch d.peek() {
			case ',':
				d.pos++
			case '}':
				d.pos++
				d.depth--
				return m, nil
			default:
				return nil, d.unexpected()
			}
		}
	case '[':
		if err := d.enter(); err != nil {
			return nil, err
		}
		d.pos++
		out := []any{}
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return out, nil
		}
		for {
			v, err := d.schemaless()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			switch d.peek() {
			case ',':
				d.pos++
			case ']':
				d.pos++
				d.depth--
				return out, nil
			default:
				return nil, d.unexpected()
			}
		}
	case '"':
		return d.str()
	}
	n, err := d.node()
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case kBoolean:
		return n.b, nil
	case kNull:
		return nil, nil
	}
	if n.float {
		return float64Value(n.text), nil
	}
	return intBits(n.text, false), nil
}

// array reads an ARRAY. Kafka iterates the JSON node: an array's
// elements, an object's values, nothing for a scalar.
func (d *decoder) array(s *connect.Schema) (any, error) {
	switch d.peek() {
	case '[':
		if err := d.enter(); err != nil {
			return nil, err
		}
		d.pos++
		out := []any{}
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return out, nil
		}
		for {
			v, err := d.convert(s.ValueSchema)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			switch d.peek() {
			case ',':
				d.pos++
			case ']':
				d.pos++
				d.depth--
				return out, nil
			default:
				return nil, d.unexpected()
			}
		}
	case '{':
		return d.objectValues(s.ValueSchema)
	}
	_, err := d.node()
	return []any{}, err
}

// objectValues converts an object's values in order (a duplicate key
// keeps its first place and its last value, as Jackson's ObjectNode).
func (d *decoder) objectValues(elem *connect.Schema) (any, error) {
	type entry struct {
		key   string
		start int
	}
	var entries []entry
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++
	if d.peek() != '}' {
		for {
			if d.peek() != '"' {
				return nil, d.unexpected()
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if d.peek() != ':' {
				return nil, d.unexpected()
			}
			d.pos++
			d.ws()
			start := d.pos
			if err := d.skip(); err != nil {
				return nil, err
			}
			dup := false
			for i := range entries {
				if entries[i].key == k {
					entries[i].start, dup = start, true
				}
			}
			if !dup {
				entries = append(entries, entry{k, start})
			}
			if d.peek() == ',' {
				d.pos++
				continue
			}
			if d.peek() != '}' {
				return nil, d.unexpected()
			}
			break
		}
	}
	end := d.pos + 1
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		d.pos = e.start
		v, err := d.convert(elem)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	d.pos = end
	d.depth--
	return out, nil
}

// stringMap reads a MAP with STRING keys: a JSON object.
func (d *decoder) stringMap(s *connect.Schema) (any, error) {
	if c := d.peek(); c != '{' {
		return nil, dataErrorf("Maps with string fields should be encoded as JSON objects, but found %s", kindOf(c))
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++
	m := make(map[string]any)
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return m, nil
	}
	// pending are conversion errors of keys a later duplicate may still
	// overwrite (Kafka converts only the last value of a key).
	var pending []keyError
	for {
		if d.peek() != '"' {
			return nil, d.unexpected()
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if d.peek() != ':' {
			return nil, d.unexpected()
		}
		d.pos++
		d.ws()
		start := d.pos
		v, err := d.convert(s.ValueSchema)
		pending = dropKey(pending, k)
		if err != nil {
			if !isConversion(err) {
				return nil, err
			}
			d.pos = start
			if serr := d.skip(); serr != nil {
				return nil, serr
			}
			pending = append(pending, keyError{k, err})
		} else {
			m[k] = v
		}
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
			d.depth--
		default:
			return nil, d.unexpected()
		}
		break
	}
	if len(pending) > 0 {
		return nil, pending[0].err
	}
	return m, nil
}

type keyError struct {
	key string
	err error
}

func dropKey(p []keyError, k string) []keyError {
	for i := range p {
		if p[i].key == k {
			return append(p[:i], p[i+1:]...)
		}
	}
	return p
}

// pairMap reads a MAP with non-STRING keys: [[key,value],...].
func (d *decoder) pairMap(s *connect.Schema) (any, error) {
	if c := d.peek(); c != '[' {
		return nil, dataErrorf("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", kindOf(c))
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++
	m := make(map[any]any)
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return m, nil
	}
	for {
		if c := d.peek(); c != '[' {
			return nil, dataErrorf("Found invalid map entry instead of array tuple: %s", kindOf(c))
		}
		// Kafka checks the tuple's length before converting it.
		if err := d.enter(); err != nil {
			return nil, err
		}
		d.pos++
		var starts [2]int
		n := 0
		if d.peek() != ']' {
			for {
				d.ws()
				if n < 2 {
					starts[n] = d.pos
				}
				n++
				if err := d.skip(); err != nil {
					return nil, err
				}
				if d.peek() == ',' {
					d.pos++
					continue
				}
				if d.peek() != ']' {
					return nil, d.unexpected()
				}
				break
			}
		}
		d.pos++
		end := d.pos
		if n != 2 {
			return nil, dataErrorf("Found invalid map entry, expected length 2 but found :%d", n)
		}
		d.pos = starts[0]
		k, err := d.convert(s.KeySchema)
		if err != nil {
			return nil, err
		}
		d.pos = starts[1]
		v, err := d.convert(s.ValueSchema)
		if err != nil {
			return nil, err
		}
		d.pos = end
		d.depth--
		if !hashable(k) {
			return nil, dataErrorf("Map keys of type %s cannot be decoded: Go maps need comparable keys", s.KeySchema.Type)
		}
		m[k] = v
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case ']':
			d.pos++
			d.depth--
			return m, nil
		}
		return nil, d.unexpected()
	}
}

func hashable(k any) bool {
	switch k.(type) {
	case []byte, []any, map[string]any, map[any]any:
		return false
	}
	return true
}

// structValue reads a STRUCT: fields by name, unknown keys ignored,
// missing ones as null. Conversion errors wait until the object is read
// (a later duplicate may replace the value) and are reported in field
// order, as Kafka converts field by field.
func (d *decoder) structValue(s *connect.Schema) (any, error) {
	if c := d.peek(); c != '{' {
		return nil, dataErrorf("Structs should be encoded as JSON objects, but found %s", kindOf(c))
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++
	st := connect.NewStructValue(s)
	fields := s.Fields
	var seenBuf [64]bool
	seen := seenBuf[:0]
	if len(fields) <= len(seenBuf) {
		seen = seenBuf[:len(fields)]
	} else {
		seen = make([]bool, len(fields))
	}
	var errs []error
	next := 0
	if d.peek() != '}' {
		for {
			if d.peek() != '"' {
				return nil, d.unexpected()
			}
			raw, esc, err := d.stringRaw()
			if err != nil {
				return nil, err
			}
			if esc {
				raw = unescape(nil, raw)
			}
			idx := -1
			// Fields usually come in schema order.
			if next < len(fields) && fields[next].Name == string(raw) {
				idx = next
			} else {
				for i := range fields {
					if fields[i].Name == string(raw) {
						idx = i
						break
					}
				}
			}
			if d.peek() != ':' {
				return nil, d.unexpected()
			}
			d.pos++
			if idx < 0 {
				if err := d.skip(); err != nil {
					return nil, err
				}
			} else {
				next = idx + 1
				d.ws()
				start := d.pos
				f := &fields[idx]
				v, err := d.convert(f.Schema)
				if err != nil {
					if !isConversion(err) {
						return nil, err
					}
					d.pos = start
					if serr := d.skip(); serr != nil {
						return nil, serr
					}
					if errs == nil {
						errs = make([]error, len(fields))
					}
					errs[idx] = err
				} else {
					if errs != nil {
						errs[idx] = nil
					}
					st.PutFieldUnchecked(f, v)
				}
				seen[idx] = true
			}
			if d.peek() == ',' {
				d.pos++
				continue
			}
			if d.peek() != '}' {
				return nil, d.unexpected()
			}
			break
		}
	}
	d.pos++
	d.depth--
	for i := range fields {
		f := &fields[i]
		if errs != nil && errs[i] != nil {
			return nil, errs[i]
		}
		if !seen[i] {
			v, err := d.null(f.Schema)
			if err != nil {
				return nil, err
			}
			st.PutFieldUnchecked(f, v)
		}
		// Kafka's Struct.put validates the value.
		v := st.GetFieldWithoutDefault(f)
		if v == nil && !f.Schema.Optional {
			return nil, dataErrorf("Invalid value: null used for required field: \"%s\", schema type: %s", f.Name, f.Schema.Type)
		}
		if d.nilRequired && v != nil {
			if err := checkNested(f.Schema, v, "field: \""+f.Name+"\""); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// checkNested finds nils for required element, key and value schemas,
// as Kafka's ConnectSchema.validateValue does inside Struct.put.
func checkNested(s *connect.Schema, v any, location string) error {
	switch s.Type {
	case connect.Array:
		items, ok := v.([]any)
		if !ok || s.ValueSchema == nil {
			return nil
		}
		loc := "element of array " + location
		for _, it := range items {
			if err := checkValue(s.ValueSchema, it, loc); err != nil {
				return err
			}
		}
	case connect.Map:
		if s.KeySchema == nil || s.ValueSchema == nil {
			return nil
		}
		kloc, vloc := "key of map "+location, "value of map "+location
		switch m := v.(type) {
		case map[string]any:
			for _, val := range m {
				if err := checkValue(s.ValueSchema, val, vloc); err != nil {
					return err
				}
			}
		case map[any]any:
			for k, val := range m {
				if err := checkValue(s.KeySchema, k, kloc); err != nil {
					return err
				}
				if err := checkValue(s.ValueSchema, val, vloc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkValue(s *connect.Schema, v any, location string) error {
	if v == nil {
		if !s.Optional {
			return &connect.DataError{Msg: fmt.Sprintf("Invalid value: null used for required %s, schema type: %s", location, s.Type)}
		}
		return nil
	}
	return checkNested(s, v, location)
}
