package filter

import "github.com/fjordhq/fjord/connect"

// DefaultGroupFilter's keys and Kafka's defaults.
const (
	GroupsConfig         = "groups"
	GroupsDefault        = ".*"
	GroupsExcludeConfig  = "groups.exclude"
	GroupsExcludeDefault = "console-consumer-.*, connect-.*, __.*"
	// GroupsBlacklistConfig is groups.exclude's deprecated alias.
	GroupsBlacklistConfig = "groups.blacklist"

	GroupFilterClassConfig  = "group.filter.class"
	DefaultGroupFilterClass = "org.apache.kafka.connect.mirror.DefaultGroupFilter"
)

// DefaultGroupFilter checkpoints consumer groups matching groups and not
// matching groups.exclude (MM2's DefaultGroupFilter).
type DefaultGroupFilter struct{ include, exclude pattern }

// NewGroupFilter builds the group filter from a connector's properties:
// group.filter.class (only the default), groups, groups.exclude and the
// legacy groups.blacklist.
func NewGroupFilter(props map[string]string) (GroupFilter, error) {
	if err := checkClass(props, GroupFilterClassConfig, DefaultGroupFilterClass, "DefaultGroupFilter"); err != nil {
		return nil, err
	}
	include, err := compileKey(props, GroupsConfig, GroupsDefault)
	if err != nil {
		return nil, err
	}
	exclude, err := compileKey(translateDeprecated(props, GroupsExcludeConfig, GroupsBlacklistConfig), GroupsExcludeConfig, GroupsExcludeDefault)
	if err != nil {
		return nil, err
	}
	return &DefaultGroupFilter{include, exclude}, nil
}

func (f *DefaultGroupFilter) ShouldReplicateGroup(group string) bool {
	return f.include.matches(group) && !f.exclude.matches(group)
}

// DefineGroupKeys adds group.filter.class, groups, groups.exclude and
// groups.blacklist to d (MirrorCheckpointConfig's).
func DefineGroupKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: GroupFilterClassConfig, Type: connect.TypeClass, Default: DefaultGroupFilterClass,
			Validator: classValidator(DefaultGroupFilterClass, "DefaultGroupFilter"), Importance: connect.Low,
			Doc: "GroupFilter to use. Selects consumer groups to replicate."}).
		Define(connect.ConfigKey{Name: GroupsConfig, Type: connect.TypeList, Default: []string{GroupsDefault},
			Validator: regexList, Importance: connect.High,
			Doc: "Consumer groups to replicate. Supports comma-separated group IDs and regexes."}).
		Define(connect.ConfigKey{Name: GroupsExcludeConfig, Type: connect.TypeList, Default: splitDefault(GroupsExcludeDefault),
			Validator: regexList, Importance: connect.High,
			Doc: "Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over includes."}).
		Define(connect.ConfigKey{Name: GroupsBlacklistConfig, Type: connect.TypeList, Default: nil,
			Validator: regexList, Importance: connect.High,
			Doc: "Deprecated. Use " + GroupsExcludeConfig + " instead."})
}
