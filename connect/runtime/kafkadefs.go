package runtime

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// kafkadefs.json is Kafka Connect 4.4's own config definitions (worker,
// connector and client configs), dumped from its jars by
// testdata/kafkaref/gen.sh. Building our ConfigDefs from it keeps names,
// types, defaults, groups, order and documentation exactly Kafka's, which
// the validate endpoint shows to users.
//
//go:embed kafkadefs.json
var kafkaDefsJSON []byte

type kafkaKey struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	HasDefault  bool    `json:"hasDefault"`
	Default     *string `json:"default"`
	Importance  string  `json:"importance"`
	Group       *string `json:"group"`
	Order       int     `json:"order"`
	Width       string  `json:"width"`
	DisplayName string  `json:"displayName"`
	Validator   *string `json:"validator"`
	Internal    bool    `json:"internal"`
	Doc         string  `json:"doc"`
}

var kafkaDefs = sync.OnceValue(func() map[string][]kafkaKey {
	var m map[string][]kafkaKey
	if err := json.Unmarshal(kafkaDefsJSON, &m); err != nil {
		panic(fmt.Sprintf("runtime: embedded kafkadefs.json: %v", err))
	}
	return m
})

var configTypes = map[string]connect.ConfigType{
	"BOOLEAN": connect.TypeBoolean, "STRING": connect.TypeString, "INT": connect.TypeInt, "SHORT": connect.TypeShort,
	"LONG": connect.TypeLong, "DOUBLE": connect.TypeDouble, "LIST": connect.TypeList, "CLASS": connect.TypeClass,
	"PASSWORD": connect.TypePassword,
}

var importances = map[string]connect.Importance{"HIGH": connect.High, "MEDIUM": connect.Medium, "LOW": connect.Low}

var widths = map[string]connect.Width{"NONE": connect.WidthNone, "SHORT": connect.WidthShort, "MEDIUM": connect.WidthMedium, "LONG": connect.WidthLong}

// kafkaConfigDef returns a fresh ConfigDef of one section of
// kafkadefs.json ("distributed", "standalone", "connector", "sink",
// "source", "producer", "consumer", "admin"). Validators come from
// kafkaValidator; callers may replace keys.
func kafkaConfigDef(section string) *connect.ConfigDef {
	keys, ok := kafkaDefs()[section]
	if !ok {
		panic("runtime: no config section " + section)
	}
	d := connect.NewConfigDef()
	for _, k := range keys {
		d.Define(convertKafkaKey(k))
	}
	return d
}

func convertKafkaKey(k kafkaKey) connect.ConfigKey {
	t := configTypes[k.Type]
	ck := connect.ConfigKey{
		Name: k.Name, Type: t, Importance: importances[k.Importance], Doc: k.Doc,
		OrderInGroup: k.Order, Width: widths[k.Width], DisplayName: k.DisplayName, Internal: k.Internal,
	}
	if k.Group != nil {
		ck.Group = *k.Group
	}
	switch {
	case !k.HasDefault:
		ck.Default = connect.NoDefault
	case k.Default == nil:
		ck.Default = nil
	default:
		v, err := connect.ParseValue(t, k.Name, *k.Default)
		if err != nil {
			panic(fmt.Sprintf("runtime: default of %s: %v", k.Name, err))
		}
		ck.Default = v
	}
	if k.Validator != nil {
		ck.Validator = kafkaValidator(k.Name, *k.Validator)
		if ck.Validator != nil && k.HasDefault && k.Default == nil {
			// A key that defaults to null accepts null (Kafka uses
			// null-tolerant validators there, printed like ranges).
			v := ck.Validator
			ck.Validator = func(name string, value any) error {
				if value == nil {
					return nil
				}
				return v(name, value)
			}
		}
	}
	return ck
}

var (
	rangeRe  = regexp.MustCompile(`^\[(-?[0-9.E]+),\.\.\.(?:,(-?[0-9.E]+))?\]$`)
	stringRe = regexp.MustCompile(`^(\(case insensitive\) )?\[(.*)\]$`)
)

// kafkaValidator turns the printed form of a Kafka validator back into
// one: ranges ("[1,...]", "[0,...,900]"), string enums ("[none, all]",
// "(case insensitive) [A, B]"), and the named ones the runtime relies on.
// Validators that check JVM facilities (MAC algorithms, SSL factories)
// are not enforced.
func kafkaValidator(name, printed string) connect.Validator {
	if m := rangeRe.FindStringSubmatch(printed); m != nil {
		lo, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "" {
			return nonNull(connect.AtLeast(lo))
		}
		hi, _ := strconv.ParseFloat(m[2], 64)
		return nonNull(connect.Between(lo, hi))
	}
	if m := stringRe.FindStringSubmatch(printed); m != nil {
		items := strings.Split(m[2], ", ")
		if m[1] != "" {
			return connect.OneOfFold(items...)
		}
		return connect.OneOf(items...)
	}
	switch {
	case printed == "non-empty string without ISO control characters":
		return nonEmptyNoControl
	case printed == "non-empty string":
		return connect.NonEmptyString
	case strings.HasPrefix(printed, "non-null string, unique "):
		return uniqueAliases
	case printed == "valid regex":
		return validRegex
	case strings.HasPrefix(printed, "A concrete subclass of org.apache.kafka.connect.storage.Converter"):
		return classOf(pluginsConverter)
	case strings.HasPrefix(printed, "A concrete subclass of org.apache.kafka.connect.storage.HeaderConverter"):
		return classOf(pluginsHeaderConverter)
	case strings.HasPrefix(printed, "List of comma-separated URLs"):
		return validListeners
	}
	return nil
}

// nonNull is Kafka's Range: null is "Value must be non-null" (seen when a
// number does not parse and validation continues with null).
func nonNull(v connect.Validator) connect.Validator {
	return func(name string, value any) error {
		if value == nil {
			return fmt.Errorf("Value must be non-null")
		}
		return v(name, value)
	}
}

func nonEmptyNoControl(name string, v any) error {
	s, _ := v.(string)
	if v == nil {
		return nil // Kafka's NonEmptyStringWithoutControlChars accepts null
	}
	if s == "" {
		return fmt.Errorf("String may not be empty")
	}
	var bad []string
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			bad = append(bad, fmt.Sprint(int(r)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("String may not contain control sequences but had the following ASCII chars: %s", strings.Join(bad, ", "))
	}
	return nil
}

// uniqueAliases is ConnectorConfig's alias validator; its message names
// the list as Java prints it ("[a, a]").
func uniqueAliases(name string, v any) error {
	items, _ := v.([]string)
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it] {
			return &connect.VerbatimError{Msg: fmt.Sprintf("Invalid value %s for configuration %s: Duplicate alias provided.", javaList(items), name)}
		}
		seen[it] = true
	}
	return nil
}

// javaList prints a list as Java's List.toString: [a, b].
func javaList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

func validRegex(name string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	if _, err := regexp.Compile(s); err != nil {
		// Go's message, not java.util.regex's.
		return fmt.Errorf("Invalid regex: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return nil
}

func validListeners(name string, v any) error {
	items, _ := v.([]string)
	for _, it := range items {
		if !strings.HasPrefix(it, "http://") && !strings.HasPrefix(it, "https://") {
			return &connect.VerbatimError{Msg: fmt.Sprintf("Invalid value %s for configuration %s: Expected a comma-separated list of URLs.", javaList(items), name)}
		}
	}
	return nil
}

const (
	pluginsConverter       = "org.apache.kafka.connect.storage.Converter"
	pluginsHeaderConverter = "org.apache.kafka.connect.storage.HeaderConverter"
)

// classNotFound is a CLASS value naming no plugin: Kafka fails it while
// parsing (the value becomes null), before any validator runs.
type classNotFound struct{ class string }

func (e *classNotFound) Error() string { return "Class " + e.class + " could not be found." }

// classOf checks that a CLASS value names a plugin of the given Java
// interface (Kafka's ConcreteSubClassValidator plus class loading).
func classOf(iface string) connect.Validator {
	kind := plugins.Converter
	if iface == pluginsHeaderConverter {
		kind = plugins.HeaderConverter
	}
	return func(name string, v any) error {
		s, ok := v.(string)
		if !ok {
			return nil // unset: the worker's converter applies
		}
		if _, err := plugins.LookupKind(s, kind); err == nil {
			return nil
		}
		if _, ok := plugins.Lookup(s); ok {
			return fmt.Errorf("Class must be a concrete subclass of %s", iface)
		}
		return &classNotFound{s}
	}
}
