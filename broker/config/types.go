package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is a config's value type. The numbering is DescribeConfigs'
// config_type (kmsg.ConfigType), which follows Kafka's ConfigDef.Type.
type Type int8

// Config types.
const (
	TypeUnknown  Type = 0
	TypeBoolean  Type = 1
	TypeString   Type = 2
	TypeInt      Type = 3 // 32-bit
	TypeShort    Type = 4 // 16-bit
	TypeLong     Type = 5 // 64-bit
	TypeDouble   Type = 6
	TypeList     Type = 7 // comma-separated, items trimmed
	TypeClass    Type = 8 // a Java class name; Fjord keeps the name
	TypePassword Type = 9 // sensitive: never described, never logged
)

var typeNames = [...]string{"UNKNOWN", "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}

func (t Type) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// ParseType maps Kafka's type name (as ConfigDef.Type prints it) to a Type.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if n == s && i > 0 {
			return Type(i), true
		}
	}
	return TypeUnknown, false
}

// Importance is Kafka's ConfigDef.Importance, for documentation.
type Importance int8

// Importances.
const (
	High Importance = iota
	Medium
	Low
)

func (i Importance) String() string {
	switch i {
	case High:
		return "HIGH"
	case Medium:
		return "MEDIUM"
	}
	return "LOW"
}

// Update says whether a broker config can change without a restart, and
// where: Kafka's DynamicBrokerConfig modes.
type Update int8

// Update modes.
const (
	// ReadOnly configs are read from server.properties at start-up only.
	ReadOnly Update = iota
	// PerBroker configs can be set dynamically for one broker (resource
	// name = its node id), not as a cluster default.
	PerBroker
	// ClusterWide configs can be set dynamically for one broker or as the
	// cluster default (resource name "").
	ClusterWide
)

func (u Update) String() string {
	switch u {
	case PerBroker:
		return "per-broker"
	case ClusterWide:
		return "cluster-wide"
	}
	return "read-only"
}

// ValueError is a value that does not parse or validate. Its message is
// Kafka's, word for word, so clients and scripts see what Kafka would say.
type ValueError struct {
	Name  string
	Value string // as Kafka prints it: raw for parse errors, parsed for validator errors
	Msg   string
	// Plain is set for Kafka messages that are not of the form
	// "Invalid value V for configuration K: M" (list checks, quorum voters).
	Plain bool
}

func (e *ValueError) Error() string {
	if e.Plain {
		return e.Msg
	}
	return "Invalid value " + e.Value + " for configuration " + e.Name + ": " + e.Msg
}

// parseValue turns a raw string into the Go value for t, as Kafka's
// ConfigDef.parseType does (values are trimmed first).
func parseValue(name string, t Type, raw string) (any, error) {
	s := strings.TrimSpace(raw)
	notNumber := func() error {
		return &ValueError{Name: name, Value: raw, Msg: "Not a number of type " + t.String()}
	}
	switch t {
	case TypeBoolean:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, &ValueError{Name: name, Value: raw, Msg: "Expected value to be either true or false"}
	case TypeInt:
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, notNumber()
		}
		return int32(v), nil
	case TypeShort:
		v, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return nil, notNumber()
		}
		return int16(v), nil
	case TypeLong:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, notNumber()
		}
		return v, nil
	case TypeDouble:
		v, ok := parseJavaDouble(s)
		if !ok {
			return nil, notNumber()
		}
		return v, nil
	case TypeList:
		if s == "" {
			return []string{}, nil
		}
		items := strings.Split(s, ",")
		for i := range items {
			items[i] = strings.TrimSpace(items[i])
		}
		return items, nil
	default: // STRING, CLASS, PASSWORD
		return s, nil
	}
}

// parseJavaDouble accepts what Java's Double.parseDouble accepts in
// practice: decimal and exponent forms, an optional d/f suffix, and the
// exact words NaN and Infinity (Go alone would also take "inf", "nan",
// underscores and hex mantissas without exponent).
func parseJavaDouble(s string) (float64, bool) {
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) && !strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), "0x") {
		s = s[:n-1]
	}
	if s == "" || strings.ContainsAny(s, "_iInN") || strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), "0x") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// canonical renders a parsed value the way Kafka's
// ConfigDef.convertToString does; DescribeConfigs shows values this way.
func canonical(t Type, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javaDouble(x)
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// javaString renders a parsed value as Java's toString does, which is how
// Kafka prints the value in validator error messages.
func javaString(v any) string {
	switch x := v.(type) {
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case float64:
		return javaDouble(x)
	}
	return canonical(TypeUnknown, v)
}

// javaDouble formats f as Java's Double.toString: plain decimal with at
// least one fractional digit for 1e-3 <= |f| < 1e7, else d.dddE±n.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // e.g. 1.23456789E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
