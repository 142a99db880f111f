package partitioner

import (
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// settings is a checked partitioner configuration.
type settings struct {
	kind     kind
	fields   []fieldPath
	delim    string
	duration int64
	pattern  string
	format   *pathFormat
	zone     *zone
	extract  extractor
}

// Validate returns, per key, the first problem of the partitioner and
// naming keys: the per-key ones the keys Define adds report (with the
// same messages), then those Confluent only finds when a task configures
// its partitioner (a time-based partitioner without path.format, locale
// or timezone, an unknown timestamp.extractor, a pattern Joda refuses)
// and its connector validator's FieldPartitioner check. Every message
// is Confluent's where Confluent has one.
func Validate(props map[string]string) map[string]string {
	out := map[string]string{}
	_, problems := configure(props)
	for _, p := range problems {
		if _, ok := out[p.Key]; !ok {
			out[p.Key] = p.Message
		}
	}
	return out
}

// New returns the partitioner props configure. The error, a
// *connect.ConfigError, lists every problem Validate reports.
func New(props map[string]string) (Partitioner, error) {
	s, problems := configure(props)
	if len(problems) > 0 {
		return nil, &connect.ConfigError{Problems: problems}
	}
	switch s.kind {
	case kindDefault:
		return &defaultPartitioner{}, nil
	case kindField:
		return newFieldPartitioner(s.fields, s.delim), nil
	}
	return newTimeBased(s), nil
}

// parsed returns the values of the keys whose value parses and passes
// its validator, with their defaults when unset, and the per-key
// problems of the others.
func parsed(props map[string]string) (map[string]any, []connect.ConfigProblem) {
	var problems []connect.ConfigProblem
	bad := map[string]bool{}
	for _, cv := range def().Validate(props) {
		if len(cv.Errors) > 0 {
			bad[cv.Name] = true
			problems = append(problems, connect.ConfigProblem{Key: cv.Name, Message: cv.Errors[0]})
		}
	}
	values := map[string]any{}
	for _, k := range def().Keys() {
		if bad[k.Name] {
			continue
		}
		v := k.Default
		if raw, ok := props[k.Name]; ok {
			v, _ = connect.ParseValue(k.Type, k.Name, raw)
		}
		values[k.Name] = v
	}
	return values, problems
}

// invalid is Kafka's ConfigException(name, value, message) text.
func invalid(key string, value any, msg string) connect.ConfigProblem {
	return connect.ConfigProblem{Key: key, Message: fmt.Sprintf("Invalid value %v for configuration %s: %s", value, key, msg)}
}

// configure checks props as Confluent's partitioner configure methods
// and its FieldPartitionerValidator do, and returns what a partitioner
// needs. Problems come in key order, one or more per key.
func configure(props map[string]string) (*settings, []connect.ConfigProblem) {
	values, problems := parsed(props)
	add := func(p connect.ConfigProblem) { problems = append(problems, p) }
	str := func(k string) (string, bool) { s, ok := values[k].(string); return s, ok }

	className, ok := str(ClassConfig)
	if !ok {
		return nil, problems
	}
	s := &settings{}
	s.kind, _ = classKind(className)
	s.delim, _ = str(DirDelimConfig)

	if s.kind == kindField {
		// Confluent's FieldPartitionerValidator looks at the raw value.
		if javaBlank(props[FieldNameConfig]) {
			add(connect.ConfigProblem{Key: FieldNameConfig,
				Message: "Partition field name cannot be null or empty when using FieldPartitioner."})
		}
		if names, ok := values[FieldNameConfig].([]string); ok {
			for _, n := range names {
				s.fields = append(s.fields, newFieldPath(n))
			}
		}
	}
	if !s.kind.timeBased() {
		return s, problems
	}

	// TimeBasedPartitioner.configure; Hourly and Daily fix the duration
	// and the pattern first (built with the directory delimiter).
	switch s.kind {
	case kindHourly:
		s.duration = 3_600_000
		s.pattern = "'year'=YYYY" + s.delim + "'month'=MM" + s.delim + "'day'=dd" + s.delim + "'hour'=HH"
	case kindDaily:
		s.duration = 86_400_000
		s.pattern = "'year'=YYYY" + s.delim + "'month'=MM" + s.delim + "'day'=dd"
	default:
		if d, ok := values[DurationConfig].(int64); ok {
			s.duration = d
			// Confluent refuses only negative durations; zero divides
			// by zero on the first record there, so it is refused here.
			if d <= 0 {
				add(invalid(DurationConfig, d, "Partition duration needs to be a positive."))
			}
		}
		s.pattern, _ = str(PathFormatConfig)
	}
	patternOK := true
	if javaBlank(s.pattern) || s.pattern == s.delim {
		add(invalid(PathFormatConfig, s.pattern, "Path format cannot be empty."))
		patternOK = false
	} else if !javaBlank(s.delim) {
		// A delimiter the user ended the pattern with is dropped.
		s.pattern = strings.TrimSuffix(s.pattern, s.delim)
	}
	locale, localeOK := str(LocaleConfig)
	if localeOK && javaBlank(locale) {
		add(invalid(LocaleConfig, locale, "Locale cannot be empty."))
		localeOK = false
	}
	if tz, ok := str(TimezoneConfig); ok {
		if javaBlank(tz) {
			add(invalid(TimezoneConfig, tz, "Timezone cannot be empty."))
		} else if z, err := loadZone(javaTrim(tz)); err == nil {
			s.zone = z
		}
	}
	if name, ok := str(ExtractorConfig); ok {
		if k, ok := parseExtractor(name); ok {
			s.extract.kind = k
		} else {
			add(connect.ConfigProblem{Key: ExtractorConfig, Message: "Invalid timestamp extractor: " + name})
		}
	}
	if s.extract.kind == recordField {
		field, _ := str(TimestampFieldConfig)
		s.extract.field = newFieldPath(field)
		// Confluent fails every record then ("The field to extract
		// cannot be null or empty."); Fjord says so up front.
		if javaBlank(field) || len(s.extract.field.segs) == 0 {
			add(invalid(TimestampFieldConfig, field, "The field to extract cannot be null or empty."))
		}
	}
	if patternOK {
		f, err := compileFormat(s.pattern)
		if err != nil {
			add(invalid(PathFormatConfig, s.pattern, err.Error()))
		} else {
			s.format = f
			if f.text && localeOK && !isEnglish(locale) {
				add(invalid(LocaleConfig, locale, "Fjord prints the month, day, AM/PM and era names path.format "+
					"asks for in English only; use an English locale (en, en-US) or numbers (MM, e)."))
			}
		}
	}
	return s, problems
}
