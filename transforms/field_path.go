package transforms

import (
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// fieldPath is Kafka's SingleFieldPath (KIP-821): with
// field.syntax.version=V1 a path is one top-level field name; with V2 it
// is dotted ("a.b.c"), and backticks quote names holding dots
// ("`a.b`.c", a backslash escaping a backtick inside).
type fieldPath struct {
	steps []string
}

const fieldSyntaxDoc = "Defines the version of the syntax to access fields. If set to <code>V1</code>, then the field paths are limited to access the elements at the root level of the struct or map. If set to <code>V2</code>, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield <code>baz</code> from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"<code>foo.bar</code>.baz\"."

// fieldSyntaxKey is Kafka's FieldSyntaxVersion.appendConfigTo key.
func fieldSyntaxKey() connect.ConfigKey {
	return connect.ConfigKey{
		Name: "field.syntax.version", Type: connect.TypeString, Default: "V1",
		Validator: connect.OneOfFold("V1", "V2"), Importance: connect.High, Doc: fieldSyntaxDoc,
	}
}

func fieldSyntaxV2(cfg *connect.Config) bool {
	return strings.EqualFold(cfg.String("field.syntax.version"), "V2")
}

func newFieldPath(path string, v2 bool) (fieldPath, error) {
	if !v2 {
		return fieldPath{steps: []string{path}}, nil
	}
	var steps []string
	idx := 0
	for idx < len(path) && idx >= 0 {
		if path[idx] != '`' {
			start := idx
			if i := strings.IndexByte(path[idx:], '.'); i >= 0 {
				idx += i
				steps = append(steps, path[start:idx])
				idx++
			} else {
				steps = append(steps, path[start:])
				idx = -1
			}
			continue
		}
		backtickAt := idx
		idx++
		var field strings.Builder
		start := idx
		for {
			i := -1
			if idx < len(path) {
				i = strings.IndexByte(path[idx:], '`')
			}
			if i < 0 {
				return fieldPath{}, incompleteBacktick(path, backtickAt)
			}
			idx += i
			escaped := path[idx-1] == '\\'
			if idx >= len(path)-1 {
				if escaped {
					return fieldPath{}, incompleteBacktick(path, backtickAt)
				}
				field.WriteString(path[start:idx])
				steps = append(steps, field.String())
				idx++
				break
			}
			if path[idx+1] != '.' {
				idx++
				continue
			}
			if !escaped {
				field.WriteString(path[start:idx])
				steps = append(steps, field.String())
				idx += 2
				break
			}
			field.WriteString(path[start : idx-1])
			field.WriteByte('`')
			idx++
			start = idx
		}
	}
	if path != "" && path[len(path)-1] == '.' {
		steps = append(steps, "")
	}
	if len(steps) == 0 {
		steps = []string{""}
	}
	return fieldPath{steps: steps}, nil
}

func incompleteBacktick(path string, at int) error {
	return &connect.ConfigError{Problems: []connect.ConfigProblem{{
		Message: "Incomplete backtick pair in path: [" + path + "], consider adding a backslash before backtick at position " + strconv.Itoa(at) + " to escape it",
	}}}
}

func (p fieldPath) last() string { return p.steps[len(p.steps)-1] }

// fieldFrom returns the field the path names in s, or nil.
func (p fieldPath) fieldFrom(s *connect.Schema) *connect.Field {
	if s == nil {
		return nil
	}
	cur := s
	for _, step := range p.steps[:len(p.steps)-1] {
		f := cur.Field(step)
		if f == nil {
			return nil
		}
		cur = f.Schema
	}
	return cur.Field(p.last())
}

// structValue returns the value at the path, nil where a step is missing
// or null.
func (p fieldPath) structValue(st *connect.Struct, withDefault bool) (any, error) {
	if st == nil {
		return nil, nil
	}
	cur := st
	for _, step := range p.steps[:len(p.steps)-1] {
		f := cur.Schema().Field(step)
		if f == nil {
			return nil, nil
		}
		next, err := requireStructOrNull(cur.GetField(f), "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		cur = next
	}
	f := cur.Schema().Field(p.last())
	if f == nil {
		return nil, nil
	}
	return fieldValue(cur, f, withDefault), nil
}

// mapValue returns the value at the path in a schemaless map.
func (p fieldPath) mapValue(m map[string]any) (any, error) {
	if m == nil {
		return nil, nil
	}
	cur := m
	for _, step := range p.steps[:len(p.steps)-1] {
		next, err := requireMapOrNull(cur[step], "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		cur = next
	}
	return cur[p.last()], nil
}
