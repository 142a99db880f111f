package connect

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ConfigType is a config value's type, named as Kafka's ConfigDef.Type.
type ConfigType int8

const (
	TypeBoolean ConfigType = iota + 1
	TypeString
	TypeInt
	TypeShort
	TypeLong
	TypeDouble
	TypeList
	TypeClass
	TypePassword
)

var configTypeNames = map[ConfigType]string{
	TypeBoolean: "BOOLEAN", TypeString: "STRING", TypeInt: "INT", TypeShort: "SHORT", TypeLong: "LONG",
	TypeDouble: "DOUBLE", TypeList: "LIST", TypeClass: "CLASS", TypePassword: "PASSWORD",
}

func (t ConfigType) String() string { return configTypeNames[t] }

// Importance is a config's importance (HIGH, MEDIUM, LOW).
type Importance int8

const (
	High Importance = iota + 1
	Medium
	Low
)

func (i Importance) String() string {
	switch i {
	case High:
		return "HIGH"
	case Medium:
		return "MEDIUM"
	case Low:
		return "LOW"
	}
	return ""
}

// Width is the display width hint Kafka's UI metadata carries.
type Width int8

const (
	WidthNone Width = iota
	WidthShort
	WidthMedium
	WidthLong
)

func (w Width) String() string {
	return [...]string{"NONE", "SHORT", "MEDIUM", "LONG"}[w]
}

// Password is a PASSWORD config value; it prints as [hidden], as Kafka's.
type Password string

func (p Password) String() string { return "[hidden]" }

// Value returns the secret.
func (p Password) Value() string { return string(p) }

type noDefault struct{}

// NoDefault marks a required config (Kafka's NO_DEFAULT_VALUE).
var NoDefault any = noDefault{}

// Validator checks a parsed value; the error message is what users see
// after "Invalid value V for configuration K: ".
type Validator func(name string, value any) error

// VerbatimError is returned by a Validator whose message is the whole
// message users see, without the "Invalid value V for configuration K: "
// prefix: Kafka validators that throw ConfigException(message) (such as
// ValidList's "Configuration 'fields' values must not be duplicated.").
type VerbatimError struct{ Msg string }

func (e *VerbatimError) Error() string { return e.Msg }

// ConfigKey defines one config.
type ConfigKey struct {
	Name string
	Type ConfigType
	// Default is the default as a Go value of the type (string for
	// STRING/CLASS/PASSWORD, int32 for INT, int16 for SHORT, int64 for
	// LONG, float64 for DOUBLE, bool, []string for LIST), nil for a null
	// default, or NoDefault for a required config.
	Default      any
	Validator    Validator
	Importance   Importance
	Doc          string
	Group        string
	OrderInGroup int
	Width        Width
	DisplayName  string
	Dependents   []string
	// Recommended, if set, lists the valid values given the parsed
	// configs so far (the validate endpoint's recommended_values).
	Recommended func(parsed map[string]any) []any
	// Visible, if set, says whether the key applies given the parsed configs.
	Visible func(parsed map[string]any) bool
	// Internal keys are parsed but not listed by the validate endpoint.
	Internal bool
}

// Required reports whether the key has no default.
func (k *ConfigKey) Required() bool { return k.Default == NoDefault }

// ConfigDef is an ordered set of config definitions, the spec a plugin
// publishes: parsing, validation, the validate endpoint and docs read it.
type ConfigDef struct {
	keys  []ConfigKey
	index map[string]int
}

// NewConfigDef returns an empty definition.
func NewConfigDef() *ConfigDef { return &ConfigDef{index: map[string]int{}} }

// Define adds (or replaces) a key and returns d for chaining.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if i, ok := d.index[k.Name]; ok {
		d.keys[i] = k
		return d
	}
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, k)
	return d
}

// Merge adds every key of o to d (o's keys win) and returns d.
func (d *ConfigDef) Merge(o *ConfigDef) *ConfigDef {
	if o != nil {
		for _, k := range o.keys {
			d.Define(k)
		}
	}
	return d
}

// Keys returns the keys in definition order.
func (d *ConfigDef) Keys() []ConfigKey { return d.keys }

// Key returns the named key or nil.
func (d *ConfigDef) Key(name string) *ConfigKey {
	if i, ok := d.index[name]; ok {
		return &d.keys[i]
	}
	return nil
}

// Groups returns the groups in first-use order.
func (d *ConfigDef) Groups() []string {
	var gs []string
	for _, k := range d.keys {
		if k.Group != "" && !slices.Contains(gs, k.Group) {
			gs = append(gs, k.Group)
		}
	}
	return gs
}

// ConfigProblem is one bad config.
type ConfigProblem struct {
	Key     string
	Message string
}

// ConfigError lists every bad config of a parse; its message is the
// first problem's followed by the count of others.
type ConfigError struct{ Problems []ConfigProblem }

func (e *ConfigError) Error() string {
	if len(e.Problems) == 0 {
		return "invalid configuration"
	}
	msg := e.Problems[0].Message
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more problem(s): %s)", n, strings.Join(e.Messages()[1:], "; "))
	}
	return msg
}

// Messages returns every problem's message.
func (e *ConfigError) Messages() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.Message
	}
	return out
}

// Config is a parsed configuration.
type Config struct {
	values    map[string]any
	originals map[string]string
}

// Parse parses and validates props against d, as Kafka's
// AbstractConfig: every defined key gets its value or default; keys d
// does not define are kept in Originals. The error lists every problem.
func (d *ConfigDef) Parse(props map[string]string) (*Config, error) {
	c := &Config{values: map[string]any{}, originals: maps.Clone(props)}
	var problems []ConfigProblem
	for i := range d.keys {
		k := &d.keys[i]
		v, err := d.parseKey(k, props)
		if err != nil {
			problems = append(problems, ConfigProblem{k.Name, err.Error()})
			continue
		}
		c.values[k.Name] = v
	}
	if len(problems) > 0 {
		return nil, &ConfigError{problems}
	}
	return c, nil
}

func (d *ConfigDef) parseKey(k *ConfigKey, props map[string]string) (any, error) {
	raw, set := props[k.Name]
	var v any
	switch {
	case set:
		pv, err := ParseValue(k.Type, k.Name, raw)
		if err != nil {
			return nil, err
		}
		v = pv
	case k.Required():
		return nil, fmt.Errorf("Missing required configuration %q which has no default value.", k.Name)
	default:
		v = k.Default
	}
	if k.Validator != nil && (set || v != nil) {
		if err := k.Validator(k.Name, v); err != nil {
			var verbatim *VerbatimError
			if errors.As(err, &verbatim) {
				return nil, verbatim
			}
			return nil, fmt.Errorf("Invalid value %s for configuration %s: %s", displayValue(v), k.Name, err.Error())
		}
	}
	return v, nil
}

func displayValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return strings.Join(x, ",")
	case Password:
		return "[hidden]"
	}
	return fmt.Sprint(v)
}

// ConfigValue is the validate endpoint's answer for one key.
type ConfigValue struct {
	Name              string
	Value             any // the raw string given, or nil
	RecommendedValues []any
	Errors            []string
	Visible           bool
}

// Validate checks props key by key, collecting every error per key, as
// Kafka's ConfigDef.validate (used by PUT .../config/validate).
func (d *ConfigDef) Validate(props map[string]string) []ConfigValue {
	parsed := map[string]any{}
	out := make([]ConfigValue, 0, len(d.keys))
	for i := range d.keys {
		k := &d.keys[i]
		cv := ConfigValue{Name: k.Name, Visible: true}
		if raw, ok := props[k.Name]; ok {
			cv.Value = raw
		} else if !k.Required() && k.Default != nil {
			cv.Value = displayValue(k.Default)
		}
		v, err := d.parseKey(k, props)
		if err != nil {
			cv.Errors = append(cv.Errors, err.Error())
		} else {
			parsed[k.Name] = v
		}
		out = append(out, cv)
	}
	for i := range out {
		k := &d.keys[i]
		if k.Recommended != nil {
			out[i].RecommendedValues = k.Recommended(parsed)
		}
		if k.Visible != nil {
			out[i].Visible = k.Visible(parsed)
		}
	}
	return out
}

// ParseValue parses a string as Kafka's ConfigDef.parseType does (values
// trimmed; LIST split on commas).
func ParseValue(t ConfigType, name, s string) (any, error) {
	trimmed := strings.TrimSpace(s)
	bad := func(kind string) error {
		return fmt.Errorf("Invalid value %s for configuration %s: %s", trimmed, name, kind)
	}
	switch t {
	case TypeBoolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, bad("Expected value to be either true or false")
	case TypeString, TypeClass:
		return trimmed, nil
	case TypePassword:
		return Password(s), nil
	case TypeInt:
		n, err := strconv.ParseInt(trimmed, 10, 32)
		if err != nil {
			return nil, bad("Not a number of type INT")
		}
		return int32(n), nil
	case TypeShort:
		n, err := strconv.ParseInt(trimmed, 10, 16)
		if err != nil {
			return nil, bad("Not a number of type SHORT")
		}
		return int16(n), nil
	case TypeLong:
		n, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			return nil, bad("Not a number of type LONG")
		}
		return n, nil
	case TypeDouble:
		f, err := strconv.ParseFloat(trimmed, 64)
		if err != nil {
			return nil, bad("Not a number of type DOUBLE")
		}
		return f, nil
	case TypeList:
		if trimmed == "" {
			return []string{}, nil
		}
		parts := strings.Split(trimmed, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, nil
	}
	return nil, fmt.Errorf("unknown config type for %s", name)
}

// Get returns a parsed value (nil if the key is not defined).
func (c *Config) Get(name string) any { return c.values[name] }

// String returns a STRING or CLASS value ("" for null).
func (c *Config) String(name string) string {
	s, _ := c.values[name].(string)
	return s
}

// Int returns an INT value.
func (c *Config) Int(name string) int32 { v, _ := c.values[name].(int32); return v }

// Short returns a SHORT value.
func (c *Config) Short(name string) int16 { v, _ := c.values[name].(int16); return v }

// Long returns a LONG value.
func (c *Config) Long(name string) int64 { v, _ := c.values[name].(int64); return v }

// Double returns a DOUBLE value.
func (c *Config) Double(name string) float64 { v, _ := c.values[name].(float64); return v }

// Bool returns a BOOLEAN value.
func (c *Config) Bool(name string) bool { v, _ := c.values[name].(bool); return v }

// List returns a LIST value.
func (c *Config) List(name string) []string { v, _ := c.values[name].([]string); return v }

// Password returns a PASSWORD value's secret.
func (c *Config) Password(name string) string { v, _ := c.values[name].(Password); return string(v) }

// IsNull reports whether the value is null (unset with a null default).
func (c *Config) IsNull(name string) bool { return c.values[name] == nil }

// Originals returns the properties as given, defined or not.
func (c *Config) Originals() map[string]string { return c.originals }

// OriginalsWithPrefix returns the properties starting with prefix, with
// the prefix removed (Kafka's originalsWithPrefix(prefix, true)).
func (c *Config) OriginalsWithPrefix(prefix string) map[string]string {
	return WithPrefix(c.originals, prefix)
}

// WithPrefix returns the entries of m whose key starts with prefix, with
// the prefix removed.
func WithPrefix(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// Validators with Kafka's messages.

// AtLeast requires a number >= min.
func AtLeast(min float64) Validator { return Between(min, math.Inf(1)) }

// Between requires min <= n <= max.
func Between(min, max float64) Validator {
	return func(name string, v any) error {
		f, ok := toFloat(v)
		if !ok {
			return nil
		}
		if f < min {
			return fmt.Errorf("Value must be at least %s", trimFloat(min))
		}
		if f > max {
			return fmt.Errorf("Value must be no more than %s", trimFloat(max))
		}
		return nil
	}
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// OneOf requires a string among allowed (Kafka's ValidString).
func OneOf(allowed ...string) Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		if !slices.Contains(allowed, s) {
			return fmt.Errorf("String must be one of: %s", strings.Join(allowed, ", "))
		}
		return nil
	}
}

// OneOfFold is OneOf ignoring case (Kafka's CaseInsensitiveValidString).
func OneOfFold(allowed ...string) Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		for _, a := range allowed {
			if strings.EqualFold(a, s) {
				return nil
			}
		}
		return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(allowed, ", "))
	}
}

// ListOf requires every list item among allowed (Kafka's ValidList).
func ListOf(allowed ...string) Validator {
	return func(name string, v any) error {
		items, _ := v.([]string)
		for _, it := range items {
			if !slices.Contains(allowed, it) {
				return fmt.Errorf("Invalid value %s for configuration %s: String must be one of: %s", it, name, strings.Join(allowed, ", "))
			}
		}
		return nil
	}
}

// NonEmptyString requires a non-empty string: Kafka 4.4's
// ConfigDef.NonEmptyString, with its message. (Kafka's
// NonEmptyStringWithoutControlChars says "String may not be empty".)
func NonEmptyString(name string, v any) error {
	// Like Kafka's NonEmptyString, null passes: a missing required value
	// is reported once, as missing.
	if s, ok := v.(string); ok && s == "" {
		return errors.New("String must be non-empty")
	}
	return nil
}
