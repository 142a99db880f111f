package config

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validator checks a parsed value (see parseValue for the Go types). Its
// messages and String are Kafka's, so that errors read the same and the
// golden tests can compare our validators with Kafka's ConfigDef.
type Validator interface {
	// Validate returns a *ValueError, or nil if v is allowed.
	Validate(name string, v any) error
	// String describes the valid values as Kafka's validator toString does.
	String() string
}

func number(v any) (float64, bool) {
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

// Range is Kafka's ConfigDef.Range: an inclusive numeric range, either
// end open. Like Kafka it compares as float64.
type Range struct {
	Min, Max       float64
	HasMin, HasMax bool
}

// AtLeast allows min and above.
func AtLeast(min float64) Range { return Range{Min: min, HasMin: true} }

// Between allows min through max.
func Between(min, max float64) Range { return Range{Min: min, Max: max, HasMin: true, HasMax: true} }

func fmtBound(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Validate implements Validator.
func (r Range) Validate(name string, v any) error {
	n, ok := number(v)
	if !ok {
		return nil
	}
	if r.HasMin && n < r.Min {
		return &ValueError{Name: name, Value: javaString(v), Msg: "Value must be at least " + fmtBound(r.Min)}
	}
	if r.HasMax && n > r.Max {
		return &ValueError{Name: name, Value: javaString(v), Msg: "Value must be no more than " + fmtBound(r.Max)}
	}
	return nil
}

func (r Range) String() string {
	switch {
	case !r.HasMin:
		return "[...," + fmtBound(r.Max) + "]"
	case !r.HasMax:
		return "[" + fmtBound(r.Min) + ",...]"
	}
	return "[" + fmtBound(r.Min) + ",...," + fmtBound(r.Max) + "]"
}

// OneOf is Kafka's ValidString / CaseInsensitiveValidString: a STRING
// that must be one of Values.
type OneOf struct {
	Values          []string
	CaseInsensitive bool
}

// In allows exactly the given strings.
func In(values ...string) OneOf { return OneOf{Values: values} }

// Validate implements Validator.
func (o OneOf) Validate(name string, v any) error {
	s, _ := v.(string)
	for _, ok := range o.Values {
		if s == ok || (o.CaseInsensitive && strings.EqualFold(s, ok)) {
			return nil
		}
	}
	msg := "String must be one of: "
	if o.CaseInsensitive {
		msg = "String must be one of (case insensitive): "
	}
	return &ValueError{Name: name, Value: s, Msg: msg + strings.Join(o.Values, ", ")}
}

func (o OneOf) String() string {
	s := "[" + strings.Join(o.Values, ", ") + "]"
	if o.CaseInsensitive {
		return "(case insensitive) " + s
	}
	return s
}

// List is Kafka's ValidList: no duplicate or empty items, optionally no
// empty list, and optionally items restricted to Items.
type List struct {
	Items      []string // nil: any non-empty item
	AllowEmpty bool
}

// Validate implements Validator.
func (l List) Validate(name string, v any) error {
	items, _ := v.([]string)
	if len(items) == 0 {
		if l.AllowEmpty {
			return nil
		}
		valid := "any non-empty value"
		if l.Items != nil {
			valid = "[" + strings.Join(l.Items, ", ") + "]"
		}
		return &ValueError{Name: name, Plain: true, Msg: "Configuration '" + name + "' must not be empty. Valid values include: " + valid}
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if seen[it] {
			return &ValueError{Name: name, Plain: true, Msg: "Configuration '" + name + "' values must not be duplicated."}
		}
		seen[it] = true
	}
	for _, it := range items {
		if l.Items != nil && !slices.Contains(l.Items, it) {
			return &ValueError{Name: name, Value: it, Msg: "String must be one of: " + strings.Join(l.Items, ", ")}
		}
		if it == "" {
			return &ValueError{Name: name, Plain: true, Msg: "Configuration '" + name + "' values must not be empty."}
		}
	}
	return nil
}

func (l List) String() string {
	if l.Items == nil {
		return ""
	}
	return "[" + strings.Join(l.Items, ", ") + "]"
}

// NonEmptyString is Kafka's ConfigDef.NonEmptyString.
type NonEmptyString struct{}

// Validate implements Validator.
func (NonEmptyString) Validate(name string, v any) error {
	if s, _ := v.(string); s == "" {
		return &ValueError{Name: name, Value: "", Msg: "String must be non-empty"}
	}
	return nil
}

func (NonEmptyString) String() string { return "non-empty string" }

// NonNullString is Kafka's ConfigDef.NonNullValidator for strings: a
// properties file cannot express null, so every value passes.
type NonNullString struct{}

// Validate implements Validator.
func (NonNullString) Validate(string, any) error { return nil }

func (NonNullString) String() string { return "non-null string" }

// GzipLevel is the compression.gzip.level validator: 1..9 or -1.
type GzipLevel struct{}

// Validate implements Validator.
func (GzipLevel) Validate(name string, v any) error {
	n, _ := number(v)
	if n == -1 || (n >= 1 && n <= 9) {
		return nil
	}
	return &ValueError{Name: name, Value: javaString(v), Msg: "Value must be between 1 and 9 or equal to -1"}
}

func (GzipLevel) String() string { return "[1,...,9] or -1" }

// ThrottledReplicas validates leader/follower.replication.throttled.replicas:
// "*" or partition:broker pairs.
type ThrottledReplicas struct{}

var throttledItem = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// Validate implements Validator.
func (ThrottledReplicas) Validate(name string, v any) error {
	items, _ := v.([]string)
	if len(items) == 1 && items[0] == "*" {
		return nil
	}
	for _, it := range items {
		if !throttledItem.MatchString(it) {
			return &ValueError{Name: name, Value: javaString(items), Msg: name + " must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."}
		}
	}
	return nil
}

func (ThrottledReplicas) String() string {
	return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
}

// QuorumVoters validates controller.quorum.voters: id@host:port entries.
type QuorumVoters struct{}

// Validate implements Validator.
func (QuorumVoters) Validate(name string, v any) error {
	items, _ := v.([]string)
	for _, it := range items {
		if _, _, _, err := parseVoter(it); err != nil {
			return &ValueError{Name: name, Plain: true, Msg: err.Error()}
		}
	}
	return nil
}

func (QuorumVoters) String() string { return "non-empty list" }

// parseVoter splits "id@host:port"; errors carry Kafka's messages.
func parseVoter(entry string) (int32, string, int32, error) {
	form := "Each entry should be in the form `{id}@{host}:{port}`."
	idText, addr, ok := strings.Cut(entry, "@")
	id, err := strconv.ParseInt(idText, 10, 32)
	if !ok || err != nil {
		return 0, "", 0, errorString("Invalid configuration value for controller.quorum.voters. " + form)
	}
	host, port, err := splitHostPort(addr)
	if err != nil {
		return 0, "", 0, errorString("Failed to parse host name from entry " + entry + " for the configuration controller.quorum.voters. " + form)
	}
	return int32(id), host, port, nil
}

// BootstrapServers validates controller.quorum.bootstrap.servers: host:port entries.
type BootstrapServers struct{}

// Validate implements Validator.
func (BootstrapServers) Validate(name string, v any) error {
	items, _ := v.([]string)
	for _, it := range items {
		if _, _, err := splitHostPort(it); err != nil {
			return &ValueError{Name: name, Plain: true, Msg: "Failed to parse host name from " + it + " for the configuration " + name + `. Each entry should be in the form "{host}:{port}"`}
		}
	}
	return nil
}

func (BootstrapServers) String() string { return "non-empty list" }

// ClassName stands in for Kafka's class loading: Fjord cannot load Java
// classes, so any non-empty name is accepted (and not used).
type ClassName struct{}

// Validate implements Validator.
func (ClassName) Validate(name string, v any) error {
	if s, _ := v.(string); s == "" {
		return &ValueError{Name: name, Value: "", Msg: "Class  could not be found."}
	}
	return nil
}

func (ClassName) String() string { return "" }

type errorString string

func (e errorString) Error() string { return string(e) }

// splitHostPort parses "host:port" and "[v6]:port" as Kafka's
// Utils.getHost/getPort do: the host may be empty (all interfaces).
func splitHostPort(s string) (string, int32, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, errorString("missing port in " + s)
	}
	host, portText := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, errorString("invalid port in " + s)
	}
	return host, int32(port), nil
}
