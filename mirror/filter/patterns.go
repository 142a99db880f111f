package filter

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// pattern is MM2's compilePatternList: the list's regexes joined with "|"
// and matched against the whole name (Java's Matcher.matches). An empty
// list is nil and matches nothing: a blank include list replicates
// nothing, a blank exclude list excludes nothing.
type pattern struct{ re *regexp.Regexp }

// compileList compiles a list as MM2 does. Go's RE2 syntax is Java's for
// what filters use (names, ".*", classes, escapes, \Q..\E); look-around
// and back-references, which RE2 lacks, are reported as errors rather
// than silently matching differently.
func compileList(key string, items []string) (pattern, error) {
	if len(items) == 0 {
		return pattern{}, nil
	}
	joined := strings.Join(items, "|")
	re, err := regexp.Compile(`^(?:` + joined + `)$`)
	if err != nil {
		return pattern{}, fmt.Errorf("Invalid value %s for configuration %s: %v", joined, key, err)
	}
	return pattern{re}, nil
}

func (p pattern) matches(name string) bool { return p.re != nil && p.re.MatchString(name) }

// listValue reads a LIST key the way Kafka's ConfigDef parses one
// (trimmed, split on commas), falling back to def.
func listValue(props map[string]string, key, def string) ([]string, error) {
	raw, ok := props[key]
	if !ok {
		raw = def
	}
	v, err := connect.ParseValue(connect.TypeList, key, raw)
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// translateDeprecated returns the value for key, or for its deprecated
// alias when key is not set, as Kafka 3.x's
// ConfigUtils.translateDeprecatedConfigs did for the *.blacklist keys
// (Kafka 4 dropped them; Fjord still reads MM2 3.x configs).
func translateDeprecated(props map[string]string, key, alias string) map[string]string {
	if _, ok := props[key]; ok {
		return props
	}
	v, ok := props[alias]
	if !ok {
		return props
	}
	return map[string]string{key: v}
}

// compileKey reads and compiles one LIST key of regexes.
func compileKey(props map[string]string, key, def string) (pattern, error) {
	items, err := listValue(props, key, def)
	if err != nil {
		return pattern{}, err
	}
	return compileList(key, items)
}

// regexList validates a LIST of regexes at config time, so the validate
// endpoint reports a bad pattern before the connector starts.
func regexList(name string, v any) error {
	items, _ := v.([]string)
	if len(items) == 0 {
		return nil
	}
	if _, err := regexp.Compile(`^(?:` + strings.Join(items, "|") + `)$`); err != nil {
		return fmt.Errorf("Not a valid list of regular expressions: %v", err)
	}
	return nil
}

// checkClass rejects a custom filter class, which Fjord cannot load,
// rather than filtering with the default one instead.
func checkClass(props map[string]string, key string, accepted ...string) error {
	v, ok := props[key]
	if !ok {
		return nil
	}
	v = strings.TrimSpace(v)
	for _, a := range accepted {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found.", v, key, v)
}
