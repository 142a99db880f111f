package filter

import (
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// DefaultConfigPropertyFilter's keys and Kafka's defaults.
const (
	ConfigPropertiesExcludeConfig = "config.properties.exclude"
	// ConfigPropertiesExcludeDefault: settings that describe the source
	// cluster's own operations (throttles, durability, timestamps policy)
	// rather than the data, so they are not copied to the target.
	ConfigPropertiesExcludeDefault = `follower\.replication\.throttled\.replicas, ` +
		`leader\.replication\.throttled\.replicas, ` +
		`message\.timestamp\.difference\.max\.ms, ` +
		`message\.timestamp\.type, ` +
		`unclean\.leader\.election\.enable, ` +
		`min\.insync\.replicas`
	// ConfigPropertiesBlacklistConfig is config.properties.exclude's
	// deprecated alias.
	ConfigPropertiesBlacklistConfig = "config.properties.blacklist"
	UseDefaultsFromConfig           = "use.defaults.from"
	UseDefaultsFromDefault          = "target"

	ConfigPropertyFilterClassConfig  = "config.property.filter.class"
	DefaultConfigPropertyFilterClass = "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"
)

// DefaultConfigPropertyFilter decides which topic configs the source
// connector copies (MM2's DefaultConfigPropertyFilter).
type DefaultConfigPropertyFilter struct {
	exclude         pattern
	useDefaultsFrom string
}

// NewConfigPropertyFilter builds the filter from a connector's
// properties: config.property.filter.class (only the default),
// config.properties.exclude (and its legacy .blacklist alias) and
// use.defaults.from.
func NewConfigPropertyFilter(props map[string]string) (ConfigPropertyFilter, error) {
	if err := checkClass(props, ConfigPropertyFilterClassConfig, DefaultConfigPropertyFilterClass, "DefaultConfigPropertyFilter"); err != nil {
		return nil, err
	}
	exclude, err := compileKey(translateDeprecated(props, ConfigPropertiesExcludeConfig, ConfigPropertiesBlacklistConfig),
		ConfigPropertiesExcludeConfig, ConfigPropertiesExcludeDefault)
	if err != nil {
		return nil, err
	}
	from := UseDefaultsFromDefault
	if v, ok := props[UseDefaultsFromConfig]; ok {
		from = strings.TrimSpace(v)
	}
	return &DefaultConfigPropertyFilter{exclude: exclude, useDefaultsFrom: from}, nil
}

func (f *DefaultConfigPropertyFilter) ShouldReplicateConfigProperty(prop string) bool {
	return !f.exclude.matches(prop)
}

// ShouldReplicateSourceDefault: a property at its default on the source
// is copied with the source's value only with use.defaults.from=source
// (exactly, as MM2 compares); otherwise the target's default applies.
func (f *DefaultConfigPropertyFilter) ShouldReplicateSourceDefault(prop string) bool {
	return f.useDefaultsFrom == "source"
}

// DefineConfigPropertyKeys adds config.property.filter.class,
// config.properties.exclude, its alias and use.defaults.from to d
// (MirrorSourceConfig's).
func DefineConfigPropertyKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: ConfigPropertyFilterClassConfig, Type: connect.TypeClass, Default: DefaultConfigPropertyFilterClass,
			Validator: classValidator(DefaultConfigPropertyFilterClass, "DefaultConfigPropertyFilter"), Importance: connect.Low,
			Doc: "ConfigPropertyFilter to use. Selects topic config properties to replicate."}).
		Define(connect.ConfigKey{Name: ConfigPropertiesExcludeConfig, Type: connect.TypeList, Default: splitDefault(ConfigPropertiesExcludeDefault),
			Validator: regexList, Importance: connect.High,
			Doc: "Topic config properties that should not be replicated. Supports comma-separated property names and regexes."}).
		Define(connect.ConfigKey{Name: ConfigPropertiesBlacklistConfig, Type: connect.TypeList, Default: nil,
			Validator: regexList, Importance: connect.High,
			Doc: "Deprecated. Use " + ConfigPropertiesExcludeConfig + " instead."}).
		Define(connect.ConfigKey{Name: UseDefaultsFromConfig, Type: connect.TypeString, Default: UseDefaultsFromDefault,
			Importance: connect.Medium,
			Doc:        "Which cluster's defaults (source or target) to use when syncing topic configurations that have default values."})
}
