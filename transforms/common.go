package transforms

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// side selects the part of a record a $Key or $Value variant works on.
type side bool

const (
	keySide   side = true
	valueSide side = false
)

func (s side) schema(r *connect.Record) *connect.Schema {
	if s == keySide {
		return r.KeySchema
	}
	return r.ValueSchema
}

func (s side) value(r *connect.Record) any {
	if s == keySide {
		return r.Key
	}
	return r.Value
}

// with returns a copy of r with the side's schema and value replaced
// (Kafka's record.newRecord keeping everything else).
func (s side) with(r *connect.Record, schema *connect.Schema, v any) *connect.Record {
	c := r.Clone()
	if s == keySide {
		c.KeySchema, c.Key = schema, v
	} else {
		c.ValueSchema, c.Value = schema, v
	}
	return c
}

// errNotStruct is Kafka's DataException from Schema.fields() on a schema
// that is not a STRUCT, which several transforms reach on primitive
// schemas.
var errNotStruct = &connect.DataError{Msg: "Cannot list fields on non-struct type"}

// dataErr is Kafka's DataException.
func dataErr(format string, args ...any) error {
	return &connect.DataError{Msg: fmt.Sprintf(format, args...)}
}

// configErr is Kafka's ConfigException(message) raised by configure().
func configErr(key, msg string) error {
	return &connect.ConfigError{Problems: []connect.ConfigProblem{{Key: key, Message: msg}}}
}

// invalidValueErr is Kafka's ConfigException(name, value, message).
func invalidValueErr(key string, value any, msg string) error {
	m := "Invalid value " + javaString(value) + " for configuration " + key
	if msg != "" {
		m += ": " + msg
	}
	return configErr(key, m)
}

// requireMap is Kafka's Requirements.requireMap.
func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, dataErr("Only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClassName(v))
	}
	return m, nil
}

// requireMapOrNull is Kafka's Requirements.requireMapOrNull.
func requireMapOrNull(v any, purpose string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return requireMap(v, purpose)
}

// requireStruct is Kafka's Requirements.requireStruct.
func requireStruct(v any, purpose string) (*connect.Struct, error) {
	st, ok := v.(*connect.Struct)
	if !ok || st == nil {
		return nil, dataErr("Only Struct objects supported for [%s], found: %s", purpose, javaClassName(v))
	}
	return st, nil
}

// requireStructOrNull is Kafka's Requirements.requireStructOrNull.
func requireStructOrNull(v any, purpose string) (*connect.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

// isSinkRecord tells sink records (read from Kafka: an offset, no source
// partition or offset) from source records, as Kafka's instanceof
// SinkRecord does.
func isSinkRecord(r *connect.Record) bool {
	return r.SourcePartition == nil && r.SourceOffset == nil && r.LazyOffset == nil && r.Offset >= 0
}

// requireSinkRecord is Kafka's Requirements.requireSinkRecord.
func requireSinkRecord(r *connect.Record, purpose string) error {
	if !isSinkRecord(r) {
		return dataErr("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", purpose)
	}
	return nil
}

// javaClassName names the Java class Kafka would hold for a Go value, for
// error messages that print getClass().getName().
func javaClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case string:
		return "java.lang.String"
	case []byte:
		return "[B"
	case []any:
		return "java.util.ArrayList"
	case map[string]any, map[any]any:
		return "java.util.HashMap"
	case *connect.Struct:
		return "org.apache.kafka.connect.data.Struct"
	case time.Time:
		return "java.util.Date"
	case connect.Decimal:
		return "java.math.BigDecimal"
	}
	return fmt.Sprintf("%T", v)
}

// javaClass is Java's Class.toString ("class java.lang.String").
func javaClass(v any) string {
	n := javaClassName(v)
	if n == "null" {
		return n
	}
	return "class " + n
}

// javaString renders a value as Java's toString would, for messages.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case float64:
		return javaDouble(x)
	case float32:
		return javaFloat(x)
	case connect.Decimal:
		return javaBigDecimal(x)
	case *connect.Struct:
		return x.String()
	case time.Time:
		return x.UTC().Format("Mon Jan 02 15:04:05 UTC 2006")
	case []byte:
		return fmt.Sprintf("[B@%x", len(x))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + javaString(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// javaBigDecimal is Java's BigDecimal.toString: plain when the scale is
// non-negative and the adjusted exponent is at least -6, else scientific.
func javaBigDecimal(d connect.Decimal) string {
	if d.Unscaled == nil {
		return "0"
	}
	digits := new(big.Int).Abs(d.Unscaled).String()
	adjusted := -int64(d.Scale) + int64(len(digits)-1)
	if d.Scale >= 0 && adjusted >= -6 {
		return d.String()
	}
	var b strings.Builder
	if d.Unscaled.Sign() < 0 {
		b.WriteByte('-')
	}
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('E')
	if adjusted >= 0 {
		b.WriteByte('+')
	}
	fmt.Fprintf(&b, "%d", adjusted)
	return b.String()
}

// schemaCache maps input schemas to the schemas a transformation derived
// from them, as Kafka's SynchronizedCache(LRUCache(16)): keyed by schema
// equality, so equal schemas decoded separately share one output schema.
// Pointer equality is checked first, so the usual hit costs no deep
// comparison.
type schemaCache struct {
	mu      sync.Mutex
	entries []schemaCacheEntry // least recently used first
}

type schemaCacheEntry struct {
	in, out *connect.Schema
}

const schemaCacheSize = 16

func (c *schemaCache) get(in *connect.Schema) *connect.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := -1
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].in == in {
			idx = i
			break
		}
	}
	if idx < 0 {
		for i := len(c.entries) - 1; i >= 0; i-- {
			if c.entries[i].in.Equal(in) {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return nil
	}
	e := c.entries[idx]
	if last := len(c.entries) - 1; idx != last {
		// Move to the most recently used end, in place (no allocation on
		// the per-record path).
		copy(c.entries[idx:], c.entries[idx+1:])
		c.entries[last] = e
	}
	return e.out
}

func (c *schemaCache) put(in, out *connect.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= schemaCacheSize {
		copy(c.entries, c.entries[1:])
		c.entries[len(c.entries)-1] = schemaCacheEntry{in, out}
		return
	}
	c.entries = append(c.entries, schemaCacheEntry{in, out})
}

// getOrBuild returns the cached output schema for in, building and
// caching it on a miss.
func (c *schemaCache) getOrBuild(in *connect.Schema, build func() (*connect.Schema, error)) (*connect.Schema, error) {
	if out := c.get(in); out != nil {
		return out, nil
	}
	out, err := build()
	if err != nil {
		return nil, err
	}
	c.put(in, out)
	return out, nil
}

// copyBasics is Kafka's SchemaUtil.copySchemaBasics(source, builder):
// name, version, doc and parameters (not optionality or default).
func copyBasics(src *connect.Schema, b *connect.SchemaBuilder) *connect.SchemaBuilder {
	b.Name(src.Name).Doc(src.Doc)
	if src.Version != nil {
		b.Version(*src.Version)
	}
	if src.Parameters != nil {
		b.Parameters(map[string]string{}) // Kafka keeps an empty map too
		for _, k := range src.ParameterKeys() {
			b.Parameter(k, src.Parameters[k]) // in Kafka's (insertion) order
		}
	}
	return b
}

// copyBasicsOf is Kafka's SchemaUtil.copySchemaBasics(source): a builder
// of the same type (arrays keep their element schema; maps do not keep
// theirs, as in Kafka, which makes building one fail).
func copyBasicsOf(src *connect.Schema) *connect.SchemaBuilder {
	var b *connect.SchemaBuilder
	if src.Type == connect.Array {
		b = connect.NewArray(src.ValueSchema)
	} else {
		b = connect.NewSchema(src.Type)
	}
	return copyBasics(src, b)
}

// fieldValue reads a struct field with or without its default, as the
// transforms' replace.null.with.default option chooses.
func fieldValue(st *connect.Struct, f *connect.Field, withDefault bool) any {
	if withDefault {
		return st.GetField(f)
	}
	v, _ := st.GetWithoutDefault(f.Name)
	return v
}

// kput is Kafka's Struct.put: unlike connect.Struct.Put it refuses null
// for a required field even when the field has a default (Kafka applies
// defaults when reading, never when writing), with Kafka's message.
func kput(st *connect.Struct, name string, v any) error {
	if v == nil {
		if f := st.Schema().Field(name); f != nil && !f.Schema.Optional {
			return dataErr("Invalid value: null used for required field: \"%s\", schema type: %s", name, f.Schema.Type)
		}
	}
	return st.Put(name, v)
}

// replaceNullWithDefaultKey is the replace.null.with.default key most
// transforms define (KIP-1040).
func replaceNullWithDefaultKey() connect.ConfigKey {
	return connect.ConfigKey{
		Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: true, Importance: connect.Medium,
		Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
	}
}

// nonEmptyList is Kafka's transforms NonEmptyListValidator.
func nonEmptyList(name string, v any) error {
	items, _ := v.([]string)
	if len(items) == 0 {
		return &connect.VerbatimError{Msg: "Invalid value " + javaString(items) + " for configuration " + name + ": Empty list"}
	}
	return nil
}

// nonEmptyString is Kafka 4.4's ConfigDef.NonEmptyString (whose message
// differs from connect.NonEmptyString's older wording).
func nonEmptyString(name string, v any) error {
	if s, ok := v.(string); ok && s == "" {
		return errors.New("String must be non-empty")
	}
	return nil
}

// nonDuplicateList is Kafka's ConfigDef.ValidList.anyNonDuplicateValues.
func nonDuplicateList(emptyAllowed bool) connect.Validator {
	return func(name string, v any) error {
		if v == nil {
			return &connect.VerbatimError{Msg: "Configuration '" + name + "' values must not be null."}
		}
		items, _ := v.([]string)
		if !emptyAllowed && len(items) == 0 {
			return &connect.VerbatimError{Msg: "Configuration '" + name + "' must not be empty. Valid values include: any non-empty value"}
		}
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it] {
				return &connect.VerbatimError{Msg: "Configuration '" + name + "' values must not be duplicated."}
			}
			seen[it] = true
		}
		for _, it := range items {
			if it == "" {
				return &connect.VerbatimError{Msg: "Configuration '" + name + "' values must not be empty."}
			}
		}
		return nil
	}
}

// parseConfig parses props against def; the error lists every problem,
// the first being the one Kafka's ConfigDef.parse would throw.
func parseConfig(def *connect.ConfigDef, props map[string]string) (*connect.Config, error) {
	return def.Parse(props)
}
